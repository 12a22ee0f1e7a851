"""A shop whose customers keep payment methods under their own ids (tests/test_selections.py).

"Email ana@x.io. Please pay order W1 with my gift card." The agent finds the customer, reads them
and the order, and pays with the one method of the kind the task writes as words ("gift card" for
the source 'gift_card'); a gift card must cover the order's total, else the agent says it does not.
Method ids differ for every customer (``gift_card_7``), as in tau-bench retail.

One world at a time lives in ``W`` (``load`` replaces it, ``state`` copies it out); every
write appends to ``W["writes"]``.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from tests.toolsets._worlds import customers_and_orders, dict_world

W, load, state = dict_world()


def find_customer(email: str) -> str:
    """The id of the customer with that email."""
    for cid, c in W["customers"].items():
        if c["email"] == email:
            return cid
    raise KeyError(f"no customer {email}")


def get_customer(customer_id: str) -> dict:
    """A customer: email, orders, and payment methods keyed by their ids."""
    return copy.deepcopy(W["customers"][customer_id])


def get_order(order_id: str) -> dict:
    """An order: its status, total and the method it is paid with."""
    return copy.deepcopy(W["orders"][order_id])


def pay_with(order_id: str, method_id: str) -> dict:
    """Pay a pending order with another of the customer's methods."""
    W["orders"][order_id]["method_id"] = method_id
    W["writes"].append(("pay_with", {"order_id": order_id, "method_id": method_id}))
    return {"order_id": order_id, "method_id": method_id}


READS = [find_customer, get_customer, get_order]
WRITES = [pay_with]


def customer(cid: str, email: str, orders: list[str], **methods: float | None) -> dict[str, Any]:
    """A customer whose methods are ``id=balance`` (None: a method without a balance)."""
    owned = {}
    for mid, balance in methods.items():
        owned[mid] = {"id": mid, "source": mid.rsplit("_", 1)[0]} | ({} if balance is None else {"balance": balance})
    return {cid: {"email": email, "orders": orders, "methods": owned}}


def order(oid: str, total: float, method_id: str) -> dict[str, Any]:
    return {oid: {"order_id": oid, "status": "pending", "total": total, "method_id": method_id}}


def world(*parts: dict[str, Any]) -> dict[str, Any]:
    """A world of customers (``customer``) and orders (``order``), in any order."""
    return customers_and_orders(parts, "total")


_TASK = re.compile(r"Email (\S+)\. Please pay order (\w+) with my (.+)\.$")


def agent(t: dict[str, Any]):
    """The agent over tools ``t``; it starts afresh when a skill hands over (its only write comes last)."""

    def run(task: str) -> str:
        m = _TASK.match(task)
        if m is None:
            raise ValueError(f"cannot parse {task!r}")
        email, oid, said = m.groups()
        cust = t["get_customer"](customer_id=t["find_customer"](email=email))
        got = t["get_order"](order_id=oid)
        kind = "_".join(said.lower().split())
        found = [m for m in cust["methods"].values() if m["source"] == kind]
        if len(found) != 1:
            return f"I don't see one {said.lower()} on your account."
        method = found[0]
        if "balance" in method and method["balance"] < got["total"]:
            return f"Your {said.lower()} balance (${method['balance']:.2f}) doesn't cover order {oid} (${got['total']:.2f})."
        t["pay_with"](order_id=oid, method_id=method["id"])
        return f"Order {oid} is now paid with your {said.lower()} ({method['id']})."

    return run
