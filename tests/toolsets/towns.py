"""A shop whose customers live in many towns (tests/test_census.py), over the wallet shop's reads and world.

"I'm ana@x.io. Which town am I in?" (any question) The agent finds the customer, reads them, and says their town.
"I'm ana@x.io. Please cancel order W1." The agent finds the customer, reads them (their town is
nothing the cancellation turns on), reads the order, and cancels it if it is pending; else it says
why not. One world at a time lives in ``W`` (``load`` replaces it, ``state`` copies it out); every
write appends to ``W["writes"]``.
"""

from __future__ import annotations

import re
from typing import Any

from tests.toolsets._worlds import customers_and_orders
from tests.toolsets.wallet import W, find_customer, get_customer, get_order, load, state

__all__ = ["READS", "WRITES", "W", "agent", "cancel_order", "load", "state", "world"]


def cancel_order(order_id: str) -> dict:
    """Cancel a pending order."""
    W["orders"][order_id]["status"] = "cancelled"
    W["writes"].append(("cancel_order", {"order_id": order_id}))
    return {"order_id": order_id, "status": "cancelled"}


READS = [find_customer, get_customer, get_order]
WRITES = [cancel_order]


def world(name: str, town: str, *, status: str = "pending") -> dict[str, Any]:
    """A world of one customer ``name`` (email ``name@x.io``, id ``C-name``) in ``town``, with order ``W1``."""
    cid = f"C-{name}"
    return customers_and_orders((
        {cid: {"id": cid, "name": name.title(), "email": f"{name}@x.io", "town": town, "tier": "gold"}},
        {"W1": {"order_id": "W1", "customer": cid, "status": status}},
    ), "status")


_WHO = re.compile(r"I'm (\S+@\S+)\. (.+)$")


def agent(t: dict[str, Any]):
    """The agent over tools ``t``; it starts afresh when a skill hands over (its only write comes last)."""

    def run(task: str) -> str:
        m = _WHO.match(task)
        if m is None:
            return "Who are you?"
        email, ask = m.groups()
        cust = t["get_customer"](customer_id=t["find_customer"](email=email))
        if ask.endswith("?"):  # any question: where they are
            return f"You are in {cust['town']}."
        order = re.fullmatch(r"Please cancel order (W\d+)\.", ask)
        if order is None:
            return "How can I help?"
        got = t["get_order"](order_id=order[1])
        if got["status"] != "pending":
            return f"Order {order[1]} is {got['status']}; I changed nothing."
        t["cancel_order"](order_id=order[1])
        return f"Cancelled order {order[1]}."

    return run
