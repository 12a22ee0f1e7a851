"""A shop whose customers say who they are by email or by phone, and whose agent cancels orders.

"I'm ana@example.com. Please cancel order #W11." or "My phone is 555-0101. Please cancel order #W11."
The agent finds the customer (by email or by phone: two identification routes), reads their
record (city, tier) and the order (status, express, prepaid), and cancels a pending order,
except one both express and prepaid (a rule on two switch-like facts together). It answers one
sentence.
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

# name, city, tier; each customer cust_100<k> has order #W<k>1 (pending), express and prepaid as below
CUSTOMERS = [
    ("ana", "Austin", "gold", 0, 0), ("bo", "Boston", "basic", 1, 0), ("cy", "Chicago", "basic", 0, 1),
    ("di", "Denver", "gold", 0, 0), ("ed", "El Paso", "basic", 1, 1), ("fay", "Fresno", "gold", 1, 0),
    ("gus", "Gary", "basic", 0, 1), ("hal", "Houston", "basic", 1, 1), ("ivy", "Irvine", "gold", 0, 0),
    ("jo", "Joliet", "basic", 1, 0), ("kim", "Houston", "gold", 0, 0),
]


def make_world(path: Path) -> Path:
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as db:
        db.executescript("""
            CREATE TABLE customers (id TEXT PRIMARY KEY, email TEXT UNIQUE, phone TEXT UNIQUE, city TEXT, tier TEXT);
            CREATE TABLE orders (id TEXT PRIMARY KEY, customer TEXT, status TEXT, express INTEGER, prepaid INTEGER);
        """)
        for k, (name, city, tier, express, prepaid) in enumerate(CUSTOMERS, start=1):
            db.execute("INSERT INTO customers VALUES (?, ?, ?, ?, ?)", (f"cust_{1000 + k}", f"{name}@example.com", f"555-01{k:02d}", city, tier))
            db.execute("INSERT INTO orders VALUES (?, ?, 'pending', ?, ?)", (f"#W{k}1", f"cust_{1000 + k}", express, prepaid))
    DB["path"] = path
    return path


def _db() -> sqlite3.Connection:
    return connect(DB["path"])


def find_by_email(email: str) -> str:
    """The id of the customer with this email."""
    with _db() as db:
        row = db.execute("SELECT id FROM customers WHERE email = ?", (email,)).fetchone()
    if row is None:
        raise LookupError(f"no customer with email {email}")
    return str(row[0])


def find_by_phone(phone: str) -> str:
    """The id of the customer with this phone number."""
    with _db() as db:
        row = db.execute("SELECT id FROM customers WHERE phone = ?", (phone,)).fetchone()
    if row is None:
        raise LookupError(f"no customer with phone {phone}")
    return str(row[0])


def get_customer(customer_id: str) -> dict:
    """A customer: id, city and tier."""
    with _db() as db:
        row = db.execute("SELECT id, city, tier FROM customers WHERE id = ?", (customer_id,)).fetchone()
    return dict(row)


def get_order(order_id: str) -> dict:
    """An order: id, customer, status, whether it ships express and whether it is paid for."""
    with _db() as db:
        row = db.execute("SELECT id, customer, status, express, prepaid FROM orders WHERE id = ?", (order_id,)).fetchone()
    if row is None:
        raise LookupError(f"no order {order_id}")
    return {**dict(row), "express": bool(row["express"]), "prepaid": bool(row["prepaid"])}


def cancel(order_id: str) -> dict:
    """Cancel a pending order."""
    with _db() as db:
        db.execute("UPDATE orders SET status = 'cancelled' WHERE id = ?", (order_id,))
    return {"order_id": order_id, "status": "cancelled"}


TOOLS = (find_by_email, find_by_phone, get_customer, get_order, cancel)
READS = frozenset({"find_by_email", "find_by_phone", "get_customer", "get_order"})

_BY_EMAIL = re.compile(r"I'm (\S+@\S+)\. Please cancel order (#W\d+)\.$")
_BY_PHONE = re.compile(r"My phone is ([\d-]+)\. Please cancel order (#W\d+)\.$")


def agent(task: str, transcript: Sequence[Any] | None = None) -> str:
    call = continuing(transcript, TOOLBOX)
    if m := _BY_EMAIL.fullmatch(task):
        customer_id = call("find_by_email", email=m[1])
    elif m := _BY_PHONE.fullmatch(task):
        customer_id = call("find_by_phone", phone=m[1])
    else:
        return "How can I help?"
    order_id = m[2]
    customer = call("get_customer", customer_id=customer_id)
    order = call("get_order", order_id=order_id)
    if order["status"] != "pending":
        return f"Order {order_id} is {order['status']}; I changed nothing."
    if order["express"] and order["prepaid"]:
        return f"Order {order_id} ships express and is paid for; it cannot be cancelled now ({customer['tier']} account)."
    call("cancel", order_id=order_id)
    return f"Cancelled order {order_id}."


def snapshot() -> list[tuple[Any, ...]]:
    with _db() as db:
        return [tuple(r) for r in db.execute("SELECT * FROM orders ORDER BY id")]
