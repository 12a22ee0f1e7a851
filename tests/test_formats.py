"""How an answer writes a number, where the runs leave it open (``_formats``): $42.50 is written alike
by ``.2f`` and ``,.2f``, so a skill learned from amounts under 1,000 must not write $2073.69 where the
agent writes $2,073.69; it hands over there, until a run shows the format. On runs alone (lifting and
``spec_from_runs``, proven on the runs of other worlds), then through a Forge, shadowed by the agent alone.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from skillforge import Forge
from skillforge._codegen import render_skill
from skillforge._compile import prove_all
from skillforge._learning import spec_from_runs
from skillforge._lifting import Rejected, discover_template, lift
from skillforge._spec import SkillSpec
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from tests.shadowing import Harness
from tests.toolsets import probes
from tests.toolsets.safety import Tools

TOOLS = {
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
    "cancel_order": ToolRef(module="shop", qualname="cancel_order", params=("order_id", "note")),
}


def run(order_id: str, amount: float | int, money: str = ",.2f", *, noted: bool = False) -> Trajectory:
    """A cancel of ``order_id`` whose answer says the amount paid (under ``payments``: no sign fact of it)
    as the agent writes it (``money``); ``noted``: the cancel's note says it too, and the answer does not."""
    order = {"id": order_id, "status": "pending", "payments": [{"amount": amount, "method": "card"}]}
    said = format(amount, money)
    note = f"refund {said} to the card" if noted else "ordered by mistake"
    return Trajectory(
        task=f"Cancel order #{order_id}",
        calls=[
            Call(tool="get_order", args={"order_id": order_id}, result=order),
            Call(tool="cancel_order", args={"order_id": order_id, "note": note}, result={"status": "cancelled"}),
        ],
        outcome=Outcome(ok=True, output="Cancelled." if noted else f"Cancelled order {order_id}; ${said} goes back to your card."),
        tools=TOOLS,
    )


def learned(*runs: Trajectory) -> SkillSpec:
    """The skill ``spec_from_runs`` learns from ``runs`` (proven on each), as the Forge learns it."""
    template = discover_template(runs[0], literal=frozenset())
    assert not isinstance(template, Rejected), template
    spec = spec_from_runs(list(runs), name="cancel_order_skill", template=template)
    assert not isinstance(spec, Rejected), spec
    assert prove_all(render_skill(spec), spec, list(runs)) is None
    return spec


def served(spec: SkillSpec, world: Trajectory) -> str | None:
    """None where the skill does in ``world`` what the agent did; else why not (a handover, or a wrong answer)."""
    why = prove_all(render_skill(spec), spec, [world])
    return None if why is None else why.reason


def handed_over(why: str | None) -> bool:
    return why is not None and "a guard fails" in why


def test_an_amount_learned_under_a_thousand_hands_over_at_a_thousand_or_more() -> None:
    for spec in (lift(run("KA", 42.5)), learned(run("KA", 42.5), run("KB", 917.25))):
        assert isinstance(spec, SkillSpec)
        assert "'.2f'" in repr(spec.output)  # $42.50 and $917.25 read as '.2f': the first format that fits
        big = served(spec, run("KC", 2073.69))
        assert handed_over(big), big  # never "$2073.69", where the agent says "$2,073.69"
        assert served(spec, run("KD", 73.69)) is None  # under 1,000 every format that fits writes it alike
        assert served(spec, run("KE", 999.99)) is None
        assert handed_over(served(spec, run("KF", 999.996)))  # "1000.00" or "1,000.00": rounding crosses it
    # an agent that writes ungrouped amounts is no more served wrongly: the runs did not say which it is
    assert handed_over(served(lift(run("KA", 42.5, ".2f")), run("KC", 2073.69, ".2f"))), "ungrouped agent"


def test_a_run_at_a_thousand_or_more_shows_the_format_and_the_guard_goes() -> None:
    spec = learned(run("KA", 42.5), run("KB", 1042.5))
    assert "',.2f'" in repr(spec.output)
    assert not any(g.kind == "written" and g.value[1] for st in spec.steps for g in st.guards), spec.steps
    assert served(spec, run("KC", 2073.69)) is None
    assert served(spec, run("KD", 73.69)) is None
    alone = lift(run("KB", 1042.5))  # one such run alone shows it too
    assert isinstance(alone, SkillSpec) and served(alone, run("KC", 2073.69)) is None
    ungrouped = learned(run("KA", 42.5, ".2f"), run("KB", 1042.5, ".2f"))  # and the other way
    assert "'.2f'" in repr(ungrouped.output) and served(ungrouped, run("KC", 2073.69, ".2f")) is None


