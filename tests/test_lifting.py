"""Templates and lifting: spans, references, compositions, constants, and what is refused."""

from __future__ import annotations

import pytest

from skillforge._lifting import Rejected, lift, skill_name
from skillforge._spec import Const, DictOf, Each, Fmt, ListOf, Param, Ref
from skillforge._template import Slot, TaskTemplate, shape_key, slot_kind
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory

TOOLS = {
    "get_order": ToolRef(module="shop.tools", qualname="get_order", read=True, params=("order_id",)),
    "refund": ToolRef(module="shop.tools", qualname="refund", params=("order_id", "payment_id", "amount", "items", "meta", "reason")),
    "notify": ToolRef(module="shop.tools", qualname="notify", params=("tags", "order_id", "flag", "x")),
}


def traj(task: str, calls: list[Call], output=None) -> Trajectory:
    return Trajectory(task=task, calls=calls, outcome=Outcome(ok=True, output=output), tools=TOOLS)


# -- templates -------------------------------------------------------------------------


def test_binding_tolerates_case_whitespace_and_punctuation() -> None:
    t = TaskTemplate("Refund order #{order_id}", [Slot("order_id", "digits", "str")])
    for task in ("Refund order #1042", "refund   ORDER 1042.", "  Refund order #1042!  ", "Refund order: 1042"):
        assert t.bind(task) == {"order_id": "1042"}, task


@pytest.mark.parametrize("task", ["Refund the order 1042", "Refund order #abc", "Refund order 1042 and 1043", "Refund 1042"])
def test_binding_is_strict_on_literal_words_and_slot_shapes(task: str) -> None:
    t = TaskTemplate("Refund order #{order_id}", [Slot("order_id", "digits", "str")])
    assert t.bind(task) is None


def test_typed_slots_convert_and_repeated_slots_must_agree() -> None:
    t = TaskTemplate("Move {qty} from {sku} to {sku}", [Slot("qty", "int", "int"), Slot("sku", "id", "str")])
    assert t.bind("move 3 from A-1 to A-1") == {"qty": 3, "sku": "A-1"}
    assert t.bind("move 3 from A-1 to B-2") is None


def test_free_text_slots_are_anchored_by_literal_words() -> None:
    t = TaskTemplate("Ship order {order_id} to {address} instead.", [Slot("order_id", "digits", "str"), Slot("address", "text", "str")])
    assert t.bind("Ship order 7 to 12 Elm Street, Springfield instead.") == {"order_id": "7", "address": "12 Elm Street, Springfield"}
    assert t.keys == ()  # not in the hot index: found through Chroma candidates


def test_shape_keys_agree_between_template_and_task() -> None:
    t = TaskTemplate("Email customer {cid} at {email}", [Slot("cid", "id", "str"), Slot("email", "email", "str")])
    assert t.keys == (shape_key("email customer C-7 at a.b@example.org"),)
    assert shape_key("email the customer C-7 at a.b@example.org") not in t.keys


def test_literal_braces_in_tasks_survive() -> None:
    t = TaskTemplate("Run {{job}} {n}", [Slot("n", "int", "int")])
    assert t.bind("run {job} 5") == {"n": 5}


@pytest.mark.parametrize(
    ("value", "kind"),
    [(3, "int"), (2.5, "number"), ("1042", "digits"), ("W-77", "id"), ("a@b.io", "email"), ("Alice", "word"), ("12 Elm", "text")],
)
def test_slot_kinds_follow_the_value_shape(value, kind) -> None:
    assert slot_kind(value) == kind


def test_skill_names_come_from_literal_words() -> None:
    assert skill_name("Refund order #{order_id}") == "refund_order"
    assert skill_name("{x} {y}") == "skill"
    assert skill_name("Import the data for class {c}") == "import_data_class"


# -- lifting ----------------------------------------------------------------------------


def test_task_spans_become_parameters_and_result_values_references() -> None:
    spec = lift(traj(
        "Refund order #1042",
        [
            Call(tool="get_order", args={"order_id": "1042"}, result={"id": "1042", "pay": {"id": "P-9"}, "total": 30.0}),
            Call(tool="refund", args={"payment_id": "P-9", "amount": 30.0}, result={"ok": True}),
        ],
        output="ok",
    ))
    assert spec.template == "Refund order #{order_id}"
    assert spec.steps[0].args == (("order_id", Param("order_id")),)
    assert spec.steps[1].args == (("payment_id", Ref(0, ("pay", "id"))), ("amount", Ref(0, ("total",))))
    assert spec.steps[0].var == "order" and spec.steps[1].var == "refund_result"  # named: its result is guarded
    assert spec.output == Const("ok")


def test_a_task_span_wins_over_an_equal_result_value() -> None:
    spec = lift(traj(
        "Notify order 1042",
        [
            Call(tool="get_order", args={"order_id": "1042"}, result={"id": "1042"}),
            Call(tool="notify", args={"order_id": "1042"}, result=None),
        ],
    ))
    assert spec.steps[1].args == (("order_id", Param("order_id")),)


def test_whole_objects_lists_and_dicts_are_lifted() -> None:
    spec = lift(traj(
        "Refund order 1042 to alice@example.com",
        [
            Call(tool="get_order", args={"order_id": "1042"}, result={"items": [{"sku": "A"}, {"sku": "B"}], "total": 9}),
            Call(tool="refund", args={"items": [{"sku": "A"}, {"sku": "B"}], "meta": {"to": "alice@example.com", "n": 9, "why": "asked"}}),
        ],
    ))
    items, meta = spec.steps[1].args
    assert items == ("items", Ref(0, ("items",)))
    assert meta == ("meta", DictOf((("n", Ref(0, ("total",))), ("to", Param("to")), ("why", Const("asked")))))
    assert spec.constants == 1


