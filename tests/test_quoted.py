"""Task text the answer quotes is never text a skill ignores (a wrong replay on the storefront stream).

"I want to send back the Desk Lamp and the Tea Kettle I got in order W1." / "... and the Floor Fan
...": the two tasks differ in one region that fed no call (the missing item), so their common
template ignored it (``{_2}``), although each answer said it: "I don't see a tea kettle in order
W1." Their answers then differed by that text alone, and became branches split on whatever else
told the runs apart (the customer's city), each returning its own constant: a task reaching a
branch with a third item got another item's name. The answer is part of the program: text it says
that the task holds is never ignored, and runs that differ by it alone make no skill together.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillforge._antiunify import generalize, ignores_data
from skillforge._codegen import render_skill
from skillforge._compile import prove_all
from skillforge._learning import named, spec_from_runs
from skillforge._lifting import Rejected, discover_template, lift
from skillforge._template import IGNORED, TaskTemplate
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from tests.shadowing import Harness
from tests.toolsets import quoting

TOOLS = {
    "find_customer": ToolRef(module="shop", qualname="find_customer", read=True, params=("first_name", "last_name", "zip")),
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
    "return_item": ToolRef(module="shop", qualname="return_item", params=("order_id", "item")),
}
ORDER = [{"name": "Desk Lamp"}, {"name": "Grill"}]


def missing(second: str, city: str, zip_code: str = "80201") -> Trajectory:
    """A run of "send back the Desk Lamp and the SECOND ...": the order has no SECOND, and the agent says so."""
    task = f"I want to send back the Desk Lamp and the {second} I got in order W1. Ava Ruiz, {zip_code}."
    return Trajectory(
        task=task,
        calls=[
            Call(tool="find_customer", args={"first_name": "Ava", "last_name": "Ruiz", "zip": zip_code},
                 result={"id": "ava_1", "city": city, "zip": zip_code}),
            Call(tool="get_order", args={"order_id": "W1"}, result={"order_id": "W1", "status": "delivered", "items": ORDER}),
        ],
        outcome=Outcome(ok=True, output=f"I don't see a {second.lower()} in order W1. I haven't started a return."),
        tools=TOOLS,
    )


def common(runs: list[Trajectory]) -> TaskTemplate:
    """The runs' tasks' common template, as learning makes it (anti-unified, words read back named)."""
    templates = [discover_template(r) for r in runs]
    assert not any(isinstance(t, Rejected) for t in templates)
    both = templates[0]
    for t in templates[1:]:
        wider = generalize(both, t)
        assert wider is not None, (both.text, t.text)
        both = wider
    return named(both, runs)


def served_wrong(spec: Any, run: Trajectory) -> bool:
    """Whether the skill of ``spec``, replayed on ``run``'s recorded results, answers otherwise than the run
    (a guard that stops it is a miss, which is fine)."""
    if isinstance(spec, Rejected):
        return False
    problem = prove_all(render_skill(spec), spec, [run])
    return problem is not None and "the skill returns" in problem.reason


def test_the_runs_common_template_ignores_the_item_the_answers_quote() -> None:
    runs = [missing("Tea Kettle", "Denver"), missing("Floor Fan", "Austin")]
    both = common(runs)
    assert [s.kind for s in both.slots if s.kind == IGNORED] == [IGNORED]  # the second item: text no call took
    assert ignores_data(both, runs)  # ... which each answer says: not text to ignore


def test_runs_whose_answers_differ_by_task_text_alone_make_no_branches() -> None:
    runs = [missing("Tea Kettle", "Denver"), missing("Floor Fan", "Austin")]
    both = common(runs)
    spec = spec_from_runs(runs, name="send_back", template=both)
    third = missing("Space Heater", "Denver")  # the first run's world, another item
    assert both.bind(third.task) is not None
    assert not served_wrong(spec, third), f"the skill answers another task's item:\n{render_skill(spec)}"
    assert isinstance(spec, Rejected)
    for run in runs:  # lifted under that template alone, each run's answer holds the task's text as a constant
        lifted = lift(run, template=both)
        assert isinstance(lifted, Rejected) and "ignores" in lifted.reason, lifted


def test_a_run_quoting_the_ignored_text_verbatim_is_refused_too() -> None:
    runs = [missing("Tea Kettle", "Denver"), missing("Floor Fan", "Austin")]
    both = common(runs)
    verbatim = missing("Space Heater", "Denver")
    verbatim = Trajectory(task=verbatim.task, calls=verbatim.calls, tools=TOOLS,
                          outcome=Outcome(ok=True, output="No Space Heater in W1, sorry."))
    assert ignores_data(both, [verbatim])
    args = missing("Space Heater", "Denver")  # a call's argument says it: a search for it
    args = Trajectory(task=args.task, tools={**TOOLS, "search": ToolRef(module="shop", qualname="search", read=True)},
                      calls=[*args.calls, Call(tool="search", args={"query": "space heater"}, result=[])], outcome=args.outcome)
    assert ignores_data(both, [args])
    other = missing("Space Heater", "Denver")  # an answer that says nothing of it: the text may be ignored
    other = Trajectory(task=other.task, calls=other.calls, tools=TOOLS, outcome=Outcome(ok=True, output="Nothing to return in W1."))
    assert not ignores_data(both, [other])


def test_a_slots_value_the_answer_says_in_another_case_is_pinned() -> None:
    """A value the task gives that a call took ("Desk Lamp") and the answer says lowercased, as text
    of its own: the skill would say "desk lamp" for a Floor Fan too. It serves that value only."""

    def returned(item: str) -> Trajectory:
        return Trajectory(
            task=f"Please return the {item} from order W1.",
            calls=[
                Call(tool="get_order", args={"order_id": "W1"}, result={"order_id": "W1", "items": [{"name": item}, {"name": "Grill"}]}),
                Call(tool="return_item", args={"order_id": "W1", "item": item}, result={"ok": True}),
            ],
            outcome=Outcome(ok=True, output=f"Your {item.lower()} is on its way back to us."),
            tools=TOOLS,
        )

    spec = lift(returned("Desk Lamp"))
    assert not isinstance(spec, Rejected), spec
    source = render_skill(spec)
    assert prove_all(source, spec, [returned("Desk Lamp")]) is None
    stopped = prove_all(source, spec, [returned("Floor Fan")])  # bound, but its answer would be the desk lamp's
    assert stopped is not None and "a guard fails" in stopped.reason, stopped
    assert not served_wrong(spec, returned("Floor Fan"))


def test_the_same_answer_said_as_written_is_still_learned() -> None:
    """The check refuses text said as a constant, not a value the answer quotes from the task."""
    run = missing("Tea Kettle", "Denver")
    run = Trajectory(task=run.task, calls=run.calls, tools=TOOLS,
                     outcome=Outcome(ok=True, output="I don't see that item in order W1. I haven't started a return."))
    spec = lift(run)
    assert not isinstance(spec, Rejected), spec
    both = common([run, missing("Floor Fan", "Austin")])
    assert not ignores_data(both, [run])
    assert not isinstance(lift(run, template=both), Rejected)


# -- through a Forge: the agent's runs, learned, and a third task shadowed ----------------------------

_HARNESS = Harness(quoting)
PERSONA = "I'm writing from my phone, sorry for typos."


def _task(first: str, second: str, oid: str, who: str, zip_code: str) -> str:
    return f"{PERSONA} I want to send back the {first} and the {second} I got in order {oid}. {who}, {zip_code}."


def test_a_forge_never_answers_with_another_tasks_item(tmp_path: Path) -> None:
    q = quoting
    world = q.world(
        q.customer("ava_1", "Ava", "Ruiz", "80201", "Denver", "W1"),
        q.customer("raj_2", "Raj", "Khan", "73301", "Austin", "W2"),
        q.order("W1", "Desk Lamp", "Grill"),
        q.order("W2", "Desk Lamp", "Blender"),
    )
    forge = _HARNESS.forge(tmp_path, q.agent)
    _HARNESS.learn(forge, _task("Desk Lamp", "Tea Kettle", "W1", "Ava Ruiz", "80201"), world)
    _HARNESS.check(forge, _task("Desk Lamp", "Floor Fan", "W2", "Raj Khan", "73301"), world)
    for second in ("Space Heater", "Floor Fan", "Tea Kettle", "Rice Cooker"):  # Ava's world: her run's branch, if any
        _HARNESS.check(forge, _task("Desk Lamp", second, "W1", "Ava Ruiz", "80201"), world)
    served = _HARNESS.check(forge, _task("Desk Lamp", "Tea Kettle", "W1", "Ava Ruiz", "80201"), world)
    assert served.result.source == "skill"  # the very task learned is still served (its text is the skill's own)


def test_a_run_whose_answer_says_text_its_skills_ignore_is_learned_on_its_own(tmp_path: Path) -> None:
    """Skills that ignore the second item (orders not the customer's: the answer says nothing of it)
    match a task whose run then says it ("I don't see a space heater"): learned under their template
    it would be refused, so it is learned as a task of its own, and served again as the agent does."""
    q = quoting
    world = q.world(
        q.customer("ava_1", "Ava", "Ruiz", "80201", "Denver", "W1"),
        q.order("W1", "Desk Lamp", "Grill"),
        q.order("W7", "Desk Lamp", "Grill"),
    )
    forge = _HARNESS.forge(tmp_path, q.agent)
    _HARNESS.learn(forge, _task("Desk Lamp", "Tea Kettle", "W7", "Ava Ruiz", "80201"), world)
    sh = _HARNESS.check(forge, _task("Desk Lamp", "Floor Fan", "W7", "Ava Ruiz", "80201"), world)
    assert sh.result.source == "agent" and sh.result.learned, sh.describe()
    skills, _problems = forge.library.scan()
    assert any("the {_2} I got" in s.template.text for s in skills), [s.template.text for s in skills]  # no answer said it
    said = _task("Desk Lamp", "Space Heater", "W1", "Ava Ruiz", "80201")
    sh = _HARNESS.check(forge, said, world)  # its guards fail (W1 is hers); the agent says the item
    assert sh.result.source in ("agent", "skill+agent") and sh.result.learned, sh.describe()
    again = _HARNESS.check(forge, said, world)
    assert again.result.source != "agent", again.describe()  # learned as a task of its own, and served as the agent does
