"""Lists of records on runs alone: "exchange Kettle {...} to {...}; Lamp {...} to {...}" names two
items, each by a name, its options and a change, and the run reads each item's product once.

The template keeps one slot for the whole list (each item a template of its own), the reads of
each item's product are one step over the list (a *map step*), and the write's lists are
comprehensions over it: the skill serves one item or five, and stops where one item differs
from what the runs showed.
"""

from __future__ import annotations

from typing import Any

import pytest

from skillforge._codegen import skill_meta
from skillforge._compile import prove_all
from skillforge._library import _slot
from skillforge._lifting import Rejected, discover_template, lift
from skillforge._policy import check_policy
from skillforge._records import fold, folded_as, map_blocks, record_template
from skillforge._template import LIST, Slot, TaskTemplate
from tests.proven import proven
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory

TOOLS = {
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
    "get_product": ToolRef(module="shop", qualname="get_product", read=True, params=("product_id",)),
    "exchange": ToolRef(module="shop", qualname="exchange", params=("order_id", "item_ids", "new_item_ids")),
}

CATALOGUE = {  # product → its variants (options → variant id)
    "Kettle": {"4001": {"color": "red", "size": "S"}, "4002": {"color": "blue", "size": "S"}, "4003": {"color": "blue", "size": "L"}},
    "Desk Lamp": {"5001": {"color": "red"}, "5002": {"color": "white"}},
    "Shelf": {"6001": {"height": "3 ft"}, "6002": {"height": "5 ft"}},
}
PRODUCT_OF = {v: name for name, vs in CATALOGUE.items() for v in vs}
PRODUCT_ID = {"Kettle": "9100", "Desk Lamp": "9200", "Shelf": "9300"}


def product(name: str, unavailable: frozenset[str] = frozenset()) -> dict[str, Any]:
    return {
        "name": name, "product_id": PRODUCT_ID[name],
        "variants": {v: {"item_id": v, "options": o, "available": v not in unavailable} for v, o in CATALOGUE[name].items()},
    }


def exchange_run(order_id: str, swaps: list[tuple[str, str]], *, extra: list[str] = (), unavailable: frozenset[str] = frozenset(),
                 sep: str = "; ", first: list[str] = ()) -> Trajectory:
    """The agent's run of "For #order, exchange NAME {options} to {change}; ... ." (``swaps``: old variant → new;
    ``first`` and ``extra``: other items the order holds, before and after them)."""
    held = list(first) + [old for old, _new in swaps] + list(extra)
    order = {"order_id": order_id, "status": "delivered", "items": [
        {"name": PRODUCT_OF[v], "item_id": v, "product_id": PRODUCT_ID[PRODUCT_OF[v]],
         "options": CATALOGUE[PRODUCT_OF[v]][v]} for v in held
    ]}
    said = []
    for old, new in swaps:
        before, after = CATALOGUE[PRODUCT_OF[old]][old], CATALOGUE[PRODUCT_OF[new]][new]
        change = {k: v for k, v in after.items() if before.get(k) != v}
        said.append(f"{PRODUCT_OF[old]} {before!r} to {change!r}")
    return Trajectory(
        task=f"For #{order_id}, exchange {sep.join(said)}; thanks.",
        calls=[
            Call(tool="get_order", args={"order_id": order_id}, result=order),
            *(Call(tool="get_product", args={"product_id": PRODUCT_ID[PRODUCT_OF[old]]},
                   result=product(PRODUCT_OF[old], unavailable)) for old, _new in swaps),
            Call(tool="exchange", args={"order_id": order_id, "item_ids": [o for o, _n in swaps], "new_item_ids": [n for _o, n in swaps]},
                 result={"ok": True}),
        ],
        outcome=Outcome(ok=True, output="Done."),
        tools=TOOLS,
    )


TWO = exchange_run("1", [("4001", "4002"), ("5001", "5002")])
THREE = exchange_run("2", [("4002", "4003"), ("6001", "6002"), ("5002", "5001")])
ONE = exchange_run("3", [("6002", "6001")])


def learned(runs: list[Trajectory]) -> tuple[Any, str]:
    return proven(runs, 'exchange_items')


