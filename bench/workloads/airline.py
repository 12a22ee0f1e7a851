"""An airline customer-service desk on the public tau-bench airline database, and what customers type at it.

The world is a subset of tau-bench's airline database (146 users, their 689 reservations and the
flights those reservations take, on the dates they take them; vendored in ``bench/data/tau-airline``,
MIT) loaded into one SQLite file (``make_world(path)``). The tools are plain top-level functions
written from the dataset's description of them: reads (a user's or a reservation's details, a
flight's status on a date) and writes (cancel a reservation, add checked bags, change passengers,
change the cabin, send a compensation certificate). A write the state does not allow (a reservation
already cancelled or under way, a payment method that is not the customer's or a certificate, a
gift card short of the amount, a changed passenger count, a cabin without seats) is refused with an
error and changes nothing; every write that goes through leaves a row in ``actions``.

``agent`` stands in for a careful model following the airline's policy. "Now" is fixed at
2024-05-15 15:00 EST, as in tau-bench.

- **Identity.** The customer gives their user id (``mia_li_3668``, in any case, with ``_`` or ``-``).
  Without it nothing about a reservation is read or changed; a flight's status is public and needs
  no id. A reservation must be the customer's (its ``user_id``), or the agent will not discuss it.
- **A reservation under way** (one of its flights has landed or is flying) can't be cancelled or
  changed in any way (bags, passengers, cabin). A cancelled reservation can't be changed either.
- **Cancelling** needs a reason (a change of plans, health, weather, a flight the airline cancelled;
  asked for if none is given). It is allowed, with a full refund to the original payment methods,
  only if the reservation was booked within the last 24 hours, or the airline cancelled one of its
  flights, or it is in business class, or it has travel insurance and the reason is health or
  weather. Otherwise it is refused, saying why.
- **Checked bags** can be added, never removed. Each passenger travels with free bags by the booking
  user's membership and the cabin (regular 0/1/2, silver 1/2/3, gold 2/3/3 for basic economy /
  economy / business); each bag beyond the allowance costs $50, paid with a credit card or gift card
  of the customer's (travel certificates can't pay for bags or cabin changes; a gift card must cover
  the amount). If the bags cost and no payment method was named, the agent says the price and asks.
  "Only if they're free" is honoured.
- **Passengers** can be renamed or replaced (a replacement needs a date of birth), never added or
  removed: the count stays.
- **Cabin changes** (all flights of the reservation together) only while every flight is still open
  for booking and has seats for every passenger in the new cabin; the fare difference per passenger
  is charged to a card or gift card of the customer's ("only if it's under $X" is honoured).
- **Compensation** only when asked for, after checking the facts: for a flight of the reservation the
  airline cancelled, a $100 certificate per passenger; for a delayed one, $50 per passenger; and only
  to silver or gold members, business-class travellers or reservations with travel insurance.
- **Questions** (a flight's status, the status of a reservation's flights, what a reservation holds,
  its bags and allowance, the customer's reservations) are answered from what was read.

The answer is a sentence or two saying what was done, or why not, with the ids and values involved.
It reads generously: greetings, thanks and personas, user and reservation ids in any case, with ``#``
or after "confirmation code", flight numbers as ``HAT 123``, dates as "today", "May 17" or
"2024-05-17", two requests in one message, "don't ..., just ...", and a change of mind at the end.

``tasks()`` is two days (or more) of requests built from real users, reservations and flights. Day 2
mostly repeats day 1's phrasings with other values; the tasks flagged ``tempting`` repeat a phrasing
in a world where the right action differs, or carry more than the phrasing did.
"""

from __future__ import annotations

import copy
import json
import random
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from . import Task, difference, pristine

__all__ = [
    "READS", "TOOLBOX", "TOOLS", "agent", "cancel_reservation", "get_flight_status", "get_reservation_details",
    "get_user_details", "make_world", "send_certificate", "snapshot", "tasks", "update_reservation_baggages",
    "update_reservation_flights", "update_reservation_passengers", "use_world",
]

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "tau-airline"

TODAY = "2024-05-15"  # "now" is 2024-05-15 15:00 EST, as in tau-bench
NOW = f"{TODAY}T15:00:00"
BOOKED_SINCE = "2024-05-14T15:00:00"  # within the last 24 hours
BAG_FEE = 50
FREE_BAGS = {  # free checked bags per passenger, by the booking user's membership and the cabin
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 3},
}
CABINS = ("basic_economy", "economy", "business")
_DEPARTED = ("landed", "flying")

_db: sqlite3.Connection | None = None

_SCHEMA = """
CREATE TABLE users (
    user_id TEXT PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT NOT NULL, email TEXT NOT NULL, dob TEXT NOT NULL,
    membership TEXT NOT NULL, address TEXT NOT NULL
);
CREATE TABLE payment_methods (
    id TEXT PRIMARY KEY, user_id TEXT NOT NULL, pos INTEGER NOT NULL, source TEXT NOT NULL,
    brand TEXT, last_four TEXT, amount NUMERIC
);
CREATE TABLE saved_passengers (
    user_id TEXT NOT NULL, pos INTEGER NOT NULL, first_name TEXT NOT NULL, last_name TEXT NOT NULL, dob TEXT NOT NULL,
    PRIMARY KEY (user_id, pos)
);
CREATE TABLE user_reservations (user_id TEXT NOT NULL, pos INTEGER NOT NULL, reservation_id TEXT NOT NULL, PRIMARY KEY (user_id, pos));
CREATE TABLE reservations (
    reservation_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, origin TEXT NOT NULL, destination TEXT NOT NULL,
    flight_type TEXT NOT NULL, cabin TEXT NOT NULL, created_at TEXT NOT NULL, total_baggages INTEGER NOT NULL,
    nonfree_baggages INTEGER NOT NULL, insurance TEXT NOT NULL, status TEXT
);
CREATE TABLE reservation_flights (
    reservation_id TEXT NOT NULL, pos INTEGER NOT NULL, flight_number TEXT NOT NULL, date TEXT NOT NULL,
    origin TEXT NOT NULL, destination TEXT NOT NULL, price NUMERIC NOT NULL, PRIMARY KEY (reservation_id, pos)
);
CREATE TABLE passengers (
    reservation_id TEXT NOT NULL, pos INTEGER NOT NULL, first_name TEXT NOT NULL, last_name TEXT NOT NULL, dob TEXT NOT NULL,
    PRIMARY KEY (reservation_id, pos)
);
CREATE TABLE payments (
    reservation_id TEXT NOT NULL, pos INTEGER NOT NULL, payment_id TEXT NOT NULL, amount NUMERIC NOT NULL,
    PRIMARY KEY (reservation_id, pos)
);
CREATE TABLE flights (
    flight_number TEXT PRIMARY KEY, origin TEXT NOT NULL, destination TEXT NOT NULL,
    scheduled_departure_time_est TEXT NOT NULL, scheduled_arrival_time_est TEXT NOT NULL
);
CREATE TABLE flight_dates (
    flight_number TEXT NOT NULL, date TEXT NOT NULL, status TEXT NOT NULL, details TEXT NOT NULL,
    PRIMARY KEY (flight_number, date)
);
CREATE TABLE actions (id INTEGER PRIMARY KEY AUTOINCREMENT, tool TEXT NOT NULL, target TEXT NOT NULL, detail TEXT NOT NULL);
"""


@cache
def _data() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The vendored database (users, reservations, flights), read once; never mutated."""
    users, reservations, flights = (json.loads((DATA_DIR / f"{n}.json").read_text()) for n in ("users", "reservations", "flights"))
    return users, reservations, flights


# -- the world -------------------------------------------------------------------------


def make_world(path: str | Path) -> None:
    """Create a fresh airline world at ``path`` from the vendored tau-bench data (the file must not exist)."""
    users, reservations, flights = _data()
    conn = sqlite3.connect(str(path))
    conn.executescript(_SCHEMA)
    for uid, u in users.items():
        conn.execute("INSERT INTO users VALUES (?, ?, ?, ?, ?, ?, ?)", (
            uid, u["name"]["first_name"], u["name"]["last_name"], u["email"], u["dob"], u["membership"],
            json.dumps(u["address"])))
        for pos, pm in enumerate(u["payment_methods"].values()):
            conn.execute("INSERT INTO payment_methods VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (pm["id"], uid, pos, pm["source"], pm.get("brand"), pm.get("last_four"), pm.get("amount")))
        conn.executemany("INSERT INTO saved_passengers VALUES (?, ?, ?, ?, ?)",
                         [(uid, i, p["first_name"], p["last_name"], p["dob"]) for i, p in enumerate(u["saved_passengers"])])
        conn.executemany("INSERT INTO user_reservations VALUES (?, ?, ?)", [(uid, i, r) for i, r in enumerate(u["reservations"])])
    for rid, r in reservations.items():
        conn.execute("INSERT INTO reservations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (
            rid, r["user_id"], r["origin"], r["destination"], r["flight_type"], r["cabin"], r["created_at"],
            r["total_baggages"], r["nonfree_baggages"], r["insurance"], r.get("status")))
        conn.executemany("INSERT INTO reservation_flights VALUES (?, ?, ?, ?, ?, ?, ?)", [
            (rid, i, f["flight_number"], f["date"], f["origin"], f["destination"], f["price"]) for i, f in enumerate(r["flights"])])
        conn.executemany("INSERT INTO passengers VALUES (?, ?, ?, ?, ?)",
                         [(rid, i, p["first_name"], p["last_name"], p["dob"]) for i, p in enumerate(r["passengers"])])
        conn.executemany("INSERT INTO payments VALUES (?, ?, ?, ?)",
                         [(rid, i, p["payment_id"], p["amount"]) for i, p in enumerate(r["payment_history"])])
    for fn, f in flights.items():
        conn.execute("INSERT INTO flights VALUES (?, ?, ?, ?, ?)", (
            fn, f["origin"], f["destination"], f["scheduled_departure_time_est"], f["scheduled_arrival_time_est"]))
        conn.executemany("INSERT INTO flight_dates VALUES (?, ?, ?, ?)", [
            (fn, d, e["status"], json.dumps({k: v for k, v in e.items() if k != "status"}, sort_keys=True))
            for d, e in f["dates"].items()])
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
    """The world's state as its difference from the vendored database, table by table, sorted.

    ``table`` lists the rows the world has that a fresh world lacks, ``table (removed)`` the rows
    of a fresh world it lacks: two worlds in the same state give equal snapshots, and the snapshot
    stays small.
    """
    return difference(path, _pristine())


@cache
def _pristine() -> dict[str, frozenset[tuple[Any, ...]]]:
    """Every table's rows in a fresh world."""
    return pristine(make_world)


def _conn() -> sqlite3.Connection:
    if _db is None:
        raise RuntimeError("no airline world in use: call use_world(path) first")
    return _db


def _log(tool: str, target: str, detail: Any) -> None:
    _conn().execute("INSERT INTO actions (tool, target, detail) VALUES (?, ?, ?)", (tool, target, json.dumps(detail, sort_keys=True)))


def _num(x: Any) -> Any:
    """A stored amount as tau-bench writes it: an int when whole."""
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x


def _user(user_id: str) -> dict[str, Any]:
    conn = _conn()
    row = conn.execute("SELECT * FROM users WHERE user_id = ?", (user_id,)).fetchone()
    if row is None:
        raise LookupError(f"user not found: {user_id!r}")
    methods: dict[str, dict[str, Any]] = {}
    for pm in conn.execute("SELECT * FROM payment_methods WHERE user_id = ? ORDER BY pos", (user_id,)):
        m: dict[str, Any] = {"source": pm["source"]}
        if pm["source"] == "credit_card":
            m |= {"brand": pm["brand"], "last_four": pm["last_four"]}
        else:
            m["amount"] = _num(pm["amount"])
        m["id"] = pm["id"]
        methods[pm["id"]] = m
    return {
        "user_id": user_id,
        "name": {"first_name": row["first_name"], "last_name": row["last_name"]},
        "address": json.loads(row["address"]),
        "email": row["email"],
        "dob": row["dob"],
        "payment_methods": methods,
        "saved_passengers": [
            {"first_name": p["first_name"], "last_name": p["last_name"], "dob": p["dob"]}
            for p in conn.execute("SELECT * FROM saved_passengers WHERE user_id = ? ORDER BY pos", (user_id,))],
        "membership": row["membership"],
        "reservations": [r[0] for r in conn.execute("SELECT reservation_id FROM user_reservations WHERE user_id = ? ORDER BY pos", (user_id,))],
    }


