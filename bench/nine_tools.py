"""Nine trivial tools for the hit-path benchmark (a module, so skill files can import them)."""

from __future__ import annotations

import sys
from typing import Any


def fetch_ticket(ticket_id: str) -> dict:
    """Step 1."""
    return {"id": ticket_id, "next": ticket_id + "a"}


def step_b(key: str) -> dict:
    """Step 2."""
    return {"next": key + "b"}


def step_c(key: str) -> dict:
    """Step 3."""
    return {"next": key + "c"}


def step_d(key: str) -> dict:
    """Step 4."""
    return {"next": key + "d"}


def step_e(key: str) -> dict:
    """Step 5."""
    return {"next": key + "e"}


def step_f(key: str) -> dict:
    """Step 6."""
    return {"next": key + "f"}


def step_g(key: str) -> dict:
    """Step 7."""
    return {"next": key + "g"}


def step_h(key: str) -> dict:
    """Step 8."""
    return {"next": key + "h"}


def close_ticket(key: str, ticket_id: str) -> dict:
    """Step 9 (a write)."""
    return {"closed": ticket_id, "trail": key}


READS = [fetch_ticket, step_b, step_c, step_d, step_e, step_f, step_g, step_h]
WRITES = [close_ticket]


def direct(ticket_id: str, tools: Any = None) -> str:
    """The same nine calls, by hand: what a program without skillforge would run.

    ``tools`` (a namespace of the same functions, e.g. the decorated ones) is
    used instead of this module's plain functions when given.
    """
    t = tools or sys.modules[__name__]
    r = t.fetch_ticket(ticket_id=ticket_id)
    r = t.step_b(key=r["next"])
    r = t.step_c(key=r["next"])
    r = t.step_d(key=r["next"])
    r = t.step_e(key=r["next"])
    r = t.step_f(key=r["next"])
    r = t.step_g(key=r["next"])
    r = t.step_h(key=r["next"])
    return t.close_ticket(key=r["next"], ticket_id=ticket_id)["closed"]
