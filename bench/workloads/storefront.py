"""A retail customer-service desk on the public tau-bench retail database, and what customers write to it.

The world is tau-bench's retail database (500 customers, 1,000 orders, 50 products; vendored in
``bench/data/tau-retail``, MIT) loaded into one SQLite file, one JSON document per row
(``make_world(path)``). The tools are plain top-level functions written from the dataset's
description: reads (a customer by email or by name and zip; a customer's, an order's or a
product's details; the product catalogue) and writes (cancel a pending order, change its address,
payment method or items; return or exchange items of a delivered order; change a customer's
address; hand over to a human). A write the order's state does not allow raises and changes
nothing; every write that goes through also leaves a row in ``audit``.

``agent`` stands in for a careful model that follows the store's policy: it authenticates the
customer (email, or name and zip), reads the customer, checks the order is theirs, reads it,
checks it is in a state that allows the request (only pending orders are cancelled or changed,
only delivered ones returned or exchanged, refunds go to the original payment method or a gift
card, a gift card must cover what it pays), then writes, and answers with a sentence saying what
it did or why not. It reads generously: greetings, thanks and personas, names as "Noah Brown",
"noah brown" or "BROWN, Noah", order ids with or without ``#``, items by name or last word
("the kettle and the wall clock"), two requests in one message, "don't ..., just ...", and a
change of mind at the end.

``tasks()`` is two days of requests built from real customers, orders and products. Day 2 mostly
repeats day 1's phrasings with other values; the tasks flagged ``tempting`` repeat a phrasing in a
world where the right action differs, or carry more than the phrasing did.
"""

from __future__ import annotations

import copy
import json
import random
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from . import Task

__all__ = [
    "READS", "TOOLBOX", "TOOLS", "agent", "cancel_pending_order", "exchange_delivered_order_items",
    "find_user_id_by_email", "find_user_id_by_name_zip", "get_order_details", "get_product_details",
    "get_user_details", "list_all_product_types", "make_world", "modify_pending_order_address",
    "modify_pending_order_items", "modify_pending_order_payment", "modify_user_address",
    "return_delivered_order_items", "snapshot", "tasks", "transfer_to_human_agents", "use_world",
]

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "tau-retail"

_db: sqlite3.Connection | None = None

_SCHEMA = """
CREATE TABLE users (user_id TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE orders (order_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE products (product_id TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, tool TEXT NOT NULL, target TEXT NOT NULL, detail TEXT NOT NULL);
"""
_TABLES = {"users": "user_id", "orders": "order_id", "products": "product_id"}
_REASONS = ("no longer needed", "ordered by mistake")


@cache
def _data() -> dict[str, dict[str, Any]]:
    """The pristine database, read once: ``{"users": {...}, "orders": {...}, "products": {...}}``."""
    return {t: json.loads((DATA_DIR / f"{t}.json").read_text(encoding="utf-8")) for t in _TABLES}


@cache
def _pristine_text() -> dict[str, dict[str, str]]:
    """Each row's text as ``make_world`` writes it (a row whose text is unchanged is pristine)."""
    return {t: {k: json.dumps(v) for k, v in rows.items()} for t, rows in _data().items()}


# -- the world -------------------------------------------------------------------------


def make_world(path: str | Path) -> None:
    """Create a fresh retail world at ``path`` from the vendored database."""
    conn = sqlite3.connect(str(path))
    conn.executescript(_SCHEMA)
    text = _pristine_text()
    conn.executemany("INSERT INTO users VALUES (?, ?)", sorted(text["users"].items()))
    conn.executemany(
        "INSERT INTO orders VALUES (?, ?, ?)",
        [(k, _data()["orders"][k]["user_id"], v) for k, v in sorted(text["orders"].items())],
    )
    conn.executemany("INSERT INTO products VALUES (?, ?)", sorted(text["products"].items()))
    conn.commit()
    conn.close()


def use_world(path: str | Path) -> None:
    """Point the tools at the world in ``path``."""
    global _db
    if _db is not None:
        _db.close()
    _db = sqlite3.connect(str(path))


def _flatten(value: Any, prefix: str = "") -> dict[str, str]:
    """Leaves of nested dicts by dotted path (lists stay whole), each as canonical JSON."""
    if isinstance(value, dict) and value:
        out: dict[str, str] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: json.dumps(value, sort_keys=True)}


def snapshot(path: str | Path) -> dict[str, list[list[Any]]]:
    """The world's state as rows: for each record that differs from the pristine database, one row per
    changed field (``[id, path, value]``; ``<absent>`` for a field gone), plus the audit log.

    Two worlds in the same state give equal snapshots; a diff names exactly the fields that differ.
    """
    conn = sqlite3.connect(str(path))
    try:
        out: dict[str, list[list[Any]]] = {}
        pristine = _pristine_text()
        for table, key in _TABLES.items():
            rows: list[list[Any]] = []
            seen = set()
            for k, text in conn.execute(f"SELECT {key}, data FROM {table}"):
                seen.add(k)
                base = pristine[table].get(k)
                if text == base:
                    continue
                now = _flatten(json.loads(text))
                was = _flatten(json.loads(base)) if base is not None else {}
                rows += [[k, p, v] for p, v in now.items() if was.get(p) != v]
                rows += [[k, p, "<absent>"] for p in was if p not in now]
            rows += [[k, "", "<deleted>"] for k in pristine[table] if k not in seen]
            out[table] = sorted(rows, key=repr)
        out["audit"] = [list(r) for r in conn.execute("SELECT tool, target, detail FROM audit ORDER BY id")]
        return out
    finally:
        conn.close()


def _conn() -> sqlite3.Connection:
    if _db is None:
        raise RuntimeError("no retail world in use: call use_world(path) first")
    return _db


def _get(table: str, key: str) -> dict[str, Any] | None:
    row = _conn().execute(f"SELECT data FROM {table} WHERE {_TABLES[table]} = ?", (key,)).fetchone()
    return None if row is None else json.loads(row[0])


def _put(table: str, key: str, value: dict[str, Any]) -> None:
    _conn().execute(f"UPDATE {table} SET data = ? WHERE {_TABLES[table]} = ?", (json.dumps(value), key))


def _audit(tool: str, target: str, **detail: Any) -> None:
    _conn().execute("INSERT INTO audit (tool, target, detail) VALUES (?, ?, ?)", (tool, target, json.dumps(detail, sort_keys=True)))


def _order(order_id: str) -> dict[str, Any]:
    order = _get("orders", order_id)
    if order is None:
        raise LookupError(f"order {order_id!r} not found")
    return order


def _user(user_id: str) -> dict[str, Any]:
    user = _get("users", user_id)
    if user is None:
        raise LookupError(f"user {user_id!r} not found")
    return user


def _is(order: dict[str, Any], status: str) -> bool:
    """Statuses are compared case-insensitively (an older import wrote some capitalised)."""
    return str(order["status"]).strip().lower() == status


def _variant(product_id: str, item_id: str) -> dict[str, Any]:
    product = _get("products", product_id)
    if product is None:
        raise LookupError(f"product {product_id!r} not found")
    variant = product["variants"].get(item_id)
    if variant is None or not variant["available"]:
        raise ValueError(f"new item {item_id} not found or not available")
    return variant


def _check_items(order: dict[str, Any], item_ids: list[str]) -> None:
    held = [i["item_id"] for i in order["items"]]
    if not item_ids:
        raise ValueError("no items given")
    for item_id in item_ids:
        if item_ids.count(item_id) > held.count(item_id):
            raise ValueError(f"item {item_id} not found in order {order['order_id']}")


def _price_difference(order: dict[str, Any], item_ids: list[str], new_item_ids: list[str]) -> float:
    if len(item_ids) != len(new_item_ids):
        raise ValueError("the number of items to be exchanged should match")
    diff = 0.0
    for old_id, new_id in zip(item_ids, new_item_ids):
        item = next(i for i in order["items"] if i["item_id"] == old_id)
        diff += _variant(item["product_id"], new_id)["price"] - item["price"]
    return round(diff, 2)


def _method(user: dict[str, Any], payment_method_id: str) -> dict[str, Any]:
    method = user["payment_methods"].get(payment_method_id)
    if method is None:
        raise ValueError(f"payment method {payment_method_id!r} not found for this user")
    return method


# -- tools: reads ----------------------------------------------------------------------


def find_user_id_by_email(email: str) -> str:
    """Find a customer's user id by their email address (case-insensitive).

    Args:
        email: the email address on the account, e.g. "noah.brown7922@example.com".

    Returns:
        The user id, e.g. "noah_brown_6181".

    Raises:
        LookupError: no customer has that email.
    """
    row = _conn().execute(
        "SELECT user_id FROM users WHERE lower(json_extract(data, '$.email')) = lower(?) ORDER BY user_id", (email.strip(),)
    ).fetchone()
    if row is None:
        raise LookupError(f"no user with email {email!r}")
    return row[0]


def find_user_id_by_name_zip(first_name: str, last_name: str, zip: str) -> str:
    """Find a customer's user id by first name, last name (both case-insensitive) and the zip code of their address.

    Args:
        first_name: e.g. "Noah".
        last_name: e.g. "Brown".
        zip: the five-digit zip code of the customer's address, e.g. "80279".

    Returns:
        The user id.

    Raises:
        LookupError: no customer matches.
    """
    row = _conn().execute(
        "SELECT user_id FROM users WHERE lower(json_extract(data, '$.name.first_name')) = lower(?) "
        "AND lower(json_extract(data, '$.name.last_name')) = lower(?) AND json_extract(data, '$.address.zip') = ? "
        "ORDER BY user_id",
        (first_name.strip(), last_name.strip(), zip.strip()),
    ).fetchone()
    if row is None:
        raise LookupError(f"no user {first_name} {last_name} with zip {zip}")
    return row[0]


def get_user_details(user_id: str) -> dict:
    """A customer's details.

    Args:
        user_id: the user id, e.g. "noah_brown_6181".

    Returns:
        name (first_name, last_name), address (address1, address2, city, state, country, zip),
        email, payment_methods (by id: source "credit_card" with brand and last_four, "paypal", or
        "gift_card" with its balance) and orders (the customer's order ids, oldest first).

    Raises:
        LookupError: there is no such user.
    """
    return _user(user_id)


