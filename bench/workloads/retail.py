"""A retail customer-service desk on the public tau-bench retail database, and what customers type at it.

The world is tau-bench's retail database (500 users, 1,000 orders, 50 products; vendored in
``bench/data/tau-retail``, MIT) loaded into one SQLite file (``make_world(path)``). The tools are
plain top-level functions written from the dataset's description of them: reads (find a user by
email or by name and zip, a user's, order's or product's details, a calculator) and writes
(cancel, change address, payment method or items of a pending order; return or exchange items of
a delivered order; change a user's address). A write that the order's state does not allow is
refused with an error and changes nothing; every write that goes through leaves a row in
``actions``, so a write that should not have happened shows in the world's state.

``agent`` stands in for a careful model following the store's policy: it authenticates the
customer (email, or name and zip), reads the user and the order, checks that the order is theirs
and in a state that allows the request (only pending orders are cancelled or modified; only
delivered ones returned or exchanged; refunds go to the original payment method or a gift card;
a payment method must be the customer's), then writes, and answers with a sentence saying what it
did or why not. It reads generously: greetings and personas, names in any case, order ids with or
without ``#``, items by name or by their last word ("the kettle and the wall clock"), "everything
except ...", two requests in one message, a change of mind at the end.

``tasks()`` is two days of requests built from real users, orders and products. Day 2 mostly
repeats day 1's phrasings with other values; the tasks flagged ``tempting`` repeat a phrasing in
a world where the right action differs, or carry more than the phrasing did.
"""

from __future__ import annotations

import builtins
import copy
import hashlib
import json
import random
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from . import Task, difference, pristine

__all__ = [
    "READS", "TOOLBOX", "TOOLS", "agent", "calculate", "cancel_pending_order", "exchange_delivered_order_items",
    "find_user_id_by_email", "find_user_id_by_name_zip", "get_order_details", "get_product_details",
    "get_user_details", "list_all_product_types", "make_world", "modify_pending_order_address",
    "modify_pending_order_items", "modify_pending_order_payment", "modify_user_address",
    "return_delivered_order_items", "snapshot", "tasks", "use_world",
]

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "tau-retail"

_db: sqlite3.Connection | None = None

_SCHEMA = """
CREATE TABLE users (
    user_id TEXT PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT NOT NULL, email TEXT NOT NULL,
    address1 TEXT NOT NULL, address2 TEXT NOT NULL, city TEXT NOT NULL, state TEXT NOT NULL,
    country TEXT NOT NULL, zip TEXT NOT NULL
);
CREATE TABLE payment_methods (
    id TEXT PRIMARY KEY, user_id TEXT NOT NULL, pos INTEGER NOT NULL, source TEXT NOT NULL,
    brand TEXT, last_four TEXT, balance REAL
);
CREATE TABLE user_orders (user_id TEXT NOT NULL, pos INTEGER NOT NULL, order_id TEXT NOT NULL, PRIMARY KEY (user_id, pos));
CREATE TABLE orders (
    order_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, status TEXT NOT NULL,
    address1 TEXT NOT NULL, address2 TEXT NOT NULL, city TEXT NOT NULL, state TEXT NOT NULL,
    country TEXT NOT NULL, zip TEXT NOT NULL,
    cancel_reason TEXT, return_items TEXT, return_payment_method_id TEXT,
    exchange_items TEXT, exchange_new_items TEXT, exchange_payment_method_id TEXT, exchange_price_difference REAL
);
CREATE TABLE order_items (
    order_id TEXT NOT NULL, pos INTEGER NOT NULL, item_id TEXT NOT NULL, product_id TEXT NOT NULL,
    name TEXT NOT NULL, price REAL NOT NULL, options TEXT NOT NULL, PRIMARY KEY (order_id, pos)
);
CREATE TABLE fulfillments (order_id TEXT NOT NULL, pos INTEGER NOT NULL, tracking_ids TEXT NOT NULL, item_ids TEXT NOT NULL);
CREATE TABLE payments (
    order_id TEXT NOT NULL, pos INTEGER NOT NULL, transaction_type TEXT NOT NULL, amount REAL NOT NULL,
    payment_method_id TEXT NOT NULL, PRIMARY KEY (order_id, pos)
);
CREATE TABLE products (product_id TEXT PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE variants (
    item_id TEXT PRIMARY KEY, product_id TEXT NOT NULL, options TEXT NOT NULL, available INTEGER NOT NULL, price REAL NOT NULL
);
CREATE TABLE actions (id INTEGER PRIMARY KEY AUTOINCREMENT, tool TEXT NOT NULL, target TEXT NOT NULL, detail TEXT NOT NULL);
"""

_ADDRESS = ("address1", "address2", "city", "state", "country", "zip")
_REASONS = ("no longer needed", "ordered by mistake")


@cache
def _data() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The vendored database (users, orders, products), read once; never mutated."""
    users, orders, products = (json.loads((DATA_DIR / f"{n}.json").read_text()) for n in ("users", "orders", "products"))
    return users, orders, products


# -- the world -------------------------------------------------------------------------


def make_world(path: str | Path) -> None:
    """Create a fresh retail world at ``path`` from the vendored tau-bench database (the file must not exist)."""
    users, orders, products = _data()
    conn = sqlite3.connect(str(path))
    conn.executescript(_SCHEMA)
    for uid, u in users.items():
        a = u["address"]
        conn.execute("INSERT INTO users VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (uid, u["name"]["first_name"], u["name"]["last_name"], u["email"], *(a[k] for k in _ADDRESS)))
        for pos, pm in enumerate(u["payment_methods"].values()):
            conn.execute("INSERT INTO payment_methods VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (pm["id"], uid, pos, pm["source"], pm.get("brand"), pm.get("last_four"), pm.get("balance")))
        conn.executemany("INSERT INTO user_orders VALUES (?, ?, ?)", [(uid, i, o) for i, o in enumerate(u["orders"])])
    for oid, o in orders.items():
        a = o["address"]
        conn.execute("INSERT INTO orders (order_id, user_id, status, address1, address2, city, state, country, zip) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", (oid, o["user_id"], o["status"], *(a[k] for k in _ADDRESS)))
        conn.executemany("INSERT INTO order_items VALUES (?, ?, ?, ?, ?, ?, ?)", [
            (oid, i, it["item_id"], it["product_id"], it["name"], it["price"], json.dumps(it["options"]))
            for i, it in enumerate(o["items"])])
        conn.executemany("INSERT INTO fulfillments VALUES (?, ?, ?, ?)", [
            (oid, i, json.dumps(f["tracking_id"]), json.dumps(f["item_ids"])) for i, f in enumerate(o["fulfillments"])])
        conn.executemany("INSERT INTO payments VALUES (?, ?, ?, ?, ?)", [
            (oid, i, p["transaction_type"], p["amount"], p["payment_method_id"]) for i, p in enumerate(o["payment_history"])])
    for pid, p in products.items():
        conn.execute("INSERT INTO products VALUES (?, ?)", (pid, p["name"]))
        conn.executemany("INSERT INTO variants VALUES (?, ?, ?, ?, ?)", [
            (v["item_id"], pid, json.dumps(v["options"]), int(v["available"]), v["price"]) for v in p["variants"].values()])
    conn.commit()
    conn.close()


def use_world(path: str | Path) -> None:
    """Point the tools at the world in ``path``."""
    global _db
    if _db is not None:
        _db.close()
    _db = sqlite3.connect(str(path))
    _db.row_factory = sqlite3.Row


def snapshot(path: str | Path) -> dict[str, list[list[Any]]]:
    """The world's state as its difference from the vendored database, table by table, sorted.

    ``table`` lists the rows the world has that a fresh world lacks, ``table (removed)`` the rows
    of a fresh world it lacks. Every world starts fresh, so two worlds in the same state give
    equal snapshots and two in different states different ones; the snapshot stays small (a full
    one is ~9,000 rows, which makes comparing two of them row by row slow).
    """
    return difference(path, _pristine())


@cache
def _pristine() -> dict[str, frozenset[tuple[Any, ...]]]:
    """Every table's rows in a fresh world."""
    return pristine(make_world)


def _conn() -> sqlite3.Connection:
    if _db is None:
        raise RuntimeError("no retail world in use: call use_world(path) first")
    return _db


def _log(tool: str, target: str, detail: Any) -> None:
    _conn().execute("INSERT INTO actions (tool, target, detail) VALUES (?, ?, ?)", (tool, target, json.dumps(detail, sort_keys=True)))


def _user(user_id: str) -> dict[str, Any]:
    conn = _conn()
    row = conn.execute("SELECT * FROM users WHERE user_id = ?", (user_id,)).fetchone()
    if row is None:
        raise LookupError(f"user not found: {user_id!r}")
    methods = {}
    for pm in conn.execute("SELECT * FROM payment_methods WHERE user_id = ? ORDER BY pos", (user_id,)):
        m: dict[str, Any] = {"source": pm["source"]}
        if pm["source"] == "credit_card":
            m |= {"brand": pm["brand"], "last_four": pm["last_four"]}
        if pm["source"] == "gift_card":
            m["balance"] = pm["balance"]
        m["id"] = pm["id"]
        methods[pm["id"]] = m
    return {
        "name": {"first_name": row["first_name"], "last_name": row["last_name"]},
        "address": {k: row[k] for k in _ADDRESS},
        "email": row["email"],
        "payment_methods": methods,
        "orders": [r[0] for r in conn.execute("SELECT order_id FROM user_orders WHERE user_id = ? ORDER BY pos", (user_id,))],
    }


def _order(order_id: str) -> dict[str, Any]:
    conn = _conn()
    row = conn.execute("SELECT * FROM orders WHERE order_id = ?", (order_id,)).fetchone()
    if row is None:
        raise LookupError(f"order not found: {order_id!r}")
    order: dict[str, Any] = {
        "order_id": row["order_id"],
        "user_id": row["user_id"],
        "address": {k: row[k] for k in _ADDRESS},
        "items": [
            {"name": r["name"], "product_id": r["product_id"], "item_id": r["item_id"], "price": r["price"],
             "options": json.loads(r["options"])}
            for r in conn.execute("SELECT * FROM order_items WHERE order_id = ? ORDER BY pos", (order_id,))
        ],
        "fulfillments": [
            {"tracking_id": json.loads(r["tracking_ids"]), "item_ids": json.loads(r["item_ids"])}
            for r in conn.execute("SELECT * FROM fulfillments WHERE order_id = ? ORDER BY pos", (order_id,))
        ],
        "status": row["status"],
        "payment_history": [
            {"transaction_type": r["transaction_type"], "amount": r["amount"], "payment_method_id": r["payment_method_id"]}
            for r in conn.execute("SELECT * FROM payments WHERE order_id = ? ORDER BY pos", (order_id,))
        ],
    }
    # the keys a write adds, as tau-bench's orders carry them: only once set
    if row["cancel_reason"] is not None:
        order["cancel_reason"] = row["cancel_reason"]
    if row["return_items"] is not None:
        order["return_items"] = json.loads(row["return_items"])
        order["return_payment_method_id"] = row["return_payment_method_id"]
    if row["exchange_items"] is not None:
        order["exchange_items"] = json.loads(row["exchange_items"])
        order["exchange_new_items"] = json.loads(row["exchange_new_items"])
        order["exchange_payment_method_id"] = row["exchange_payment_method_id"]
        order["exchange_price_difference"] = row["exchange_price_difference"]
    return order


def _method(user_id: str, payment_method_id: str) -> sqlite3.Row:
    row = _conn().execute("SELECT * FROM payment_methods WHERE id = ? AND user_id = ?", (payment_method_id, user_id)).fetchone()
    if row is None:
        raise ValueError(f"payment method not found: {payment_method_id!r}")
    return row


