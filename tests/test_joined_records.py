"""A record another read names by its id: its fields are facts of the run.

"Please pay order W1 with my gift card." The order's payment names the method it was paid with
(``order['payments'][0]['method_id']``), a key of the customer's methods. Whether that method is
the gift card already is what the agent decides on ("already paid with your gift card"), yet
neither read holds it as a field of its own: it is a field of the record the id names,
``pick(customer['methods'], 'id', order['payments'][0]['method_id'])['source']``. Without that
fact, runs that answered "already paid" were told from runs that paid by whatever else happened to
differ (whether the orders shipped express), and nothing in the branch said which method paid: an
order paid by card with two items was answered "already paid". Found by the six-day storefront
shadow.
"""

from __future__ import annotations

from typing import Any

from skillforge._compile import prove_all
from tests.proven import proven
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory

TOOLS = {
    "find_customer": ToolRef(module="shop", qualname="find_customer", read=True, params=("email",)),
    "get_customer": ToolRef(module="shop", qualname="get_customer", read=True, params=("customer_id",)),
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
    "pay_with": ToolRef(module="shop", qualname="pay_with", params=("order_id", "method_id")),
}


def pay(k: int, *, paid_by: str, items: int) -> Trajectory:
    """Customer ``k`` asks to pay order ``W{k}`` with their gift card; the order is paid by ``paid_by``
    (``gift_card`` or ``credit_card``): already paid, the agent says so, else it pays with the gift card."""
    cid, gift, card = f"cust_{k}000003", f"gift_card_{k}000001", f"credit_card_{k}000002"
    methods = {gift: {"id": gift, "source": "gift_card"}, card: {"id": card, "source": "credit_card"}}
    current = gift if paid_by == "gift_card" else card
    order = {"order_id": f"W{k}", "status": "pending", "express": items > 1, "items": [{"sku": f"S{i}"} for i in range(items)],
             "payments": [{"method_id": current, "amount": 20.0}]}
    calls = [
        Call(tool="find_customer", args={"email": f"c{k}@x.io"}, result=cid),
        Call(tool="get_customer", args={"customer_id": cid}, result={"email": f"c{k}@x.io", "methods": methods}),
        Call(tool="get_order", args={"order_id": f"W{k}"}, result=order),
    ]
    if paid_by == "gift_card":
        output = f"Order W{k} is already paid with your gift card; nothing to change."
    else:
        calls.append(Call(tool="pay_with", args={"order_id": f"W{k}", "method_id": gift}, result={"ok": True}))
        output = f"Order W{k} is now paid with your gift card."
    return Trajectory(task=f"Email c{k}@x.io. Please pay order W{k} with my gift card.", calls=calls,
                      outcome=Outcome(ok=True, output=output), tools=TOOLS)


def learned(runs: list[Trajectory]) -> tuple[Any, str]:
    return proven(runs, 'pay_order')


def test_an_order_paid_by_another_method_is_never_answered_already_paid() -> None:
    # the runs that answered "already paid" held two items and shipped express; the one that paid, one item
    runs = [pay(1, paid_by="gift_card", items=2), pay(2, paid_by="gift_card", items=2), pay(3, paid_by="credit_card", items=1)]
    spec, source = learned(runs)
    assert "pick(customer_2['methods'], 'id', order['payments'][0]['method_id'])['source']" in source
    # paid by card, two items, express: the agent pays; the skill must not answer "already paid" (a guard stops it)
    why = prove_all(source, spec, [pay(4, paid_by="credit_card", items=2)])
    assert why is not None and "guard fails" in why.reason, why
    # paid by gift card, two items: already paid, as the runs showed
    assert prove_all(source, spec, [pay(5, paid_by="gift_card", items=2)]) is None
