"""What the library's runs show of the world: a field that took many values there names a thing.

A skill's own runs are few: two refunds, for customers in Berlin and Paris, do not show that the
customer's city decides nothing (three would, ``CONTEXT_RUNS``). The library's runs of every skill
that read customers show the city took a dozen values: it names a customer, it does not switch
anything. So where a skill's runs acting alike showed a context field (``_relevance``) with two
values or more, and the library's runs show the field names things, the skill does not guard it,
and its file says so with the numbers (``SKILL['world']``), to re-render from its runs alone.
Never a field the skill acts on, a code word, or a field its own runs showed with one value.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from skillforge._census import WORLD_VALUES, census, world_from_meta
from skillforge._codegen import render_skill, skill_meta
from skillforge._compile import prove_all
from skillforge._learning import spec_from_runs
from skillforge._library import Library
from skillforge._lifting import discover_template
from skillforge._skillmeta import check_meta
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from tests.proven import proven
from tests.shadowing import Harness
from tests.toolsets import towns

TOOLS = {
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
    "get_customer": ToolRef(module="shop", qualname="get_customer", read=True, params=("customer_id",)),
    "refund": ToolRef(module="shop", qualname="refund", params=("order_id", "amount")),
}
CITIES = ["Berlin", "Paris", "Lima", "Oslo", "Quito", "Accra", "Hanoi", "Lagos", "Perth", "Sofia", "Tunis", "Turin"]


def refund(order_id: str, city: str, *, status: str = "paid", order_city: str = "Bonn") -> Trajectory:
    """A refund that reads the order (which it acts on) and the order's customer (context)."""
    return Trajectory(
        task=f"Refund order #{order_id}",
        calls=[
            Call(tool="get_order", args={"order_id": order_id},
                 result={"id": order_id, "total": 40.0, "customer_id": "C7", "status": status, "city": order_city}),
            Call(tool="get_customer", args={"customer_id": "C7"}, result={"id": "C7", "city": city, "tier": "gold"}),
            Call(tool="refund", args={"order_id": order_id, "amount": 40.0}, result={"ok": True}),
        ],
        outcome=Outcome(ok=True, output=f"Refunded order {order_id}."),
        tools=TOOLS,
    )


def lookup(customer_id: str, city: str) -> Trajectory:
    """Another skill's run: who a customer is (the library's reads of customers)."""
    return Trajectory(
        task=f"Where does customer {customer_id} live?",
        calls=[Call(tool="get_customer", args={"customer_id": customer_id}, result={"id": customer_id, "city": city, "tier": "gold"})],
        outcome=Outcome(ok=True, output=f"In {city}."),
        tools={"get_customer": TOOLS["get_customer"]},
    )


def learned(runs: list[Trajectory], world: Any = None) -> tuple[Any, str]:
    return proven(runs, "refund_order", world=world)


def body(source: str) -> str:
    return source.split("def refund_order", 1)[1]


# -- the census ------------------------------------------------------------------------------


def test_a_field_that_took_many_values_in_the_librarys_runs_names_a_thing() -> None:
    runs = [lookup(f"C{i}", city) for i, city in enumerate(CITIES[:WORLD_VALUES])]
    counted = census(runs)
    # the city and the id name customers; the tier, the same in every run, does not
    assert counted.world() == {("get_customer", ("city",)): (WORLD_VALUES, WORLD_VALUES),
                               ("get_customer", ("id",)): (WORLD_VALUES, WORLD_VALUES)}
    counted.add(runs[0])  # a run is counted once
    assert counted.world()[("get_customer", ("city",))] == (WORLD_VALUES, WORLD_VALUES)
    # one value fewer is no evidence yet; runs not kept counted still count for one look
    fewer = census(runs[:-1])
    assert fewer.world() == {} and fewer.world(also=runs[-1:]) == counted.world() and fewer.world() == {}


