"""A person's name said in another case than the records hold: one parameter, however it is written.

"Hi, I'm AARAV BROWN (94132)" and "hi, i'm yusuf taylor (95154)": the agent looks the customer up as
``first_name='Aarav'``. Each word is a slot that title-cases what the task says, so the name is
never a learned constant that pins the skill to one customer, and runs that wrote names in capitals,
in lower case and as written are one program.
"""

from __future__ import annotations

from skillforge._antiunify import generalize
from skillforge._learning import spec_from_runs
from skillforge._lifting import lift
from skillforge._spec import SkillSpec
from skillforge._template import TaskTemplate
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory

TOOLS = {
    "find_customer": ToolRef(module="tests.toolsets.shop", qualname="find_customer", read=True,
                             params=("first_name", "last_name", "zip")),
    "cancel_order": ToolRef(module="tests.toolsets.shop", qualname="cancel_order", params=("order_id",)),
}


def cancel_run(task: str, first: str, last: str, zip_code: str, order_id: str) -> Trajectory:
    return Trajectory(
        task=task,
        calls=[
            Call(tool="find_customer", args={"first_name": first, "last_name": last, "zip": zip_code},
                 result={"customer_id": f"{first.lower()}_{last.lower()}", "orders": [order_id]}),
            Call(tool="cancel_order", args={"order_id": order_id}, result={"order_id": order_id, "status": "cancelled"}),
        ],
        outcome=Outcome(ok=True, output=f"Cancelled order {order_id}."),
        tools=TOOLS,
    )


def lifted(traj: Trajectory) -> SkillSpec:
    spec = lift(traj)
    assert isinstance(spec, SkillSpec), spec
    return spec


def test_a_name_said_in_capitals_is_a_title_cased_parameter() -> None:
    spec = lifted(cancel_run("Hi, I'm AARAV BROWN (94132). Please cancel order 7.", "Aarav", "Brown", "94132", "7"))
    assert spec.template == "Hi, I'm {first_name} {last_name} ({zip}). Please cancel order {order_id}."
    assert {s.name: s.transform for s in spec.slots if s.name.endswith("name")} == {"first_name": "title", "last_name": "title"}
    bound = TaskTemplate(spec.template, list(spec.slots)).bind("Hi, I'm YUSUF TAYLOR (95154). Please cancel order 9.")
    assert bound is not None and (bound["first_name"], bound["last_name"]) == ("Yusuf", "Taylor")


def test_a_name_said_in_lower_case_is_a_title_cased_parameter() -> None:
    spec = lifted(cancel_run("hi, i'm anya patel (10001). please cancel order 3.", "Anya", "Patel", "10001", "3"))
    assert spec.template == "hi, i'm {first_name} {last_name} ({zip}). please cancel order {order_id}."
    bound = TaskTemplate(spec.template, list(spec.slots)).bind("hi, i'm mei ahmed (20002). please cancel order 4.")
    assert bound is not None and (bound["first_name"], bound["last_name"]) == ("Mei", "Ahmed")


def test_names_in_capitals_and_as_written_are_one_program() -> None:
    shouted = cancel_run("Hi, I'm AARAV BROWN (94132). Please cancel order 7.", "Aarav", "Brown", "94132", "7")
    written = cancel_run("Hi, I'm Liam Li (30303). Please cancel order 8.", "Liam", "Li", "30303", "8")
    a, b = lifted(shouted), lifted(written)
    assert a.template == b.template and [(s.tool, s.args) for s in a.steps] == [(s.tool, s.args) for s in b.steps]
    both = generalize(TaskTemplate(a.template, list(a.slots)), TaskTemplate(b.template, list(b.slots)))
    assert both is not None
    merged = spec_from_runs([shouted, written], name="cancel", template=both)
    assert isinstance(merged, SkillSpec), merged
    assert both.bind("Hi, I'm MEI Ahmed (20002). Please cancel order 4.") is not None


def test_a_word_in_mixed_case_is_not_taken_for_a_name_in_another_case() -> None:
    spec = lifted(cancel_run("Hi, I'm aArav Brown (94132). Please cancel order 7.", "Aarav", "Brown", "94132", "7"))
    assert "{first_name}" not in spec.template  # "aArav" is not the name written in capitals or lower case


def test_a_name_said_twice_stays_a_slot_when_its_text_meets_a_run_that_named_no_one() -> None:
    """"the passenger Jon Smith should be John Smith": the last name is one slot said twice. Met with a
    run whose names stayed text, it does not become ignored text in two places (that would no longer say
    both are one name): the two stay apart, and learning goes on (it raised KeyError)."""
    from skillforge._template import Slot

    said = TaskTemplate(
        "Fix booking {reservation_id}: the passenger {passenger_first_name} {last_name} should be {first_name} {last_name}.",
        [Slot("reservation_id", "id", "str", None, "9A"), Slot("passenger_first_name", "word", "str", None, "Aa"),
         Slot("last_name", "word", "str", None, "Aa"), Slot("first_name", "word", "str", None, "Aa")],
    )
    plain = TaskTemplate("Fix booking {reservation_id}: the passenger Jon Smith should be John Smith.",
                         [Slot("reservation_id", "id", "str", None, "9A")])
    assert generalize(said, plain) is None
