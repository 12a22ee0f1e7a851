"""A text one run's lifting composed of a value that merely fit it, which other runs wrote as it is.

Found reading the six-day storefront skills: a cancel filed "no longer needed" for an order one of
whose items had the option ``waterproof: 'no'`` was lifted as
``reason=f"{order_details['items'][1]['options']['waterproof']} longer needed"``, pinned to that
order's third item; every other run of the same calls wrote the constant. The runs could not be one
program, so the skill took a way of its own for that run. The least general program of all the runs
writes the constant (``_learning._written_as_is``); one run alone cannot tell, and a text the runs
composed of values that differ between them stays composed.
"""

from __future__ import annotations

from typing import Any

from skillforge._learning import spec_from_runs
from skillforge._lifting import Rejected, discover_template, lift
from skillforge._spec import Const, Fmt, SkillSpec
from skillforge._template import TaskTemplate
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory

TOOLS = {
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
    "cancel_order": ToolRef(module="shop", qualname="cancel_order", params=("order_id", "reason")),
}


def cancelled(oid: str, options: dict[str, str], reason: str = "no longer needed") -> Trajectory:
    return Trajectory(
        task=f"Please cancel order {oid}, we won't need it after all.",
        calls=[Call(tool="get_order", args={"order_id": oid},
                    result={"order_id": oid, "status": "pending", "items": [{"name": "Tent", "options": options}]}),
               Call(tool="cancel_order", args={"order_id": oid, "reason": reason}, result={"status": "cancelled"})],
        outcome=Outcome(ok=True, output=f"Cancelled order {oid}."), tools=TOOLS,
    )


def template(run: Trajectory) -> TaskTemplate:
    t = discover_template(run)
    assert isinstance(t, TaskTemplate)
    return t


def reason(spec: SkillSpec | Rejected) -> Any:
    assert isinstance(spec, SkillSpec), spec
    return dict(spec.steps[1].args)["reason"]


def test_a_text_other_runs_wrote_as_it_is_is_the_constant_not_a_value_that_fit_one_run() -> None:
    odd, plain = cancelled("W1", {"waterproof": "no"}), cancelled("W2", {"waterproof": "yes"})
    assert isinstance(reason(lift(odd, name="cancel", template=template(odd))), Fmt)  # one run alone cannot tell
    for runs in ([odd, plain], [plain, odd]):
        spec = spec_from_runs(runs, name="cancel", template=template(runs[0]))
        assert reason(spec) == Const("no longer needed")
        assert spec.early == ()  # one way: the runs made one program


def test_a_text_the_runs_composed_of_values_that_differ_stays_composed() -> None:
    a = cancelled("W1", {"waterproof": "no"}, reason="no longer needed")
    b = cancelled("W2", {"waterproof": "yes"}, reason="yes longer needed")  # the option's value, in either run
    spec = spec_from_runs([a, b], name="cancel", template=template(a))
    assert isinstance(reason(spec), Fmt)


def several_items(oid: str, task: str, third: dict[str, str]) -> Trajectory:
    items = [{"name": "Tent", "options": {"color": "green"}}, {"name": "Lamp", "options": {"color": "red"}},
             {"name": "Jacket", "options": third}]
    return Trajectory(
        task=task,
        calls=[Call(tool="get_order", args={"order_id": oid}, result={"order_id": oid, "status": "pending", "items": items}),
               Call(tool="cancel_order", args={"order_id": oid, "reason": "no longer needed"}, result={"status": "cancelled"})],
        outcome=Outcome(ok=True, output=f"Cancelled order {oid}."), tools=TOOLS,
    )


def test_a_field_of_whichever_element_sat_at_a_position_explains_no_text_of_one_run() -> None:
    # the third item's option 'no' fits "no longer needed" by chance: an index that merely fit one run
    # is no explanation, so the run writes the constant (it was an f-string pinned to that item)
    run = several_items("W1", "Please cancel order W1, we won't need it after all.", {"waterproof": "no"})
    assert reason(lift(run, name="cancel", template=template(run))) == Const("no longer needed")

