"""Tools, worlds and the agent for the second round of red-team probes (tests/test_probes_round2.py).

Same conventions as ``tests/toolsets/safety.py`` and ``tests/toolsets/probes.py``: one world at
a time lives in ``W`` (``load`` replaces it, ``state`` copies it out), every write appends to
``W["writes"]``, and the agent is what a careful tool-calling LLM does: parse the task, read,
decide on values the tools returned (and on its written policy), write, answer. It accepts
``transcript=`` and continues from the calls a skill already made (a write is never repeated).

The write tools do not enforce business policy themselves (as in tau-bench, the policy is the
agent's): a wrong replay shows as a write, or an answer, the agent alone would not make.
"""

from __future__ import annotations

import ast
import copy
import re
from typing import Any

from tests.toolsets.safety import Tools
from tests.toolsets._worlds import dict_world

W, load, state = dict_world()  # the current world; load(world) makes a deep copy of one current


def _write(tool: str, **args: Any) -> None:
    W["writes"].append((tool, args))


def _get(table: str, key: str) -> Any:
    if key not in W.get(table, {}):
        raise KeyError(f"no {table[:-1]} {key!r}")
    return copy.deepcopy(W[table][key])


# -- reads -------------------------------------------------------------------------------------------

def get_order(order_id: str) -> dict:
    """Look up an order by its id (like "5")."""
    return _get("orders", order_id)


def get_customer(customer_id: str) -> dict:
    """Look up a customer by id (like "C-7"): email, accounts, orders."""
    return _get("customers", customer_id)


def get_account(account_id: str) -> dict:
    """Look up a bank account by id (like "A-1"): its balance and features."""
    return _get("accounts", account_id)


def get_user(username: str) -> dict:
    """Look up a directory user by username (like "erin.wu")."""
    return _get("users", username)


def search_users(query: str) -> list:
    """Usernames that look like ``query`` (the directory's fuzzy search: at most 3, best first)."""
    def close(a: str, b: str) -> bool:
        return a == b or (len(a) == len(b) and sum(x != y for x, y in zip(a, b)) <= 1) or a.startswith(b) or b.startswith(a)

    return [u for u in sorted(W["users"]) if close(u, query)][:3]


def get_ticket(ticket_id: str) -> dict:
    """Look up a ticket (incident, change, request) by its number, like "INC-4820"."""
    return _get("tickets", ticket_id)


def search_flights(origin: str, destination: str, date: str) -> list:
    """Direct flights from ``origin`` to ``destination`` on ``date`` (ISO), with today's fares."""
    return copy.deepcopy(W["flights"].get(f"{origin}-{destination}-{date}", []))


def get_product(product_id: str) -> dict:
    """A product of the catalogue with its variants (by variant id: options, whether in stock)."""
    return _get("products", product_id)


def get_loan(loan_id: str) -> dict:
    """Look up a library loan by id (like "L-1"): its due date and the latest date it may be extended to."""
    return _get("loans", loan_id)


# -- writes ------------------------------------------------------------------------------------------

def refund(order_id: str, amount: float) -> dict:
    """Refund an amount of an order to its payment method."""
    _write("refund", order_id=order_id, amount=amount)
    return {"status": "refunded"}


def request_approval(order_id: str, amount: float) -> dict:
    """Ask a manager to approve a refund (refunds over the agent's limit)."""
    _write("request_approval", order_id=order_id, amount=amount)
    return {"status": "pending approval"}


def cancel_order(order_id: str) -> dict:
    """Cancel an order."""
    _write("cancel_order", order_id=order_id)
    return {"status": "cancelled"}


def create_return(order_id: str, category: str, comment: str) -> dict:
    """Open a return; category is "changed_mind" or "damaged", comment is the customer's words."""
    _write("create_return", order_id=order_id, category=category, comment=comment)
    return {"status": "return opened"}


def return_items(order_id: str, skus: list[str]) -> dict:
    """Return some items of a delivered order (the agent checks none was returned before)."""
    _write("return_items", order_id=order_id, skus=list(skus))
    return {"status": "return started"}


def exchange_items(order_id: str, item_ids: list[str], new_item_ids: list[str]) -> dict:
    """Exchange items of a delivered order for other variants of the same products."""
    _write("exchange_items", order_id=order_id, item_ids=list(item_ids), new_item_ids=list(new_item_ids))
    return {"status": "exchange requested"}


def withdraw(account_id: str, amount: float) -> dict:
    """Withdraw an amount from an account (the ledger does not check the balance)."""
    _write("withdraw", account_id=account_id, amount=amount)
    return {"ok": True}


