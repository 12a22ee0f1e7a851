"""Which varied facts are combined: those about what the runs act on; the rest is context (on runs alone)."""

from __future__ import annotations

from typing import Any

from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from tests.test_learning import learn

TOOLS = {
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
    "get_customer": ToolRef(module="shop", qualname="get_customer", read=True, params=("customer_id",)),
    "refund": ToolRef(module="shop", qualname="refund", params=("order_id", "card")),
}


def run(order_id: str, order: dict[str, Any], customer: dict[str, Any], *, card_from_customer: bool = False) -> Trajectory:
    """Read the order, then its customer; refund to a fixed card, or to the customer's card."""
    order = {"id": order_id, "customer_id": f"cust-4821{order_id}", **order}
    customer = {"id": f"cust-4821{order_id}", "card": f"card-{order_id}9", **customer}
    card = customer["card"] if card_from_customer else "store-credit"
    return Trajectory(
        task=f"Refund order #{order_id}",
        calls=[
            Call(tool="get_order", args={"order_id": order_id}, result=order),
            Call(tool="get_customer", args={"customer_id": order["customer_id"]}, result=customer),
            Call(tool="refund", args={"order_id": order_id, "card": card}, result={"ok": True}),
        ],
        outcome=Outcome(ok=True, output=f"Refunded order {order_id}."),
        tools=TOOLS,
    )


def body(runs: list[Trajectory]) -> str:
    """The body of the skill learned from ``runs`` (proven on each)."""
    spec, source = learn(runs)
    assert source is not None, spec
    return source.split("def refund_order", 1)[1]


def test_facts_of_a_record_the_run_does_not_act_on_are_kept_on_their_own_not_in_combination() -> None:
    # the customer is read (through the order) but the refund takes nothing from them: their tier is context
    src = body([
        run("1", {"rush": False}, {"tier": "gold"}),
        run("2", {"rush": True}, {"tier": "basic"}),
    ])
    assert "customer['tier'] in ('basic', 'gold')" in src  # each on its own: a tier no run showed is a miss
    assert "combination" not in src  # (rush True, tier gold) is not refused for being unseen together


def test_facts_of_the_record_the_run_acts_on_keep_only_the_combinations_seen() -> None:
    src = body([
        run("1", {"rush": False, "gift": False}, {"tier": "gold"}),
        run("2", {"rush": True, "gift": True}, {"tier": "gold"}),
    ])
    assert "(order['gift'], order['rush']) in ((False, False), (True, True))" in src


def test_a_record_a_write_takes_a_value_from_is_acted_on() -> None:
    # the refund goes to the customer's card: the customer's facts now decide with the order's
    src = body([
        run("1", {"rush": False}, {"tier": "gold"}, card_from_customer=True),
        run("2", {"rush": True}, {"tier": "basic"}, card_from_customer=True),
    ])
    assert "(order['rush'], customer['tier']) in ((False, 'gold'), (True, 'basic'))" in src


def test_a_nested_record_of_the_order_is_context() -> None:
    src = body([
        run("1", {"rush": False, "address": {"state": "CA"}}, {"tier": "gold"}),
        run("2", {"rush": True, "address": {"state": "TX"}}, {"tier": "gold"}),
    ])
    assert "order['address']['state'] in ('CA', 'TX')" in src
    assert "combination" not in src


def test_a_task_value_used_only_to_find_a_record_relates_as_context() -> None:
    tools = {**TOOLS, "find_customer": ToolRef(module="shop", qualname="find_customer", read=True, params=("email",))}

    def found(order_id: str, email: str, rush: bool, watchers: list[str]) -> Trajectory:
        return Trajectory(
            task=f"Refund order #{order_id} for {email}",
            calls=[
                Call(tool="find_customer", args={"email": email}, result={"id": f"cust-4821{order_id}"}),
                Call(tool="get_order", args={"order_id": order_id}, result={"id": order_id, "rush": rush, "watchers": watchers}),
                Call(tool="refund", args={"order_id": order_id, "card": "store-credit"}, result={"ok": True}),
            ],
            outcome=Outcome(ok=True, output=f"Refunded order {order_id}."),
            tools=tools,
        )

    src = body([found("1", "ann@x.io", False, ["ann@x.io"]), found("2", "bo@y.io", True, ["cy@z.io"])])
    assert "combination" not in src  # (email among the watchers, rush): each on its own
    assert "email in order['watchers']" not in src  # seen both ways on its own: it tells nothing apart