def _add_payment(order_id: str, kind: str, amount: float, payment_method_id: str) -> None:
    conn = _conn()
    pos = conn.execute("SELECT COUNT(*) FROM payments WHERE order_id = ?", (order_id,)).fetchone()[0]
    conn.execute("INSERT INTO payments VALUES (?, ?, ?, ?, ?)", (order_id, pos, kind, round(amount, 2), payment_method_id))


def _credit_gift_card(payment_method_id: str, amount: float) -> None:
    """Gift cards are credited (or, for a negative amount, charged) at once."""
    conn = _conn()
    row = conn.execute("SELECT source, balance FROM payment_methods WHERE id = ?", (payment_method_id,)).fetchone()
    if row is not None and row["source"] == "gift_card":
        conn.execute("UPDATE payment_methods SET balance = ? WHERE id = ?", (round(row["balance"] + amount, 2), payment_method_id))


def _new_items(order: dict[str, Any], item_ids: list[str], new_item_ids: list[str]) -> float:
    """Check a swap of items for other variants of the same products; the price difference (new - old)."""
    conn = _conn()
    _check_items(order, item_ids)
    if len(item_ids) != len(new_item_ids):
        raise ValueError("the number of items to be exchanged should match")
    diff = 0.0
    for old_id, new_id in zip(item_ids, new_item_ids, strict=True):
        old = next(it for it in order["items"] if it["item_id"] == old_id)
        row = conn.execute("SELECT * FROM variants WHERE item_id = ?", (new_id,)).fetchone()
        if row is None or row["product_id"] != old["product_id"] or not row["available"]:
            raise ValueError(f"new item {new_id} not found or not available")
        diff += row["price"] - old["price"]
    return round(diff, 2)


def _check_items(order: dict[str, Any], item_ids: list[str]) -> None:
    have = [it["item_id"] for it in order["items"]]
    for item_id in item_ids:
        if item_id not in have:
            raise ValueError(f"item not found in the order: {item_id}")
        have.remove(item_id)
    if not item_ids:
        raise ValueError("no items given")


# -- tools: reads ----------------------------------------------------------------------


def find_user_id_by_email(email: str) -> str:
    """Find a customer's user id by their email address (case-insensitive).

    Args:
        email: the customer's email, e.g. "noah.brown7922@example.com".

    Returns:
        The user id, e.g. "noah_brown_6181".

    Raises:
        LookupError: no customer has that email.
    """
    row = _conn().execute("SELECT user_id FROM users WHERE lower(email) = lower(?)", (email.strip(),)).fetchone()
    if row is None:
        raise LookupError(f"user not found: no user with email {email!r}")
    return row[0]


def find_user_id_by_name_zip(first_name: str, last_name: str, zip: str) -> str:
    """Find a customer's user id by first name, last name (case-insensitive) and the zip code of their address.

    Args:
        first_name: e.g. "Noah".
        last_name: e.g. "Brown".
        zip: the five-digit zip code, e.g. "80279".

    Returns:
        The user id.

    Raises:
        LookupError: no customer matches.
    """
    row = _conn().execute(
        "SELECT user_id FROM users WHERE lower(first_name) = lower(?) AND lower(last_name) = lower(?) AND zip = ?",
        (first_name.strip(), last_name.strip(), zip.strip()),
    ).fetchone()
    if row is None:
        raise LookupError(f"user not found: no user {first_name} {last_name} with zip {zip}")
    return row[0]


def get_user_details(user_id: str) -> dict:
    """A customer's profile.

    Args:
        user_id: e.g. "noah_brown_6181".

    Returns:
        name (first_name, last_name), address (address1, address2, city, state, country, zip),
        email, payment_methods (by id: source "credit_card" with brand and last_four, "paypal", or
        "gift_card" with balance) and orders (order ids, oldest first).

    Raises:
        LookupError: no such user.
    """
    return _user(user_id)


def get_order_details(order_id: str) -> dict:
    """An order's details.

    Args:
        order_id: the order id with its '#', e.g. "#W6067464".

    Returns:
        order_id, user_id, address, items (name, product_id, item_id, price, options), fulfillments
        (tracking_id, item_ids), status ("pending", "processed", "delivered", "cancelled",
        "return requested", "exchange requested" or "pending (item modified)") and payment_history
        (transaction_type "payment" or "refund", amount, payment_method_id); once set, also
        cancel_reason, return_items and return_payment_method_id, or the exchange_* fields.

    Raises:
        LookupError: no such order.
    """
    return _order(order_id)


def get_product_details(product_id: str) -> dict:
    """A product and all its variants.

    Args:
        product_id: e.g. "9523456873" (an order item's product_id).

    Returns:
        name, product_id and variants (by item id: item_id, options, available, price).

    Raises:
        LookupError: no such product.
    """
    conn = _conn()
    row = conn.execute("SELECT * FROM products WHERE product_id = ?", (product_id,)).fetchone()
    if row is None:
        raise LookupError(f"product not found: {product_id!r}")
    variants = {
        r["item_id"]: {"item_id": r["item_id"], "options": json.loads(r["options"]), "available": bool(r["available"]),
                       "price": r["price"]}
        for r in conn.execute("SELECT * FROM variants WHERE product_id = ? ORDER BY rowid", (product_id,))
    }
    return {"name": row["name"], "product_id": row["product_id"], "variants": variants}


def list_all_product_types() -> dict:
    """Every product the store sells: ``{product name: product_id}``, by name."""
    return {r[0]: r[1] for r in _conn().execute("SELECT name, product_id FROM products ORDER BY name")}


_ARITHMETIC = re.compile(r"[\d\s.+\-*/()]+")


def calculate(expression: str) -> float:
    """Evaluate an arithmetic expression (numbers, + - * / and parentheses), rounded to 2 decimals.

    Args:
        expression: e.g. "47.84 + 488.81".

    Raises:
        ValueError: anything but arithmetic.
    """
    if not _ARITHMETIC.fullmatch(expression):
        raise ValueError(f"invalid characters in expression: {expression!r}")
    return round(float(eval(expression, {"__builtins__": {}}, {})), 2)


# -- tools: writes ---------------------------------------------------------------------


def cancel_pending_order(order_id: str, reason: str) -> dict:
    """Cancel a pending order; every payment is refunded to its method (gift cards are credited at once).

    Args:
        order_id: e.g. "#W6067464".
        reason: "no longer needed" or "ordered by mistake".

    Returns:
        The cancelled order.

    Raises:
        LookupError: no such order.
        ValueError: the order is not pending, or the reason is neither of the two.
    """
    order = _order(order_id)
    if order["status"] != "pending":
        raise ValueError("non-pending order cannot be cancelled")
    if reason not in _REASONS:
        raise ValueError(f"invalid reason: {reason!r}")
    net: dict[str, float] = {}
    for p in order["payment_history"]:
        sign = 1 if p["transaction_type"] == "payment" else -1
        net[p["payment_method_id"]] = net.get(p["payment_method_id"], 0.0) + sign * p["amount"]
    for pm_id, amount in net.items():
        if round(amount, 2) > 0:
            _add_payment(order_id, "refund", amount, pm_id)
            _credit_gift_card(pm_id, amount)
    _conn().execute("UPDATE orders SET status = 'cancelled', cancel_reason = ? WHERE order_id = ?", (reason, order_id))
    _log("cancel_pending_order", order_id, {"reason": reason})
    _conn().commit()
    return _order(order_id)


def modify_pending_order_address(order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str) -> dict:
    """Change the shipping address of a pending order.

    Args:
        order_id: e.g. "#W6067464".
        address1: street and number, e.g. "986 Sunset Drive".
        address2: suite or apartment, "" if none.
        city: e.g. "Denver".
        state: two letters, e.g. "CO".
        country: e.g. "USA".
        zip: five digits.

    Returns:
        The order.

    Raises:
        LookupError: no such order.
        ValueError: the order is not pending.
    """
    order = _order(order_id)
    if not order["status"].startswith("pending"):
        raise ValueError("non-pending order cannot be modified")
    values = (address1, address2, city, state, country, zip)
    _conn().execute(f"UPDATE orders SET {', '.join(f'{k} = ?' for k in _ADDRESS)} WHERE order_id = ?", (*values, order_id))
    _log("modify_pending_order_address", order_id, dict(builtins.zip(_ADDRESS, values, strict=True)))
    _conn().commit()
    return _order(order_id)


def modify_pending_order_payment(order_id: str, payment_method_id: str) -> dict:
    """Pay for a pending order with another of the customer's payment methods; the old payment is refunded.

    Args:
        order_id: e.g. "#W6067464".
        payment_method_id: the new method, e.g. "paypal_5727330" (one of the order's user's).

    Returns:
        The order.

    Raises:
        LookupError: no such order.
        ValueError: the order is not pending, has more than one payment, the method is not the
            customer's or is the current one, or a gift card's balance does not cover the order.
    """
    order = _order(order_id)
    if not order["status"].startswith("pending"):
        raise ValueError("non-pending order cannot be modified")
    if len(order["payment_history"]) != 1 or order["payment_history"][0]["transaction_type"] != "payment":
        raise ValueError("there should be exactly one payment for a pending order")
    paid = order["payment_history"][0]
    pm = _method(order["user_id"], payment_method_id)
    if payment_method_id == paid["payment_method_id"]:
        raise ValueError("the new payment method should be different from the current one")
    if pm["source"] == "gift_card" and pm["balance"] < paid["amount"]:
        raise ValueError("insufficient gift card balance to pay for the order")
    _add_payment(order_id, "payment", paid["amount"], payment_method_id)
    _add_payment(order_id, "refund", paid["amount"], paid["payment_method_id"])
    _credit_gift_card(payment_method_id, -paid["amount"])
    _credit_gift_card(paid["payment_method_id"], paid["amount"])
    _log("modify_pending_order_payment", order_id, {"payment_method_id": payment_method_id})
    _conn().commit()
    return _order(order_id)


def modify_pending_order_items(order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str) -> dict:
    """Swap items of a pending order for other variants of the same products (once per order).

    Args:
        order_id: e.g. "#W6067464".
        item_ids: the items to replace (item ids in the order).
        new_item_ids: for each, an available variant of the same product.
        payment_method_id: pays or receives the price difference (one of the customer's methods).

    Returns:
        The order, now "pending (item modified)".

    Raises:
        LookupError: no such order.
        ValueError: the order is not pending, an item is not in it, a new item is not an available
            variant of the same product, the method is not the customer's, or a gift card's balance
            does not cover the difference.
    """
    order = _order(order_id)
    if order["status"] != "pending":
        raise ValueError("non-pending order cannot be modified")
    diff = _new_items(order, item_ids, new_item_ids)
    pm = _method(order["user_id"], payment_method_id)
    if pm["source"] == "gift_card" and pm["balance"] < diff:
        raise ValueError("insufficient gift card balance to pay for the new item")
    conn = _conn()
    taken: set[int] = set()
    for old_id, new_id in zip(item_ids, new_item_ids, strict=True):
        pos = next(i for i, it in enumerate(order["items"]) if it["item_id"] == old_id and i not in taken)
        taken.add(pos)
        v = conn.execute("SELECT * FROM variants WHERE item_id = ?", (new_id,)).fetchone()
        conn.execute("UPDATE order_items SET item_id = ?, price = ?, options = ? WHERE order_id = ? AND pos = ?",
                     (new_id, v["price"], v["options"], order_id, pos))
    if diff != 0:
        _add_payment(order_id, "payment" if diff > 0 else "refund", abs(diff), payment_method_id)
        _credit_gift_card(payment_method_id, -diff)
    conn.execute("UPDATE orders SET status = 'pending (item modified)' WHERE order_id = ?", (order_id,))
    _log("modify_pending_order_items", order_id, {"item_ids": item_ids, "new_item_ids": new_item_ids, "payment_method_id": payment_method_id})
    conn.commit()
    return _order(order_id)


