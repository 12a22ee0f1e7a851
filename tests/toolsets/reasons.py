"""A shop whose agent files each cancellation under the policy reason the customer's words mean
(tests/test_chosen_constants.py), over the wallet shop's reads and world.

"I'm ana@x.io. Please cancel order W1 because I changed my mind." The agent finds the customer,
reads the order, and cancels it if it is pending, with the reason ``"no longer needed"``; words of
a mistake ("by accident", "the wrong size", "a mistake") file it as ``"ordered by mistake"``. The
customer's words are never passed on: which of the two reasons they mean is the agent's choice.
"""

from __future__ import annotations

import re
from typing import Any

from tests.toolsets._worlds import customers_and_orders
from tests.toolsets.wallet import W, find_customer, get_customer, get_order, load, state

__all__ = ["READS", "WRITES", "W", "agent", "cancel_order", "load", "state", "world"]

_MISTAKE = re.compile(r"\b(?:mistake|mistakenly|accident|accidentally|wrong)\b", re.IGNORECASE)


def cancel_order(order_id: str, reason: str) -> dict:
    """Cancel a pending order, filed under ``reason`` ("no longer needed" or "ordered by mistake")."""
    W["orders"][order_id]["status"] = "cancelled"
    W["writes"].append(("cancel_order", {"order_id": order_id, "reason": reason}))
    return {"order_id": order_id, "status": "cancelled"}


READS = [find_customer, get_customer, get_order]
WRITES = [cancel_order]


def world(name: str, *, status: str = "pending") -> dict[str, Any]:
    """A world of one customer ``name`` (email ``name@x.io``, id ``C-name``) with order ``W1`` (pending)."""
    cid = f"C-{name}"
    return customers_and_orders((
        {cid: {"id": cid, "name": name.title(), "email": f"{name}@x.io", "tier": "gold"}},
        {"W1": {"order_id": "W1", "customer": cid, "status": status}},
    ), "status")


_ASK = re.compile(r"I'm (\S+@\S+)\. Please cancel order (W\d+) because (.+)\.$")


def agent(t: dict[str, Any]):
    """The agent over tools ``t``; it starts afresh when a skill hands over (its only write comes last)."""

    def run(task: str) -> str:
        m = _ASK.match(task)
        if m is None:
            return "How can I help?"
        email, oid, why = m.groups()
        t["get_customer"](customer_id=t["find_customer"](email=email))
        got = t["get_order"](order_id=oid)
        if got["status"] != "pending":
            return f"Order {oid} is {got['status']}; I changed nothing."
        t["cancel_order"](order_id=oid, reason="ordered by mistake" if _MISTAKE.search(why) else "no longer needed")
        return f"Cancelled order {oid}."

    return run
