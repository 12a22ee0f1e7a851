"""A public library's loans desk on SQLite: members, books, loans, holds and fines, and what people ask of it.

The world (``make_world(path)``, seeded and deterministic) is one SQLite file: 40 members (an id like
``M-1043``, a name, an email, a library card number, a status ``active`` / ``suspended`` / ``expired``,
a tier that sets how many books they may have out, and fines in dollars and cents), 120 books (a
book id like ``B-3007``, an ISBN, a title of one to six words, an author, how many copies the library
owns; how many are on the shelf is what the loans leave), about 200 loans past and present (lent on,
due on, renewals, returned on), holds (a book reserved by a member) and payments. The desk's date is
in the world too (``desk.today``), and moves on a day at the start of each later day of the stream.

The tools are plain top-level functions over that file (``use_world(path)``): five reads
(``find_member``, ``get_member``, ``find_book``, ``get_book``, ``get_loan``) and five writes
(``lend_book``, ``return_book``, ``renew_loan``, ``pay_fine``, ``place_hold``). They keep the data whole
(no loan without a free copy, no second return, no payment above what is owed, one hold per member
and book) and enforce nothing of the desk's policy: that is the agent's job.

The desk's policy, which ``agent`` follows:

- a book is lent only to an **active** member (not suspended, not expired) whose fines are not
  **over $10.00** ("fines over $10.00 must be paid before borrowing"), who is under the tier's
  maximum of loans (student 3, standard 5, premium 8) and does not already have that book out, and
  only if a copy is on the shelf; with none in, the agent offers a hold, or places it if asked to;
- loans run 21 days; a loan is renewed at most **2** times, and not at all while another member
  has the book on hold;
- a return quotes the late fee the desk charged ($0.25 a day late, at most $5.00 a book), and the
  new balance; returning a loan already checked in changes nothing;
- a payment takes at most what is owed and answers with the remaining balance (and whether the
  member may borrow again);
- a hold is placed only for an active member, on a book with no copy in, that they neither have
  out nor already hold;
- "what do I have out" lists the loans with their due dates (and any fines).

``agent`` is a deterministic rule-based stand-in for a model (no network). It reads what people
type: greetings, personas ("Hi, this is Maria Lopez"), a member by full name, email, card number or
member id, a book by its title (quoted or not) or a loan by its id, "it" for the last thing named,
two requests in one message ("return X and renew Y", "pay $5 and then borrow Z"), a fallback ("if
it's out, put a hold on it"), and a change of mind ("Actually, don't renew it — just tell me when
it's due"). It answers in its own words: which of several phrasings it picks depends on the wording
of the request (a ``zlib.crc32`` of the text with the values it read out of it masked), and how
much it reads beyond what it needs (a book's record after a return, the account again after a
payment, ...) on a ``zlib.crc32`` of the whole text. The same text in the same world always gets
the same calls and the same answer. Given a ``transcript`` (the calls a skill already made for the
task), it takes each call it would make from there when the transcript has it, so no write is
made twice.

``tasks(days=2)`` is the stream: day 1 has every phrasing once and some again (about 70 requests),
each later day every phrasing again with other values plus the tasks flagged ``tempting``: a
phrasing met again in a world where the right action differs (fines of $10.01 or $14.25 after lends
at $2.00, $4.75 and $9.99; a suspended or expired member; a full card; no copy left; a renewal of a
book on hold or renewed twice already; a loan already returned; a member's loan due the very day a
new one would be; a payment that brings the fines under the limit, or not). Each task's
``setup_sql`` moves the world to where the request meets it (a fine added, a copy brought back by
someone else, a loan already on the card).

Run it through the shadow harness::

    .venv/bin/python -m bench.shadow --workload loans --days 2 --check-agent
"""

from __future__ import annotations

import copy
import dataclasses
import random
import re
import sqlite3
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cache
from pathlib import Path
from typing import Any

from . import Task, difference, pristine

__all__ = [
    "READS", "TOOLBOX", "TOOLS", "agent", "find_book", "find_member", "get_book", "get_loan", "get_member",
    "lend_book", "make_world", "pay_fine", "place_hold", "renew_loan", "return_book", "snapshot", "tasks",
    "use_world",
]

# -- the desk's policy (the agent applies it; the tools do not) ----------------------------

FINE_LIMIT_CENTS = 1000  # fines over $10.00 block borrowing
MAX_RENEWALS = 2
LOAN_DAYS = 21
LATE_FEE_CENTS_PER_DAY = 25
LATE_FEE_CAP_CENTS = 500
TIERS = {"student": 3, "standard": 5, "premium": 8}  # tier -> most books out at once

FIRST_DAY = date(2024, 5, 6)  # the desk's date on day 1 of the stream

