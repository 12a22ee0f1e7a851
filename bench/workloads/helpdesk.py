"""An IT helpdesk on SQLite: accounts, groups, devices and tickets, and what people type at it.

The tools are plain top-level functions over one SQLite file (``use_world(path)``).
Every write leaves a row in ``audit`` (a change record, as an ITSM tool would), so a
write that should not have happened shows in the world's state even when it changed
nothing else.

``agent`` stands in for a careful model: it reads what people type generously
(greetings, personas, full names or ``first.last`` in any case, pronouns, two requests
in one message, "don't ..., just ...", a change of mind at the end), reads before it
writes, and writes only what the request and the world call for.

``tasks()`` is two days of requests. Day 2 mostly repeats day 1's phrasings with other
values; the tasks flagged ``tempting`` repeat a phrasing in a world where the right
action differs, or carry more than the phrasing did.
"""

from __future__ import annotations

import copy
import hashlib
import random
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import Task

__all__ = [
    "READS", "TOOLBOX", "TOOLS", "add_to_group", "agent", "assign_device", "check_inventory", "close_ticket",
    "enable_mfa", "find_user", "get_group", "get_ticket", "get_user", "list_group_members", "make_world",
    "remove_from_group", "reset_password", "snapshot", "tasks", "unlock_account", "use_world",
]

_db: sqlite3.Connection | None = None

_SCHEMA = """
CREATE TABLE users (
    username TEXT PRIMARY KEY, name TEXT NOT NULL, department TEXT NOT NULL, title TEXT NOT NULL,
    manager TEXT, email TEXT NOT NULL, status TEXT NOT NULL, locked INTEGER NOT NULL,
    mfa INTEGER NOT NULL, password_version INTEGER NOT NULL, must_change_password INTEGER NOT NULL
);
CREATE TABLE groups (name TEXT PRIMARY KEY, description TEXT NOT NULL, restricted INTEGER NOT NULL, owner TEXT NOT NULL);
CREATE TABLE memberships (username TEXT NOT NULL, grp TEXT NOT NULL, PRIMARY KEY (username, grp));
CREATE TABLE devices (asset_tag TEXT PRIMARY KEY, model TEXT NOT NULL, username TEXT);
CREATE TABLE tickets (id TEXT PRIMARY KEY, requester TEXT NOT NULL, subject TEXT NOT NULL, status TEXT NOT NULL, note TEXT NOT NULL);
CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, action TEXT NOT NULL, target TEXT NOT NULL, detail TEXT NOT NULL);
"""

# username, full name, department, title, manager, pronoun (she/he/they; for phrasing only)
PEOPLE: list[tuple[str, str, str, str, str | None, str]] = [
    ("helen.park", "Helen Park", "exec", "CEO", None, "she"),
    ("maria.lopez", "Maria Lopez", "finance", "Head of Finance", "helen.park", "she"),
    ("david.kim", "David Kim", "engineering", "VP Engineering", "helen.park", "he"),
    ("nora.quinn", "Nora Quinn", "sales", "Head of Sales", "helen.park", "she"),
    ("felix.wagner", "Felix Wagner", "hr", "Head of People", "helen.park", "he"),
    ("grace.ito", "Grace Ito", "support", "Support Lead", "helen.park", "she"),
    ("ivy.chen", "Ivy Chen", "finance", "Accountant", "maria.lopez", "she"),
    ("sam.ortiz", "Sam Ortiz", "finance", "Payroll Specialist", "maria.lopez", "he"),
    ("priya.nair", "Priya Nair", "finance", "Financial Analyst", "maria.lopez", "she"),
    ("kate.oneil", "Kate O'Neil", "finance", "Controller", "maria.lopez", "she"),
    ("omar.haddad", "Omar Haddad", "engineering", "Backend Engineer", "david.kim", "he"),
    ("lena.schmidt", "Lena Schmidt", "engineering", "SRE", "david.kim", "she"),
    ("sam.lee", "Sam Lee", "engineering", "Frontend Engineer", "david.kim", "they"),
    ("raj.patel", "Raj Patel", "engineering", "Data Engineer", "david.kim", "he"),
    ("ana.garcia-lopez", "Ana Garcia-Lopez", "engineering", "QA Engineer", "david.kim", "she"),
    ("ben.okafor", "Ben Okafor", "engineering", "Engineering Manager", "david.kim", "he"),
    ("yuki.tanaka", "Yuki Tanaka", "engineering", "Intern", "ben.okafor", "she"),
    ("sam.lee2", "Sam Lee", "sales", "Account Executive", "nora.quinn", "he"),
    ("chloe.martin", "Chloe Martin", "sales", "Account Executive", "nora.quinn", "she"),
    ("diego.ramos", "Diego Ramos", "sales", "Sales Engineer", "nora.quinn", "he"),
    ("emma.berg", "Emma Berg", "sales", "SDR", "nora.quinn", "she"),
    ("jon.silva", "Jon Silva", "sales", "SDR", "nora.quinn", "he"),
    ("ruth.adler", "Ruth Adler", "hr", "HR Partner", "felix.wagner", "she"),
    ("paul.novak", "Paul Novak", "hr", "Recruiter", "felix.wagner", "he"),
    ("tom.baker", "Tom Baker", "support", "Support Agent", "grace.ito", "he"),
    ("mia.wong", "Mia Wong", "support", "Support Agent", "grace.ito", "she"),
    ("leo.rossi", "Leo Rossi", "support", "Support Agent", "grace.ito", "he"),
    ("zoe.fischer", "Zoe Fischer", "support", "Support Engineer", "grace.ito", "she"),
    ("ali.khan", "Ali Khan", "support", "Support Agent", "grace.ito", "he"),
]
PRONOUN = {u: p for u, _n, _d, _t, _m, p in PEOPLE}
FULL_NAME = {u: n for u, n, _d, _t, _m, _p in PEOPLE}
MANAGER = {u: m for u, _n, _d, _t, m, _p in PEOPLE}