def _reservation(reservation_id: str) -> dict[str, Any]:
    conn = _conn()
    row = conn.execute("SELECT * FROM reservations WHERE reservation_id = ?", (reservation_id,)).fetchone()
    if row is None:
        raise LookupError(f"reservation not found: {reservation_id!r}")
    res: dict[str, Any] = {
        "reservation_id": row["reservation_id"],
        "user_id": row["user_id"],
        "origin": row["origin"],
        "destination": row["destination"],
        "flight_type": row["flight_type"],
        "cabin": row["cabin"],
        "flights": [
            {"origin": f["origin"], "destination": f["destination"], "flight_number": f["flight_number"], "date": f["date"],
             "price": _num(f["price"])}
            for f in conn.execute("SELECT * FROM reservation_flights WHERE reservation_id = ? ORDER BY pos", (reservation_id,))],
        "passengers": [
            {"first_name": p["first_name"], "last_name": p["last_name"], "dob": p["dob"]}
            for p in conn.execute("SELECT * FROM passengers WHERE reservation_id = ? ORDER BY pos", (reservation_id,))],
        "payment_history": [
            {"payment_id": p["payment_id"], "amount": _num(p["amount"])}
            for p in conn.execute("SELECT * FROM payments WHERE reservation_id = ? ORDER BY pos", (reservation_id,))],
        "created_at": row["created_at"],
        "total_baggages": row["total_baggages"],
        "nonfree_baggages": row["nonfree_baggages"],
        "insurance": row["insurance"],
    }
    if row["status"] is not None:  # as tau-bench's reservations carry it: only once set
        res["status"] = row["status"]
    return res


def _flight_day(flight_number: str, date: str) -> dict[str, Any]:
    conn = _conn()
    f = conn.execute("SELECT * FROM flights WHERE flight_number = ?", (flight_number,)).fetchone()
    if f is None:
        raise LookupError(f"flight not found: {flight_number!r}")
    d = conn.execute("SELECT * FROM flight_dates WHERE flight_number = ? AND date = ?", (flight_number, date)).fetchone()
    if d is None:
        raise LookupError(f"flight {flight_number} does not operate on {date}")
    return {"flight_number": flight_number, "date": date, "origin": f["origin"], "destination": f["destination"],
            "scheduled_departure_time_est": f["scheduled_departure_time_est"],
            "scheduled_arrival_time_est": f["scheduled_arrival_time_est"],
            "status": d["status"], **json.loads(d["details"])}


def _open(res: dict[str, Any]) -> None:
    """Refuse a write to a cancelled reservation, or to one with a flight that has departed."""
    if res.get("status") == "cancelled":
        raise ValueError(f"reservation {res['reservation_id']} is cancelled")
    for f in res["flights"]:
        if _flight_day(f["flight_number"], f["date"])["status"] in _DEPARTED:
            raise ValueError(f"flight {f['flight_number']} on {f['date']} has already departed")


def _charge(user_id: str, payment_id: str, amount: float) -> None:
    """Check that ``payment_id`` can pay ``amount`` for the user (a card, or a gift card that covers it); debit a gift card."""
    conn = _conn()
    pm = conn.execute("SELECT * FROM payment_methods WHERE id = ? AND user_id = ?", (payment_id, user_id)).fetchone()
    if pm is None:
        raise ValueError(f"payment method not found: {payment_id!r}")
    if pm["source"] == "certificate":
        raise ValueError("a certificate cannot be used to pay for a change to a reservation")
    if pm["source"] == "gift_card":
        if pm["amount"] < amount:
            raise ValueError("insufficient gift card balance")
        conn.execute("UPDATE payment_methods SET amount = ? WHERE id = ?", (round(pm["amount"] - amount, 2), payment_id))


def _add_payment(reservation_id: str, payment_id: str, amount: float) -> None:
    conn = _conn()
    pos = conn.execute("SELECT COUNT(*) FROM payments WHERE reservation_id = ?", (reservation_id,)).fetchone()[0]
    conn.execute("INSERT INTO payments VALUES (?, ?, ?, ?)", (reservation_id, pos, payment_id, _num(round(amount, 2))))


# -- tools: reads ----------------------------------------------------------------------


def get_user_details(user_id: str) -> dict:
    """A user's profile.

    Args:
        user_id: e.g. "mia_li_3668".

    Returns:
        user_id, name (first_name, last_name), address, email, dob, payment_methods (by id: source
        "credit_card" with brand and last_four, "gift_card" or "certificate" with amount),
        saved_passengers, membership ("regular", "silver" or "gold") and reservations (ids).

    Raises:
        LookupError: no such user.
    """
    return _user(user_id)


def get_reservation_details(reservation_id: str) -> dict:
    """A reservation's details.

    Args:
        reservation_id: six characters, e.g. "ZFA04Y".

    Returns:
        reservation_id, user_id, origin, destination, flight_type ("one_way" or "round_trip"), cabin
        ("basic_economy", "economy" or "business"), flights (origin, destination, flight_number, date,
        price per passenger), passengers (first_name, last_name, dob), payment_history (payment_id,
        amount; refunds are negative), created_at, total_baggages, nonfree_baggages, insurance
        ("yes"/"no"), and "status": "cancelled" once cancelled.

    Raises:
        LookupError: no such reservation.
    """
    return _reservation(reservation_id)


def get_flight_status(flight_number: str, date: str) -> dict:
    """A flight's status on a date.

    Args:
        flight_number: e.g. "HAT001".
        date: "YYYY-MM-DD".

    Returns:
        flight_number, date, origin, destination, scheduled departure and arrival times (EST), and
        status: "landed" (with actual times), "flying" (actual departure, estimated arrival),
        "delayed" or "on time" (estimated times), "cancelled", or "available" (still for sale, with
        available_seats and prices per cabin).

    Raises:
        LookupError: no such flight, or it does not operate that day.
    """
    return _flight_day(flight_number, date)


# -- tools: writes ---------------------------------------------------------------------


def cancel_reservation(reservation_id: str) -> dict:
    """Cancel a reservation: every payment is refunded to its method (a negative entry in payment_history).

    Args:
        reservation_id: e.g. "ZFA04Y".

    Returns:
        The cancelled reservation.

    Raises:
        LookupError: no such reservation.
        ValueError: it is already cancelled, or one of its flights has departed.
    """
    res = _reservation(reservation_id)
    _open(res)
    for p in res["payment_history"]:
        if p["amount"] > 0:
            _add_payment(reservation_id, p["payment_id"], -p["amount"])
    _conn().execute("UPDATE reservations SET status = 'cancelled' WHERE reservation_id = ?", (reservation_id,))
    _log("cancel_reservation", reservation_id, {})
    _conn().commit()
    return _reservation(reservation_id)


def update_reservation_baggages(reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str | None = None) -> dict:
    """Set a reservation's checked bags; each new non-free bag costs $50, paid with ``payment_id``.

    Args:
        reservation_id: e.g. "ZFA04Y".
        total_baggages: the new total of checked bags (no fewer than now).
        nonfree_baggages: how many of them are paid for (no fewer than now).
        payment_id: a credit card or gift card of the reservation's user; needed when new bags cost.

    Returns:
        The reservation.

    Raises:
        LookupError: no such reservation.
        ValueError: it is cancelled or under way, fewer bags than now, more non-free bags than bags,
            no payment for a fee, or a payment method that is not the user's, is a certificate, or
            is a gift card that doesn't cover the fee.
    """
    res = _reservation(reservation_id)
    _open(res)
    if total_baggages < res["total_baggages"] or nonfree_baggages < res["nonfree_baggages"]:
        raise ValueError("checked bags cannot be removed")
    if not 0 <= nonfree_baggages <= total_baggages:
        raise ValueError("nonfree_baggages must be between 0 and total_baggages")
    fee = BAG_FEE * (nonfree_baggages - res["nonfree_baggages"])
    if fee > 0:
        if not payment_id:
            raise ValueError(f"the new bags cost ${fee}: a payment method is needed")
        _charge(res["user_id"], payment_id, fee)
        _add_payment(reservation_id, payment_id, fee)
    _conn().execute("UPDATE reservations SET total_baggages = ?, nonfree_baggages = ? WHERE reservation_id = ?",
                    (total_baggages, nonfree_baggages, reservation_id))
    _log("update_reservation_baggages", reservation_id,
         {"total_baggages": total_baggages, "nonfree_baggages": nonfree_baggages, "payment_id": payment_id})
    _conn().commit()
    return _reservation(reservation_id)


def update_reservation_passengers(reservation_id: str, passengers: list[dict]) -> dict:
    """Replace a reservation's passengers (same number of them).

    Args:
        reservation_id: e.g. "ZFA04Y".
        passengers: every passenger, in order: {"first_name", "last_name", "dob" ("YYYY-MM-DD")}.

    Returns:
        The reservation.

    Raises:
        LookupError: no such reservation.
        ValueError: it is cancelled or under way, the number of passengers differs, or a passenger
            lacks a field.
    """
    res = _reservation(reservation_id)
    _open(res)
    if len(passengers) != len(res["passengers"]):
        raise ValueError("the number of passengers does not match")
    for p in passengers:
        if not all(isinstance(p.get(k), str) and p[k] for k in ("first_name", "last_name", "dob")):
            raise ValueError(f"a passenger needs first_name, last_name and dob: {p!r}")
    conn = _conn()
    conn.execute("DELETE FROM passengers WHERE reservation_id = ?", (reservation_id,))
    conn.executemany("INSERT INTO passengers VALUES (?, ?, ?, ?, ?)",
                     [(reservation_id, i, p["first_name"], p["last_name"], p["dob"]) for i, p in enumerate(passengers)])
    _log("update_reservation_passengers", reservation_id, {"passengers": passengers})
    conn.commit()
    return _reservation(reservation_id)


def update_reservation_flights(reservation_id: str, cabin: str, flights: list[dict], payment_id: str) -> dict:
    """Change a reservation's cabin and/or flights; the fare difference for all passengers is paid or refunded.

    Args:
        reservation_id: e.g. "ZFA04Y".
        cabin: "basic_economy", "economy" or "business" (for every flight).
        flights: every flight of the new itinerary: {"flight_number", "date"}.
        payment_id: a credit card or gift card of the reservation's user.

    Returns:
        The reservation.

    Raises:
        LookupError: no such reservation or flight.
        ValueError: it is cancelled or under way, a flight is not open for booking or lacks seats in
            the cabin, or the payment method is not the user's, is a certificate, or is a gift card
            that doesn't cover the difference.
    """
    res = _reservation(reservation_id)
    _open(res)
    if cabin not in CABINS:
        raise ValueError(f"invalid cabin: {cabin!r}")
    n = len(res["passengers"])
    old = {(f["flight_number"], f["date"]): f for f in res["flights"]}
    new_rows = []
    for f in flights:
        day = _flight_day(f["flight_number"], f["date"])
        key = (f["flight_number"], f["date"])
        if key in old and cabin == res["cabin"]:
            price = old[key]["price"]
        else:
            if day["status"] != "available":
                raise ValueError(f"flight {f['flight_number']} on {f['date']} is not available for booking ({day['status']})")
            if day["available_seats"][cabin] < n:
                raise ValueError(f"not enough seats in {cabin} on flight {f['flight_number']} on {f['date']}")
            price = day["prices"][cabin]
        new_rows.append((f["flight_number"], f["date"], day["origin"], day["destination"], price))
    diff = n * (sum(r[4] for r in new_rows) - sum(f["price"] for f in res["flights"]))
    if diff > 0:
        _charge(res["user_id"], payment_id, diff)
    else:
        _charge(res["user_id"], payment_id, 0)
        _conn().execute("UPDATE payment_methods SET amount = amount - ? WHERE id = ? AND source = 'gift_card'", (diff, payment_id))
    conn = _conn()
    conn.execute("DELETE FROM reservation_flights WHERE reservation_id = ?", (reservation_id,))
    conn.executemany("INSERT INTO reservation_flights VALUES (?, ?, ?, ?, ?, ?, ?)",
                     [(reservation_id, i, *r) for i, r in enumerate(new_rows)])
    conn.execute("UPDATE reservations SET cabin = ? WHERE reservation_id = ?", (cabin, reservation_id))
    if diff != 0:
        _add_payment(reservation_id, payment_id, diff)
    _log("update_reservation_flights", reservation_id, {"cabin": cabin, "flights": flights, "payment_id": payment_id})
    conn.commit()
    return _reservation(reservation_id)


