"""What the test toolsets share: a world kept in a dict, and the connection to a world kept in SQLite."""

from __future__ import annotations

import copy
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any


def dict_world() -> tuple[dict[str, Any], Callable[[dict[str, Any]], None], Callable[[], dict[str, Any]]]:
    """A world kept in a dict, ``W``, with ``load(world)`` (a deep copy of ``world`` made the current
    world, with an empty list of ``writes`` unless it has one) and ``state()`` (a deep copy of it)."""
    world: dict[str, Any] = {}

    def load(new: dict[str, Any]) -> None:
        world.clear()
        world.update(copy.deepcopy(new))
        world.setdefault("writes", [])

    def state() -> dict[str, Any]:
        return copy.deepcopy(world)

    return world, load, state


def customers_and_orders(parts: tuple[dict[str, Any], ...], order_field: str) -> dict[str, Any]:
    """A world of customers and orders from records keyed by id, in any order: a record with
    ``order_field`` is an order."""
    out: dict[str, Any] = {"customers": {}, "orders": {}}
    for part in parts:
        out["orders" if order_field in next(iter(part.values())) else "customers"].update(part)
    return out


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the SQLite world at ``path`` whose rows read by column name."""
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    return db
