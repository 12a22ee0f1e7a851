"""The tau-bench retail tools, written from the dataset's description, over an in-memory database.

The database is tau-bench's (``bench/data/tau-retail``: users, orders, products, each a dict keyed
by id). The tools are plain top-level functions that act on the module's current database,
set with ``use_world(db)``; ``fresh_db()`` gives a new, independent copy of the vendored one.

Conventions, as tau-bench has them:

- Results are JSON values (dicts, lists, strings), always fresh copies: a result kept by a caller
  never changes when the database does later.
- **A refused call returns a string starting with ``"Error: "`` and changes nothing**; no tool
  raises for a refused request (a missing user, order or product, a wrong status, an item not in
  the order, a gift card without the balance, ...). A call with arguments of the wrong type may
  still raise ``TypeError`` or ``AttributeError``, as any Python function would.
- Writes apply the documented effects: status changes, payment history entries, gift card
  balances, the ``cancel_reason``/``return_*``/``exchange_*`` fields of an order, a user's address.

``fresh_db()`` is copy-on-write: the three tables are new dicts whose records are shared with a
pristine copy of the vendored data until a write replaces a record with its own deep copy. Since
every write goes through ``_own()`` and every read returns a deep copy, a fresh database behaves
exactly like a deep copy of the vendored one, at a fraction of its cost (a deep copy takes
~50 ms; this takes ~50 µs), and ``changed(db)`` finds what a run changed without a full scan.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

__all__ = [
    "FUNCTIONS", "READS", "TABLES", "TOOLBOX", "TOOLS", "WRITES", "Database", "calculate", "cancel_pending_order", "changed",
    "current_db", "diff_states", "exchange_delivered_order_items", "find_user_id_by_email",
    "find_user_id_by_name_zip", "fresh_db", "get_order_details", "get_product_details", "get_user_details",
    "list_all_product_types", "modify_pending_order_address", "modify_pending_order_items",
    "modify_pending_order_payment", "modify_user_address", "return_delivered_order_items", "think",
    "transfer_to_human_agents", "use_world", "using", "vendored",
]

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "tau-retail"
TABLES = ("users", "orders", "products")

Database = dict[str, dict[str, Any]]
"""``{"users": {user_id: user}, "orders": {order_id: order}, "products": {product_id: product}}``."""

_db: Database | None = None

_REASONS = ("no longer needed", "ordered by mistake")


@cache
def _pristine() -> Database:
    """The vendored database, read once; never mutated (records are copied before a write)."""
    return {t: json.loads((DATA_DIR / f"{t}.json").read_text()) for t in TABLES}


def vendored() -> Database:
    """The vendored database as read from disk (shared by every fresh database: never mutate it)."""
    return _pristine()


def fresh_db() -> Database:
    """A new database in the vendored state, independent of every other (copy-on-write)."""
    return {t: dict(records) for t, records in _pristine().items()}


def use_world(db: Database) -> None:
    """Point the tools at ``db`` (used in place: writes change it)."""
    global _db
    _db = db


def current_db() -> Database:
    """The database the tools act on."""
    if _db is None:
        raise RuntimeError("no retail database in use: call use_world(fresh_db()) first")
    return _db


@contextmanager
def using(db: Database) -> Iterator[Database]:
    """Point the tools at ``db`` for a ``with`` block, then back at the database they had."""
    global _db
    before = _db
    _db = db
    try:
        yield db
    finally:
        _db = before


def changed(db: Database) -> dict[str, dict[str, Any]]:
    """The records of ``db`` that a write replaced (whether or not their content differs now), by table."""
    pristine = _pristine()
    return {t: {k: v for k, v in db[t].items() if v is not pristine[t].get(k)} for t in TABLES}


def diff_states(a: Database, b: Database) -> list[str]:
    """How two databases differ, as ``"table key: field ..."`` lines; empty when their states are equal.

    Only records a write touched in either database are compared (the others are the shared
    pristine records), so this is cheap.
    """
    out: list[str] = []
    ca, cb = changed(a), changed(b)
    for t in TABLES:
        for key in sorted(set(ca[t]) | set(cb[t])):
            ra, rb = a[t].get(key), b[t].get(key)
            if ra == rb:
                continue
            if not isinstance(ra, dict) or not isinstance(rb, dict):
                out.append(f"{t} {key}: {ra!r} != {rb!r}")
                continue
            for f in sorted(set(ra) | set(rb)):
                if ra.get(f) != rb.get(f):
                    out.append(f"{t} {key}: {f} {ra.get(f, '<absent>')!r} != {rb.get(f, '<absent>')!r}")
    return out


def _own(table: str, key: str) -> dict[str, Any]:
    """The record to mutate: the database's own deep copy of it (made on the first write)."""
    db = current_db()
    record = db[table][key]
    if record is _pristine()[table].get(key):
        record = copy.deepcopy(record)
        db[table][key] = record
    return record