def customer_withdraw(customer_id: str, account: str, amount: float) -> dict:
    """Withdraw an amount from one of a customer's accounts ("checking", "savings")."""
    _write("customer_withdraw", customer_id=customer_id, account=account, amount=amount)
    return {"ok": True}


def enable_feature(account_id: str, feature: str) -> dict:
    """Turn a feature on for an account."""
    _write("enable_feature", account_id=account_id, feature=feature)
    return {"ok": True}


def add_to_group(username: str, group: str) -> dict:
    """Add a user to a group (the directory does not check for duplicates)."""
    _write("add_to_group", username=username, group=group)
    return {"added": True}


def reset_password(username: str) -> dict:
    """Send a user a password reset link."""
    _write("reset_password", username=username)
    return {"sent": True}


def book_flight(flight_id: str, passenger: str) -> dict:
    """Book a seat on a flight for a passenger."""
    _write("book_flight", flight_id=flight_id, passenger=passenger)
    return {"status": "booked"}


def page_oncall(ticket_id: str) -> dict:
    """Page the on-call engineer about a ticket."""
    _write("page_oncall", ticket_id=ticket_id)
    return {"ok": True}


def assign_ticket(ticket_id: str, queue: str) -> dict:
    """Assign a ticket to a queue."""
    _write("assign_ticket", ticket_id=ticket_id, queue=queue)
    return {"ok": True}


def close_ticket(ticket_id: str) -> dict:
    """Close a ticket."""
    _write("close_ticket", ticket_id=ticket_id)
    return {"ok": True}


def extend_loan(loan_id: str, due: str) -> dict:
    """Move a loan's due date (ISO)."""
    _write("extend_loan", loan_id=loan_id, due=due)
    return {"ok": True}


def change_email(customer_id: str, email: str) -> dict:
    """Change the email address on file for a customer."""
    _write("change_email", customer_id=customer_id, email=email)
    return {"ok": True}


READS = [get_order, get_customer, get_account, get_user, search_users, get_ticket, search_flights, get_loan, get_product]
WRITES = [
    refund, request_approval, cancel_order, create_return, return_items, withdraw, customer_withdraw, enable_feature,
    add_to_group, reset_password, book_flight, page_oncall, assign_ticket, close_ticket, extend_loan, change_email,
    exchange_items,
]


# -- the agent ---------------------------------------------------------------------------------------

REFUND_LIMIT = 500.0  # policy: refunds above this need a manager's approval
CLOSED = ("shipped", "delivered", "cancelled")  # policy: orders in these states cannot be cancelled
BLOCKING_TAGS = ("chargeback", "fraud_review")  # policy: no refunds while an order carries these tags