def test_a_list_the_task_writes_out_becomes_one_list_parameter() -> None:
    spec = lift(traj("Tag 1042 with red and blue", [Call(tool="notify", args={"tags": ["red", "blue"], "order_id": "1042"})]))
    assert spec.steps[0].args[0] == ("tags", Each(Param("tags"), "tag", Param("tag")))
    assert spec.template == "Tag {order_id} with {tags}"
    template = TaskTemplate(spec.template, spec.slots)
    assert template.bind("Tag 7 with red and green and blue") == {"order_id": "7", "tags": ["red", "green", "blue"]}
    assert template.bind("Tag 7 with red") == {"order_id": "7", "tags": ["red"]}
    assert template.bind("Tag 7 with red or blue") is None  # "or" says another thing; only "and" was seen


def test_values_that_are_not_side_by_side_in_the_task_stay_parameters_of_their_own() -> None:
    spec = lift(traj("Tag 1042 with red, then ship it blue", [Call(tool="notify", args={"tags": ["red", "blue"], "order_id": "1042"})]))
    assert spec.steps[0].args[0] == ("tags", ListOf((Param("tags_0"), Param("tags_1"))))


def test_answers_are_composed_from_parameters_and_results() -> None:
    spec = lift(traj(
        "Where is order 1042?",
        [Call(tool="get_order", args={"order_id": "1042"}, result={"status": "shipped", "total": 12.5})],
        output="Order 1042 is shipped ($12.50).",
    ))
    assert spec.output == Fmt(("Order ", (Param("order_id"), ""), " is ", (Ref(0, ("status",)), ""), " ($", (Ref(0, ("total",)), ".2f"), ")."))


def test_values_with_no_source_stay_constants() -> None:
    spec = lift(traj("Refund order 1042", [Call(tool="refund", args={"order_id": "1042", "reason": "damaged in transit"})]))
    assert spec.steps[0].args[1] == ("reason", Const("damaged in transit"))
    assert spec.constants == 1


def test_every_occurrence_of_a_span_is_the_same_slot() -> None:
    spec = lift(traj("Check 1042, yes 1042", [Call(tool="get_order", args={"order_id": "1042"}, result={})]))
    assert spec.template == "Check {order_id}, yes {order_id}"


def test_single_letters_and_booleans_are_not_lifted_from_the_task() -> None:
    spec = lift(traj("Make a note for 1042", [Call(tool="notify", args={"order_id": "1042", "flag": True, "x": "a"})]))
    assert spec.steps[0].args[1:] == (("flag", Const(True)), ("x", Const("a")))


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"outcome": Outcome(ok=False, error="boom")}, "did not succeed"),
        ({"calls": [Call(tool="refund", args={}, error="ValueError: no")]}, "raised"),
        ({"tools": {"refund": ToolRef(module="__main__", qualname="refund")}}, "cannot import"),
        ({"tools": {"refund": ToolRef(module="m", qualname="outer.<locals>.refund")}}, "inside a function"),
        ({"tools": {}}, "no tool reference"),
    ],
)
def test_runs_that_cannot_be_skills_are_rejected_with_the_reason(change: dict, reason: str) -> None:
    base = {"task": "Refund 1042", "calls": [Call(tool="refund", args={"order_id": "1042"})], "outcome": Outcome(ok=True), "tools": {"refund": TOOLS["refund"]}}
    base.update(change)
    verdict = lift(Trajectory(**base))
    assert isinstance(verdict, Rejected) and reason in verdict.reason


def test_lifting_is_deterministic() -> None:
    t = traj("Refund order 1042", [Call(tool="get_order", args={"order_id": "1042"}, result={"a": [1, 2], "b": "x"})], output="1042 x")
    assert lift(t) == lift(Trajectory.from_json(t.canonical_json()))


def test_a_task_that_fits_two_templates_goes_to_the_most_specific() -> None:
    from types import SimpleNamespace

    from skillforge._index import HotIndex

    general = SimpleNamespace(name="a_general", template=TaskTemplate("Refund {what}", [Slot("what", "text", "str")]))
    specific = SimpleNamespace(
        name="b_specific", template=TaskTemplate("Refund order #{order_id}", [Slot("order_id", "digits", "str")])
    )
    hot = HotIndex()
    hot.add(general)
    hot.add(specific)
    assert general.template.bind("Refund order #12") is not None  # both fit...
    (match,) = hot.find_among(["a_general", "b_specific"], "Refund order #12")
    assert match.skill.name == "b_specific" and match.params == {"order_id": "12"}  # ...the specific one wins
    (match,) = hot.find_among(["a_general", "b_specific"], "Refund the shoes")
    assert match.skill.name == "a_general"


def test_long_tasks_cannot_stall_binding_on_free_text_slots() -> None:
    import time

    slots = [Slot("a", "text", "str"), Slot("b", "text", "str"), Slot("c", "text", "str")]
    t = TaskTemplate("Please {a} {b} ship it to {c} instead", slots)
    assert t.bind("Please the red box ship it to 9 Elm St instead") is not None
    task = "Please " + "x " * 4000  # no match: unbounded, this took seconds
    t0 = time.perf_counter()
    assert t.bind(task) is None
    assert time.perf_counter() - t0 < 1.0  # ~1 ms; unbounded it took seconds (a loose bound: 2 shared cores)
    one = TaskTemplate("Ship it to {c} instead", [Slot("c", "text", "str")])
    assert one.bind("Ship it to " + "9 Elm St " * 100 + "instead") is not None  # one free slot: long is fine