def _out(value: Any) -> Any:
    """What a tool returns: a deep copy, so results never alias the database."""
    return copy.deepcopy(value)


def _round(x: float) -> float:
    return round(x + 0.0, 2)


# -- reads -----------------------------------------------------------------------------


def find_user_id_by_email(email: str) -> str:
    """Find a customer's user id by email (case-insensitive).

    Args:
        email: the customer's email, e.g. "noah.brown7922@example.com".

    Returns:
        The user id, e.g. "noah_brown_6181", or "Error: user not found".
    """
    for user_id, user in current_db()["users"].items():
        if user["email"].lower() == email.lower():
            return user_id
    return "Error: user not found"


def find_user_id_by_name_zip(first_name: str, last_name: str, zip: str) -> str:
    """Find a customer's user id by first and last name (case-insensitive) and the zip code of their address.

    Args:
        first_name: e.g. "Noah".
        last_name: e.g. "Brown".
        zip: five digits, e.g. "80279".

    Returns:
        The user id, or "Error: user not found".
    """
    for user_id, user in current_db()["users"].items():
        name = user["name"]
        if (name["first_name"].lower() == first_name.lower() and name["last_name"].lower() == last_name.lower()
                and user["address"]["zip"] == zip):
            return user_id
    return "Error: user not found"


def get_user_details(user_id: str) -> dict[str, Any] | str:
    """A customer's profile.

    Args:
        user_id: e.g. "noah_brown_6181".

    Returns:
        name, address, email, payment_methods (by id: source "credit_card", "paypal" or
        "gift_card" with a balance) and orders (order ids); or "Error: user not found".
    """
    user = current_db()["users"].get(user_id)
    return "Error: user not found" if user is None else _out(user)


def get_order_details(order_id: str) -> dict[str, Any] | str:
    """An order's details.

    Args:
        order_id: the order id with its '#', e.g. "#W6067464".

    Returns:
        order_id, user_id, address, items (name, product_id, item_id, price, options),
        fulfillments, status, payment_history and, once set, cancel_reason, return_* or
        exchange_* fields; or "Error: order not found".
    """
    order = current_db()["orders"].get(order_id)
    return "Error: order not found" if order is None else _out(order)


def get_product_details(product_id: str) -> dict[str, Any] | str:
    """A product and its variants.

    Args:
        product_id: e.g. "9523456873" (an order item's product_id).

    Returns:
        name, product_id and variants (by item id: item_id, options, available, price);
        or "Error: product not found".
    """
    product = current_db()["products"].get(product_id)
    return "Error: product not found" if product is None else _out(product)


def list_all_product_types() -> dict[str, str]:
    """Every product the store sells, ``{product name: product_id}``, sorted by name."""
    return dict(sorted((p["name"], pid) for pid, p in current_db()["products"].items()))


_ARITHMETIC = re.compile(r"[\d\s.+\-*/()]+")


def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression (numbers, + - * / and parentheses), rounded to 2 decimals.

    Args:
        expression: e.g. "47.84 + 488.81".

    Returns:
        The value as text, e.g. "536.65"; or "Error: ..." for anything but arithmetic.
    """
    if not _ARITHMETIC.fullmatch(expression) or "**" in expression:  # no powers: 9**9**9 would not end
        return "Error: invalid characters in expression"
    try:
        return str(round(float(eval(expression, {"__builtins__": {}}, {})), 2))  # only digits and operators
    except (SyntaxError, ZeroDivisionError, TypeError, ValueError) as e:
        return f"Error: {e}"


def think(thought: str) -> str:
    """Think out loud; changes nothing and returns "".

    Args:
        thought: the thought.
    """
    return ""


# -- writes ----------------------------------------------------------------------------


def _pending_order(order_id: str, what: str) -> dict[str, Any] | str:
    order = current_db()["orders"].get(order_id)
    if order is None:
        return "Error: order not found"
    if order["status"] != "pending":
        return f"Error: non-pending order cannot be {what}"
    return order


def _method(order: dict[str, Any], payment_method_id: str) -> dict[str, Any] | None:
    user = current_db()["users"].get(order["user_id"])
    return None if user is None else user["payment_methods"].get(payment_method_id)


def _credit(user_id: str, payment_method_id: str, amount: float) -> None:
    """Add ``amount`` (negative: charge) to a gift card's balance; other methods have none."""
    if current_db()["users"][user_id]["payment_methods"][payment_method_id]["source"] == "gift_card":
        method = _own("users", user_id)["payment_methods"][payment_method_id]
        method["balance"] = _round(method["balance"] + amount)