def test_code_words_positions_and_values_seen_over_and_over_name_nothing() -> None:
    codes = ["pending", "shipped", "on_hold", "in_transit", "lost", "returned", "packed", "late", "held", "queued", "billed"]
    runs = [Trajectory(
        task=f"Where is order W{i}?",
        calls=[Call(tool="get_order", args={"order_id": f"W{i}"},
                    result={"status": code, "items": [{"name": CITIES[i]}], "region": CITIES[i % 3]})],
        outcome=Outcome(ok=True, output="ok"), tools={"get_order": TOOLS["get_order"]},
    ) for i, code in enumerate(codes)]
    # statuses are a program's vocabulary; items by position are never counted; three regions over and over
    # are few values for many reads
    assert census(runs).world() == {}
    many = [Trajectory(task=f"Where is order W{i}?", calls=[Call(tool="get_order", args={"order_id": f"W{i}"},
                                                                 result={"region": CITIES[i % WORLD_VALUES]})],
                       outcome=Outcome(ok=True, output="ok"), tools={"get_order": TOOLS["get_order"]}) for i in range(101)]
    assert census(many).world() == {}  # ten regions in a hundred reads recur: a switch, not a name
    assert census(many[:100]).world() == {("get_order", ("region",)): (WORLD_VALUES, 100)}


# -- merging with it -------------------------------------------------------------------------------


def test_a_context_field_two_runs_showed_is_not_guarded_where_the_library_shows_it_names_a_thing() -> None:
    runs = [refund("1", "Berlin"), refund("2", "Paris")]
    _spec, alone = learned(runs)
    assert "customer['city'] in ('Berlin', 'Paris')" in body(alone)  # two cities: no evidence on their own
    world = census([*runs, *(lookup(f"C{i}", c) for i, c in enumerate(CITIES))]).world()
    spec, source = learned(runs, world)
    assert "customer['city'] in (" not in body(source)
    assert ("# not guarded: customer['city'] took 2 different values in 2 runs that acted alike, "
            f"and {len(CITIES)} in {len(CITIES) + 2} reads of the library's runs: it names a thing") in body(source)
    meta = skill_meta(spec)
    assert meta["world"] == [["get_customer", ["city"], len(CITIES), len(CITIES) + 2]]
    check_meta(meta)
    # the file re-renders from its runs and what it says of the world, byte for byte
    again = spec_from_runs(runs, name="refund_order", template=discover_template(runs[0]), world=world_from_meta(meta["world"]))
    assert render_skill(again) == source
    # and serves a customer of another city; a status no run showed still misses
    assert prove_all(source, spec, [refund("3", "Lima")]) is None
    assert prove_all(source, spec, [refund("4", "Lima", status="disputed")]) is not None


def test_a_write_that_echoes_a_named_field_leaves_the_file_saying_only_what_reads_showed() -> None:
    def echoed(order_id: str, city: str, ok: bool) -> Trajectory:  # the refund returns the customer's city
        r = refund(order_id, city)
        calls = [*r.calls[:2], r.calls[2].model_copy(update={"result": {"ok": ok, "city": city}})]
        said = f"Refunded order {order_id}." if ok else f"Could not refund order {order_id}."
        return Trajectory(task=r.task, calls=calls, outcome=Outcome(ok=True, output=said), tools=TOOLS)

    runs = [echoed("1", "Berlin", True), echoed("2", "Paris", False)]  # two answers after the write: branches
    world = census([*runs, *(lookup(f"C{i}", c) for i, c in enumerate(CITIES))]).world()
    spec, source = learned(runs, world)
    assert "if refund_result['ok']:" in body(source)
    # what the refund returned at 'city' is the customer's city (judged as that read's field was); the
    # census counts reads, and the file says what it counted: no entry of the write's
    assert "# not guarded: refund_result['city'] took 2 different values" in body(source)
    meta = skill_meta(spec)
    assert meta["world"] == [["get_customer", ["city"], len(CITIES), len(CITIES) + 2]]
    again = spec_from_runs(runs, name="refund_order", template=discover_template(runs[0]), world=world_from_meta(meta["world"]))
    assert render_skill(again) == source