# name, description, restricted, owner
GROUPS: list[tuple[str, str, bool, str]] = [
    ("vpn-users", "Remote access VPN", False, "grace.ito"),
    ("eng-all", "All of engineering", False, "david.kim"),
    ("github-org", "GitHub organisation members", False, "david.kim"),
    ("jira-users", "Jira licences", False, "grace.ito"),
    ("finance-share", "Finance shared drive", False, "maria.lopez"),
    ("sales-crm", "CRM seats", False, "nora.quinn"),
    ("wiki-editors", "Can edit the intranet wiki", False, "grace.ito"),
    ("zoom-webinar", "Zoom webinar licences", False, "nora.quinn"),
    ("prod-db-readonly", "Read-only access to the production database", True, "david.kim"),
    ("payroll-admins", "Payroll system administrators", True, "maria.lopez"),
    ("hr-confidential", "HR confidential files", True, "felix.wagner"),
]
RESTRICTED = {g for g, _d, r, _o in GROUPS if r}
OPEN_GROUPS = [g for g, _d, r, _o in GROUPS if not r]
GROUP_OWNER = {g: o for g, _d, _r, o in GROUPS}
DEPT_GROUPS = {
    "engineering": ["eng-all", "github-org", "jira-users", "vpn-users"],
    "finance": ["finance-share", "vpn-users"],
    "sales": ["sales-crm", "zoom-webinar"],
    "hr": ["wiki-editors"],
    "support": ["jira-users", "wiki-editors"],
    "exec": ["vpn-users"],
}

# model, asset prefix, in stock at the start
MODELS: list[tuple[str, str, int]] = [
    ("ThinkPad T14", "LT", 10), ("MacBook Pro 14", "MB", 8), ("Dell Latitude 5440", "DL", 6),
    ("iPhone 15", "PH", 8), ("YubiKey 5C", "YK", 12), ("Surface Laptop 5", "SF", 0),
]
IN_STOCK = ["ThinkPad T14", "MacBook Pro 14", "Dell Latitude 5440", "iPhone 15", "YubiKey 5C"]

SUBJECTS = [
    "VPN drops every hour", "Outlook keeps asking for my password", "Printer on 3rd floor jammed",
    "Can't open the finance share", "Laptop fan is very loud", "Need Jira access for new project",
    "Zoom audio echoes", "Monitor flickers after docking", "Wi-Fi slow in meeting room B",
    "Teams status stuck on away", "Excel crashes on large files", "Lost my YubiKey",
]
NOTES = [
    "replaced the dock", "user confirmed it works now", "reinstalled the VPN client",
    "cleared cached credentials", "duplicate of INC-4807", "firmware updated to v2.3",
    "reset the printer queue", "fixed by re-enrolling the device in Intune",
    "user will raise a new ticket if it happens again", "swapped the HDMI cable",
]

# -- the world -------------------------------------------------------------------------


def make_world(path: str | Path, *, seed: int = 11) -> None:
    """Create a fresh helpdesk world at ``path`` (overwriting nothing: the file must not exist)."""
    rng = random.Random(seed)
    conn = sqlite3.connect(str(path))
    conn.executescript(_SCHEMA)
    for username, name, dept, title, manager, _p in PEOPLE:
        status = "disabled" if username == "tom.baker" else "active"
        conn.execute(
            "INSERT INTO users VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, 1, 0)",
            (username, name, dept, title, manager, f"{username}@corp.example", status, int(rng.random() < 0.4)),
        )
        groups = set(DEPT_GROUPS[dept]) | {g for g in OPEN_GROUPS if rng.random() < 0.15}
        conn.executemany("INSERT INTO memberships VALUES (?, ?)", [(username, g) for g in sorted(groups)])
    conn.executemany("INSERT INTO memberships VALUES (?, ?)", [
        ("maria.lopez", "payroll-admins"), ("sam.ortiz", "payroll-admins"), ("felix.wagner", "hr-confidential"),
        ("ruth.adler", "hr-confidential"), ("lena.schmidt", "prod-db-readonly"), ("david.kim", "prod-db-readonly"),
    ])
    conn.executemany("INSERT INTO groups VALUES (?, ?, ?, ?)", [(g, d, int(r), o) for g, d, r, o in GROUPS])
    serial = 1000
    users = [p[0] for p in PEOPLE]
    for model, prefix, stock in MODELS:
        holders = rng.sample(users, 6 if prefix in ("LT", "MB", "PH") else 2)
        for holder in [*holders, *([None] * stock)]:
            serial += 1
            conn.execute("INSERT INTO devices VALUES (?, ?, ?)", (f"{prefix}-{serial}", model, holder))
    for n in range(4801, 4841):
        conn.execute(
            "INSERT INTO tickets VALUES (?, ?, ?, ?, ?)",
            (f"INC-{n}", rng.choice(users), rng.choice(SUBJECTS), "closed" if rng.random() < 0.25 else "open",
             rng.choice(NOTES) if rng.random() < 0.25 else ""),
        )
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
    """Every table's rows, sorted: two worlds in the same state give equal snapshots."""
    conn = sqlite3.connect(str(path))
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        return {t: sorted((list(row) for row in conn.execute(f"SELECT * FROM {t}")), key=repr) for t in tables}
    finally:
        conn.close()


def _conn() -> sqlite3.Connection:
    if _db is None:
        raise RuntimeError("no helpdesk world in use: call use_world(path) first")
    return _db


def _audit(action: str, target: str, detail: str) -> None:
    _conn().execute("INSERT INTO audit (action, target, detail) VALUES (?, ?, ?)", (action, target, detail))


def _user_row(username: str) -> sqlite3.Row:
    row = _conn().execute("SELECT * FROM users WHERE username = ?", (username.lower(),)).fetchone()
    if row is None:
        raise LookupError(f"no user {username!r}")
    return row


# -- tools: reads ----------------------------------------------------------------------


def find_user(name: str) -> list[dict]:
    """Find people by full name (case-insensitive).

    Args:
        name: the person's full name, e.g. "Ivy Chen".

    Returns:
        The matching people (username, name, department, title); empty if none.
    """
    rows = _conn().execute(
        "SELECT username, name, department, title FROM users WHERE lower(name) = lower(?) ORDER BY username", (name.strip(),)
    ).fetchall()
    return [dict(r) for r in rows]


def get_user(username: str) -> dict:
    """Look up an account.

    Args:
        username: the account name, first.last.

    Returns:
        The account: name, department, title, manager, email, status ("active" or "disabled"),
        locked, mfa, groups (sorted) and devices (asset_tag and model of each).

    Raises:
        LookupError: there is no such account.
    """
    row = _user_row(username)
    conn = _conn()
    groups = [r[0] for r in conn.execute("SELECT grp FROM memberships WHERE username = ? ORDER BY grp", (row["username"],))]
    devices = [
        {"asset_tag": r[0], "model": r[1]}
        for r in conn.execute("SELECT asset_tag, model FROM devices WHERE username = ? ORDER BY asset_tag", (row["username"],))
    ]
    return {
        "username": row["username"], "name": row["name"], "department": row["department"], "title": row["title"],
        "manager": row["manager"], "email": row["email"], "status": row["status"], "locked": bool(row["locked"]),
        "mfa": bool(row["mfa"]), "groups": groups, "devices": devices,
    }