def get_order_details(order_id: str) -> dict:
    """An order's details.

    Args:
        order_id: the order id with its "#", e.g. "#W2611340".

    Returns:
        order_id, user_id, address, items (name, product_id, item_id, price, options), fulfillments
        (tracking ids and the item ids they carry), status ("pending", "processed", "delivered",
        "cancelled", "pending (item modified)", "return requested", "exchange requested") and
        payment_history (transaction_type "payment" or "refund", amount, payment_method_id).

    Raises:
        LookupError: there is no such order.
    """
    return _order(order_id)


def get_product_details(product_id: str) -> dict:
    """A product and all its variants.

    Args:
        product_id: e.g. "9523456873".

    Returns:
        name, product_id and variants (by item id: options, available, price).

    Raises:
        LookupError: there is no such product.
    """
    product = _get("products", product_id)
    if product is None:
        raise LookupError(f"product {product_id!r} not found")
    return product


def list_all_product_types() -> dict:
    """Every product the store sells: ``{product name: product_id}``, sorted by name."""
    rows = _conn().execute("SELECT json_extract(data, '$.name'), product_id FROM products ORDER BY 1").fetchall()
    return {name: pid for name, pid in rows}


# -- tools: writes ---------------------------------------------------------------------


def cancel_pending_order(order_id: str, reason: str) -> dict:
    """Cancel a pending order. Every payment is refunded to its method (a gift card at once).

    Args:
        order_id: the order id, e.g. "#W2611340".
        reason: "no longer needed" or "ordered by mistake".

    Returns:
        The cancelled order.

    Raises:
        LookupError: no such order.
        ValueError: the order is not pending, or the reason is not one of the two.
    """
    order = _order(order_id)
    if not _is(order, "pending"):
        raise ValueError("non-pending order cannot be cancelled")
    if reason not in _REASONS:
        raise ValueError(f"invalid reason {reason!r}")
    user = _user(order["user_id"])
    refunds = []
    for payment in order["payment_history"]:
        if payment["transaction_type"] != "payment":
            continue
        pm_id = payment["payment_method_id"]
        refunds.append({"transaction_type": "refund", "amount": payment["amount"], "payment_method_id": pm_id})
        method = user["payment_methods"].get(pm_id)
        if method is not None and method["source"] == "gift_card":
            method["balance"] = round(method["balance"] + payment["amount"], 2)
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    order["payment_history"].extend(refunds)
    _put("orders", order_id, order)
    _put("users", user_id := order["user_id"], user)
    _audit("cancel_pending_order", order_id, reason=reason, user_id=user_id)
    _conn().commit()
    return order


def modify_pending_order_address(order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str) -> dict:
    """Change the shipping address of a pending order.

    Args:
        order_id: the order id.
        address1: street line, e.g. "986 Sunset Drive".
        address2: second line, e.g. "Suite 259" (may be empty).
        city: e.g. "Denver".
        state: two-letter state, e.g. "CO".
        country: e.g. "USA".
        zip: five-digit zip code.

    Returns:
        The changed order.

    Raises:
        ValueError: the order is not pending.
    """
    order = _order(order_id)
    if not _is(order, "pending"):
        raise ValueError("non-pending order cannot be modified")
    order["address"] = {"address1": address1, "address2": address2, "city": city, "country": country, "state": state, "zip": zip}
    _put("orders", order_id, order)
    _audit("modify_pending_order_address", order_id, **order["address"])
    _conn().commit()
    return order


