"""A shop whose address changes name another order ("(same as #W12)") and whose agent browses after it writes.

"I'm ana@example.com. Ship order #W11 to 5 Oak Lane (same as #W12)." The agent finds the
customer (whose record lists their order ids), reads the order, and ships it only if both orders
are the customer's and the order is pending; the order named after "same as" feeds no argument.
After shipping it looks up a product of the customer's own choosing (one the task does not name:
a read after the last write that feeds nothing). It answers one sentence.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.toolsets._continuing import continuing
from tests.toolsets._worlds import connect

DB: dict[str, Path] = {}
TOOLBOX: dict[str, Any] = {}


def make_world(path: Path) -> Path:
    path.unlink(missing_ok=True)
    names = ["ana", "bo", "cy", "di", "ed", "fay", "gus"]
    with sqlite3.connect(path) as db:
        db.executescript("""
            CREATE TABLE customers (id TEXT PRIMARY KEY, email TEXT UNIQUE, favourite TEXT);
            CREATE TABLE orders (id TEXT PRIMARY KEY, customer TEXT, status TEXT, address TEXT);
            CREATE TABLE products (id TEXT PRIMARY KEY, name TEXT);
            INSERT INTO products VALUES ('P1', 'Kettle'), ('P2', 'Lamp'), ('P3', 'Desk');
        """)
        for k, name in enumerate(names, start=1):  # customer c<k>: a pending order #W<k>1 and a delivered one #W<k>2
            db.execute("INSERT INTO customers VALUES (?, ?, ?)", (f"c{k}", f"{name}@example.com", f"P{k % 3 + 1}"))
            db.execute("INSERT INTO orders VALUES (?, ?, 'pending', ?)", (f"#W{k}1", f"c{k}", f"{k} Elm Street"))
            db.execute("INSERT INTO orders VALUES (?, ?, 'delivered', ?)", (f"#W{k}2", f"c{k}", f"{k} Elm Street"))
    DB["path"] = path
    return path


def _db() -> sqlite3.Connection:
    return connect(DB["path"])


def find_customer(email: str) -> dict:
    """The customer with this email: id and the ids of their orders."""
    with _db() as db:
        row = db.execute("SELECT id FROM customers WHERE email = ?", (email,)).fetchone()
        if row is None:
            raise LookupError(f"no customer with email {email}")
        orders = [r[0] for r in db.execute("SELECT id FROM orders WHERE customer = ? ORDER BY id", (row["id"],))]
    return {"id": row["id"], "orders": orders}


def get_order(order_id: str) -> dict:
    """An order: id, customer, status and address."""
    with _db() as db:
        row = db.execute("SELECT id, customer, status, address FROM orders WHERE id = ?", (order_id,)).fetchone()
    if row is None:
        raise LookupError(f"no order {order_id}")
    return dict(row)


def get_product(product_id: str) -> dict:
    """A product: id and name."""
    with _db() as db:
        row = db.execute("SELECT id, name FROM products WHERE id = ?", (product_id,)).fetchone()
    if row is None:
        raise LookupError(f"no product {product_id}")
    return dict(row)


def ship_to(order_id: str, address: str) -> dict:
    """Change where a pending order is shipped."""
    with _db() as db:
        db.execute("UPDATE orders SET address = ? WHERE id = ?", (address, order_id))
    return {"order_id": order_id, "address": address}


TOOLS = (find_customer, get_order, get_product, ship_to)
READS = frozenset({"find_customer", "get_order", "get_product"})

_ASK = re.compile(r"I'm (\S+@\S+)\. Ship order (#W\d+) to (.+?) \(same as (#W\d+)\)\.$")


def agent(task: str, transcript: Sequence[Any] | None = None) -> str:
    call = continuing(transcript, TOOLBOX)

    m = _ASK.fullmatch(task)
    if m is None:
        return "How can I help?"
    email, order_id, address, same_as = m.groups()
    customer = call("find_customer", email=email)
    order = call("get_order", order_id=order_id)
    if order_id not in customer["orders"] or same_as not in customer["orders"] or same_as == order_id:
        return f"Order {same_as} is not another of your orders; I changed nothing."
    if order["status"] != "pending":
        return f"Order {order_id} is {order['status']}; I changed nothing."
    call("ship_to", order_id=order_id, address=address)
    with _db() as db:  # browsing after the change: a product the task never names
        favourite = db.execute("SELECT favourite FROM customers WHERE email = ?", (email,)).fetchone()[0]
    call("get_product", product_id=favourite)
    return f"Order {order_id} now ships to {address}."


def snapshot() -> list[tuple[Any, ...]]:
    with _db() as db:
        return [tuple(r) for r in db.execute("SELECT * FROM orders ORDER BY id")]