def _missing_items(order: dict[str, Any], item_ids: list[str]) -> str | None:
    """An error if an item id is not in the order (each occurrence counts once)."""
    have = [it["item_id"] for it in order["items"]]
    for item_id in item_ids:
        if item_id not in have:
            return f"Error: {item_id} not found"
        have.remove(item_id)
    return None


def _swap_price(order: dict[str, Any], item_ids: list[str], new_item_ids: list[str]) -> float | str:
    """The price difference (new - old) of swapping items for variants of the same products, or an error."""
    missing = _missing_items(order, item_ids)
    if missing is not None:
        return missing
    if len(item_ids) != len(new_item_ids):
        return "Error: the number of items to be exchanged should match"
    products = current_db()["products"]
    diff = 0.0
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        item = next(it for it in order["items"] if it["item_id"] == item_id)
        variant = products[item["product_id"]]["variants"].get(new_item_id)
        if variant is None or not variant["available"]:
            return f"Error: new item {new_item_id} not found or available"
        diff += variant["price"] - item["price"]
    return _round(diff)


def cancel_pending_order(order_id: str, reason: str) -> dict[str, Any] | str:
    """Cancel a pending order; each payment is refunded to its method (gift cards are credited at once).

    Args:
        order_id: e.g. "#W6067464".
        reason: "no longer needed" or "ordered by mistake".

    Returns:
        The cancelled order, or "Error: ..." (not found, not pending, invalid reason).
    """
    order = _pending_order(order_id, "cancelled")
    if isinstance(order, str):
        return order
    if reason not in _REASONS:
        return "Error: invalid reason"
    refunds = [{"transaction_type": "refund", "amount": p["amount"], "payment_method_id": p["payment_method_id"]}
               for p in order["payment_history"] if p["transaction_type"] == "payment"]
    for r in refunds:
        _credit(order["user_id"], r["payment_method_id"], r["amount"])
    order = _own("orders", order_id)
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    order["payment_history"].extend(refunds)
    return _out(order)