def modify_pending_order_payment(order_id: str, payment_method_id: str) -> dict:
    """Pay a pending order with another of the customer's payment methods; the old payment is refunded.

    Args:
        order_id: the order id.
        payment_method_id: the new method, e.g. "gift_card_4374071"; a gift card must cover the amount.

    Returns:
        The changed order.

    Raises:
        ValueError: the order is not pending, has more than one payment, is already paid with that
            method, the method is not the customer's, or a gift card's balance is too low.
    """
    order = _order(order_id)
    if not _is(order, "pending"):
        raise ValueError("non-pending order cannot be modified")
    history = order["payment_history"]
    if len(history) != 1 or history[0]["transaction_type"] != "payment":
        raise ValueError("there should be exactly one payment for a pending order")
    if history[0]["payment_method_id"] == payment_method_id:
        raise ValueError("the new payment method should be different from the current one")
    user = _user(order["user_id"])
    method = _method(user, payment_method_id)
    amount = history[0]["amount"]
    if method["source"] == "gift_card" and method["balance"] < amount:
        raise ValueError("insufficient gift card balance to pay for the order")
    old_id = history[0]["payment_method_id"]
    history += [
        {"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id},
        {"transaction_type": "refund", "amount": amount, "payment_method_id": old_id},
    ]
    if method["source"] == "gift_card":
        method["balance"] = round(method["balance"] - amount, 2)
    old = user["payment_methods"].get(old_id)
    if old is not None and old["source"] == "gift_card":
        old["balance"] = round(old["balance"] + amount, 2)
    _put("orders", order_id, order)
    _put("users", order["user_id"], user)
    _audit("modify_pending_order_payment", order_id, payment_method_id=payment_method_id)
    _conn().commit()
    return order


def modify_pending_order_items(order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str) -> dict:
    """Swap items of a pending order for other available variants of the same products (once per order).

    Args:
        order_id: the order id.
        item_ids: the item ids to replace.
        new_item_ids: their replacements, in the same order.
        payment_method_id: pays or receives the price difference; a gift card must cover it.

    Returns:
        The changed order (status "pending (item modified)").

    Raises:
        ValueError: not pending, an item is not in the order, a new item is unavailable, or payment fails.
    """
    order = _order(order_id)
    if not _is(order, "pending"):
        raise ValueError("non-pending order cannot be modified")
    _check_items(order, item_ids)
    diff = _price_difference(order, item_ids, new_item_ids)
    user = _user(order["user_id"])
    method = _method(user, payment_method_id)
    if method["source"] == "gift_card" and method["balance"] < diff:
        raise ValueError("insufficient gift card balance to pay for the new item")
    order["payment_history"].append(
        {"transaction_type": "payment" if diff > 0 else "refund", "amount": abs(diff), "payment_method_id": payment_method_id}
    )
    if method["source"] == "gift_card":
        method["balance"] = round(method["balance"] - diff, 2)
    for old_id, new_id in zip(item_ids, new_item_ids):
        item = next(i for i in order["items"] if i["item_id"] == old_id)
        variant = _variant(item["product_id"], new_id)
        item.update(item_id=new_id, price=variant["price"], options=variant["options"])
    order["status"] = "pending (item modified)"
    _put("orders", order_id, order)
    _put("users", order["user_id"], user)
    _audit("modify_pending_order_items", order_id, item_ids=item_ids, new_item_ids=new_item_ids, payment_method_id=payment_method_id)
    _conn().commit()
    return order


def return_delivered_order_items(order_id: str, item_ids: list[str], payment_method_id: str) -> dict:
    """Request a return of items of a delivered order; the refund goes to the original payment method or a gift card.

    Args:
        order_id: the order id.
        item_ids: the item ids to return.
        payment_method_id: the original payment method of the order, or one of the customer's gift cards.

    Returns:
        The changed order (status "return requested").

    Raises:
        ValueError: the order is not delivered, an item is not in it, or the method is not allowed.
    """
    order = _order(order_id)
    if not _is(order, "delivered"):
        raise ValueError("non-delivered order cannot be returned")
    method = _method(_user(order["user_id"]), payment_method_id)
    if method["source"] != "gift_card" and payment_method_id != order["payment_history"][0]["payment_method_id"]:
        raise ValueError("payment method should be either the original payment method or a gift card")
    _check_items(order, item_ids)
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    _put("orders", order_id, order)
    _audit("return_delivered_order_items", order_id, item_ids=sorted(item_ids), payment_method_id=payment_method_id)
    _conn().commit()
    return order


def exchange_delivered_order_items(order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str) -> dict:
    """Request an exchange of items of a delivered order for other available variants of the same products.

    Args:
        order_id: the order id.
        item_ids: the item ids to exchange.
        new_item_ids: their replacements, in the same order.
        payment_method_id: pays or receives the price difference; a gift card must cover it.

    Returns:
        The changed order (status "exchange requested").

    Raises:
        ValueError: not delivered, an item is not in the order, a new item is unavailable, or payment fails.
    """
    order = _order(order_id)
    if not _is(order, "delivered"):
        raise ValueError("non-delivered order cannot be exchanged")
    _check_items(order, item_ids)
    diff = _price_difference(order, item_ids, new_item_ids)
    method = _method(_user(order["user_id"]), payment_method_id)
    if method["source"] == "gift_card" and method["balance"] < diff:
        raise ValueError("insufficient gift card balance to pay for the price difference")
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = diff
    _put("orders", order_id, order)
    _audit("exchange_delivered_order_items", order_id, item_ids=item_ids, new_item_ids=new_item_ids, payment_method_id=payment_method_id)
    _conn().commit()
    return order


def modify_user_address(user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str) -> dict:
    """Change a customer's default address (orders already placed keep theirs).

    Args:
        user_id: the user id.
        address1: street line.
        address2: second line (may be empty).
        city: city.
        state: two-letter state.
        country: e.g. "USA".
        zip: five-digit zip code.

    Returns:
        The changed user.
    """
    user = _user(user_id)
    user["address"] = {"address1": address1, "address2": address2, "city": city, "country": country, "state": state, "zip": zip}
    _put("users", user_id, user)
    _audit("modify_user_address", user_id, **user["address"])
    _conn().commit()
    return user


def transfer_to_human_agents(summary: str) -> dict:
    """Hand the conversation to a human agent, with a summary of the customer's issue.

    Args:
        summary: what the customer needs and why it could not be done here.
    """
    _audit("transfer_to_human_agents", "", summary=summary)
    _conn().commit()
    return {"transferred": True}


TOOLS: list[Callable[..., Any]] = [
    find_user_id_by_email, find_user_id_by_name_zip, get_user_details, get_order_details, get_product_details,
    list_all_product_types, cancel_pending_order, modify_pending_order_address, modify_pending_order_payment,
    modify_pending_order_items, return_delivered_order_items, exchange_delivered_order_items, modify_user_address,
    transfer_to_human_agents,
]
READS = frozenset({
    "find_user_id_by_email", "find_user_id_by_name_zip", "get_user_details", "get_order_details",
    "get_product_details", "list_all_product_types",
})
# The agent calls the tools through this dict; the harness puts a Forge's wrappers in it.
TOOLBOX: dict[str, Callable[..., Any]] = {f.__name__: f for f in TOOLS}

# -- the agent: a careful stand-in for a model following the store's policy -------------

_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9][\w.+-]*@[\w-]+(?:\.[\w-]+)+")
_ORDER_ID = re.compile(r"(?<![\w#])#?\s?[Ww](\d{7})(?!\d)")
_ADDRESS = re.compile(
    r"(?<![\w#⟩])(?P<a1>\d+\s+[A-Za-z][A-Za-z0-9 .'-]*?)\s*,\s*"
    r"(?:(?P<a2>(?i:suite|ste\.?|apt\.?|apartment|unit|#)\s*\d+\w*)\s*,\s*)?"
    r"(?P<city>[A-Za-z][A-Za-z .'-]*?)\s*,\s*(?P<state>[A-Z]{2})\s*,?\s+(?P<zip>\d{5})(?!\d)"
    r"(?:\s*,\s*(?P<country>USA|US|United States)\b)?",
)
_STOP = {
    "a", "an", "the", "so", "very", "in", "on", "not", "just", "really", "still", "back", "writing", "trying",
    "looking", "having", "here", "glad", "sorry", "afraid", "retired", "traveling", "travelling", "moving", "about",
    "going", "new", "also", "happy", "hoping", "pretty", "quite", "kind", "busy", "zip", "code", "email", "my",
    "your", "order", "and", "or", "with", "from", "to", "for", "of", "is", "am", "me", "i", "hi", "hello", "hey",
    "thanks", "thank", "please", "name", "dear", "it", "its", "this", "that", "postcode", "status", "pls", "list",
    "what", "where", "can", "could", "you", "cancel", "return", "change", "exchange", "orders", "all",
}
_NAME_INTRO = re.compile(r"\b(?:i'm|i am|this is|my name is|name's|name is|name:)\s+(?P<f>[A-Za-z][A-Za-z'-]*)\s+(?P<l>[A-Za-z][A-Za-z'-]*)", re.IGNORECASE)
_NAME_COMMA = re.compile(r"\b(?P<l>[A-Z][A-Z'-]+),\s*(?P<f>[A-Z][a-z][A-Za-z'-]*)\b")
_NAME_ZIP = re.compile(
    r"\b(?P<f>[A-Za-z][A-Za-z'-]*)\s+(?P<l>[A-Za-z][A-Za-z'-]*)\s*(?:,\s*|\s+|\(\s*)(?:(?:zip code|zip|postcode)\s*:?\s*)?(?P<z>\d{5})(?!\d)", re.IGNORECASE
)
_NAME_HERE = re.compile(r"\b(?P<f>[A-Za-z][A-Za-z'-]*)\s+(?P<l>[A-Za-z][A-Za-z'-]*)\s+here\b", re.IGNORECASE)
_ZIPS = [
    re.compile(r"\b(?:zip code|zipcode|zip|postcode|postal code)\s*(?:is\s*)?[:#]?\s*(\d{5})(?!\d)", re.IGNORECASE),
    re.compile(r"\(\s*(?:zip\s*)?(\d{5})\s*\)", re.IGNORECASE),
    re.compile(r"[-–—]\s*(\d{5})(?!\d)"),
    re.compile(r"(?<![\w⟨])(\d{5})(?!\d)"),
]
_CHANGED_MIND = re.compile(
    r"\b(?:actually|on second thought|wait)\b[\s,!.]*(?:no\b[\s,!.]*)?"
    r"(?:(?:never\s?mind|scratch that|forget (?:it|that))\b[\s,!.—–-]*)?"
    r"(?=(?:i\s+)?(?:don'?t|do not|just\b|keep\b|leave\b|please just\b)|$)",
    re.IGNORECASE,
)
_SPLIT = re.compile(
    r"(?<=[.!?;])\s+|\s+[—–-]\s+|,?\s+and also\s+|,\s*also\s+|[,;]\s*just\s+"
    r"|,?\s+and\s+(?=(?:please\s+)?(?:tell|cancel|return|change|update|switch|exchange|swap|ship|send|let)\b)",
    re.IGNORECASE,
)
_NEGATED = re.compile(
    r"\b(?:don'?t|do not|no need to|never)\s+(?:\w+\s+){0,2}?(?:cancel|return|exchange|swap|change|update|switch|ship|send)\b", re.IGNORECASE
)
_PRONOUN = re.compile(r"\b(?:it|its|it's|the order|that order|this order|that one)\b", re.IGNORECASE)
_MISTAKE = re.compile(r"\b(?:by mistake|mistakenly|by accident|accidentally|ordered the wrong|didn'?t mean to)\b", re.IGNORECASE)
_NOT_NEEDED = re.compile(r"\b(?:no longer need|don'?t need|do not need|not needed|no longer want|don'?t want it)\w*", re.IGNORECASE)
_METHOD = re.compile(
    r"\b(?:my|the|to|with|via|using|onto)\s+(?:(?P<gift>gift ?card)|(?P<paypal>paypal)(?:\s+account)?"
    r"|(?P<original>original)\s+(?:payment(?:\s+method)?|card|method)"
    r"|(?:(?P<brand>visa|mastercard|amex|american express|discover)\s+)?(?:credit\s+)?(?P<card>card)"
    r"(?:\s+ending(?:\s+in)?\s+(?P<last4>\d{4}))?)\b",
    re.IGNORECASE,
)
_TERM = r"(?=\s*(?:[?!,;)]|\.(?:\s|$)|$))"
_RETURN_ITEMS = re.compile(
    r"\b(?:return|send back)\s+(?P<items>.+?)\s+(?:(?:that\s+)?(?:i|we)\s+(?:got|received|bought|ordered)\s+)?"
    r"(?:from|in|of)\s+(?:my\s+|the\s+)?(?:order\s+)?⟨o\d+⟩",
    re.IGNORECASE,
)
_EXCHANGE_ITEM = [
    re.compile(r"\b(?:exchange|swap|trade)\s+(?P<item>.+?)\s*(?:\(|\bin\b|\bfrom\b|\bof\b)\s*(?:my\s+|the\s+)?(?:order\s+)?⟨o\d+⟩", re.IGNORECASE),
    re.compile(r"\bthe\s+(?P<item>[\w -]+?)\s+(?:from|in)\s+(?:my\s+)?(?:order\s+)?⟨o\d+⟩", re.IGNORECASE),
]
_EXCHANGE_VALUE = [
    re.compile(r"\bfor (?:the|a|an) (?P<v>.+?) (?:version|one|model)\b", re.IGNORECASE),
    re.compile(rf"\bfor one in (?P<v>.+?){_TERM}", re.IGNORECASE),
    re.compile(r"\bin (?P<v>.+?) instead\b", re.IGNORECASE),
    re.compile(rf"->\s*(?P<v>.+?){_TERM}", re.IGNORECASE),
]


@dataclass(slots=True)
class _Ask:
    intent: str
    order: str | None
    clause: str
    address: dict[str, str] | None = None


@dataclass(slots=True)
class _Request:
    text: str  # with placeholders for emails (⟨e⟩), addresses (⟨aN⟩) and order ids (⟨oN⟩)
    asks: list[_Ask]
    orders: list[str]
    addresses: list[dict[str, str]]
    email: str | None = None
    name: tuple[str, str] | None = None
    zip: str | None = None
    changed_mind: bool = False


def _intent(clause: str) -> str | None:
    c = clause.lower()
    if re.search(r"\bcancel\b", c):
        return "cancel"
    if re.search(r"\b(?:exchange|swap|trade)\b", c):
        return "exchange"
    if re.search(r"\breturn\b|\bsend (?:\w+ )?back\b", c):
        return "return"
    if "⟨a" in c or re.search(r"\baddress\b|\bupdate my account\b|\bship (?:it|order|⟨o)", c):
        if re.search(r"\b(?:default|profile|account|on file)\b", c):
            return "user_address"
        if "⟨o" in c or re.search(r"\b(?:ship|send|deliver)\b", c):
            return "order_address"
        return "user_address"
    if re.search(r"\bpay for\b|\bpayment\b|\buse my\b|\bcharge\b|\bpay (?:it|with)\b", c):
        return "payment"
    if re.search(r"\bwhat(?:'s| is| was) in\b|\bwhat did i (?:order|buy|get)\b|\b(?:which|what) items\b", c):
        return "order_items"
    if re.search(r"\bmy orders\b|\ball (?:of )?my orders\b", c):
        return "my_orders"
    if re.search(r"\bwhere\b|\bstatus\b|\bcheck on\b|\btrack(?:ing)?\b|\bshipped\b|\bupdate on\b", c):
        return "status"
    return None


def _parse_address(m: re.Match[str]) -> dict[str, str]:
    a2 = (m["a2"] or "").strip()
    a2 = re.sub(r"^(?:ste\.?|suite)\s*", "Suite ", a2, flags=re.IGNORECASE)
    a2 = re.sub(r"^(?:apt\.?|apartment)\s*", "Apt ", a2, flags=re.IGNORECASE)
    return {"address1": " ".join(m["a1"].split()), "address2": a2, "city": " ".join(m["city"].split()),
            "state": m["state"].upper(), "country": "USA", "zip": m["zip"]}


def _identity(req: _Request) -> None:
    text = req.text
    for pattern in (_NAME_INTRO, _NAME_COMMA, _NAME_ZIP, _NAME_HERE):
        for m in pattern.finditer(text):
            first, last = m["f"], m["l"]
            if first.lower() in _STOP or last.lower() in _STOP:
                continue
            req.name = (first.capitalize(), last.capitalize())
            if "z" in m.groupdict() and m["z"]:
                req.zip = m["z"]
            break
        if req.name:
            break
    if req.zip is None:
        for pattern in _ZIPS:
            m = pattern.search(text)
            if m:
                req.zip = m[1]
                break


