"""Lists the task writes item by item: one list parameter, a comprehension, facts of every item (on runs alone)."""

from __future__ import annotations


import pytest

from skillforge._codegen import render_skill
from skillforge._compile import prove_all
from skillforge._learning import spec_from_runs
from skillforge._lifting import Rejected, discover_template, lift
from skillforge._runchecks import quoted_item
from skillforge._policy import check_policy
from skillforge._spec import Const, Each, ListOf, Param, Select
from skillforge._template import Slot, TaskTemplate
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory

TOOLS = {
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
    "return_items": ToolRef(module="shop", qualname="return_items", params=("order_id", "item_ids")),
}
CATALOG = ["Grill", "Desk Lamp", "Tablet", "Water Bottle", "Pet Bed"]


def run(order_id: str, names: list[str], *, sep: str = "; ", status: dict[str, str] | None = None) -> Trajectory:
    """A return of the items the task names, by their ids, from an order that lists every catalog item."""
    items = [
        {"name": n, "item_id": f"{4100 + 7 * k}{order_id}", "price": 10.0 + k, "status": (status or {}).get(n, "delivered"),
         "options": {"color": "red"} if k % 2 else {"size": "L", "material": "oak"}}
        for k, n in enumerate(CATALOG)
    ]
    ids = [next(it["item_id"] for it in items if it["name"] == n) for n in names]
    return Trajectory(
        task=f"Return #W{order_id}: " + sep.join(names) + ";",
        calls=[
            Call(tool="get_order", args={"order_id": f"#W{order_id}"}, result={"status": "delivered", "items": items}),
            Call(tool="return_items", args={"order_id": f"#W{order_id}", "item_ids": ids}, result={"ok": True}),
        ],
        outcome=Outcome(ok=True, output="Done."),
        tools=TOOLS,
    )


WIDE = TaskTemplate("Return {order_id}: {item_names};", [
    Slot("order_id", "text", "str", None, "#`W`9"), Slot("item_names", "list", "list", "each:;", "Names:1-3"),
])


def test_a_list_slot_binds_one_item_or_several_separated_as_learned() -> None:
    assert WIDE.bind("Return #W1: Grill; Desk Lamp; Tablet;") == {"order_id": "#W1", "item_names": ["Grill", "Desk Lamp", "Tablet"]}
    assert WIDE.bind("Return #W1: Grill;") == {"order_id": "#W1", "item_names": ["Grill"]}
    assert WIDE.bind("Return #W1: Grill, Tablet;") is None  # a comma was never seen between items
    assert WIDE.bind("Return #W1: Grill; the lamp;") is None  # an item of another shape
    with pytest.raises(ValueError, match="each:"):
        TaskTemplate("Return {items}", [Slot("items", "list", "list", None, "Aa")])
    with pytest.raises(ValueError, match="empty list separator"):
        TaskTemplate("Return {items}", [Slot("items", "list", "list", "each:;|", "Aa")])


def test_items_side_by_side_in_the_task_become_one_list_parameter() -> None:
    traj = run("1", ["Grill", "Desk Lamp"])
    template = discover_template(traj)
    assert not isinstance(template, Rejected)
    assert template.text == "Return {order_id}: {item_names};"
    assert [(s.kind, s.type, s.transform, s.shape) for s in template.slots if s.name == "item_names"] == [
        ("list", "list", "each:;", "Names:1-3")]
    spec = lift(traj, template=template)
    assert not isinstance(spec, Rejected)
    arg = dict(spec.steps[1].args)["item_ids"]
    assert isinstance(arg, Each) and (arg.seq, arg.var) == (Param("item_names"), "item_name")
    assert isinstance(arg.body, Select) and (arg.body.field, arg.body.key, arg.body.rest) == ("name", Param("item_name"), ("item_id",))
    source = render_skill(spec)
    assert "item_names: list[str]" in source
    assert "item_ids=[pick(order['items'], 'name', item_name)['item_id'] for item_name in item_names]" in source
    assert "require(all(pick(order['items'], 'name', item_name)['status'] == 'delivered' for item_name in item_names)" in source
    assert "# not guarded: pick(order['items'], 'name', item_name)['options'] (its fields say which thing each item is)" in source
    assert check_policy(source, spec.name, {"shop": {"get_order", "return_items"}}) == []


def test_runs_of_one_two_and_three_items_are_one_skill_that_serves_any_count() -> None:
    runs = [run("1", ["Grill", "Desk Lamp"]), run("2", ["Tablet"]), run("3", ["Water Bottle", "Grill", "Pet Bed"])]
    spec = spec_from_runs(runs, name="return_items_skill", template=WIDE)
    assert not isinstance(spec, Rejected), spec
    source = render_skill(spec)
    assert prove_all(source, spec, runs) is None
    assert prove_all(source, spec, [run("4", ["Pet Bed", "Tablet", "Desk Lamp", "Grill"])]) is None  # four: never seen


