"""A small shop on SQLite, and an agent that serves messages of one or several requests.

A message opens with who writes ("I'm ana@example.com.") and then asks, one sentence per request,
to cancel an order ("Cancel order #W11 because it was a mistake.") or to ship one elsewhere ("Ship
order #W22 to 5 Oak Lane."). The agent finds the customer, reads each order, and acts only on a
pending order of that customer; it answers one sentence per request, joined by a space. Given
``transcript=``, it takes calls already made from it and never repeats a write.
"""

from __future__ import annotations

import re
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tests.toolsets import _shadowing
from tests.toolsets._continuing import continuing
from tests.toolsets._worlds import connect

DB: dict[str, Path] = {}
TOOLBOX: dict[str, Any] = {}  # name → the callable the agent uses (a Forge's recording wrapper)


def make_world(path: Path) -> Path:
    """A fresh shop at ``path``: two customers and their orders."""
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as db:
        db.executescript("""
            CREATE TABLE customers (id TEXT PRIMARY KEY, email TEXT UNIQUE, name TEXT);
            CREATE TABLE orders (id TEXT PRIMARY KEY, customer TEXT, status TEXT, address TEXT, reason TEXT);
            INSERT INTO customers VALUES ('c1', 'ana@example.com', 'Ana Ruiz'), ('c2', 'bo@example.com', 'Bo Chen');
            INSERT INTO orders VALUES
              ('W11', 'c1', 'pending', '1 Elm Street', NULL), ('W12', 'c1', 'pending', '1 Elm Street', NULL),
              ('W13', 'c1', 'shipped', '1 Elm Street', NULL), ('W14', 'c1', 'pending', '1 Elm Street', NULL),
              ('W15', 'c1', 'pending', '1 Elm Street', NULL), ('W16', 'c1', 'pending', '1 Elm Street', NULL),
              ('W21', 'c2', 'pending', '9 Bay Road', NULL), ('W22', 'c2', 'pending', '9 Bay Road', NULL),
              ('W23', 'c2', 'pending', '9 Bay Road', NULL), ('W24', 'c2', 'pending', '9 Bay Road', NULL);
        """)
    DB["path"] = path
    return path


def _db() -> sqlite3.Connection:
    return connect(DB["path"])


def find_customer(email: str) -> dict:
    """The customer with this email: id and name."""
    with _db() as db:
        row = db.execute("SELECT id, name FROM customers WHERE email = ?", (email,)).fetchone()
    if row is None:
        raise LookupError(f"no customer with email {email}")
    return dict(row)


def get_order(order_id: str) -> dict:
    """An order: id, customer, status and address."""
    with _db() as db:
        row = db.execute("SELECT id, customer, status, address FROM orders WHERE id = ?", (order_id,)).fetchone()
    if row is None:
        raise LookupError(f"no order {order_id}")
    return dict(row)


def cancel_order(order_id: str, reason: str) -> dict:
    """Cancel a pending order, saying why."""
    with _db() as db:
        db.execute("UPDATE orders SET status = 'cancelled', reason = ? WHERE id = ?", (reason, order_id))
    return {"order_id": order_id, "status": "cancelled"}


def ship_to(order_id: str, address: str) -> dict:
    """Change where a pending order is shipped."""
    with _db() as db:
        db.execute("UPDATE orders SET address = ? WHERE id = ?", (address, order_id))
    return {"order_id": order_id, "address": address}


TOOLS = (find_customer, get_order, cancel_order, ship_to)
READS = frozenset({"find_customer", "get_order"})


def snapshot() -> list[tuple[Any, ...]]:
    with _db() as db:
        return [tuple(r) for r in db.execute("SELECT * FROM orders ORDER BY id")]


_WHO = re.compile(r"I'm (\S+@\S+)\.(?:\s|$)")
_CANCEL = re.compile(r"Cancel order #(\w+) because (.+?)\.(?:\s|$)")
_SHIP = re.compile(r"Ship order #(\w+) to (.+?)\.(?:\s|$)")


