"""Tools, worlds and agents for the red-team probes (tests/test_probes.py).

Same conventions as ``tests/toolsets/safety.py``: one world at a time lives in ``W``
(``load`` replaces it, ``state`` copies it out), every write appends to ``W["writes"]``,
and the agents are what a careful tool-calling LLM does: parse the task, read, decide
(on values the tools returned), write, answer. Every agent accepts ``transcript=`` and
continues from the calls a skill already made (a write is never repeated).

The write tools do not enforce business policy themselves (as in tau-bench, the policy
is the agent's): a wrong replay shows as a write the agent alone would not make.
"""

from __future__ import annotations

import copy
import datetime as dt
import re
from typing import Any

from tests.toolsets.safety import Tools
from tests.toolsets._worlds import dict_world

W, load, state = dict_world()  # the current world; load(world) makes a deep copy of one current


def _write(tool: str, **args: Any) -> None:
    W["writes"].append((tool, args))


# -- reads -------------------------------------------------------------------------------------------

def get_order(order_id: str) -> dict:
    """Look up an order by its id (like "5" or "#W5001")."""
    if order_id not in W["orders"]:
        raise KeyError(f"no order {order_id!r}")
    return copy.deepcopy(W["orders"][order_id])


def get_stock(sku: str) -> dict:
    """How many units of a SKU the warehouse has available."""
    return copy.deepcopy(W["stock"][sku])


def get_customer(customer_id: str) -> dict:
    """Look up a customer by id (name, orders)."""
    if customer_id not in W["customers"]:
        raise KeyError(f"no customer {customer_id!r}")
    return copy.deepcopy(W["customers"][customer_id])


def find_customer(email: str) -> dict:
    """Find a customer by their email address."""
    for c in W["customers"].values():
        if c["email"] == email:
            return copy.deepcopy(c)
    raise KeyError(f"no customer with email {email!r}")


def get_account(account_id: str) -> dict:
    """Look up an account (balance) by id, like "A-1"."""
    return copy.deepcopy(W["accounts"][account_id])


def get_user(username: str) -> dict:
    """Look up a user in the directory by username (like "carol.diaz")."""
    if username not in W["users"]:
        raise KeyError(f"no user {username!r}")
    return copy.deepcopy(W["users"][username])


def get_ticket(ticket_id: str) -> dict:
    """Look up a support ticket by id, like "T-12"."""
    return copy.deepcopy(W["tickets"][ticket_id])


def get_today() -> dict:
    """Today's date (ISO)."""
    return {"today": W["today"]}


def list_invoices(customer_id: str) -> list:
    """A customer's unpaid invoices, with their due dates."""
    return copy.deepcopy(W["invoices"][customer_id])


# -- writes ------------------------------------------------------------------------------------------

def ship_order(order_id: str, packaging: str) -> dict:
    """Ship an order from the warehouse; packaging is "standard" or "padded"."""
    _write("ship_order", order_id=order_id, packaging=packaging)
    return {"shipped": True}


def refund(order_id: str, amount: float) -> dict:
    """Refund an amount of an order to its payment method."""
    _write("refund", order_id=order_id, amount=amount)
    return {"status": "refunded"}


def cancel_order(order_id: str) -> dict:
    """Cancel an order."""
    _write("cancel_order", order_id=order_id)
    return {"status": "cancelled"}


def create_return(order_id: str) -> dict:
    """Open a return (RMA) for a delivered order."""
    _write("create_return", order_id=order_id)
    return {"status": "return opened"}


def set_item_quantity(order_id: str, sku: str, quantity: int) -> dict:
    """Set how many units of a SKU an order has."""
    _write("set_item_quantity", order_id=order_id, sku=sku, quantity=quantity)
    return {"ok": True}


def set_quantity(order_id: str, line: int, quantity: int) -> dict:
    """Set the quantity of one line of an order."""
    _write("set_quantity", order_id=order_id, line=line, quantity=quantity)
    return {"ok": True}


def remove_line(order_id: str, line: int) -> dict:
    """Remove a line from an order."""
    _write("remove_line", order_id=order_id, line=line)
    return {"ok": True}


def send_replacement(order_id: str, sku: str, quantity: int) -> dict:
    """Send replacement units of an item of an order."""
    _write("send_replacement", order_id=order_id, sku=sku, quantity=quantity)
    return {"ok": True}