def _parse(task: str) -> _Request:
    text = task
    email = None
    m = _EMAIL.search(text)
    if m:
        email = m[0]
    text = _EMAIL.sub("⟨e⟩", text)
    orders: list[str] = []

    def oid(m: re.Match[str]) -> str:
        orders.append(f"#W{m[1]}")
        return f"⟨o{len(orders) - 1}⟩"

    text = _ORDER_ID.sub(oid, text)
    addresses: list[dict[str, str]] = []

    def addr(m: re.Match[str]) -> str:
        addresses.append(_parse_address(m))
        return f"⟨a{len(addresses) - 1}⟩"

    text = _ADDRESS.sub(addr, text)
    req = _Request(text, [], orders, addresses, email=email)
    _identity(req)

    before, after = "", text
    m = _CHANGED_MIND.search(text)
    if m:
        before, after, req.changed_mind = text[: m.start()], text[m.end():], True
    last_order = None
    last_address = None
    for ref in re.findall(r"⟨([oa])(\d+)⟩", before):
        if ref[0] == "o":
            last_order = orders[int(ref[1])]
        else:
            last_address = addresses[int(ref[1])]
    for clause in _SPLIT.split(after):
        if not clause or not clause.strip():
            continue
        intent = _intent(clause)
        explicit = [orders[int(i)] for i in re.findall(r"⟨o(\d+)⟩", clause)]
        here = [addresses[int(i)] for i in re.findall(r"⟨a(\d+)⟩", clause)]
        order = explicit[0] if explicit else (last_order if _PRONOUN.search(clause) or intent else None)
        address = here[0] if here else last_address
        if explicit:
            last_order = explicit[-1]
        if here:
            last_address = here[-1]
        if intent is None or _NEGATED.search(clause):
            continue
        if intent == "my_orders":
            order = None
        ask = _Ask(intent, order, clause, address)
        if all((a.intent, a.order) != (ask.intent, ask.order) for a in req.asks):
            req.asks.append(ask)
    return req


class _Failed(Exception):
    """A call the transcript recorded as having raised."""


class _Session:
    """One task's work: tool calls (answered from the transcript when a skill already made them)."""

    def __init__(self, transcript: Sequence[Any] | None) -> None:
        self.pending = [(c.tool, c.args, c.result, c.error) for c in transcript or ()]
        self.user: dict[str, Any] = {}
        self.user_id = ""
        self.orders: dict[str, dict[str, Any]] = {}
        self.products: dict[str, dict[str, Any]] = {}

    def call(self, tool: str, **args: Any) -> Any:
        for i, (t, a, r, e) in enumerate(self.pending):
            if t == tool and a == args:  # already done before the hand-over: never again
                del self.pending[i]
                if e is not None:
                    raise _Failed(e)
                return copy.deepcopy(r)
        return TOOLBOX[tool](**args)

    def order(self, order_id: str) -> dict[str, Any]:
        if order_id not in self.orders:
            self.orders[order_id] = self.call("get_order_details", order_id=order_id)
        return self.orders[order_id]

    def product(self, product_id: str) -> dict[str, Any]:
        if product_id not in self.products:
            self.products[product_id] = self.call("get_product_details", product_id=product_id)
        return self.products[product_id]


def _money(x: float) -> str:
    return f"${x:,.2f}"


def _join(words: Sequence[str]) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _describe(s: _Session, pm_id: str) -> str:
    pm = s.user.get("payment_methods", {}).get(pm_id)
    if pm is None:
        return pm_id
    if pm["source"] == "gift_card":
        return "your gift card"
    if pm["source"] == "paypal":
        return "your PayPal account"
    if pm["source"] == "credit_card":
        return f"your {pm.get('brand', 'credit').title()} card ending in {pm.get('last_four', '????')}"
    return pm_id


def _line(a: dict[str, str]) -> str:
    return ", ".join(p for p in (a["address1"], a["address2"], a["city"]) if p) + f", {a['state']} {a['zip']}"


def _status_words(status: str) -> str:
    st = " ".join(str(status).lower().split())
    return {
        "pending": "is pending and hasn't shipped yet",
        "processed": "has been processed and shipped",
        "delivered": "has been delivered",
        "cancelled": "was cancelled",
        "pending (item modified)": "is pending with modified items and hasn't shipped yet",
        "return requested": "has a return in progress",
        "exchange requested": "has an exchange in progress",
    }.get(st, f"is {st}")


def _is_status(order: dict[str, Any], status: str) -> bool:
    return " ".join(str(order["status"]).lower().split()) == status


def _method_wanted(text: str) -> re.Match[str] | None:
    return _METHOD.search(text)


def _resolve_method(s: _Session, m: re.Match[str]) -> tuple[str | None, str | None]:
    """The payment method id a phrase names, or (None, why not). "original" gives ("original", None)."""
    if m["original"]:
        return "original", None
    methods = list(s.user["payment_methods"].values())
    if m["gift"]:
        found, what = [p for p in methods if p["source"] == "gift_card"], "a gift card"
    elif m["paypal"]:
        found, what = [p for p in methods if p["source"] == "paypal"], "a PayPal account"
    else:
        found = [p for p in methods if p["source"] == "credit_card"]
        what = "a credit card"
        if m["brand"]:
            brand = m["brand"].lower().replace("american express", "amex")
            found = [p for p in found if str(p.get("brand", "")).lower() == brand]
            what = f"a {m['brand'].title()} card"
        if m["last4"]:
            found = [p for p in found if p.get("last_four") == m["last4"]]
            what += f" ending in {m['last4']}"
    if not found:
        return None, f"I don't see {what} on your account."
    if len(found) > 1:
        cards = _join([_describe(s, p["id"]).removeprefix("your ") for p in found])
        return None, f"You have more than one: {cards}. Which one should I use?"
    return found[0]["id"], None


def _item_mentions(phrase: str) -> list[str]:
    parts = re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*", phrase.strip())
    out = []
    for p in parts:
        p = re.sub(r"^(?:the|my|a|an|both)\s+", "", p.strip(), flags=re.IGNORECASE)
        p = re.sub(r"\s+(?:too|as well|please|pls)$", "", p, flags=re.IGNORECASE)
        if p:
            out.append(" ".join(p.lower().split()))
    return out


def _pick(order: dict[str, Any], mentions: list[str]) -> tuple[list[int], str | None]:
    """Indices of the order's items the mentions name, or ([], why not)."""
    names = [i["name"].lower() for i in order["items"]]
    chosen: list[int] = []
    for m in mentions:
        hits = [k for k, n in enumerate(names) if n == m]
        if not hits:
            hits = [k for k, n in enumerate(names) if n.endswith(" " + m) or n.replace("-", " ") == m.replace("-", " ")]
        hits = [k for k in hits if k not in chosen]
        if not hits:
            article = "an" if m[:1] in "aeiou" else "a"
            return [], f"I don't see {article} {m} in order {order['order_id']}."
        if len(hits) > 1:
            opts = _join(["/".join(order["items"][k]["options"].values()) for k in hits])
            return [], f"Order {order['order_id']} has more than one {m} ({opts}); which one do you mean?"
        chosen.append(hits[0])
    return chosen, None


def _own(s: _Session, oid: str | None, why_not: str) -> tuple[dict[str, Any] | None, str | None]:
    if oid is None:
        return None, "Which order do you mean? Could you give me its order number?"
    if oid not in s.user["orders"]:
        return None, f"I can't find order {oid} on your account, so I {why_not}."
    return s.order(oid), None


def _reason(ask: _Ask, req: _Request) -> str | None:
    for text in (ask.clause, req.text):
        mistake, needless = _MISTAKE.search(text), _NOT_NEEDED.search(text)
        if mistake and (not needless or mistake.start() < needless.start()):
            return "ordered by mistake"
        if needless:
            return "no longer needed"
    return None


def _write(s: _Session, tool: str, **args: Any) -> dict[str, Any] | None:
    try:
        return s.call(tool, **args)
    except Exception:  # noqa: BLE001 - a refused write: say so, change nothing else
        return None


def _cancel(s: _Session, req: _Request, ask: _Ask) -> str:
    order, why = _own(s, ask.order, "haven't cancelled anything")
    if order is None:
        return why or ""
    oid = order["order_id"]
    if _is_status(order, "cancelled"):
        return f"Order {oid} was already cancelled; there's nothing more to cancel."
    if not _is_status(order, "pending"):
        return f"Order {oid} {_status_words(order['status'])}, so it can't be cancelled; I haven't changed anything."
    reason = _reason(ask, req)
    if reason is None:
        return f"Could you tell me why you'd like to cancel order {oid}: is it no longer needed, or was it ordered by mistake?"
    payments = [p for p in order["payment_history"] if p["transaction_type"] == "payment"]
    done = _write(s, "cancel_pending_order", order_id=oid, reason=reason)
    if done is None:
        return f"I couldn't cancel order {oid}; the system refused it."
    s.orders[oid] = done
    back = _join([f"{_money(p['amount'])} back on {_describe(s, p['payment_method_id'])}" for p in payments])
    return f"I've cancelled order {oid} ({reason}); you'll get {back}."


def _status(s: _Session, ask: _Ask) -> str:
    order, why = _own(s, ask.order, "can't share its status")
    if order is None:
        return why or ""
    tracking = [t for f in order.get("fulfillments", []) for t in f.get("tracking_id", [])]
    extra = ""
    if tracking and not _is_status(order, "cancelled"):
        extra = f" (tracking number{'s' if len(tracking) > 1 else ''} {', '.join(tracking)})"
    return f"Order {order['order_id']} {_status_words(order['status'])}{extra}."


def _order_items(s: _Session, ask: _Ask) -> str:
    order, why = _own(s, ask.order, "can't share its details")
    if order is None:
        return why or ""
    names = [i["name"] for i in order["items"]]
    n = len(names)
    return f"Order {order['order_id']} has {n} item{'s' if n != 1 else ''}: {', '.join(names)}."


def _my_orders(s: _Session) -> str:
    ids = s.user["orders"]
    if not ids:
        return "You don't have any orders with us yet."
    parts = [f"{oid} ({' '.join(str(s.order(oid)['status']).lower().split())})" for oid in ids]
    return f"You have {len(ids)} order{'s' if len(ids) != 1 else ''}: {', '.join(parts)}."


