"""Which codes a list holds (an order's tags): a fact, widened only by the codes of runs that acted alike.

Probe R06 (``tests/test_probes_round2.py``): a refund learned on an order tagged ``gift, web`` was
served for one tagged ``gift, chargeback``, which the agent refuses. A list of code words a skill reads
but does not pass on or quote is now guarded to hold no code but those its runs' lists held
(``among``). Each run that acted alike adds its codes, as attributes widen; a list holding a task value
is a relation (``group in user['groups']``), guarded as such and not by its codes; a list the answer
lists (the groups a user is in) is data. Shadowed by the agent alone, from the same world.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillforge import GuardFailed
from skillforge.runtime import among
from tests.shadowing import Harness, Shadow
from tests.toolsets import probes_round2 as probes

_HARNESS = Harness(probes)


def order(order_id: str, *tags: str) -> dict[str, Any]:
    return {"orders": {order_id: {"total": 40.0, "status": "delivered", "tags": list(tags)}}}


def learn(forge: Any, task: str, world: dict[str, Any]) -> Shadow:
    return _HARNESS.learn(forge, task, world, after_handover=True)


def test_a_code_no_run_showed_stops_the_skill(tmp_path: Path) -> None:
    forge = _HARNESS.forge(tmp_path, probes.probe_agent)
    first = learn(forge, "Issue a refund for order #5", order("5", "gift", "web"))
    source = (tmp_path / "forge" / "skills" / f"{first.result.learned}.py").read_text()
    assert "among(order['tags'], ['gift', 'web'])" in source, source
    # the same codes, in another order: served
    served = _HARNESS.check(forge, "Issue a refund for order #6", order("6", "web", "gift"))
    assert served.result.source == "skill", served.describe()
    # a code no run showed: the agent refuses; the skill stops before its write
    stopped = _HARNESS.check(forge, "Issue a refund for order #7", order("7", "gift", "chargeback"))
    assert stopped.result.source != "skill" and stopped.writes == [], stopped.describe()
    assert "holds no code but 'gift', 'web'" in (stopped.result.handover or ""), stopped.result.handover


def test_the_codes_of_runs_that_acted_alike_are_each_allowed(tmp_path: Path) -> None:
    forge = _HARNESS.forge(tmp_path, probes.probe_agent)
    learn(forge, "Issue a refund for order #5", order("5", "gift"))
    learn(forge, "Issue a refund for order #6", order("6", "vip", "web"))  # the first skill stops: learned, merged
    # codes each run showed, together as no run did: refunded, as the agent does (an empty list is
    # another fact, its emptiness, which no run showed)
    for i, tags in enumerate([("gift", "web"), ("vip",), ("gift", "vip", "web")], start=8):
        served = _HARNESS.check(forge, f"Issue a refund for order #{i}", order(str(i), *tags))
        assert served.result.source == "skill", served.describe()
    stopped = _HARNESS.check(forge, "Issue a refund for order #12", order("12", "vip", "fraud_review"))
    assert stopped.result.source != "skill" and stopped.writes == [], stopped.describe()


def test_a_list_the_answer_lists_is_data_not_a_fact(tmp_path: Path) -> None:
    world = {"users": {"ivy.chen": {"username": "ivy.chen", "groups": ["staff", "vpn-users"]},
                       "jon.park": {"username": "jon.park", "groups": ["wiki", "zoom"]}}}
    forge = _HARNESS.forge(tmp_path, probes.probe_agent)
    first = learn(forge, "Which groups is ivy.chen in?", world)
    source = (tmp_path / "forge" / "skills" / f"{first.result.learned}.py").read_text()
    assert "among(" not in source, source
    served = _HARNESS.check(forge, "Which groups is jon.park in?", world)
    assert served.result.source == "skill", served.describe()


def test_among() -> None:
    assert among(["gift", "web"], ["gift", "vip", "web"]) and among([], ["gift"])
    assert not among(["gift", "chargeback"], ["gift", "web"])
    assert not among(["gift", 7], ["gift"])
    with pytest.raises(GuardFailed, match="expected a list of codes"):
        among("gift", ["gift"])
    with pytest.raises(TypeError, match="takes the allowed codes as a list"):
        among(["gift"], ("gift",))


def test_a_run_whose_list_was_empty_adds_no_code_and_keeps_the_fact(tmp_path: Path) -> None:
    forge = _HARNESS.forge(tmp_path, probes.probe_agent)
    learn(forge, "Issue a refund for order #5", order("5", "gift", "web"))
    learn(forge, "Issue a refund for order #6", order("6"))  # no tags: the first skill stops on its emptiness
    skills = [p.read_text() for p in (tmp_path / "forge" / "skills").glob("*.py") if p.name != "__init__.py"]
    assert any("among(order['tags'], ['gift', 'web'])" in s for s in skills), skills
    for i, tags in enumerate([(), ("web",)], start=7):
        served = _HARNESS.check(forge, f"Issue a refund for order #{i}", order(str(i), *tags))
        assert served.result.source == "skill", served.describe()
    stopped = _HARNESS.check(forge, "Issue a refund for order #9", order("9", "chargeback"))
    assert stopped.result.source != "skill" and stopped.writes == [], stopped.describe()