def agent(task: str, transcript: Sequence[Any] | None = None) -> str:
    """Serve the message with the tools in ``TOOLBOX``, continuing from ``transcript`` if given."""
    call = continuing(transcript, TOOLBOX)

    who = _WHO.search(task)
    if who is None:
        return "Who are you? Please give your email."
    customer = call("find_customer", email=who[1])
    asks = sorted([(m.start(), "cancel", m[1], m[2]) for m in _CANCEL.finditer(task)]
                  + [(m.start(), "ship", m[1], m[2]) for m in _SHIP.finditer(task)])
    answers = []
    for _at, kind, order_id, what in asks:
        order = call("get_order", order_id=order_id)
        if order["customer"] != customer["id"]:
            answers.append(f"Order #{order_id} is not yours.")
        elif order["status"] != "pending":
            answers.append(f"Order #{order_id} is {order['status']}; I changed nothing.")
        elif kind == "cancel":
            call("cancel_order", order_id=order_id, reason=what)
            answers.append(f"Cancelled order #{order_id}.")
        else:
            call("ship_to", order_id=order_id, address=what)
            answers.append(f"Order #{order_id} now ships to {what}.")
    return " ".join(answers) if answers else "How can I help?"


# -- requests joined inside a sentence, named by a pronoun, and questions -----------------
_CLAUSE_CUT = re.compile(r"(?<=[.!?])\s+|,?\s+and\s+(?:also\s+)?|,\s+also\s+")
_ASK_CANCEL = re.compile(r"(?:please\s+)?cancel (?:order #(\w+)|it) because (.+?)\.?", re.IGNORECASE)
_ASK_SHIP = re.compile(r"(?:please\s+)?ship (?:order #(\w+)|it) to (.+?)\.?", re.IGNORECASE)
_ASK_WHERE = re.compile(r"(?:please\s+)?tell me where order #(\w+) is\.?", re.IGNORECASE)


def clause_agent(task: str, transcript: Sequence[Any] | None = None) -> str:
    """Like ``agent``, for requests also joined inside a sentence ("Cancel order #W11 because ... and
    ship order #W12 to ..."), an order named by "it" (the order named last), and a question ("tell me
    where order #W12 is"). Reads each order again for each request; never repeats a write."""
    call = continuing(transcript, TOOLBOX)

    who = _WHO.search(task)
    if who is None:
        return "Who are you? Please give your email."
    customer = call("find_customer", email=who[1])
    answers = []
    last: str | None = None
    for clause in _CLAUSE_CUT.split(task):
        m = _ASK_CANCEL.fullmatch(clause) or _ASK_SHIP.fullmatch(clause) or _ASK_WHERE.fullmatch(clause)
        if m is None:
            continue
        order_id = m[1] or last
        last = order_id
        if order_id is None:
            answers.append("Which order do you mean?")
            continue
        order = call("get_order", order_id=order_id)
        if order["customer"] != customer["id"]:
            answers.append(f"Order #{order_id} is not yours.")
        elif m.re is _ASK_WHERE:
            answers.append(f"Order #{order_id} is {order['status']} and goes to {order['address']}.")
        elif order["status"] != "pending":
            answers.append(f"Order #{order_id} is {order['status']}; I changed nothing.")
        elif m.re is _ASK_CANCEL:
            call("cancel_order", order_id=order_id, reason=m[2])
            answers.append(f"Cancelled order #{order_id}.")
        else:
            call("ship_to", order_id=order_id, address=m[2])
            answers.append(f"Order #{order_id} now ships to {m[2]}.")
    return " ".join(answers) if answers else "How can I help?"


def shadowed(forge: Any, tmp: Path, task: str, alone: Callable[..., str] = agent) -> tuple[Any, bool]:
    """``task`` through ``forge.solve()`` and, from the same starting state, through the agent ``alone``:
    the result, and whether the two left the same orders and gave the same answer."""
    return _shadowing.shadowed(sys.modules[__name__], forge, tmp, task, alone)


def open_shop(tmp: Path, agent: Callable[..., str]) -> Any:
    """A fresh shop under ``tmp`` and a Forge over its tools with ``agent`` (its recording wrappers in
    ``TOOLBOX``, which the caller clears after)."""
    return _shadowing.open_world(sys.modules[__name__], tmp, agent)