def _return(s: _Session, req: _Request, ask: _Ask) -> str:
    order, why = _own(s, ask.order, "haven't started a return")
    if order is None:
        return why or ""
    oid = order["order_id"]
    if not _is_status(order, "delivered"):
        return f"Order {oid} {_status_words(order['status'])}; only delivered orders can be returned, so I haven't started a return."
    m = _RETURN_ITEMS.search(ask.clause) or _RETURN_ITEMS.search(req.text)
    if m is None:
        return f"Which items from order {oid} would you like to return?"
    chosen, why = _pick(order, _item_mentions(m["items"]))
    if why:
        return why + " I haven't started a return."
    original = order["payment_history"][0]["payment_method_id"]
    pm_id = original
    wanted = _method_wanted(ask.clause) or _method_wanted(req.text)
    if wanted is not None:
        pm, why = _resolve_method(s, wanted)
        if pm is None:
            return (why or "") + " I haven't started a return."
        if pm != "original":
            pm_id = pm
    if pm_id != original and s.user["payment_methods"][pm_id]["source"] != "gift_card":
        return (f"Refunds can only go to the original payment method ({_describe(s, original)}) or a gift card, "
                f"so I haven't started the return; which of those would you like?")
    items = [order["items"][k] for k in chosen]
    done = _write(s, "return_delivered_order_items", order_id=oid, item_ids=[i["item_id"] for i in items], payment_method_id=pm_id)
    if done is None:
        return f"I couldn't start the return for order {oid}; the system refused it."
    s.orders[oid] = done
    total = round(sum(i["price"] for i in items), 2)
    return (f"I've started a return of the {_join([i['name'] for i in items])} from order {oid}; "
            f"{_money(total)} will be refunded to {_describe(s, pm_id)} once we receive {'it' if len(items) == 1 else 'them'}.")


def _exchange(s: _Session, req: _Request, ask: _Ask) -> str:
    order, why = _own(s, ask.order, "haven't started an exchange")
    if order is None:
        return why or ""
    oid = order["order_id"]
    if not _is_status(order, "delivered"):
        return f"Order {oid} {_status_words(order['status'])}; only delivered orders can be exchanged, so I haven't changed anything."
    item_m = next((m for p in _EXCHANGE_ITEM for m in [p.search(ask.clause) or p.search(req.text)] if m and m["item"].lower() not in ("it", "them")), None)
    value_m = next((m for p in _EXCHANGE_VALUE for m in [p.search(ask.clause) or p.search(req.text)] if m), None)
    if item_m is None or value_m is None:
        return f"Which item from order {oid} would you like to exchange, and for what?"
    chosen, why = _pick(order, _item_mentions(item_m["item"])[:1])
    if why:
        return why + " I haven't started an exchange."
    item = order["items"][chosen[0]]
    value = " ".join(value_m["v"].split())
    product = s.product(item["product_id"])
    keys = sorted({k for v in product["variants"].values() for k, x in v["options"].items() if str(x).lower() == value.lower()})
    if not keys:
        return f"The {item['name']} doesn't come in {value}; I haven't changed anything."
    if len(keys) > 1:
        return f"Do you mean {value} as the {' or the '.join(keys)} of the {item['name']}?"
    key = keys[0]
    if str(item["options"].get(key, "")).lower() == value.lower():
        return f"Your {item['name']} is already {value}; there's nothing to exchange."
    target = {**item["options"], key: next(x for v in product["variants"].values() for k, x in v["options"].items() if k == key and str(x).lower() == value.lower())}
    new = next((v for v in product["variants"].values() if v["options"] == target), None)
    if new is None:
        return f"We don't make the {item['name']} in {value} with its other options ({', '.join(str(x) for k, x in item['options'].items() if k != key)}); I haven't changed anything."
    if not new["available"]:
        return f"Sorry, the {item['name']} in {value} is out of stock right now, so I haven't started an exchange."
    diff = round(new["price"] - item["price"], 2)
    pm_id = order["payment_history"][0]["payment_method_id"]
    wanted = _method_wanted(ask.clause) or _method_wanted(req.text)
    if wanted is not None:
        pm, why = _resolve_method(s, wanted)
        if pm is None:
            return (why or "") + " I haven't started an exchange."
        if pm != "original":
            pm_id = pm
    method = s.user["payment_methods"][pm_id]
    if method["source"] == "gift_card" and method["balance"] < diff:
        return (f"Your gift card has {_money(method['balance'])}, which doesn't cover the {_money(diff)} price difference; "
                f"I haven't started the exchange.")
    done = _write(s, "exchange_delivered_order_items", order_id=oid, item_ids=[item["item_id"]], new_item_ids=[new["item_id"]], payment_method_id=pm_id)
    if done is None:
        return f"I couldn't start the exchange for order {oid}; the system refused it."
    s.orders[oid] = done
    if diff > 0:
        money = f"the {_money(diff)} difference will be charged to {_describe(s, pm_id)}"
    elif diff < 0:
        money = f"you'll get {_money(-diff)} back on {_describe(s, pm_id)}"
    else:
        money = "there's no price difference"
    return f"I've requested an exchange of the {item['name']} in order {oid} for the {value} one (item {new['item_id']}); {money}."


def _order_address(s: _Session, ask: _Ask) -> str:
    order, why = _own(s, ask.order, "haven't changed any address")
    if order is None:
        return why or ""
    oid = order["order_id"]
    if ask.address is None:
        return f"What address should order {oid} ship to?"
    if not _is_status(order, "pending"):
        return f"Order {oid} {_status_words(order['status'])}, so its shipping address can't be changed any more."
    a = ask.address
    if all(order["address"].get(k) == v for k, v in a.items()):
        return f"Order {oid} is already going to {_line(a)}; nothing to change."
    done = _write(s, "modify_pending_order_address", order_id=oid, **a)
    if done is None:
        return f"I couldn't change the address of order {oid}; the system refused it."
    s.orders[oid] = done
    return f"Order {oid} will now ship to {_line(a)}."


def _user_address(s: _Session, ask: _Ask) -> str:
    if ask.address is None:
        return "What's your new address?"
    a = ask.address
    if all(s.user["address"].get(k) == v for k, v in a.items()):
        return f"{_line(a)} is already the address on your account; nothing to change."
    done = _write(s, "modify_user_address", user_id=s.user_id, **a)
    if done is None:
        return "I couldn't update your address; the system refused it."
    s.user = done
    return f"Your default address is now {_line(a)}."


def _payment(s: _Session, req: _Request, ask: _Ask) -> str:
    order, why = _own(s, ask.order, "haven't changed any payment")
    if order is None:
        return why or ""
    oid = order["order_id"]
    wanted = _method_wanted(ask.clause) or _method_wanted(req.text)
    if wanted is None:
        return f"Which payment method would you like to use for order {oid}?"
    if not _is_status(order, "pending"):
        return f"Order {oid} {_status_words(order['status'])}, so its payment method can't be changed."
    history = order["payment_history"]
    if len(history) != 1:
        return f"Order {oid} has already been paid in more than one part, so I can't switch its payment method here."
    pm_id, why = _resolve_method(s, wanted)
    if pm_id is None:
        return (why or "") + " I haven't changed anything."
    current = history[0]["payment_method_id"]
    if pm_id in ("original", current):
        return f"Order {oid} is already paid with {_describe(s, current)}; nothing to change."
    amount = history[0]["amount"]
    method = s.user["payment_methods"][pm_id]
    if method["source"] == "gift_card" and method["balance"] < amount:
        return (f"Your gift card balance is {_money(method['balance'])}, less than the order's {_money(amount)}, "
                f"so I can't move order {oid} onto it.")
    done = _write(s, "modify_pending_order_payment", order_id=oid, payment_method_id=pm_id)
    if done is None:
        return f"I couldn't change the payment of order {oid}; the system refused it."
    s.orders[oid] = done
    return (f"Order {oid} is now paid with {_describe(s, pm_id)}; the {_money(amount)} charged to "
            f"{_describe(s, current)} will be refunded.")


def _authenticate(s: _Session, req: _Request) -> str | None:
    """Look the customer up; None when done, else what to say instead."""
    try:
        if req.email:
            s.user_id = s.call("find_user_id_by_email", email=req.email)
        elif req.name and req.zip:
            s.user_id = s.call("find_user_id_by_name_zip", first_name=req.name[0], last_name=req.name[1], zip=req.zip)
        else:
            return "Could you give me the email on your account, or your name and zip code, so I can look you up?"
    except Exception:  # noqa: BLE001 - not found
        if req.email:
            return f"I couldn't find an account with the email {req.email}. Could you check it?"
        return f"I couldn't find an account for {req.name[0]} {req.name[1]} with zip code {req.zip}. Could you check the details?"  # type: ignore[index]
    s.user = s.call("get_user_details", user_id=s.user_id)
    return None


def _do(s: _Session, req: _Request, ask: _Ask) -> str:
    if ask.intent == "cancel":
        return _cancel(s, req, ask)
    if ask.intent == "status":
        return _status(s, ask)
    if ask.intent == "order_items":
        return _order_items(s, ask)
    if ask.intent == "my_orders":
        return _my_orders(s)
    if ask.intent == "return":
        return _return(s, req, ask)
    if ask.intent == "exchange":
        return _exchange(s, req, ask)
    if ask.intent == "order_address":
        return _order_address(s, ask)
    if ask.intent == "user_address":
        return _user_address(s, ask)
    if ask.intent == "payment":
        return _payment(s, req, ask)
    return "Sorry, I couldn't tell what you need."


def agent(task: str, transcript: Sequence[Any] | None = None) -> str:
    """Serve a customer's message with the tools; continue from ``transcript`` (calls already made) if given."""
    req = _parse(task)
    s = _Session(transcript)
    lead = ["OK, I won't go ahead with that."] if req.changed_mind else []
    if not req.asks:
        return " ".join(lead) if lead else "Sorry, I couldn't tell what you need; could you rephrase?"
    why = _authenticate(s, req)
    if why is not None:
        return " ".join([*lead, why])
    return " ".join([*lead, *(_do(s, req, a) for a in req.asks)])


# -- the stream: two days of customer messages ---------------------------------------------