def send_certificate(user_id: str, amount: int) -> str:
    """Send a travel certificate of ``amount`` dollars to a user (it becomes one of their payment methods).

    Args:
        user_id: e.g. "mia_li_3668".
        amount: in dollars, more than 0.

    Returns:
        A sentence naming the certificate's id.

    Raises:
        LookupError: no such user.
        ValueError: the amount is not positive.
    """
    _user(user_id)
    if amount <= 0:
        raise ValueError("the amount must be positive")
    conn = _conn()
    n = conn.execute("SELECT COUNT(*) FROM actions").fetchone()[0]
    cert = f"certificate_{9100000 + n}"
    pos = conn.execute("SELECT COUNT(*) FROM payment_methods WHERE user_id = ?", (user_id,)).fetchone()[0]
    conn.execute("INSERT INTO payment_methods VALUES (?, ?, ?, 'certificate', NULL, NULL, ?)", (cert, user_id, pos, amount))
    _log("send_certificate", user_id, {"amount": amount, "id": cert})
    conn.commit()
    return f"Certificate {cert} added to user {user_id} with amount {amount}."


TOOLS: list[Callable[..., Any]] = [
    get_user_details, get_reservation_details, get_flight_status,
    cancel_reservation, update_reservation_baggages, update_reservation_passengers, update_reservation_flights,
    send_certificate,
]
READS = frozenset({"get_user_details", "get_reservation_details", "get_flight_status"})
# The agent calls the tools through this dict; the harness puts a Forge's wrappers in it.
TOOLBOX: dict[str, Callable[..., Any]] = {f.__name__: f for f in TOOLS}

# -- the agent: a careful stand-in for a model following the airline's policy ----------------

_USER_ID = re.compile(r"(?<![\w-])([A-Za-z]+(?:[_-][A-Za-z]+)+[_-]\d{4})(?![\w-])")
_FLIGHT = re.compile(r"(?<![\w-])HAT\s?-?(\d{3})(?![\w-])", re.IGNORECASE)
_TOKEN6 = re.compile(r"(?<![\w#-])#?([A-Za-z0-9]{6})(?![\w-])")
_RES_WORD = re.compile(r"\b(?:reservation|booking|confirmation|conf\.?|code|locator|ref|reference)\s*(?:code|number|no\.?|id)?\s*[:#]?\s*$",
                       re.IGNORECASE)
_NOT_IDS = {"please", "thanks", "urgent", "cancel", "travel", "flight", "booked", "before", "status", "itself", "number",
            "people", "across", "return", "family", "change", "should", "either", "really", "sister", "mother", "father",
            "friend", "anyone", "though", "within", "online", "agents", "ticket", "double", "delays", "manage"}
_ISO = r"(\d{4}-\d{2}-\d{2})"
_MONTHS = {m: i for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"), 1)}
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DATE_WORDS = re.compile(
    rf"\b(?:{_ISO}|{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?|(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}|(\d{{1,2}})/(\d{{1,2}})(?:/\d{{2,4}})?"
    r"|(today|tonight|this (?:morning|afternoon|evening)|tomorrow|yesterday))\b", re.IGNORECASE)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "another": 1, "single": 1, "two": 2, "a couple of": 2, "a pair of": 2, "three": 3,
            "four": 4, "five": 5}
_COUNT = r"(\d+|a couple of|a pair of|an|a|one|another|single|two|three|four|five)"
_BAG = r"(?:checked\s+|check-in\s+)?(?:bags?|suitcases?|pieces? of (?:checked )?luggage|items? of luggage)\b"
_ADD_BAGS = re.compile(rf"\b{_COUNT}\s+(?:more\s+|extra\s+|additional\s+)?{_BAG}", re.IGNORECASE)
_TOTAL_BAGS = re.compile(rf"\b(?:{_COUNT}\s+{_BAG}\s+(?:in total|total|altogether|all together)|total of\s+{_COUNT}\s+{_BAG})", re.IGNORECASE)
_ONLY_FREE = re.compile(r"\b(?:only if (?:it'?s |they'?re |there'?s no (?:fee|charge) |that'?s )?(?:free|no (?:fee|charge|cost))"
                        r"|as long as (?:it'?s|they'?re|there'?s no (?:fee|charge)|it costs nothing)\b(?:\s*free)?|if (?:it'?s|they'?re) free"
                        r"|(?:don'?t|do not) want to pay)", re.IGNORECASE)
_LIMIT = re.compile(r"\b(?:under|below|less than|no more than|at most|up to|max(?:imum)?(?: of)?)\s*\$\s?(\d[\d,]*)", re.IGNORECASE)
_CHANGED_MIND = re.compile(
    r"\b(?:actually|on second thought|wait|hmm+)\b[\s,.!]*(?:[—–-]\s*)?"
    r"(?=never\s?mind|scratch that|forget (?:it|that|about it)|don'?t|do not|no need|leave it|keep it)", re.IGNORECASE)
_SPLIT = re.compile(
    r"(?<=[.!?;])\s+|\s+[—–]\s+|,\s*(?=just\b)|,?\s+(?:and\s+)?also,?\s+|,?\s+and then\s+"
    r"|,?\s+and\s+(?=(?:please\s+)?(?:can you\s+)?(?:could you\s+)?(?:cancel|add|change|update|upgrade|move|replace|fix|tell|let me know"
    r"|what|where|how|is|are|send|give|put|i'?d like|i want|i'?d also)\b)", re.IGNORECASE)
_NEGATED = re.compile(r"^\W*(?:and\s+|but\s+|oh,?\s+|so\s+)?(?:please\s+)?(?:don'?t|do not|no need to|never)\b", re.IGNORECASE)
_PRONOUN = re.compile(r"\b(?:it|its|that one|this one|the reservation|that reservation|this reservation|the booking|that booking"
                      r"|the trip|that trip|my flights|the flights|them)\b", re.IGNORECASE)
_HEALTH = re.compile(r"\b(?:sick|ill|illness|hospital\w*|surgery|doctor|medical|injur\w*|broke (?:my|his|her)|covid|flu|fever|health"
                     r"|pneumonia|unwell)\b", re.IGNORECASE)
_WEATHER = re.compile(r"\b(?:weather|storm\w*|hurricane|snow\w*|blizzard|flood\w*|tornado|typhoon|wildfires?)\b", re.IGNORECASE)
_AIRLINE_CANCELLED = re.compile(r"\b(?:you|airline|your airline|you guys) (?:cancell?ed)|\bflight\b[^.;]{0,30}?\b(?:was|got|has been) "
                                r"cancell?ed\b", re.IGNORECASE)
_PLANS = re.compile(r"\b(?:plans? (?:changed|have changed|fell through)|change (?:of|in) plans?|can'?t make it|cannot make it|no longer"
                    r"|don'?t need|not going|postponed|called off|trip (?:is|was) off|changed my mind|decided|work came up|rescheduled)",
                    re.IGNORECASE)
_CABIN_WORDS = [("basic_economy", re.compile(r"\bbasic(?:\s+economy)?\b", re.IGNORECASE)),
                ("business", re.compile(r"\bbusiness\b", re.IGNORECASE)),
                ("first", re.compile(r"\bfirst(?:\s+class)\b", re.IGNORECASE)),
                ("economy", re.compile(r"\b(?:economy|coach|main cabin)\b", re.IGNORECASE))]
_NAME = r"[A-Za-z][A-Za-z'’-]*"
_NOT_NAME_WORDS = {"the", "my", "to", "with", "it", "them", "her", "him", "on", "in", "of", "a", "an", "reservation", "booking",
                   "passenger", "name", "please", "date", "birth", "born", "dob", "and", "thanks", "thank", "should", "be", "is",
                   "from", "for", "trip", "flight", "user", "id", "so", "but", "who", "can't", "cannot", "instead", "will",
                   "travel", "travelling", "traveling", "make", "replace", "change", "their", "his", "our", "new", "correct"}


@dataclass(slots=True)
class _Ask:
    intent: str
    rid: str | None  # a reservation id, or None
    clause: str  # the clause's text
    tail: str = ""  # the clauses after it that ask nothing themselves ("If there's a fee, use my visa.")
    before: str = ""  # the text before the clause


@dataclass(slots=True)
class _Request:
    asks: list[_Ask]
    user_id: str | None
    reason: str | None  # "health", "weather", "airline", "plans", or None
    changed_mind: bool
    negated: set[str] = field(default_factory=set)


def _rids(text: str) -> list[str]:
    """The reservation ids in ``text``, in order: six letters and digits (not a flight number)."""
    out = []
    for m in _TOKEN6.finditer(text):
        tok = m[1]
        if re.fullmatch(r"(?i)HAT\d{3}", tok) or tok.lower() in _NOT_IDS:
            continue
        has_digit, has_alpha = any(c.isdigit() for c in tok), any(c.isalpha() for c in tok)
        said = m[0].startswith("#") or bool(_RES_WORD.search(text[max(0, m.start() - 30): m.start()]))
        if has_alpha and (has_digit or tok.isupper() or said) and not (tok.isdigit()):
            out.append(tok.upper())
    return out


def _flights(text: str) -> list[str]:
    return [f"HAT{d}" for d in _FLIGHT.findall(text)]


def _date(text: str) -> str | None:
    """The first date said in ``text``, as YYYY-MM-DD (the year is 2024)."""
    m = _DATE_WORDS.search(text)
    if m is None:
        return None
    iso, mon1, day1, day2, mon2, num_m, num_d, rel = m.groups()
    if iso:
        return iso
    if rel:
        rel = rel.lower()
        return {"tomorrow": "2024-05-16", "yesterday": "2024-05-14"}.get(rel, TODAY)
    if mon1 or mon2:
        mon = mon1 or mon2
        month = next(v for k, v in _MONTHS.items() if k.startswith(mon.lower().rstrip(".")[:3]))
        return f"2024-{month:02d}-{int(day1 or day2):02d}"
    return f"2024-{int(num_m):02d}-{int(num_d):02d}"


def _intent(clause: str) -> str | None:
    c = clause.lower()
    if re.search(r"\bcompensat\w*|\bvouchers?\b|\b(?:expect|deserve|want|get|send me|give me|owed)\b(?:\s+\w+){0,3}\s+(?:travel\s+)?"
                 r"certificate", c):
        return "compensation"
    if re.search(r"\bcancel(?!l?ed\b)", c):
        return "cancel"
    if re.search(r"\bupgrade\b|\bcabin\b|\b(?:move|bump|switch|change|put)\b(?:\s+\w+){0,3}?\s+(?:up\s+)?(?:to|into)\s+"
                 r"(?:basic economy|business|economy|first)\b", c):
        return "upgrade"
    asks_how_many = re.search(r"\bhow many\b|\ballowance\b|\bhow much\b.*\ballow", c)
    adds = _ADD_BAGS.search(clause) or _TOTAL_BAGS.search(clause) or re.search(r"\b(?:add|bring|check in|checking)\b", c)
    if re.search(_BAG, c) and not asks_how_many and adds:
        return "add_bags"
    if re.search(_BAG, c) or re.search(r"\ballowance\b", c):
        return "bag_count"
    if re.search(r"\b(?:replace|typo|misspel\w*|spelled|spelling)\b|\b(?:change|correct|fix|update)\b(?:\s+\w+){0,3}\s+(?:passenger|name)"
                 r"|\bpassenger\b.*\bshould (?:be|read)\b|\bname\b.*\bshould (?:be|read)\b", c):
        return "passenger"
    if _FLIGHT.search(clause) and re.search(r"\bstatus\b|\bon time\b|\bdelayed?\b|\blanded\b|\bland\b|\bdepart|\bleft\b|\btak(?:en|e) off\b"
                                            r"|\bleav|\bcancell?ed\b|\brunning\b|\barriv|\bschedule|\bin the air\b", c):
        return "flight_status"
    if re.search(r"\bstatus\b|\bon time\b|\bon schedule\b|\brunning late\b|\b(?:is|are)\b(?:\s+\w+){0,4}\s+delayed\b"
                 r"|\blanded yet\b|\bhas\b(?:\s+\w+){0,4}\s+(?:landed|departed|left)\b", c):
        return "trip_status"
    if not _rids(clause) and re.search(r"\b(?:what|which|list|how many|all|show)\b(?:\s+\w+){0,3}\s+(?:reservations|bookings|trips)\b"
                                       r"|\bmy (?:reservations|bookings)\b|\b(?:reservations|bookings) (?:do i have|are (?:on|under))", c):
        return "list"
    if re.search(r"\bdetails?\b|\bwhat'?s (?:on|in)\b|\bwhat is (?:on|in)\b|\bitinerary\b|\bsummary\b|\btell me about\b|\bwho(?:'s| is) "
                 r"(?:on|travel\w*|flying)\b|\blook up\b|\blook at\b|\bremind me\b", c):
        return "reservation"
    return None


def _reason(text: str) -> str | None:
    if _HEALTH.search(text):
        return "health"
    if _WEATHER.search(text):
        return "weather"
    if _AIRLINE_CANCELLED.search(text):
        return "airline"
    if _PLANS.search(text):
        return "plans"
    return None