def return_delivered_order_items(order_id: str, item_ids: list[str], payment_method_id: str) -> dict:
    """Request the return of items of a delivered order; the refund goes to the original payment method or a gift card.

    Args:
        order_id: e.g. "#W6067464".
        item_ids: the items to return (item ids in the order).
        payment_method_id: the order's original payment method, or one of the customer's gift cards.

    Returns:
        The order, now "return requested".

    Raises:
        LookupError: no such order.
        ValueError: the order is not delivered, an item is not in it, or the method is neither.
    """
    order = _order(order_id)
    if order["status"] != "delivered":
        raise ValueError("non-delivered order cannot be returned")
    pm = _method(order["user_id"], payment_method_id)
    if pm["source"] != "gift_card" and payment_method_id != order["payment_history"][0]["payment_method_id"]:
        raise ValueError("payment method should be either the original payment method or a gift card")
    _check_items(order, item_ids)
    _conn().execute("UPDATE orders SET status = 'return requested', return_items = ?, return_payment_method_id = ? WHERE order_id = ?",
                    (json.dumps(sorted(item_ids)), payment_method_id, order_id))
    _log("return_delivered_order_items", order_id, {"item_ids": item_ids, "payment_method_id": payment_method_id})
    _conn().commit()
    return _order(order_id)


def exchange_delivered_order_items(order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str) -> dict:
    """Request an exchange of items of a delivered order for other variants of the same products.

    Args:
        order_id: e.g. "#W6067464".
        item_ids: the items to exchange (item ids in the order).
        new_item_ids: for each, an available variant of the same product.
        payment_method_id: pays or receives the price difference (one of the customer's methods).

    Returns:
        The order, now "exchange requested", with exchange_price_difference (new - old).

    Raises:
        LookupError: no such order.
        ValueError: the order is not delivered, an item is not in it, a new item is not an
            available variant of the same product, the method is not the customer's, or a gift
            card's balance does not cover the difference.
    """
    order = _order(order_id)
    if order["status"] != "delivered":
        raise ValueError("non-delivered order cannot be exchanged")
    diff = _new_items(order, item_ids, new_item_ids)
    pm = _method(order["user_id"], payment_method_id)
    if pm["source"] == "gift_card" and pm["balance"] < diff:
        raise ValueError("insufficient gift card balance to pay for the price difference")
    _conn().execute(
        "UPDATE orders SET status = 'exchange requested', exchange_items = ?, exchange_new_items = ?, "
        "exchange_payment_method_id = ?, exchange_price_difference = ? WHERE order_id = ?",
        (json.dumps(sorted(item_ids)), json.dumps(sorted(new_item_ids)), payment_method_id, diff, order_id),
    )
    _log("exchange_delivered_order_items", order_id, {"item_ids": item_ids, "new_item_ids": new_item_ids, "payment_method_id": payment_method_id})
    _conn().commit()
    return _order(order_id)


def modify_user_address(user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str) -> dict:
    """Change the default address on a customer's profile (orders keep theirs).

    Args:
        user_id: e.g. "noah_brown_6181".
        address1: street and number.
        address2: suite or apartment, "" if none.
        city: the city.
        state: two letters.
        country: e.g. "USA".
        zip: five digits.

    Returns:
        The user.

    Raises:
        LookupError: no such user.
    """
    _user(user_id)
    values = (address1, address2, city, state, country, zip)
    _conn().execute(f"UPDATE users SET {', '.join(f'{k} = ?' for k in _ADDRESS)} WHERE user_id = ?", (*values, user_id))
    _log("modify_user_address", user_id, dict(builtins.zip(_ADDRESS, values, strict=True)))
    _conn().commit()
    return _user(user_id)


TOOLS: list[Callable[..., Any]] = [
    find_user_id_by_email, find_user_id_by_name_zip, get_user_details, get_order_details, get_product_details,
    list_all_product_types, calculate,
    cancel_pending_order, modify_pending_order_address, modify_pending_order_payment, modify_pending_order_items,
    return_delivered_order_items, exchange_delivered_order_items, modify_user_address,
]
READS = frozenset({"find_user_id_by_email", "find_user_id_by_name_zip", "get_user_details", "get_order_details",
                   "get_product_details", "list_all_product_types", "calculate"})
# The agent calls the tools through this dict; the harness puts a Forge's wrappers in it.
TOOLBOX: dict[str, Callable[..., Any]] = {f.__name__: f for f in TOOLS}

# -- the agent: a careful stand-in for a model following the store's policy ---------------

_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9][\w.+-]*@[\w-]+(?:\.[\w-]+)+")
_ORDER_ID = re.compile(r"(?<![\w#])#?\s?[Ww](\d{7})(?!\d)")
_ADDRESS_TEXT = re.compile(
    r"(?P<a1>\d+\s+[A-Z][\w'.]*(?:\s+[A-Z][\w'.]*){0,4})\s*,\s*"
    r"(?:(?P<a2>(?:Suite|Ste\.?|Apt\.?|Apartment|Unit|Floor|Fl\.?|#)\s*[\w-]+)\s*,\s*)?"
    r"(?P<city>[A-Z][A-Za-z.'-]*(?:\s+[A-Z][A-Za-z.'-]*){0,3})\s*,\s*"
    r"(?P<state>[A-Z]{2})\s*,?\s*(?P<zip>\d{5})(?:-\d{4})?"
)
_ZIP_SAID = re.compile(r"\b(?:zip|zipcode|postal code|postcode)(?:\s+code)?(?:\s+is)?\s*[:#]?\s*(\d{5})(?!\d)", re.IGNORECASE)
_ZIP = re.compile(r"(?<![\w#-])(\d{5})(?![\w-])")
_WORD = r"[A-Za-z][A-Za-z'-]*"
_NAME_INTRO = re.compile(
    rf"\b(?:i'?m|i am|this is|my name is|my name's|name is|name:|it's)\s+(?P<first>{_WORD})\s+(?P<last>{_WORD})"
    r"(?=\s*(?:[,.;:(!?\-—–]|$|\s+(?:and|from|here|with|zip|my|at)\b))", re.IGNORECASE)
_NAME_BEFORE_ZIP = re.compile(
    rf"(?<![\w'-])(?P<first>{_WORD})\s+(?P<last>{_WORD})\s*[,(:]?\s*(?:zip(?:\s*code)?(?:\s+is)?:?\s*)?(?P<zip>\d{{5}})(?![\w-])", re.IGNORECASE)
_NAME_HERE = re.compile(r"(?<![\w'-])(?P<first>[A-Z][a-z'-]+)\s+(?P<last>[A-Z][A-Za-z'-]+)\s+here\b")
_NOT_NAMES = {
    "a", "an", "the", "so", "not", "just", "really", "very", "still", "in", "on", "at", "from", "also", "now",
    "here", "back", "sorry", "afraid", "glad", "happy", "new", "busy", "please", "hoping", "looking", "trying",
    "writing", "reaching", "contacting", "moving", "getting", "going", "having", "cancel", "return", "order",
    "my", "your", "it", "email", "thanks", "thank", "hi", "hello", "hey", "and", "zip", "code", "pls", "is",
}
_CHANGED_MIND = re.compile(
    r"\b(?:actually|on second thought|wait|hmm+)\b[\s,.!]*(?:[—–-]\s*)?"
    r"(?=never\s?mind|scratch that|forget (?:it|that|about it)|don'?t|do not|no need|keep it|leave it)", re.IGNORECASE)
_SPLIT = re.compile(
    r"(?<=[.!?;])\s+|\s+[—–]\s+|,\s*(?=just\b)|,?\s+(?:and\s+)?also,?\s+|,?\s+and then\s+"
    r"|,?\s+and\s+(?=(?:please\s+)?(?:can you\s+)?(?:cancel|return|exchange|swap|change|update|ship|send|tell|let me know"
    r"|what|where|switch|pay|charge|list)\b)", re.IGNORECASE)
_NEGATED = re.compile(r"^\W*(?:and\s+|but\s+|oh,?\s+)?(?:please\s+)?(?:don'?t|do not|no need to|never)\b", re.IGNORECASE)
_PRONOUN_ORDER = re.compile(r"\b(?:it|its|that order|this order|the order|that one|the same order)\b", re.IGNORECASE)
_LATEST = re.compile(r"\b(?:latest|most recent|last|newest|recent)\s+order\b", re.IGNORECASE)
_EVERYTHING = re.compile(r"\b(?:everything|all (?:the |of the )?items|all of it|the whole order|the entire order|all of them)\b", re.IGNORECASE)
_EXCEPT = re.compile(r"\b(?:except(?: for)?|but not|apart from|other than|but keep|besides)\b", re.IGNORECASE)
_MISTAKE = re.compile(r"\b(?:mistake|mistakenly|accident|accidentally|by error|wrong (?:one|item|size|thing)|twice|didn'?t mean)", re.IGNORECASE)
_NOT_NEEDED = re.compile(r"\b(?:no longer|don'?t need|do not need|don'?t want|not need|changed my mind|cheaper|better (?:price|deal)"
                         r"|anymore|any more|not needed|found (?:one|it)|too late|won'?t need)", re.IGNORECASE)
_DEFAULT_ADDRESS = re.compile(r"\b(?:default|home|profile|account|usual|current) address\b|\baddress (?:on|in) (?:my )?(?:file|account|profile)\b", re.IGNORECASE)
_SHORT_ALIAS_SKIP = {"set", "kit", "machine", "maker"}
_LETTER_SIZES = {"XS", "S", "M", "L", "XL", "XXL"}


@dataclass(slots=True)
class _Ask:
    intent: str
    order: str | None  # "#W1234567", "latest", or None
    clause: str  # the clause's text (placeholders in it)
    before: str  # the text before the clause (for items named earlier)


@dataclass(slots=True)
class _Request:
    asks: list[_Ask]
    email: str | None
    name: tuple[str, str] | None
    zip: str | None
    addresses: list[dict[str, str]]
    reason: str | None
    changed_mind: bool
    negated: set[str] = field(default_factory=set)


def _intent(clause: str) -> str | None:
    c = clause.lower()
    if re.search(r"\bcancel", c):
        return "cancel"
    if re.search(r"\b(?:exchange|swap|trade)\b", c):
        return "exchange"
    if re.search(r"\breturn\b|\bsend (?:\w+ ){0,4}?back\b", c):
        return "return"
    if re.search(r"⟨address\d⟩|\baddress\b|\bship (?:it|them|order|#?w\d{7})?\s*to\b|\bdeliver(?:ed|y)? (?:it |them )?to\b"
                 r"|\bsend (?:it|them|order \S+|#?w\d{7}) to\b", c):
        return "address"
    if re.search(r"\bpay\b|\bpayment\b|\bcharge\b", c):
        return "payment"
    if not _ORDER_ID.search(clause) and re.search(
            r"\b(?:what|which|list|how many)\b(?:\s+\w+){0,3}\s+orders\b|\bmy orders\b|\borders (?:do i have|are on)\b", c):
        return "list_orders"
    if re.search(r"\bstatus\b|\bwhere\b|\bshipped\b|\btrack|\bupdate on\b|\barriv|\bwhen will\b", c):
        return "status"
    return None


