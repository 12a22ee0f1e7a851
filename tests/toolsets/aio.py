"""An async support desk on SQLite: ``async def`` tools, and an async agent that reports its usage.

The tools read and write through ``asyncio.to_thread`` (as an async app reaches a database
driver that blocks), and note how many of them are in flight at once and on which thread each
ran. The agent refunds an order that was delivered and says that an order on its way is not
refunded; it "asks a model" once per decision, reporting each request with
``skillforge.report_usage``. Given ``transcript=``, it takes calls already made from it.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import skillforge

DB: dict[str, Path] = {}
TOOLBOX: dict[str, Any] = {}  # name → the callable the agent uses (a Forge's recording wrapper)
SEEN: dict[str, Any] = {"in_flight": 0, "most_in_flight": 0, "threads": set()}
DELAY = {"seconds": 0.0}  # how long each tool call takes (to see calls overlap)


def make_world(path: Path) -> Path:
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as db:
        db.executescript("""
            CREATE TABLE orders (id TEXT PRIMARY KEY, status TEXT, total REAL);
            CREATE TABLE refunds (id INTEGER PRIMARY KEY AUTOINCREMENT, order_id TEXT, amount REAL);
        """)
        db.executemany("INSERT INTO orders VALUES (?, ?, ?)", [
            (str(n), "shipped" if n % 10 == 7 else "delivered", 10.0 + n % 50) for n in range(1000, 1100)
        ])
    DB["path"] = path
    SEEN.update(in_flight=0, most_in_flight=0, threads=set())
    return path


def refunds() -> list[tuple[str, float]]:
    with sqlite3.connect(DB["path"]) as db:
        return [tuple(r) for r in db.execute("SELECT order_id, amount FROM refunds ORDER BY id")]


async def _db(sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    SEEN["in_flight"] += 1
    SEEN["most_in_flight"] = max(SEEN["most_in_flight"], SEEN["in_flight"])
    SEEN["threads"].add(threading.get_ident())  # the thread the coroutine runs on: the event loop's
    try:
        if DELAY["seconds"]:
            await asyncio.sleep(DELAY["seconds"])

        def run() -> list[tuple[Any, ...]]:
            with sqlite3.connect(DB["path"]) as db:
                return db.execute(sql, args).fetchall()

        return await asyncio.to_thread(run)
    finally:
        SEEN["in_flight"] -= 1


async def get_order(order_id: str) -> dict:
    """An order: id, status and total."""
    rows = await _db("SELECT id, status, total FROM orders WHERE id = ?", (order_id,))
    if not rows:
        raise LookupError(f"no order {order_id}")
    oid, status, total = rows[0]
    return {"id": oid, "status": status, "total": total}


async def refund_order(order_id: str, amount: float) -> dict:
    """Refund ``amount`` for an order."""
    await _db("INSERT INTO refunds (order_id, amount) VALUES (?, ?)", (order_id, amount))
    return {"order_id": order_id, "status": "refunded"}


async def agent(task: str, transcript: Sequence[Any] | None = None) -> str:
    """Refund a delivered order; an order still on its way is not refunded."""
    order_id = re.search(r"#(\d+)", task).group(1)  # type: ignore[union-attr]
    done = {c.tool: c.result for c in transcript or ()}
    order = done.get("get_order")
    if order is None:
        skillforge.report_usage(prompt_tokens=120, completion_tokens=15)  # "which tool first?"
        order = await TOOLBOX["get_order"](order_id=order_id)
    skillforge.report_usage(prompt_tokens=200, completion_tokens=25)  # "what now?"
    if order["status"] != "delivered":
        return f"Order {order_id} is {order['status']}; it is refunded once it arrives."
    await TOOLBOX["refund_order"](order_id=order_id, amount=order["total"])
    return f"Refunded {order['total']} for order {order_id}."