def _parse(task: str) -> _Request:
    text = task
    user_id = None
    m = _USER_ID.search(text)
    if m:
        user_id = m[1].lower().replace("-", "_")
        text = text[: m.start()] + "⟨user⟩" + text[m.end():]
    reason = _reason(text)
    before, changed = "", False
    m = _CHANGED_MIND.search(text)
    if m:
        before, text, changed = text[: m.start()], text[m.end():], True
    last: str | None = None
    for rid in _rids(before):  # dropped requests: only which reservation they were about
        last = rid
    asks: list[_Ask] = []
    negated: set[str] = set()
    seen = before
    tail_of: _Ask | None = None
    for clause in _SPLIT.split(text):
        if not clause or not clause.strip():
            continue
        ids = _rids(clause)
        intent = _intent(clause)
        prior = seen
        seen += " " + clause
        if intent is None:
            if tail_of is not None:
                tail_of.tail += " " + clause
                if ids and tail_of.rid is None:
                    tail_of.rid = ids[0]
            last = ids[-1] if ids else last
            continue
        tail_of = None
        if _NEGATED.search(clause):
            negated.add(intent)
            last = ids[-1] if ids else last
            continue
        if intent in ("list", "flight_status"):
            targets: list[str | None] = [None]
        elif ids:
            targets = list(dict.fromkeys(ids)) if intent in ("cancel", "trip_status", "reservation", "bag_count") else [ids[0]]
        else:
            targets = [last]
        for rid in targets:
            ask = _Ask(intent, rid, clause, before=prior)
            if not any(a.intent == ask.intent and a.rid == ask.rid and a.intent != "flight_status" for a in asks):
                asks.append(ask)
                tail_of = ask
        last = ids[-1] if ids else last
    for a in asks:  # an id said only after the request ("... to booking ZFA04Y.", handled above) or before it
        if a.rid is None and a.intent not in ("list", "flight_status"):
            later = _rids(a.tail)
            a.rid = later[0] if later else None
    return _Request(asks, user_id, reason, changed, negated)