def _parse(task: str) -> _Request:
    text = task
    email = None
    m = _EMAIL.search(text)
    if m:
        email = m[0].rstrip(".")
        text = text[: m.start()] + "⟨email⟩" + text[m.end():]
    addresses = []
    while (m := _ADDRESS_TEXT.search(text)) is not None:
        addresses.append({"address1": m["a1"].strip(), "address2": (m["a2"] or "").strip(), "city": m["city"].strip(),
                          "state": m["state"], "country": "USA", "zip": m["zip"]})
        text = text[: m.start()] + f"⟨address{len(addresses) - 1}⟩" + text[m.end():]
    name = zip_code = None
    for m in _NAME_BEFORE_ZIP.finditer(text):
        if m["first"].lower() not in _NOT_NAMES and m["last"].lower() not in _NOT_NAMES:
            name, zip_code = (m["first"], m["last"]), m["zip"]
            break
    for pattern in (_NAME_INTRO, _NAME_HERE):
        if name is None:
            for m in pattern.finditer(text):
                if m["first"].lower() not in _NOT_NAMES and m["last"].lower() not in _NOT_NAMES:
                    name = (m["first"], m["last"])
                    break
    if zip_code is None:
        m = _ZIP_SAID.search(text) or _ZIP.search(_ORDER_ID.sub(" ", text))
        zip_code = m[1] if m else None
    reason_text = text
    before, changed = "", False
    m = _CHANGED_MIND.search(text)
    if m:
        before, text, changed = text[: m.start()], text[m.end():], True
    reason = None
    if _MISTAKE.search(reason_text):
        reason = "ordered by mistake"
    elif _NOT_NEEDED.search(reason_text):
        reason = "no longer needed"

    last: str | None = None
    for oid in _ORDER_ID.findall(before):  # dropped requests: only which order they were about
        last = f"#W{oid}"
    asks: list[_Ask] = []
    negated: set[str] = set()
    seen = before
    for clause in _SPLIT.split(text):
        if not clause or not clause.strip():
            continue
        ids = [f"#W{d}" for d in _ORDER_ID.findall(clause)]
        intent = _intent(clause)
        prior = seen
        seen += " " + clause
        if intent is None:
            last = ids[-1] if ids else last
            continue
        if _NEGATED.search(clause):
            negated.add(intent)
            last = ids[-1] if ids else last
            continue
        if intent == "list_orders":
            targets: list[str | None] = [None]
        elif ids:
            targets = list(dict.fromkeys(ids)) if intent in ("cancel", "status") else [ids[0]]
        elif _LATEST.search(clause):
            targets = ["latest"]
        else:
            targets = [last]
        for oid in targets:
            ask = _Ask(intent, oid, clause, prior)
            if not any(a.intent == ask.intent and a.order == ask.order for a in asks):
                asks.append(ask)
        last = ids[-1] if ids else last
    return _Request(asks, email, name, zip_code, addresses, reason, changed, negated)


class _Session:
    """One task's work: tool calls (answered from the transcript when a skill already made them)."""

    def __init__(self, transcript: Sequence[Any] | None) -> None:
        self.pending = [(c.tool, c.args, c.result) for c in transcript or () if c.error is None]
        self.user_id: str | None = None
        self.user: dict[str, Any] = {}
        self.orders: dict[str, dict[str, Any]] = {}
        self.products: dict[str, dict[str, Any]] = {}

    def call(self, tool: str, **args: Any) -> Any:
        for i, (t, a, r) in enumerate(self.pending):
            if t == tool and a == args:  # already done before the hand-over: never again
                del self.pending[i]
                return copy.deepcopy(r)
        return TOOLBOX[tool](**args)

    def login(self, req: _Request) -> str | None:
        """Authenticate; ``None`` when done, else what to tell the customer."""
        if self.user_id is not None:
            return None
        try:
            if req.email:
                self.user_id = self.call("find_user_id_by_email", email=req.email)
            elif req.name and req.zip:
                first, last = (w[:1].upper() + w[1:].lower() for w in req.name)
                self.user_id = self.call("find_user_id_by_name_zip", first_name=first, last_name=last, zip=req.zip)
            else:
                return ("Before I can help, I need to verify your identity: could you give me the email on your account, "
                        "or your full name and zip code?")
        except LookupError:
            if req.email:
                return f"I couldn't find an account with the email {req.email}; could you check it, or give me your name and zip code?"
            return f"I couldn't find an account for {req.name[0]} {req.name[1]} with zip code {req.zip}; could you check them?"  # type: ignore[index]
        self.user = self.call("get_user_details", user_id=self.user_id)
        return None

    def order(self, order_id: str) -> dict[str, Any] | None:
        if order_id not in self.orders:
            try:
                self.orders[order_id] = self.call("get_order_details", order_id=order_id)
            except LookupError:
                return None
        return self.orders[order_id]

    def product(self, product_id: str) -> dict[str, Any]:
        if product_id not in self.products:
            self.products[product_id] = self.call("get_product_details", product_id=product_id)
        return self.products[product_id]


def _money(x: float) -> str:
    return f"${x:,.2f}"


def _label(pm: dict[str, Any]) -> str:
    if pm["source"] == "credit_card":
        return f"your {pm['brand']} ending in {pm['last_four']}"
    if pm["source"] == "gift_card":
        return f"your gift card ({pm['id']})"
    if pm["source"] == "paypal":
        return f"your PayPal account ({pm['id']})"
    return pm["id"]


def _names(items: list[dict[str, Any]]) -> str:
    names = [f"the {it['name']}" for it in items]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _aliases(name: str) -> set[str]:
    n = name.lower()
    words = n.split()
    out = {n}
    if len(words) > 2:
        out.add(" ".join(words[-2:]))
    if len(words) > 1 and words[-1] not in _SHORT_ALIAS_SKIP:
        out.add(words[-1])
    if n == "t-shirt":
        out |= {"tshirt", "t shirt", "tee", "shirt"}
    if n == "e-reader":
        out.add("ereader")
    return out | {a + "s" for a in out if not a.endswith("s")} | {a + "es" for a in out if a.endswith(("sh", "ch"))}


@cache
def _alias_index() -> dict[str, frozenset[str]]:
    """Every way of naming a product (``kettle``, ``electric kettles``) → the product names it fits."""
    index: dict[str, set[str]] = {}
    for p in _data()[2].values():
        for a in _aliases(p["name"]):
            index.setdefault(a, set()).add(p["name"])
    return {a: frozenset(v) for a, v in index.items()}


def _mentions(text: str) -> list[tuple[int, int, frozenset[str]]]:
    """Products named in ``text``: (start, end, product names the words fit), in order, longest names first."""
    low = text.lower()
    taken: list[tuple[int, int]] = []
    found = []
    for alias in sorted(_alias_index(), key=lambda a: (-len(a), a)):
        for m in re.finditer(rf"(?<![\w-]){re.escape(alias)}(?![\w-])", low):
            if not any(a < m.end() and m.start() < b for a, b in taken):
                taken.append(m.span())
                found.append((m.start(), m.end(), _alias_index()[alias]))
    return sorted(found, key=lambda f: f[0])


def _pick_items(order: dict[str, Any], text: str) -> tuple[list[int], str | None]:
    """Which of the order's items ``text`` names (positions), or why that can't be told."""
    items = order["items"]
    cut = _EXCEPT.search(text)
    keep_text, skip_text = (text[: cut.start()], text[cut.end():]) if cut else (text, "")
    chosen: list[int] = list(range(len(items))) if _EVERYTHING.search(keep_text) else []
    for part, into in ((keep_text, "keep"), (skip_text, "skip")):
        for start, _end, products in _mentions(part):
            fits = [i for i, it in enumerate(items) if it["name"] in products]
            if not fits:
                what = next(iter(products)) if len(products) == 1 else part[start:_end]
                return [], f"I don't see a{'n' if what[:1].lower() in 'aeiou' else ''} {what} in order {order['order_id']}."
            if len({items[i]["item_id"] for i in fits}) > 1:
                words = set(re.findall(r"[\w.-]+", part[max(0, start - 40): start].lower()))
                narrowed = [i for i in fits if words & {str(v).lower() for v in items[i]["options"].values()}]
                if len({items[i]["item_id"] for i in narrowed}) == 1:
                    fits = narrowed
                else:
                    which = "; ".join(
                        f"{items[i]['name']} ({', '.join(str(v) for v in items[i]['options'].values())})" for i in fits)
                    return [], f"Order {order['order_id']} has more than one item that fits: {which}. Which one do you mean?"
            i = fits[0]
            if into == "keep" and i not in chosen:
                chosen.append(i)
            elif into == "skip" and i in chosen:
                chosen.remove(i)
    return sorted(chosen), None


def _method_wanted(text: str) -> dict[str, str] | None:
    """The payment method the text asks for: a filter on the user's methods, {"original": ...}, or None."""
    low = text.lower()
    if re.search(r"\boriginal (?:payment|method|card)|\bsame (?:card|payment|method)\b|\bhow i paid\b", low):
        return {"original": "yes"}
    if "gift card" in low or "giftcard" in low:
        return {"source": "gift_card"}
    if "paypal" in low:
        return {"source": "paypal"}
    m = re.search(r"\bending(?: in)?\s+(\d{4})\b", low)
    if m:
        return {"source": "credit_card", "last_four": m[1]}
    for brand in ("visa", "mastercard"):
        if brand in low:
            return {"source": "credit_card", "brand": brand}
    if re.search(r"\b(?:credit|debit) card\b|\bmy card\b", low):
        return {"source": "credit_card"}
    return None


def _describe(wanted: dict[str, str]) -> str:
    if wanted.get("source") == "gift_card":
        return "gift card"
    if wanted.get("source") == "paypal":
        return "PayPal account"
    if "last_four" in wanted:
        return f"card ending in {wanted['last_four']}"
    if "brand" in wanted:
        return f"{wanted['brand']} card"
    return "credit card"


def _find_method(s: _Session, wanted: dict[str, str]) -> tuple[dict[str, Any] | None, str | None]:
    fits = [pm for pm in s.user["payment_methods"].values() if all(pm.get(k) == v for k, v in wanted.items())]
    if not fits:
        return None, f"I don't see a {_describe(wanted)} on your account."
    if len(fits) > 1:
        return None, f"You have {len(fits)} of those on file ({', '.join(_label(pm)[5:] for pm in fits)}); which one should I use?"
    return fits[0], None


def _size_like(key: str) -> bool:
    return key.split()[-1] in ("size", "length", "height", "diameter", "pieces", "capacity", "thickness")


def _target(product: dict[str, Any], current: dict[str, Any], text: str) -> dict[str, str]:
    """The options the text asks for (key → value), read against the product's variants."""
    values: dict[str, set[str]] = {}
    for v in product["variants"].values():
        for k, val in v["options"].items():
            values.setdefault(str(val), set()).add(k)
    found: dict[str, str] = {}
    taken: list[tuple[int, int]] = []
    for val in sorted(values, key=lambda x: (-len(x), x)):
        keys = sorted(values[val])
        short = val.isdigit() or val in _LETTER_SIZES or val.lower() in ("yes", "no", "none")
        for m in re.finditer(rf"(?<![\w-]){re.escape(val)}(?![\w-])", text, re.IGNORECASE):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            head = text[max(0, m.start() - 20): m.start()].lower()
            named = [k for k in keys if re.search(rf"\b{re.escape(k.split()[-1].lower())}\s+(?:of\s+)?$", head)]
            if short and not named:
                continue
            key = (named or [k for k in keys if current.get(k) != val] or keys)[0]
            found.setdefault(key, val)
            taken.append(m.span())
    return found


def _render_options(opts: dict[str, str]) -> str:
    return " and ".join(f"{k} {v}" if _size_like(k) else v for k, v in opts.items())