def test_decimals_the_runs_did_not_show_hand_over() -> None:
    # $42.25 is what str, '.2f' and ',.2f' all write: $42.5 or $42.50 is not shown
    spec = lift(run("KA", 42.25, ""))
    assert isinstance(spec, SkillSpec)
    assert handed_over(served(spec, run("KB", 42.5, ""))) and handed_over(served(spec, run("KB", 42.5)))
    assert served(spec, run("KB", 17.75, "")) is None
    shown = learned(run("KA", 42.25), run("KB", 17.5))  # $17.50: two decimals always
    assert served(shown, run("KC", 42.5)) is None and served(shown, run("KC", 8.0)) is None
    assert handed_over(served(shown, run("KC", 4200.5)))  # still under 1,000 only


def test_whole_numbers_and_signs_the_runs_did_not_show_hand_over() -> None:
    spec = lift(run("KA", 450, ""))  # 450: str and ',' write it alike
    assert isinstance(spec, SkillSpec)
    assert handed_over(served(spec, run("KB", 1500))) and handed_over(served(spec, run("KB", 1500, "")))
    assert served(spec, run("KB", 999, "")) is None
    assert served(lift(run("KA", 4500, "")), run("KB", 1500, "")) is None  # "4500": not ','
    assert handed_over(served(spec, run("KB", -45, "")))  # "$-45" or "-$45"? no run was negative
    signed = learned(run("KA", 450, ""), run("KB", -45, ""))
    assert served(signed, run("KC", -7, "")) is None


def test_an_amount_a_write_is_given_in_a_text_is_guarded_before_the_write() -> None:
    spec = lift(run("KA", 42.5, noted=True))
    assert isinstance(spec, SkillSpec)
    assert [g.kind for g in spec.steps[0].guards].count("written") == 1  # on the read, before the cancel
    assert handed_over(served(spec, run("KB", 2073.69, noted=True)))
    assert served(spec, run("KB", 73.69, noted=True)) is None


def test_runs_of_one_write_and_two_answers_guard_each_answer_in_its_own_branch() -> None:
    tools = {**TOOLS, "pay_order": ToolRef(module="shop", qualname="pay_order", params=("order_id",))}

    def paid(order_id: str, amount: float, ok: bool) -> Trajectory:
        order = {"id": order_id, "status": "pending", "payments": [{"amount": amount, "method": "card"}]}
        result = {"ok": True} if ok else {"ok": False, "error": "the card was declined"}
        said = f"Order {order_id} is paid; ${amount:,.2f} moved." if ok else f"I could not pay order {order_id}: {result['error']}."
        return Trajectory(task=f"Pay order #{order_id}", tools=tools, outcome=Outcome(ok=True, output=said), calls=[
            Call(tool="get_order", args={"order_id": order_id}, result=order),
            Call(tool="pay_order", args={"order_id": order_id}, result=result),
        ])

    # the runs that were declined quote no amount: theirs of 1,500 shows nothing of how the other answer writes it
    spec = learned(paid("KA", 42.5, True), paid("KB", 317.25, True), paid("KC", 88.0, False), paid("KD", 1500.0, False))
    assert spec.early and any(g.kind == "written" for g in spec.early[0].guards[-1])  # in the branch, after the write
    assert handed_over(served(spec, paid("KE", 2073.69, True)))
    assert served(spec, paid("KE", 2073.69, False)) is None and served(spec, paid("KE", 73.69, True)) is None


# -- through a Forge, shadowed by the agent alone -------------------------------------------------------


def _world(order_id: str, amount: float) -> dict[str, Any]:
    return {"orders": {order_id: {"status": "pending", "payments": [{"amount": amount, "method": "gift card"}]}}}


def _agent(t: dict[str, Any]) -> Any:
    def agent(task: str, transcript: list | None = None) -> str:
        tools = Tools(t, transcript)
        order_id = re.fullmatch(r"Please cancel my order #(\d+)\.", task).group(1)  # type: ignore[union-attr]
        order = tools.get_order(order_id=order_id)
        tools.cancel_order(order_id=order_id)
        return f"I've cancelled order #{order_id}; you'll get ${order['payments'][0]['amount']:,.2f} back on your gift card."

    return agent


def test_a_forge_hands_over_an_amount_of_a_thousand_or_more_then_learns_how_it_is_written(tmp_path: Path) -> None:
    harness = Harness(probes)
    forge = harness.forge(tmp_path, _agent)
    harness.learn(forge, "Please cancel my order #5.", _world("5", 42.5))
    served_small = harness.check(forge, "Please cancel my order #6.", _world("6", 317.2))
    assert served_small.result.source == "skill", served_small.describe()  # under 1,000: served
    probes.load(_world("7", 2073.69))
    why = str(forge.explain("Please cancel my order #7.", run=True))  # the guard, and the two ways it writes the amount
    assert "stopped by a guard" in why and "= '2073.69'" in why and "= '2,073.69'" in why, why
    big = harness.check(forge, "Please cancel my order #7.", _world("7", 2073.69))  # the agent's "$2,073.69"
    assert big.result.source in ("agent", "skill+agent") and big.result.learned, big.describe()
    again = harness.check(forge, "Please cancel my order #8.", copy.deepcopy(_world("8", 1996.55)))
    assert again.result.source == "skill" and "$1,996.55" in again.result.output, again.describe()
    forge.close()