def test_groups_of_slots_side_by_side_are_one_list_of_records() -> None:
    template = discover_template(TWO)
    assert isinstance(template, TaskTemplate)
    assert template.text == "For #{order_id}, exchange {items}; thanks."
    (items,) = [s for s in template.slots if s.kind == LIST]
    assert items.item == "{item_name} {item_options} to {new_item_ids_changes}" and items.transform == "each:;"
    bound = template.bind(THREE.task)
    assert bound is not None and [name for name, _o, _c in bound["items"]] == ["Kettle", "Shelf", "Desk Lamp"]
    assert bound["items"][1] == ("Shelf", {"height": "3 ft"}, {"height": "5 ft"})
    assert template.bind(ONE.task) is not None
    assert template.bind("For #4, exchange Kettle {'color': 'red'} to {}; Shelf to {}; thanks.") is None  # an item unlike the rest
    assert template.bind("For #4, exchange Kettle {'color': 'red'} to {}. Shelf {'a': 'b'} to {}; thanks.") is None  # not a list
    # what the SKILL literal says of the slot reads back as the same slot
    spec = lift(TWO, template=template)
    assert not isinstance(spec, Rejected)
    (meta,) = [m for m in skill_meta(spec)["slots"] if m["name"] == "items"]
    assert _slot(meta) == items


def test_no_list_of_records_where_the_groups_are_not_written_as_a_list() -> None:
    slots = [Slot("a", "word", "str"), Slot("b", "digits", "str"), Slot("a_2", "word", "str"), Slot("b_2", "digits", "str")]
    assert record_template(TaskTemplate("Move {a} {b}; {a_2} {b_2}.", slots)) is not None
    assert record_template(TaskTemplate("Move {a} {b}. Then {a_2} {b_2}.", slots)) is None  # two sentences
    assert record_template(TaskTemplate("Move {a} to {b}; {a_2} from {b_2}.", slots)) is None  # not the same item text
    mixed = [Slot("a", "word", "str"), Slot("b", "digits", "str"), Slot("a_2", "word", "str"), Slot("b_2", "word", "str")]
    assert record_template(TaskTemplate("Move {a} {b}; {a_2} {b_2}.", mixed)) is None  # the parts differ in kind
    with pytest.raises(ValueError, match="must name each of its parts"):
        TaskTemplate("Move {xs}.", [Slot("xs", LIST, "list", "each:;", None, None, "{a} {b}", (Slot("a", "word", "str"),))])


def test_the_reads_of_each_item_are_one_map_step_and_the_write_a_comprehension() -> None:
    spec, source = learned([TWO])
    step = spec.steps[1]
    assert step.tool == "get_product" and step.each == ("items", ("item_name", "item_options", "new_item_ids_changes"))
    assert len(spec.steps) == 3  # get_order, the map step, exchange
    assert (
        "product = [\n        get_product(product_id=product_id)\n        for product_id in distinct([pick(order['items'], 'name', "
        "item_name, 'options', item_options)['product_id'] for item_name, item_options, new_item_ids_changes in items])\n    ]"
    ) in source
    call = source.split("exchange_result = exchange(", 1)[1]
    assert "new_item_ids=[pick(pick(product, 'name', item_name)['variants'], 'options', updated(" in call
    assert "for item_name, item_options, new_item_ids_changes in items]" in call
    assert "items: list[tuple[str, dict, dict]]" in source
    # the variant each item asks for must be available, as it was for every item learned
    assert "['available'] is True for item_name, item_options, new_item_ids_changes in items)" in source
    assert check_policy(source, "exchange_items", {"shop": {"get_order", "get_product", "exchange"}}) == []


def test_a_skill_of_two_items_replays_one_or_three_and_stops_where_an_item_differs() -> None:
    spec, source = learned([TWO])
    assert prove_all(source, spec, [THREE]) is None  # the same decision for three items
    assert prove_all(source, spec, [ONE]) is None  # and for one
    sold_out = exchange_run("5", [("4001", "4002"), ("6001", "6002")], unavailable=frozenset({"6002"}))  # the agent's calls, for the world
    assert prove_all(source, spec, [sold_out]) is not None  # one item's new variant is not available: hand over


def test_runs_of_one_two_and_three_items_make_one_skill() -> None:
    spec, source = learned([TWO, ONE, THREE])
    assert len(spec.runs) == 3 and sum(1 for s in spec.steps if s.each) == 1
    assert prove_all(source, spec, [exchange_run("6", [("5002", "5001"), ("4003", "4001")], extra=["6001"])]) is None


def test_an_item_asked_for_as_it_is_and_one_changed_are_one_list() -> None:
    # "Shelf {...} to {}": the new item is the old one; the same expression as for a changed item
    same = exchange_run("8", [("6001", "6001"), ("4001", "4002")])
    spec, source = learned([same])
    assert sum(1 for s in spec.steps if s.each) == 1 and "for item_name, item_options, new_item_ids_changes in items]" in source
    assert prove_all(source, spec, [exchange_run("9", [("4002", "4003"), ("6002", "6001")]), ONE]) is None  # one-word names, as learned