def get_group(group: str) -> dict:
    """Look up a group.

    Args:
        group: the group's name, e.g. "vpn-users".

    Returns:
        name, description, restricted (adding members needs the user's manager or the
        group's owner to ask), owner and member_count.

    Raises:
        LookupError: there is no such group.
    """
    conn = _conn()
    row = conn.execute("SELECT * FROM groups WHERE name = ?", (group.lower(),)).fetchone()
    if row is None:
        raise LookupError(f"no group {group!r}")
    count = conn.execute("SELECT COUNT(*) FROM memberships WHERE grp = ?", (row["name"],)).fetchone()[0]
    return {"name": row["name"], "description": row["description"], "restricted": bool(row["restricted"]),
            "owner": row["owner"], "member_count": count}


def list_group_members(group: str) -> list[str]:
    """The usernames in a group, sorted.

    Args:
        group: the group's name.

    Raises:
        LookupError: there is no such group.
    """
    conn = _conn()
    if conn.execute("SELECT 1 FROM groups WHERE name = ?", (group.lower(),)).fetchone() is None:
        raise LookupError(f"no group {group!r}")
    return [r[0] for r in conn.execute("SELECT username FROM memberships WHERE grp = ? ORDER BY username", (group.lower(),))]


def check_inventory(model: str) -> dict:
    """How many unassigned devices of a model IT has.

    Args:
        model: the device model, e.g. "ThinkPad T14" (case and spacing are forgiven).

    Returns:
        model (the catalogue's spelling) and available (a count).

    Raises:
        LookupError: the model is not in the catalogue.
    """
    wanted = " ".join(model.split()).lower()
    conn = _conn()
    for (name,) in conn.execute("SELECT DISTINCT model FROM devices ORDER BY model"):
        if name.lower() == wanted:
            n = conn.execute("SELECT COUNT(*) FROM devices WHERE model = ? AND username IS NULL", (name,)).fetchone()[0]
            return {"model": name, "available": n}
    raise LookupError(f"no device model {model!r} in the catalogue")


def get_ticket(ticket_id: str) -> dict:
    """Look up a ticket.

    Args:
        ticket_id: the ticket's id, e.g. "INC-4821".

    Returns:
        id, requester, subject, status ("open" or "closed") and note.

    Raises:
        LookupError: there is no such ticket.
    """
    row = _conn().execute("SELECT * FROM tickets WHERE id = ?", (ticket_id.upper(),)).fetchone()
    if row is None:
        raise LookupError(f"no ticket {ticket_id!r}")
    return dict(row)


# -- tools: writes ---------------------------------------------------------------------


def add_to_group(username: str, group: str) -> dict:
    """Add an account to a group (a no-op on membership if it is already in; the change is logged).

    Args:
        username: the account.
        group: the group's name.
    """
    conn = _conn()
    user = _user_row(username)["username"]
    conn.execute("INSERT OR IGNORE INTO memberships VALUES (?, ?)", (user, group.lower()))
    _audit("add_to_group", user, group.lower())
    conn.commit()
    return {"username": user, "group": group.lower(), "member": True}


def remove_from_group(username: str, group: str) -> dict:
    """Remove an account from a group (the change is logged).

    Args:
        username: the account.
        group: the group's name.
    """
    conn = _conn()
    user = _user_row(username)["username"]
    conn.execute("DELETE FROM memberships WHERE username = ? AND grp = ?", (user, group.lower()))
    _audit("remove_from_group", user, group.lower())
    conn.commit()
    return {"username": user, "group": group.lower(), "member": False}


def reset_password(username: str) -> dict:
    """Set a new temporary password; the user must change it at next sign-in.

    The temporary password goes to the user's manager (or to the user's email when
    there is no manager). Resetting does not unlock a locked account.

    Args:
        username: the account.

    Returns:
        username, sent_to and must_change_password.
    """
    conn = _conn()
    row = _user_row(username)
    conn.execute(
        "UPDATE users SET password_version = password_version + 1, must_change_password = 1 WHERE username = ?",
        (row["username"],),
    )
    sent_to = row["manager"] or row["email"]
    digest = hashlib.sha256(f"{row['username']}:{row['password_version'] + 1}".encode()).hexdigest()[:8]
    _audit("reset_password", row["username"], f"temporary password {digest} sent to {sent_to}")
    conn.commit()
    return {"username": row["username"], "sent_to": sent_to, "must_change_password": True}


def unlock_account(username: str) -> dict:
    """Unlock an account locked by failed sign-ins (the change is logged).

    Args:
        username: the account.
    """
    conn = _conn()
    user = _user_row(username)["username"]
    conn.execute("UPDATE users SET locked = 0 WHERE username = ?", (user,))
    _audit("unlock_account", user, "")
    conn.commit()
    return {"username": user, "locked": False}


def enable_mfa(username: str) -> dict:
    """Require multi-factor sign-in for an account; the user enrols at next sign-in (logged).

    Args:
        username: the account.
    """
    conn = _conn()
    user = _user_row(username)["username"]
    conn.execute("UPDATE users SET mfa = 1 WHERE username = ?", (user,))
    _audit("enable_mfa", user, "enrolment requested")
    conn.commit()
    return {"username": user, "mfa": True}


def assign_device(username: str, model: str) -> dict:
    """Assign an unassigned device of a model to an account (the lowest asset tag in stock).

    Args:
        username: the account.
        model: the device model, e.g. "MacBook Pro 14".

    Returns:
        asset_tag, model and username.

    Raises:
        LookupError: none of that model is in stock.
    """
    conn = _conn()
    user = _user_row(username)["username"]
    wanted = " ".join(model.split()).lower()
    row = conn.execute(
        "SELECT asset_tag, model FROM devices WHERE lower(model) = ? AND username IS NULL ORDER BY asset_tag LIMIT 1",
        (wanted,),
    ).fetchone()
    if row is None:
        raise LookupError(f"no {model} in stock")
    conn.execute("UPDATE devices SET username = ? WHERE asset_tag = ?", (user, row[0]))
    _audit("assign_device", user, row[0])
    conn.commit()
    return {"asset_tag": row[0], "model": row[1], "username": user}


