"""A count an answer says beside the listing of a whole list ("It has 3 item(s): a, b, c") is that list's
length: of a list of records too, and never another list's that happened to be as long (unchecked)."""

from __future__ import annotations

from pathlib import Path

from skillforge import Forge
from skillforge._lifting import Rejected, lift
from skillforge._spec import Guard, Len, Ref
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from skillforge._values import walk_exprs

TOOLS = {
    "get_customer": ToolRef(module="shop.tools", qualname="get_customer", read=True, params=("email",)),
    "get_order": ToolRef(module="shop.tools", qualname="get_order", read=True, params=("order_id",)),
}


def _items(*names: str) -> list[dict[str, str]]:
    return [{"name": n, "item_id": f"I{i}"} for i, n in enumerate(names)]


def _run(orders: list[str], items: list[dict[str, str]]) -> Trajectory:
    listing = ", ".join(i["name"] for i in items)
    return Trajectory(
        task="Email a@x.io. What is in order #W1?",
        calls=[
            Call(tool="get_customer", args={"email": "a@x.io"}, result={"id": "c1", "orders": orders}),
            Call(tool="get_order", args={"order_id": "#W1"}, result={"order_id": "#W1", "items": items}),
        ],
        outcome=Outcome(ok=True, output=f"Order #W1 has {len(items)} item(s): {listing}."),
        tools=TOOLS,
    )


def _counts(spec) -> list[Len]:
    return [e for e in walk_exprs(spec.output) if isinstance(e, Len)]


def test_a_count_of_a_listed_list_of_records_is_its_length() -> None:
    spec = lift(_run(["#W1", "#W2"], _items("Lamp", "Desk", "Chair")))
    assert not isinstance(spec, Rejected), spec
    assert _counts(spec) == [Len(Ref(1, ("items",)))]


def test_without_the_listing_a_count_of_records_is_not_learned() -> None:
    run = _run(["#W1", "#W2"], _items("Lamp", "Desk", "Chair"))
    run = run.model_copy(update={"outcome": Outcome(ok=True, output="Order #W1 has 3 item(s).")})
    found = lift(run)
    assert isinstance(found, Rejected) and "'3'" in found.reason  # a count of records may have filtered them


def test_a_count_another_list_happens_to_match_is_the_listed_one_and_checked() -> None:
    """Before: "3" was the length of the customer's 3 orders (a plain list, read first), so the skill
    would say the orders' count for an order of 2 items. Now it says the listed items' count, and
    checks that the two lengths agree, as when learned (either may be what the agent counted)."""
    spec = lift(_run(["#W1", "#W2", "#W3"], _items("Lamp", "Desk", "Chair")))
    assert not isinstance(spec, Rejected), spec
    assert _counts(spec) == [Len(Ref(1, ("items",)))]
    agree = Guard("agree", (), (Len(Ref(1, ("items",))), Len(Ref(0, ("orders",)))))
    assert agree in spec.steps[1].guards


def test_two_listed_lists_as_long_leave_the_count_unexplained() -> None:
    run = _run(["#W1"], [*_items("Lamp", "Desk"), {"name": "Bed", "item_id": "I9"}])
    run.calls[1].result["parts"] = _items("Bolt", "Nut", "Pin")
    both = "Order #W1 has 3 item(s): Lamp, Desk, Bed; parts Bolt, Nut, Pin."
    found = lift(run.model_copy(update={"outcome": Outcome(ok=True, output=both)}))
    assert isinstance(found, Rejected) and "'3'" in found.reason


def test_a_count_two_listed_lists_could_be_is_checked_against_the_other() -> None:
    run = _run(["#W1", "#W2"], _items("Lamp", "Desk"))
    both = "Order #W1 has 2 item(s): Lamp, Desk; your orders: #W1, #W2."
    spec = lift(run.model_copy(update={"outcome": Outcome(ok=True, output=both)}))
    assert not isinstance(spec, Rejected), spec
    (count,) = _counts(spec)
    other = ({Ref(0, ("orders",)), Ref(1, ("items",))} - {count.seq}).pop()
    assert Guard("agree", (), (count, Len(other))) in spec.steps[1].guards


def test_a_range_in_the_answer_is_no_count() -> None:
    run = _run(["#W1"], _items("Lamp", "Desk", "Chair", "Bed", "Rug"))
    said = "Order #W1 has these items: Lamp, Desk, Chair, Bed, Rug. They ship in 5-7 days."
    found = lift(run.model_copy(update={"outcome": Outcome(ok=True, output=said)}))
    assert isinstance(found, Rejected) and "'5'" in found.reason


# -- served: the count of the world at hand ---------------------------------------------------


def test_a_skill_says_the_count_of_the_order_it_reads(tmp_path: Path) -> None:
    world = {
        "customers": {"a@x.io": {"id": "c1", "orders": ["#W1", "#W2", "#W3"]}},
        "orders": {"#W1": _items("Lamp", "Desk", "Chair"), "#W2": _items("Sofa", "Rug"), "#W3": _items("Pen", "Ink", "Pad")},
    }
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", importable_skills=False)

    @forge.tool(read=True)
    def get_customer(email: str) -> dict:
        return dict(world["customers"][email])

    @forge.tool(read=True)
    def get_order(order_id: str) -> dict:
        return {"order_id": order_id, "items": [dict(i) for i in world["orders"][order_id]]}

    def agent(task: str, transcript=None) -> str:
        email, oid = task.split()[1].rstrip("."), task.split()[-1].rstrip("?")
        get_customer(email)
        items = get_order(oid)["items"]
        return f"Order {oid} has {len(items)} item(s): {', '.join(i['name'] for i in items)}."

    forge.agent = agent
    try:
        first = forge.solve("Email a@x.io. What is in order #W1?")
        assert first.source == "agent" and first.learned, first.not_learned
        # 3 orders, 2 items: the lengths differ from when learned, so the skill hands over
        two = forge.solve("Email a@x.io. What is in order #W2?")
        assert two.source == "skill+agent" and "len(" in (two.handover or "")
        assert two.output == "Order #W2 has 2 item(s): Sofa, Rug."
        # 3 orders, 3 items: served, the count of the order read
        three = forge.solve("Email a@x.io. What is in order #W3?")
        assert three.source == "skill" and three.output == "Order #W3 has 3 item(s): Pen, Ink, Pad."
    finally:
        forge.close()
