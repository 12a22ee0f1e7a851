"""Accounts on SQLite, and an agent that serves one or two requests about one account per message.

A message asks to unlock an account, reset its password, turn on MFA or add it to a group, often two
of these joined by "and" with the account named once ("Please unlock ana.li and reset her password.",
"ana.li is locked out. Please unlock her and enable MFA too.") or groups listed ("Add ana.li to
vpn-users and wiki-editors."). The agent reads the account once and remembers what its own writes
changed (as a model does: it does not read again); a write returns the fields it changed (unlocking
returns ``{"username": ..., "locked": False}``). A restricted group is never granted. It answers one
sentence per request, joined by a space; given ``transcript=``, it takes calls already made from it and
never repeats a write.
"""

from __future__ import annotations

import re
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.toolsets import _shadowing
from tests.toolsets._continuing import continuing
from tests.toolsets._worlds import connect

DB: dict[str, Path] = {}
TOOLBOX: dict[str, Any] = {}  # name → the callable the agent uses (a Forge's recording wrapper)


def make_world(path: Path) -> Path:
    """A fresh directory at ``path``: five locked accounts without MFA, one with MFA, and three groups."""
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as db:
        db.executescript("""
            CREATE TABLE users (username TEXT PRIMARY KEY, locked INTEGER, mfa INTEGER, resets INTEGER);
            CREATE TABLE groups (name TEXT PRIMARY KEY, restricted INTEGER);
            CREATE TABLE members (username TEXT, grp TEXT, PRIMARY KEY (username, grp));
            INSERT INTO users VALUES ('ana.li', 1, 0, 0), ('bo.ng', 1, 0, 0), ('cy.ito', 1, 0, 0), ('di.roy', 1, 0, 0),
                                     ('ed.fox', 1, 0, 0), ('fay.wu', 1, 1, 0);
            INSERT INTO groups VALUES ('vpn-users', 0), ('wiki-editors', 0), ('hr-files', 1);
        """)
    DB["path"] = path
    return path


def _db() -> sqlite3.Connection:
    return connect(DB["path"])


def get_user(username: str) -> dict:
    """An account: username, locked, mfa and groups."""
    with _db() as db:
        row = db.execute("SELECT username, locked, mfa FROM users WHERE username = ?", (username,)).fetchone()
        if row is None:
            raise LookupError(f"no account {username}")
        groups = [r[0] for r in db.execute("SELECT grp FROM members WHERE username = ? ORDER BY grp", (username,))]
    return {"username": row["username"], "locked": bool(row["locked"]), "mfa": bool(row["mfa"]), "groups": groups}


def get_group(group: str) -> dict:
    """A group: name, and whether it is restricted."""
    with _db() as db:
        row = db.execute("SELECT name, restricted FROM groups WHERE name = ?", (group,)).fetchone()
    if row is None:
        raise LookupError(f"no group {group}")
    return {"name": row["name"], "restricted": bool(row["restricted"])}


def unlock_account(username: str) -> dict:
    """Unlock an account; returns the fields it changed."""
    with _db() as db:
        db.execute("UPDATE users SET locked = 0 WHERE username = ?", (username,))
    return {"username": username, "locked": False}


def reset_password(username: str) -> dict:
    """Send a new temporary password (it does not unlock the account)."""
    with _db() as db:
        db.execute("UPDATE users SET resets = resets + 1 WHERE username = ?", (username,))
    return {"username": username, "sent": True}


def enable_mfa(username: str) -> dict:
    """Require MFA for an account; returns the fields it changed."""
    with _db() as db:
        db.execute("UPDATE users SET mfa = 1 WHERE username = ?", (username,))
    return {"username": username, "mfa": True}


def add_to_group(username: str, group: str) -> dict:
    """Add an account to a group."""
    with _db() as db:
        db.execute("INSERT OR IGNORE INTO members VALUES (?, ?)", (username, group))
    return {"username": username, "group": group, "member": True}


TOOLS = (get_user, get_group, unlock_account, reset_password, enable_mfa, add_to_group)
READS = frozenset({"get_user", "get_group"})


def snapshot() -> list[tuple[Any, ...]]:
    with _db() as db:
        return [tuple(r) for r in db.execute("SELECT * FROM users ORDER BY username")] + [
            tuple(r) for r in db.execute("SELECT * FROM members ORDER BY username, grp")
        ]


_CUT = re.compile(r"(?<=[.!?])\s+|,?\s+and\s+(?=(?:please\s+)?(?:unlock|reset|enable|add)\b)", re.IGNORECASE)
_USER = re.compile(r"\b([a-z]+\.[a-z]+)\b")
_GROUP = re.compile(r"\b([a-z]+-[a-z]+)\b")


def agent(task: str, transcript: Sequence[Any] | None = None) -> str:
    """Serve the message with the tools in ``TOOLBOX``, continuing from ``transcript`` if given."""
    call = continuing(transcript, TOOLBOX)
    answers = []
    users: dict[str, dict[str, Any]] = {}
    who: str | None = None
    for clause in _CUT.split(task):
        named = _USER.search(clause)
        who = named[1] if named else who
        text = clause.lower()
        kind = next((k for k in ("unlock", "reset", "enable", "add") if re.search(rf"\b{k}\b", text)), None)
        if kind is None:
            continue
        if who is None:
            answers.append("Which account do you mean?")
            continue
        if who not in users:
            users[who] = call("get_user", username=who)
        user = users[who]
        if kind == "unlock":
            if not user["locked"]:
                answers.append(f"{who} isn't locked.")
                continue
            call("unlock_account", username=who)
            user["locked"] = False
            answers.append(f"Unlocked {who}.")
        elif kind == "reset":
            call("reset_password", username=who)
            if user["locked"]:
                call("unlock_account", username=who)
                user["locked"] = False
                answers.append(f"Reset the password of {who} and unlocked it.")
            else:
                answers.append(f"Reset the password of {who}.")
        elif kind == "enable":
            if user["mfa"]:
                answers.append(f"MFA was already on for {who}.")
                continue
            call("enable_mfa", username=who)
            user["mfa"] = True
            answers.append(f"Enabled MFA for {who}.")
        else:
            for group in _GROUP.findall(clause):  # a list of groups: one request, a write for each
                if group in user["groups"]:
                    answers.append(f"{who} is already in {group}.")
                    continue
                if call("get_group", group=group)["restricted"]:
                    answers.append(f"{group} is restricted; I did not add {who}.")
                    continue
                call("add_to_group", username=who, group=group)
                user["groups"] = sorted([*user["groups"], group])
                answers.append(f"Added {who} to {group}.")
    return " ".join(answers) if answers else "How can I help?"


def shadowed(forge: Any, tmp: Path, task: str) -> tuple[Any, bool]:
    """``task`` through ``forge.solve()`` and, from the same starting state, through the agent alone:
    the result, and whether the two left the same accounts and gave the same answer."""
    return _shadowing.shadowed(sys.modules[__name__], forge, tmp, task)


def open_accounts(tmp: Path) -> Any:
    """A fresh directory under ``tmp`` and a Forge over its tools (its recording wrappers in ``TOOLBOX``,
    which the caller clears after)."""
    return _shadowing.open_world(sys.modules[__name__], tmp)