PHRASINGS: dict[str, list[str]] = {
    "cancel": [
        "Hi, I'm {First} {Last}, zip code {zip}. Please cancel order {oid}, I no longer need it.",
        "My email is {email}. I want to cancel my order {oid} because I ordered it by mistake.",
        "Hello! {persona} Could you cancel {num} for me? I don't need it anymore. {first} {last} ({zip}). Thanks!",
        "cancel {oid} pls, ordered by accident. email {email}",
    ],
    "status": [
        "Hi, where is my order {oid}? My email is {email}.",
        "I'm {First} {Last}, zip {zip}. What's the status of order {num}?",
        "Can you check on {oid} for me? {persona} Email: {email}. Thanks!",
        "status of {oid}?? {LAST}, {First} - {zip}",
    ],
    "order_items": [
        "Hi, what did I order in {oid}? My email is {email}.",
        "I'm {First} {Last} (zip {zip}). Which items are in order {num}?",
        "{persona} I can't remember what's in {oid}, can you remind me? Email {email}",
        "what's in order {oid}? {first} {last}, zip {zip}",
    ],
    "my_orders": [
        "Hi, I'm {First} {Last}, zip {zip}. Can you tell me the status of all my orders?",
        "My email is {email}. Where are my orders?",
        "{persona} Could you give me an update on all of my orders? {email}",
        "list my orders pls. {First} {Last} {zip}",
    ],
    "return": [
        "Hi, I'm {First} {Last} (zip {zip}). I'd like to return {items} from order {oid}.",
        "My email is {email}. Please return {items} from {oid} and refund it to my {pm}.",
        "{persona} I want to send back {items} I got in order {num}. {First} {Last}, {zip}.",
        "return {items} from {oid}, email {email}, refund to original payment method",
    ],
    "exchange": [
        "Hi, I'm {First} {Last}, zip {zip}. I'd like to exchange the {item} in order {oid} for the {value} version.",
        "Email {email}. Can I swap the {item} from {oid} for one in {value}?",
        "{persona} The {item} from order {num} isn't right, could you exchange it for the {value} one? {first} {last}, zip {zip}.",
        "exchange {item} ({oid}) -> {value}, pay the difference with my {pm}. email {email}",
    ],
    "order_address": [
        "Hi, I'm {First} {Last}, zip {zip}. Please ship order {oid} to {addr} instead.",
        "My email is {email}. Can you change the shipping address on {oid} to {addr}?",
        "{persona} I just moved. Could you send {num} to my new place: {addr}? {First} {Last}, zip code {zip}",
        "change address for {oid} to {addr} - {email}",
    ],
    "user_address": [
        "Hi, I'm {First} {Last}, zip {zip}. Please update my default address to {addr}.",
        "My email is {email}. I moved; my new address is {addr}. Can you update my account?",
        "{persona} Please change the address on my profile to {addr}. Email: {email}. Thanks!",
        "new address for my account: {addr}. {first} {last}, {zip}",
    ],
    "payment": [
        "Hi, I'm {First} {Last}, zip {zip}. Can I pay for order {oid} with my {pm} instead?",
        "My email is {email}. Please switch the payment method on {oid} to my {pm}.",
        "{persona} I'd rather use my {pm} for order {num}. {First} {Last} ({zip}).",
        "change payment on {oid} to {pm} pls, {email}",
    ],
    "two_requests": [
        "Hi, I'm {First} {Last}, zip {zip}. Please cancel order {oid} because I no longer need it, and tell me where order {oid2} is.",
        "My email is {email}. Please return {items} from {oid}, and also change my default address to {addr}.",
        "{persona} Can you change the shipping address of {oid} to {addr} and update my default address too? {First} {Last}, zip {zip}.",
        "Email {email}. I'd like to cancel {oid} (ordered by mistake) and also cancel {oid2}, I don't need it anymore.",
    ],
    "changed_mind": [
        "Hi, I'm {First} {Last}, zip {zip}. Please cancel order {oid}, I no longer need it. Actually, don't cancel it, just tell me its status.",
        "My email is {email}. I'd like to return {items} from {oid}. Actually, never mind — keep it, just tell me what's in the order.",
        "{persona} Please change the shipping address of {oid} to {addr}. On second thought, don't change anything; just tell me where it is. {email}",
        "cancel {oid}, ordered by mistake. wait no, don't cancel it. what's its status? {first} {last} {zip}",
    ],
}
PERSONAS = [
    "I'm a busy teacher and don't have much time.",
    "I'm in a bit of a hurry.",
    "As a loyal customer, I expect quick help.",
    "I'm a night-shift nurse, so please keep it short.",
    "I've been shopping here for years.",
    "I'm not very good with computers.",
    "I'm so frustrated right now.",
    "I'm writing from my phone, sorry for typos.",
]
_PLAIN_VALUE = re.compile(r"[A-Za-z][A-Za-z0-9 .-]*")