def modify_pending_order_address(
    order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> dict[str, Any] | str:
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
        The order, or "Error: ..." (not found, not pending).
    """
    order = _pending_order(order_id, "modified")
    if isinstance(order, str):
        return order
    order = _own("orders", order_id)
    order["address"] = {"address1": address1, "address2": address2, "city": city, "state": state,
                        "country": country, "zip": zip}
    return _out(order)


def modify_pending_order_payment(order_id: str, payment_method_id: str) -> dict[str, Any] | str:
    """Pay a pending order with another of the customer's methods; the old payment is refunded.

    Args:
        order_id: e.g. "#W6067464".
        payment_method_id: the new method, e.g. "paypal_5727330" (one of the order's user's).

    Returns:
        The order, or "Error: ..." (not found, not pending, not exactly one payment, unknown
        method, the same method, a gift card without the balance).
    """
    order = _pending_order(order_id, "modified")
    if isinstance(order, str):
        return order
    method = _method(order, payment_method_id)
    if method is None:
        return "Error: payment method not found"
    history = order["payment_history"]
    if len(history) != 1 or history[0]["transaction_type"] != "payment":
        return "Error: there should be exactly one payment for a pending order"
    paid = history[0]
    if paid["payment_method_id"] == payment_method_id:
        return "Error: the new payment method should be different from the current one"
    amount = paid["amount"]
    if method["source"] == "gift_card" and method["balance"] < amount:
        return "Error: insufficient gift card balance to pay for the order"
    _credit(order["user_id"], payment_method_id, -amount)
    _credit(order["user_id"], paid["payment_method_id"], amount)
    order = _own("orders", order_id)
    order["payment_history"].extend([
        {"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id},
        {"transaction_type": "refund", "amount": amount, "payment_method_id": paid["payment_method_id"]},
    ])
    return _out(order)


def modify_pending_order_items(
    order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> dict[str, Any] | str:
    """Swap items of a pending order for other variants of the same products (once per order).

    Args:
        order_id: e.g. "#W6067464".
        item_ids: the items to replace (item ids in the order).
        new_item_ids: for each, an available variant of the same product.
        payment_method_id: pays or receives the price difference (one of the customer's methods).

    Returns:
        The order, now "pending (item modified)", or "Error: ..." (not found, not pending, an item
        not in the order, a new item not an available variant, unknown method, a gift card
        without the balance).
    """
    order = _pending_order(order_id, "modified")
    if isinstance(order, str):
        return order
    diff = _swap_price(order, item_ids, new_item_ids)
    if isinstance(diff, str):
        return diff
    method = _method(order, payment_method_id)
    if method is None:
        return "Error: payment method not found"
    if method["source"] == "gift_card" and method["balance"] < diff:
        return "Error: insufficient gift card balance to pay for the new item"
    _credit(order["user_id"], payment_method_id, -diff)
    products = current_db()["products"]
    order = _own("orders", order_id)
    order["payment_history"].append({"transaction_type": "payment" if diff > 0 else "refund", "amount": abs(diff),
                                     "payment_method_id": payment_method_id})
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        item = next(it for it in order["items"] if it["item_id"] == item_id)
        variant = products[item["product_id"]]["variants"][new_item_id]
        item["item_id"], item["price"], item["options"] = new_item_id, variant["price"], copy.deepcopy(variant["options"])
    order["status"] = "pending (item modified)"
    return _out(order)


def return_delivered_order_items(order_id: str, item_ids: list[str], payment_method_id: str) -> dict[str, Any] | str:
    """Request the return of items of a delivered order; the refund goes to the original method or a gift card.

    Args:
        order_id: e.g. "#W6067464".
        item_ids: the items to return (item ids in the order).
        payment_method_id: the order's original payment method, or one of the customer's gift cards.

    Returns:
        The order, now "return requested", or "Error: ..." (not found, not delivered, an item not
        in the order, a method that is neither).
    """
    order = current_db()["orders"].get(order_id)
    if order is None:
        return "Error: order not found"
    if order["status"] != "delivered":
        return "Error: non-delivered order cannot be returned"
    method = _method(order, payment_method_id)
    if method is None:
        return "Error: payment method not found"
    if method["source"] != "gift_card" and payment_method_id != order["payment_history"][0]["payment_method_id"]:
        return "Error: payment method should be either the original payment method or a gift card"
    missing = _missing_items(order, item_ids)
    if missing is not None:
        return missing
    order = _own("orders", order_id)
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    return _out(order)


def exchange_delivered_order_items(
    order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> dict[str, Any] | str:
    """Request an exchange of items of a delivered order for other variants of the same products.

    Args:
        order_id: e.g. "#W6067464".
        item_ids: the items to exchange (item ids in the order).
        new_item_ids: for each, an available variant of the same product.
        payment_method_id: pays or receives the price difference (one of the customer's methods).

    Returns:
        The order, now "exchange requested" with exchange_price_difference (new - old), or
        "Error: ..." (not found, not delivered, an item not in the order, a new item not an
        available variant, unknown method, a gift card without the balance).
    """
    order = current_db()["orders"].get(order_id)
    if order is None:
        return "Error: order not found"
    if order["status"] != "delivered":
        return "Error: non-delivered order cannot be exchanged"
    diff = _swap_price(order, item_ids, new_item_ids)
    if isinstance(diff, str):
        return diff
    method = _method(order, payment_method_id)
    if method is None:
        return "Error: payment method not found"
    if method["source"] == "gift_card" and method["balance"] < diff:
        return "Error: insufficient gift card balance to pay for the price difference"
    order = _own("orders", order_id)
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = diff
    return _out(order)


def modify_user_address(
    user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> dict[str, Any] | str:
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
        The user, or "Error: user not found".
    """
    if user_id not in current_db()["users"]:
        return "Error: user not found"
    user = _own("users", user_id)
    user["address"] = {"address1": address1, "address2": address2, "city": city, "state": state,
                       "country": country, "zip": zip}
    return _out(user)


def transfer_to_human_agents(summary: str) -> str:
    """Hand the customer over to a human agent (the database does not change).

    Args:
        summary: what the customer wants and what was done so far.

    Returns:
        "Transfer successful".
    """
    return "Transfer successful"


TOOLS: list[Callable[..., Any]] = [
    find_user_id_by_email, find_user_id_by_name_zip, get_user_details, get_order_details, get_product_details,
    list_all_product_types, calculate, think,
    cancel_pending_order, modify_pending_order_address, modify_pending_order_payment, modify_pending_order_items,
    return_delivered_order_items, exchange_delivered_order_items, modify_user_address, transfer_to_human_agents,
]
READS = frozenset({"find_user_id_by_email", "find_user_id_by_name_zip", "get_user_details", "get_order_details",
                   "get_product_details", "list_all_product_types", "calculate", "think"})
WRITES = frozenset(f.__name__ for f in TOOLS) - READS
FUNCTIONS: dict[str, Callable[..., Any]] = {f.__name__: f for f in TOOLS}
"""The plain functions by name (never replaced)."""
# The agent calls the tools through this dict; a harness puts a Forge's wrappers in it (bench.tau_retail).
TOOLBOX: dict[str, Callable[..., Any]] = dict(FUNCTIONS)
