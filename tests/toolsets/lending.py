"""A lending desk on SQLite, and agents that follow its policy: the world of the probe tests.

Members have a status and fines; books are lent to active members whose fines are at most $10.00.
Orders are refunded in full if they total at most $500.00. The agents (plain functions calling the
tools through ``TOOLBOX``) report one model request per tool call and one for the answer, as an LLM
agent would. ``ledger_agent`` reads a member's ledger (a call no record of the plain agent holds)
when the fines are over $5.00; ``local_agent`` lends only to members living in Springfield or
holding a card of its branch; ``titled_agent`` looks members up by their name in title case; ``noisy_agent`` words its answer otherwise each time, and every other
time names the member's branch (a value of the world), as a model answering in its own words may.
"""

from __future__ import annotations

import itertools
import re
import sqlite3
from pathlib import Path
from typing import Any

import skillforge

DB: dict[str, Path] = {}
TOOLBOX: dict[str, Any] = {}  # name → the callable the agent uses (a Forge's recording wrapper)
CALLED: list[str] = []  # every time a tool's own code ran, its name: a probe must add nothing here


def make_world(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as db:
        db.executescript("""
            CREATE TABLE members (member_id TEXT PRIMARY KEY, name TEXT, status TEXT, fines REAL, city TEXT, branch TEXT);
            CREATE TABLE loans (loan_id INTEGER PRIMARY KEY AUTOINCREMENT, member_id TEXT, book_id TEXT);
            CREATE TABLE orders (order_id TEXT PRIMARY KEY, total REAL, status TEXT);
            CREATE TABLE refunds (order_id TEXT, amount REAL);
            INSERT INTO members VALUES ('M-1001', 'Ann Lee', 'active', 4.75, 'Springfield', 'Springfield'),
                                       ('M-1002', 'Bo Ng', 'active', 2.0, 'Springfield', 'Springfield'),
                                       ('M-1003', 'Tom Becker', 'active', 14.25, 'Springfield', 'Springfield'),
                                       ('M-1004', 'Di Roy', 'active', 10.5, 'Springfield', 'Springfield'),
                                       ('M-1005', 'Cy Old', 'active', 0.0, 'Springfield', 'Springfield'),
                                       ('M-1006', 'Ed Park', 'active', 1.0, 'Shelbyville', 'Shelbyville'),
                                       ('M-1007', 'Flo Wu', 'active', 1.5, 'Shelbyville', 'Shelbyville'),
                                       ('M-1008', 'Gus Tan', 'active', 3.0, 'Shelbyville', 'Springfield'),
                                       ('M-1009', 'Mary Ann Lee', 'active', 1.25, 'Springfield', 'Springfield'),
                                       ('M-1010', 'Lu Mei Chen', 'active', 0.5, 'Springfield', 'Springfield');
            INSERT INTO orders VALUES ('W-301', 30.0, 'delivered'), ('W-302', 5.0, 'delivered'), ('W-303', 75.25, 'delivered'),
                                      ('W-304', 820.0, 'delivered');
        """)
    DB["path"] = path
    CALLED.clear()
    return path


def _db() -> sqlite3.Connection:
    return sqlite3.connect(DB["path"])


def get_member(member_id: str) -> dict:
    """A library member: name, status, fines owed, home city and the branch their card is from."""
    CALLED.append("get_member")
    with _db() as db:
        row = db.execute("SELECT member_id, name, status, fines, city, branch FROM members WHERE member_id = ?",
                         (member_id,)).fetchone()
    if row is None:
        raise KeyError(member_id)
    return {"id": row[0], "name": row[1], "status": row[2], "fines": row[3], "city": row[4], "branch": row[5]}


def find_member(email: str = "", name: str = "") -> str:
    """The id of the member with this email, or this full name."""
    CALLED.append("find_member")
    with _db() as db:
        rows = db.execute("SELECT member_id, name FROM members").fetchall()
    for member_id, full in rows:
        if email and email.lower() == _email(full) or name and name.lower() == full.lower():
            return member_id
    raise KeyError(email or name)


def _email(name: str) -> str:
    return name.lower().replace(" ", ".") + "@example.com"


def get_ledger(member_id: str) -> dict:
    """What a member paid and owes, line by line."""
    CALLED.append("get_ledger")
    return {"member_id": member_id, "lines": []}


def lend_book(member_id: str, book_id: str) -> dict:
    """Lend a book to a member: the new loan and its due date."""
    CALLED.append("lend_book")
    with _db() as db:
        cur = db.execute("INSERT INTO loans (member_id, book_id) VALUES (?, ?)", (member_id, book_id))
        loan = cur.lastrowid
    return {"loan_id": f"L-{loan}", "due_on": "2026-12-15"}


def get_order(order_id: str) -> dict:
    """An order: its total and status."""
    CALLED.append("get_order")
    with _db() as db:
        row = db.execute("SELECT order_id, total, status FROM orders WHERE order_id = ?", (order_id,)).fetchone()
    if row is None:
        raise KeyError(order_id)
    return {"id": row[0], "total": row[1], "status": row[2]}


def refund(order_id: str, amount: float) -> dict:
    """Refund an amount of an order."""
    CALLED.append("refund")
    with _db() as db:
        db.execute("INSERT INTO refunds VALUES (?, ?)", (order_id, amount))
    return {"order_id": order_id, "refunded": amount}


TOOLS = (find_member, get_member, get_ledger, lend_book, get_order, refund)
READS = frozenset({"find_member", "get_member", "get_ledger", "get_order"})


def writes() -> list[tuple[Any, ...]]:
    with _db() as db:
        return db.execute("SELECT member_id, book_id FROM loans ORDER BY loan_id").fetchall() + db.execute(
            "SELECT * FROM refunds").fetchall()


def _call(tool: str, /, **args: Any) -> Any:
    skillforge.report_usage()  # one model request per tool call
    return TOOLBOX[tool](**args)


def agent(
    task: str, transcript: Any = None, *, ledger: bool = False, noise: Any = None, local: bool = False, titled: bool = False,
) -> str:
    done = {(c.tool, tuple(sorted(c.args.items()))): c.result for c in transcript or () if c.error is None}

    def call(tool: str, /, **args: Any) -> Any:
        key = (tool, tuple(sorted(args.items())))
        return done[key] if key in done else _call(tool, **args)

    skillforge.report_usage()  # and one for the answer
    m = re.search(r"lend (?:book )?(B-\d+) to (?:member )?(M-\d+)", task, re.I)
    by = re.search(r"lend (?:book )?(B-\d+) to (\S+@\S+?)\.?$", task, re.I) or re.search(
        r"lend (?:book )?(B-\d+) to ([a-z]+(?: [a-z]+){1,3})$", task, re.I)
    if m or by:
        book = (m or by)[1]  # type: ignore[index]
        if by and not m:
            who = by[2].title() if titled else by[2]
            member_id = call("find_member", **({"email": who} if "@" in who else {"name": who}))
        else:
            member_id = m[2]  # type: ignore[index]
        member = call("get_member", member_id=member_id)
        if ledger and member["fines"] > 5:
            call("get_ledger", member_id=member_id)
        if member["status"] != "active":
            return f"Sorry {member['name']}, your card is {member['status']}."
        if member["fines"] > 10:
            return f"Sorry {member['name']}, you owe ${member['fines']:.2f}; please pay it first."
        if local and "Springfield" not in (member["city"], member["branch"]):
            return f"Sorry {member['name']}, we lend to people who live in Springfield or hold a card of its branch."
        loan = call("lend_book", member_id=member_id, book_id=book)
        return f"Lent {book} to {member['name']}; it is due {loan['due_on']}.{noise(member) if noise else ''}"
    if m := re.search(r"refund order (W-\d+)", task, re.I):
        order = call("get_order", order_id=m[1])
        if order["total"] > 500:
            return f"Order {m[1]} is over our refund limit; a supervisor will call you."
        done_ = call("refund", order_id=m[1], amount=order["total"])
        return f"Refunded ${done_['refunded']:.2f} for order {m[1]}."
    return "I could not tell what you need."


def local_agent(task: str, transcript: Any = None) -> str:
    """Lends only to members who live in Springfield or hold a card of its branch: either fact alone
    changed does not change what it does, both together do."""
    return agent(task, transcript, local=True)


def titled_agent(task: str, transcript: Any = None) -> str:
    """Looks a member up by their name written in title case ("bo ng" as "Bo Ng"), however the task wrote it."""
    return agent(task, transcript, titled=True)


def ledger_agent(task: str, transcript: Any = None) -> str:
    return agent(task, transcript, ledger=True)


_ticks = itertools.count()


def noisy_agent(task: str, transcript: Any = None) -> str:
    """Says it otherwise each time it is asked, every other time naming the member's branch."""
    tick = next(_ticks)
    return agent(task, transcript, noise=lambda m: " Thanks!" if tick % 2 == 0 else f" Enjoy it, from our {m['city']} branch.")
