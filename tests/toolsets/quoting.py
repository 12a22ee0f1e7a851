"""A shop whose agent answers by quoting the task's text (tests/test_quoted.py).

"I want to send back the Desk Lamp and the Tea Kettle I got in order W1. Ava Ruiz, 80201."
The agent finds the customer, reads the order, and either starts a return of both items or
says which one it does not see, in its own words: "I don't see a tea kettle in order W1."
The second item's text feeds no call when it is missing, yet the answer says it (lowercased).

One world at a time lives in ``W`` (``load`` replaces it, ``state`` copies it out); every
write appends to ``W["writes"]``.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from tests.toolsets._worlds import customers_and_orders, dict_world

W, load, state = dict_world()


def find_customer(first_name: str, last_name: str, zip: str) -> str:
    """The id of the customer of that name and zip code."""
    for cid, c in W["customers"].items():
        if (c["first_name"], c["last_name"], c["zip"]) == (first_name, last_name, zip):
            return cid
    raise KeyError(f"no customer {first_name} {last_name} at {zip}")


def get_customer(customer_id: str) -> dict:
    """A customer: name, zip, city and the ids of their orders."""
    return copy.deepcopy(W["customers"][customer_id])


def get_order(order_id: str) -> dict:
    """An order: its status and items (each a name)."""
    if order_id not in W["orders"]:
        raise KeyError(f"no order {order_id!r}")
    return copy.deepcopy(W["orders"][order_id])


def return_items(order_id: str, items: list) -> dict:
    """Start a return of items of a delivered order."""
    W["orders"][order_id]["status"] = "return requested"
    W["writes"].append(("return_items", {"order_id": order_id, "items": items}))
    return {"order_id": order_id, "status": "return requested"}


READS = [find_customer, get_customer, get_order]
WRITES = [return_items]


def customer(cid: str, first: str, last: str, zip: str, city: str, *orders: str) -> dict[str, Any]:
    return {cid: {"first_name": first, "last_name": last, "zip": zip, "city": city, "orders": list(orders)}}


def order(oid: str, *items: str) -> dict[str, Any]:
    return {oid: {"order_id": oid, "status": "delivered", "items": [{"name": n} for n in items]}}


def world(*parts: dict[str, Any]) -> dict[str, Any]:
    """A world of customers (``customer``) and orders (``order``), in any order."""
    return customers_and_orders(parts, "items")


_TASK = re.compile(r".*I want to send back the (.+?) and the (.+?) I got in order (\w+)\. (\w+) (\w+), (\d+)\.$")


def agent(t: dict[str, Any]):
    """The agent: its tools are ``t`` (the forge's recording ones, or these plain ones). It takes no
    transcript: when a skill hands over, it starts afresh (its only write comes last)."""

    def run(task: str) -> str:
        m = _TASK.match(task)
        if m is None:
            raise ValueError(f"cannot parse {task!r}")
        first_item, second_item, oid, first, last, zip_code = m.groups()
        cid = t["find_customer"](first_name=first, last_name=last, zip=zip_code)
        cust = t["get_customer"](customer_id=cid)
        if oid not in cust["orders"]:
            return f"Order {oid} is not one of yours."
        got = t["get_order"](order_id=oid)
        names = [i["name"] for i in got["items"]]
        for wanted in (first_item, second_item):
            if wanted.lower() not in [n.lower() for n in names]:
                return f"I don't see a {wanted.lower()} in order {oid}. I haven't started a return."
        t["return_items"](order_id=oid, items=[first_item, second_item])
        return f"I've started a return of the {first_item} and the {second_item} from order {oid}."

    return run