def test_items_that_say_the_same_value_are_still_one_list() -> None:
    # two items "to {}": each its own mention (not the first one's twice), so the three groups are one list
    twice = exchange_run("13", [("4001", "4001"), ("5001", "5001"), ("6001", "6002")])
    assert twice.task.count("to {}") == 2
    spec, source = learned([twice])
    assert spec.template == "For #{order_id}, exchange {items}; thanks." and "{{}}" not in spec.template
    assert prove_all(source, spec, [TWO, ONE, THREE]) is None


def test_an_item_named_among_others_of_its_product_is_picked_by_what_the_task_says() -> None:
    # the order holds the red kettle first; the blue one is exchanged: its product id is the red
    # one's too, so where the product read's argument came from is the item the task names
    second = exchange_run("11", [("4002", "4003"), ("5001", "5002")], first=["4001"])
    spec, source = learned([second])
    assert "for product_id in distinct([pick(order['items'], 'name', item_name, 'options', item_options)['product_id'] for" in source
    assert "by position" not in source
    assert prove_all(source, spec, [exchange_run("12", [("4001", "4002"), ("5002", "5001")], first=["4003"])]) is None


def test_items_that_differ_in_a_fact_of_their_own_are_not_one_list() -> None:
    # the lamp's new variant is not available, the kettle's is: the run treated items that differ alike
    mixed = exchange_run("7", [("4001", "4002"), ("5001", "5002")], unavailable=frozenset({"5002"}))
    template = discover_template(mixed)
    assert isinstance(template, TaskTemplate) and "{items}" not in template.text  # one slot per value
    assert "{item_name_2}" in template.text


def test_a_list_takes_what_a_skill_of_one_item_took() -> None:
    from skillforge._records import records_widened

    # the one-item skill saw hyphenated names and another id shape; the list's parts widen to take them
    records = record_template(TaskTemplate(
        "For #{order_id}, exchange {item_name} {item_options} to {changes}; {item_name_2} {item_options_2} to {changes_2}; thanks.",
        [Slot("order_id", "digits", "str", None, "9"), Slot("item_name", "word", "str", None, "Aa"),
         Slot("item_options", "mapping", "dict", "literal", "mapping"), Slot("changes", "mapping", "dict", "literal", "mapping"),
         Slot("item_name_2", "word", "str", None, "Aa"), Slot("item_options_2", "mapping", "dict", "literal", "mapping"),
         Slot("changes_2", "mapping", "dict", "literal", "mapping")],
    ))
    assert records is not None
    single = TaskTemplate(
        "For #{order_id}, exchange {item_name} {item_options} to {changes}; thanks.",
        [Slot("order_id", "digits", "str", None, "9"), Slot("item_name", "text", "str", None, "A-Aa"),
         Slot("item_options", "mapping", "dict", "literal", "mapping"), Slot("changes", "mapping", "dict", "literal", "mapping")],
    )
    task = "For #7, exchange T-Shirt {'size': 'S'} to {'size': 'M'}; thanks."
    assert single.bind(task) is not None and records.bind(task) is None
    wide = records_widened(records, single)
    assert wide is not None and wide.text == records.text
    assert wide.bind(task) == {"order_id": "7", "items": [("T-Shirt", {"size": "S"}, {"size": "M"})]}
    assert wide.bind("For #8, exchange Kettle {'a': 'b'} to {}; Lamp {'c': 'd'} to {}; thanks.") is not None
    # a plain list takes a single item's shape; another text does not widen
    listed = TaskTemplate("Return #{order_id}: {item_names}; thanks.", [
        Slot("order_id", "digits", "str", None, "9"), Slot("item_names", LIST, "list", "each:;", "Aa")])
    one = TaskTemplate("Return #{order_id}: {item_name}; thanks.", [
        Slot("order_id", "digits", "str", None, "9"), Slot("item_name", "text", "str", None, "Aa Aa")])
    both = records_widened(listed, one)
    assert both is not None and both.bind("Return #3: Water Bottle; Kettle; thanks.") == {"order_id": "3", "item_names": ["Water Bottle", "Kettle"]}
    other = TaskTemplate("Cancel #{order_id}: {item_name}; thanks.", list(one.slots))
    assert records_widened(listed, other) is None and records_widened(records, other) is None