def _q(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _set(table: str, key: str, path: str, value: Any) -> str:
    v = f"json({_q(json.dumps(value))})" if isinstance(value, (list, dict)) else _q(value) if isinstance(value, str) else repr(value)
    return f"UPDATE {table} SET data = json_set(data, {_q(path)}, {v}) WHERE {_TABLES[table]} = {_q(key)}"


def _addr_text(a: dict[str, str], style: int) -> str:
    if style == 1:
        return f"{a['address1']}, {a['city']}, {a['state']} {a['zip']}"
    tail = ", USA" if style == 2 else ""
    return f"{a['address1']}, {a['address2']}, {a['city']}, {a['state']} {a['zip']}{tail}"


def _one_option_to(var: dict[str, Any], item: dict[str, Any], value: str) -> bool:
    """Whether variant ``var`` is ``item`` with one option changed, to ``value`` (as the task writes it)."""
    diff = [k for k in var["options"] if var["options"][k] != item["options"].get(k)]
    return len(diff) == 1 and str(var["options"][diff[0]]) == value


class _Stream:
    """Builds tasks from the pristine database: picks customers and orders for the world wanted, renders a phrasing."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        d = _data()
        self.users, self.orders, self.products = d["users"], d["orders"], d["products"]
        self.order_ids = sorted(self.orders)
        self.user_ids = sorted(self.users)
        self.used: set[str] = set()  # orders a task already used (the world may have changed them)
        self.moved: set[str] = set()  # customers whose address (so zip) a task changes or may change
        self.first_user: dict[tuple[str, int], str] = {}
        self.list_len: dict[tuple[str, int], int] = {}

    # -- picking --------------------------------------------------------------------------

    def _free(self, uid: str) -> bool:
        return uid not in self.moved

    def order(self, pred: Callable[[dict[str, Any]], bool], prefer: str | None = None, user_pred: Callable[[str], bool] | None = None) -> dict[str, Any]:
        cands = [o for o in self.order_ids if o not in self.used and self._free(self.orders[o]["user_id"])
                 and (user_pred is None or user_pred(self.orders[o]["user_id"])) and pred(self.orders[o])]
        mine = [o for o in cands if self.orders[o]["user_id"] == prefer]
        if not cands:
            raise LookupError("no order fits")
        oid = self.rng.choice(mine or cands)
        self.used.add(oid)
        return self.orders[oid]

    def user(self, pred: Callable[[dict[str, Any]], bool], prefer: str | None = None) -> str:
        if prefer is not None and self._free(prefer) and pred(self.users[prefer]):
            return prefer
        return self.rng.choice([u for u in self.user_ids if self._free(u) and pred(self.users[u])])

    def other_address(self, not_zip: str | None = None) -> dict[str, str]:
        uid = self.rng.choice([u for u in self.user_ids if self.users[u]["address"]["zip"] != not_zip])
        return dict(self.users[uid]["address"])

    def status(self, oid: str) -> str:
        return self.orders[oid]["status"]

    def length(self, kind: str, i: int, day: int, choices: Sequence[int] = (2, 3)) -> int:
        key = (kind, i)
        if day == 1 or key not in self.list_len:
            self.list_len.setdefault(key, self.rng.choice(list(choices)))
        return self.list_len[key]

    # -- rendering ------------------------------------------------------------------------

    def identity(self, uid: str) -> dict[str, str]:
        u = self.users[uid]
        first, last = u["name"]["first_name"], u["name"]["last_name"]
        return {"First": first, "Last": last, "first": first.lower(), "last": last.lower(), "LAST": last.upper(),
                "zip": u["address"]["zip"], "email": u["email"], "persona": self.rng.choice(PERSONAS)}

    def ids(self, oid: str, casual: bool = False) -> dict[str, str]:
        num = oid.lstrip("#")
        if casual and self.rng.random() < 0.3:
            return {"oid": oid.lower(), "num": num.lower()}
        return {"oid": oid, "num": num}

    def item_words(self, order: dict[str, Any], idx: Sequence[int], articles: bool, name_of: Sequence[str] | None = None) -> str:
        names = [i["name"] for i in order["items"]]
        lasts = [n.split()[-1].lower() for n in names]
        words = []
        for pos, k in enumerate(idx):
            name = name_of[pos] if name_of else names[k]
            r = self.rng.random()
            short = name.split()[-1].lower()
            if name_of is None and len(name.split()) > 1 and lasts.count(short) == 1 and r < 0.35:
                w = short
            elif r < 0.7:
                w = name.lower()
            else:
                w = name
            words.append(f"the {w}" if articles else w)
        return _join(words)

    def method_phrase(self, uid: str, pm_id: str) -> str:
        pm = self.users[uid]["payment_methods"][pm_id]
        if pm["source"] == "gift_card":
            return "gift card"
        if pm["source"] == "paypal":
            return "PayPal"
        cards = [p for p in self.users[uid]["payment_methods"].values() if p["source"] == "credit_card"]
        if len(cards) == 1 and self.rng.random() < 0.5:
            return "credit card"
        return f"{pm['brand'].title()} card ending in {pm['last_four']}"

    def has(self, uid: str, source: str) -> list[str]:
        return [p["id"] for p in self.users[uid]["payment_methods"].values() if p["source"] == source]

    # -- one task -------------------------------------------------------------------------

    def make(self, kind: str, i: int, branch: str = "normal", day: int = 1, tempting: bool = False, why: str = "") -> Task:
        prefer = self.first_user.get((kind, i)) if tempting or branch == "same_user" else None
        v, setup, uid = getattr(self, f"_{kind}")(i, branch, day, prefer)
        if day == 1:
            self.first_user.setdefault((kind, i), uid)
        v = {**self.identity(uid), **v}
        return Task(PHRASINGS[kind][i].format(**v), tuple(setup), tempting, kind, day, why)

    def _pending(self, o: dict[str, Any]) -> bool:
        return o["status"] == "pending" and len(o["payment_history"]) == 1

    def _cancel(self, i: int, branch: str, day: int, prefer: str | None) -> tuple[dict[str, str], list[str], str]:
        setup: list[str] = []
        want = {"processed": "processed", "delivered": "delivered", "cancelled": "cancelled"}.get(branch, "pending")
        if branch == "not_theirs":
            uid = self.user(lambda u: bool(u["orders"]), prefer)
            o = self.order(lambda o: self._pending(o) and o["user_id"] != uid)
        else:
            o = self.order(lambda o: o["status"] == want, prefer)
            uid = o["user_id"]
        if branch == "item_modified":
            setup.append(_set("orders", o["order_id"], "$.status", "pending (item modified)"))
        if branch == "two_payments":
            o = self.order(lambda o: self._pending(o) and bool(self.has(o["user_id"], "gift_card"))
                           and "gift_card" not in o["payment_history"][0]["payment_method_id"], prefer)
            uid = o["user_id"]
            amount = o["payment_history"][0]["amount"]
            part = round(min(40.0, amount / 3), 2)
            setup.append(_set("orders", o["order_id"], "$.payment_history", [
                {"transaction_type": "payment", "amount": part, "payment_method_id": self.has(uid, "gift_card")[0]},
                {"transaction_type": "payment", "amount": round(amount - part, 2), "payment_method_id": o["payment_history"][0]["payment_method_id"]},
            ]))
        return self.ids(o["order_id"], casual=i == 3), setup, uid

    def _status(self, i: int, branch: str, day: int, prefer: str | None) -> tuple[dict[str, str], list[str], str]:
        setup: list[str] = []
        if branch == "not_theirs":
            uid = self.user(lambda u: bool(u["orders"]), prefer)
            o = self.order(lambda o: o["user_id"] != uid)
        else:
            want = {"cancelled": ("cancelled",), "Pending": ("pending",), "delivered": ("delivered",), "pending": ("pending",)}.get(
                branch, ("pending", "processed", "delivered"))
            user_pred = (lambda u: len(self.users[u]["orders"]) >= 3) if branch == "same_user" else None
            o = self.order(lambda o: o["status"] in want, prefer, user_pred)
            uid = o["user_id"]
            if branch == "Pending":
                setup.append(_set("orders", o["order_id"], "$.status", "Pending"))
        if branch == "moved":
            setup.append(_set("users", uid, "$.address.zip", self.other_address(self.users[uid]["address"]["zip"])["zip"]))
            self.moved.add(uid)
        return self.ids(o["order_id"], casual=i == 3), setup, uid

    def _order_items(self, i: int, branch: str, day: int, prefer: str | None) -> tuple[dict[str, str], list[str], str]:
        n = {"longer": 5, "one": 1}.get(branch) or self.length("order_items", i, day)
        if branch == "dup_names":
            o = self.order(lambda o: len({x["name"] for x in o["items"]}) < len(o["items"]) and len(o["items"]) == self.length("order_items", i, day) + 1, prefer)
        else:
            o = self.order(lambda o: len(o["items"]) == n and o["status"] != "cancelled", prefer)
        return self.ids(o["order_id"]), [], o["user_id"]

    def _my_orders(self, i: int, branch: str, day: int, prefer: str | None) -> tuple[dict[str, str], list[str], str]:
        n = {"longer": 5, "one": 1, "none": 0}.get(branch)
        if n is None:
            n = self.length("my_orders", i, day)
        uid = self.user(lambda u: len(u["orders"]) == n, prefer)
        return {}, [], uid

    def _delivered_items(self, n: int, prefer: str | None, status: str = "delivered", dup: bool = False) -> tuple[dict[str, Any], list[int]]:
        def ok(o: dict[str, Any]) -> bool:
            names = [x["name"] for x in o["items"]]
            if o["status"] != status:
                return False
            if dup:
                return len(set(names)) < len(names)
            return len(set(names)) == len(names) and len(names) >= n
        o = self.order(ok, prefer)
        if dup:
            names = [x["name"] for x in o["items"]]
            k = next(k for k, x in enumerate(names) if names.count(x) > 1)
            return o, [k]
        return o, sorted(self.rng.sample(range(len(o["items"])), n))

    def _return(self, i: int, branch: str, day: int, prefer: str | None) -> tuple[dict[str, str], list[str], str]:
        n = self.length("return", i, day, (1, 2))
        if branch == "more_items":
            n += 1
        status = "pending" if branch in ("pending", "not_delivered") else "delivered"
        if branch == "not_theirs":
            uid = self.user(lambda u: bool(u["orders"]), prefer)
            o = self.order(lambda o: o["status"] == "delivered" and o["user_id"] != uid and len({x["name"] for x in o["items"]}) == len(o["items"]) >= n)
            idx = sorted(self.rng.sample(range(len(o["items"])), n))
        else:
            o, idx = self._delivered_items(n, prefer, status, dup=branch == "ambiguous")
            uid = o["user_id"]
        v = self.ids(o["order_id"], casual=i == 3)
        name_of = None
        if branch == "not_in_order":
            absent = sorted({p["name"] for p in self.products.values()} - {x["name"] for x in o["items"]})
            name_of = [o["items"][k]["name"] for k in idx[:-1]] + [self.rng.choice(absent)]
        v["items"] = self.item_words(o, idx, articles=i != 3, name_of=name_of)
        original = o["payment_history"][0]["payment_method_id"]
        if branch == "other_card":
            others = [p for p in self.users[uid]["payment_methods"] if p != original and "gift_card" not in p]
            v["pm"] = self.method_phrase(uid, others[0]) if others else "PayPal"
        elif self.has(uid, "gift_card") and self.rng.random() < 0.6:
            v["pm"] = "gift card"
        else:
            v["pm"] = "original payment method"
        return v, [], uid

    def _exchange_target(self, o: dict[str, Any], available: bool, same: bool = False, sign: int = 0) -> tuple[int, str] | None:
        names = [x["name"] for x in o["items"]]
        options = []
        for k, item in enumerate(o["items"]):
            if names.count(item["name"]) > 1:
                continue
            variants = self.products[item["product_id"]]["variants"].values()
            keys = {}
            for var in variants:
                for key, x in var["options"].items():
                    keys.setdefault(str(x).lower(), set()).add(key)
            for key, cur in item["options"].items():
                if same:
                    if _PLAIN_VALUE.fullmatch(str(cur)) and len(keys.get(str(cur).lower(), ())) == 1 and cur not in ("yes", "no", "none"):
                        options.append((k, str(cur)))
                    continue
                for var in variants:
                    diff = [kk for kk in var["options"] if var["options"][kk] != item["options"].get(kk)]
                    val = str(var["options"][key])
                    if diff != [key] or var["available"] != available or val in ("yes", "no", "none"):
                        continue
                    if not _PLAIN_VALUE.fullmatch(val) or len(keys.get(val.lower(), ())) != 1:
                        continue
                    if sign and (var["price"] - item["price"]) * sign <= 0:
                        continue
                    options.append((k, val))
        return self.rng.choice(options) if options else None

    def _exchange(self, i: int, branch: str, day: int, prefer: str | None) -> tuple[dict[str, str], list[str], str]:
        setup: list[str] = []
        available = branch != "unavailable"
        status = "pending" if branch == "not_delivered" else "delivered"
        sign = {"cheaper": -1, "gift_short": 1}.get(branch, 0)
        user_pred = (lambda u: bool(self.has(u, "gift_card"))) if branch == "gift_short" else None
        picks: dict[str, tuple[int, str]] = {}

        def ok(o: dict[str, Any]) -> bool:
            if o["status"] != status:
                return False
            t = self._exchange_target(o, available, same=branch == "same_option", sign=sign)
            if t is not None:
                picks[o["order_id"]] = t
            return t is not None
        o = self.order(ok, prefer, user_pred)
        uid = o["user_id"]
        k, value = picks[o["order_id"]]
        item = o["items"][k]
        v = {**self.ids(o["order_id"], casual=i == 3), "value": value,
             "item": item["name"].lower() if self.rng.random() < 0.6 else item["name"]}
        pm_id = o["payment_history"][0]["payment_method_id"]
        if branch == "gift_short":
            gc = self.has(uid, "gift_card")[0]
            new = next(var for var in self.products[item["product_id"]]["variants"].values() if _one_option_to(var, item, value))
            diff = round(new["price"] - item["price"], 2)
            setup.append(_set("users", uid, f"$.payment_methods.{gc}.balance", round(diff / 2, 2)))
            v["pm"] = "gift card"
        elif self.has(uid, "gift_card") and self.rng.random() < 0.5:
            v["pm"] = "gift card"
        else:
            v["pm"] = self.method_phrase(uid, pm_id) if "gift_card" not in pm_id else "gift card"
        return v, setup, uid

    def _order_address(self, i: int, branch: str, day: int, prefer: str | None) -> tuple[dict[str, str], list[str], str]:
        style = self.rng.choice([0, 0, 1, 2])
        if branch == "not_theirs":
            uid = self.user(lambda u: bool(u["orders"]), prefer)
            o = self.order(lambda o: self._pending(o) and o["user_id"] != uid)
        else:
            want = {"processed": "processed", "delivered": "delivered"}.get(branch, "pending")
            o = self.order(lambda o: o["status"] == want, prefer)
            uid = o["user_id"]
        a = self.other_address(o["address"]["zip"])
        if branch == "same_zip":  # another street in the customer's own town and zip code
            own = self.users[uid]["address"]
            a = {**a, "city": own["city"], "state": own["state"], "zip": own["zip"]}
        return {**self.ids(o["order_id"], casual=i == 3), "addr": _addr_text(a, style)}, [], uid

    def _user_address(self, i: int, branch: str, day: int, prefer: str | None) -> tuple[dict[str, str], list[str], str]:
        uid = self.user(lambda u: True, prefer)
        if branch == "same":
            a, style = self.users[uid]["address"], self.rng.choice([0, 2])
        else:
            a, style = self.other_address(self.users[uid]["address"]["zip"]), self.rng.choice([0, 0, 1, 2])
        v = {"addr": _addr_text(a, style)}
        if branch == "unknown_email":
            name, domain = self.users[uid]["email"].split("@")
            v["email"] = f"{name[:-1]}@{domain}"  # a digit dropped: no such account
        self.moved.add(uid)
        return v, [], uid

    def _payment(self, i: int, branch: str, day: int, prefer: str | None) -> tuple[dict[str, str], list[str], str]:
        setup: list[str] = []
        if branch == "not_pending":
            o = self.order(lambda o: o["status"] == "processed", prefer)
        elif branch in ("short_balance", "exact_balance"):
            o = self.order(lambda o: self._pending(o) and "gift_card" not in o["payment_history"][0]["payment_method_id"], prefer,
                           lambda u: bool(self.has(u, "gift_card")))
        elif branch == "no_gift_card":
            o = self.order(self._pending, prefer, lambda u: not self.has(u, "gift_card"))
        else:
            o = self.order(lambda o: self._pending(o) and len(self.users[o["user_id"]]["payment_methods"]) > 1, prefer)
        uid = o["user_id"]
        current = o["payment_history"][0]["payment_method_id"]
        amount = o["payment_history"][0]["amount"]
        others = [p for p in self.users[uid]["payment_methods"] if p != current]
        if branch == "same_method":
            target = current
        elif branch in ("short_balance", "exact_balance"):
            target = self.has(uid, "gift_card")[0]
        elif branch == "no_gift_card":
            target = ""
        else:
            target = self.rng.choice(others) if others else current
        if target.startswith("gift_card") and branch != "same_method":
            balance = {"short_balance": round(amount * 0.6, 2), "exact_balance": amount}.get(branch, round(amount + self.rng.randint(5, 80), 2))
            setup.append(_set("users", uid, f"$.payment_methods.{target}.balance", balance))
        v = {**self.ids(o["order_id"], casual=i == 3), "pm": self.method_phrase(uid, target) if target else "gift card"}
        return v, setup, uid

    def _two_requests(self, i: int, branch: str, day: int, prefer: str | None) -> tuple[dict[str, str], list[str], str]:
        style = self.rng.choice([0, 0, 1, 2])
        if i in (0, 3):
            first = "processed" if branch == "first_not_pending" else "pending"
            second = {0: ("pending", "processed", "delivered", "cancelled"), 3: ("pending",)}[i]
            if branch == "second_cancelled":
                second = ("cancelled",)

            def has_pair(uid: str) -> bool:
                st = [self.orders[x]["status"] for x in self.users[uid]["orders"] if x not in self.used]
                return first in st and any(s in second for s in st) and (first not in second or st.count(first) >= 2)
            o = self.order(lambda o: o["status"] == first and len(o["payment_history"]) == 1, prefer, has_pair)
            uid = o["user_id"]
            o2 = self.order(lambda x: x["status"] in second, uid, lambda u: u == uid)
            return {**self.ids(o["order_id"]), "oid2": o2["order_id"]}, [], uid
        if i == 1:
            n = self.length("two_requests", i, day, (1, 2))
            o, idx = self._delivered_items(n, prefer, "pending" if branch == "not_delivered" else "delivered")
            uid = o["user_id"]
            self.moved.add(uid)
            a = self.other_address(self.users[uid]["address"]["zip"])
            return {**self.ids(o["order_id"]), "items": self.item_words(o, idx, articles=True), "addr": _addr_text(a, style)}, [], uid
        o = self.order(lambda o: o["status"] == ("processed" if branch == "first_not_pending" else "pending"), prefer)
        uid = o["user_id"]
        self.moved.add(uid)
        a = self.other_address(self.users[uid]["address"]["zip"])
        return {**self.ids(o["order_id"]), "addr": _addr_text(a, style)}, [], uid

    def _changed_mind(self, i: int, branch: str, day: int, prefer: str | None) -> tuple[dict[str, str], list[str], str]:
        style = self.rng.choice([0, 0, 1, 2])
        if i == 1:
            n = self.length("changed_mind", i, day, (1, 2))
            o, idx = self._delivered_items(n + (1 if branch == "longer" else 0), prefer)
            return {**self.ids(o["order_id"]), "items": self.item_words(o, idx, articles=True)}, [], o["user_id"]
        want = "processed" if branch == "processed" else "pending"
        o = self.order(lambda o: o["status"] == want, prefer)
        v = {**self.ids(o["order_id"], casual=i == 3), "addr": _addr_text(self.other_address(o["address"]["zip"]), style)}
        return v, [], o["user_id"]


# (kind, phrasing, branch, why) of the day-2 tasks meant to tempt a wrong replay
_TEMPTING: list[tuple[str, int, str, str]] = [
    ("cancel", 0, "processed", "already processed (shipped): cannot be cancelled"),
    ("cancel", 1, "delivered", "delivered: cannot be cancelled"),
    ("cancel", 2, "cancelled", "already cancelled"),
    ("cancel", 3, "not_theirs", "the order belongs to another customer"),
    ("cancel", 0, "item_modified", "status 'pending (item modified)', not plain 'pending'"),
    ("cancel", 1, "two_payments", "paid in two parts: two refunds, one to a gift card"),
    ("status", 0, "cancelled", "a cancelled order (no longer moving)"),
    ("status", 1, "not_theirs", "the order belongs to another customer"),
    ("status", 2, "Pending", "status stored as 'Pending' (another case)"),
    ("status", 3, "moved", "the customer moved: name + old zip finds nobody"),
    ("status", 1, "same_user", "same customer, another order (at another position in their list)"),
    ("order_items", 0, "longer", "a longer list of items"),
    ("order_items", 1, "one", "a single item"),
    ("order_items", 3, "dup_names", "two items of the same product"),
    ("my_orders", 0, "longer", "more orders"),
    ("my_orders", 1, "one", "a single order"),
    ("my_orders", 2, "none", "no orders at all"),
    ("return", 0, "pending", "not delivered yet: no return"),
    ("return", 0, "more_items", "one more item in the list"),
    ("return", 1, "other_card", "refund asked to a method that is neither the original nor a gift card"),
    ("return", 2, "not_in_order", "one of the items is not in the order"),
    ("return", 3, "not_theirs", "the order belongs to another customer"),
    ("return", 2, "ambiguous", "two items of the same product: which one?"),
    ("exchange", 0, "unavailable", "the variant asked for is out of stock"),
    ("exchange", 1, "not_delivered", "not delivered: no exchange"),
    ("exchange", 3, "gift_short", "the gift card does not cover the price difference"),
    ("exchange", 0, "same_option", "the item already has that option"),
    ("exchange", 2, "cheaper", "a negative price difference: a refund, not a charge"),
    ("order_address", 0, "processed", "already processed: the address cannot change"),
    ("order_address", 1, "not_theirs", "the order belongs to another customer"),
    ("order_address", 3, "same_zip", "the new address has the customer's own zip code"),
    ("user_address", 0, "same", "already the address on file"),
    ("user_address", 2, "unknown_email", "an email with a typo: no such customer"),
    ("payment", 0, "short_balance", "the gift card balance is below the order total"),
    ("payment", 1, "same_method", "already paid with that method"),
    ("payment", 2, "not_pending", "processed: the payment cannot change"),
    ("payment", 3, "no_gift_card", "the customer has no gift card"),
    ("payment", 0, "exact_balance", "the gift card balance equals the order total exactly"),
    ("two_requests", 0, "first_not_pending", "the order to cancel is already processed"),
    ("two_requests", 3, "second_cancelled", "the second order to cancel is already cancelled"),
    ("changed_mind", 0, "processed", "a change of mind about an order that could not be cancelled anyway"),
]


def _extra(s: _Stream, day: int = 2) -> list[Task]:
    """Tasks of a later day whose text carries more than the phrasing did: a trailing change of mind or request."""
    out = []
    for kind, i, tail, why in [
        ("cancel", 0, " Actually, don't cancel it, just tell me its status.", "a change of mind after the reason"),
        ("return", 0, " Actually, never mind, just tell me what's in the order.", "a change of mind after the item list"),
        ("order_address", 1, " And please update my default address too.", "a second request after the address"),
        ("status", 0, " Also, please cancel it, I no longer need it.", "a second request after the order id"),
        ("exchange", 1, " Actually, don't exchange it, just tell me its status.", "a change of mind after the option"),
        ("payment", 0, " Actually, don't change anything. What's in that order?", "a change of mind after the payment method"),
    ]:
        branch = "pending" if kind == "status" else "normal"
        t = s.make(kind, i, branch, day=day, tempting=True, why=why)
        if kind == "order_address":
            s.moved.add(s.first_user.get((kind, i), ""))
        out.append(Task(t.text + tail, t.setup_sql, True, kind, day, why))
    return out


def tasks(seed: int = 7, days: int = 2) -> list[Task]:
    """``days`` days of retail customer messages, deterministic for a seed (tempting ones flagged); the first
    two are the same whatever ``days``, and each later day is shaped as day 2 is, with other values."""
    s = _Stream(seed)
    singles = [(k, i) for k, ps in PHRASINGS.items() for i in range(len(ps))]
    day1 = [s.make(k, i, day=1) for k, i in singles]
    day1 += [s.make(k, i, day=1) for k, i in s.rng.sample(singles, 20)]  # a busy morning: some asked twice
    s.rng.shuffle(day1)
    # the world is not always the common case, on day 1 either
    for kind, i, branch in [("cancel", 0, "processed"), ("return", 2, "pending"), ("payment", 1, "short_balance"),
                            ("exchange", 0, "unavailable"), ("status", 1, "cancelled"), ("user_address", 0, "same")]:
        day1.insert(s.rng.randrange(len(day1) // 2, len(day1) + 1), s.make(kind, i, branch, day=1))
    out = day1
    for d in range(2, days + 1):
        later = [s.make(k, i, day=d) for k, i in singles]
        for k, i, b, w in _TEMPTING:
            try:
                later.append(s.make(k, i, b, day=d, tempting=True, why=w))
            except LookupError:  # no unused order of that kind is left in the database: the branch is not tried that day
                if d == 2:
                    raise
        later += _extra(s, d)
        s.rng.shuffle(later)
        out += later
    return out