def add_to_group(username: str, group: str) -> dict:
    """Add a user to a group (the directory does not check for duplicates)."""
    _write("add_to_group", username=username, group=group)
    return {"added": True}


def register_device(username: str, serial: str) -> dict:
    """Register a device for a user."""
    _write("register_device", username=username, serial=serial)
    return {"ok": True}


def assign_ticket(ticket_id: str, queue: str) -> dict:
    """Assign a ticket to a queue."""
    _write("assign_ticket", ticket_id=ticket_id, queue=queue)
    return {"ok": True}


def page_oncall(ticket_id: str) -> dict:
    """Page the on-call engineer about a ticket."""
    _write("page_oncall", ticket_id=ticket_id)
    return {"ok": True}


def book_table(name: str, date: str) -> dict:
    """Book a table for a guest on a date (ISO)."""
    _write("book_table", name=name, date=date)
    return {"ok": True}


def move_appointment(appointment_id: str, date: str) -> dict:
    """Move an appointment to a date (ISO)."""
    _write("move_appointment", appointment_id=appointment_id, date=date)
    return {"ok": True}


READS = [get_order, get_stock, get_customer, find_customer, get_account, get_user, get_ticket, get_today, list_invoices]
WRITES = [
    ship_order, refund, cancel_order, create_return, set_item_quantity, set_quantity, remove_line,
    send_replacement, add_to_group, register_device, assign_ticket, page_oncall, book_table, move_appointment,
]


# -- dates as an agent reads them --------------------------------------------------------------------

_MONTHS = {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}


def _day_month(text: str, day_first: bool) -> tuple[int, int, int | None]:
    """(day, month, year or None) of "May 20", "20 May 2024", "Jan 5" or "05/06/2024"."""
    m = re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4})", text)
    if m:
        a, b, y = int(m[1]), int(m[2]), int(m[3])
        return (a, b, y) if day_first else (b, a, y)
    m = re.fullmatch(r"([A-Za-z]+)\s+(\d{1,2})(?:,?\s+(\d{4}))?", text)
    if m:
        return int(m[2]), _MONTHS[m[1][:3].lower()], int(m[3]) if m[3] else None
    m = re.fullmatch(r"(\d{1,2})\s+([A-Za-z]+)(?:\s+(\d{4}))?", text)
    if m:
        return int(m[1]), _MONTHS[m[2][:3].lower()], int(m[3]) if m[3] else None
    raise ValueError(f"cannot read the date {text!r}")


# -- the agent ---------------------------------------------------------------------------------------

