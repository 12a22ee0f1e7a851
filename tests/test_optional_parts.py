"""Items of a list said with or without one more value: "Return from order #7: Mug {'color': 'red'};
Kettle; Mug {'color': 'blue'}; " names the two mugs by their options (the order holds two) and the
kettle by its name alone (it holds one).

Such a list is one list of records whose last part is optional: an item that leaves it out binds
None there, and the element it names is picked by what it said (``pick(order['items'], 'name',
item_name, 'options', item_options)`` with ``item_options`` None picks by the name alone, and still
needs exactly one element). A skill of a list of names widens to it when a run shows such a list,
so the intent keeps one file.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from skillforge._codegen import render_skill, skill_meta
from skillforge._compile import prove_all
from skillforge._learning import spec_from_runs
from skillforge._library import _slot
from skillforge._lifting import Rejected, discover_template, lift
from skillforge._lists import joined_picks
from skillforge._policy import check_policy
from skillforge._records import optional_widened
from skillforge._spec import Param, Ref, Select
from skillforge._template import LIST, Slot, TaskTemplate
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from skillforge.runtime import GuardFailed, pick
from tests.shadowing import Harness
from tests.toolsets import probes_round2 as toolset
from tests.toolsets.safety import Tools

TOOLS = {
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
    "return_items": ToolRef(module="shop", qualname="return_items", params=("order_id", "skus")),
}

NAME = Slot("item_name", "text", "str", None, "Aa||Aa Aa")
OPTIONS = Slot("item_options", "mapping", "dict", "literal", "mapping", optional=True)
ITEMS = Slot("items", LIST, "list", "each:;", None, None, "{item_name} {item_options}", (NAME, OPTIONS))
RECORDS = TaskTemplate("Return from order #{order_id}: {items};", [Slot("order_id", "digits", "str", None, "9"), ITEMS])

CATALOG = [  # (sku, name, options)
    ("MUG-R", "Mug", {"color": "red"}), ("MUG-B", "Mug", {"color": "blue"}),
    ("KET-1", "Kettle", {"size": "L"}), ("BAG-1", "Tote Bag", {"color": "black"}),
    ("LMP-1", "Lamp 2000", {"color": "white"}),
]


def order(order_id: str, held: list[str] | None = None) -> dict[str, Any]:
    held = held or [sku for sku, _n, _o in CATALOG]
    return {"order_id": order_id, "status": "delivered", "items": [
        {"sku": f"{sku}-{order_id}", "name": name, "options": options} for sku, name, options in CATALOG if sku in held
    ]}


def said(items: list[tuple[str, dict[str, Any] | None]]) -> str:
    return "; ".join(name if options is None else f"{name} {options!r}" for name, options in items)


def return_run(order_id: str, items: list[tuple[str, dict[str, Any] | None]], held: list[str] | None = None) -> Trajectory:
    """The agent's run of "Return from order #N: NAME [{options}]; ...;" (each item by what the task says of it)."""
    got = order(order_id, held)
    skus = [next(i["sku"] for i in got["items"] if i["name"] == n and (o is None or i["options"] == o)) for n, o in items]
    return Trajectory(
        task=f"Return from order #{order_id}: {said(items)};",
        calls=[
            Call(tool="get_order", args={"order_id": order_id}, result=got),
            Call(tool="return_items", args={"order_id": order_id, "skus": skus}, result={"ok": True}),
        ],
        outcome=Outcome(ok=True, output=f"Return started for order {order_id}."),
        tools=TOOLS,
    )


RED, BLUE = {"color": "red"}, {"color": "blue"}
MIXED = return_run("7", [("Mug", RED), ("Kettle", None), ("Mug", BLUE)])
NAMES = return_run("6", [("Kettle", None), ("Tote Bag", None)])
NAMES_2 = return_run("8", [("Tote Bag", None)], held=["MUG-R", "BAG-1"])


# -- the template ------------------------------------------------------------------------------------