class _Session:
    """One task's work: tool calls (answered from the transcript when a skill already made them)."""

    def __init__(self, transcript: Sequence[Any] | None) -> None:
        self.pending = [(c.tool, c.args, c.result) for c in transcript or () if c.error is None]
        self.user_id: str | None = None
        self.user: dict[str, Any] = {}
        self.res: dict[str, dict[str, Any]] = {}
        self.days: dict[tuple[str, str], dict[str, Any]] = {}

    def call(self, tool: str, **args: Any) -> Any:
        for i, (t, a, r) in enumerate(self.pending):
            if t == tool and a == args:  # already done before the hand-over: never again
                del self.pending[i]
                return copy.deepcopy(r)
        return TOOLBOX[tool](**args)

    def login(self, req: _Request) -> str | None:
        """Authenticate; ``None`` when done, else what to tell the customer."""
        if self.user_id is not None:
            return None
        if req.user_id is None:
            return "Before I can help with a reservation, I need your user id (it looks like mia_li_3668)."
        try:
            self.user = self.call("get_user_details", user_id=req.user_id)
        except LookupError:
            return f"I couldn't find a user with the id {req.user_id}; could you check it?"
        self.user_id = req.user_id
        return None

    def reservation(self, rid: str) -> dict[str, Any] | None:
        if rid not in self.res:
            try:
                self.res[rid] = self.call("get_reservation_details", reservation_id=rid)
            except LookupError:
                return None
        return self.res[rid]

    def day(self, flight_number: str, date: str) -> dict[str, Any] | None:
        key = (flight_number, date)
        if key not in self.days:
            try:
                self.days[key] = self.call("get_flight_status", flight_number=flight_number, date=date)
            except LookupError:
                return None
        return self.days[key]

    def states(self, res: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """Each flight of the reservation with its status that day."""
        out = []
        for f in res["flights"]:
            d = self.day(f["flight_number"], f["date"])
            out.append((f, d or {"status": "unknown"}))
        return out


def _money(x: float) -> str:
    return f"${x:,.0f}" if float(x).is_integer() else f"${x:,.2f}"


def _cabin(c: str) -> str:
    return c.replace("_", " ")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _label(pm: dict[str, Any]) -> str:
    if pm["source"] == "credit_card":
        return f"your {pm['brand']} card ending in {pm['last_four']}"
    if pm["source"] == "gift_card":
        return f"your gift card {pm['id']}"
    if pm["source"] == "certificate":
        return f"your travel certificate {pm['id']}"
    return pm["id"]


def _method_label(s: _Session, payment_id: str) -> str:
    pm = s.user.get("payment_methods", {}).get(payment_id)
    return _label(pm) if pm else payment_id


def _names(people: list[dict[str, Any]]) -> str:
    names = [f"{p['first_name']} {p['last_name']}" for p in people]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _hm(stamp: str) -> str:
    """``2024-05-15T06:26:00`` or ``06:26:00`` → ``06:26``, with the date when it is not the flight's day."""
    return stamp[11:16] if "T" in stamp else stamp[:5]


def _method_wanted(text: str) -> dict[str, str] | None:
    """The payment method the text asks for, as a filter on the user's methods, or None."""
    low = text.lower()
    m = re.search(r"\bending(?: in| with)?\s+(\d{4})\b|\bcard\s+(?:#|no\.?\s*)?(?:x+|\*+)?(\d{4})\b|\blast (?:four|4)(?: digits)?\s+(\d{4})\b", low)
    if m:
        return {"source": "credit_card", "last_four": next(g for g in m.groups() if g)}
    if re.search(r"\bgift\s?cards?\b", low):
        return {"source": "gift_card"}
    if re.search(r"\b(?:travel )?certificates?\b|\bvoucher\b", low) and re.search(r"\b(?:pay|use|charge|with)\b", low):
        return {"source": "certificate"}
    for brand in ("visa", "mastercard"):
        if brand in low or (brand == "mastercard" and "master card" in low):
            return {"source": "credit_card", "brand": brand}
    if re.search(r"\b(?:credit|debit) card\b|\bmy card\b", low):
        return {"source": "credit_card"}
    return None


def _describe(wanted: dict[str, str]) -> str:
    if wanted.get("source") == "gift_card":
        return "gift card"
    if wanted.get("source") == "certificate":
        return "travel certificate"
    if "last_four" in wanted:
        return f"card ending in {wanted['last_four']}"
    if "brand" in wanted:
        return f"{wanted['brand']} card"
    return "credit card"


def _payment(s: _Session, text: str, amount: float, what: str) -> tuple[dict[str, Any] | None, str | None]:
    """The customer's card or gift card named in ``text`` to pay ``amount`` for ``what``, or what to tell them."""
    wanted = _method_wanted(text)
    if wanted is None:
        return None, f"{what} comes to {_money(amount)}; which credit card or gift card on your account should I charge?"
    if wanted["source"] == "certificate":
        return None, (f"Travel certificates can't be used to pay for changes to a reservation, so I haven't made it; "
                      f"{what.lower()} comes to {_money(amount)}, and I can charge a credit card or gift card instead.")
    fits = [pm for pm in s.user["payment_methods"].values() if all(pm.get(k) == v for k, v in wanted.items())]
    if not fits:
        return None, f"I don't see a {_describe(wanted)} on your account, so I haven't changed anything."
    if len(fits) > 1:
        return None, f"You have {len(fits)} of those on file ({', '.join(_label(pm)[5:] for pm in fits)}); which one should I use?"
    pm = fits[0]
    if pm["source"] == "gift_card" and pm["amount"] < amount:
        return None, (f"Your gift card {pm['id']} has {_money(pm['amount'])} on it, not enough for the {_money(amount)}, "
                      f"so I haven't changed anything.")
    return pm, None


def _departed(s: _Session, res: dict[str, Any]) -> str | None:
    """The first flight of the reservation that has departed, said as a phrase, or None."""
    for f, d in s.states(res):
        if d["status"] in _DEPARTED:
            return f"flight {f['flight_number']} on {f['date']} has already {'landed' if d['status'] == 'landed' else 'departed'}"
    return None


def _closed(s: _Session, rid: str, res: dict[str, Any], what: str) -> str | None:
    """Why ``what`` can't be done to reservation ``rid`` (it is cancelled, or under way), or None."""
    if res.get("status") == "cancelled":
        return f"Reservation {rid} is cancelled, so I can't {what}."
    gone = _departed(s, res)
    if gone:
        return f"I can't {what} on reservation {rid}: {gone}, and a reservation can't be changed once travel has begun."
    return None


def _allowance(s: _Session, res: dict[str, Any]) -> tuple[int, int]:
    per = FREE_BAGS[s.user["membership"]][res["cabin"]]
    return per, per * len(res["passengers"])


def _cancel(s: _Session, req: _Request, rid: str, res: dict[str, Any]) -> str:
    if res.get("status") == "cancelled":
        return f"Reservation {rid} is already cancelled, so there's nothing more to do."
    gone = _departed(s, res)
    if gone:
        return f"I can't cancel reservation {rid}: {gone}, and a trip that has begun can't be cancelled."
    if req.reason is None:
        return (f"Could you tell me why you'd like to cancel reservation {rid} (a change of plans, health, weather, "
                f"or a flight we cancelled)?")
    states = s.states(res)
    dropped = [f for f, d in states if d["status"] == "cancelled"]
    if dropped:
        why = f"flight {dropped[0]['flight_number']} on {dropped[0]['date']} was cancelled by the airline"
    elif res["created_at"] >= BOOKED_SINCE:
        why = "it was booked within the last 24 hours"
    elif res["cabin"] == "business":
        why = "business-class reservations can be cancelled"
    elif res["insurance"] == "yes" and req.reason in ("health", "weather"):
        why = f"your travel insurance covers cancelling for {req.reason} reasons"
    else:
        cover = ("it has travel insurance, but the insurance covers health and weather reasons only"
                 if res["insurance"] == "yes" else "it has no travel insurance")
        return (f"I'm sorry, I can't cancel reservation {rid} for a refund: it was booked on {res['created_at'][:10]}, more than "
                f"24 hours ago, it is in {_cabin(res['cabin'])}, {cover}, and none of its flights was cancelled by the airline.")
    done = s.call("cancel_reservation", reservation_id=rid)
    s.res[rid] = done
    paid = [p for p in res["payment_history"] if p["amount"] > 0]
    money = " and ".join(f"{_money(p['amount'])} to {_method_label(s, p['payment_id'])}" for p in paid)
    return f"I've cancelled reservation {rid} ({why}). You'll be refunded {money} within 5-7 business days."


def _bag_count(n: str) -> int:
    return int(n) if n.isdigit() else _NUMBERS[n.lower()]


def _add_bags(s: _Session, ask: _Ask, rid: str, res: dict[str, Any], task: str) -> str:
    text = ask.clause + " " + ask.tail
    total_m = _TOTAL_BAGS.search(text)
    add_m = _ADD_BAGS.search(text)
    if total_m is None and add_m is None:
        return f"How many checked bags would you like to add to reservation {rid}?"
    why = _closed(s, rid, res, "add bags")
    if why:
        return why
    old_total, old_paid = res["total_baggages"], res["nonfree_baggages"]
    if total_m is not None:
        total = _bag_count(total_m[1] or total_m[2])
        if total <= old_total:
            return (f"Reservation {rid} already has {_plural(old_total, 'checked bag')}, so there's nothing to add "
                    f"(bags can be added but not removed).")
    else:
        assert add_m is not None
        total = old_total + _bag_count(add_m[1])
    added = total - old_total
    per, allowed = _allowance(s, res)
    paid = max(old_paid, total - allowed)
    fee = BAG_FEE * (paid - old_paid)
    what = f"{_plural(added, 'more bag')} on reservation {rid}"
    pm: dict[str, Any] | None = None
    if fee > 0:
        if _ONLY_FREE.search(text):
            return (f"Adding {what} would cost {_money(fee)} ({_plural(paid - old_paid, 'bag')} beyond the free allowance of "
                    f"{allowed}), so as you asked, I haven't added them.")
        said = text if _method_wanted(text) else task  # "upgrade it with my visa, and add a bag": the card said once
        pm, why = _payment(s, said, fee, f"Adding {what} ({_plural(paid - old_paid, 'bag')} beyond your free allowance of {allowed}, "
                                         f"at {_money(BAG_FEE)} each)")
        if pm is None:
            return why or ""
    done = s.call("update_reservation_baggages", reservation_id=rid, total_baggages=total, nonfree_baggages=paid,
                  payment_id=pm["id"] if pm else None)
    s.res[rid] = done
    head = (f"I've added {_plural(added, 'checked bag')} to reservation {rid}, which now has {total} "
            f"({allowed} free: {per} per passenger for a {s.user['membership']} member in {_cabin(res['cabin'])}).")
    if pm is None:
        return f"{head} There's no charge."
    return f"{head} {_money(fee)} was charged to {_label(pm)}."


def _bag_info(s: _Session, rid: str, res: dict[str, Any]) -> str:
    per, allowed = _allowance(s, res)
    head = "" if res.get("status") != "cancelled" else f"Reservation {rid} is cancelled. "
    return (f"{head}Reservation {rid} has {_plural(res['total_baggages'], 'checked bag')} ({res['nonfree_baggages']} paid). As a "
            f"{s.user['membership']} member in {_cabin(res['cabin'])}, each passenger gets {per} free, so {allowed} in all for "
            f"{_plural(len(res['passengers']), 'passenger')}; each extra bag is {_money(BAG_FEE)}.")


def _cap(word: str) -> str:
    return word[:1].upper() + word[1:] if word.islower() else word


def _passenger(s: _Session, ask: _Ask, rid: str, res: dict[str, Any]) -> str:
    text = re.sub(r"\s+", " ", ask.clause + " " + ask.tail)
    low = text.lower()
    pos = next((i for i, p in enumerate(res["passengers"]) if f"{p['first_name']} {p['last_name']}".lower() in low), None)
    if pos is None:
        m = re.search(rf"\b(?:passenger|replace|change|changed)\s+(?:the\s+)?(?:passenger\s+)?(?:name\s+)?(?:from\s+)?({_NAME})\s+({_NAME})",
                      text, re.IGNORECASE) or re.search(rf"^\W*({_NAME})\s+({_NAME})\s+(?:can'?t|cannot|won'?t|is not|isn'?t)\b", text)
        if m and m[1].lower() not in _NOT_NAME_WORDS and m[2].lower() not in _NOT_NAME_WORDS:
            return (f"I don't see a passenger named {_cap(m[1])} {_cap(m[2])} on reservation {rid}; its passengers are "
                    f"{_names(res['passengers'])}.")
        return f"Which passenger on reservation {rid} should I change? Its passengers are {_names(res['passengers'])}."
    old = res["passengers"][pos]
    old_name = f"{old['first_name']} {old['last_name']}"
    rest = re.sub(re.escape(old_name), " ", text, flags=re.IGNORECASE)
    new = None
    for m in re.finditer(rf"\b(?:to|with|be|read|is|into)\s+({_NAME})\s+({_NAME})", rest, re.IGNORECASE):
        if m[1].lower() not in _NOT_NAME_WORDS and m[2].lower() not in _NOT_NAME_WORDS:
            new = (_cap(m[1]), _cap(m[2]))
            break
    if new is None:
        return f"What should the passenger {old_name} on reservation {rid} be changed to?"
    dob_m = re.search(rf"\b(?:born|birth|dob|birthday)\b\D{{0,16}}{_ISO}", text, re.IGNORECASE)
    replacing = bool(re.search(r"\breplace\b|\binstead of\b|\bin (?:his|her|their) place\b|\bcan'?t (?:make|come|travel|go)\b", low))
    if replacing and dob_m is None:
        return f"To put {new[0]} {new[1]} on reservation {rid} in place of {old_name}, I need their date of birth."
    why = _closed(s, rid, res, "change passengers")
    if why:
        return why
    dob = dob_m[1] if dob_m else old["dob"]
    if (new[0], new[1], dob) == (old["first_name"], old["last_name"], old["dob"]):
        return f"The passenger on reservation {rid} is already {old_name}, so there's nothing to change."
    people = [dict(p) for p in res["passengers"]]
    people[pos] = {"first_name": new[0], "last_name": new[1], "dob": dob}
    done = s.call("update_reservation_passengers", reservation_id=rid, passengers=people)
    s.res[rid] = done
    return f"Done: on reservation {rid}, {old_name} is now {new[0]} {new[1]} (date of birth {dob})."


def _flight_status(s: _Session, ask: _Ask, text: str) -> str:
    numbers = _flights(ask.clause) or _flights(text)
    if not numbers:
        return "Which flight do you mean? Please give me the flight number (it starts with HAT)."
    fn = numbers[0]
    date = _date(ask.clause) or _date(ask.tail) or TODAY
    d = s.day(fn, date)
    if d is None:
        return f"I can't find flight {fn} on {date}; could you check the flight number and the date?"
    route = f"flight {fn} from {d['origin']} to {d['destination']} on {date}"
    status = d["status"]
    if status == "landed":
        return f"{route[0].upper()}{route[1:]} has landed: it arrived at {_hm(d['actual_arrival_time_est'])} EST (scheduled {_hm(d['scheduled_arrival_time_est'])})."
    if status == "flying":
        return (f"{route[0].upper()}{route[1:]} is in the air: it departed at {_hm(d['actual_departure_time_est'])} EST and should land "
                f"at {_hm(d['estimated_arrival_time_est'])}.")
    if status == "delayed":
        return (f"{route[0].upper()}{route[1:]} is delayed: it is now expected to depart at {_hm(d['estimated_departure_time_est'])} EST "
                f"(scheduled {_hm(d['scheduled_departure_time_est'])}) and arrive at {_hm(d['estimated_arrival_time_est'])}.")
    if status == "on time":
        return f"{route[0].upper()}{route[1:]} is on time: departing at {_hm(d['scheduled_departure_time_est'])} EST."
    if status == "cancelled":
        return f"{route[0].upper()}{route[1:]} was cancelled."
    return (f"{route[0].upper()}{route[1:]} is scheduled to depart at {_hm(d['scheduled_departure_time_est'])} EST; "
            f"it hasn't flown yet.")


def _segment(f: dict[str, Any], d: dict[str, Any]) -> str:
    status = d["status"]
    head = f"{f['flight_number']} {f['origin']}-{f['destination']} on {f['date']}"
    if status == "landed":
        return f"{head} landed at {_hm(d['actual_arrival_time_est'])}"
    if status == "flying":
        return f"{head} is in the air, landing about {_hm(d['estimated_arrival_time_est'])}"
    if status == "delayed":
        return f"{head} is delayed to {_hm(d['estimated_departure_time_est'])}"
    if status == "on time":
        return f"{head} is on time for {_hm(d['scheduled_departure_time_est'])}"
    if status == "cancelled":
        return f"{head} was cancelled"
    if status == "available":
        return f"{head} is scheduled for {_hm(d['scheduled_departure_time_est'])}"
    return f"{head}: {status}"


def _trip_status(s: _Session, rid: str, res: dict[str, Any]) -> str:
    if res.get("status") == "cancelled":
        return f"Reservation {rid} is cancelled, so it has no flights to check."
    return f"On reservation {rid}: " + "; ".join(_segment(f, d) for f, d in s.states(res)) + "."


def _summary(s: _Session, rid: str, res: dict[str, Any]) -> str:
    kind = {"one_way": "one-way", "round_trip": "round trip"}.get(res["flight_type"], res["flight_type"])
    flights = ", ".join(f"{f['flight_number']} {f['origin']}-{f['destination']} on {f['date']}" for f in res["flights"])
    head = f"Reservation {rid} (cancelled)" if res.get("status") == "cancelled" else f"Reservation {rid}"
    return (f"{head}: {kind} from {res['origin']} to {res['destination']} in {_cabin(res['cabin'])}, booked {res['created_at'][:10]}; "
            f"flights {flights}; {_plural(len(res['passengers']), 'passenger')} ({_names(res['passengers'])}); "
            f"{_plural(res['total_baggages'], 'checked bag')}; travel insurance: {res['insurance']}.")


def _list(s: _Session) -> str:
    rids = s.user["reservations"]
    if not rids:
        return f"I don't see any reservations under {s.user_id}."
    return f"You have {_plural(len(rids), 'reservation')}: {', '.join(rids)}."


def _compensation(s: _Session, rid: str, res: dict[str, Any]) -> str:
    states = s.states(res)
    dropped = [f for f, d in states if d["status"] == "cancelled"]
    late = [f for f, d in states if d["status"] == "delayed"]
    if not dropped and not late:
        return (f"I checked reservation {rid}: none of its flights was cancelled or delayed, so I can't offer compensation "
                f"for it.")
    f = (dropped or late)[0]
    what = "cancelled" if dropped else "delayed"
    n = len(res["passengers"])
    if not (s.user["membership"] in ("silver", "gold") or res["insurance"] == "yes" or res["cabin"] == "business"):
        return (f"I'm sorry flight {f['flight_number']} on {f['date']} was {what}. Compensation certificates go to silver and gold "
                f"members, business-class travellers and reservations with travel insurance, and reservation {rid} is a regular "
                f"member's {_cabin(res['cabin'])} booking without insurance, so I can't offer one.")
    amount = (100 if dropped else 50) * n
    sent = s.call("send_certificate", user_id=s.user_id, amount=amount)
    m = re.search(r"certificate_\d+", str(sent))
    return (f"I'm sorry flight {f['flight_number']} on {f['date']} was {what}. I've sent you a {_money(amount)} travel certificate"
            f"{f' ({m[0]})' if m else ''}: {_money(100 if dropped else 50)} per passenger, for the {_plural(n, 'passenger')} on "
            f"reservation {rid}.")


def _upgrade(s: _Session, ask: _Ask, rid: str, res: dict[str, Any]) -> str:
    text = ask.clause + " " + ask.tail
    target = next((c for c, pattern in _CABIN_WORDS if pattern.search(ask.clause)), None)
    if target is None and re.search(r"\bupgrade\b", ask.clause, re.IGNORECASE):
        target = next((c for c, pattern in _CABIN_WORDS if pattern.search(ask.tail)), None)
    if target is None:
        return f"Which cabin would you like reservation {rid} moved to: economy or business?"
    if target == "first":
        return "We don't have a first-class cabin; business is our highest, and I can move you there if you'd like."
    if res.get("status") == "cancelled":
        return f"Reservation {rid} is cancelled, so I can't change its cabin."
    if CABINS.index(res["cabin"]) >= CABINS.index(target):
        return f"Reservation {rid} is already in {_cabin(res['cabin'])}, so there's nothing to upgrade."
    why = _closed(s, rid, res, "change the cabin")
    if why:
        return why
    n = len(res["passengers"])
    diff = 0
    for f, d in s.states(res):
        if d["status"] != "available":
            return (f"I can't change the cabin of reservation {rid}: flight {f['flight_number']} on {f['date']} is {d['status']}, "
                    f"and cabins can only be changed on flights still open for booking.")
        if d["available_seats"][target] < n:
            return (f"I'm sorry, {_cabin(target)} on flight {f['flight_number']} on {f['date']} has only "
                    f"{_plural(d['available_seats'][target], 'seat')} left, not enough for {_plural(n, 'passenger')}.")
        diff += d["prices"][target] - f["price"]
    total = diff * n
    limit = _LIMIT.search(text)
    if limit and total > int(limit[1].replace(",", "")):
        return (f"Moving reservation {rid} to {_cabin(target)} would cost {_money(total)}, more than the {_money(int(limit[1].replace(',', '')))} "
                f"you mentioned, so I haven't changed it.")
    what = f"Moving reservation {rid} to {_cabin(target)} ({_plural(n, 'passenger')})"
    pm, why = _payment(s, text, max(total, 0), what)
    if pm is None:
        return why or ""
    flights = [{"flight_number": f["flight_number"], "date": f["date"]} for f in res["flights"]]
    done = s.call("update_reservation_flights", reservation_id=rid, cabin=target, flights=flights, payment_id=pm["id"])
    s.res[rid] = done
    money = (f"the fare difference of {_money(total)} was charged to {_label(pm)}" if total > 0
             else f"the fare difference of {_money(-total)} will be refunded to {_label(pm)}")
    return f"Reservation {rid} is now in {_cabin(target)}; {money}."


def _do(s: _Session, req: _Request, ask: _Ask, task: str) -> str:
    if ask.intent == "flight_status":
        return _flight_status(s, ask, task)
    why = s.login(req)
    if why is not None:
        return why
    if ask.intent == "list":
        return _list(s)
    rid = ask.rid
    if rid is None:
        return "Which reservation do you mean? Please give me its six-character reservation id."
    res = s.reservation(rid)
    if res is None:
        return f"I couldn't find a reservation {rid}; could you check the id?"
    if res["user_id"] != s.user_id:
        return f"Reservation {rid} isn't under your user id, so I can't help with it here."
    if ask.intent == "cancel":
        return _cancel(s, req, rid, res)
    if ask.intent == "add_bags":
        return _add_bags(s, ask, rid, res, task)
    if ask.intent == "bag_count":
        return _bag_info(s, rid, res)
    if ask.intent == "passenger":
        return _passenger(s, ask, rid, res)
    if ask.intent == "trip_status":
        return _trip_status(s, rid, res)
    if ask.intent == "reservation":
        return _summary(s, rid, res)
    if ask.intent == "compensation":
        return _compensation(s, rid, res)
    if ask.intent == "upgrade":
        return _upgrade(s, ask, rid, res)
    return "Sorry, I couldn't tell what you need."


def agent(task: str, transcript: Sequence[Any] | None = None) -> str:
    """Serve a customer's message with the tools; continue from ``transcript`` (calls already made) if given."""
    req = _parse(task)
    s = _Session(transcript)
    if not req.asks:
        if req.changed_mind:
            return "OK, I've left everything as it is."
        return "Sorry, I couldn't tell what you need; could you tell me a bit more?"
    answers = []
    for a in req.asks:
        said = _do(s, req, a, task)
        answers.append(said)
        if s.user_id is None and a.intent != "flight_status":  # no id: every other request needs it too
            break
    if req.changed_mind:
        answers.insert(0, "OK, I won't do that.")
    return " ".join(answers)


# -- the stream: two days of customer messages ---------------------------------------------

PHRASINGS: dict[str, list[str]] = {
    "cancel": [
        "Hi, my user id is {uid}. Please cancel reservation {rid}, {why}.",
        "{persona} I need to cancel my booking {rid} because {why}. User ID: {uid}",
        "cancel {rid} pls, {why}. id {uid}",
        "Hello! This is {name} ({uid}). {Why}, so I'd like to cancel my trip, confirmation code {rid}. Thanks!",
        "User {uid}: please cancel reservation {rid}.",
    ],
    "add_bags": [
        "Hi, I'm {uid}. Could you add {bags} to reservation {rid}? If there's a fee, use my card ending in {last4}.",
        "{persona} We're bringing {bags} on {rid}. Please add them and charge my gift card. User id {uid}.",
        "add {bags} to {rid}, {uid}",
        "Hello, user {uid} here. For booking {rid} we'll be checking {total} in total, can you update it? Pay with my {brand}.",
    ],
    "passenger": [
        "Hi, user id {uid}. On reservation {rid}, please change the passenger {old} to {new}.",
        "{persona} I made a typo when I booked {rid}: the passenger {old} should be {new}. My user ID is {uid}.",
        "{old} can't make the trip on {rid}, please replace them with {new}, date of birth {dob}. {uid}",
    ],
    "flight_status": [
        "Hi! Is flight {fn} on time today?",
        "What's the status of {fn} on {date}?",
        "{persona} My {relative} {was} on {fn} {when}, has it landed yet?",
    ],
    "trip_status": [
        "Are my flights on reservation {rid} on schedule? User id {uid}.",
        "{uid} here, what's the status of my flights for booking {rid}?",
    ],
    "reservation": [
        "Hi, can you tell me the details of reservation {rid}? My user id is {uid}.",
        "{persona} What's on my booking {rid}? ({uid})",
        "Could you look up my trip {rid} for me? I'm {uid}.",
    ],
    "bag_count": [
        "How many checked bags do I have on reservation {rid}? User {uid}.",
        "{persona} What's my baggage allowance on {rid}? My id is {uid}.",
    ],
    "list": [
        "Hi, what reservations do I have? User id {uid}.",
        "{persona} Can you list my bookings? I'm {uid}.",
    ],
    "compensation": [
        "Hi, I'm {uid}. My flight on reservation {rid} was {word} and I'd like some compensation.",
        "{persona} Your airline {word} my flight ({rid}). I expect a travel certificate for this. User id: {uid}",
        "{uid}: {rid} got {word}, can I get a voucher?",
    ],
    "upgrade": [
        "Hi, user {uid}. I'd like to upgrade reservation {rid} to business class, charge my card ending in {last4}.",
        "{persona} Can you move us up to {cabin} on {rid}? Use my gift card. {uid}",
        "upgrade {rid} to {cabin} please, {uid}",
    ],
    "two_requests": [
        "Hi, I'm {uid}. Please cancel reservation {rid} ({why}) and add {bags} to {rid2}, charge my card ending in {last4}.",
        "User id {uid}. Is flight {fn} on time today? Also, how many bags do I have on {rid}?",
        "{uid}: what's on reservation {rid}, and please cancel {rid2} because {why}.",
        "Hi! {uid} here. Change the passenger {old} to {new} on {rid}, and tell me the status of my flights on {rid2}.",
        "I'm {uid}. My flight on {rid} was cancelled, I'd like compensation, and please cancel the reservation too.",
        "Hello, {uid}. Please upgrade {rid} to business with my card ending in {last4}, and add {bags} to it as well.",
    ],
    "changed_mind": [
        "Hi, {uid}. Please cancel reservation {rid}, {why}. Actually, never mind, just tell me the status of my flights.",
        "I'm {uid}. Add {bags} to {rid}. Actually, don't add anything, just tell me how many bags I have.",
        "Don't cancel {rid}, just tell me what's on it. User {uid}.",
    ],
}
PERSONAS = [
    "I'm a frequent flyer with you.", "I'm in a bit of a rush.", "Hope you're having a good day!", "I'm a gold member, by the way.",
    "Quick question.", "I'm at the airport right now.", "First time contacting support.", "I've been on hold forever.",
]
WHY = [  # what customers say, and the reason it is under the policy
    ("I'm sick and can't travel", "health"), ("my doctor told me not to fly", "health"), ("I broke my leg", "health"),
    ("a big storm is forecast at my destination", "weather"), ("a hurricane is heading there", "weather"),
    ("my plans changed", "plans"), ("the conference got postponed", "plans"), ("I can't make it anymore", "plans"),
    ("I changed my mind about the trip", "plans"),
]
RELATIVES = ["husband", "wife", "son", "daughter", "mom", "dad", "colleague"]
_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


def _q(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


@dataclass(slots=True)
class _Made:
    """What a task was built from, for a later task that adds to it."""

    uid: str = ""
    rid: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class _Stream:
    """Builds tasks: picks real users, reservations and flights, renders a phrasing, and sets the world up for the branch."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.users, self.res, self.flights = _data()
        self.uids = sorted(self.users)
        self.used: set[str] = set()  # reservations a task was about
        self.first: dict[tuple[str, int], str] = {}  # (kind, phrasing) → who asked first on day 1
        self.first_val: dict[tuple[str, int], Any] = {}  # (kind, phrasing) → what made day 1's first case what it was
        self.pairs = sorted((fn, d, e["status"]) for fn, f in self.flights.items() for d, e in f["dates"].items())
        self.first_names = sorted({p["first_name"] for r in self.res.values() for p in r["passengers"]})
        self.last_names = sorted({p["last_name"] for r in self.res.values() for p in r["passengers"]})
        self.last = _Made()

    # -- facts about the data (the world as vendored) ------------------------------------

    def status(self, f: dict[str, Any]) -> str:
        return self.flights[f["flight_number"]]["dates"][f["date"]]["status"]

    def flown(self, r: dict[str, Any]) -> bool:
        return any(self.status(f) in _DEPARTED for f in r["flights"])

    def future(self, r: dict[str, Any]) -> bool:
        return all(self.status(f) == "available" for f in r["flights"])

    def airline(self, r: dict[str, Any]) -> bool:
        return not self.flown(r) and any(self.status(f) == "cancelled" for f in r["flights"])

    def recent(self, r: dict[str, Any]) -> bool:
        return r["created_at"] >= BOOKED_SINCE

    def refundable(self, r: dict[str, Any], reason: str) -> bool:
        return not self.flown(r) and (self.recent(r) or self.airline(r) or r["cabin"] == "business"
                                      or r["insurance"] == "yes" and reason in ("health", "weather"))

    def disruption(self, r: dict[str, Any]) -> str | None:
        states = [self.status(f) for f in r["flights"]]
        return "cancelled" if "cancelled" in states else "delayed" if "delayed" in states else None

    def member(self, r: dict[str, Any]) -> str:
        return self.users[r["user_id"]]["membership"]

    def compensable(self, r: dict[str, Any]) -> bool:
        return self.member(r) in ("silver", "gold") or r["insurance"] == "yes" or r["cabin"] == "business"

    def fee(self, r: dict[str, Any], total: int) -> int:
        allowed = FREE_BAGS[self.member(r)][r["cabin"]] * len(r["passengers"])
        return BAG_FEE * (max(r["nonfree_baggages"], total - allowed) - r["nonfree_baggages"])

    def methods(self, uid: str, source: str) -> list[dict[str, Any]]:
        return [pm for pm in self.users[uid]["payment_methods"].values() if pm["source"] == source]

    def upgrade_cost(self, r: dict[str, Any], cabin: str) -> int | None:
        """The fare difference for moving ``r`` to ``cabin`` (all passengers), or None if it can't be done."""
        if not self.future(r) or CABINS.index(r["cabin"]) >= CABINS.index(cabin):
            return None
        n, diff = len(r["passengers"]), 0
        for f in r["flights"]:
            day = self.flights[f["flight_number"]]["dates"][f["date"]]
            if day["available_seats"][cabin] < n:
                return None
            diff += day["prices"][cabin] - f["price"]
        return diff * n

    # -- picking ---------------------------------------------------------------------------

    def pick(self, pred: Callable[[dict[str, Any]], bool], prefer: str | None = None,
             user_ok: Callable[[str], bool] | None = None) -> tuple[str, str]:
        """An unused reservation ``pred`` accepts: the preferred customer's if they have one (a used one if none is left)."""
        for fresh in (True, False):
            if prefer is not None and (user_ok is None or user_ok(prefer)):
                mine = [r for r in self.users[prefer]["reservations"] if (r not in self.used or not fresh) and pred(self.res[r])]
                if mine:
                    rid = self.rng.choice(mine)
                    self.used.add(rid)
                    return prefer, rid
            pool = [(u, r) for u in self.uids if user_ok is None or user_ok(u)
                    for r in self.users[u]["reservations"] if (r not in self.used or not fresh) and pred(self.res[r])]
            if pool:
                uid, rid = self.rng.choice(pool)
                self.used.add(rid)
                return uid, rid
        raise LookupError("no reservation fits")

    def other(self, uid: str, pred: Callable[[dict[str, Any]], bool], but: str) -> str | None:
        """Another unused reservation of the same customer's that ``pred`` accepts."""
        mine = [r for r in self.users[uid]["reservations"] if r != but and r not in self.used and pred(self.res[r])]
        if not mine:
            return None
        rid = self.rng.choice(mine)
        self.used.add(rid)
        return rid

    def someone(self, but: str | None = None, pred: Callable[[str], bool] | None = None) -> str:
        return self.rng.choice([u for u in self.uids if u != but and (pred is None or pred(u))])

    # -- the world moving on -----------------------------------------------------------------

    def cancelled_sql(self, rid: str) -> list[str]:
        """The customer cancelled the reservation themselves (online), overnight."""
        r = self.res[rid]
        sql = [f"UPDATE reservations SET status = 'cancelled' WHERE reservation_id = {_q(rid)}"]
        for i, p in enumerate(r["payment_history"]):
            sql.append(f"INSERT INTO payments VALUES ({_q(rid)}, {len(r['payment_history']) + i}, {_q(p['payment_id'])}, {-p['amount']!r})")
        return sql

    def balance_sql(self, pm_id: str, amount: float) -> list[str]:
        return [f"UPDATE payment_methods SET amount = {round(amount, 2)!r} WHERE id = {_q(pm_id)}"]

    # -- rendering -------------------------------------------------------------------------

    def uid_text(self, uid: str) -> str:
        r = self.rng.random()
        if r < 0.6:
            return uid
        if r < 0.75:
            return "_".join(p[:1].upper() + p[1:] for p in uid.split("_"))
        if r < 0.85:
            return uid.upper()
        return uid.replace("_", "-")

    def rid_text(self, rid: str) -> str:
        r = self.rng.random()
        if r < 0.15:
            return "#" + rid
        if r < 0.35 and any(c.isdigit() for c in rid):
            return rid.lower()
        return rid

    def fn_text(self, fn: str) -> str:
        r = self.rng.random()
        return fn if r < 0.6 else fn.lower() if r < 0.8 else f"HAT {fn[3:]}"

    def date_text(self, date: str) -> str:
        rel = {TODAY: "today", "2024-05-16": "tomorrow", "2024-05-14": "yesterday"}
        day = int(date[8:])
        forms = [f"May {day}", date, f"5/{day}", f"the {day}{'th' if day in (11, 12, 13) else {1: 'st', 2: 'nd', 3: 'rd'}.get(day % 10, 'th')} of May"]
        if date in rel:
            forms.append(rel[date])
        return self.rng.choice(forms)

    def bags_text(self, n: int) -> str:
        if n == 1:
            return self.rng.choice(["one checked bag", "a bag", "another bag", "1 checked bag", "an extra suitcase"])
        return self.rng.choice([f"{n} bags", f"{_WORDS[n]} checked bags", f"{_WORDS[n]} more suitcases", f"{n} extra bags"])

    def person(self, p: dict[str, Any]) -> str:
        name = f"{p['first_name']} {p['last_name']}"
        return name if self.rng.random() < 0.8 else name.lower()

    def ident(self, uid: str) -> dict[str, str]:
        u = self.users[uid]
        return {"uid": self.uid_text(uid), "name": f"{u['name']['first_name']} {u['name']['last_name']}",
                "persona": self.rng.choice(PERSONAS)}

    def why(self, category: str | None = None) -> tuple[str, str]:
        return self.rng.choice([w for w in WHY if category is None or w[1] == category])

    # -- one task --------------------------------------------------------------------------

    def make(self, kind: str, i: int, branch: str = "normal", day: int = 1, tempting: bool = False, why: str = "") -> Task:
        key = (kind, i)
        prefer = self.first.get(key) if tempting else None
        build = getattr(self, f"_{kind}")
        uid, setup, v = build(i, branch, prefer, key, day)
        if day == 1:
            self.first.setdefault(key, uid)
        v = self.ident(uid) | v
        return Task(PHRASINGS[kind][i].format(**v), tuple(setup), tempting, kind, day, why)

    def _cancel(self, i: int, branch: str, prefer: str | None, key: tuple[str, int], day: int) -> tuple[str, list[str], dict[str, str]]:
        rng = self.rng
        setup: list[str] = []
        old = lambda r: not self.flown(r) and not self.recent(r) and r["cabin"] != "business" and not self.airline(r)
        text, reason = self.why()
        if branch == "normal":
            route = rng.choice(["recent", "business", "insured", "insured", "airline"])
            if route == "insured":
                text, reason = self.why(rng.choice(["health", "weather"]))
            pred = {"recent": lambda r: not self.flown(r) and self.recent(r),
                    "business": lambda r: not self.flown(r) and r["cabin"] == "business",
                    "insured": lambda r: old(r) and r["insurance"] == "yes",
                    "airline": self.airline}[route]
            uid, rid = self.pick(pred, prefer)
        elif branch == "old_economy":
            uid, rid = self.pick(lambda r: old(r) and r["insurance"] == "no", prefer)
        elif branch == "insured_plans":
            text, reason = self.why("plans")
            uid, rid = self.pick(lambda r: old(r) and r["insurance"] == "yes", prefer)
        elif branch == "airline_old":
            uid, rid = self.pick(lambda r: self.airline(r) and not self.recent(r) and r["cabin"] != "business" and r["insurance"] == "no",
                                 prefer)
        elif branch == "cancelled":
            uid, rid = self.pick(lambda r: not self.flown(r), prefer)
            setup = self.cancelled_sql(rid)
        elif branch == "flown":
            uid, rid = self.pick(self.flown, prefer)
        elif branch == "not_theirs":
            uid = prefer or self.someone()
            _owner, rid = self.pick(lambda r: r["user_id"] != uid and self.refundable(r, reason))
        else:
            raise ValueError(branch)
        self.last = _Made(uid, rid, {"why": text})
        return uid, setup, {"rid": self.rid_text(rid), "why": text, "Why": text[0].upper() + text[1:]}

    def _add_bags(self, i: int, branch: str, prefer: str | None, key: tuple[str, int], day: int) -> tuple[str, list[str], dict[str, str]]:
        rng = self.rng
        setup: list[str] = []
        cards = lambda u: self.methods(u, "credit_card")
        gifts = lambda u: self.methods(u, "gift_card")
        user_ok: Callable[[str], bool] | None = None
        if i == 0:
            user_ok = lambda u: bool(cards(u))
        elif i == 1:
            user_ok = (lambda u: len(gifts(u)) >= 2) if branch == "two_gift_cards" else (lambda u: len(gifts(u)) == 1)
        elif i == 3:
            user_ok = lambda u: any(sum(c["brand"] == pm["brand"] for c in cards(u)) == 1 for pm in cards(u))
        first = self.first_val.get(key)
        want_fee: bool | None = {"fee": True, "free": False, "gift_short": True, "two_gift_cards": True, "not_their_card": True,
                                 "fee_flip": None if first is None else not first}.get(branch)
        if branch == "normal" and i == 2 and day == 1 and first is None:
            want_fee = False  # the curt phrasing is first seen free

        def ns(r: dict[str, Any]) -> list[int]:
            return [n for n in (1, 2, 3) if want_fee is None or (self.fee(r, r["total_baggages"] + n) > 0) == want_fee]

        open_ = lambda r: not self.flown(r)
        if branch == "flown":
            uid, rid = self.pick(self.flown, prefer, user_ok)
        elif branch == "more_passengers":
            k = self.first_val.get(("add_bags_passengers", i), 1)
            uid, rid = self.pick(lambda r: open_(r) and len(r["passengers"]) > k, prefer, user_ok)
        elif branch == "total_lower":
            uid, rid = self.pick(lambda r: open_(r) and r["total_baggages"] >= 2, prefer, user_ok)
        else:
            uid, rid = self.pick(lambda r: open_(r) and bool(ns(r)), prefer, user_ok)
        r = self.res[rid]
        n = rng.choice(ns(r) or [1, 2])
        total = r["total_baggages"] + n
        if branch == "total_lower":
            total = r["total_baggages"] - rng.choice([0, 1])
        fee = self.fee(r, total)
        if day == 1:
            self.first_val.setdefault(key, fee > 0)
            self.first_val.setdefault(("add_bags_passengers", i), len(r["passengers"]))
        if branch == "cancelled":
            setup += self.cancelled_sql(rid)
        v: dict[str, str] = {"rid": self.rid_text(rid), "bags": self.bags_text(n),
                             "total": rng.choice([f"{total} bags", f"{_WORDS.get(total, total)} bags"]) if total > 1 else "one bag"}
        if i == 0:
            last4 = rng.choice(cards(uid))["last_four"]
            if branch == "not_their_card":
                mine = {c["last_four"] for c in cards(uid)}
                last4 = rng.choice(sorted({c["last_four"] for u in self.uids for c in cards(u)} - mine))
            v["last4"] = last4
        elif i == 1 and branch != "two_gift_cards":
            gift = gifts(uid)[0]
            if branch == "gift_short":
                setup += self.balance_sql(gift["id"], round(fee * rng.uniform(0.1, 0.8), 2))
            elif fee > 0 and gift["amount"] < fee:
                setup += self.balance_sql(gift["id"], fee + rng.randrange(20, 200))
        elif i == 3:
            unique = [pm for pm in cards(uid) if sum(c["brand"] == pm["brand"] for c in cards(uid)) == 1]
            v["brand"] = rng.choice([b.capitalize() for b in sorted({pm["brand"] for pm in unique})] + ["visa" if any(
                pm["brand"] == "visa" for pm in unique) else unique[0]["brand"]])
        self.last = _Made(uid, rid, {"fee": fee})
        return uid, setup, v

    def _passenger(self, i: int, branch: str, prefer: str | None, key: tuple[str, int], day: int) -> tuple[str, list[str], dict[str, str]]:
        rng = self.rng
        unique = lambda r: len({(p["first_name"], p["last_name"]) for p in r["passengers"]}) == len(r["passengers"])
        if branch == "flown":
            uid, rid = self.pick(lambda r: self.flown(r) and unique(r), prefer)
        else:
            uid, rid = self.pick(lambda r: not self.flown(r) and unique(r), prefer)
        r = self.res[rid]
        setup = self.cancelled_sql(rid) if branch == "cancelled" else []
        old = rng.choice(r["passengers"])
        if branch == "not_on":
            names = {(p["first_name"], p["last_name"]) for p in r["passengers"]}
            other = rng.choice([p for x in sorted(self.res) for p in self.res[x]["passengers"]
                                if (p["first_name"], p["last_name"]) not in names][:400])
            old = other
        if i == 2:
            new = {"first_name": rng.choice(self.first_names), "last_name": rng.choice(self.last_names)}
        else:
            close = [n for n in self.first_names if n[0] == old["first_name"][0] and n != old["first_name"]]
            new = {"first_name": rng.choice(close or self.first_names), "last_name": old["last_name"]}
        dob = f"{rng.randrange(1950, 2010)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
        self.last = _Made(uid, rid)
        return uid, setup, {"rid": self.rid_text(rid), "old": self.person(old), "new": self.person(new), "dob": dob}

    def _flight_status(self, i: int, branch: str, prefer: str | None, key: tuple[str, int], day: int) -> tuple[str, list[str], dict[str, str]]:
        rng = self.rng
        first = self.first_val.get(key)
        if i == 0:
            pool = [p for p in self.pairs if p[1] == TODAY]
        elif i == 2:
            pool = [p for p in self.pairs if p[1] in (TODAY, "2024-05-14") and p[2] != "available"]
        else:
            pool = self.pairs
        if branch == "other_status" and first is not None:
            pool = [p for p in pool if p[2] != first] or pool
        fn, date, status = rng.choice(pool)
        if day == 1:
            self.first_val.setdefault(key, status)
        if branch == "no_such":
            fn = rng.choice([f"HAT{n:03d}" for n in range(1, 1000) if f"HAT{n:03d}" not in self.flights])
        when = {TODAY: rng.choice(["today", "this morning"]), "2024-05-14": "yesterday"}.get(date, self.date_text(date))
        uid = prefer or self.someone()
        self.last = _Made(uid, "", {"fn": fn})
        return uid, [], {"fn": self.fn_text(fn), "date": self.date_text(date), "when": when, "relative": rng.choice(RELATIVES),
                         "was": "was" if date < TODAY else "is"}

    def _trip_status(self, i: int, branch: str, prefer: str | None, key: tuple[str, int], day: int) -> tuple[str, list[str], dict[str, str]]:
        setup: list[str] = []
        if branch == "not_theirs":
            uid = prefer or self.someone()
            _owner, rid = self.pick(lambda r: r["user_id"] != uid)
        else:
            uid, rid = self.pick(lambda r: not self.flown(r) or self.rng.random() < 0.3, prefer)
            if branch == "cancelled":
                setup = self.cancelled_sql(rid)
        self.last = _Made(uid, rid)
        return uid, setup, {"rid": self.rid_text(rid)}

    def _reservation(self, i: int, branch: str, prefer: str | None, key: tuple[str, int], day: int) -> tuple[str, list[str], dict[str, str]]:
        setup: list[str] = []
        k = self.first_val.get(key, 1)
        if branch == "not_theirs":
            uid = prefer or self.someone()
            _owner, rid = self.pick(lambda r: r["user_id"] != uid)
        elif branch == "more_passengers":
            uid, rid = self.pick(lambda r: len(r["passengers"]) > k, prefer)
        else:
            uid, rid = self.pick(lambda r: True, prefer)
            if branch == "cancelled":
                setup = self.cancelled_sql(rid)
        if day == 1:
            self.first_val.setdefault(key, len(self.res[rid]["passengers"]))
        self.last = _Made(uid, rid, {"why": self.why()[0]})
        return uid, setup, {"rid": self.rid_text(rid)}

    def _bag_count(self, i: int, branch: str, prefer: str | None, key: tuple[str, int], day: int) -> tuple[str, list[str], dict[str, str]]:
        first = self.first_val.get(key)
        user_ok = (lambda u: self.users[u]["membership"] != first) if branch == "other_tier" and first else None
        uid, rid = self.pick(lambda r: True, prefer if user_ok is None else None, user_ok)
        if day == 1:
            self.first_val.setdefault(key, self.users[uid]["membership"])
        self.last = _Made(uid, rid)
        return uid, [], {"rid": self.rid_text(rid)}

    def _list(self, i: int, branch: str, prefer: str | None, key: tuple[str, int], day: int) -> tuple[str, list[str], dict[str, str]]:
        first = self.first_val.get(key, 3)
        want = {"none": lambda n: n == 0, "more": lambda n: n >= first + 3}.get(branch, lambda n: 2 <= n <= 5)
        uid = self.someone(pred=lambda u: want(len(self.users[u]["reservations"])))
        if day == 1:
            self.first_val.setdefault(key, len(self.users[uid]["reservations"]))
        self.last = _Made(uid, "")
        return uid, [], {}

    def _compensation(self, i: int, branch: str, prefer: str | None, key: tuple[str, int], day: int) -> tuple[str, list[str], dict[str, str]]:
        first = self.first_val.get(key)
        k = self.first_val.get(("compensation_passengers", i), 1)
        if branch == "not_eligible":
            pred = lambda r: self.disruption(r) is not None and not self.compensable(r)
        elif branch == "no_disruption":
            pred = lambda r: self.disruption(r) is None and self.compensable(r) and not self.future(r)
        elif branch == "other_disruption":
            pred = lambda r: self.disruption(r) not in (None, first) and self.compensable(r)
        elif branch == "more_passengers":
            pred = lambda r: self.disruption(r) is not None and self.compensable(r) and len(r["passengers"]) > k
        else:
            pred = lambda r: self.disruption(r) is not None and self.compensable(r)
        uid, rid = self.pick(pred, prefer)
        r = self.res[rid]
        actual = self.disruption(r) or "cancelled"
        if day == 1:
            self.first_val.setdefault(key, actual)
            self.first_val.setdefault(("compensation_passengers", i), len(r["passengers"]))
        word = actual if branch == "normal" or first is None else first
        self.last = _Made(uid, rid)
        return uid, [], {"rid": self.rid_text(rid), "word": word}

    def _upgrade(self, i: int, branch: str, prefer: str | None, key: tuple[str, int], day: int) -> tuple[str, list[str], dict[str, str]]:
        rng = self.rng
        setup: list[str] = []
        cards = lambda u: self.methods(u, "credit_card")
        gifts = lambda u: self.methods(u, "gift_card")
        user_ok: Callable[[str], bool] | None = None
        if i == 0:
            user_ok = lambda u: bool(cards(u))
        elif i == 1:
            user_ok = lambda u: len(gifts(u)) == 1
        targets = lambda r: ["business"] if i == 0 else [c for c in CABINS[1:] if self.upgrade_cost(r, c)]
        if branch == "already":
            top = "business" if i == 0 else self.first_val.get(key, "business")
            uid, rid = self.pick(lambda r: not self.flown(r) and CABINS.index(r["cabin"]) >= CABINS.index(top), prefer, user_ok)
            cabin = top
        elif branch == "today":
            uid, rid = self.pick(lambda r: not self.flown(r) and r["cabin"] != "business" and not self.future(r), prefer, user_ok)
            cabin = "business"
        else:
            uid, rid = self.pick(lambda r: any((self.upgrade_cost(r, c) or 0) > 0 for c in targets(r)), prefer, user_ok)
            r = self.res[rid]
            cabin = rng.choice([c for c in targets(r) if (self.upgrade_cost(r, c) or 0) > 0])
        r = self.res[rid]
        cost = self.upgrade_cost(r, cabin) or 0
        if day == 1:
            self.first_val.setdefault(key, cabin)
        if branch == "no_seats":
            f = rng.choice(r["flights"])
            setup.append(f"UPDATE flight_dates SET details = json_set(details, '$.available_seats.{cabin}', {len(r['passengers']) - 1}) "
                         f"WHERE flight_number = {_q(f['flight_number'])} AND date = {_q(f['date'])}")
        v: dict[str, str] = {"rid": self.rid_text(rid), "cabin": _cabin(cabin)}
        if i == 0:
            last4 = rng.choice(cards(uid))["last_four"]
            if branch == "not_their_card":
                mine = {c["last_four"] for c in cards(uid)}
                last4 = rng.choice(sorted({c["last_four"] for u in self.uids for c in cards(u)} - mine))
            v["last4"] = last4
        elif i == 1:
            gift = gifts(uid)[0]
            if branch == "gift_short":
                setup += self.balance_sql(gift["id"], round(cost * rng.uniform(0.1, 0.8), 2))
            elif cost > 0 and gift["amount"] < cost:
                setup += self.balance_sql(gift["id"], cost + rng.randrange(20, 300))
        self.last = _Made(uid, rid, {"cost": cost})
        return uid, setup, v

    def _two_requests(self, i: int, branch: str, prefer: str | None, key: tuple[str, int], day: int) -> tuple[str, list[str], dict[str, str]]:
        rng = self.rng
        setup: list[str] = []
        cards = lambda u: self.methods(u, "credit_card")
        two_open = lambda u: sum(not self.flown(self.res[r]) and r not in self.used for r in self.users[u]["reservations"]) >= 2
        v: dict[str, str] = {}
        if i == 0:  # cancel one, add bags to another
            text, reason = self.why()
            if branch == "first_ineligible":
                text, reason = self.why("plans")
            ok = (lambda r: not self.refundable(r, reason)) if branch == "first_ineligible" else (lambda r: self.refundable(r, reason))
            uid, rid = self.pick(lambda r: not self.flown(r) and ok(r), prefer, lambda u: bool(cards(u)) and two_open(u))
            rid2 = self.other(uid, lambda r: not self.flown(r), rid) or rid
            v = {"why": text, "bags": self.bags_text(rng.choice([1, 2])), "last4": rng.choice(cards(uid))["last_four"]}
        elif i == 1:  # a flight's status today, bags on a reservation
            uid, rid = self.pick(lambda r: True, prefer)
            rid2 = rid
            v = {"fn": self.fn_text(rng.choice([p[0] for p in self.pairs if p[1] == TODAY]))}
        elif i == 2:  # what's on one, cancel another
            text, reason = self.why()
            second = (lambda r: self.flown(r)) if branch == "second_flown" else (lambda r: self.refundable(r, reason))
            uid, rid2 = self.pick(second, prefer, lambda u: len(self.users[u]["reservations"]) >= 2)
            rid = self.other(uid, lambda r: True, rid2) or rid2
            v = {"why": text}
        elif i == 3:  # rename a passenger on one, status of another
            unique = lambda r: len({(p["first_name"], p["last_name"]) for p in r["passengers"]}) == len(r["passengers"])
            uid, rid = self.pick(lambda r: not self.flown(r) and unique(r), prefer, lambda u: len(self.users[u]["reservations"]) >= 2)
            rid2 = self.other(uid, lambda r: True, rid) or rid
            old = rng.choice(self.res[rid]["passengers"])
            close = [n for n in self.first_names if n[0] == old["first_name"][0] and n != old["first_name"]]
            v = {"old": self.person(old), "new": self.person({"first_name": rng.choice(close or self.first_names),
                                                              "last_name": old["last_name"]})}
        elif i == 4:  # compensation and cancel, same reservation
            uid, rid = self.pick(self.airline, prefer)
            rid2 = rid
        else:  # upgrade, then bags on it
            uid, rid = self.pick(lambda r: (self.upgrade_cost(r, "business") or 0) > 0, prefer, lambda u: bool(cards(u)))
            rid2 = rid
            v = {"last4": rng.choice(cards(uid))["last_four"], "bags": self.bags_text(rng.choice([1, 2]))}
        self.last = _Made(uid, rid)
        return uid, setup, {"rid": self.rid_text(rid), "rid2": self.rid_text(rid2)} | v

    def _changed_mind(self, i: int, branch: str, prefer: str | None, key: tuple[str, int], day: int) -> tuple[str, list[str], dict[str, str]]:
        uid, rid = self.pick(lambda r: not self.flown(r) if i < 2 else True, prefer)
        self.last = _Made(uid, rid)
        return uid, [], {"rid": self.rid_text(rid), "why": self.why()[0], "bags": self.bags_text(self.rng.choice([1, 2]))}


# (kind, phrasing, branch, why) of the later days' tasks meant to tempt a wrong replay
_TEMPTING: list[tuple[str, int, str, str]] = [
    ("cancel", 0, "old_economy", "booked days ago, not business, no insurance, no flight cancelled: not refundable"),
    ("cancel", 1, "cancelled", "the customer already cancelled it online"),
    ("cancel", 2, "flown", "a flight of it has already departed"),
    ("cancel", 3, "not_theirs", "the reservation is someone else's"),
    ("cancel", 0, "insured_plans", "insured, but the insurance doesn't cover a change of plans"),
    ("cancel", 1, "airline_old", "an old economy booking, refundable only because the airline cancelled a flight"),
    ("cancel", 4, "flown", "no reason given, and a flight of it has already departed"),
    ("add_bags", 0, "fee_flip", "the allowance differs (membership, cabin, passengers): free where it cost, or the reverse"),
    ("add_bags", 0, "not_their_card", "the card ending named isn't the customer's"),
    ("add_bags", 1, "gift_short", "the gift card doesn't cover the fee"),
    ("add_bags", 1, "two_gift_cards", "two gift cards on file: which one?"),
    ("add_bags", 2, "fee_flip", "the bags cost, and no payment method was named"),
    ("add_bags", 3, "total_lower", "the reservation already has that many bags"),
    ("add_bags", 2, "cancelled", "the reservation was cancelled"),
    ("add_bags", 0, "more_passengers", "more passengers, so a bigger allowance"),
    ("passenger", 0, "not_on", "the passenger named isn't on the reservation"),
    ("passenger", 1, "cancelled", "the reservation was cancelled"),
    ("passenger", 2, "flown", "travel has begun"),
    ("flight_status", 0, "other_status", "the flight's status differs"),
    ("flight_status", 1, "no_such", "no such flight"),
    ("flight_status", 2, "other_status", "the flight's status differs"),
    ("trip_status", 0, "cancelled", "the reservation was cancelled"),
    ("trip_status", 1, "not_theirs", "the reservation is someone else's"),
    ("reservation", 0, "cancelled", "the reservation was cancelled"),
    ("reservation", 1, "not_theirs", "the reservation is someone else's"),
    ("reservation", 2, "more_passengers", "more passengers"),
    ("bag_count", 0, "other_tier", "another membership tier: another allowance"),
    ("list", 0, "none", "no reservations at all"),
    ("list", 1, "more", "many more reservations"),
    ("compensation", 0, "not_eligible", "a regular member's economy booking without insurance: no compensation"),
    ("compensation", 1, "no_disruption", "the flights ran as planned"),
    ("compensation", 2, "other_disruption", "the customer's word is wrong: cancelled, not delayed (or the reverse)"),
    ("compensation", 0, "more_passengers", "more passengers: a bigger certificate"),
    ("upgrade", 0, "already", "already in business"),
    ("upgrade", 1, "gift_short", "the gift card doesn't cover the fare difference"),
    ("upgrade", 2, "today", "a flight of it is today: no longer open for booking"),
    ("upgrade", 0, "not_their_card", "the card ending named isn't the customer's"),
    ("upgrade", 1, "no_seats", "not enough seats left in the cabin"),
    ("two_requests", 0, "first_ineligible", "the reservation to cancel isn't refundable"),
    ("two_requests", 2, "second_flown", "the reservation to cancel has a flight that departed"),
]


def _extra(s: _Stream, day: int) -> list[Task]:
    """Tasks of a later day whose text carries more than the phrasing did: a condition, a second request, a change of mind."""
    out = []
    for kind, i, branch, tail, why in [
        ("cancel", 0, "normal", " Actually, don't cancel it, just tell me what's on it.", "a change of mind after the reason"),
        ("add_bags", 2, "fee", " But only if they're free.", "only if free, and the bags cost"),
        ("upgrade", 0, "normal", " Only if it's under ${limit} though.", "a price limit below the fare difference"),
        ("reservation", 1, "normal", " Oh, and please cancel it, {why}.", "a second request after the question"),
        ("bag_count", 1, "normal", " And what's the status of my flights on it?", "a second question after the first"),
    ]:
        t = s.make(kind, i, branch, day=day, tempting=True)
        limit = max(10, int(s.last.extra.get("cost", 100) * 0.6) // 10 * 10)
        text = t.text + tail.format(limit=limit, why=s.last.extra.get("why", "my plans changed"))
        out.append(Task(text, t.setup_sql, True, kind, day, why))
    return out


def tasks(seed: int = 2024, days: int = 2) -> list[Task]:
    """``days`` days of customer messages (deterministic for a seed; the first two are the same whatever
    ``days``, and each later day is shaped as day 2 is, with other values); see the module docstring."""
    s = _Stream(seed)
    singles = [(k, i) for k, ps in PHRASINGS.items() for i in range(len(ps))]
    day1 = [s.make(k, i, day=1) for k, i in singles]
    day1 += [s.make(k, i, day=1) for k, i in s.rng.sample(singles, 34)]  # a busy morning: some asked twice
    s.rng.shuffle(day1)
    # the world is not always the common case, on day 1 either
    for kind, i, branch in [("cancel", 1, "old_economy"), ("add_bags", 2, "fee"), ("compensation", 0, "not_eligible"),
                            ("upgrade", 0, "already"), ("passenger", 0, "not_on"), ("cancel", 2, "flown")]:
        day1.insert(s.rng.randrange(len(day1) // 2, len(day1) + 1), s.make(kind, i, branch, day=1))
    out = day1
    for d in range(2, days + 1):
        later = [s.make(k, i, day=d) for k, i in singles]
        later += [s.make(k, i, day=d) for k, i in s.rng.sample(singles, 4)]
        later += [s.make(k, i, b, day=d, tempting=True, why=w) for k, i, b, w in _TEMPTING]
        later += _extra(s, d)
        s.rng.shuffle(later)
        out += later
    return out