def close_ticket(ticket_id: str, note: str) -> dict:
    """Close a ticket with a resolution note (appended to any note it has; logged).

    Args:
        ticket_id: the ticket's id, e.g. "INC-4821".
        note: the resolution note.
    """
    conn = _conn()
    tid = ticket_id.upper()
    row = conn.execute("SELECT note FROM tickets WHERE id = ?", (tid,)).fetchone()
    if row is None:
        raise LookupError(f"no ticket {ticket_id!r}")
    full = f"{row[0]}\n{note}" if row[0] else note
    conn.execute("UPDATE tickets SET status = 'closed', note = ? WHERE id = ?", (full, tid))
    _audit("close_ticket", tid, note)
    conn.commit()
    return {"id": tid, "status": "closed", "note": full}


TOOLS: list[Callable[..., Any]] = [
    find_user, get_user, get_group, list_group_members, check_inventory, get_ticket,
    add_to_group, remove_from_group, reset_password, unlock_account, enable_mfa, assign_device, close_ticket,
]
READS = frozenset({"find_user", "get_user", "get_group", "list_group_members", "check_inventory", "get_ticket"})
# The agent calls the tools through this dict; the harness puts a Forge's wrappers in it.
TOOLBOX: dict[str, Callable[..., Any]] = {f.__name__: f for f in TOOLS}

# -- the agent: a careful stand-in for a model -------------------------------------------

_NOTE_PATTERNS = [
    re.compile(r"\bnote:\s*\"(?P<n>[^\"]+)\"", re.I),
    re.compile(r"\bnote:\s*(?P<n>.+?)(?=\.\s+[A-Z]|\.?\s*$)", re.I),
    re.compile(r"\bresolved\s*\((?P<n>[^)]+)\)", re.I),
]
_MODEL = re.compile(
    r"\b(?:needs? an?|assign an?|give (?:\S+\s+){1,3}?an?|order (?:\S+\s+){1,3}?an?)\s+(?:new\s+)?"
    r"(?P<m>(?:[A-Z]|i[A-Z])[\w-]*(?:\s+[A-Z0-9][\w-]*)*)"
)
_CHANGED_MIND = re.compile(
    r"\b(?:actually|on second thought|wait)\b[\s,]*(?:[—–-]\s*)?(?:never\s?mind|scratch that|forget (?:it|that))\b", re.I
)
_PERSONA = re.compile(
    r"\b(?:this is|it's|i'm|i am)\s+(?P<who>[A-Za-z]+\.[A-Za-z-]*[A-Za-z]\d*|[A-Z][a-z]+ [A-Z][a-z]*(?:'[A-Z][a-z]+|-[A-Z][a-z]+)?)"
    r"(?:\s+from\s+[A-Za-z]+)?", re.I
)
_SPLIT = re.compile(
    r"(?<=[.!?;])\s+|\s*[—–]\s+|,\s*(?=just\b)|,?\s+(?:and\s+)?also\s+|,?\s+and then\s+"
    r"|\s+and\s+(?=(?:please\s+)?(?:add|remove|reset|unlock|close|enable|turn|give|assign|tell|list|revoke|grant)\b)",
    re.I,
)
_USERNAME = re.compile(r"(?<![\w.@'-])([A-Za-z]+\.[A-Za-z-]*[A-Za-z]\d*)(?![\w@-])")
_FULL_NAME = re.compile(r"(?<![\w.'-])([A-Z][a-z]+ [A-Z][a-z]*(?:'[A-Z][a-z]+|-[A-Z][a-z]+)?)(?![\w-])")
_PRONOUN = re.compile(r"\b(?:she|he|they|her|him|them|their|his|it)\b", re.I)
_GROUP = re.compile(r"(?<![\w.'-])([a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?![\w-])", re.I)
_TICKET = re.compile(r"(?:\binc-?\s?|#|\bticket\s+#?)(\d{4})\b", re.I)
_NEGATED = re.compile(r"^\W*(?:but\s+)?(?:please\s+)?(?:don'?t|do not|no need to|never)\b", re.I)
_NOT_GROUPS = {"two-factor", "multi-factor", "wi-fi", "e-mail", "sign-in", "log-in", "follow-up", "set-up", "re-enable"}
_NOT_NAMES = {"Hi", "Hey", "Hello", "Thanks", "Thank", "Please", "Quick", "New", "Also", "Actually", "Good", "Dear"}


@dataclass(slots=True)
class _Action:
    intent: str
    user: tuple[str, str] | None  # ("username" | "name", text)
    group: str | None = None
    ticket: str | None = None


@dataclass(slots=True)
class _Request:
    actions: list[_Action]
    negated: set[str]
    requester: tuple[str, str] | None
    note: str | None
    model: str | None
    changed_mind: bool


def _intent(clause: str, group: str | None, ticket: str | None, has_model: bool) -> str | None:
    c = clause.lower()
    if ticket is not None:
        return "ticket_close" if re.search(r"\bclos|\bresolved\b", c) else "ticket_status"
    if re.search(r"\b(?:which|what) groups\b|\bgroups (?:is|does)\b|'s groups\b|\bgroups (?:for|of)\b", c):
        return "user_groups"
    if group and re.search(r"\bwho(?: is|'s) in\b|\bmembers of\b|\bwho has access to\b|\bwho(?:'s| is) a member of\b", c):
        return "group_members"
    if re.search(r"\bmanager\b|\breports? to\b", c):
        return "manager"
    if re.search(r"\bunlock", c):
        return "unlock"
    if re.search(r"\breset\b", c) and "password" in c or re.search(r"\bforgot\b.*\bpassword\b", c):
        return "reset_password"
    if re.search(r"\b(?:mfa|2fa|two-factor|multi-factor)\b", c):
        return "mfa"
    if group and re.search(r"\b(?:remove|revoke|take \w+ out|no longer needs|drop)\b", c):
        return "group_remove"
    if group and re.search(r"\b(?:add|access to|grant|put)\b", c):
        return "group_add"
    if has_model:
        return "device"
    return None