def _cancel(s: _Session, req: _Request, oid: str, order: dict[str, Any]) -> str:
    status = order["status"]
    if status == "cancelled":
        return f"Order {oid} is already cancelled, so there's nothing more to do."
    if status != "pending":
        tail = {"delivered": " Since it's been delivered, I can help you return its items instead.",
                "processed": " It has already shipped; once it's delivered you can return it."}.get(status, "")
        return f"I can't cancel order {oid}: it is {status}, and only pending orders can be cancelled.{tail}"
    if req.reason is None:
        return f"Could you tell me why you'd like to cancel order {oid}: is it no longer needed, or was it ordered by mistake?"
    done = s.call("cancel_pending_order", order_id=oid, reason=req.reason)
    s.orders[oid] = done
    refunds = [p for p in done["payment_history"][len(order["payment_history"]):] if p["transaction_type"] == "refund"]
    money = " and ".join(
        f"{_money(p['amount'])} to {_label(s.user['payment_methods'][p['payment_method_id']])}"
        + (" (already credited)" if p["payment_method_id"].startswith("gift_card") else " within 5-7 business days")
        for p in refunds)
    return f"I've cancelled order {oid} (reason: {req.reason}). You'll be refunded {money}."


def _status(s: _Session, oid: str, order: dict[str, Any]) -> str:
    status = order["status"]
    items = ", ".join(it["name"] for it in order["items"])
    tracking = [t for f in order["fulfillments"] for t in f["tracking_id"]]
    if status == "pending":
        return f"Order {oid} is pending: it hasn't shipped yet. It has {len(order['items'])} item(s): {items}."
    if status == "processed":
        return f"Order {oid} has shipped (tracking number {', '.join(tracking)}) and is on its way: {items}."
    if status == "delivered":
        return f"Order {oid} was delivered ({items}); tracking number {', '.join(tracking)}."
    if status == "cancelled":
        return f"Order {oid} was cancelled" + (f" ({order['cancel_reason']})." if "cancel_reason" in order else ".")
    return f"Order {oid} is {status}: {items}."


def _list_orders(s: _Session) -> str:
    orders = s.user["orders"]
    if not orders:
        return "I don't see any orders on your account."
    return f"You have {len(orders)} order{'s' if len(orders) != 1 else ''}: {', '.join(orders)}."


def _address(s: _Session, req: _Request, ask: _Ask, oid: str, order: dict[str, Any]) -> str:
    m = re.search(r"⟨address(\d)⟩", ask.clause)
    if m:
        new = req.addresses[int(m[1])]
    elif _DEFAULT_ADDRESS.search(ask.clause):
        new = dict(s.user["address"])
    else:
        return f"Which address should order {oid} go to? Please give me the full address with the zip code."
    if not order["status"].startswith("pending"):
        return f"I can't change the address of order {oid}: it is {order['status']}, and only pending orders can be changed."
    one_line = ", ".join(x for x in (new["address1"], new["address2"], new["city"], f"{new['state']} {new['zip']}") if x)
    if all(order["address"][k] == new[k] for k in _ADDRESS):
        return f"Order {oid} is already going to {one_line}, so I left it as it is."
    done = s.call("modify_pending_order_address", order_id=oid, **new)
    s.orders[oid] = done
    return f"Done: order {oid} will now ship to {one_line}."


def _payment(s: _Session, ask: _Ask, oid: str, order: dict[str, Any]) -> str:
    wanted = _method_wanted(ask.clause)
    if wanted is None or "original" in wanted:
        return f"Which payment method would you like to use for order {oid}?"
    if not order["status"].startswith("pending"):
        return f"I can't change the payment of order {oid}: it is {order['status']}, and only pending orders can be changed."
    pm, why = _find_method(s, wanted)
    if pm is None:
        return why or ""
    paid = order["payment_history"]
    if len(paid) != 1:
        return f"Order {oid} has already had its payment changed, so I can't change it again."
    if paid[0]["payment_method_id"] == pm["id"]:
        return f"Order {oid} is already paid with {_label(pm)}; nothing to change."
    if pm["source"] == "gift_card" and pm["balance"] < paid[0]["amount"]:
        return (f"Your gift card balance ({_money(pm['balance'])}) doesn't cover order {oid} ({_money(paid[0]['amount'])}), "
                f"so I haven't changed the payment.")
    done = s.call("modify_pending_order_payment", order_id=oid, payment_method_id=pm["id"])
    s.orders[oid] = done
    old = s.user["payment_methods"][paid[0]["payment_method_id"]]
    return (f"Order {oid} is now paid with {_label(pm)}; the {_money(paid[0]['amount'])} charged to {_label(old)} "
            f"will be refunded.")


def _return(s: _Session, ask: _Ask, oid: str, order: dict[str, Any]) -> str:
    if order["status"] != "delivered":
        return f"I can't return items from order {oid}: it is {order['status']}, and only delivered orders can be returned."
    text = ask.clause if _mentions(ask.clause) or _EVERYTHING.search(ask.clause) else ask.before + " " + ask.clause
    picked, why = _pick_items(order, text)
    if why:
        return why
    if not picked:
        return f"Which items from order {oid} would you like to return?"
    original = order["payment_history"][0]["payment_method_id"]
    wanted = _method_wanted(ask.clause)
    if wanted is None or "original" in wanted:
        pm = s.user["payment_methods"][original]
    else:
        pm, why = _find_method(s, wanted)
        if pm is None:
            return why or ""
        if pm["source"] != "gift_card" and pm["id"] != original:
            return (f"Refunds for returns can only go to the original payment method ({_label(s.user['payment_methods'][original])}) "
                    f"or a gift card; which would you prefer?")
    items = [order["items"][i] for i in picked]
    if len(items) == 1:
        total = items[0]["price"]
    else:
        total = s.call("calculate", expression=" + ".join(str(it["price"]) for it in items))
    done = s.call("return_delivered_order_items", order_id=oid, item_ids=[it["item_id"] for it in items], payment_method_id=pm["id"])
    s.orders[oid] = done
    return (f"I've requested a return of {_names(items)} from order {oid}. Once we receive "
            f"{'it' if len(items) == 1 else 'them'}, {_money(total)} will be refunded to {_label(pm)}.")


def _exchange(s: _Session, ask: _Ask, oid: str, order: dict[str, Any]) -> str:
    status = order["status"]
    if status not in ("delivered", "pending"):
        return (f"I can't exchange items from order {oid}: it is {status}. Delivered orders can be exchanged, "
                f"and pending ones changed before they ship.")
    in_clause = bool(_mentions(ask.clause))
    picked, why = _pick_items(order, ask.clause if in_clause else ask.before)
    if why:
        return why
    if len(picked) != 1:
        return f"Which item from order {oid} would you like to exchange, and for what?"
    item = order["items"][picked[0]]
    # what they want instead is said after the item and after the verb ("the kettle ... doesn't fit, so I'd like to
    # exchange it for the red one"; "swap my kettle for a red one")
    verb = re.search(r"\b(?:exchange|swap|trade)\b", ask.clause, re.IGNORECASE)
    start = max([verb.end() if verb else 0] + [e for _s, e, _p in _mentions(ask.clause)])
    target_text = re.split(r"[,;?!]|\.(?:\s|$)", ask.clause[start:])[0]
    product = s.product(item["product_id"])
    change = _target(product, item["options"], target_text)
    if not change:
        return f"What would you like instead of your {item['name']} ({', '.join(map(str, item['options'].values()))})?"
    new_opts = {**item["options"], **change}
    wanted_text = _render_options(change)
    if new_opts == item["options"]:
        return f"Your {item['name']} in order {oid} is already {wanted_text}, so there's nothing to exchange."
    new = next((v for v in product["variants"].values() if v["options"] == new_opts), None)
    if new is None:
        return f"We don't carry the {item['name']} in {wanted_text} with your other options, so I haven't changed anything."
    if not new["available"]:
        return f"Sorry, the {item['name']} in {wanted_text} is out of stock right now, so I haven't changed anything."
    original = order["payment_history"][0]["payment_method_id"]
    wanted = _method_wanted(ask.clause)
    if wanted is None or "original" in wanted:
        pm = s.user["payment_methods"][original]
    else:
        pm, why = _find_method(s, wanted)
        if pm is None:
            return why or ""
    diff = s.call("calculate", expression=f"{new['price']} - {item['price']}")
    if pm["source"] == "gift_card" and pm["balance"] < diff:
        return (f"Your gift card balance ({_money(pm['balance'])}) doesn't cover the price difference of {_money(diff)}; "
                f"which other payment method should I use?")
    args = {"order_id": oid, "item_ids": [item["item_id"]], "new_item_ids": [new["item_id"]], "payment_method_id": pm["id"]}
    if status == "pending":
        s.orders[oid] = s.call("modify_pending_order_items", **args)
        head = (f"Order {oid} hasn't shipped yet, so I've changed the {item['name']} in it to the one in {wanted_text} "
                f"(item {new['item_id']}).")
    else:
        s.orders[oid] = s.call("exchange_delivered_order_items", **args)
        head = (f"I've requested an exchange of the {item['name']} from order {oid} for the one in {wanted_text} "
                f"(item {new['item_id']}); you'll get instructions for sending the old one back.")
    if diff > 0:
        return f"{head} The price difference of {_money(diff)} will be charged to {_label(pm)}."
    if diff < 0:
        return f"{head} You'll get {_money(-diff)} back on {_label(pm)}."
    return f"{head} There's no price difference."


def _do(s: _Session, req: _Request, ask: _Ask) -> str:
    if ask.intent == "list_orders":
        return _list_orders(s)
    oid = ask.order
    if oid == "latest":
        if not s.user["orders"]:
            return "I don't see any orders on your account."
        oid = s.user["orders"][-1]
    if oid is None:
        return "Which order do you mean? Please give me the order number (it starts with #W)."
    order = s.order(oid)
    if order is None:
        return f"I couldn't find an order {oid}; could you check the number?"
    if order["user_id"] != s.user_id:
        return f"Order {oid} isn't on your account, so I can't help with it here."
    if ask.intent == "cancel":
        return _cancel(s, req, oid, order)
    if ask.intent == "status":
        return _status(s, oid, order)
    if ask.intent == "address":
        return _address(s, req, ask, oid, order)
    if ask.intent == "payment":
        return _payment(s, ask, oid, order)
    if ask.intent == "return":
        return _return(s, ask, oid, order)
    if ask.intent == "exchange":
        return _exchange(s, ask, oid, order)
    return "Sorry, I couldn't tell what you need."


def agent(task: str, transcript: Sequence[Any] | None = None) -> str:
    """Serve a customer's message with the tools; continue from ``transcript`` (calls already made) if given."""
    req = _parse(task)
    s = _Session(transcript)
    if not req.asks:
        if req.changed_mind:
            return "OK, I've left everything as it is."
        return "Sorry, I couldn't tell what you need; could you tell me a bit more?"
    why = s.login(req)
    if why is not None:
        return why
    answers = [_do(s, req, a) for a in req.asks]
    if req.changed_mind:
        answers.insert(0, "OK, I won't do that.")
    return " ".join(answers)


# -- the stream: two days of customer messages ---------------------------------------------

