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


def pay(k: int, *, paid_by: str, items: int, refunded: bool = False) -> Trajectory:
    """Customer ``k`` asks to pay order ``W{k}`` with their gift card; the order is paid by ``paid_by``
    (``gift_card``, ``credit_card`` or ``paypal``; ``refunded``: paid by card first, refunded): already
    paid, the agent says so, else it pays with the gift card."""
    cid = f"cust_{k}000003"
    ids = {kind: f"{kind}_{k}00000{n}" for n, kind in enumerate(("gift_card", "credit_card", "paypal"), 1)}
    methods = {mid: {"id": mid, "source": kind} for kind, mid in ids.items()}
    gift, current = ids["gift_card"], ids[paid_by]
    earlier = [{"method_id": ids["credit_card"], "amount": 20.0}, {"method_id": ids["credit_card"], "amount": -20.0}]
    order = {"order_id": f"W{k}", "status": "pending", "express": items > 1, "items": [{"sku": f"S{i}"} for i in range(items)],
             "payments": [*(earlier if refunded else []), {"method_id": current, "amount": 20.0}]}
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


def test_a_record_only_some_runs_name_is_no_fact_of_the_others() -> None:
    # one order was paid by card and refunded before: its payments name the card twice more; the runs still
    # acted alike, and what they all name (the first payment's method) is still a fact
    spec, source = learned([pay(1, paid_by="paypal", items=1), pay(2, paid_by="paypal", items=1, refunded=True)])
    assert "pick(customer_2['methods'], 'id', order['payments'][0]['method_id'])['source']" in source
    assert prove_all(source, spec, [pay(3, paid_by="paypal", items=1, refunded=True)]) is None


def test_the_kind_of_method_that_paid_is_context_guarded_on_its_own() -> None:
    # paid by card on an order not express, by PayPal on an express one: both paid with the gift card. Which
    # method paid is context, not combined with the order's own facts: PayPal on an order not express is served
    spec, source = learned([pay(1, paid_by="credit_card", items=1), pay(2, paid_by="paypal", items=2)])
    assert ("require(pick(customer_2['methods'], 'id', order['payments'][0]['method_id'])['source'] in ('credit_card', 'paypal'), "
            in source)
    assert prove_all(source, spec, [pay(3, paid_by="paypal", items=1)]) is None
    why = prove_all(source, spec, [pay(4, paid_by="gift_card", items=1)])  # already paid: a kind no run of this way showed
    assert why is not None and "guard fails" in why.reason, why


# -- three answers after one write -----------------------------------------------------------------------

CANCEL_TOOLS = {**TOOLS, "cancel": ToolRef(module="shop", qualname="cancel", params=("order_id",))}
SAID = {"credit_card": "your card", "gift_card": "your gift card", "paypal": "your PayPal account", "apple_pay": "your Apple Pay"}


def cancel(k: int, paid_by: str) -> Trajectory:
    """Customer ``k`` cancels order ``W{k}``, paid by ``paid_by``: the answer says where the refund goes."""
    cid, method = f"cust_{k}000003", f"{paid_by}_{k}000001"
    methods = {method: {"id": method, "source": paid_by}, f"paypal_{k}000009": {"id": f"paypal_{k}000009", "source": "paypal"}}
    order = {"order_id": f"W{k}", "status": "pending", "payments": [{"method_id": method, "amount": 20.0}]}
    calls = [
        Call(tool="find_customer", args={"email": f"c{k}@x.io"}, result=cid),
        Call(tool="get_customer", args={"customer_id": cid}, result={"email": f"c{k}@x.io", "methods": methods}),
        Call(tool="get_order", args={"order_id": f"W{k}"}, result=order),
        Call(tool="cancel", args={"order_id": f"W{k}"}, result={"status": "cancelled"}),
    ]
    return Trajectory(task=f"Email c{k}@x.io. Please cancel order W{k}.", calls=calls, tools=CANCEL_TOOLS,
                      outcome=Outcome(ok=True, output=f"Cancelled order W{k}; the refund goes to {SAID[paid_by]}."))


def test_three_answers_after_one_write_are_one_skill_branching_on_what_told_each_from_the_later_ones() -> None:
    kinds = ["credit_card", "gift_card", "paypal"]
    runs = [cancel(k, kinds[k % 3]) for k in range(1, 7)]
    spec, source = learned(runs)
    assert len(spec.early) == 2, source  # one skill: two branches after the write, and the last answer
    for k, paid_by in zip(range(11, 14), kinds, strict=True):
        assert prove_all(source, spec, [cancel(k, paid_by)]) is None, paid_by
    why = prove_all(source, spec, [cancel(14, "apple_pay")])  # a kind no run showed: a guard stops the skill
    assert why is not None and "guard fails" in why.reason, why