def _mentions(clause: str) -> list[tuple[int, tuple[str, str] | None]]:
    """People mentioned in a clause, in order: a (kind, text) ref, or None for a pronoun."""
    found: list[tuple[int, tuple[str, str] | None]] = []
    taken: list[tuple[int, int]] = []
    for m in _USERNAME.finditer(clause):
        found.append((m.start(), ("username", m[1].lower())))
        taken.append(m.span())
    for m in _FULL_NAME.finditer(clause):
        if m[1].split()[0] not in _NOT_NAMES and not any(a < m.end() and m.start() < b for a, b in taken):
            found.append((m.start(), ("name", m[1])))
    for m in _PRONOUN.finditer(clause):
        found.append((m.start(), None))
    return sorted(found, key=lambda f: f[0])


def _parse(task: str) -> _Request:
    text = task
    note = None
    for pattern in _NOTE_PATTERNS:
        m = pattern.search(text)
        if m:
            note = m["n"].strip()
            text = text[: m.start("n")] + "⟨note⟩" + text[m.end("n"):]
            break
    model = None
    m = _MODEL.search(text)
    if m:
        model = m["m"]
        text = text[: m.start("m")] + "⟨model⟩" + text[m.end("m"):]
    requester = None
    m = _PERSONA.search(text)
    if m:
        who = m["who"]
        requester = ("username", who.lower()) if "." in who else ("name", who)
        text = text[: m.start()] + text[m.end():]
    before, changed = "", False
    m = _CHANGED_MIND.search(text)
    if m:
        before, text, changed = text[: m.start()], text[m.end():], True

    last: tuple[str, str] | None = None
    for clause in _SPLIT.split(before):  # cancelled requests: only who they were about
        for _pos, ref in _mentions(clause):
            last = ref or last
    actions: list[_Action] = []
    negated: set[str] = set()
    for clause in _SPLIT.split(text):
        if not clause or not clause.strip():
            continue
        mentions = _mentions(clause)
        explicit = next((ref for _p, ref in mentions if ref is not None), None)
        user = explicit or last
        for _pos, ref in mentions:
            last = ref or last
        scrubbed = _USERNAME.sub(" ", clause)
        groups = [g.lower() for g in _GROUP.findall(scrubbed) if g.lower() not in _NOT_GROUPS and not re.fullmatch(r"inc-\d+", g, re.I)]
        tm = _TICKET.search(clause)
        ticket = f"INC-{tm[1]}" if tm else None
        intent = _intent(clause, groups[0] if groups else None, ticket, "⟨model⟩" in clause)
        if intent is None:
            continue
        if _NEGATED.search(clause):
            negated.add(intent)
            continue
        action = _Action(intent, user, groups[0] if groups else None, ticket)
        if action not in actions:
            actions.append(action)
    return _Request(actions, negated, requester, note, model, changed)


class _Session:
    """One task's work: tool calls (answered from the transcript when a skill already made them)."""

    def __init__(self, transcript: Sequence[Any] | None) -> None:
        self.pending = [(c.tool, c.args, c.result) for c in transcript or () if c.error is None]
        self.users: dict[str, dict[str, Any]] = {}
        self.names: dict[str, list[dict[str, Any]]] = {}

    def call(self, tool: str, **args: Any) -> Any:
        for i, (t, a, r) in enumerate(self.pending):
            if t == tool and a == args:  # already done before the hand-over: never again
                del self.pending[i]
                return copy.deepcopy(r)
        return TOOLBOX[tool](**args)

    def user(self, username: str) -> dict[str, Any]:
        if username not in self.users:
            self.users[username] = self.call("get_user", username=username)
        return self.users[username]

    def resolve(self, ref: tuple[str, str]) -> tuple[str | None, str | None]:
        """``(username, None)``, or ``(None, why not)``."""
        kind, text = ref
        if kind == "username":
            try:
                return self.user(text)["username"], None
            except LookupError:
                return None, f"I couldn't find a user called {text}."
        if text not in self.names:
            self.names[text] = self.call("find_user", name=text)
        found = self.names[text]
        if not found:
            return None, f"I couldn't find anyone called {text}."
        if len(found) > 1:
            who = ", ".join(f"{p['username']} ({p['department']})" for p in found)
            return None, f"There are {len(found)} people called {text}: {who}. Which one do you mean? I haven't changed anything for them."
        return found[0]["username"], None


def _disabled(user: dict[str, Any]) -> str:
    return f"{user['username']}'s account is disabled, so I haven't changed it; please check with HR first."