PHRASINGS: dict[str, list[str]] = {
    "cancel": [
        "Hi, I'm {name}, zip code {zip}. Please cancel order {oid} — {why}.",
        "My email is {email}. I want to cancel {oid} because {why}.",
        "{persona} Can you cancel my order {oid}? {Why}. Email: {email}",
        "cancel {oid} pls, {why}. {name} {zip}",
        "Hello! This is {name} (zip {zip}). I'd like to cancel order {oid}; {why}. Thanks!",
    ],
    "status": [
        "Hi, what's the status of order {oid}? My email is {email}.",
        "Where is my order {oid}? I'm {name}, zip {zip}.",
        "{persona} Has {oid} shipped yet? — {name}, {zip}",
        "Where's my latest order? Email: {email}",
    ],
    "return": [
        "Hi, I'm {name} (zip {zip}). I'd like to return the {item} from order {oid}.",
        "My email is {email}. Please return {items} from {oid}, refund to the original payment method.",
        "{persona} I want to send back {items} from order {oid}. Email {email}, thanks!",
        "Return everything in order {oid} except the {item}, please. {name}, zip {zip}.",
        "I'd like to return the {item} from {oid} and get the refund on my gift card. My email is {email}.",
    ],
    "exchange": [
        "Hi, I'm {name} (zip {zip}). Can I exchange the {item} from order {oid} for the same one in {target}?",
        "Email: {email}. I'd like to swap my {item} in {oid} for one in {target}.",
        ("{persona} The {item} from order {oid} doesn't suit me, so I'd like to exchange it for the {target} version. "
         "My email is {email}."),
        "exchange {item} in {oid} to {target}, charge any difference to my gift card. {name} {zip}",
    ],
    "address": [
        "Hi, I'm {name}, zip {zip}. Please ship order {oid} to {address} instead.",
        "My email is {email}. Can you change the shipping address on {oid} to {address}?",
        "{persona} Could you send order {oid} to my default address? I just updated it. {name}, zip {zip}.",
        "update the delivery address for {oid}: {address}. email {email}",
    ],
    "payment": [
        "Hi, I'm {name} (zip {zip}). I'd like to pay for order {oid} with my {pm} instead.",
        "My email is {email}. Please switch the payment on {oid} to my {pm}.",
        "{persona} Can you charge order {oid} to my {pm} instead of what I used? {email}",
        "change payment method for {oid} to {pm} — {name}, {zip}",
    ],
    "list_orders": [
        "Hi, what orders do I have? My email is {email}.",
        "Can you list my orders? I'm {name}, zip {zip}.",
        "{persona} Which orders are on my account? Email: {email}",
        "how many orders do i have — {name} {zip}",
    ],
    "two_requests": [
        "Hi, I'm {name} ({zip}). Please cancel order {oid} because {why}, and tell me the status of {oid2}.",
        "My email is {email}. Return the {item} from {oid}, and also tell me where {oid2} is.",
        "Cancel {oid} ({why}) and change the address of {oid2} to {address}. My email is {email}.",
        "{name}, zip {zip}: what's the status of {oid}? And please cancel {oid2}, {why}.",
    ],
    "changed_mind": [
        "Hi, I'm {name} (zip {zip}). Please cancel order {oid}, {why}. Actually, don't cancel it, just tell me its status.",
        ("My email is {email}. I want to return the {item} from {oid}. Actually, never mind — keep it, just tell me what "
         "orders I have."),
        ("Please change the address of {oid} to {address}. On second thought, don't change anything, just tell me where it "
         "is. {name}, zip {zip}."),
    ],
}
PERSONAS = [
    "I'm in a bit of a rush today.", "Long-time customer here.", "I'm not great with computers, sorry.",
    "I work nights, so sorry for the odd hour.", "Hope you're having a good day!", "Quick question.",
    "I'm a teacher and only have a few minutes.", "First time contacting support.",
]
WHY = [  # what customers say, and the policy reason it means
    ("I don't need it anymore", "no longer needed"), ("I ordered it by mistake", "ordered by mistake"),
    ("I changed my mind", "no longer needed"), ("I found a better price elsewhere", "no longer needed"),
    ("I accidentally ordered the wrong size", "ordered by mistake"), ("it was a mistake", "ordered by mistake"),
    ("we won't need it after all", "no longer needed"),
]
_EXCHANGE_KEYS = {"color", "size", "material", "capacity", "storage", "screen size", "length", "thickness", "height"}


