"""A shop whose pending orders' items are swapped for other variants of their product, item by item.

"For #W2, modify Kettle {'color': 'red', 'size': 'S'} to {'color': 'blue'}; Lamp {'color': 'red'}
to {'color': 'white'}; thanks." The agent reads the order, finds each item by its name and options,
reads each product the items belong to once (two kettles: one read), takes the variant whose
options are the item's with the changes, and swaps them all in one write, which returns the
order as changed. It changes nothing where an item is not in the order or a variant is sold out.
"""

from __future__ import annotations

import ast
import json
import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.toolsets._continuing import continuing

DB: dict[str, Path] = {}
TOOLBOX: dict[str, Any] = {}

VARIANTS = {  # variant id → (product id, product name, options, price, available)
    "1101": ("8101", "Kettle", {"color": "red", "size": "S"}, 30.0, True),
    "1102": ("8101", "Kettle", {"color": "blue", "size": "S"}, 31.0, True),
    "1103": ("8101", "Kettle", {"color": "blue", "size": "L"}, 35.0, True),
    "1104": ("8101", "Kettle", {"color": "red", "size": "L"}, 36.0, True),
    "2201": ("8202", "Lamp", {"color": "red"}, 20.0, True),
    "2202": ("8202", "Lamp", {"color": "white"}, 21.0, True),
    "2203": ("8202", "Lamp", {"color": "green"}, 22.0, False),
}
ORDERS = {  # order id → the variants it holds
    "#W1": ["1101", "2201"],
    "#W2": ["1101", "1103", "2202"],
    "#W3": ["1102", "1103", "2201"],
    "#W4": ["1102", "2202"],
    "#W5": ["2201", "1101", "1104"],
}


def make_world(path: Path) -> Path:
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as db:
        db.executescript("""
            CREATE TABLE items (order_id TEXT, pos INTEGER, item_id TEXT, PRIMARY KEY (order_id, pos));
            CREATE TABLE orders (id TEXT PRIMARY KEY, status TEXT);
        """)
        for order_id, held in ORDERS.items():
            db.execute("INSERT INTO orders VALUES (?, 'pending')", (order_id,))
            db.executemany("INSERT INTO items VALUES (?, ?, ?)", [(order_id, k, v) for k, v in enumerate(held)])
    DB["path"] = path
    return path


def _db() -> sqlite3.Connection:
    return sqlite3.connect(DB["path"])


def _item(variant: str) -> dict[str, Any]:
    product_id, name, options, price, _available = VARIANTS[variant]
    return {"item_id": variant, "name": name, "options": dict(options), "price": price, "product_id": product_id}


def get_order(order_id: str) -> dict:
    """An order: its id, status and items (each with its id, name, options, price and product id)."""
    with _db() as db:
        row = db.execute("SELECT status FROM orders WHERE id = ?", (order_id,)).fetchone()
        if row is None:
            raise LookupError(f"no order {order_id}")
        held = [r[0] for r in db.execute("SELECT item_id FROM items WHERE order_id = ? ORDER BY pos", (order_id,))]
    return {"order_id": order_id, "status": row[0], "items": [_item(v) for v in held]}


def get_product(product_id: str) -> dict:
    """A product: its id, name and variants (variant id → its item id, options and availability)."""
    variants = {v: {"item_id": v, "options": dict(o), "available": a} for v, (p, _n, o, _pr, a) in VARIANTS.items() if p == product_id}
    if not variants:
        raise LookupError(f"no product {product_id}")
    name = next(n for p, n, *_rest in VARIANTS.values() if p == product_id)
    return {"product_id": product_id, "name": name, "variants": variants}


def modify_items(order_id: str, item_ids: list[str], new_item_ids: list[str]) -> dict:
    """Swap items of a pending order for other variants of their products; the order as changed."""
    with _db() as db:
        for old, new in zip(item_ids, new_item_ids, strict=True):
            pos = db.execute("SELECT MIN(pos) FROM items WHERE order_id = ? AND item_id = ?", (order_id, old)).fetchone()[0]
            db.execute("UPDATE items SET item_id = ? WHERE order_id = ? AND pos = ?", (new, order_id, pos))
        db.execute("UPDATE orders SET status = 'pending (modified)' WHERE id = ?", (order_id,))
    return get_order(order_id)


TOOLS = (get_order, get_product, modify_items)
READS = frozenset({"get_order", "get_product"})

_ASK = re.compile(r"For (#W\d+), modify (.+); thanks\.")
_ITEM = re.compile(r"([A-Z][a-z]+) (\{[^{}]*\}) to (\{[^{}]*\})")


def agent(task: str, transcript: Sequence[Any] | None = None) -> str:
    call = continuing(transcript, TOOLBOX)
    m = _ASK.fullmatch(task)
    if m is None:
        return "How can I help?"
    order_id = m.group(1)
    asked = [(name, ast.literal_eval(before), ast.literal_eval(change)) for name, before, change in _ITEM.findall(m.group(2))]
    order = call("get_order", order_id=order_id)
    picked = []
    for name, before, change in asked:
        found = [it for it in order["items"] if it["name"] == name and it["options"] == before]
        if not found:
            return f"Order {order_id} holds no {name} like that; I changed nothing."
        picked.append((found[0], change))
    products: dict[str, Any] = {}
    for item, _change in picked:  # each product once, however many of its items are asked for
        if item["product_id"] not in products:
            products[item["product_id"]] = call("get_product", product_id=item["product_id"])
    new_ids = []
    for item, change in picked:
        wanted = {**item["options"], **change}
        variant = next((v for v in products[item["product_id"]]["variants"].values() if v["options"] == wanted), None)
        if variant is None or not variant["available"]:
            return f"No {item['name']} {json.dumps(wanted)} is available; I changed nothing."
        new_ids.append(variant["item_id"])
    call("modify_items", order_id=order_id, item_ids=[it["item_id"] for it, _c in picked], new_item_ids=new_ids)
    return f"I modified the items of order {order_id}."


def snapshot() -> list[tuple[Any, ...]]:
    with _db() as db:
        return [tuple(r) for r in db.execute("SELECT order_id, pos, item_id FROM items ORDER BY order_id, pos")] + [
            tuple(r) for r in db.execute("SELECT * FROM orders ORDER BY id")]