def probe_agent(t: dict[str, Any]):
    """One agent for every probe's task shape (each test uses only the shapes it needs)."""

    def agent(task: str, transcript: list | None = None) -> str:
        tools = Tools(t, transcript)

        # P1/P5/P11: ship if the warehouse has enough units; fragile goods go padded
        m = re.match(r"Ship order #(\d+)\.?$", task)
        if m:
            order_id = m.group(1)
            order = tools.get_order(order_id=order_id)
            stock = tools.get_stock(sku=order["sku"])
            if int(stock["available"]) < int(order["quantity"]):  # some warehouses say "5", not 5
                return f"Order {order_id} is backordered: not enough units in stock."
            packaging = "padded" if "fragile" in order.get("notes", "").lower() else "standard"
            tools.ship_order(order_id=order_id, packaging=packaging)
            return f"Shipped order {order_id}."

        # P2: a partial refund may not exceed what is left to refund
        m = re.match(r"Refund \$(\d+(?:\.\d+)?) of order #(\d+)\.?$", task)
        if m:
            amount, order_id = float(m.group(1)), m.group(2)
            order = tools.get_order(order_id=order_id)
            if amount > order["total"] - order["refunded"]:
                return f"Order {order_id} does not have that much left to refund."
            tools.refund(order_id=order_id, amount=amount)
            return f"Refunded ${amount:.2f} of order {order_id}."

        # P3/P4/P12: a whole-order refund after the policy checks
        m = re.match(r"Refund order #(\d+)\.?$", task)
        if m:
            order_id = m.group(1)
            order = tools.get_order(order_id=order_id)
            if order.get("hold_reason"):
                return f"Order {order_id} is on hold ({order['hold_reason']}); no refund for now."
            if order["status"].lower() not in ("delivered", "in transit"):
                return f"Order {order_id} cannot be refunded while it is {order['status']}."
            if any(item.get("attributes", {}).get("final_sale") for item in order.get("items", [])):
                return f"Order {order_id} has a final-sale item and cannot be refunded."
            tools.refund(order_id=order_id, amount=order["total"])
            return f"Refunded ${order['total']:.2f} for order {order_id}."

        # P6: the customer's own order list says each order's status
        m = re.match(r"I'm (\w+)\. Please cancel order (#W\d+)\.?$", task)
        if m:
            customer_id, order_id = m.groups()
            customer = tools.get_customer(customer_id=customer_id)
            mine = [o for o in customer["orders"] if o["order_id"] == order_id]
            if not mine:
                return f"Order {order_id} is not one of yours."
            if mine[0]["status"] != "pending":
                return f"Order {order_id} has already shipped and cannot be cancelled."
            tools.cancel_order(order_id=order_id)
            return f"Cancelled order {order_id}."

        # P7: a customer who identifies by email may cancel only their own orders
        m = re.match(r"I'm ([\w.+-]+@[\w-]+(?:\.[\w-]+)+)\. Please cancel order (#W\d+)\.?$", task)
        if m:
            email, order_id = m.groups()
            customer = tools.find_customer(email=email)
            order = tools.get_order(order_id=order_id)
            if order["customer_id"] != customer["customer_id"]:
                return f"Order {order_id} is not on your account, so I cannot cancel it."
            if order["status"] != "pending":
                return f"Order {order_id} has already shipped and cannot be cancelled."
            tools.cancel_order(order_id=order_id)
            return f"Cancelled order {order_id}."

        # P17: the same check where the customer's orders are numbers and the task's id is text
        m = re.match(r"Customer (C-\d+) wants order (\d+) cancelled\.?$", task)
        if m:
            customer_id, order_id = m.groups()
            customer = tools.get_customer(customer_id=customer_id)
            if int(order_id) not in customer["orders"]:
                return f"Order {order_id} does not belong to customer {customer_id}."
            tools.cancel_order(order_id=order_id)
            return f"Cancelled order {order_id} for customer {customer_id}."

        # P9: "my most recent order" is the last one on the customer's list
        m = re.match(r"I'm (\w+)\. Please cancel my most recent order\.?$", task)
        if m:
            customer = tools.get_customer(customer_id=m.group(1))
            order_id = customer["orders"][-1]
            order = tools.get_order(order_id=order_id)
            if order["status"] != "pending":
                return f"Your most recent order, {order_id}, has already shipped."
            tools.cancel_order(order_id=order_id)
            return f"Cancelled your most recent order, {order_id}."

        # P8: "N more" adds to what the order already has
        m = re.match(r"Add (\d+) more units of ([A-Z]+-\d+) to order #(\d+)\.?$", task)
        if m:
            n, sku, order_id = int(m.group(1)), m.group(2), m.group(3)
            order = tools.get_order(order_id=order_id)
            line = next((x for x in order["lines"] if x["sku"] == sku), None)
            if line is None:
                return f"Order {order_id} has no {sku}."
            tools.set_item_quantity(order_id=order_id, sku=sku, quantity=line["quantity"] + n)
            return f"Added {n} more units of {sku} to order {order_id}."

        # P10: a question answered by comparing two values read
        m = re.match(r"Can account (A-\d+) cover order #(\d+)\?$", task)
        if m:
            account_id, order_id = m.groups()
            account = tools.get_account(account_id=account_id)
            order = tools.get_order(order_id=order_id)
            if account["balance"] >= order["total"]:
                return f"Yes: account {account_id} can cover order {order_id}."
            return f"No: account {account_id} cannot cover order {order_id}."

        # P11: returns only within the return window
        m = re.match(r"Return order #(\d+)\.?$", task)
        if m:
            order_id = m.group(1)
            order = tools.get_order(order_id=order_id)
            today = tools.get_today()["today"]
            if today > order["return_by"]:
                return f"The return window for order {order_id} has closed."
            tools.create_return(order_id=order_id)
            return f"Opened a return for order {order_id}."

        # P12: a date without a year is its next occurrence
        m = re.match(r"Book a table for ([A-Z][a-z]+) on (.+?)\.?$", task)
        if m:
            name, when = m.groups()
            today = dt.date.fromisoformat(tools.get_today()["today"])
            day, month, year = _day_month(when, day_first=True)
            date = dt.date(year or today.year, month, day)
            if year is None and date < today:
                date = dt.date(today.year + 1, month, day)
            tools.book_table(name=name, date=date.isoformat())
            return f"Booked a table for {name}."

        # P13: a European desk: 05/06/2024 is the 5th of June
        m = re.match(r"Move appointment (AP-\d+) to (.+?)\.?$", task)
        if m:
            appointment_id, when = m.groups()
            day, month, year = _day_month(when, day_first=True)
            tools.move_appointment(appointment_id=appointment_id, date=dt.date(year, month, day).isoformat())
            return f"Moved appointment {appointment_id}."

        # P14: quantity 0 means the line goes
        m = re.match(r"Set line (\d+) of order #(\d+) to quantity (\d+)\.?$", task)
        if m:
            line, order_id, qty = int(m.group(1)), m.group(2), int(m.group(3))
            tools.get_order(order_id=order_id)
            if qty == 0:
                tools.remove_line(order_id=order_id, line=line)
                return f"Removed line {line} from order {order_id}."
            tools.set_quantity(order_id=order_id, line=line, quantity=qty)
            return f"Line {line} of order {order_id} now has quantity {qty}."

        # P16: group names are case-insensitive in this directory
        m = re.match(r"Add ([\w.]+) to the ([\w-]+) group\.?$", task)
        if m:
            username, group = m.groups()
            user = tools.get_user(username=username)
            if group.lower() in (g.lower() for g in user["groups"]):
                return f"{username} is already in {group}."
            tools.add_to_group(username=username, group=group)
            return f"Added {username} to {group}."

        # P19: a user may have at most max_devices devices
        m = re.match(r"Register device (SN-\d+) for ([\w.]+)\.?$", task)
        if m:
            serial, username = m.groups()
            user = tools.get_user(username=username)
            if len(user["devices"]) >= user["max_devices"]:
                return f"{username} already has as many devices as allowed."
            tools.register_device(username=username, serial=serial)
            return f"Registered {serial} for {username}."

        # P20: one replacement for the item that broke
        m = re.match(r"The (\w+) from order #(\d+) arrived broken\.?$", task)
        if m:
            name, order_id = m.groups()
            order = tools.get_order(order_id=order_id)
            item = next(i for i in order["items"] if i["name"] == name)
            tools.send_replacement(order_id=order_id, sku=item["sku"], quantity=1)
            return f"Sent a replacement {name} for order {order_id}."

        # P21: cancel / return in one sentence shape
        m = re.match(r"Please (cancel|return) my order #(\d+) now\.?$", task)
        if m:
            verb, order_id = m.groups()
            order = tools.get_order(order_id=order_id)
            if order["status"] == "pending":
                tools.cancel_order(order_id=order_id)
                return f"Order {order_id} had not shipped yet, so I cancelled it."
            if verb == "return" and order["status"] == "delivered":
                tools.create_return(order_id=order_id)
                return f"Opened a return for order {order_id}."
            return f"Order {order_id} is {order['status']} and can no longer be cancelled."

        # P22: priority P1 pages on-call before queueing
        m = re.match(r"Triage ticket (T-\d+)\.?$", task)
        if m:
            ticket_id = m.group(1)
            ticket = tools.get_ticket(ticket_id=ticket_id)
            if ticket["priority"] == "P1":
                tools.page_oncall(ticket_id=ticket_id)
            tools.assign_ticket(ticket_id=ticket_id, queue="general")
            return f"Triaged ticket {ticket_id}."

        # P23: tracking number, if the order has one yet
        m = re.match(r"Where is order #(\d+)\?$", task)
        if m:
            order_id = m.group(1)
            order = tools.get_order(order_id=order_id)
            if order["tracking"]:
                return f"Order {order_id} is on its way: tracking number {order['tracking']}."
            return f"Order {order_id} has not shipped yet."

        # P24: a count of the invoices that are overdue
        m = re.match(r"How many overdue invoices does (C-\d+) have\?$", task)
        if m:
            customer_id = m.group(1)
            today = tools.get_today()["today"]
            invoices = tools.list_invoices(customer_id=customer_id)
            overdue = [i for i in invoices if i["due"] < today]
            return f"{customer_id} has {len(overdue)} overdue invoices."

        raise ValueError(f"cannot parse {task!r}")

    return agent