def _q(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def _distinct_names(o: dict[str, Any]) -> bool:
    names = [it["name"] for it in o["items"]]
    return len(set(names)) == len(names)


class _Stream:
    """Builds tasks: picks real users, orders and items, renders a phrasing, and sets the world up for the branch."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.users, self.orders, self.products = _data()
        self.uids = sorted(self.users)
        self.used: set[str] = set()
        self.first: dict[tuple[str, int], str] = {}  # (kind, phrasing) → who asked first on day 1
        self.first_k: dict[tuple[str, int], int] = {}  # (kind, phrasing) → how many items / orders on day 1
        self.first_pos: dict[tuple[str, int], int] = {}  # (kind, phrasing) → the order's place in the user's list
        self.first_reason: dict[tuple[str, int], str] = {}  # (kind, phrasing) → the policy reason on day 1
        self.first_status: dict[tuple[str, int], str] = {}  # (kind, phrasing) → the order's status on day 1
        self.address: dict[str, dict[str, str]] = {}  # user addresses the stream changed
        self.asked: set[str] = set()  # customers who wrote in (any task)
        self.moved: set[str] = set()  # customers whose profile address a task changes: nobody else's task is theirs

    # -- picking ---------------------------------------------------------------------------

    def pick(self, pred: Callable[[dict[str, Any]], bool], prefer: str | None = None,
             user_ok: Callable[[str], bool] | None = None) -> tuple[str, str]:
        """An unused order that ``pred`` accepts: the preferred customer's if they have one."""
        if prefer is not None and prefer not in self.moved and (user_ok is None or user_ok(prefer)):
            mine = [o for o in self.users[prefer]["orders"] if o not in self.used and pred(self.orders[o])]
            if mine:
                oid = self.rng.choice(mine)
                self.used.add(oid)
                return prefer, oid
        pool = [(u, o) for u in self.uids if u not in self.moved and (user_ok is None or user_ok(u))
                for o in self.users[u]["orders"] if o not in self.used and pred(self.orders[o])]
        uid, oid = self.rng.choice(pool)
        self.used.add(oid)
        return uid, oid

    def other_order(self, uid: str, pred: Callable[[dict[str, Any]], bool]) -> str | None:
        mine = [o for o in self.users[uid]["orders"] if o not in self.used and pred(self.orders[o])]
        if not mine:
            return None
        oid = self.rng.choice(mine)
        self.used.add(oid)
        return oid

    def force(self, oid: str, status: str) -> list[str]:
        """Statements that put an order (as in the data) into ``status``: the world moved on overnight."""
        o = self.orders[oid]
        if o["status"] == status:
            return []
        q = _q(oid)
        sql = [f"UPDATE orders SET status = {_q(status)} WHERE order_id = {q}"]
        if o["status"] == "cancelled":
            sql.append(f"DELETE FROM payments WHERE order_id = {q} AND transaction_type = 'refund'")
        if status == "pending":
            sql.append(f"DELETE FROM fulfillments WHERE order_id = {q}")
        elif status in ("processed", "delivered") and not o["fulfillments"]:
            tracking = str(int(hashlib.sha256(oid.encode()).hexdigest()[:12], 16))[:12]
            items = json.dumps([it["item_id"] for it in o["items"]])
            sql.append(f"INSERT INTO fulfillments VALUES ({q}, 0, {_q(json.dumps([tracking]))}, {_q(items)})")
        elif status == "cancelled":
            paid = o["payment_history"][0]
            sql.append(f"INSERT INTO payments VALUES ({q}, {len(o['payment_history'])}, 'refund', {paid['amount']!r}, "
                       f"{_q(paid['payment_method_id'])})")
        return sql

    def two_left(self, uid: str) -> bool:
        """The customer has at least two orders the stream hasn't used."""
        return sum(o not in self.used for o in self.users[uid]["orders"]) >= 2

    def user_address(self, uid: str) -> dict[str, str]:
        return self.address.get(uid, self.users[uid]["address"])

    # -- rendering -------------------------------------------------------------------------

    def ident(self, uid: str) -> dict[str, str]:
        u = self.users[uid]
        first, last = u["name"]["first_name"], u["name"]["last_name"]
        r = self.rng.random()
        name = f"{first} {last}" if r < 0.7 else f"{first} {last}".lower() if r < 0.9 else f"{first} {last}".upper()
        return {"email": u["email"], "name": name, "zip": self.user_address(uid)["zip"], "persona": self.rng.choice(PERSONAS)}

    def oid_text(self, oid: str, bare: bool | None = None) -> str:
        if bare is None:
            bare = self.rng.random() < 0.2
        return oid[1:] if bare else oid

    def item_text(self, o: dict[str, Any], i: int) -> str:
        """How a customer names an order's item: its name in some case, or a short word only it fits in this order."""
        name = o["items"][i]["name"]
        short = [a for a in sorted(_aliases(name)) if " " not in a and not a.endswith("s") and a != name.lower()
                 and sum(it["name"] in _alias_index()[a] for it in o["items"]) == 1]
        r = self.rng.random()
        if short and r < 0.35:
            return short[-1]
        return name if r < 0.6 else name.lower()

    def items_text(self, o: dict[str, Any], idx: list[int]) -> str:
        parts = [f"the {self.item_text(o, i)}" for i in idx]
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]

    def address_text(self, a: dict[str, str], suite: bool = True) -> str:
        return ", ".join(x for x in (a["address1"], a["address2"] if suite else "", a["city"], f"{a['state']} {a['zip']}") if x)

    def new_address(self, uid: str, same_zip: bool = False) -> dict[str, str]:
        mine = self.user_address(uid)
        other = self.users[self.rng.choice([u for u in self.uids if self.users[u]["address"]["address1"] != mine["address1"]])]
        a = dict(other["address"])
        if same_zip:
            a |= {k: mine[k] for k in ("city", "state", "zip")}
        return a

    # -- exchanges -------------------------------------------------------------------------

    def swaps(self, o: dict[str, Any], available: bool) -> list[tuple[int, str, str, dict[str, Any]]]:
        """(item position, option key, new value, new variant) for one-option changes of the order's unique items."""
        out = []
        for i, it in enumerate(o["items"]):
            if [x["name"] for x in o["items"]].count(it["name"]) != 1:
                continue
            for v in self.products[it["product_id"]]["variants"].values():
                diff = [k for k in it["options"] if v["options"].get(k) != it["options"][k]]
                if len(diff) == 1 and v["available"] == available and diff[0] in _EXCHANGE_KEYS:
                    out.append((i, diff[0], v["options"][diff[0]], v))
        return out

    # -- one task --------------------------------------------------------------------------

    def make(self, kind: str, i: int, branch: str = "normal", day: int = 1, tempting: bool = False, why: str = "") -> Task:
        key = (kind, i)
        prefer = self.first.get(key) if tempting else None
        setup: list[str] = []
        v: dict[str, str] = {}
        uid = ""
        rng = self.rng
        if kind == "cancel":
            uid, oid, setup = self._cancel_order(branch, prefer)
            why_text, _reason = WHY[rng.randrange(len(WHY))]
            if branch == "reason_flip":  # the other reason than the first asker gave
                first_reason = self.first_reason.get(key, "no longer needed")
                why_text = rng.choice([w for w, r in WHY if r != first_reason])
            elif day == 1:
                self.first_reason.setdefault(key, dict(WHY)[why_text])
            v |= {"oid": self.oid_text(oid), "why": why_text, "Why": why_text[0].upper() + why_text[1:]}
            if branch == "position":
                v["oid"] = self.oid_text(oid, bare=True)
        elif kind == "status":
            uid, oid, setup, bare = self._status_order(i, branch, prefer, day)
            v["oid"] = self.oid_text(oid, bare)
        elif kind == "return":
            uid, oid, setup, vals = self._return_task(i, branch, prefer, day)
            v |= vals
        elif kind == "exchange":
            uid, oid, setup, vals = self._exchange_task(i, branch, prefer)
            v |= vals
        elif kind == "address":
            uid, oid, setup, vals = self._address_task(i, branch, prefer)
            v |= vals
        elif kind == "payment":
            uid, oid, setup, vals = self._payment_task(i, branch, prefer)
            v |= vals
        elif kind == "list_orders":
            k = {"more": rng.choice([4, 5]), "one": 1, "none": 0}.get(branch, self.first_k.get(key, rng.choice([2, 3])))
            if day == 1:
                self.first_k.setdefault(key, k)
            uid = rng.choice([u for u in self.uids if len(self.users[u]["orders"]) == k and u not in self.moved])
        elif kind == "two_requests":
            uid, setup, vals = self._two_task(i, branch, prefer)
            v |= vals
        elif kind == "changed_mind":
            uid, setup, vals = self._mind_task(i, prefer)
            v |= vals
        if day == 1:
            self.first.setdefault(key, uid)
        self.asked.add(uid)
        v = self.ident(uid) | v
        return Task(PHRASINGS[kind][i].format(**v), tuple(setup), tempting, kind, day, why)

    def _cancel_order(self, branch: str, prefer: str | None) -> tuple[str, str, list[str]]:
        if branch == "not_theirs":  # the customer gives someone else's pending order
            uid = prefer or self.rng.choice([u for u in self.uids if u not in self.moved])
            _owner, oid = self.pick(lambda o: o["status"] == "pending" and o["user_id"] != uid)
            return uid, oid, []
        if branch == "unknown":
            uid = prefer or self.rng.choice([u for u in self.uids if u not in self.moved])
            oid = next(f"#W{n}" for n in (self.rng.randrange(1_000_000, 10_000_000) for _ in range(100)) if f"#W{n}" not in self.orders)
            return uid, oid, []
        if branch == "gift_card":
            uid, oid = self.pick(lambda o: o["status"] == "pending" and o["payment_history"][0]["payment_method_id"].startswith("gift_card"),
                                 prefer)
            return uid, oid, []
        if branch == "cancelled":  # asked again: the order was cancelled since (or long ago)
            uid, oid = self.pick(lambda o: True, prefer)
            return uid, oid, self.force(oid, "cancelled")
        status = {"processed": "processed", "delivered": "delivered"}.get(branch, "pending")
        not_gift = lambda o: not o["payment_history"][0]["payment_method_id"].startswith("gift_card")
        if status != "pending":  # the same kind of order, but it moved on overnight
            uid, oid = self.pick(not_gift, prefer)
            return uid, oid, self.force(oid, status)
        uid, oid = self.pick(lambda o: o["status"] == "pending" and not_gift(o), prefer)
        return uid, oid, []

    def _status_order(self, i: int, branch: str, prefer: str | None, day: int) -> tuple[str, str, list[str], bool | None]:
        key = ("status", i)
        if i == 3:  # "my latest order": no id in the text
            want = {"latest_pending": "pending"}.get(branch)
            first_status = self.first_status.get(key)
            pool = [u for u in self.uids if self.users[u]["orders"] and self.users[u]["orders"][-1] not in self.used and u not in self.moved
                    and (want is None and (first_status is None or len(self.users[u]["orders"]) > 1)
                         or want is not None and self.orders[self.users[u]["orders"][-1]]["status"] != first_status)]
            uid = self.rng.choice(pool)
            oid = self.users[uid]["orders"][-1]
            self.used.add(oid)
            if day == 1:
                self.first_status.setdefault(key, self.orders[oid]["status"])
            return uid, oid, [], None
        if branch == "position":  # a bare id, at another place in the customer's list than the first one asked about
            pos = self.first_pos.get(key, 0)
            uid, oid = self.pick(lambda o: self.users[o["user_id"]]["orders"].index(o["order_id"]) != pos,
                                 prefer, user_ok=lambda u: len(self.users[u]["orders"]) >= 3)
            return uid, oid, [], True
        if branch == "cancelled":
            uid, oid = self.pick(lambda o: o["status"] == "cancelled", prefer)
            return uid, oid, [], None
        uid, oid = self.pick(lambda o: o["status"] in ("pending", "processed", "delivered"), prefer,
                             user_ok=lambda u: len(self.users[u]["orders"]) >= 2)
        if day == 1:
            self.first_pos.setdefault(key, self.users[uid]["orders"].index(oid))
        return uid, oid, [], (True if i == 0 and day == 1 else None)

    def _return_task(self, i: int, branch: str, prefer: str | None, day: int) -> tuple[str, str, list[str], dict[str, str]]:
        rng = self.rng
        key = ("return", i)
        delivered = lambda o: o["status"] == "delivered"
        has_gift = lambda u: any(pm["source"] == "gift_card" for pm in self.users[u]["payment_methods"].values())
        user_ok = None
        if i == 4:
            user_ok = (lambda u: not has_gift(u)) if branch == "no_gift_card" else has_gift
            if prefer is not None and not user_ok(prefer):
                prefer = None
        setup: list[str] = []
        if branch == "ambiguous":  # two items of the same product in the order
            uid, oid = self.pick(lambda o: delivered(o) and not _distinct_names(o), prefer)
            o = self.orders[oid]
            names = [it["name"] for it in o["items"]]
            dup = next(n for n in names if names.count(n) > 1)
            idx = [names.index(dup)]
        else:
            if i == 0:
                k_items = (lambda n: n >= 2) if branch == "multi" else (lambda n: n == 1)
                k = 1
            elif i == 3:
                k = self.first_k.get(key, 3) + (2 if branch == "bigger" else 0)
                k_items = lambda n, k=k: n == k
            elif i == 4:
                k, k_items = 1, (lambda n: n >= 1)
            else:
                first = self.first_k.get(key, rng.choice([2, 3]) if i == 2 else 2)
                k = {"more": first + 1, "fewer": 1}.get(branch, first)
                k_items = lambda n, k=k: n >= k
            status_ok = (lambda o: o["status"] == "pending") if branch == "pending" else delivered
            if branch == "not_theirs":
                owner = prefer or rng.choice([u for u in self.uids if u not in self.moved])
                _other, oid = self.pick(lambda o: status_ok(o) and _distinct_names(o) and k_items(len(o["items"])) and o["user_id"] != owner)
                uid = owner
            else:
                uid, oid = self.pick(lambda o: status_ok(o) and _distinct_names(o) and k_items(len(o["items"])), prefer, user_ok)
            o = self.orders[oid]
            if day == 1 and i in (1, 2, 3):
                self.first_k.setdefault(key, len(o["items"]) if i == 3 else k)
            idx = sorted(rng.sample(range(len(o["items"])), 1 if i == 3 else k))
        if branch == "return_requested":
            setup += self.force(oid, "delivered")
            setup.append(f"UPDATE orders SET status = 'return requested', return_items = {_q(json.dumps([o['items'][idx[0]]['item_id']]))}, "
                         f"return_payment_method_id = {_q(o['payment_history'][0]['payment_method_id'])} WHERE order_id = {_q(oid)}")
        vals = {"oid": self.oid_text(oid), "item": self.item_text(o, idx[0]), "items": self.items_text(o, idx)}
        if branch == "not_in_order":  # a product the order doesn't have
            absent = sorted({p["name"] for p in self.products.values()} - {it["name"] for it in o["items"]})
            vals["items"] = self.items_text(o, idx[:-1]) + (" and " if len(idx) > 1 else "") + f"the {rng.choice(absent).lower()}"
        return uid, oid, setup, vals

    def _exchange_task(self, i: int, branch: str, prefer: str | None) -> tuple[str, str, list[str], dict[str, str]]:
        rng = self.rng
        not_gift = lambda o: not o["payment_history"][0]["payment_method_id"].startswith("gift_card")
        status = {"pending": "pending", "processed": "processed"}.get(branch, "delivered")
        available = branch != "unavailable"

        def fits(o: dict[str, Any]) -> bool:
            if o["status"] != ("pending" if status == "pending" else "delivered") or not not_gift(o):
                return False
            sw = self.swaps(o, available)
            if branch == "cheaper":
                sw = [x for x in sw if x[3]["price"] < o["items"][x[0]]["price"]]
            elif i == 3 or branch == "normal" and i in (0, 1):
                sw = [x for x in sw if x[3]["price"] > o["items"][x[0]]["price"]]
            return bool(sw)

        user_ok = None
        if i == 3:
            user_ok = lambda u: any(pm["source"] == "gift_card" for pm in self.users[u]["payment_methods"].values())
            if prefer is not None and not user_ok(prefer):
                prefer = None
        uid, oid = self.pick(fits, prefer, user_ok)
        o = self.orders[oid]
        sw = self.swaps(o, available)
        if branch == "cheaper":
            sw = [x for x in sw if x[3]["price"] < o["items"][x[0]]["price"]]
        elif i == 3 or branch == "normal" and i in (0, 1):
            sw = [x for x in sw if x[3]["price"] > o["items"][x[0]]["price"]]
        pos, opt, value, new = rng.choice(sw)
        if branch == "same":  # asks for what the item already is
            value = o["items"][pos]["options"][opt]
        setup = self.force(oid, "processed") if branch == "processed" else []
        if i == 3:  # the difference goes on the gift card: topped up, or (tempting) short of it
            gift = next(pm for pm in self.users[uid]["payment_methods"].values() if pm["source"] == "gift_card")
            diff = round(new["price"] - o["items"][pos]["price"], 2)
            balance = round(diff / 3, 2) if branch == "low_balance" else round(diff + rng.uniform(5, 80), 2)
            setup.append(f"UPDATE payment_methods SET balance = {balance!r} WHERE id = {_q(gift['id'])}")
        target = f"{opt} {value}" if _size_like(opt) else value
        return uid, oid, setup, {"oid": self.oid_text(oid), "item": self.item_text(o, pos), "target": target}

    def _address_task(self, i: int, branch: str, prefer: str | None) -> tuple[str, str, list[str], dict[str, str]]:
        setup: list[str] = []
        if branch == "not_theirs":
            uid = prefer or self.rng.choice([u for u in self.uids if u not in self.moved])
            _owner, oid = self.pick(lambda o: o["status"] == "pending" and o["user_id"] != uid)
        elif i == 2:  # "my default address": the customer just changed it, or (tempting) the order already goes there
            same = branch == "same"
            uid, oid = self.pick(lambda o: o["status"] == "pending" and (o["address"] == self.user_address(o["user_id"])) == same,
                                 prefer, user_ok=None if same else (lambda u: u not in self.asked))
            if not same:  # a customer no other task is about: their zip changes with this task
                new = self.new_address(uid)
                self.address[uid] = new
                self.moved.add(uid)
                setup.append(f"UPDATE users SET {', '.join(f'{k} = {_q(new[k])}' for k in _ADDRESS)} WHERE user_id = {_q(uid)}")
            return uid, oid, setup, {"oid": self.oid_text(oid)}
        elif branch == "processed":
            uid, oid = self.pick(lambda o: True, prefer)
            setup = self.force(oid, "processed")
        else:
            uid, oid = self.pick(lambda o: o["status"] == "pending", prefer)
        new = self.new_address(uid, same_zip=branch == "same_zip")
        suite = branch != "no_suite" and (branch == "normal" or self.rng.random() < 0.8)
        return uid, oid, setup, {"oid": self.oid_text(oid), "address": self.address_text(new, suite)}

    def _payment_task(self, i: int, branch: str, prefer: str | None) -> tuple[str, str, list[str], dict[str, str]]:
        rng = self.rng
        setup: list[str] = []
        methods = lambda u: list(self.users[u]["payment_methods"].values())

        def others(o: dict[str, Any]) -> list[dict[str, Any]]:
            paid = o["payment_history"][0]["payment_method_id"]
            return [pm for pm in methods(o["user_id"]) if pm["id"] != paid
                    and (pm["source"] == "gift_card") == (i == 1)
                    and sum(x["source"] == pm["source"] for x in methods(o["user_id"])) == 1]

        pending = lambda o: o["status"] == "pending" and len(o["payment_history"]) == 1
        if branch == "same":  # asks for the method the order is already paid with
            uid, oid = self.pick(lambda o: pending(o) and o["payment_history"][0]["payment_method_id"].startswith(("paypal", "credit")), prefer)
            pm = self.users[uid]["payment_methods"][self.orders[oid]["payment_history"][0]["payment_method_id"]]
        elif branch == "missing":  # asks for a kind of method the customer doesn't have
            lacks = lambda u: not any(pm["source"] == "paypal" for pm in methods(u))
            uid, oid = self.pick(pending, prefer if prefer and lacks(prefer) else None, user_ok=lacks)
            pm = {"source": "paypal", "id": "paypal"}
        else:
            uid, oid = self.pick(lambda o: pending(o) and bool(others(o)), prefer)
            pm = rng.choice(others(self.orders[oid]))
            total = self.orders[oid]["payment_history"][0]["amount"]
            if pm["source"] == "gift_card":  # topped up for it, or (tempting) short of the total
                balance = round(total * 0.4, 2) if branch == "low_balance" else round(total + rng.uniform(10, 200), 2)
                setup.append(f"UPDATE payment_methods SET balance = {balance!r} WHERE id = {_q(pm['id'])}")
            if branch == "processed":
                setup += self.force(oid, "processed")
        if pm["source"] == "paypal":
            text = rng.choice(["PayPal", "paypal"])
        elif pm["source"] == "gift_card":
            text = "gift card"
        else:
            text = rng.choice([pm["brand"].capitalize(), f"card ending in {pm['last_four']}", "credit card"])
        return uid, oid, setup, {"oid": self.oid_text(oid), "pm": text}

    def _two_task(self, i: int, branch: str, prefer: str | None) -> tuple[str, list[str], dict[str, str]]:
        rng = self.rng
        setup: list[str] = []
        pending = lambda o: o["status"] == "pending" and not o["payment_history"][0]["payment_method_id"].startswith("gift_card")
        any_ = lambda o: o["status"] in ("pending", "processed", "delivered")
        why_text = rng.choice(WHY)[0]
        if i == 0:  # cancel one, status of another
            first = (lambda o: any_(o) and pending(o) or branch == "first_processed" and any_(o))
            uid, oid = self.pick(first, prefer, user_ok=self.two_left)
            if branch == "first_processed":
                setup += self.force(oid, "processed")
            oid2 = self.other_order(uid, any_) or self.other_order(uid, lambda o: True)
            assert oid2 is not None
            vals = {"oid": self.oid_text(oid), "oid2": self.oid_text(oid2), "why": why_text}
        elif i == 1:  # return one item, status of another order
            uid, oid = self.pick(lambda o: o["status"] == "delivered" and _distinct_names(o), prefer, user_ok=self.two_left)
            o = self.orders[oid]
            oid2 = self.other_order(uid, any_) or self.other_order(uid, lambda o: True)
            assert oid2 is not None
            vals = {"oid": self.oid_text(oid), "oid2": self.oid_text(oid2), "item": self.item_text(o, rng.randrange(len(o["items"])))}
        elif i == 2:  # cancel one, re-address another
            uid, oid = self.pick(pending, prefer, user_ok=lambda u: sum(self.orders[x]["status"] == "pending" and x not in self.used
                                                                  for x in self.users[u]["orders"]) >= 2)
            oid2 = self.other_order(uid, lambda o: o["status"] == "pending")
            assert oid2 is not None
            vals = {"oid": self.oid_text(oid), "oid2": self.oid_text(oid2), "why": why_text,
                    "address": self.address_text(self.new_address(uid))}
        else:  # status of one, cancel another
            uid, oid = self.pick(any_, prefer if prefer and self.two_left(prefer) else None, user_ok=self.two_left)
            oid2 = self.other_order(uid, pending if branch != "second_delivered" else (lambda o: True))
            if oid2 is None:
                oid2 = self.other_order(uid, lambda o: True)
            assert oid2 is not None
            setup += self.force(oid2, "delivered" if branch == "second_delivered" else "pending")
            vals = {"oid": self.oid_text(oid), "oid2": self.oid_text(oid2), "why": why_text}
        return uid, setup, vals

    def _mind_task(self, i: int, prefer: str | None) -> tuple[str, list[str], dict[str, str]]:
        rng = self.rng
        if i == 1:
            uid, oid = self.pick(lambda o: o["status"] == "delivered" and _distinct_names(o), prefer)
            o = self.orders[oid]
            return uid, [], {"oid": self.oid_text(oid), "item": self.item_text(o, rng.randrange(len(o["items"])))}
        uid, oid = self.pick(lambda o: o["status"] == "pending", prefer)
        vals = {"oid": self.oid_text(oid), "why": rng.choice(WHY)[0]}
        if i == 2:
            vals["address"] = self.address_text(self.new_address(uid))
        return uid, [], vals


