"""A small support desk on SQLite: customers, orders, stock, refunds, replacements, address and email changes.

The tools are plain functions decorated with ``skillforge.tool``; the database
is a runtime dependency opened with ``open_desk(path)``, never recorded as data.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import skillforge

__all__ = [
    "TOOLS",
    "get_customer",
    "get_order",
    "get_stock",
    "open_desk",
    "refund_payment",
    "send_replacement",
    "update_email",
    "update_shipping_address",
]

_db: sqlite3.Connection | None = None

_SCHEMA = """
CREATE TABLE IF NOT EXISTS customers (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, status TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS orders (
    id TEXT PRIMARY KEY, customer_id TEXT NOT NULL REFERENCES customers(id),
    status TEXT NOT NULL, total REAL NOT NULL, payment_id TEXT NOT NULL,
    shipping_address TEXT NOT NULL, items TEXT NOT NULL, address_changed INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS stock (sku TEXT PRIMARY KEY, available INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS replacements (
    id INTEGER PRIMARY KEY AUTOINCREMENT, order_id TEXT NOT NULL, sku TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS refunds (
    id INTEGER PRIMARY KEY AUTOINCREMENT, order_id TEXT NOT NULL, payment_id TEXT NOT NULL, amount REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS address_changes (
    id INTEGER PRIMARY KEY AUTOINCREMENT, order_id TEXT NOT NULL, old TEXT NOT NULL, new TEXT NOT NULL
);
"""

FIRST = ["Ada", "Bo", "Chen", "Dana", "Eli", "Farah", "Gus", "Hana", "Ivo", "Jun"]
LAST = ["Okafor", "Lind", "Moreau", "Silva", "Novak", "Reyes", "Tanaka", "Berg", "Quinn", "Haas"]
STREETS = ["Elm Street", "Harbor Road", "Mill Lane", "Cedar Avenue", "King Street", "Orchard Way"]
TOWNS = ["Springfield", "Riverton", "Lakeside", "Fairview", "Brookfield"]
PRODUCTS = [("MUG-1", "mug", 12.5), ("LMP-2", "desk lamp", 39.0), ("BAG-3", "backpack", 54.25), ("PEN-4", "pen set", 8.75)]
STOCK = {"MUG-1": 40, "LMP-2": 0, "BAG-3": 25, "PEN-4": 60}


def open_desk(path: str | Path, *, seed: int = 7) -> sqlite3.Connection:
    """Open (and on first use create and fill) the desk database; tools use it from then on."""
    global _db
    conn = sqlite3.connect(str(path), check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.executescript(_SCHEMA)
    if conn.execute("SELECT COUNT(*) FROM customers").fetchone()[0] == 0:
        _fill(conn, seed)
    _db = conn
    return conn


def _fill(conn: sqlite3.Connection, seed: int) -> None:
    rng = random.Random(seed)
    for i in range(20):
        first, last = FIRST[i % 10], LAST[(i * 3) % 10]
        conn.execute(
            "INSERT INTO customers VALUES (?, ?, ?, ?)",
            (f"C-{101 + i}", f"{first} {last}", f"{first.lower()}.{last.lower()}@example.com", "active"),
        )
    for n in range(1001, 1061):
        items = [
            {"sku": sku, "name": name, "qty": rng.randint(1, 3), "price": price}
            for sku, name, price in rng.sample(PRODUCTS, rng.randint(1, 2))
        ]
        total = round(sum(it["qty"] * it["price"] for it in items), 2)
        address = f"{rng.randint(1, 99)} {rng.choice(STREETS)}, {rng.choice(TOWNS)}"
        conn.execute(
            "INSERT INTO orders (id, customer_id, status, total, payment_id, shipping_address, items)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                str(n),
                f"C-{101 + rng.randrange(20)}",
                rng.choice(["processing", "shipped", "delivered"]),
                total,
                f"PAY-{rng.randrange(10**6):06d}",
                address,
                json.dumps(items),
            ),
        )
    conn.executemany("INSERT INTO stock VALUES (?, ?)", sorted(STOCK.items()))
    conn.commit()


def _conn() -> sqlite3.Connection:
    if _db is None:
        raise RuntimeError("the desk is not open: call open_desk(path) first")
    return _db


def order_ids() -> list[str]:
    """Every order's id (for generating tickets; not a tool)."""
    return [r[0] for r in _conn().execute("SELECT id FROM orders ORDER BY id")]


def _order_row(order_id: str) -> sqlite3.Row:
    row = _conn().execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchone()
    if row is None:
        raise LookupError(f"no order {order_id}")
    return row


@skillforge.tool(read=True)
def get_order(order_id: str) -> dict[str, Any]:
    """Look up an order: status, total, payment, shipping address and items.

    Args:
        order_id: the order number, digits only (e.g. "1042").
    """
    row = _order_row(order_id)
    return {
        "id": row["id"],
        "customer_id": row["customer_id"],
        "status": row["status"],
        "total": row["total"],
        "payment_id": row["payment_id"],
        "shipping_address": row["shipping_address"],
        "address_changed": bool(row["address_changed"]),
        "items": json.loads(row["items"]),
    }


@skillforge.tool(read=True)
def get_customer(customer_id: str) -> dict[str, Any]:
    """Look up a customer by id.

    Args:
        customer_id: the customer id, like "C-104".
    """
    row = _conn().execute("SELECT * FROM customers WHERE id = ?", (customer_id,)).fetchone()
    if row is None:
        raise LookupError(f"no customer {customer_id}")
    return dict(row)


@skillforge.tool
def refund_payment(order_id: str, payment_id: str, amount: float) -> dict[str, Any]:
    """Refund an amount to the payment an order was paid with, and mark the order refunded.

    Args:
        order_id: the order being refunded.
        payment_id: the payment to refund to (from the order).
        amount: how much to refund.
    """
    conn = _conn()
    row = _order_row(order_id)
    if row["payment_id"] != payment_id:
        raise ValueError(f"payment {payment_id} does not belong to order {order_id}")
    if amount <= 0 or amount > row["total"]:
        raise ValueError(f"refund amount {amount} is outside 0..{row['total']}")
    cur = conn.execute("INSERT INTO refunds (order_id, payment_id, amount) VALUES (?, ?, ?)", (order_id, payment_id, amount))
    conn.execute("UPDATE orders SET status = 'refunded' WHERE id = ?", (order_id,))
    conn.commit()
    return {"refund_id": f"R-{cur.lastrowid}", "amount": amount, "status": "refunded"}


@skillforge.tool
def update_shipping_address(order_id: str, address: str) -> dict[str, Any]:
    """Change where an order ships to.

    Args:
        order_id: the order to change.
        address: the new shipping address, one line.
    """
    conn = _conn()
    row = _order_row(order_id)
    conn.execute(
        "INSERT INTO address_changes (order_id, old, new) VALUES (?, ?, ?)", (order_id, row["shipping_address"], address)
    )
    conn.execute("UPDATE orders SET shipping_address = ?, address_changed = 1 WHERE id = ?", (address, order_id))
    conn.commit()
    return {"order_id": order_id, "shipping_address": address}


@skillforge.tool
def update_email(customer_id: str, email: str) -> dict[str, Any]:
    """Change a customer's email address.

    Args:
        customer_id: the customer, like "C-104".
        email: the new address.
    """
    conn = _conn()
    if "@" not in email:
        raise ValueError(f"{email!r} is not an email address")
    cur = conn.execute("UPDATE customers SET email = ? WHERE id = ?", (email, customer_id))
    if cur.rowcount == 0:
        raise LookupError(f"no customer {customer_id}")
    conn.commit()
    return {"customer_id": customer_id, "email": email}


@skillforge.tool(read=True)
def get_stock(sku: str) -> dict[str, Any]:
    """How many units of a product are in the warehouse.

    Args:
        sku: the product's stock-keeping unit, like "MUG-1".
    """
    row = _conn().execute("SELECT * FROM stock WHERE sku = ?", (sku,)).fetchone()
    if row is None:
        raise LookupError(f"no product {sku}")
    return {"sku": row["sku"], "available": row["available"]}


@skillforge.tool
def send_replacement(order_id: str, sku: str) -> dict[str, Any]:
    """Ship one replacement unit of a product from an order.

    Args:
        order_id: the order the product was bought in.
        sku: the product to replace.
    """
    conn = _conn()
    _order_row(order_id)
    cur = conn.execute("UPDATE stock SET available = available - 1 WHERE sku = ? AND available > 0", (sku,))
    if cur.rowcount == 0:
        raise ValueError(f"{sku} is out of stock")
    ins = conn.execute("INSERT INTO replacements (order_id, sku) VALUES (?, ?)", (order_id, sku))
    conn.commit()
    return {"replacement_id": f"X-{ins.lastrowid}", "order_id": order_id, "sku": sku}


TOOLS = [get_order, get_customer, get_stock, refund_payment, update_shipping_address, update_email, send_replacement]