def test_folding_makes_step_k_call_k() -> None:
    assert map_blocks(THREE, 3) == [(0, 1), (1, 3)] and map_blocks(THREE, 2) == [(0, 1)] and map_blocks(ONE, 1) == [(0, 1), (1, 1)]
    folded = fold(THREE, [(1, 3)])
    assert [c.tool for c in folded.calls] == ["get_order", "get_product", "exchange"]
    assert [p["name"] for p in folded.calls[1].result] == ["Kettle", "Shelf", "Desk Lamp"]
    spec = lift(THREE, template=discover_template(TWO))
    assert not isinstance(spec, Rejected)
    again = folded_as(THREE, [s.each for s in spec.steps], spec.examples)
    assert again == folded and spec.runs == (THREE.hash,)  # the run is known by its own calls
    one = lift(ONE, template=discover_template(TWO))
    assert not isinstance(one, Rejected) and one.steps[1].each is not None  # a map step over one item
    assert folded_as(ONE, [s.each for s in one.steps], one.examples).calls[1].result == [product("Shelf")]
    # three items said, one call: folded as the items asking for one product (whether they do is the lift's to say)
    assert folded_as(ONE, [s.each for s in spec.steps], spec.examples).calls[1].result == [product("Shelf")]
    assert folded_as(THREE, [s.each for s in one.steps], one.examples) == THREE  # one item said, three calls: not that skill's run


def test_policy_takes_a_records_parts_only_over_a_parameter() -> None:
    ok = "def f(items: list[tuple[str, dict]]):\n    return [a for a, b in items]\n"
    assert check_policy(ok, "f", {}) == []
    bad = "from shop import get_order\n\ndef f(order_id: str):\n    order = get_order(order_id=order_id)\n    return [a for a, b in order['items']]\n"
    assert any(v.rule == "comprehension" for v in check_policy(bad, "f", {"shop": {"get_order"}}))


def test_a_skill_of_one_item_is_folded_into_the_skill_of_a_list_that_widens_to_take_it(tmp_path: Any) -> None:
    # "Desk Lamp" (two words) learned alone, then a list of one-word items: one skill file that
    # takes both, not a file per shape of list
    from tests.test_probes_round2 import check, forge_for, learn, orders

    catalog = [("MUG-1", "Mug"), ("LAMP-2", "Desk Lamp"), ("KET-3", "Kettle"), ("BAG-4", "Tote Bag")]

    def world(order_id: str) -> dict[str, Any]:
        return orders(**{order_id: {"status": "delivered", "items": [
            {"sku": f"{sku}-{order_id}", "name": name, "status": "delivered"} for sku, name in catalog]}})

    forge = forge_for(tmp_path)
    learn(forge, "Return from order #5: Desk Lamp; ", world("5"))
    learn(forge, "Return from order #6: Mug; Kettle; ", world("6"))
    assert len(forge.skills()) == 1
    (skill,) = forge.skills()
    assert len(skill.runs) == 2 and "{item_names}" in skill.template.text
    served = check(forge, "Return from order #7: Tote Bag; Mug; ", world("7"))
    assert served.result.source == "skill"


def test_a_change_of_every_option_is_no_description_of_the_changed_item() -> None:
    # the write returns the order as changed: where every option changed, the item's new options
    # equal the change asked for, a coincidence no guard may pick the item by; so runs that changed
    # all options and some make one skill
    def changed(order_id: str, old: str, new: str) -> Trajectory:
        run = exchange_run(order_id, [(old, new)])
        after = {"order_id": order_id, "items": [
            {"name": PRODUCT_OF[new], "item_id": new, "options": CATALOGUE[PRODUCT_OF[new]][new]}]}
        calls = [*run.calls[:-1], run.calls[-1].model_copy(update={"result": after})]
        return run.model_copy(update={"calls": calls})

    every = changed("21", "4001", "4003")  # red S -> blue L: the change is the new options
    some = changed("22", "4002", "4003")  # blue S -> blue L: only the size
    assert "to {'color': 'blue', 'size': 'L'}" in every.task
    spec, source = learned([every, some])
    assert len(spec.runs) == 2
    assert "'options', new_item_ids_changes)" not in source.split("exchange_result = ", 1)[1]


def after_write(run: Trajectory) -> Trajectory:
    """``run`` with its write returning the order as changed (each item's price too)."""
    order = run.calls[0].result
    swaps = dict(zip(run.calls[-1].args["item_ids"], run.calls[-1].args["new_item_ids"], strict=True))
    changed = {**order, "items": [
        {**it, "item_id": swaps.get(it["item_id"], it["item_id"]), "price": 10.0,
         "options": CATALOGUE[it["name"]][swaps.get(it["item_id"], it["item_id"])]} for it in order["items"]]}
    return run.model_copy(update={"calls": [*run.calls[:-1], run.calls[-1].model_copy(update={"result": changed})]})