# (kind, phrasing, branch, why) of the day-2 tasks meant to tempt a wrong replay
_TEMPTING: list[tuple[str, int, str, str]] = [
    ("cancel", 0, "processed", "the order shipped overnight: only pending orders can be cancelled"),
    ("cancel", 1, "delivered", "the order is delivered: not cancellable"),
    ("cancel", 2, "cancelled", "the order is already cancelled"),
    ("cancel", 0, "not_theirs", "the order belongs to another customer"),
    ("cancel", 3, "reason_flip", "the customer's words mean the other policy reason"),
    ("cancel", 1, "gift_card", "paid by gift card: refunded to the card at once, another answer"),
    ("cancel", 4, "position", "a bare id, at another place in the customer's order list"),
    ("cancel", 3, "unknown", "no such order"),
    ("return", 0, "pending", "not delivered yet: nothing to return"),
    ("return", 0, "multi", "one item of several: the refund is its price, not the order's total"),
    ("return", 1, "not_in_order", "one of the items named is not in the order"),
    ("return", 2, "more", "more items than the phrasing was learned with"),
    ("return", 2, "fewer", "a single item where a list was learned"),
    ("return", 3, "bigger", "everything but one, from a bigger order"),
    ("return", 0, "ambiguous", "two items of the order fit the name"),
    ("return", 4, "no_gift_card", "no gift card on the account"),
    ("return", 1, "not_theirs", "another customer's order"),
    ("return", 3, "return_requested", "a return is already requested for the order"),
    ("exchange", 0, "unavailable", "the variant asked for is out of stock"),
    ("exchange", 1, "pending", "not delivered yet: the pending order's item is modified instead"),
    ("exchange", 2, "same", "the item already has the option asked for"),
    ("exchange", 0, "processed", "in transit: neither exchanged nor modified"),
    ("exchange", 3, "low_balance", "the gift card doesn't cover the price difference"),
    ("exchange", 1, "cheaper", "the new variant is cheaper: money back instead of a charge"),
    ("address", 0, "processed", "shipped: the address can't change"),
    ("address", 2, "same", "the order already goes to the default address"),
    ("address", 1, "not_theirs", "another customer's order"),
    ("address", 0, "same_zip", "the new address is in the customer's own zip code"),
    ("address", 3, "no_suite", "an address without a suite line"),
    ("payment", 0, "same", "already paid with that method"),
    ("payment", 1, "low_balance", "the gift card doesn't cover the order"),
    ("payment", 2, "processed", "not pending"),
    ("payment", 3, "missing", "no such method on the account"),
    ("status", 0, "position", "a bare id, at another place in the customer's order list"),
    ("status", 1, "cancelled", "a cancelled order"),
    ("status", 3, "latest_pending", "the latest order is in another state"),
    ("list_orders", 0, "more", "more orders"),
    ("list_orders", 1, "one", "a single order"),
    ("list_orders", 2, "none", "no orders at all"),
    ("two_requests", 0, "first_processed", "the order to cancel has shipped"),
    ("two_requests", 3, "second_delivered", "the order to cancel is delivered"),
]


def _extra(stream: _Stream, day: int = 2) -> list[Task]:
    """Tasks of a later day whose text carries more than the phrasing did: a trailing request or a change of mind."""
    out = []
    s = stream
    for kind, i, tail, why in [
        ("cancel", 0, " Actually, don't cancel it, just tell me its status.", "a change of mind after the reason"),
        ("return", 0, " Also, can you tell me the status of {oid2}?", "a second request after the item"),
        ("address", 0, " And please cancel {oid2} too, I ordered it by mistake.", "a second request after the address"),
        ("exchange", 0, " Actually, never mind — keep it, just tell me the status of the order.", "a change of mind after the option"),
        ("payment", 0, " Actually, don't change it, just tell me its status.", "a change of mind after the payment method"),
        ("status", 1, " Oh, and please cancel it, I don't need it anymore.", "a second request after the status question"),
    ]:
        for _try in range(20):  # a customer with another order, when the tail names one
            t = s.make(kind, i, day=day, tempting=True)
            m = _ORDER_ID.search(t.text)
            assert m is not None
            oid = f"#W{m[1]}"
            if "{oid2}" not in tail or any(o not in s.used for o in s.users[s.orders[oid]["user_id"]]["orders"]):
                break
        setup = list(t.setup_sql)
        if kind == "status":  # "cancel it": the order asked about is still pending
            setup += s.force(oid, "pending")
        oid2 = ""
        if "{oid2}" in tail:  # another order of the same customer's: pending if they ask to cancel it
            uid = s.orders[oid]["user_id"]
            oid2 = s.other_order(uid, lambda o: o["status"] == "pending") or s.other_order(uid, lambda o: True) or ""
            if not oid2:  # the customer has no other order: one of someone else's, then (a finding of its own)
                oid2 = s.pick(lambda o: o["status"] == "pending")[1]
            elif "cancel" in tail:
                setup += s.force(oid2, "pending")
        text = t.text + tail.format(oid2=oid2)
        out.append(Task(text, tuple(setup), True, kind, day, why))
    return out


def tasks(seed: int = 2024, days: int = 2) -> list[Task]:
    """``days`` days of customer messages (deterministic for a seed; the first two are the same whatever
    ``days``, and each later day is shaped as day 2 is, with other values); see the module docstring."""
    s = _Stream(seed)
    singles = [(k, i) for k, ps in PHRASINGS.items() for i in range(len(ps))]
    day1 = [s.make(k, i, day=1) for k, i in singles]
    day1 += [s.make(k, i, day=1) for k, i in s.rng.sample(singles, 30)]  # a busy morning: some asked twice
    s.rng.shuffle(day1)
    # the world is not always the common case, on day 1 either
    for kind, i, branch in [("cancel", 1, "delivered"), ("return", 0, "pending"), ("exchange", 0, "unavailable"),
                            ("address", 1, "processed"), ("payment", 0, "same")]:
        day1.insert(s.rng.randrange(len(day1) // 2, len(day1) + 1), s.make(kind, i, branch, day=1))
    out = day1
    for d in range(2, days + 1):
        later = [s.make(k, i, day=d) for k, i in singles]
        later += [s.make(k, i, day=d) for k, i in s.rng.sample(singles, 12)]
        later += [s.make(k, i, b, day=d, tempting=True, why=w) for k, i, b, w in _TEMPTING]
        later += _extra(s, d)
        s.rng.shuffle(later)
        out += later
    return out
