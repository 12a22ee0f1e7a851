"""An item named twice in one request, and facts of a written item picked by its name alone.

"For #W7, exchange Kettle {...} to {...}; Kettle {...} to {...}; thanks." names two items of one
product, and the agent reads that product once: the reads of a list's items are one call per
distinct argument the items ask for (``distinct``), so the run is a run of the list skill, not a
file of its own. And the order a write returns may hold two items of a name where the runs held
one: a fact of the element the write changed, picked by its name alone since its options are no
longer those the task says, is no guard (it would stop the skill after its write).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillforge._codegen import render_skill
from skillforge._compile import prove_all
from skillforge._exceptions import GuardFailed
from skillforge._lifting import Rejected, discover_template, lift
from skillforge._policy import check_policy
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from skillforge.runtime import distinct
from tests.test_records import CATALOGUE, PRODUCT_ID, PRODUCT_OF, TOOLS, exchange_run, learned, product
from tests.toolsets import swaps
from tests.toolsets._shadowing import open_world, shadowed

SHOP = {"shop": {"get_order", "get_product", "exchange"}}


def once(run: Trajectory) -> Trajectory:
    """``run`` as an agent makes it that reads each product once, however many of its items are named."""
    seen: list[Any] = []
    calls = []
    for c in run.calls:
        if c.tool == "get_product":
            if c.args in seen:
                continue
            seen.append(c.args)
        calls.append(c)
    return run.model_copy(update={"calls": calls})


TWICE = once(exchange_run("7", [("4001", "4002"), ("4003", "4002")]))  # two kettles: one read of the kettle
DISTINCT = exchange_run("1", [("4001", "4002"), ("5001", "5002")])


# -- an item named twice: one read per distinct argument, on runs alone ------------------------------


def test_two_items_of_one_product_read_once_are_one_list_and_one_map_step() -> None:
    assert [c.tool for c in TWICE.calls] == ["get_order", "get_product", "exchange"]
    spec, source = learned([TWICE])
    assert spec.template == "For #{order_id}, exchange {items}; thanks."
    assert spec.steps[1].each == ("items", ("item_name", "item_options", "new_item_ids_changes"))
    assert (
        "    product = [\n        get_product(product_id=product_id)\n        for product_id in distinct([pick(order['items'], "
        "'name', item_name, 'options', item_options)['product_id'] for item_name, item_options, new_item_ids_changes in items])\n    ]"
    ) in source
    assert check_policy(source, "exchange_items", SHOP) == []
    # the same skill serves three items of one product, items of distinct products (a read each), one item
    three = once(exchange_run("8", [("4002", "4001"), ("4001", "4002"), ("4003", "4001")]))
    apart = exchange_run("4", [("4001", "4002"), ("6001", "6002")])
    assert prove_all(source, spec, [three, apart, exchange_run("3", [("4003", "4001")])]) is None


def test_runs_of_distinct_products_and_of_one_product_named_twice_make_one_skill() -> None:
    spec, source = learned([DISTINCT, TWICE])
    assert len(spec.runs) == 2 and spec.template == "For #{order_id}, exchange {items}; thanks."
    assert "for product_id in distinct([" in source


def test_reads_not_in_the_order_the_items_first_ask_for_them_are_no_map_step() -> None:
    # kettle, lamp, kettle: the products are asked for kettle first; a run that read the lamp first is
    # not one call per distinct argument in the items' order, so the reads stay calls of their own
    kettle, lamp = (Call(tool="get_product", args={"product_id": PRODUCT_ID[n]}, result=product(n)) for n in ("Kettle", "Desk Lamp"))
    run = exchange_run("9", [("4001", "4002"), ("5001", "5002"), ("4003", "4002")])
    assert [c.args for c in once(run).calls[1:3]] == [kettle.args, lamp.args]
    swapped = run.model_copy(update={"calls": [run.calls[0], lamp, kettle, run.calls[-1]]})
    assert isinstance(lift(swapped, template=discover_template(once(run))), Rejected)  # not a run of the list skill
    spec = lift(swapped)
    assert not isinstance(spec, Rejected) and "{items}" not in spec.template
    assert all(st.each is None for st in spec.steps)
    assert prove_all(render_skill(spec), spec, [swapped]) is None


def test_a_read_repeated_with_the_same_argument_is_not_made_once() -> None:
    # an agent that reads the kettle twice for two kettles: the skill must make the calls it made,
    # so those reads are no map step of distinct reads (and the skill it learns still proves)
    run = exchange_run("7", [("4001", "4002"), ("4003", "4002")])
    assert [c.tool for c in run.calls] == ["get_order", "get_product", "get_product", "exchange"]
    spec = lift(run)
    assert not isinstance(spec, Rejected)
    assert all(st.each is None for st in spec.steps)
    assert prove_all(render_skill(spec), spec, [run]) is None


def test_distinct_keeps_the_first_of_equal_elements_and_the_policy_admits_it_only_over_a_comprehension() -> None:
    assert distinct(["9100", "9200", "9100", 9100]) == ["9100", "9200", 9100]
    assert distinct([("a", {"x": 1}), ("a", {"x": 1}), ("a", {"x": 2})]) == [("a", {"x": 1}), ("a", {"x": 2})]
    with pytest.raises(GuardFailed, match="expected a list"):
        distinct("abc")
    head = "from shop import get_product\nfrom skillforge.runtime import distinct\n\ndef f(names: list[str]):\n"
    ok = head + "    return [get_product(product_id=p) for p in distinct([n for n in names])]\n"
    assert check_policy(ok, "f", {"shop": {"get_product"}}) == []
    for body in ("    return [get_product(product_id=p) for p in distinct(names)]\n",  # not a comprehension
                 "    return [get_product(product_id=p) for p in distinct([n for n in names if n])]\n",
                 "    return [get_product(product_id=p) for p in sorted([n for n in names])]\n"):
        assert any(v.rule == "comprehension" for v in check_policy(head + body, "f", {"shop": {"get_product"}})), body


# -- facts of the element a write changed, picked by its name alone ---------------------------------

MODIFY_TOOLS = {**TOOLS, "modify": ToolRef(module="shop", qualname="modify", params=("order_id", "item_ids", "new_item_ids"))}


def modify_run(order_id: str, swapped: list[tuple[str, str]], *, first: list[str] = (), status: str = "pending (modified)") -> Trajectory:
    """"For #order, modify NAME {options} to {change}; ...": the write returns the order as changed."""
    held = list(first) + [old for old, _new in swapped]

    def item(v: str) -> dict[str, Any]:
        return {"name": PRODUCT_OF[v], "item_id": v, "product_id": PRODUCT_ID[PRODUCT_OF[v]], "price": 10.5, "options": CATALOGUE[PRODUCT_OF[v]][v]}

    new = dict(swapped)
    said = []
    for old, nw in swapped:
        before, after = CATALOGUE[PRODUCT_OF[old]][old], CATALOGUE[PRODUCT_OF[nw]][nw]
        said.append(f"{PRODUCT_OF[old]} {before!r} to {({k: v for k, v in after.items() if before.get(k) != v})!r}")
    return Trajectory(
        task=f"For #{order_id}, modify {'; '.join(said)}; thanks.",
        calls=[
            Call(tool="get_order", args={"order_id": order_id}, result={"order_id": order_id, "status": "pending", "items": [item(v) for v in held]}),
            *once_each(swapped),
            Call(tool="modify", args={"order_id": order_id, "item_ids": [o for o, _n in swapped], "new_item_ids": [n for _o, n in swapped]},
                 result={"order_id": order_id, "status": status, "items": [item(new.get(v, v)) for v in held]}),
        ],
        outcome=Outcome(ok=True, output="Done."),
        tools=MODIFY_TOOLS,
    )


def once_each(swapped: list[tuple[str, str]]) -> list[Call]:
    names = list(dict.fromkeys(PRODUCT_OF[old] for old, _new in swapped))
    return [Call(tool="get_product", args={"product_id": PRODUCT_ID[n]}, result=product(n)) for n in names]


@pytest.mark.parametrize("swapped", [[("4001", "4003")], [("4001", "4003"), ("5001", "5002")]], ids=["one item", "a list"])
def test_facts_of_the_element_a_write_changed_picked_by_its_name_alone_are_no_guards(swapped: list[tuple[str, str]]) -> None:
    spec, source = learned([modify_run("1", swapped, first=["6001"])])  # one kettle in the order
    after = source.split("modify_result = modify(", 1)[1]
    assert "pick(modify_result['items'], 'name', item_name)" not in after
    assert "require(modify_result['status'] == 'pending (modified)'" in after  # what the write returned, as a whole
    assert "item_name in values(modify_result, 'items', '*', 'name')" in after
    # the order held another kettle: after the write, two kettles bear the name the task gives
    among = modify_run("2", swapped, first=["4002"])
    assert prove_all(source, spec, [among]) is None
    # before the write, the element the task names is still picked by all the task says of it
    assert "pick(order['items'], 'name', item_name, 'options', item_options)" in source.split("modify_result = ", 1)[0]
    assert prove_all(source, spec, [modify_run("3", swapped, first=["6001"], status="on hold")]) is not None


def test_facts_of_an_element_the_write_left_as_the_task_says_it_stay_guards() -> None:
    # "to {}": the lamp is still as the task says it after the write, picked by its name and options
    spec, source = learned([modify_run("1", [("5001", "5001")], first=["6001"])])
    after = source.split("modify_result = modify(", 1)[1]
    assert "pick(modify_result['items'], 'name', item_name, 'options', item_options)" in after


# -- a Forge on a real SQLite shop, shadowed by its agent --------------------------------------------


@pytest.fixture
def shop(tmp_path: Path) -> Any:
    forge = open_world(swaps, tmp_path)
    yield forge, tmp_path
    swaps.TOOLBOX.clear()


def test_a_run_naming_an_item_twice_is_a_run_of_the_list_skill_that_serves_the_others(shop: Any) -> None:
    forge, tmp = shop
    twice = "For #W3, modify Kettle {'color': 'blue', 'size': 'S'} to {'color': 'red'}; Kettle {'color': 'blue', 'size': 'L'} to {'color': 'red'}; thanks."
    result, same = shadowed(swaps, forge, tmp, twice)
    assert result.source == "agent" and result.learned and same
    (skill,) = forge.skills()
    assert "{items}" in skill.template.text
    # items of two products, read once each: a run of the same skill (its guards widened by it)
    distinct_items = "For #W1, modify Kettle {'color': 'red', 'size': 'S'} to {'color': 'blue'}; Lamp {'color': 'red'} to {'color': 'white'}; thanks."
    result, same = shadowed(swaps, forge, tmp, distinct_items)
    assert result.source in ("skill", "skill+agent") and same
    assert len(forge.skills()) == 1
    # the order holds two kettles and one is changed: after the write the name alone picks two
    among = "For #W2, modify Kettle {'color': 'blue', 'size': 'L'} to {'color': 'red'}; Lamp {'color': 'white'} to {'color': 'red'}; thanks."
    result, same = shadowed(swaps, forge, tmp, among)
    assert (result.source, same) == ("skill", True), (result.source, result.handover)
    sold_out = "For #W4, modify Kettle {'color': 'blue', 'size': 'S'} to {'color': 'red'}; Lamp {'color': 'white'} to {'color': 'green'}; thanks."
    result, same = shadowed(swaps, forge, tmp, sold_out)
    assert result.source != "skill" and same  # a sold-out variant: the agent's decision, never a replay


def test_facts_of_an_element_a_write_changed_stay_guards_where_another_write_follows() -> None:
    # what a later write does may hang on the changed element: only the last write's result is exempt
    run = modify_run("1", [("4001", "4003")], first=["6001"])
    notify = Call(tool="notify", args={"order_id": "1"}, result={"sent": True})
    tools = {**MODIFY_TOOLS, "notify": ToolRef(module="shop", qualname="notify", params=("order_id",))}
    spec, source = learned([run.model_copy(update={"calls": [*run.calls, notify], "tools": tools})])
    between = source.split("modify_result = modify(", 1)[1].split("notify(", 1)[0]
    assert "item_2 = pick(modify_result['items'], 'name', item_name)" in between and "require(item_2['price'] > 0" in between