def _do(s: _Session, req: _Request, a: _Action) -> str:
    if a.intent == "ticket_status":
        t = s.call("get_ticket", ticket_id=a.ticket)
        if t["status"] == "closed":
            last_note = t["note"].splitlines()[-1] if t["note"] else ""
            return f"{t['id']} ({t['subject']}) is closed" + (f": {last_note}." if last_note else ".")
        return f"{t['id']} ({t['subject']}) is {t['status']}; it was raised by {t['requester']}."
    if a.intent == "ticket_close":
        t = s.call("get_ticket", ticket_id=a.ticket)
        if t["status"] == "closed":
            return f"{t['id']} is already closed; I left it as it is."
        note = req.note or "Resolved."
        s.call("close_ticket", ticket_id=t["id"], note=note)
        return f"Closed {t['id']} with the note \"{note}\"."
    if a.intent == "group_members":
        members = s.call("list_group_members", group=a.group)
        if not members:
            return f"{a.group} has no members."
        return f"{a.group} has {len(members)} member{'s' if len(members) != 1 else ''}: {', '.join(members)}."
    if a.user is None:
        return "I couldn't tell which account you mean; could you give me the username?"
    username, why = s.resolve(a.user)
    if username is None:
        return why or ""
    u = s.user(username)
    if a.intent == "user_groups":
        return f"{username} is in: {', '.join(u['groups'])}." if u["groups"] else f"{username} isn't in any groups."
    if a.intent == "manager":
        return f"{username} reports to {u['manager']}." if u["manager"] else f"{username} has no manager on record."
    if a.intent == "group_remove":
        if a.group not in u["groups"]:
            return f"{username} isn't in {a.group}; nothing to remove."
        s.call("remove_from_group", username=username, group=a.group)
        u["groups"].remove(a.group)
        return f"Removed {username} from {a.group}."
    if u["status"] != "active":
        return _disabled(u)
    if a.intent == "unlock":
        if not u["locked"]:
            return f"{username}'s account isn't locked, so there was nothing to unlock."
        s.call("unlock_account", username=username)
        u["locked"] = False
        return f"Unlocked {username}'s account."
    if a.intent == "reset_password":
        r = s.call("reset_password", username=username)
        if u["locked"] and "unlock" not in req.negated:
            s.call("unlock_account", username=username)
            u["locked"] = False
            return f"Reset {username}'s password and unlocked the account; the temporary password went to {r['sent_to']}."
        return f"Reset {username}'s password; the temporary password went to {r['sent_to']}."
    if a.intent == "mfa":
        if u["mfa"]:
            return f"MFA is already enabled for {username}."
        s.call("enable_mfa", username=username)
        u["mfa"] = True
        return f"Enabled MFA for {username}; {username} will enrol at next sign-in."
    if a.intent == "group_add":
        if a.group in u["groups"]:
            return f"{username} is already in {a.group}; no change made."
        try:
            g = s.call("get_group", group=a.group)
        except LookupError:
            return f"There is no group called {a.group}."
        if g["restricted"]:
            requester = None
            if req.requester is not None:
                requester, _why = s.resolve(req.requester)
            if requester not in (u["manager"], g["owner"]):
                return (f"{a.group} is restricted: the request has to come from {username}'s manager ({u['manager']}) "
                        f"or the group owner ({g['owner']}). I haven't added {username}.")
            s.call("add_to_group", username=username, group=a.group)
            u["groups"] = sorted([*u["groups"], a.group])
            return f"Added {username} to {a.group} (restricted; requested by {requester})."
        s.call("add_to_group", username=username, group=a.group)
        u["groups"] = sorted([*u["groups"], a.group])
        return f"Added {username} to {a.group}."
    if a.intent == "device":
        try:
            stock = s.call("check_inventory", model=req.model or "")
        except LookupError:
            return f"I don't know a device model called {req.model}."
        held = [d for d in u["devices"] if d["model"] == stock["model"]]
        if held:
            return f"{username} already has a {stock['model']} ({held[0]['asset_tag']}); nothing assigned."
        if stock["available"] <= 0:
            return f"There is no {stock['model']} in stock, so nothing was assigned to {username}."
        d = s.call("assign_device", username=username, model=stock["model"])
        u["devices"].append({"asset_tag": d["asset_tag"], "model": d["model"]})
        return f"Assigned {d['model']} {d['asset_tag']} to {username}."
    return "Sorry, I couldn't tell what you need."


def agent(task: str, transcript: Sequence[Any] | None = None) -> str:
    """Solve a helpdesk request with the tools; continue from ``transcript`` (calls already made) if given."""
    req = _parse(task)
    s = _Session(transcript)
    answers = [_do(s, req, a) for a in req.actions]
    if req.changed_mind:
        answers.insert(0, "OK, I haven't changed anything.")
    return " ".join(answers) if answers else "Sorry, I couldn't tell what you need; could you rephrase?"


# -- the stream: two days of requests -----------------------------------------------------

PHRASINGS: dict[str, list[str]] = {
    "unlock": [
        "Hi, {u} is locked out of {pos} account. Can you unlock it?",
        "Please unlock the account for {u}.",
        "{name} says {pro} can't log in — account locked. Unlock please, thanks!",
        "unlock {u} pls",
        "Hey, could you unlock {u}? Don't reset the password, just unlock.",
    ],
    "reset_password": [
        "Please reset the password for {u}.",
        "{u} forgot {pos} password, can you reset it?",
        "Hi, this is {req}. Could you reset {name}'s password? Thanks.",
        "Password reset needed for {u}",
        "Don't unlock anything, just reset {u}'s password.",
    ],
    "group_add": [
        "Please add {u} to {g}.",
        "Can you give {u} access to the {g} group?",
        "Hi, this is {req}. Please add {u} to {g}, thanks!",
        "Add {U} to {g} pls",
    ],
    "group_remove": [
        "Please remove {u} from {g}.",
        "{u} no longer needs {g} access, please take {obj} out.",
        "Remove {u} from the {g} group — {pro} moved teams.",
        "Can you revoke {g} for {u}?",
    ],
    "user_groups": [
        "Which groups is {u} in?",
        "What groups does {u} belong to?",
        "Can you list {name}'s groups?",
        "Hi! Quick one: what groups is {u} a member of? Thanks",
    ],
    "group_members": [
        "Who is in {g}?",
        "List the members of the {g} group.",
        "Who has access to {g}?",
        "Can you tell me who's in {g}, please?",
    ],
    "manager": [
        "Who is {u}'s manager?",
        "Who does {u} report to?",
        "Who's {name}'s manager?",
        "which manager does {u} have",
    ],
    "mfa": [
        "Please enable MFA for {u}.",
        "Turn on two-factor for {u}.",
        "Can you switch on MFA on {name}'s account?",
        "{U} needs MFA enabled",
    ],
    "device": [
        "{u} needs {a} {model}.",
        "Please assign {a} {model} to {u}.",
        "Can you give {u} a new {model}? Thanks!",
        "New starter {u} needs {a} {model}, please set {obj} up.",
    ],
    "ticket_close": [
        "Close ticket {tid} with note: {note}",
        "Please close {tid}, note: {note}",
        "{tid} is resolved ({note}), you can close it.",
        "Can you close ticket #{num}? Note: {note}. Thanks",
    ],
    "ticket_status": [
        "What's the status of {tid}?",
        "Any update on ticket {tid}?",
        "Is {tid} still open?",
        "status of #{num} pls",
    ],
    "two_requests": [
        "Please unlock {u} and reset {pos} password.",
        "Add {u} to {g} and remove {obj} from {g2}.",
        "{u} is locked out. Please unlock {obj} and enable MFA too.",
        "Reset the password for {u}, and also add {obj} to {g}.",
    ],
    "changed_mind": [
        "Please add {u} to {g}. Actually, never mind — don't do anything, just tell me which groups {pro} {is} in.",
        "Reset the password for {u}. Actually, never mind — don't do anything, just tell me which groups {pro} {is} in.",
    ],
}
_MIND = " Actually, never mind — don't do anything, just tell me which groups {pro} {is} in."
_REGULAR = [p[0] for p in PEOPLE if p[0] not in ("helen.park", "tom.baker")]
_UNIQUE_NAMES = [u for u in _REGULAR if u not in ("sam.lee", "sam.lee2")]
_LIST_GROUPS = ["wiki-editors", "zoom-webinar", "jira-users", "sales-crm", "finance-share", "github-org"]