def test_an_item_binds_with_or_without_its_optional_part() -> None:
    bound = RECORDS.bind("Return from order #7: Mug {'color': 'red'}; Kettle; Mug {'color': 'blue'};")
    assert bound is not None and bound["items"] == [("Mug", RED), ("Kettle", None), ("Mug", BLUE)]
    assert RECORDS.bind("Return from order #7: Kettle;") == {"order_id": "7", "items": [("Kettle", None)]}
    assert RECORDS.bind("Return from order #7: Kettle 12;") is None  # not a mapping where the part goes
    required = TaskTemplate(RECORDS.text, [RECORDS.slots[0], Slot(
        "items", LIST, "list", "each:;", None, None, "{item_name} {item_options}", (NAME, Slot("item_options", "mapping", "dict", "literal", "mapping")))])
    assert required.bind("Return from order #7: Mug {'color': 'red'}; Kettle;") is None  # a part that is not optional is said
    with pytest.raises(ValueError, match="only the last part"):
        TaskTemplate("Move {xs}.", [Slot("xs", LIST, "list", "each:;", None, None, "{a} {b}", (
            Slot("a", "word", "str", optional=True), Slot("b", "digits", "str")))])


def test_an_optional_part_reads_back_from_the_skill_file() -> None:
    spec = lift(MIXED, template=RECORDS)
    assert not isinstance(spec, Rejected), spec
    (meta,) = [m for m in skill_meta(spec)["slots"] if m["name"] == "items"]
    assert meta["parts"][1]["optional"] is True and "optional" not in meta["parts"][0]
    assert _slot(meta) == ITEMS


def test_a_list_of_names_widens_to_records_whose_options_some_items_leave_out() -> None:
    names = discover_template(NAMES)
    assert isinstance(names, TaskTemplate) and "{item_names}" in names.text
    ours = discover_template(MIXED)
    assert isinstance(ours, TaskTemplate) and names.bind(MIXED.task) is None
    wide = optional_widened(names, ours, MIXED.task)
    assert wide is not None and wide.text == names.text
    (items,) = [s for s in wide.slots if s.kind == LIST]
    assert items.item == "{item_name} {item_options}" and [p.optional for p in items.parts] == [False, True]
    assert wide.bind(MIXED.task)["item_names"] == [("Mug", RED), ("Kettle", None), ("Mug", BLUE)]
    assert wide.bind(NAMES.task)["item_names"] == [("Kettle", None), ("Tote Bag", None)]
    # no widening where the template already binds the task, or the extra value is no mapping
    assert optional_widened(names, discover_template(NAMES_2), NAMES_2.task) is None
    numbered = return_run("9", [("Kettle", None)])
    other = numbered.model_copy(update={"task": "Return from order #9: Kettle 2; Tote Bag;"})
    assert optional_widened(names, discover_template(other), other.task) is None


# -- picking by what each item said --------------------------------------------------------------------

def test_pick_by_a_value_not_said_picks_by_the_others() -> None:
    items = order("1")["items"]
    assert pick(items, "name", "Kettle", "options", None)["sku"] == "KET-1-1"
    assert pick(items, "name", "Mug", "options", BLUE)["sku"] == "MUG-B-1"
    with pytest.raises(GuardFailed, match="2 elements"):
        pick(items, "name", "Mug", "options", None)  # the name alone names two: not the learned decision


def test_items_picked_with_and_without_their_options_are_one_expression() -> None:
    seq = Ref(0, ("items",))
    by_both = Select(seq, "name", Param("item_name"), ("sku",), (("options", Param("item_options")),))
    by_name = Select(seq, "name", Param("item_name"), ("sku",))
    assert joined_picks([by_both, by_name, by_both], [set(), {"item_options"}, set()]) == by_both
    # an item that said its options yet was picked without them: not the same expression
    assert joined_picks([by_both, by_name], [set(), set()]) is None
    assert joined_picks([by_both, Select(seq, "sku", Param("item_name"), ("sku",))], [set(), {"item_options"}]) is None


def test_a_mixed_list_is_one_comprehension_picking_each_item_by_what_it_said() -> None:
    spec = spec_from_runs([MIXED], name="return_goods", template=RECORDS)
    assert not isinstance(spec, Rejected), spec
    source = render_skill(spec)
    assert "skus=[pick(order['items'], 'name', item_name, 'options', item_options)['sku'] for item_name, item_options in items]" in source
    assert "items: list[tuple[str, dict | None]]" in source
    assert check_policy(source, "return_goods", {"shop": {"get_order", "return_items"}}) == []
    assert prove_all(source, spec, [MIXED]) is None
    assert prove_all(source, spec, [return_run("9", [("Tote Bag", None), ("Mug", BLUE)])]) is None
    # a mug said by its name alone where the order holds two: no one element, the skill stops
    assert prove_all(source, spec, [return_run("9", [("Mug", None)], held=["MUG-R", "BAG-1"])]) is None  # one mug: served
    two_mugs = return_run("9", [("Tote Bag", None), ("Mug", RED)]).model_copy(
        update={"task": "Return from order #9: Tote Bag; Mug;"})
    assert prove_all(source, spec, [two_mugs]) is not None