def test_an_item_that_is_one_of_two_of_its_name_after_the_write_still_joins_the_list() -> None:
    # the write returns the order as changed; in the second run the order held another kettle, so
    # after the write two items bear the name the task gives: a fact of "the" kettle there is no
    # fact of one element (as for a fact a single task value picks), and the runs make one skill
    two = after_write(exchange_run("1", [("4001", "4002"), ("5001", "5002")]))
    among = after_write(exchange_run("11", [("4002", "4003")], first=["4001"]))
    spec, source = learned([two, among])
    assert len(spec.runs) == 2 and "for item_name, item_options, new_item_ids_changes in items]" in source
    # where every run's item is the one of its name too: a fact of the element the write changed
    # is read after the write, by its name alone, and an order may hold two of that name
    # (tests/test_named_twice.py); what the write returned is still guarded as a whole
    alone, alone_source = learned([two, after_write(exchange_run("2", [("4002", "4003"), ("6001", "6002")]))])
    assert "['price'] > 0 for item_name" not in alone_source and "['price'] > 0 for item_name" not in source
    assert "require(len(exchange_result['items']) > 0" in alone_source


def test_a_run_of_one_item_learned_without_a_template_joins_the_list_skill_that_binds_its_task(tmp_path: Any) -> None:
    # a request cut from a message of several is learned without the template that bound it (no
    # skill served it whole): where a list skill binds its task, the run widens that skill
    # instead of starting a second file of one intent under the task's own template
    from skillforge._compile import Compiled
    from tests.test_probes_round2 import forge_for, learn, orders

    catalog = [("MUG-1", "Mug"), ("KET-3", "Kettle"), ("BAG-4", "Bag")]

    def world(order_id: str) -> dict[str, Any]:
        return orders(**{order_id: {"status": "delivered", "items": [
            {"sku": f"{sku}-{order_id}", "name": name, "status": "delivered"} for sku, name in catalog]}})

    forge = forge_for(tmp_path)
    learn(forge, "Return from order #6: Mug; Kettle; ", world("6"))
    alone = forge_for(tmp_path, "alone")  # the same run, as a forge with no skill learns it
    learn(alone, "Return from order #5: Bag; ", world("5"))
    (single,) = alone.skills()
    assert "{item_names}" not in single.template.text
    verdict = forge.learn(alone.library.load_run(single.runs[0]))
    assert isinstance(verdict, Compiled), verdict
    (skill,) = forge.skills()
    assert len(skill.runs) == 2 and "{item_names}" in skill.template.text


def test_an_item_asked_for_as_it_is_beside_one_changed_is_one_list_where_the_write_returns_the_order() -> None:
    # the write returns the order as changed: the lamp asked for "to {}" is still there as the task
    # describes it (name and options), the kettle is not (its options changed). A fact read of an
    # item's element picked by its options holds for the one and reads nothing for the other: no
    # difference between the items the run treated alike, so the items are one list
    run = after_write(exchange_run("31", [("4001", "4002"), ("5001", "5001")]))
    spec, source = learned([run])
    assert spec.template == "For #{order_id}, exchange {items}; thanks."
    assert prove_all(source, spec, [after_write(exchange_run("32", [("6001", "6002"), ("5002", "5002"), ("4002", "4003")]))]) is None
    sold_out = after_write(exchange_run("33", [("4001", "4002"), ("6001", "6002")], unavailable=frozenset({"6002"})))
    assert prove_all(source, spec, [sold_out]) is not None  # an item unlike the learned ones still stops the skill


def test_items_asked_for_as_they_are_and_items_changed_make_one_skill_where_the_write_returns_the_order() -> None:
    # in the first run every item is asked for "to {}": the order the write returns still holds each
    # as the task describes it, so facts of it are read there; in the second the write changed the
    # items, and no element is as the task describes it. Nothing written hangs on what the last write
    # returned: those facts are no guards, and the runs make one skill
    kept = after_write(exchange_run("41", [("4001", "4001"), ("6001", "6001")]))
    changed = after_write(exchange_run("42", [("6002", "6001"), ("4002", "4003")]))
    spec, source = learned([kept, changed])
    assert len(spec.runs) == 2 and spec.template == "For #{order_id}, exchange {items}; thanks."
    assert prove_all(source, spec, [after_write(exchange_run("43", [("6001", "6002")]))]) is None