def test_an_item_unlike_the_learned_ones_stops_the_skill() -> None:
    # the order holds a returned item in every world, so only the facts of the items named tell these apart
    spec = spec_from_runs([run("1", ["Grill", "Desk Lamp"], status={"Pet Bed": "returned"})], name="return_items_skill", template=WIDE)
    assert not isinstance(spec, Rejected)
    source = render_skill(spec)
    assert prove_all(source, spec, [run("5", ["Grill", "Tablet"], status={"Pet Bed": "returned"})]) is None
    # the second item was already returned: the agent would not return it again
    assert prove_all(source, spec, [run("5", ["Grill", "Tablet"], status={"Pet Bed": "returned", "Tablet": "returned"})]) is not None


def test_items_the_run_saw_differ_are_not_one_list() -> None:
    # one item delivered, the other not: that the agent returned both is evidence about these two only
    traj = run("6", ["Grill", "Tablet"], status={"Tablet": "pending"})
    template = discover_template(traj)
    assert not isinstance(template, Rejected)
    assert template.text == "Return {order_id}: {item_name}; {item_name_2};"
    spec = lift(traj, template=template)
    assert not isinstance(spec, Rejected)
    assert isinstance(dict(spec.steps[1].args)["item_ids"], ListOf)
    assert isinstance(lift(traj, template=WIDE), Rejected)  # under a list template: not this run


def test_the_policy_admits_one_plain_loop_over_a_parameter_or_a_result_only() -> None:
    head = "from shop import get_order\nSKILL = {}\n\ndef f(names: list[str], order_id: str):\n    order = get_order(order_id=order_id)\n"
    tools = {"shop": {"get_order"}}
    ok = head + "    return [n for n in names] + [x for x in order['items']]\n"
    assert check_policy(ok, "f", tools) == []
    for bad, rule in [
        ("[n for n in names if n]", "comprehension"),
        ("[n for n in names for m in names]", "comprehension"),
        ("[n for n in range(10 ** 9)]", "comprehension"),
        ("[order_id for order_id in names]", "shadowing"),
        ("{n for n in names}", "expression"),
    ]:
        assert rule in {v.rule for v in check_policy(head + f"    return {bad}\n", "f", tools)}, bad


def answered(traj: Trajectory, output: str) -> Trajectory:
    return Trajectory(task=traj.task, calls=traj.calls, outcome=Outcome(ok=True, output=output), tools=TOOLS)


def test_an_answer_that_names_the_items_keeps_one_slot_per_item() -> None:
    # "Returned Grill and Desk Lamp." quotes each item: a list parameter could not say it for three items
    traj = answered(run("1", ["Grill", "Desk Lamp"]), "Returned Grill and Desk Lamp.")
    template = discover_template(traj)
    assert not isinstance(template, Rejected)
    assert template.text == "Return {order_id}: {item_name}; {item_name_2};"
    spec = lift(traj, template=template)
    assert not isinstance(spec, Rejected) and "Returned {item_name} and {item_name_2}." in render_skill(spec)
    # under a list template, such a run is not learned: its answer would be replayed for other items
    one = lift(answered(run("2", ["Tablet"]), "Returned Tablet."), template=WIDE)
    assert isinstance(one, Rejected) and "names an item" in one.reason
    # nor where the answer says an item as text of its own (no source found for it)
    each = Each(Param("item_names"), "item_name", Param("item_name"))
    said = quoted_item([("return_items", (("skus", each),))], Const("Tablet is on its way back."), {"item_names": ["Tablet"]})
    assert said is not None and "'Tablet'" in said
    assert quoted_item([("return_items", (("skus", each),))], Const("Done."), {"item_names": ["Tablet"]}) is None



def test_items_written_otherwise_than_passed_on_keep_one_slot_each() -> None:
    # "desk lamp; water bottle" name "Desk Lamp" and "Water Bottle": each a slot of its own (title-cased),
    # since a list slot passes its items on as written
    traj = run("7", ["Desk Lamp", "Water Bottle"])
    traj = Trajectory(task="Return #W7: desk lamp; water bottle;", calls=traj.calls, outcome=traj.outcome, tools=TOOLS)
    template = discover_template(traj)
    assert not isinstance(template, Rejected)
    assert template.text == "Return {order_id}: {item_name}; {item_name_2};"
    assert not isinstance(lift(traj, template=template), Rejected)