def test_runs_of_names_alone_and_a_mixed_run_make_one_skill() -> None:
    wide = optional_widened(discover_template(NAMES), discover_template(MIXED), MIXED.task)
    assert wide is not None
    runs = [NAMES, NAMES_2, MIXED]
    spec = spec_from_runs(runs, name="return_goods", template=wide)
    assert not isinstance(spec, Rejected), spec
    source = render_skill(spec)
    assert "'options', item_options)['sku'] for item_name, item_options in item_names]" in source
    assert prove_all(source, spec, runs) is None
    # the runs of names alone, without the mixed one, pick by the name alone: no options part is made up
    alone = spec_from_runs([NAMES, NAMES_2], name="return_goods", template=wide)
    assert not isinstance(alone, Rejected)
    assert "pick(order['items'], 'name', item_name)['sku'] for item_name, item_options in item_names]" in render_skill(alone)


# -- a forge ----------------------------------------------------------------------------------------

def return_agent(t: dict[str, Any]):
    """"Return from order #N: NAME [{options}]; ...;": each item by its name, and its options where said."""

    def agent(task: str, transcript: list | None = None) -> str:
        tools = Tools(t, transcript)
        m = re.fullmatch(r"Return from order #(\d+): (.+);", task)
        if m is None:
            return "Sorry, I cannot help with that."
        order_id, items = m.group(1), []
        for piece in m.group(2).split("; "):
            name, _, options = piece.partition(" {")
            items.append((name, ast.literal_eval("{" + options) if options else None))
        got = tools.get_order(order_id=order_id)
        skus = []
        for name, options in items:
            found = [i for i in got["items"] if i["name"] == name and (options is None or i["options"] == options)]
            if len(found) != 1:
                return f"Which {name} of order {order_id} do you mean?"
            skus.append(found[0]["sku"])
        tools.return_items(order_id=order_id, skus=skus)
        return f"Return started for order {order_id}."

    return agent


def world(order_id: str, held: list[str] | None = None) -> dict[str, Any]:
    return {"orders": {order_id: order(order_id, held)}}


def test_a_forge_keeps_one_file_for_lists_of_names_and_lists_that_say_options(tmp_path: Path) -> None:
    harness = Harness(toolset)
    forge = harness.forge(tmp_path, return_agent)
    harness.learn(forge, NAMES.task, world("6"))
    harness.learn(forge, MIXED.task, world("7"))
    (skill,) = forge.skills()
    assert len(skill.runs) == 2 and "{item_names}" in skill.template.text
    served = harness.check(forge, "Return from order #9: Tote Bag; Mug {'color': 'blue'};", world("9"))
    assert served.result.source == "skill"
    served.assert_as_agent()
    # a mug said by its name alone where the order holds two: the agent asks which, the skill hands over
    asked = harness.check(forge, "Return from order #10: Kettle; Mug;", world("10"))
    assert asked.result.source != "skill" and asked.writes == []
    asked.assert_as_agent()


def test_a_list_of_names_of_a_new_shape_joins_the_skill_whose_items_may_say_options(tmp_path: Path) -> None:
    # the skill's items became records with optional options; a later list of names it does not bind
    # (a name with a number) widens that skill, not a second file beside it
    harness = Harness(toolset)
    forge = harness.forge(tmp_path, return_agent)
    harness.learn(forge, MIXED.task, world("7"))
    harness.learn(forge, NAMES.task, world("6"))
    (skill,) = forge.skills()
    assert skill.bind("Return from order #11: Lamp 2000; Kettle;") is None
    harness.learn(forge, "Return from order #11: Lamp 2000; Kettle;", world("11"))
    (skill,) = forge.skills()
    assert len(skill.runs) == 3
    served = harness.check(forge, "Return from order #12: Mug {'color': 'red'}; Lamp 2000;", world("12"))
    assert served.result.source == "skill"