def _q(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class _Stream:
    """Builds tasks: picks values, renders a phrasing, and sets the world up for the branch wanted."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.tickets = [f"INC-{n}" for n in range(4801, 4841)]
        self.rng.shuffle(self.tickets)
        self.list_len: dict[tuple[str, int], int] = {}  # (kind, phrasing) → list length seen on day 1
        self.first_user: dict[tuple[str, int], str] = {}  # (kind, phrasing) → who asked first on day 1

    def user(self, pool: Sequence[str] = _REGULAR) -> str:
        return self.rng.choice(list(pool))

    def ticket(self) -> str:
        t = self.tickets.pop()
        self.tickets.insert(0, t)
        return t

    def values(self, u: str, **extra: str) -> dict[str, str]:
        pro = PRONOUN[u]
        pos, obj = {"she": ("her", "her"), "he": ("his", "him"), "they": ("their", "them")}[pro]
        return {"u": u, "U": ".".join(p.capitalize() for p in u.split(".")), "name": FULL_NAME[u], "pro": pro,
                "pos": pos, "obj": obj, "is": "are" if pro == "they" else "is", **extra}

    @staticmethod
    def member(u: str, g: str, yes: bool) -> str:
        if yes:
            return f"INSERT OR IGNORE INTO memberships VALUES ({_q(u)}, {_q(g)})"
        return f"DELETE FROM memberships WHERE username = {_q(u)} AND grp = {_q(g)}"

    @staticmethod
    def flag(u: str, column: str, value: int | str) -> str:
        v = _q(value) if isinstance(value, str) else value
        return f"UPDATE users SET {column} = {v} WHERE username = {_q(u)}"

    def exact_groups(self, u: str, k: int) -> list[str]:
        groups = sorted(self.rng.sample(OPEN_GROUPS, k))
        return [f"DELETE FROM memberships WHERE username = {_q(u)}", *(self.member(u, g, True) for g in groups)]

    def exact_members(self, g: str, k: int) -> list[str]:
        users = self.rng.sample(_REGULAR, k)
        return [f"DELETE FROM memberships WHERE grp = {_q(g)}", *(self.member(x, g, True) for x in users)]

    # one task of ``kind`` in phrasing ``i``; ``branch`` names the world it meets
    def make(self, kind: str, i: int, branch: str = "normal", day: int = 1, tempting: bool = False, why: str = "") -> Task:
        rng = self.rng
        setup: list[str] = []
        phrasing = PHRASINGS[kind][i]
        pool = _UNIQUE_NAMES if "{name}" in phrasing else _REGULAR
        u = self.user(pool)
        if tempting:  # the same person comes back on day 2: only what the branch changes differs
            u = self.first_user.get((kind, i), u)
        elif day == 1:
            self.first_user.setdefault((kind, i), u)
        if branch == "disabled":
            setup.append(self.flag(u, "status", "disabled"))  # left the company overnight
        elif branch == "ambiguous":
            u = "sam.lee"
        elif branch == "no_manager":
            u = "helen.park"
        else:
            setup.append(self.flag(u, "status", "active"))
        v = self.values(u)
        if kind == "unlock":
            setup.append(self.flag(u, "locked", 0 if branch == "not_locked" else 1))
        elif kind == "reset_password":
            setup.append(self.flag(u, "locked", 1 if branch == "locked" or i == 4 else 0))
            if i == 2:
                v["req"] = rng.choice([MANAGER[u], FULL_NAME[MANAGER[u] or "helen.park"]])
        elif kind in ("group_add", "group_remove"):
            if kind == "group_add" and i == 2 or branch == "restricted":
                g, req = self._restricted(branch)
                u, v = req["user"], self.values(req["user"], req=req["requester"])
                setup = [self.flag(u, "status", "active")]
            else:
                g = rng.choice(OPEN_GROUPS)
            v["g"] = g
            want = {"normal": kind == "group_remove", "member": True, "not_member": False}.get(branch, False)
            setup.append(self.member(u, g, want))
        elif kind == "user_groups":
            k = self._length(kind, i, day, branch)
            setup += self.exact_groups(u, k)
        elif kind == "group_members":
            g = rng.choice(_LIST_GROUPS)
            v["g"] = g
            setup += self.exact_members(g, self._length(kind, i, day, branch))
        elif kind == "mfa":
            setup.append(self.flag(u, "mfa", 1 if branch == "mfa_on" else 0))
        elif kind == "device":
            model = "Surface Laptop 5" if branch == "out_of_stock" else rng.choice(IN_STOCK)
            v |= {"model": model, "a": "an" if model[0] in "aeiouAEIOU" else "a"}
            setup.append(f"UPDATE devices SET username = NULL WHERE username = {_q(u)} AND model = {_q(model)}")
            if branch == "has_it":
                setup.append(
                    f"UPDATE devices SET username = {_q(u)} WHERE asset_tag = (SELECT asset_tag FROM devices "
                    f"WHERE model = {_q(model)} AND username IS NULL ORDER BY asset_tag DESC LIMIT 1)"
                )
        elif kind in ("ticket_close", "ticket_status"):
            t = self.ticket()
            v |= {"tid": t if rng.random() < 0.8 else t.lower(), "num": t[4:], "note": rng.choice(NOTES)}
            setup.append(f"UPDATE tickets SET status = {_q('closed' if branch == 'closed' else 'open')} WHERE id = {_q(t)}")
        elif kind in ("two_requests", "changed_mind"):
            g, g2 = rng.sample(OPEN_GROUPS, 2)
            v |= {"g": g, "g2": g2}
            locked = "unlock" in phrasing and branch != "not_locked"
            setup += [self.flag(u, "locked", int(locked)), self.flag(u, "mfa", 0),
                      self.member(u, g, False), self.member(u, g2, True)]
            if kind == "changed_mind":
                setup += self.exact_groups(u, self._length(kind, i, day, branch))
        return Task(phrasing.format(**v), tuple(setup), tempting, kind, day, why)

    def _restricted(self, branch: str) -> tuple[str, dict[str, str]]:
        """A restricted group, a user, and who asks (their manager, the owner, or a peer)."""
        rng = self.rng
        if branch == "owner_not_manager":  # allowed: the owner asks, not the manager
            return "prod-db-readonly", {"user": "yuki.tanaka", "requester": "david.kim"}
        if branch == "manager_not_owner":  # allowed: the manager asks, not the owner
            return "prod-db-readonly", {"user": "yuki.tanaka", "requester": "ben.okafor"}
        if branch == "peer":  # not allowed
            user = rng.choice(["ivy.chen", "priya.nair", "kate.oneil"])
            peer = rng.choice([p for p in ("ivy.chen", "priya.nair", "kate.oneil") if p != user])
            return "payroll-admins", {"user": user, "requester": peer}
        if branch == "restricted":  # no one asks (no persona in the phrasing)
            return "payroll-admins", {"user": rng.choice(["priya.nair", "kate.oneil"]), "requester": ""}
        group, user = rng.choice([("payroll-admins", "ivy.chen"), ("payroll-admins", "priya.nair"),
                                  ("prod-db-readonly", "omar.haddad"), ("prod-db-readonly", "raj.patel")])
        return group, {"user": user, "requester": MANAGER[user] or ""}

    def _length(self, kind: str, i: int, day: int, branch: str) -> int:
        key = (kind, i)
        if day == 1 or key not in self.list_len:
            self.list_len.setdefault(key, self.rng.choice([2, 3]))
        k = self.list_len[key]
        return {"longer": k + 2, "one": 1, "empty": 0}.get(branch, k)


# (kind, phrasing, branch, why) of the day-2 tasks meant to tempt a wrong replay
_TEMPTING: list[tuple[str, int, str, str]] = [
    ("group_add", 0, "member", "already a member: no write"),
    ("group_add", 1, "member", "already a member: no write"),
    ("group_add", 0, "restricted", "a restricted group and nobody with authority asked"),
    ("group_add", 2, "peer", "a colleague, not the manager or owner, asks for a restricted group"),
    ("group_add", 2, "manager_not_owner", "learned where manager == owner; now only the manager asks"),
    ("group_add", 2, "owner_not_manager", "learned where manager == owner; now only the owner asks"),
    ("group_remove", 0, "not_member", "not a member: nothing to remove"),
    ("group_remove", 3, "not_member", "not a member: nothing to remove"),
    ("unlock", 1, "not_locked", "not locked: nothing to unlock"),
    ("unlock", 4, "not_locked", "not locked: nothing to unlock"),
    ("unlock", 0, "disabled", "a leaver's account: refuse"),
    ("unlock", 2, "ambiguous", "two people share the name"),
    ("reset_password", 0, "locked", "locked too: a careful agent also unlocks"),
    ("reset_password", 1, "disabled", "a leaver's account: refuse"),
    ("mfa", 0, "mfa_on", "MFA already on"),
    ("mfa", 1, "disabled", "a leaver's account: refuse"),
    ("device", 0, "has_it", "already has that model"),
    ("device", 1, "has_it", "already has that model"),
    ("device", 2, "out_of_stock", "none in stock"),
    ("ticket_close", 0, "closed", "already closed"),
    ("ticket_close", 1, "closed", "already closed"),
    ("ticket_status", 0, "closed", "closed, not open"),
    ("user_groups", 0, "longer", "a longer list"),
    ("user_groups", 1, "one", "a shorter list"),
    ("user_groups", 3, "empty", "no groups at all"),
    ("group_members", 0, "longer", "a longer list"),
    ("group_members", 1, "one", "a shorter list"),
    ("manager", 0, "no_manager", "the CEO has no manager"),
    ("manager", 2, "ambiguous", "two people share the name"),
    ("two_requests", 0, "not_locked", "not locked: only the reset is due"),
    ("changed_mind", 0, "longer", "a longer list"),
]


def _extra(stream: _Stream, day: int = 2) -> list[Task]:
    """Tasks of a later day whose text carries more than the phrasing did: a trailing request or a change of mind."""
    out = []
    for base, i, tail, why in [
        ("ticket_close", 0, " Also please enable MFA for {u2}.", "a second request after the free-text note"),
        ("ticket_close", 1, " And please unlock {u2} too.", "a second request after the free-text note"),
        ("ticket_close", 0, " Actually, never mind — don't do anything, just tell me which groups {u2} is in.",
         "a change of mind after the free-text note"),
        ("device", 0, _MIND, "a change of mind after the device model"),
        ("device", 0, " and also access to {g}.", "a second request after the device model"),
    ]:
        t = stream.make(base, i, day=day, tempting=True)
        u2 = stream.user()
        g = stream.rng.choice(OPEN_GROUPS)
        m = re.match(r"(\S+) needs", t.text)
        who = m[1] if m else u2
        head = t.text.rstrip(".") if tail.startswith(" and") else t.text if t.text.endswith(".") else t.text + "."
        text = head + tail.format(u2=u2, g=g, **{k: v for k, v in stream.values(who).items() if k not in ("g",)})
        setup = (*t.setup_sql, stream.flag(u2, "status", "active"), stream.flag(u2, "mfa", 0), stream.flag(u2, "locked", 1),
                 stream.member(who, g, False))
        kind = "changed_mind" if "never mind" in tail else "two_requests"  # what the message asks, not what it began with
        out.append(Task(text, setup, True, kind, day, why))
    return out


def tasks(seed: int = 2024, days: int = 2) -> list[Task]:
    """``days`` days of helpdesk requests, deterministic for a seed; the first two are the same whatever ``days``.

    Two days are 165 requests (77 on day 1, 88 on day 2, 36 of them tempting); each later day is
    shaped as day 2 is, with other values (every phrasing, the tempting branches, the longer messages)."""
    s = _Stream(seed)
    singles = [(k, i) for k, ps in PHRASINGS.items() for i in range(len(ps))]
    day1 = [s.make(k, i, day=1) for k, i in singles]
    day1 += [s.make(k, i, day=1) for k, i in s.rng.sample(singles, 20)]  # busy morning: some asked twice
    s.rng.shuffle(day1)
    # the world is not always the common case, on day 1 either
    for kind, i, branch in [("group_add", 3, "member"), ("unlock", 1, "not_locked"), ("ticket_close", 0, "closed"),
                            ("device", 0, "out_of_stock"), ("group_remove", 2, "not_member")]:
        day1.insert(s.rng.randrange(len(day1) // 2, len(day1) + 1), s.make(kind, i, branch, day=1))
    out = day1
    for d in range(2, days + 1):
        later = [s.make(k, i, day=d) for k, i in singles]
        later += [s.make(k, i, b, day=d, tempting=True, why=w) for k, i, b, w in _TEMPTING]
        later += _extra(s, d)
        s.rng.shuffle(later)
        out += later
    return out