def test_a_field_the_skill_acts_on_or_saw_once_stays_guarded_whatever_the_library_shows() -> None:
    many = [refund(str(i), c, order_city=c) for i, c in enumerate(CITIES, 10)]
    world = census(many).world()
    assert ("get_order", ("city",)) in world and ("get_customer", ("city",)) in world
    # the order's city is the refunded order's own field: two values are no evidence, whatever the library says
    _spec, source = learned([refund("1", "Berlin", order_city="Berlin"), refund("2", "Berlin", order_city="Paris")], world)
    assert "order['city'] in ('Berlin', 'Paris')" in body(source) and "customer['city'] == 'Berlin'" in body(source)


@pytest.mark.parametrize(("entry", "why"), [
    (["get_customer", "city", 12, 14], "[tool, path, values, reads]"),
    (["no_such_tool", ["city"], 12, 14], "a tool of SKILL['tools']"),
    (["get_customer", ["city"], 0, 14], "two positive counts"),
])
def test_what_a_file_says_of_the_world_is_checked_when_it_is_read(entry: list[Any], why: str) -> None:
    runs = [refund("1", "Berlin"), refund("2", "Paris")]
    spec, _source = learned(runs, census([*runs, *(lookup(f"C{i}", c) for i, c in enumerate(CITIES))]).world())
    meta = skill_meta(spec)
    meta["world"] = [entry]
    with pytest.raises(ValueError, match=re.escape(why)):
        check_meta(meta)


# -- a Forge -------------------------------------------------------------------------------------

_HARNESS = Harness(towns)
TOWNS = ["Berlin", "Paris", "Lima", "Oslo", "Quito", "Accra", "Hanoi", "Lagos", "Perth", "Sofia", "Tunis", "Turin", "Delft"]
NAMES = ["ana", "bo", "cy", "di", "ed", "fay", "gus", "hal", "ivy", "jo", "kim", "lu", "mo"]
QUESTIONS = ["Which town am I in?", "Where do I live?", "What town is on file?", "Where am I based?", "Which place is mine?",
             "Remind me of my home?", "Whereabouts am I registered?", "Do you know my location?", "Which city do you have?",
             "Tell me the town you have?"]


def test_a_forge_leaves_a_town_unguarded_once_its_library_has_seen_many_and_two_runs_acted_alike(tmp_path: Path) -> None:
    forge = _HARNESS.forge(tmp_path, towns.agent)
    try:
        # two cancellations, in two towns: the skill keeps to them
        for name, town in (("ana", "Berlin"), ("bo", "Paris")):
            _HARNESS.learn(forge, f"I'm {name}@x.io. Please cancel order W1.", towns.world(name, town), after_handover=True)
        skills = Library(tmp_path / "forge" / "skills")
        assert "customer_2['town'] in ('Berlin', 'Paris')" in skills.scan()[0][0].source
        # the library learns where customers are, asked in words no skill takes yet: many towns
        for name, town, asked in zip(NAMES[3:], TOWNS[3:], QUESTIONS, strict=True):
            _HARNESS.learn(forge, f"I'm {name}@x.io. {asked}", towns.world(name, town))
        # another cancellation is learned with what the library has seen: the town names a customer
        _HARNESS.learn(forge, "I'm ana@x.io. Please cancel order W1.", towns.world("ana", "Berlin", status="shipped"),
                       after_handover=True)
        source = next(s for s in skills.scan()[0] if "cancel_order" in s.tools).source
        assert "customer_2['town'] took 2 different values" in source and "customer_2['town'] in (" not in source
        sh = _HARNESS.check(forge, "I'm zed@x.io. Please cancel order W1.", towns.world("zed", "Kyiv"))
        assert sh.result.source == "skill" and sh.writes == [("cancel_order", {"order_id": "W1"})], sh.describe()
        # what the runs acted on still decides: a status no run of the way that cancels showed is handed over
        sh = _HARNESS.check(forge, "I'm zed@x.io. Please cancel order W1.", towns.world("zed", "Kyiv", status="lost"))
        assert sh.result.source != "skill" and sh.writes == [], sh.describe()
    finally:
        forge.close()