def _natural(items: list[str]) -> str:
    """"a", "a and b", "a, b and c": a list as people write it."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def probe_agent(t: dict[str, Any]):
    """One agent for every probe's task shape (each test uses only the shapes it needs)."""

    def agent(task: str, transcript: list | None = None) -> str:
        tools = Tools(t, transcript)

        # R01: refunds above the agent's limit go to a manager
        m = re.match(r"Refund order #(\d+)\.?$", task)
        if m:
            order_id = m.group(1)
            order = tools.get_order(order_id=order_id)
            if order["total"] > REFUND_LIMIT:
                tools.request_approval(order_id=order_id, amount=order["total"])
                return f"A refund of ${order['total']:.2f} for order {order_id} needs a manager's approval; I have asked for it."
            tools.refund(order_id=order_id, amount=order["total"])
            return f"Refunded ${order['total']:.2f} for order {order_id}."

        # R23: a customer who names themselves is checked against the order's customer
        m = re.match(r"I am ([A-Z][a-z]+) ([A-Z][a-z]+)\. Cancel order #(\d+)\.?$", task)
        if m:
            first, order_id = m.group(1), m.group(3)
            order = tools.get_order(order_id=order_id)
            owner = tools.get_customer(customer_id=order["customer_id"])
            if owner["first_name"] != first:
                return f"Order {order_id} is not yours, so I cannot cancel it."
            tools.cancel_order(order_id=order_id)
            return f"Cancelled order {order_id}."

        # R25: return the items named, unless one of them was returned already
        m = re.match(r"Return from order #(\d+): ((?:[A-Z][a-z]+(?: [A-Z][a-z]+)?; )+)$", task)
        if m:
            order_id, names = m.group(1), [n for n in m.group(2).split("; ") if n]
            order = tools.get_order(order_id=order_id)
            items = [next(i for i in order["items"] if i["name"] == n) for n in names]
            done = [i["name"] for i in items if i["status"] != "delivered"]
            if done:
                return f"{_natural(done)} from order {order_id} cannot be returned again."
            tools.return_items(order_id=order_id, skus=[i["sku"] for i in items])
            return f"Return started for order {order_id}."

        # R02 / R18: cancel unless it has already left the warehouse
        m = re.match(r"Cancel order #(\d+)\.?$", task)
        if m:
            order_id = m.group(1)
            order = tools.get_order(order_id=order_id)
            if order["status"] in CLOSED:
                return f"Order {order_id} is {order['status']} and can no longer be cancelled."
            tools.cancel_order(order_id=order_id)
            return f"Cancelled order {order_id}."

        # R03: a withdrawal from one of the customer's accounts (a list) the balance must cover
        m = re.match(r"Withdraw \$(\d+(?:\.\d+)?) from account (A-\d+) of customer (C-\d+)\.?$", task)
        if m:
            amount, account_id, customer_id = float(m.group(1)), m.group(2), m.group(3)
            customer = tools.get_customer(customer_id=customer_id)
            account = next((a for a in customer["accounts"] if a["account_id"] == account_id), None)
            if account is None:
                return f"Account {account_id} is not one of customer {customer_id}'s accounts."
            if account["balance"] < amount:
                return f"Account {account_id} does not have ${amount:.2f}."
            tools.withdraw(account_id=account_id, amount=amount)
            return f"Withdrew ${amount:.2f} from account {account_id}."

        # R04: the same with the balance as the bank's API writes money: a decimal string
        m = re.match(r"Withdraw \$(\d+(?:\.\d+)?) from account (A-\d+)\.?$", task)
        if m:
            amount, account_id = float(m.group(1)), m.group(2)
            account = tools.get_account(account_id=account_id)
            if float(account["balance"]) < amount:
                return f"Account {account_id} does not have ${amount:.2f}."
            tools.withdraw(account_id=account_id, amount=amount)
            return f"Withdrew ${amount:.2f} from account {account_id}."

        # R05: the named account of a customer (checking / savings) must be open
        m = re.match(r"Withdraw \$(\d+(?:\.\d+)?) from the (checking|savings) account of customer (C-\d+)\.?$", task)
        if m:
            amount, which, customer_id = float(m.group(1)), m.group(2), m.group(3)
            customer = tools.get_customer(customer_id=customer_id)
            account = customer["accounts"][which]
            if account["status"] != "open":
                return f"The {which} account of customer {customer_id} is {account['status']}; nothing was withdrawn."
            tools.customer_withdraw(customer_id=customer_id, account=which, amount=amount)
            return f"Withdrew ${amount:.2f} from the {which} account of customer {customer_id}."

        # R06: no refund while the order carries a blocking tag
        m = re.match(r"Issue a refund for order #(\d+)\.?$", task)
        if m:
            order_id = m.group(1)
            order = tools.get_order(order_id=order_id)
            blocking = [tag for tag in order["tags"] if tag in BLOCKING_TAGS]
            if blocking:
                return f"Order {order_id} is under {blocking[0]}; no refund for now."
            tools.refund(order_id=order_id, amount=order["total"])
            return f"Refunded ${order['total']:.2f} for order {order_id}."

        # R07: the cheapest of the day's flights
        m = re.match(r"Book the cheapest flight from ([A-Z]{3}) to ([A-Z]{3}) on (\d{4}-\d{2}-\d{2}) for (\w+)\.?$", task)
        if m:
            origin, destination, date, passenger = m.groups()
            flights = tools.search_flights(origin=origin, destination=destination, date=date)
            if not flights:
                return f"There are no flights from {origin} to {destination} on {date}."
            best = min(flights, key=lambda f: f["price"])
            tools.book_flight(flight_id=best["flight_id"], passenger=passenger)
            return f"Booked {best['flight_id']} for {passenger}."

        # R08: the answer carries the desk's boilerplate (refunds take 5 business days)
        m = re.match(r"Please refund order #(\d+)\.?$", task)
        if m:
            order_id = m.group(1)
            order = tools.get_order(order_id=order_id)
            tools.refund(order_id=order_id, amount=order["total"])
            return f"Refunded ${order['total']:.2f} for order {order_id}; it reaches your card within 5 business days."

        # R09: groups listed as people list things ("a, b and c")
        m = re.match(r"Which groups is ([\w.]+) in\?$", task)
        if m:
            user = tools.get_user(username=m.group(1))
            return f"{m.group(1)} is in {_natural(user['groups'])}."

        # R10: tags in alphabetical order, as a person sorts them (case aside)
        m = re.match(r"List the tags of ticket ([A-Z]+-\d+)\.?$", task)
        if m:
            ticket = tools.get_ticket(ticket_id=m.group(1))
            return f"Ticket {m.group(1)} is tagged {', '.join(sorted(ticket['tags'], key=str.lower))}."

        # R11: severity 1 pages on-call before queueing
        m = re.match(r"Triage incident ([A-Z]+-\d+)\.?$", task)
        if m:
            ticket_id = m.group(1)
            ticket = tools.get_ticket(ticket_id=ticket_id)
            if ticket["severity"] == 1:
                tools.page_oncall(ticket_id=ticket_id)
            tools.assign_ticket(ticket_id=ticket_id, queue="ops")
            return f"Triaged {ticket_id}."

        # R12: an item already returned is not refunded again
        m = re.match(r"Refund the items of order #(\d+)\.?$", task)
        if m:
            order_id = m.group(1)
            order = tools.get_order(order_id=order_id)
            if any(item["status"] == "returned" for item in order["items"]):
                return f"Order {order_id} has an item that was already returned and refunded."
            tools.refund(order_id=order_id, amount=order["total"])
            return f"Refunded ${order['total']:.2f} for order {order_id}."

        # R13: the directory keeps groups as comma-separated text
        m = re.match(r"Add ([\w.]+) to the ([\w-]+) group\.?$", task)
        if m:
            username, group = m.groups()
            user = tools.get_user(username=username)
            if group in user["groups"].split(","):
                return f"{username} is already in {group}."
            tools.add_to_group(username=username, group=group)
            return f"Added {username} to {group}."

        # R14: a feature already on is not turned on again
        m = re.match(r"Enable the (\w+) feature for account (A-\d+)\.?$", task)
        if m:
            feature, account_id = m.groups()
            account = tools.get_account(account_id=account_id)
            if account["features"].get(feature):
                return f"{feature} is already on for account {account_id}."
            tools.enable_feature(account_id=account_id, feature=feature)
            return f"Turned on {feature} for account {account_id}."

        # R27: an exchange of several items, each for the variant of its product the change asks for, in stock
        m = re.match(r"Exchange from order #(\d+): (.+); thanks\.?$", task)
        if m:
            order_id = m.group(1)
            asked = [re.fullmatch(r"([A-Z][a-z]+(?: [A-Z][a-z]+)?) (\{.*?\}) to (\{.*?\})", part) for part in m.group(2).split("; ")]
            order = tools.get_order(order_id=order_id)
            olds, news = [], []
            for a in asked:
                name, options, change = a.group(1), ast.literal_eval(a.group(2)), ast.literal_eval(a.group(3))
                item = next(i for i in order["items"] if i["name"] == name and i["options"] == options)
                product = tools.get_product(product_id=item["product_id"])
                want = {**options, **change}
                new = next((v for v in product["variants"].values() if v["options"] == want), None)
                if new is None or not new["in_stock"]:
                    return f"{name} in {want} is not available, so nothing was exchanged."
                olds.append(item["item_id"])
                news.append(new["item_id"])
            tools.exchange_items(order_id=order_id, item_ids=olds, new_item_ids=news)
            return f"Exchange requested for order {order_id}."

        # R26: two phrasings of one reset; the second says to go ahead even for a locked account
        m = re.match(r"Send ([\w.]+) a password reset link\.?$", task)
        if m:
            username = m.group(1)
            user = tools.get_user(username=username)
            if user["locked"]:
                return f"{username} is locked out; an admin must unlock the account before a reset."
            tools.reset_password(username=username)
            return f"Sent a password reset link to {username}."
        m = re.match(r"([\w.]+) is locked out, please send them a reset link anyway\.?$", task)
        if m:
            username = m.group(1)
            tools.get_user(username=username)
            tools.reset_password(username=username)
            return f"Sent a password reset link to {username}."

        # R15: the directory search is fuzzy: only an exact username is that user
        m = re.match(r"Reset the password for ([\w.]+)\.?$", task)
        if m:
            username = m.group(1)
            found = tools.search_users(query=username)
            if username not in found:
                return f"I could not find a user {username}."
            tools.reset_password(username=username)
            return f"Sent a password reset link to {username}."

        # R16: the return's category is read off the customer's words
        m = re.match(r"Return order #(\d+) because (.+?)\.?$", task)
        if m:
            order_id, reason = m.groups()
            tools.get_order(order_id=order_id)
            category = "damaged" if re.search(r"broke|damag|defect|crack", reason) else "changed_mind"
            tools.create_return(order_id=order_id, category=category, comment=reason)
            return f"Opened a return for order {order_id}."

        # R17: change requests (CHG numbers) are closed by the change board, not the desk
        m = re.match(r"Close ticket ([A-Z]+-\d+)\.?$", task)
        if m:
            ticket_id = m.group(1)
            ticket = tools.get_ticket(ticket_id=ticket_id)
            if ticket_id.startswith("CHG-"):
                return f"{ticket_id} is a change request; the change advisory board closes those."
            if ticket["state"] != "resolved":
                return f"{ticket_id} is {ticket['state']}; it must be resolved before it is closed."
            tools.close_ticket(ticket_id=ticket_id)
            return f"Closed {ticket_id}."

        # R18b: cancel, or for a delivered order, a return
        m = re.match(r"Please (cancel|return) my order #(\d+) now\.?$", task)
        if m:
            verb, order_id = m.groups()
            order = tools.get_order(order_id=order_id)
            if order["status"] == "pending":
                tools.cancel_order(order_id=order_id)
                return f"Order {order_id} had not shipped yet, so I cancelled it."
            if verb == "return" and order["status"] == "delivered":
                tools.create_return(order_id=order_id, category="changed_mind", comment="")
                return f"Opened a return for order {order_id}."
            return f"Order {order_id} is {order['status']} and can no longer be cancelled."

        # R19: a balance question about one of a customer's accounts (keyed by account id)
        m = re.match(r"What is the balance of account (A-\d+) of customer (C-\d+)\?$", task)
        if m:
            account_id, customer_id = m.groups()
            customer = tools.get_customer(customer_id=customer_id)
            if account_id not in customer["accounts"]:
                return f"Customer {customer_id} has no account {account_id}."
            return f"Account {account_id} has ${customer['accounts'][account_id]['balance']:.2f}."

        # R20: a loan may be extended up to its latest date
        m = re.match(r"Extend loan (L-\d+) to (\d{4}-\d{2}-\d{2})\.?$", task)
        if m:
            loan_id, due = m.groups()
            loan = tools.get_loan(loan_id=loan_id)
            if due > loan["latest_due"]:
                return f"Loan {loan_id} can be extended to {loan['latest_due']} at the latest."
            tools.extend_loan(loan_id=loan_id, due=due)
            return f"Loan {loan_id} is now due on {due}."

        # R21: the address already on file is not changed again
        m = re.match(r"Change the email of customer (C-\d+) to (\S+@\S+?)\.?$", task)
        if m:
            customer_id, email = m.groups()
            customer = tools.get_customer(customer_id=customer_id)
            if customer["email"] == email:
                return f"{email} is already the email on file for {customer_id}."
            tools.change_email(customer_id=customer_id, email=email)
            return f"Changed the email of {customer_id} to {email}."

        # R22: an order on hold (any hold) is not refunded
        m = re.match(r"Refund delivered order #(\d+)\.?$", task)
        if m:
            order_id = m.group(1)
            order = tools.get_order(order_id=order_id)
            if order["holds"]:
                return f"Order {order_id} is on hold ({', '.join(sorted(order['holds']))}); no refund for now."
            tools.refund(order_id=order_id, amount=order["total"])
            return f"Refunded ${order['total']:.2f} for order {order_id}."

        # R29: a payment method the task names by a word of its own, which the customer may not hold
        m = re.match(r"Pay order #(\d+) of customer (C-\d+) with PayPal\.?$", task)
        if m:
            order_id, customer_id = m.groups()
            customer = tools.get_customer(customer_id=customer_id)
            paypal = [pm for pm in customer["methods"] if pm["source"] == "paypal"]
            if not paypal:
                return f"I don't see a PayPal account for customer {customer_id}."
            tools.refund(order_id=order_id, amount=0.0)  # stands in for a payment change
            return f"Order {order_id} is now paid with {paypal[0]['id']}."

        # R28: the resolution is the note's last line (a ticket closed twice keeps both notes)
        m = re.match(r"How was ticket ([A-Z]+-\d+) resolved\?$", task)
        if m:
            ticket = tools.get_ticket(ticket_id=m.group(1))
            return f"{m.group(1)} was resolved: {ticket['note'].splitlines()[-1]}."

        # R28b: the whole note, as it is
        m = re.match(r"Show the note of ticket ([A-Z]+-\d+)\.?$", task)
        if m:
            ticket = tools.get_ticket(ticket_id=m.group(1))
            return f"The note of {m.group(1)} says: {ticket['note']}"

        raise ValueError(f"cannot parse {task!r}")

    return agent