# -- the world -------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE desk (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE members (
    member_id TEXT PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT NOT NULL, email TEXT NOT NULL UNIQUE,
    card_number TEXT NOT NULL UNIQUE, status TEXT NOT NULL CHECK (status IN ('active', 'suspended', 'expired')),
    tier TEXT NOT NULL, max_loans INTEGER NOT NULL, fines_cents INTEGER NOT NULL CHECK (fines_cents >= 0)
);
CREATE TABLE books (
    book_id TEXT PRIMARY KEY, isbn TEXT NOT NULL UNIQUE, title TEXT NOT NULL, author TEXT NOT NULL,
    copies_total INTEGER NOT NULL CHECK (copies_total > 0)
);
CREATE TABLE loans (
    loan_id TEXT PRIMARY KEY, member_id TEXT NOT NULL REFERENCES members, book_id TEXT NOT NULL REFERENCES books,
    lent_on TEXT NOT NULL, due_on TEXT NOT NULL, renewals INTEGER NOT NULL, returned_on TEXT
);
CREATE TABLE holds (
    hold_id TEXT PRIMARY KEY, member_id TEXT NOT NULL REFERENCES members, book_id TEXT NOT NULL REFERENCES books,
    placed_on TEXT NOT NULL, status TEXT NOT NULL CHECK (status IN ('active', 'fulfilled', 'cancelled'))
);
CREATE TABLE payments (
    payment_id TEXT PRIMARY KEY, member_id TEXT NOT NULL REFERENCES members, amount_cents INTEGER NOT NULL,
    paid_on TEXT NOT NULL
);
"""

_PEOPLE = [
    ("Maria", "Lopez"), ("Sam", "Lee"), ("Sam", "Lee"), ("Priya", "Nair"), ("Jonas", "Berg"), ("Aisha", "Khan"),
    ("Tom", "Okafor"), ("Lena", "Schmidt"), ("Diego", "Ramos"), ("Grace", "Ito"), ("Omar", "Haddad"),
    ("Chloe", "Martin"), ("Yuki", "Tanaka"), ("Felix", "Wagner"), ("Nora", "Quinn"), ("Ivy", "Chen"),
    ("Raj", "Patel"), ("Emma", "Novak"), ("Leo", "Rossi"), ("Zoe", "Fischer"), ("Ben", "Adler"), ("Ruth", "Silva"),
    ("Hugo", "Moreau"), ("Mia", "Wong"), ("Ana", "Garcia-Lopez"), ("Kofi", "Mensah"), ("Elena", "Petrova"),
    ("Marco", "Bianchi"), ("Sofia", "Lindqvist"), ("Noah", "Brennan"), ("Ingrid", "Dahl"), ("Tariq", "Aziz"),
    ("Clara", "Weiss"), ("Pablo", "Ortega"), ("Hana", "Sato"), ("Victor", "Hale"), ("June", "Park"),
    ("Oscar", "Lund"), ("Wendy", "Marsh"), ("Arjun", "Mehta"),
]
_SUSPENDED = {("Tom", "Okafor"), ("Victor", "Hale")}
_EXPIRED = {("Wendy", "Marsh"), ("Oscar", "Lund")}
_FINES = [0] * 22 + [200, 475, 999, 1000, 1425, 3150, 50, 125, 340, 600, 75, 1280, 250, 825, 0, 0, 0, 0]

# title vocabulary: no word the agent reads as the end of a title (and, for, to, please, today, ...)
_ADJ = ["Silent", "Hidden", "Last", "Broken", "Golden", "Quiet", "Distant", "Bitter", "Crimson", "Hollow",
        "Northern", "Paper", "Glass", "Iron", "Salt", "Wild", "Small", "Secret", "Burning", "Frozen", "Velvet",
        "Amber", "Lost", "Winter", "Summer", "Copper", "Pale", "Long", "Sleeping", "Empty"]
_NOUN = ["River", "Harbor", "Garden", "Mountain", "Orchard", "Kingdom", "Lantern", "Archive", "Island", "Forest",
         "Bridge", "Station", "Clockmaker", "Cartographer", "Orchid", "Tide", "Meridian", "Compass", "Harvest",
         "Library", "Window", "Shadow", "Violin", "Ember", "Atlas", "Signal", "Voyage", "Cathedral", "Lighthouse",
         "Fox", "Sparrow", "Engine", "Mirror", "Storm", "Crown", "Well"]
_PLURAL = ["Letters", "Rooms", "Hours", "Maps", "Tides", "Songs", "Stars", "Roads", "Bones", "Wolves", "Bells"]
_AUTHOR_FIRST = ["Ada", "Bruno", "Celia", "Dmitri", "Esther", "Farid", "Greta", "Henrik", "Ines", "Julian", "Keiko",
                 "Lucas", "Mara", "Nikolai", "Odette", "Pietro", "Rosa", "Stellan", "Tamsin", "Ulla"]
_AUTHOR_LAST = ["Achebe", "Bergman", "Castell", "Duval", "Eriksen", "Ferrante", "Gallo", "Hartley", "Ishikawa",
                "Jansen", "Kowalski", "Lindgren", "Moretti", "Nakamura", "Oyelaran", "Pereira", "Quist", "Ruiz"]


@dataclass(frozen=True, slots=True)
class _Person:
    member_id: str
    first: str
    last: str
    email: str
    card: str
    status: str
    tier: str
    fines_cents: int

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def max_loans(self) -> int:
        return TIERS[self.tier]


@dataclass(frozen=True, slots=True)
class _Title:
    book_id: str
    isbn: str
    title: str
    author: str
    copies: int


def _isbn(rng: random.Random) -> str:
    digits = [9, 7, 8] + [rng.randrange(10) for _ in range(9)]
    check = (10 - sum(d * (1 if i % 2 == 0 else 3) for i, d in enumerate(digits)) % 10) % 10
    return "".join(map(str, digits + [check]))


def _make_title(rng: random.Random) -> str:
    a, n, p = rng.choice(_ADJ), rng.choice(_NOUN), rng.choice(_PLURAL)
    return rng.choice([
        n, p, f"{a} {n}", f"{a} {n}", f"The {a} {n}", f"The {a} {n}", f"The {n} of {p}", f"{a} {p}",
        f"Songs of the {a} {n}", f"Notes from the {a} {n}", f"A Short History of {a} {p}",
        f"The Girl with the {a} {n}", f"Under the {a} {n}", f"The {n} at the End of {p}",
    ])


@cache
def _catalogue() -> tuple[tuple[_Person, ...], tuple[_Title, ...]]:
    """The members and books of every world (what ``make_world`` writes and ``tasks`` draws on)."""
    rng = random.Random(1043)
    ids = sorted(rng.sample(range(1010, 1100), len(_PEOPLE)))
    fines = list(_FINES)
    rng.shuffle(fines)
    cards: set[str] = set()
    people = []
    for k, ((first, last), mid) in enumerate(zip(_PEOPLE, ids, strict=True)):
        card = f"21{rng.randrange(10**8):08d}"
        while card in cards:
            card = f"21{rng.randrange(10**8):08d}"
        cards.add(card)
        email = f"{first}.{last}@mailbox.example".lower() if k != 2 else "samlee84@post.example"
        status = "suspended" if (first, last) in _SUSPENDED else "expired" if (first, last) in _EXPIRED else "active"
        tier = rng.choice(["standard", "standard", "standard", "student", "premium"])
        people.append(_Person(f"M-{mid}", first, last, email, card, status, tier, fines[k]))
    titles: list[str] = []
    while len(titles) < 114:
        t = _make_title(rng)
        if t not in titles:
            titles.append(t)
    for base in rng.sample([t for t in titles if len(t.split()) == 3], 6):  # sequels: one title inside another
        titles.append(f"{base} II")
    books = [
        _Title(f"B-{3001 + i}", _isbn(rng), t, f"{rng.choice(_AUTHOR_FIRST)} {rng.choice(_AUTHOR_LAST)}",
               rng.choice([1, 1, 2, 2, 2, 3, 3, 4]))
        for i, t in enumerate(titles)
    ]
    return tuple(people), tuple(books)


def make_world(path: str | Path) -> None:
    """Create a fresh library world at ``path`` (the file must not exist yet)."""
    people, books = _catalogue()
    rng = random.Random(2031)
    today = FIRST_DAY
    conn = sqlite3.connect(str(path))
    conn.executescript(_SCHEMA)
    conn.executemany(
        "INSERT INTO members VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(p.member_id, p.first, p.last, p.email, p.card, p.status, p.tier, p.max_loans, p.fines_cents) for p in people],
    )
    conn.executemany("INSERT INTO books VALUES (?, ?, ?, ?, ?)", [(b.book_id, b.isbn, b.title, b.author, b.copies) for b in books])
    out: dict[str, set[str]] = {p.member_id: set() for p in people}
    seq = 50001
    loans = []
    for b in books:
        for borrower in rng.sample(people, rng.randint(0, b.copies)):
            if len(out[borrower.member_id]) >= borrower.max_loans - 1:
                continue
            out[borrower.member_id].add(b.book_id)
            renewals = rng.choice([0, 0, 0, 1, 2])
            lent = today - timedelta(days=rng.randint(1, 20) + LOAN_DAYS * renewals)
            due = lent + timedelta(days=LOAN_DAYS * (1 + renewals)) - timedelta(days=rng.choice([0, 0, 0, 0, 9]))
            loans.append((f"L-{seq}", borrower.member_id, b.book_id, lent.isoformat(), due.isoformat(), renewals, None))
            seq += 1
    for _ in range(60):  # loans returned before the stream begins
        p, b = rng.choice(people), rng.choice(books)
        lent = today - timedelta(days=rng.randint(30, 160))
        back = lent + timedelta(days=rng.randint(3, LOAN_DAYS))
        loans.append((f"L-{seq}", p.member_id, b.book_id, lent.isoformat(), (lent + timedelta(days=LOAN_DAYS)).isoformat(), 0, back.isoformat()))
        seq += 1
    conn.executemany("INSERT INTO loans VALUES (?, ?, ?, ?, ?, ?, ?)", loans)
    hold_seq = 1001
    for b in books:
        taken = sum(1 for loan in loans if loan[2] == b.book_id and loan[6] is None)
        if taken < b.copies or rng.random() < 0.5:
            continue
        for p in rng.sample([p for p in people if b.book_id not in out[p.member_id] and p.status == "active"], rng.randint(1, 2)):
            placed = today - timedelta(days=rng.randint(1, 14))
            conn.execute("INSERT INTO holds VALUES (?, ?, ?, ?, 'active')", (f"H-{hold_seq}", p.member_id, b.book_id, placed.isoformat()))
            hold_seq += 1
    conn.executemany("INSERT INTO desk VALUES (?, ?)", [
        ("today", today.isoformat()), ("next_loan", str(seq)), ("next_hold", str(hold_seq)), ("next_payment", "7001"),
    ])
    conn.commit()
    conn.close()


_db: sqlite3.Connection | None = None


def use_world(path: str | Path) -> None:
    """Point the tools at the library world in ``path``."""
    global _db
    if _db is not None:
        _db.close()
    _db = sqlite3.connect(str(path))
    _db.row_factory = sqlite3.Row


@cache
def _fresh() -> dict[str, frozenset[tuple[Any, ...]]]:
    return pristine(make_world)


def snapshot(path: str | Path) -> dict[str, list[list[Any]]]:
    """The world at ``path`` as its difference from a fresh one, table by table (equal for equal worlds)."""
    return difference(path, _fresh())


def _conn() -> sqlite3.Connection:
    if _db is None:
        raise RuntimeError("no library world in use: call use_world(path) first")
    return _db


def _today() -> date:
    return date.fromisoformat(_conn().execute("SELECT value FROM desk WHERE key = 'today'").fetchone()[0])


def _next(counter: str, prefix: str) -> str:
    conn = _conn()
    n = int(conn.execute("SELECT value FROM desk WHERE key = ?", (counter,)).fetchone()[0])
    conn.execute("UPDATE desk SET value = ? WHERE key = ?", (str(n + 1), counter))
    return f"{prefix}-{n}"


def _dollars(cents: int) -> float:
    return round(cents / 100, 2)


def _member(member_id: str) -> sqlite3.Row:
    row = _conn().execute("SELECT * FROM members WHERE member_id = ?", (member_id.strip().upper(),)).fetchone()
    if row is None:
        raise LookupError(f"no member {member_id!r}")
    return row


def _book(book_id: str) -> sqlite3.Row:
    row = _conn().execute("SELECT * FROM books WHERE book_id = ?", (book_id.strip().upper(),)).fetchone()
    if row is None:
        raise LookupError(f"no book {book_id!r}")
    return row


def _loan(loan_id: str) -> sqlite3.Row:
    row = _conn().execute(
        "SELECT loans.*, books.title FROM loans JOIN books USING (book_id) WHERE loan_id = ?", (loan_id.strip().upper(),)
    ).fetchone()
    if row is None:
        raise LookupError(f"no loan {loan_id!r}")
    return row


def _on_loan(book_id: str) -> int:
    return _conn().execute("SELECT COUNT(*) FROM loans WHERE book_id = ? AND returned_on IS NULL", (book_id,)).fetchone()[0]


# -- tools: reads ------------------------------------------------------------------------------


def find_member(query: str) -> list[dict]:
    """Find library members by full name, email address, library card number or member id.

    Args:
        query: what the member gave: "Maria Lopez", "maria.lopez@mailbox.example", a card number
            such as "2104417731" (spaces and dashes are ignored), or "M-1043". Case does not matter.

    Returns:
        The matching members (member_id, name, email, status), by member id; empty if none.
    """
    q = " ".join(query.split()).casefold()
    digits = re.sub(r"[\s-]", "", query)
    rows = _conn().execute("SELECT * FROM members ORDER BY member_id").fetchall()
    hits = [
        r for r in rows
        if f"{r['first_name']} {r['last_name']}".casefold() == q or r["email"].casefold() == q
        or r["card_number"] == digits or r["member_id"].casefold() == q
    ]
    return [{"member_id": r["member_id"], "name": f"{r['first_name']} {r['last_name']}", "email": r["email"],
             "status": r["status"]} for r in hits]


def get_member(member_id: str) -> dict:
    """A member's account: who they are, their standing, fines, current loans and holds.

    Args:
        member_id: the member's id, e.g. "M-1043".

    Returns:
        member_id, name, first_name, email, card_number, status ("active", "suspended" or
        "expired"), tier, max_loans, fines (dollars owed), loans (the books out now, soonest due
        first: loan_id, book_id, title, lent_on, due_on, renewals, overdue) and holds (active ones:
        hold_id, book_id, title, placed_on).

    Raises:
        LookupError: there is no such member.
    """
    row = _member(member_id)
    conn = _conn()
    today = _today().isoformat()
    loans = [
        {"loan_id": r["loan_id"], "book_id": r["book_id"], "title": r["title"], "lent_on": r["lent_on"],
         "due_on": r["due_on"], "renewals": r["renewals"], "overdue": r["due_on"] < today}
        for r in conn.execute(
            "SELECT loans.*, books.title FROM loans JOIN books USING (book_id) WHERE member_id = ? AND returned_on IS NULL "
            "ORDER BY due_on, loan_id", (row["member_id"],))
    ]
    holds = [
        {"hold_id": r["hold_id"], "book_id": r["book_id"], "title": r["title"], "placed_on": r["placed_on"]}
        for r in conn.execute(
            "SELECT holds.*, books.title FROM holds JOIN books USING (book_id) WHERE member_id = ? AND status = 'active' "
            "ORDER BY placed_on, hold_id", (row["member_id"],))
    ]
    return {
        "member_id": row["member_id"], "name": f"{row['first_name']} {row['last_name']}", "first_name": row["first_name"],
        "email": row["email"], "card_number": row["card_number"], "status": row["status"], "tier": row["tier"],
        "max_loans": row["max_loans"], "fines": _dollars(row["fines_cents"]), "loans": loans, "holds": holds,
    }


def find_book(title: str) -> list[dict]:
    """Search the catalogue by title (case-insensitive; any part of the title matches).

    Args:
        title: the title or part of it, e.g. "The Glass Orchard".

    Returns:
        Up to 10 matching books, by title: book_id, title, author and copies_available.
    """
    q = " ".join(title.split()).casefold()
    rows = [r for r in _conn().execute("SELECT * FROM books ORDER BY title, book_id") if q and q in r["title"].casefold()]
    return [{"book_id": r["book_id"], "title": r["title"], "author": r["author"],
             "copies_available": r["copies_total"] - _on_loan(r["book_id"])} for r in rows[:10]]


def get_book(book_id: str) -> dict:
    """A book's record and its copies.

    Args:
        book_id: the book's id, e.g. "B-3007".

    Returns:
        book_id, isbn, title, author, copies_total, copies_available (on the shelf now), holds
        (how many members are waiting for it) and next_due (the soonest due date of a copy out,
        or None if none is out).

    Raises:
        LookupError: there is no such book.
    """
    row = _book(book_id)
    conn = _conn()
    holds = conn.execute("SELECT COUNT(*) FROM holds WHERE book_id = ? AND status = 'active'", (row["book_id"],)).fetchone()[0]
    next_due = conn.execute("SELECT MIN(due_on) FROM loans WHERE book_id = ? AND returned_on IS NULL", (row["book_id"],)).fetchone()[0]
    return {"book_id": row["book_id"], "isbn": row["isbn"], "title": row["title"], "author": row["author"],
            "copies_total": row["copies_total"], "copies_available": row["copies_total"] - _on_loan(row["book_id"]),
            "holds": holds, "next_due": next_due}


def get_loan(loan_id: str) -> dict:
    """One loan, current or past.

    Args:
        loan_id: the loan's id, e.g. "L-50231".

    Returns:
        loan_id, member_id, book_id, title, lent_on, due_on, renewals and returned_on (None while
        the book is still out).

    Raises:
        LookupError: there is no such loan.
    """
    r = _loan(loan_id)
    return {"loan_id": r["loan_id"], "member_id": r["member_id"], "book_id": r["book_id"], "title": r["title"],
            "lent_on": r["lent_on"], "due_on": r["due_on"], "renewals": r["renewals"], "returned_on": r["returned_on"]}


# -- tools: writes -----------------------------------------------------------------------------


def lend_book(member_id: str, book_id: str) -> dict:
    """Check a copy of a book out to a member, due in 21 days; fills the member's hold on it, if any.

    Args:
        member_id: the borrower, e.g. "M-1043".
        book_id: the book, e.g. "B-3007".

    Returns:
        The new loan: loan_id, member_id, book_id, title, lent_on, due_on, renewals (0).

    Raises:
        LookupError: no such member or book.
        ValueError: no copy of the book is on the shelf.
    """
    member, book = _member(member_id), _book(book_id)
    if book["copies_total"] - _on_loan(book["book_id"]) <= 0:
        raise ValueError(f"no copy of {book['title']!r} is available")
    conn = _conn()
    today = _today()
    loan_id = _next("next_loan", "L")
    due = (today + timedelta(days=LOAN_DAYS)).isoformat()
    conn.execute("INSERT INTO loans VALUES (?, ?, ?, ?, ?, 0, NULL)", (loan_id, member["member_id"], book["book_id"], today.isoformat(), due))
    conn.execute("UPDATE holds SET status = 'fulfilled' WHERE member_id = ? AND book_id = ? AND status = 'active'",
                 (member["member_id"], book["book_id"]))
    conn.commit()
    return {"loan_id": loan_id, "member_id": member["member_id"], "book_id": book["book_id"], "title": book["title"],
            "lent_on": today.isoformat(), "due_on": due, "renewals": 0}


def return_book(loan_id: str) -> dict:
    """Check a loaned book back in; a late return is charged $0.25 a day (at most $5.00), added to the fines.

    Args:
        loan_id: the loan, e.g. "L-50231".

    Returns:
        loan_id, member_id, book_id, title, returned_on, days_late, late_fee (dollars charged now)
        and fines (the member's balance after it).

    Raises:
        LookupError: no such loan.
        ValueError: the loan was already returned.
    """
    loan = _loan(loan_id)
    if loan["returned_on"] is not None:
        raise ValueError(f"loan {loan['loan_id']} was already returned on {loan['returned_on']}")
    conn = _conn()
    today = _today()
    late = max(0, (today - date.fromisoformat(loan["due_on"])).days)
    fee = min(late * LATE_FEE_CENTS_PER_DAY, LATE_FEE_CAP_CENTS)
    conn.execute("UPDATE loans SET returned_on = ? WHERE loan_id = ?", (today.isoformat(), loan["loan_id"]))
    conn.execute("UPDATE members SET fines_cents = fines_cents + ? WHERE member_id = ?", (fee, loan["member_id"]))
    balance = conn.execute("SELECT fines_cents FROM members WHERE member_id = ?", (loan["member_id"],)).fetchone()[0]
    conn.commit()
    return {"loan_id": loan["loan_id"], "member_id": loan["member_id"], "book_id": loan["book_id"], "title": loan["title"],
            "returned_on": today.isoformat(), "days_late": late, "late_fee": _dollars(fee), "fines": _dollars(balance)}


def renew_loan(loan_id: str) -> dict:
    """Extend a loan by 21 days from its due date (or from today, if it is overdue).

    Args:
        loan_id: the loan, e.g. "L-50231".

    Returns:
        loan_id, member_id, book_id, title, due_on (the new due date) and renewals (now).

    Raises:
        LookupError: no such loan.
        ValueError: the loan was already returned.
    """
    loan = _loan(loan_id)
    if loan["returned_on"] is not None:
        raise ValueError(f"loan {loan['loan_id']} was returned on {loan['returned_on']}")
    due = (max(date.fromisoformat(loan["due_on"]), _today()) + timedelta(days=LOAN_DAYS)).isoformat()
    conn = _conn()
    conn.execute("UPDATE loans SET due_on = ?, renewals = renewals + 1 WHERE loan_id = ?", (due, loan["loan_id"]))
    conn.commit()
    return {"loan_id": loan["loan_id"], "member_id": loan["member_id"], "book_id": loan["book_id"], "title": loan["title"],
            "due_on": due, "renewals": loan["renewals"] + 1}


def pay_fine(member_id: str, amount: float) -> dict:
    """Take a payment towards a member's fines.

    Args:
        member_id: the member, e.g. "M-1043".
        amount: dollars paid, e.g. 4.75; more than zero and no more than the balance.

    Returns:
        payment_id, member_id, paid and fines (the balance left).

    Raises:
        LookupError: no such member.
        ValueError: the amount is not positive, or is more than the member owes.
    """
    member = _member(member_id)
    cents = round(amount * 100)
    if cents <= 0:
        raise ValueError("a payment must be more than $0.00")
    if cents > member["fines_cents"]:
        raise ValueError(f"the member owes only ${member['fines_cents'] / 100:.2f}")
    conn = _conn()
    payment_id = _next("next_payment", "P")
    conn.execute("UPDATE members SET fines_cents = fines_cents - ? WHERE member_id = ?", (cents, member["member_id"]))
    conn.execute("INSERT INTO payments VALUES (?, ?, ?, ?)", (payment_id, member["member_id"], cents, _today().isoformat()))
    conn.commit()
    return {"payment_id": payment_id, "member_id": member["member_id"], "paid": _dollars(cents),
            "fines": _dollars(member["fines_cents"] - cents)}


def place_hold(member_id: str, book_id: str) -> dict:
    """Reserve a book for a member: they join the end of its queue.

    Args:
        member_id: the member, e.g. "M-1043".
        book_id: the book, e.g. "B-3007".

    Returns:
        hold_id, member_id, book_id, title and position (in the book's queue, 1 is next).

    Raises:
        LookupError: no such member or book.
        ValueError: the member already holds this book.
    """
    member, book = _member(member_id), _book(book_id)
    conn = _conn()
    if conn.execute("SELECT 1 FROM holds WHERE member_id = ? AND book_id = ? AND status = 'active'",
                    (member["member_id"], book["book_id"])).fetchone():
        raise ValueError(f"{member['member_id']} already holds {book['book_id']}")
    hold_id = _next("next_hold", "H")
    conn.execute("INSERT INTO holds VALUES (?, ?, ?, ?, 'active')", (hold_id, member["member_id"], book["book_id"], _today().isoformat()))
    position = conn.execute("SELECT COUNT(*) FROM holds WHERE book_id = ? AND status = 'active'", (book["book_id"],)).fetchone()[0]
    conn.commit()
    return {"hold_id": hold_id, "member_id": member["member_id"], "book_id": book["book_id"], "title": book["title"],
            "position": position}


TOOLS: list[Callable[..., Any]] = [
    find_member, get_member, find_book, get_book, get_loan, lend_book, return_book, renew_loan, pay_fine, place_hold,
]
READS = frozenset({"find_member", "get_member", "find_book", "get_book", "get_loan"})
# The agent calls the tools through this dict; the harness puts a Forge's wrappers in it.
TOOLBOX: dict[str, Callable[..., Any]] = {f.__name__: f for f in TOOLS}

# -- the agent: a rule-based stand-in for a model at the loans desk -------------------------------

_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”|(?<![\w\'])\'([^\']+)\'(?![\w\'])')
_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9][\w.+-]*@[\w-]+(?:\.[\w-]+)+")
_MEMBER_ID = re.compile(r"\b[Mm]-?(\d{4})\b")
_LOAN_ID = re.compile(r"\b[Ll]-?(\d{5,6})\b")
_CARD = re.compile(r"(?<![\w-])(21\d{8})(?![\w-])")
_AMOUNT = re.compile(r"\$\s?(\d+(?:\.\d{1,2})?)")
_TITLE_END = "and|or|for|to|please|today|tomorrow|too|instead|again|due|back|on|if|in|it|me|my|out|is|now|then|also|thanks"
_BARE_TITLE = re.compile(  # a title written without quotes: capitalised, right after the verb, up to a word that ends it
    r"(?i:\b(?:borrow|check out|take out|renew|extend|dropping off|drop off|returning|return|hold on|reserve|copies of|copy of))\s+"
    rf"(?P<t>[A-Z0-9][\w-]*(?:\s+(?!(?:{_TITLE_END})\b)[\w-]+)*)"
)
_CAPITAL = re.compile(r"(?<![\w⟩'-])[A-Z][a-z]+(?:-[A-Z][a-z]+)?(?![\w'-])")
_NOT_A_NAME = {
    "Hi", "Hello", "Hey", "Good", "Morning", "Afternoon", "Evening", "Please", "Thanks", "Thank", "Can", "Could", "Would",
    "Will", "Return", "Returning", "Renew", "Lend", "Place", "Put", "Pay", "Check", "Actually", "Email", "Card", "Member",
    "Wait", "On", "Any", "Do", "Does", "Is", "What", "When", "How", "This", "That", "Yes", "No", "Dear", "The", "Quick",
    "Also", "And", "Then", "Just", "Hold", "Reserve", "Borrow", "Sorry", "Okay", "Ok", "Library", "Loans", "Desk",
}
_VERB = r"(?:renew|return|check|lend|borrow|pay|reserve|tell|take)"
_SPLIT = re.compile(
    r"(?<=[.!?])\s+|\s+[—–]\s+|;\s*"
    rf"|,\s+(?=(?:and\s+)?(?:then|also|or|just|don'?t|do not|{_VERB})\b)"
    rf"|\s+and\s+(?=(?:then\s+|also\s+)?(?:{_VERB}|put|place)\b)",
    re.I,
)
_CANCEL = re.compile(r"\b(?:actually|on second thought|wait|scratch that|never ?mind|forget (?:it|that))\b(?:[,\s]*no\b)?")
_NEGATED = re.compile(r"\b(?:don'?t|do not|no need to)\b")
_FALLBACK = re.compile(r"^\W*(?:or|if)\b|\bif (?:it'?s|it is|there'?s|no|none)\b")
_IT = re.compile(r"\bit\b|\bthat one\b")
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i'd|i've|my|mine)\b|\bfor me\b|\bthis is ⟨n|\bit's ⟨n|⟨[nc]\d+⟩ here\b")
_GREETING = re.compile(r"^\W*(?:hi|hello|hey|good (?:morning|afternoon|evening))\b", re.I)
_WHOLE = re.compile(r"\b(?:whole|all|everything|full|settle|clear)\b")
_INTENTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((k, re.compile(p)) for k, p in (
    ("loans", r"\bhave\b[^.?!]*\bout\b|\bloans\b|\bwhen are\b"),
    ("due", r"\bdue\b"),
    ("pay", r"\bpay\b|\bsettle\b"),
    ("balance", r"\bowe\b|\bbalance\b"),
    ("renew", r"\brenew|\bextend"),
    ("return", r"\breturn|\bdrop(?:ping)? off\b|\bcheck in\b|\bbring(?:ing)? back\b"),
    ("hold", r"\bhold\b|\breserve\b"),
    ("availability", r"\bavailable\b|\bcop(?:y|ies) of\b|\bon the shelf\b"),
    ("lend", r"\bborrow|\bcheck(?:ing)? out\b|\btake out\b|\blend\b"),
))
_NEEDS_A_BOOK = {"lend", "return", "renew", "hold", "due", "availability"}
_METHOD = {"return": "return_"}  # intents whose method has another name


@dataclass(slots=True)
class _Ask:
    """One thing the message asks the desk to do."""

    intent: str
    titles: list[str]
    loan: str | None = None
    amount_cents: int | None = None  # None: the whole balance
    hold_too: bool = False  # a lend: place a hold if no copy is in


@dataclass(slots=True)
class _Message:
    text: str
    shape: str  # the text with the values read out of it masked: what the wording depends on
    ref: tuple[str, str] | None  # the member: ("I" id | "E" email | "C" card | "N" name, value)
    first_person: bool
    greeting: bool
    asks: list[_Ask] = field(default_factory=list)
    cancelled: bool = False


def _read(text: str) -> _Message:
    """What a message asks: values masked out first (titles, ids, emails, cards, amounts, names), then clause by clause."""
    values: dict[str, list[str]] = {k: [] for k in "TEICLAN"}
    s = text

    def mask(pattern: re.Pattern[str], tag: str, pick: Callable[[re.Match[str]], str]) -> None:
        nonlocal s

        def put(m: re.Match[str]) -> str:
            values[tag].append(pick(m))
            return f"⟨{tag}{len(values[tag]) - 1}⟩"
        s = pattern.sub(put, s)

    mask(_QUOTED, "T", lambda m: " ".join(next(g for g in m.groups() if g is not None).split()))
    mask(_EMAIL, "E", lambda m: m[0])
    mask(_MEMBER_ID, "I", lambda m: f"M-{m[1]}")
    mask(_LOAN_ID, "L", lambda m: f"L-{m[1]}")
    mask(_CARD, "C", lambda m: m[1])
    mask(_AMOUNT, "A", lambda m: m[1])

    def bare(m: re.Match[str]) -> str:
        values["T"].append(m["t"])
        return m[0][: m.start("t") - m.start()] + f"⟨T{len(values['T']) - 1}⟩"
    s = _BARE_TITLE.sub(bare, s)
    caps = list(_CAPITAL.finditer(s))
    spans = []
    for a, b in zip(caps, caps[1:], strict=False):
        if b.start() == a.end() + 1 and s[a.end()] == " " and a[0] not in _NOT_A_NAME and b[0] not in _NOT_A_NAME:
            if not spans or spans[-1][1] <= a.start():
                spans.append((a.start(), b.end()))
    for start, end in spans:
        values["N"].append(s[start:end])
    for k, (start, end) in reversed(list(enumerate(spans))):
        s = s[:start] + f"⟨N{k}⟩" + s[end:]
    lowered = s.lower()
    who = re.search(r"⟨([EICN])(\d+)⟩", s)
    msg = _Message(text, lowered, (who[1], values[who[1]][int(who[2])]) if who else None,
                   bool(_FIRST_PERSON.search(lowered)), bool(_GREETING.match(text)))
    last: tuple[str, str] | None = None  # the last book or loan named: what "it" refers to
    for clause in _SPLIT.split(s):
        c = clause.lower()
        named = [(m.start(), m[1], values[m[1]][int(m[2])]) for m in re.finditer(r"⟨([TL])(\d+)⟩", clause)]
        titles = [v for _, tag, v in named if tag == "T"]
        loans = [v for _, tag, v in named if tag == "L"]
        amounts = [values["A"][int(m[1])] for m in re.finditer(r"⟨A(\d+)⟩", clause)]
        before = last
        if named:
            last = (named[-1][1], named[-1][2])
        if _CANCEL.search(c):
            msg.asks.clear()
            msg.cancelled = True
            c = _CANCEL.sub(" ", c)
        if _NEGATED.search(c):
            continue
        intent = next((k for k, p in _INTENTS if p.search(c)), None)
        if intent == "hold" and _FALLBACK.search(c) and msg.asks and msg.asks[-1].intent == "lend":
            msg.asks[-1].hold_too = True
            continue
        if intent is None:
            continue
        if intent in _NEEDS_A_BOOK and not named and _IT.search(c) and before is not None:
            titles, loans = ([before[1]], []) if before[0] == "T" else ([], [before[1]])
        if intent == "due" and not titles and not loans:
            intent = "loans"
        amount = None
        if intent == "pay" and amounts and not _WHOLE.search(c):
            amount = round(float(amounts[0]) * 100)
        msg.asks.append(_Ask(intent, titles, loans[0] if loans else None, amount))
    return msg


class _Refused(Exception):
    """A tool call that raised (now, or when the skill made it)."""


def _usd(cents: int) -> str:
    return f"${cents // 100:,}.{cents % 100:02d}"


def _cents(dollars: float) -> int:
    return round(dollars * 100)


def _books(n: int) -> str:
    return f"{n} book" if n == 1 else f"{n} books"


def _voice(first_person: bool, member: dict | None) -> dict[str, str]:
    """How the answer names the member: "you", or by name when someone asks on their behalf."""
    if first_person or member is None:
        v = {"you": "you", "your": "your", "yours": "yours", "you_have": "you have", "you_are": "you're", "you_owe": "you owe"}
    else:
        n = member["name"]
        v = {"you": n, "your": f"{n}'s", "yours": f"{n}'s", "you_have": f"{n} has", "you_are": f"{n} is", "you_owe": f"{n} owes"}
    return v | {k[0].upper() + k[1:]: w[0].upper() + w[1:] for k, w in v.items()}


class _Visit:
    """One request at the desk: its calls (taken from the transcript where a skill already made them) and its answer."""

    def __init__(self, text: str, transcript: Sequence[Any] | None) -> None:
        self.text = text
        self.msg = _read(text)
        self.ledger = [(c.tool, dict(c.args or {}), c.result, c.error) for c in transcript or ()]
        self.taken = [False] * len(self.ledger)
        self.matches: dict[str, list[dict]] = {}
        self.member_id: str | None = None
        self.first_name: str | None = None

    # the calls ---------------------------------------------------------------------------

    def call(self, tool: str, **args: Any) -> Any:
        for k, (name, given, result, error) in enumerate(self.ledger):
            if not self.taken[k] and name == tool and given == args:
                self.taken[k] = True
                if error is not None:
                    raise _Refused(str(error))
                return copy.deepcopy(result)
        try:
            return TOOLBOX[tool](**args)
        except (LookupError, ValueError) as e:
            raise _Refused(str(e)) from e

    def looks_again(self, what: str, one_in: int) -> bool:
        """Whether it reads more than it needs here: on the whole text, as a model's thoroughness varies."""
        return zlib.crc32(f"{what}#{self.text}".encode()) % one_in == 0

    def say(self, what: str, options: Sequence[str], **values: Any) -> str:
        """One of several phrasings, picked by the wording of the request (not its values)."""
        return options[zlib.crc32(f"{what}|{self.msg.shape}".encode()) % len(options)].format(**values)

    def account(self) -> dict | str:
        """The member the message is about (get_member), or what to answer instead."""
        ref = self.msg.ref
        if ref is None:
            if self.member_id is None:
                return self.say("who", ["Which member is this for? A name, email, card number or member ID will do.",
                                        "Could you tell me whose card this is on (name, email, card number or member ID)?"])
            mid = self.member_id
        elif ref[0] == "I":
            mid = ref[1]
        else:
            if ref[1] not in self.matches:
                self.matches[ref[1]] = self.call("find_member", query=ref[1])
            hits = self.matches[ref[1]]
            if not hits:
                return f"I couldn't find a member matching {ref[1]}."
            if len(hits) > 1:
                return self.say("twins", [
                    f"There are {len(hits)} members called {ref[1]} — could you give me a card number or member ID?",
                    f"I have {len(hits)} accounts under {ref[1]}; which one is it? A card number or member ID would help.",
                ])
            mid = hits[0]["member_id"]
        try:
            member = self.call("get_member", member_id=mid)
        except _Refused:
            return f"I couldn't find member {mid}."
        self.member_id = member["member_id"]
        self.first_name = self.first_name or member["first_name"]
        return member

    def voice(self, member: dict | None) -> dict[str, str]:
        return _voice(self.msg.first_person, member)

    def book(self, title: str) -> dict | str:
        """The book of that title (find_book, then get_book), or what to answer instead."""
        hits = self.call("find_book", title=title)
        exact = [h for h in hits if h["title"].casefold() == title.casefold()]
        pick = exact[0] if exact else hits[0] if len(hits) == 1 else None
        if pick is None:
            if hits:
                return f"Several books match \"{title}\": {', '.join(h['title'] for h in hits[:3])}. Which one did you mean?"
            return self.say("no book", [f"I couldn't find \"{title}\" in the catalogue — could you check the title?",
                                        f"Nothing in the catalogue is called \"{title}\", I'm afraid."])
        return self.call("get_book", book_id=pick["book_id"])

    @staticmethod
    def on_card(member: dict, title: str) -> dict | None:
        return next((x for x in member["loans"] if x["title"].casefold() == title.casefold()), None)

    # what the desk does ----------------------------------------------------------------

    def answer(self) -> str:
        parts = []
        for ask in self.msg.asks:
            if ask.intent in _NEEDS_A_BOOK and not ask.titles and ask.loan is None:
                parts.append("Which book do you mean? The title (or the loan number) is enough.")
                continue
            parts.append(getattr(self, _METHOD.get(ask.intent, ask.intent))(ask))
        if not parts and self.msg.cancelled:  # nothing left to do: it still looks the account up, to say whose it left alone
            member = self.account() if self.msg.ref is not None else None
            v = self.voice(member if isinstance(member, dict) else None)
            parts.append(self.say("nothing", ["No problem — I haven't changed anything on {your} account.",
                                              "OK, {your} account stays as it was."], **v))
        if not parts:
            parts.append("Sorry, I'm not sure what you'd like me to do: borrow, return, renew, reserve a book, or pay a fine?")
        text = " ".join(parts)
        if self.msg.greeting:
            hello = (self.say("hello", ["Hi {n}! ", "Hello {n}. ", "Good to see you, {n}. "], n=self.first_name)
                     if self.msg.first_person and self.first_name else "Hi! ")
            text = hello + text
        return text

    def lend(self, ask: _Ask) -> str:
        member = self.account()
        if isinstance(member, str):
            return member
        v = self.voice(member)
        out = list(member["loans"])
        said = []
        for title in ask.titles:
            book = self.book(title)
            said.append(book if isinstance(book, str) else self.lend_one(member, out, book, ask.hold_too, v))
        return " ".join(said)

    def lend_one(self, member: dict, out: list[dict], book: dict, hold_too: bool, v: dict[str, str]) -> str:
        t = book["title"]
        mine = next((x for x in out if x["book_id"] == book["book_id"]), None)
        if mine is not None:
            return self.say("lend.has", ["{You_have} \"{t}\" out already — it's due back on {due}.",
                                         "\"{t}\" is already on {your} card (due {due}), so there's nothing to check out."],
                            t=t, due=mine["due_on"], **v)
        if member["status"] == "suspended":
            return self.say("lend.suspended", [
                "I'm sorry, {your} account is suspended, so I can't lend \"{t}\" right now. Please talk to the circulation manager.",
                "{Your} membership is suspended; borrowing is blocked until it's reinstated, so \"{t}\" stays on the shelf.",
            ], t=t, **v)
        if member["status"] == "expired":
            return self.say("lend.expired", [
                "{Your} membership has expired — it needs renewing at the front desk before {you} can borrow \"{t}\".",
                "I can't check out \"{t}\": {your} membership has expired. Renewing it is free at the front desk.",
            ], t=t, **v)
        owed = _cents(member["fines"])
        if owed > FINE_LIMIT_CENTS:
            return self.say("lend.fines", [
                "{You_owe} {owed} in fines, and fines over {limit} must be paid before borrowing. "
                "Once {you} pay at least {short}, I can check out \"{t}\".",
                "I can't lend \"{t}\" yet: the balance is {owed}, and fines over {limit} must be paid before borrowing.",
                "Sorry — fines over {limit} must be paid before borrowing, and {your} balance is {owed}.",
            ], t=t, owed=_usd(owed), limit=_usd(FINE_LIMIT_CENTS), short=_usd(owed - FINE_LIMIT_CENTS), **v)
        if len(out) >= member["max_loans"]:
            return self.say("lend.full", [
                "{You_have} {n} out, the most a {tier} card allows, so \"{t}\" will have to wait until something comes back.",
                "A {tier} card can have {max} books out at once and {you_have} {n} — please return one first.",
            ], t=t, n=_books(len(out)), max=member["max_loans"], tier=member["tier"], **v)
        if book["copies_available"] <= 0:
            if any(h["book_id"] == book["book_id"] for h in member["holds"]):
                return self.say("lend.queued", ["No copy of \"{t}\" is in, and {you_are} already on the hold list for it.",
                                                "All copies of \"{t}\" are out; {your} hold on it is still in place."], t=t, **v)
            if hold_too:
                try:
                    hold = self.call("place_hold", member_id=member["member_id"], book_id=book["book_id"])
                except _Refused:
                    return f"No copy of \"{t}\" is in, and I couldn't place a hold on it."
                return self.say("lend.held", [
                    "No copy of \"{t}\" is in right now, so I've placed a hold: {you_are} number {pos} in the queue.",
                    "\"{t}\" is all out, so it's on hold for {you} instead (position {pos}).",
                ], t=t, pos=hold["position"], **v)
            n = book["copies_total"]
            gone = f"The only copy of \"{t}\" is" if n == 1 else f"All {n} copies of \"{t}\" are"
            return self.say("lend.none", [
                "{gone} out at the moment (the next is due back {next}). Would {you} like me to place a hold?",
                "\"{t}\" has no copy on the shelf right now; one is due back {next}. Shall I put a hold on it?",
            ], t=t, gone=gone, next=book["next_due"], **v)
        try:
            loan = self.call("lend_book", member_id=member["member_id"], book_id=book["book_id"])
        except _Refused:
            return f"The last copy of \"{t}\" has just gone, I'm afraid."
        out.append(loan)
        filled = any(h["book_id"] == book["book_id"] for h in member["holds"])
        said = self.say("lend.ok", [
            "Done — \"{t}\" is checked out to {you} and due back on {due}. {You_have} {n} out now.",
            "All set: \"{t}\" is {yours} until {due}. That makes {n} on {your} card.",
            "\"{t}\" is checked out, due {due} (loans run {days} days). {You_have} {n} out.",
        ], t=loan["title"], due=loan["due_on"], n=_books(len(out)), days=LOAN_DAYS, **v)
        return said + (" That also fills {your} hold on it.".format(**v) if filled else "")

    def _loan_by_id(self, loan_id: str) -> dict | str:
        try:
            loan = self.call("get_loan", loan_id=loan_id)
        except _Refused:
            return f"I couldn't find loan {loan_id}."
        self.member_id = self.member_id or loan["member_id"]
        return loan

    def return_(self, ask: _Ask) -> str:
        if ask.loan is not None:
            loan = self._loan_by_id(ask.loan)
            if isinstance(loan, str):
                return loan
            v = self.voice(None)
            if loan["returned_on"] is not None:
                return self.say("return.done", [
                    "Loan {id} (\"{t}\") was already checked in on {on}; there's nothing more to do.",
                    "That one's already back: \"{t}\" was returned on {on}.",
                ], id=loan["loan_id"], t=loan["title"], on=loan["returned_on"])
            targets = [loan]
        else:
            member = self.account()
            if isinstance(member, str):
                return member
            v = self.voice(member)
            targets = []
            for title in ask.titles:
                loan = self.on_card(member, title)
                if loan is None:
                    return self.say("return.none", [
                        "I don't see \"{t}\" among {your} loans — it may already have been checked in.",
                        "\"{t}\" isn't out on {your} card, so there's nothing to check in.",
                    ], t=title, **v)
                targets.append(loan)
        said = []
        for loan in targets:
            back = self.call("return_book", loan_id=loan["loan_id"])
            if self.looks_again("return.shelf", 3):
                self.call("get_book", book_id=back["book_id"])
            fee = _cents(back["late_fee"])
            if fee:
                said.append(self.say("return.late", [
                    "\"{t}\" is checked in. It came back {d} late, so there's a late fee of {fee}; {your} balance is now {bal}.",
                    "Checked in \"{t}\" — {d} overdue, which adds a {fee} late fee (balance: {bal}).",
                ], t=back["title"], d="1 day" if back["days_late"] == 1 else f"{back['days_late']} days", fee=_usd(fee),
                    bal=_usd(_cents(back["fines"])), **v))
            else:
                said.append(self.say("return.ok", ["Thanks — \"{t}\" is checked in, on time, so no late fee.",
                                                   "\"{t}\" is back on the shelf. It was on time: nothing to pay."], t=back["title"]))
        return " ".join(said)

    def renew(self, ask: _Ask) -> str:
        if ask.loan is not None:
            loan = self._loan_by_id(ask.loan)
            if isinstance(loan, str):
                return loan
            v = self.voice(None)
            if loan["returned_on"] is not None:
                return f"Loan {loan['loan_id']} (\"{loan['title']}\") was returned on {loan['returned_on']}, so there's nothing to renew."
            loans = [loan]
        else:
            member = self.account()
            if isinstance(member, str):
                return member
            v = self.voice(member)
            loans = []
            for title in ask.titles:
                loan = self.on_card(member, title)
                if loan is None:
                    return self.say("renew.none", ["I don't see \"{t}\" on {your} card, so there's nothing to renew.",
                                                   "\"{t}\" isn't out to {you} at the moment."], t=title, **v)
                loans.append(loan)
        said = []
        for loan in loans:
            book = self.call("get_book", book_id=loan["book_id"])
            t = loan["title"]
            if loan["renewals"] >= MAX_RENEWALS:
                said.append(self.say("renew.max", [
                    "\"{t}\" has already been renewed {max} times, which is the limit, so it's still due on {due}.",
                    "Sorry, a loan can be renewed only {max} times and \"{t}\" has been; it's due back {due}.",
                ], t=t, max=MAX_RENEWALS, due=loan["due_on"]))
            elif book["holds"] > 0:
                said.append(self.say("renew.held", [
                    "I can't renew \"{t}\": another member has placed a hold on it. It's due back on {due}.",
                    "\"{t}\" can't be renewed because someone is waiting for it — please bring it back by {due}.",
                ], t=t, due=loan["due_on"]))
            else:
                new = self.call("renew_loan", loan_id=loan["loan_id"])
                left = MAX_RENEWALS - new["renewals"]
                said.append(self.say("renew.ok", [
                    "Renewed: \"{t}\" is now due {due}. That's renewal {n} of {max}.",
                    "Done — {you} can keep \"{t}\" until {due} ({left} left).",
                ], t=new["title"], due=new["due_on"], n=new["renewals"], max=MAX_RENEWALS,
                    left="no renewals" if left == 0 else "1 renewal" if left == 1 else f"{left} renewals", **v))
        return " ".join(said)

    def pay(self, ask: _Ask) -> str:
        member = self.account()
        if isinstance(member, str):
            return member
        v = self.voice(member)
        owed = _cents(member["fines"])
        if owed == 0:
            return self.say("pay.nothing", ["There's nothing to pay — {your} balance is $0.00.",
                                            "{You_owe} nothing at the moment, so no payment is needed."], **v)
        want = owed if ask.amount_cents is None else ask.amount_cents
        note = ""
        if want > owed:
            note = f"{v['You_owe']} only {_usd(owed)}, so I took {_usd(owed)} rather than {_usd(want)}. "
            want = owed
        paid = self.call("pay_fine", member_id=member["member_id"], amount=round(want / 100, 2))
        if self.looks_again("pay.recheck", 2):
            self.call("get_member", member_id=member["member_id"])
        left = _cents(paid["fines"])
        said = note + self.say("pay.ok", ["Thanks, {paid} received. The remaining balance is {left}.",
                                          "Payment of {paid} recorded — {you_owe} {left} now."],
                               paid=_usd(_cents(paid["paid"])), left=_usd(left), **v)
        if left == 0:
            said += " The account is all clear."
        elif owed > FINE_LIMIT_CENTS >= left:
            said += f" That's no longer over the {_usd(FINE_LIMIT_CENTS)} limit, so {v['you']} can borrow again."
        elif left > FINE_LIMIT_CENTS:
            said += f" Fines over {_usd(FINE_LIMIT_CENTS)} still have to be paid before borrowing."
        return said

    def hold(self, ask: _Ask) -> str:
        member = self.account()
        if isinstance(member, str):
            return member
        v = self.voice(member)
        said = []
        for title in ask.titles:
            book = self.book(title)
            if isinstance(book, str):
                said.append(book)
                continue
            t = book["title"]
            mine = next((x for x in member["loans"] if x["book_id"] == book["book_id"]), None)
            if member["status"] != "active":
                said.append(self.say("hold.status", ["Holds need an active membership, and {your} account is {status}.",
                                                     "I can't reserve \"{t}\": {your} membership is {status}."],
                                     t=t, status=member["status"], **v))
            elif mine is not None:
                said.append(f"{v['You_have']} \"{t}\" out already (due {mine['due_on']}), so there's no need for a hold.")
            elif any(h["book_id"] == book["book_id"] for h in member["holds"]):
                said.append(self.say("hold.again", ["{You_are} already on the hold list for \"{t}\".",
                                                    "There's already a hold on \"{t}\" for {you}."], t=t, **v))
            elif book["copies_available"] > 0:
                said.append(self.say("hold.shelf", [
                    "There's a copy of \"{t}\" on the shelf right now ({n} of {total} in), so no hold is needed — "
                    "shall I check it out instead?",
                    "No hold needed: \"{t}\" has {n} of its {total} on the shelf at the moment.",
                ], t=t, n=book["copies_available"], total=book["copies_total"]))
            else:
                hold = self.call("place_hold", member_id=member["member_id"], book_id=book["book_id"])
                said.append(self.say("hold.ok", ["Hold placed on \"{t}\" — {you_are} number {pos} in line.",
                                                 "Done: \"{t}\" is reserved for {you}; {pos} in the queue so far."],
                                     t=t, pos=hold["position"], **v))
        return " ".join(said)

    def loans(self, ask: _Ask) -> str:
        member = self.account()
        if isinstance(member, str):
            return member
        v = self.voice(member)
        out = member["loans"]
        if self.looks_again("loans.books", 4):
            for loan in out:
                self.call("get_book", book_id=loan["book_id"])
        if not out:
            said = self.say("loans.none", ["{You_have} nothing checked out right now.", "Nothing is out on {your} card at the moment."], **v)
        else:
            items = "; ".join(f"\"{x['title']}\" (due {x['due_on']}{', overdue' if x['overdue'] else ''})" for x in out)
            said = self.say("loans.list", ["{You_have} {n} out: {items}.", "Here's what's on {your} card ({n}): {items}."],
                            n=_books(len(out)), items=items, **v)
        owed = _cents(member["fines"])
        if owed:
            said += f" {v['Your']} fines come to {_usd(owed)}."
            if owed > FINE_LIMIT_CENTS:
                said += f" Fines over {_usd(FINE_LIMIT_CENTS)} must be paid before borrowing again."
        return said

    def due(self, ask: _Ask) -> str:
        if ask.loan is not None:
            loan = self._loan_by_id(ask.loan)
            if isinstance(loan, str):
                return loan
            return f"\"{loan['title']}\" is due back on {loan['due_on']}."
        member = self.account()
        if isinstance(member, str):
            return member
        v = self.voice(member)
        said = []
        for title in ask.titles:
            loan = self.on_card(member, title)
            if loan is None:
                said.append(self.say("due.none", ["\"{t}\" isn't out on {your} card.", "I don't see \"{t}\" among {your} loans."], t=title, **v))
                continue
            said.append(self.say("due.ok", ["\"{t}\" is due back on {due}.", "{Your} copy of \"{t}\" is due {due}."],
                                 t=loan["title"], due=loan["due_on"], **v)
                        + (" That's already past, so late fees are adding up." if loan["overdue"] else ""))
        return " ".join(said)

    def availability(self, ask: _Ask) -> str:
        said = []
        for title in ask.titles:
            book = self.book(title)
            if isinstance(book, str):
                said.append(book)
            elif book["copies_available"] > 0:
                said.append(self.say("shelf.in", ["Yes — {n} of {total} copies of \"{t}\" {are} on the shelf.",
                                                  "Good news: \"{t}\" is in ({n} of {total} available)."],
                                     t=book["title"], n=book["copies_available"], total=book["copies_total"],
                                     are="is" if book["copies_available"] == 1 else "are"))
            else:
                waiting = book["holds"]
                said.append(self.say("shelf.out", [
                    "Not right now: every copy of \"{t}\" is out; the next one is due back {next}.",
                    "\"{t}\" is all out at the moment (next due {next}).",
                ], t=book["title"], next=book["next_due"])
                    + (f" {waiting} {'member is' if waiting == 1 else 'members are'} waiting for it." if waiting else ""))
        return " ".join(said)

    def balance(self, ask: _Ask) -> str:
        member = self.account()
        if isinstance(member, str):
            return member
        v = self.voice(member)
        owed = _cents(member["fines"])
        if owed == 0:
            return self.say("balance.zero", ["{You_owe} nothing — the balance is $0.00.", "{Your} balance is clear: $0.00."], **v)
        said = self.say("balance", ["{Your} balance is {owed}.", "{You_owe} {owed} in fines."], owed=_usd(owed), **v)
        if owed > FINE_LIMIT_CENTS:
            said += f" Fines over {_usd(FINE_LIMIT_CENTS)} must be paid before borrowing."
        return said


def agent(task: str, transcript: Sequence[Any] | None = None) -> str:
    """Serve one message at the loans desk; continue from ``transcript`` (calls already made) if given."""
    visit = _Visit(task, transcript)
    return visit.answer()


# -- the task stream -------------------------------------------------------------------------------

PHRASINGS: dict[str, list[str]] = {
    "lend": [
        "Hi, this is {name}. I'd like to borrow \"{title}\", please.",
        "Can you check out \"{title}\" for member {mid}?",
        "Lend \"{title}\" to {name}.",
        "Hello! Card {card} here — could I take out {title} today?",
        "Email {email}: please check out '{title}' for me.",
        "{mid} would like to borrow {title} please.",
    ],
    "lend_or_hold": [
        "This is {name} — can I borrow \"{title}\"? If it's out, put a hold on it for me.",
        "Check out '{title}' for {mid}, or place a hold if no copy is in.",
    ],
    "return": [
        "Hi, {name} here, returning \"{title}\".",
        "Return loan {loan} please.",
        "I'm dropping off {title} — card {card}.",
        "{mid} is returning '{title}'.",
        "Please check in loan {loan}, thanks!",
    ],
    "renew": [
        "Could you renew \"{title}\" for me? This is {name}.",
        "Renew loan {loan}.",
        "Hi, it's {name} — can I renew {title}?",
        "Please renew '{title}' on card {card}.",
        "Can member {mid} extend \"{title}\"?",
    ],
    "pay_fine": [
        "Hi, this is {name}. I'd like to pay ${amount} toward my fines.",
        "{mid} wants to pay ${amount}.",
        "Pay off the whole balance for {email}, please.",
        "Can I settle my fines? Card {card}.",
        "I'm {name} and I'd like to pay ${amount}.",
    ],
    "hold": [
        "Please put a hold on \"{title}\" for {name}.",
        "This is {name}, can you reserve '{title}' for me?",
        "Place a hold on {title} for member {mid}.",
    ],
    "loans": [
        "Hi, this is {name} — what do I have out right now?",
        "What books does {mid} have checked out, and when are they due?",
        "When are my books due? My card is {card}.",
        "Can you list the loans on {email}?",
    ],
    "due": [
        "When is \"{title}\" due back? This is {name}.",
        "{mid}: when is '{title}' due?",
    ],
    "availability": [
        "Do you have a copy of \"{title}\" in?",
        "Is '{title}' available to borrow?",
        "Any copies of {title} on the shelf?",
    ],
    "balance": [
        "How much do I owe? This is {name}.",
        "What's the fine balance for {mid}?",
    ],
    "two_requests": [
        "Hi, this is {name}. Please return \"{title}\" and renew \"{title2}\".",
        "I'd like to pay ${amount} and then borrow \"{title}\" — member {mid}.",
        "This is {name}: return '{title}', and also check out '{title2}'.",
        "Renew loan {loan}, then tell me what I have out.",
        "{mid} wants to borrow \"{title}\" and \"{title2}\".",
    ],
    "changed_mind": [
        "Please renew \"{title}\" for {name}. Actually, don't renew it — just tell me when it's due.",
        "This is {name}, I want to borrow '{title}'. On second thought, never mind — just tell me what I have out.",
        "Return loan {loan}. Wait, no — don't return it, renew it instead.",
        "Lend '{title}' to {mid}. Actually, scratch that, don't do anything.",
    ],
}
_SINGLES = [(kind, i) for kind, ps in PHRASINGS.items() for i in range(len(ps))]
_UNDER_LIMIT = [0, 0, 200, 475, 999, 150, 625, 320]  # fines (cents) of a member an ordinary lend meets

# day 1, besides every phrasing once: (kind, phrasing, branch, fines)
_DAY_ONE_MORE: list[tuple[str, int, str, int | None]] = [
    ("lend", 0, "normal", 475), ("lend", 0, "normal", 999),  # phrasing 0 also met at $2.00: three lends under the limit
    ("lend", 1, "coinciding", None), ("lend", 2, "expired", None), ("return", 1, "late", None), ("return", 2, "late", None),
    ("availability", 1, "none_in", None), ("pay_fine", 3, "nothing", None), ("hold", 2, "on_shelf", None),
    ("loans", 2, "none", None), ("renew", 4, "maxed", None), ("lend_or_hold", 1, "no_copy", None),
]
# later days, the tasks meant to tempt a wrong replay: (kind, phrasing, branch, fines, why)
_TEMPTING: list[tuple[str, int, str, int | None, str]] = [
    ("lend", 0, "normal", 1001, "fines $10.01, just over the limit, after lends at $2.00, $4.75 and $9.99"),
    ("lend", 0, "normal", 1425, "fines $14.25 after lends at $2.00, $4.75 and $9.99"),
    ("lend", 2, "normal", 1425, "fines $14.25: over the limit"),
    ("lend", 1, "normal", 1000, "fines exactly $10.00: not over the limit, so the lend goes ahead"),
    ("lend", 3, "suspended", None, "a suspended member"),
    ("lend", 4, "expired", None, "an expired membership"),
    ("lend", 5, "at_max", None, "already at the tier's most loans"),
    ("lend", 1, "no_copy", None, "no copy left on the shelf"),
    ("lend", 2, "has_it", None, "the member already has this book out"),
    ("lend", 0, "coinciding", None, "an existing loan is due the very day the new one will be"),
    ("lend", 4, "coinciding", None, "an existing loan is due the very day the new one will be"),
    ("lend", 0, "ambiguous", None, "two members share the name"),
    ("lend_or_hold", 0, "no_copy", None, "no copy in: a hold, not a loan"),
    ("lend_or_hold", 1, "already_held", None, "no copy in, and the member already holds it"),
    ("renew", 0, "on_hold", None, "another member has the book on hold"),
    ("renew", 1, "on_hold", None, "another member has the book on hold"),
    ("renew", 2, "maxed", None, "renewed twice already"),
    ("return", 1, "already_returned", None, "the loan was already checked in"),
    ("return", 4, "already_returned", None, "the loan was already checked in"),
    ("return", 0, "late", None, "returned late: a fee to quote"),
    ("return", 3, "late", None, "returned late: a fee to quote"),
    ("pay_fine", 0, "overpay", None, "offers more than the member owes"),
    ("pay_fine", 2, "nothing", None, "nothing owed"),
    ("pay_fine", 4, "unblocks", None, "the payment brings the fines under the limit"),
    ("pay_fine", 1, "still_over", None, "the payment leaves the fines over the limit"),
    ("hold", 0, "on_shelf", None, "a copy is on the shelf: no hold"),
    ("hold", 2, "suspended", None, "a suspended member"),
    ("availability", 0, "none_in", None, "every copy is out"),
    ("loans", 0, "none", None, "nothing out"),
    ("balance", 0, "over", None, "fines over the limit: the answer says so"),
    ("two_requests", 1, "pay_unblocks", None, "the payment first brings the fines under the limit, then the lend goes ahead"),
    ("two_requests", 1, "pay_short", None, "the payment leaves the fines over the limit: no lend"),
    ("two_requests", 4, "one_slot", None, "room for one more book only"),
    ("two_requests", 0, "on_hold", None, "the second book, to renew, is on hold for someone else"),
]


def _q(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _amount(cents: int, rng: random.Random) -> str:
    if cents % 100 == 0:
        return rng.choice([str(cents // 100), f"{cents // 100}.00"])
    return f"{cents // 100}.{cents % 100:02d}"


class _Planner:
    """Writes the tasks: picks a member and books, renders a phrasing, and moves the world to the branch wanted."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        people, books = _catalogue()
        special = _SUSPENDED | _EXPIRED | {("Sam", "Lee")}
        ordinary = [p for p in people if (p.first, p.last) not in special]
        self.suspended = [p for p in people if (p.first, p.last) in _SUSPENDED]
        self.expired = [p for p in people if (p.first, p.last) in _EXPIRED]
        self.twins = [p for p in people if p.name == "Sam Lee"]
        self.others = ordinary[-8:]  # the other borrowers and holders: copies out, holds placed
        self.regular = ordinary[:-8]
        self.students = [p for p in self.regular if p.tier == "student"]
        self.roomy = [p for p in self.regular if p.max_loans >= 5]
        self.books = list(books)
        self.rng.shuffle(self.books)
        self.next_book = 0
        self.loan_no = 90001
        self.hold_no = 9001
        self.today = FIRST_DAY

    def day(self, d: int) -> None:
        self.today = FIRST_DAY + timedelta(days=d - 1)

    def on(self, offset: int) -> str:
        return _q((self.today + timedelta(days=offset)).isoformat())

    def book(self) -> _Title:
        b = self.books[self.next_book % len(self.books)]
        self.next_book += 1
        return b

    # how the world is moved: each statement holds whatever the world looks like by then ------

    @staticmethod
    def status(p: _Person, status: str = "active") -> str:
        return f"UPDATE members SET status = {_q(status)} WHERE member_id = {_q(p.member_id)}"

    @staticmethod
    def fines(p: _Person, cents: int) -> str:
        return f"UPDATE members SET fines_cents = {cents} WHERE member_id = {_q(p.member_id)}"

    def room(self, p: _Person, most: int) -> str:
        """Books the member brought back (to the drop box) until at most ``most`` are out."""
        m = _q(p.member_id)
        out = f"(SELECT COUNT(*) FROM loans WHERE member_id = {m} AND returned_on IS NULL)"
        return (f"UPDATE loans SET returned_on = {self.on(0)} WHERE loan_id IN (SELECT loan_id FROM loans WHERE member_id = {m} "
                f"AND returned_on IS NULL ORDER BY due_on, loan_id LIMIT max(0, {out} - {most}))")

    def not_out(self, p: _Person, b: _Title) -> str:
        return (f"UPDATE loans SET returned_on = {self.on(0)} WHERE member_id = {_q(p.member_id)} AND book_id = {_q(b.book_id)} "
                "AND returned_on IS NULL")

    def copy_in(self, b: _Title, p: _Person | None = None) -> str:
        """Someone else brings a copy back, if none is on the shelf."""
        book, m = _q(b.book_id), _q(p.member_id if p else "")
        out = f"(SELECT COUNT(*) FROM loans WHERE book_id = {book} AND returned_on IS NULL)"
        return (f"UPDATE loans SET returned_on = {self.on(0)} WHERE loan_id = (SELECT loan_id FROM loans WHERE book_id = {book} "
                f"AND returned_on IS NULL AND member_id <> {m} ORDER BY due_on, loan_id LIMIT 1) "
                f"AND (SELECT copies_total FROM books WHERE book_id = {book}) <= {out}")

    def exhaust(self, b: _Title, p: _Person | None = None) -> str:
        """Other members take out every copy left on the shelf."""
        book, m = _q(b.book_id), _q(p.member_id if p else "")
        base, self.loan_no = self.loan_no, self.loan_no + 10
        others = ", ".join(_q(o.member_id) for o in self.others)
        out = f"(SELECT COUNT(*) FROM loans WHERE book_id = {book} AND returned_on IS NULL)"
        lent = self.rng.randint(2, 18)
        return (f"INSERT INTO loans SELECT 'L-' || ({base} + ROW_NUMBER() OVER (ORDER BY member_id) - 1), member_id, {book}, "
                f"{self.on(-lent)}, {self.on(LOAN_DAYS - lent)}, 0, NULL FROM members WHERE member_id IN ({others}) "
                f"AND member_id <> {m} AND member_id NOT IN (SELECT member_id FROM loans WHERE book_id = {book} AND returned_on IS NULL) "
                f"ORDER BY member_id LIMIT max(0, (SELECT copies_total FROM books WHERE book_id = {book}) - {out})")

    def fill(self, p: _Person, keep: Sequence[_Title]) -> str:
        """The member takes out books until the card is full."""
        m = _q(p.member_id)
        base, self.loan_no = self.loan_no, self.loan_no + 10
        skip = ", ".join(_q(b.book_id) for b in keep)
        mine = f"(SELECT COUNT(*) FROM loans WHERE member_id = {m} AND returned_on IS NULL)"
        return (f"INSERT INTO loans SELECT 'L-' || ({base} + ROW_NUMBER() OVER (ORDER BY b.book_id) - 1), {m}, b.book_id, "
                f"{self.on(-6)}, {self.on(LOAN_DAYS - 6)}, 0, NULL FROM books b WHERE b.copies_total > (SELECT COUNT(*) FROM loans l "
                f"WHERE l.book_id = b.book_id AND l.returned_on IS NULL) AND b.book_id NOT IN (SELECT book_id FROM loans "
                f"WHERE member_id = {m} AND returned_on IS NULL) AND b.book_id NOT IN ({skip}) "
                f"ORDER BY b.book_id LIMIT max(0, {p.max_loans} - {mine})")

    def loan(self, p: _Person, b: _Title, due: int, renewals: int = 0, returned: int | None = None) -> tuple[str, list[str]]:
        """A loan of ``b`` on the member's card, due ``due`` days from today (back ``returned`` days ago, if given)."""
        loan_id = f"L-{self.loan_no}"
        self.loan_no += 1
        lent = due - LOAN_DAYS * (renewals + 1)
        sql = [] if returned is not None else [self.not_out(p, b), self.copy_in(b, p)]
        back = "NULL" if returned is None else self.on(-returned)
        sql.append(f"INSERT INTO loans VALUES ({_q(loan_id)}, {_q(p.member_id)}, {_q(b.book_id)}, {self.on(lent)}, {self.on(due)}, "
                   f"{renewals}, {back})")
        return loan_id, sql

    def hold(self, p: _Person, b: _Title) -> str:
        hold_id = f"H-{self.hold_no}"
        self.hold_no += 1
        return f"INSERT INTO holds VALUES ({_q(hold_id)}, {_q(p.member_id)}, {_q(b.book_id)}, {self.on(-1)}, 'active')"

    @staticmethod
    def no_holds(b: _Title) -> str:
        return f"UPDATE holds SET status = 'cancelled' WHERE book_id = {_q(b.book_id)} AND status = 'active'"

    @staticmethod
    def no_hold_of(p: _Person, b: _Title) -> str:
        return (f"UPDATE holds SET status = 'cancelled' WHERE member_id = {_q(p.member_id)} AND book_id = {_q(b.book_id)} "
                "AND status = 'active'")

    def ready(self, p: _Person, b: _Title, fines: int, most: int) -> list[str]:
        """An active member with these fines, at most ``most`` books out, not this one, and a copy on the shelf."""
        return [self.status(p), self.fines(p, fines), self.room(p, most), self.not_out(p, b), self.copy_in(b, p)]

    # one task --------------------------------------------------------------------------

    def member(self, branch: str) -> _Person:
        rng = self.rng
        if branch == "suspended":
            return rng.choice(self.suspended)
        if branch == "expired":
            return rng.choice(self.expired)
        if branch == "ambiguous":
            return self.twins[0]
        if branch in ("at_max", "one_slot"):
            return rng.choice(self.students)
        if branch == "longer":
            return rng.choice(self.roomy)
        return rng.choice(self.regular)

    def make(self, kind: str, i: int, branch: str = "normal", day: int = 1, fines: int | None = None,
             tempting: bool = False, why: str = "") -> Task:
        rng = self.rng
        phrasing = PHRASINGS[kind][i]
        p = self.member(branch)
        b, b2 = self.book(), self.book()
        v = {"name": p.name, "mid": p.member_id, "email": p.email, "card": p.card, "title": b.title, "title2": b2.title}
        sql: list[str] = []
        small = rng.choice(_UNDER_LIMIT) if fines is None else fines
        if kind == "lend":
            if branch in ("suspended", "expired"):
                sql = [*self.ready(p, b, rng.choice(_UNDER_LIMIT), p.max_loans - 1), self.status(p, branch)]
            elif branch == "at_max":
                sql = [self.status(p), self.fines(p, 0), self.not_out(p, b), self.copy_in(b, p), self.fill(p, [b])]
            elif branch == "no_copy":
                sql = [self.status(p), self.fines(p, small), self.room(p, p.max_loans - 1), self.not_out(p, b),
                       self.no_hold_of(p, b), self.exhaust(b, p)]
            elif branch == "has_it":
                sql = [self.status(p), self.fines(p, small), self.room(p, p.max_loans - 2)]
                sql += self.loan(p, b, rng.randint(3, 16))[1]
            elif branch == "coinciding":  # a loan renewed today is due when a loan made today will be
                sql = self.ready(p, b, small, p.max_loans - 2) + self.loan(p, b2, LOAN_DAYS, renewals=1)[1]
            elif branch == "ambiguous":
                sql = [self.status(t) for t in self.twins] + [self.fines(t, 0) for t in self.twins]
            else:
                sql = self.ready(p, b, small, p.max_loans - 1)
        elif kind == "lend_or_hold":
            if branch in ("no_copy", "already_held"):
                sql = [self.status(p), self.fines(p, small), self.room(p, p.max_loans - 1), self.not_out(p, b),
                       self.no_hold_of(p, b), self.exhaust(b, p)]
                if branch == "already_held":
                    sql.append(self.hold(p, b))
            else:
                sql = self.ready(p, b, small, p.max_loans - 1)
        elif kind == "return":
            if branch == "already_returned":
                v["loan"], rows = self.loan(p, b, -rng.randint(1, 6), returned=rng.randint(1, 3))
                sql = [self.status(p), self.not_out(p, b), *rows]
            else:
                due = -rng.randint(2, 30) if branch == "late" else rng.randint(2, 18)
                v["loan"], rows = self.loan(p, b, due)
                sql = [self.status(p), *rows]
        elif kind == "renew":
            renewals = MAX_RENEWALS if branch == "maxed" else rng.choice([0, 0, 1])
            v["loan"], rows = self.loan(p, b, rng.randint(2, 14), renewals=renewals)
            sql = [self.status(p), *rows, self.no_holds(b)]
            if branch == "on_hold":
                sql.append(self.hold(rng.choice(self.others), b))
        elif kind == "pay_fine":
            owed = rng.choice([450, 600, 320, 875, 780])
            owed, pay = {"overpay": (475, 1000), "nothing": (0, 500), "unblocks": (1425, 500), "still_over": (3150, 1000)}.get(
                branch, (owed, rng.choice([c for c in (100, 200, 250, 300, 475) if c < owed])))
            v["amount"] = _amount(pay, rng)
            sql = [self.status(p), self.fines(p, owed)]
        elif kind == "hold":
            if branch == "suspended":
                sql = [self.status(p, "suspended"), self.not_out(p, b), self.no_hold_of(p, b), self.exhaust(b, p)]
            elif branch == "on_shelf":
                sql = [self.status(p), self.not_out(p, b), self.no_hold_of(p, b), self.copy_in(b, p)]
            else:
                sql = [self.status(p), self.not_out(p, b), self.no_hold_of(p, b), self.exhaust(b, p)]
                if branch == "already_held":
                    sql.append(self.hold(p, b))
        elif kind == "loans":
            sql = [self.status(p), self.room(p, 0 if branch == "none" else 1 if branch == "longer" else 2)]
            for extra in ((b, b2, self.book()) if branch == "longer" else (b,) if branch == "normal" else ()):
                sql += self.loan(p, extra, rng.randint(-3, 18))[1]
        elif kind == "due":
            sql = [self.status(p)] + ([self.not_out(p, b)] if branch == "not_out" else self.loan(p, b, rng.randint(-2, 18))[1])
        elif kind == "availability":
            sql = [self.exhaust(b) if branch == "none_in" else self.copy_in(b)]
        elif kind == "balance":
            sql = [self.status(p), self.fines(p, rng.choice([1425, 3150, 1280]) if branch == "over" else rng.choice([0, 200, 475, 999]))]
        elif kind == "two_requests":
            if i == 0:  # return one, renew another
                sql = [self.status(p), *self.loan(p, b, rng.randint(-4, 12))[1], *self.loan(p, b2, rng.randint(2, 12))[1],
                       self.no_holds(b2)]
                if branch == "on_hold":
                    sql.append(self.hold(rng.choice(self.others), b2))
            elif i == 1:  # pay, then borrow
                owed, pay = {"pay_unblocks": (1425, 500), "pay_short": (3150, 1000)}.get(branch, (600, 200))
                v["amount"] = _amount(pay, rng)
                sql = self.ready(p, b, owed, p.max_loans - 1)
            elif i == 2:  # return one, borrow another
                sql = self.ready(p, b2, small, p.max_loans - 2) + self.loan(p, b, rng.randint(-5, 15))[1]
            elif i == 3:  # renew by loan id, then list the loans
                v["loan"], rows = self.loan(p, b, rng.randint(2, 12))
                sql = [self.status(p), *rows, self.no_holds(b)]
            else:  # two books at once
                if branch == "one_slot":
                    sql = [self.status(p), self.fines(p, 0), self.not_out(p, b), self.not_out(p, b2), self.copy_in(b, p),
                           self.copy_in(b2, p), self.fill(p, [b, b2]), self.room(p, p.max_loans - 1)]
                else:
                    sql = self.ready(p, b, small, p.max_loans - 2) + [self.not_out(p, b2), self.copy_in(b2, p)]
        elif kind == "changed_mind":
            if i in (0, 2):
                v["loan"], rows = self.loan(p, b, rng.randint(2, 14))
                sql = [self.status(p), *rows, self.no_holds(b)]
            else:
                sql = [self.status(p)]
        return Task(phrasing.format(**v), tuple(sql), tempting, kind, day, why)


def tasks(days: int = 2, seed: int = 1871) -> list[Task]:
    """``days`` days of requests at the loans desk, deterministic for a seed; the first days the same whatever ``days``.

    Day 1 is every phrasing once, some twice, and a few worlds off the common case (72 requests); each
    later day is every phrasing again with other values and the tempting tasks (80 requests). The first
    task of each later day also moves the desk's date on a day."""
    plan = _Planner(seed)
    out: list[Task] = []
    for d in range(1, days + 1):
        plan.day(d)
        if d == 1:
            today = [plan.make(k, i, day=1, fines=200 if (k, i) == ("lend", 0) else None) for k, i in _SINGLES]
            today += [plan.make(k, i, b, day=1, fines=f) for k, i, b, f in _DAY_ONE_MORE]
            today += [plan.make(k, i, day=1) for k, i in plan.rng.sample([s for s in _SINGLES if s != ("lend", 0)], 14)]
        else:
            today = [plan.make(k, i, day=d) for k, i in _SINGLES]
            today += [plan.make(k, i, b, day=d, fines=f, tempting=True, why=w) for k, i, b, f, w in _TEMPTING]
        plan.rng.shuffle(today)
        if d > 1:
            move = f"UPDATE desk SET value = {_q(plan.today.isoformat())} WHERE key = 'today'"
            today[0] = dataclasses.replace(today[0], setup_sql=(move, *today[0].setup_sql))
        out += today
    return out
