"""Orders in a real SQLite file, cancelled with a refund: an agent that always says a fixed number
("within 5-7 business days") and one that says a number it computed (the items' total)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

DB: list[Path] = []  # the database file of the test at hand (set by ``make``)

ORDERS = [  # (order id, status, card's last four digits, item prices)
    ("A1", "pending", "1234", (12.5, 30.0)),
    ("A2", "pending", "9876", (49.99, 50.0)),
    ("A3", "pending", "4242", (5.0, 5.0, 7.25)),
    ("A4", "pending", "1111", (40.0, 2.0)),
    ("A8", "pending", "2222", (61.0, 1.5)),
    ("A6", "pending", "3333", (8.0, 8.0)),
]


def make(path: Path) -> None:
    """A new database at ``path`` with ``ORDERS``; the tools use it from now on."""
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("CREATE TABLE orders (id TEXT PRIMARY KEY, status TEXT, card TEXT)")
        conn.execute("CREATE TABLE items (order_id TEXT, price REAL)")
        for oid, status, card, prices in ORDERS:
            conn.execute("INSERT INTO orders VALUES (?, ?, ?)", (oid, status, card))
            conn.executemany("INSERT INTO items VALUES (?, ?)", [(oid, p) for p in prices])
    conn.close()
    DB[:] = [path]


def _conn() -> sqlite3.Connection:
    return sqlite3.connect(DB[0])


def get_order(order_id: str) -> dict:
    """An order: its status, the card it was paid with, and its items' prices."""
    conn = _conn()
    try:
        row = conn.execute("SELECT status, card FROM orders WHERE id = ?", (order_id,)).fetchone()
        if row is None:
            raise LookupError(f"no order {order_id}")
        prices = [p for (p,) in conn.execute("SELECT price FROM items WHERE order_id = ? ORDER BY rowid", (order_id,))]
    finally:
        conn.close()
    return {"id": order_id, "status": row[0], "card": row[1], "items": [{"price": p} for p in prices]}


def cancel_order(order_id: str) -> dict:
    """Cancel a pending order; returns the cancelled order."""
    conn = _conn()
    with conn:
        conn.execute("UPDATE orders SET status = 'cancelled' WHERE id = ?", (order_id,))
    conn.close()
    return get_order(order_id)


def status(order_id: str) -> str:
    conn = _conn()
    try:
        return conn.execute("SELECT status FROM orders WHERE id = ?", (order_id,)).fetchone()[0]
    finally:
        conn.close()


def fixed_answer(order: dict) -> str:
    """What the agent always says: the card from the order, and a fixed number of days."""
    return f"Cancelled order {order['id']}. The refund goes back to the card ending {order['card']} within 5-7 business days."


def computed_answer(order: dict) -> str:
    """What another agent says: the items' total, a number it computed."""
    return f"Cancelled order {order['id']}: ${sum(i['price'] for i in order['items']):.2f} goes back to the card ending {order['card']}."
