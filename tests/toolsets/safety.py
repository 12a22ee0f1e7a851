"""Tools, tiny in-memory worlds and plain-Python agents for the wrong-replay tests (tests/test_safety.py).

One world at a time lives in ``W`` (``load`` replaces it, ``state`` copies it out), so
the same task can be run with skills and by the agent alone on twin copies of one
starting world. Every write appends to ``W["writes"]``, so a write made twice shows.

The agents are what a careful tool-calling LLM does: parse the task, read, decide,
write, answer. Those that accept ``transcript=`` continue from the calls a skill
already made (a read is taken from the transcript, a write is never repeated).
"""

from __future__ import annotations

import copy
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from tests.toolsets._worlds import dict_world

W, load, state = dict_world()  # the current world; load(world) makes a deep copy of one current


def _write(tool: str, **args: Any) -> None:
    W["writes"].append((tool, args))


# -- a user directory -------------------------------------------------------------------------------

def is_member(user: dict, group: str) -> bool:
    groups = user["groups"]
    if isinstance(groups, dict):  # {"vpn-users": {"since": ...}}
        return group in groups
    return any(g == group or (isinstance(g, dict) and g.get("name") == group) for g in groups)


def get_user(username: str) -> dict:
    """Look up a user in the directory by username (like "carol.diaz")."""
    if username not in W["users"]:
        raise KeyError(f"no user {username!r}")
    return copy.deepcopy(W["users"][username])


def add_to_group(username: str, group: str) -> dict:
    """Add a user to a group (the directory does not check for duplicates)."""
    groups = W["users"][username]["groups"]
    if isinstance(groups, dict):
        groups[group] = {"since": "2024-06-01"}
    elif groups and isinstance(groups[0], dict):
        groups.append({"name": group, "role": "member"})
    else:
        groups.append(group)
    _write("add_to_group", username=username, group=group)
    return {"username": username, "group": group, "added": True}


def remove_from_group(username: str, group: str) -> dict:
    """Remove a user from a group."""
    groups = W["users"][username]["groups"]
    if group not in groups:
        raise ValueError(f"{username} is not in {group}")
    groups.remove(group)
    _write("remove_from_group", username=username, group=group)
    return {"group": group, "removed": True}


def order_laptop(username: str, model: str, office: str) -> dict:
    """Order a laptop for a user, shipped to an office."""
    ref = f"L-{len(W['writes']) + 1}"
    _write("order_laptop", username=username, model=model, office=office)
    return {"ref": ref, "status": "ordered"}


def search_users(query: str) -> list:
    """Search the directory by username, name or email; the best matches first (at most 3)."""
    words = set(re.findall(r"[a-z0-9]+", query.lower()))
    scored = []
    for user in W["users"].values():
        keys = set(re.findall(r"[a-z0-9]+", f"{user['username']} {user['name']} {user['email']}".lower()))
        if words & keys:
            scored.append((-len(words & keys), user["username"]))
    return [
        {k: W["users"][u][k] for k in ("id", "username", "name", "email")} for _score, u in sorted(scored)[:3]
    ]


def reset_password(user_id: str) -> dict:
    """Reset a user's password (by user id, like "U-3"); they get a link by email."""
    user = next((u for u in W["users"].values() if u["id"] == user_id), None)
    if user is None:
        raise KeyError(f"no user with id {user_id!r}")
    _write("reset_password", user_id=user_id)
    return {"sent_to": user["email"]}


# -- a shop ------------------------------------------------------------------------------------------

def get_customer(customer_id: str) -> dict:
    """Look up a customer (name, orders) by id, like "noah_kim_4410"."""
    if customer_id not in W["customers"]:
        raise KeyError(f"no customer {customer_id!r}")
    return copy.deepcopy(W["customers"][customer_id])


def get_order(order_id: str) -> dict:
    """Look up an order by its id, like "#W3586556"."""
    if order_id not in W["orders"]:
        raise KeyError(f"no order {order_id!r}")
    return copy.deepcopy(W["orders"][order_id])


def cancel_order(order_id: str, reason: str) -> dict:
    """Cancel a pending order; reason is a note for the records (like "ordered by mistake")."""
    order = W["orders"][order_id]
    if order["status"] != "pending":
        raise ValueError(f"order {order_id} is {order['status']}")
    order["status"] = "cancelled"
    _write("cancel_order", order_id=order_id, reason=reason)
    return {"order_id": order_id, "status": "cancelled"}


def refund(order_id: str, amount: float) -> dict:
    """Refund an amount of an order to its payment method."""
    W["orders"][order_id]["refunded"] = round(W["orders"][order_id].get("refunded", 0) + amount, 2)
    _write("refund", order_id=order_id, amount=amount)
    return {"order_id": order_id, "amount": amount, "status": "refunded"}


def refund_payment(order_id: str, amount: float) -> dict:
    """Refund a payment through the payment provider (it can time out after committing)."""
    W["orders"][order_id]["refunded"] = round(W["orders"][order_id].get("refunded", 0) + amount, 2)
    _write("refund_payment", order_id=order_id, amount=amount)
    if W.get("timeouts", 0) > 0:  # the provider committed, then the connection dropped
        W["timeouts"] -= 1
        raise TimeoutError("payment provider did not answer in 10 s")
    return {"order_id": order_id, "amount": amount, "status": "refunded"}


def discount(order_id: str, amount: float, unit: str) -> dict:
    """Discount an order by an amount; unit is "percent" or "usd"."""
    _write("discount", order_id=order_id, amount=amount, unit=unit)
    return {"order_id": order_id, "ok": True}


def set_quantity(order_id: str, line: int, quantity: int) -> dict:
    """Set the quantity of one line of an order."""
    W["orders"][order_id]["lines"][line - 1]["quantity"] = quantity
    _write("set_quantity", order_id=order_id, line=line, quantity=quantity)
    return {"ok": True}


# -- an account ledger -------------------------------------------------------------------------------

def get_account(account_id: str) -> dict:
    """Look up an account by id, like "A-1"."""
    return copy.deepcopy(W["accounts"][account_id])


def adjust_balance(account_id: str, amount: float) -> dict:
    """Add ``amount`` (negative to debit) to an account's balance."""
    W["accounts"][account_id]["balance"] = round(W["accounts"][account_id]["balance"] + amount, 2)
    _write("adjust_balance", account_id=account_id, amount=amount)
    return {"ok": True}


READS = [get_user, search_users, get_customer, get_order, get_account]
WRITES = [
    add_to_group, remove_from_group, order_laptop, reset_password,
    cancel_order, refund, refund_payment, discount, set_quantity, adjust_balance,
]


# -- agents ------------------------------------------------------------------------------------------

class Tools:
    """The tools as one agent sees them: a call already in the transcript (read or write) is not made again."""

    def __init__(self, tools: dict[str, Any], transcript: list | None = None) -> None:
        self.tools = tools
        self.transcript = list(transcript or [])

    def __getattr__(self, name: str) -> Any:
        tool = self.tools[name]

        def call(**args: Any) -> Any:
            for c in self.transcript:
                if c.tool == name and c.args == args:
                    if c.error is not None:
                        raise RuntimeError(c.error)
                    return c.result  # already done (a write is never repeated)
            return tool(**args)

        return call


def group_agent(t: dict[str, Any]):
    """Group requests: "Add USER to the GROUP group", "Remove USER from the GROUP group", "Which groups is USER in?"."""

    def agent(task: str, transcript: list | None = None) -> str:
        tools = Tools(t, transcript)
        m = re.match(r"Add ([\w.]+) to the ([\w-]+) group\.?$", task)
        if m:
            username, group = m.groups()
            user = tools.get_user(username=username)
            if is_member(user, group):
                return f"{username} is already in {group}."
            tools.add_to_group(username=username, group=group)
            return f"Added {username} to {group}."
        m = re.match(r"Remove ([\w.]+) from the ([\w-]+) group\.?$", task)
        if m:
            username, group = m.groups()
            user = tools.get_user(username=username)
            if group not in user["groups"]:
                return f"{username} is not in {group}."
            tools.remove_from_group(username=username, group=group)
            return f"Removed {username} from {group}."
        m = re.match(r"Which groups is ([\w.]+) in\?$", task)
        if m:
            user = tools.get_user(username=m.group(1))
            return f"{m.group(1)} is in: {', '.join(sorted(user['groups']))}."
        raise ValueError(f"cannot parse {task!r}")

    return agent


def helpdesk_agent(t: dict[str, Any]):
    """Password resets (and a group on the side) and laptop orders, as an LLM reads them."""

    def agent(task: str, transcript: list | None = None) -> str:
        tools = Tools(t, transcript)
        m = re.match(r"New laptop for ([\w.]+): (.+)$", task)
        if m:
            username, model = m.groups()
            user = tools.get_user(username=username)
            if "eligible_models" in user and model not in user["eligible_models"]:
                return f"A {model} is not on the list of laptops {user['name']} may order."
            order = tools.order_laptop(username=username, model=model, office=user["office"])
            return f"Ordered a {model} for {user['name']} ({order['ref']})."
        m = re.match(r"Reset the password for ([A-Za-z]+[. ][A-Za-z]+)(.*)$", task)
        if m:
            who, rest = m.groups()
            found = tools.search_users(query=who)
            if not found:
                return f"I could not find {who}."
            user = found[0]
            sent = tools.reset_password(user_id=user["id"])
            answer = f"Sent a reset link for {who} to {sent['sent_to']}."
            g = re.search(r"add (?:him|her|them) to the ([\w-]+) group", rest)
            if g:
                tools.add_to_group(username=user["username"], group=g.group(1))
                answer += f" Added {who} to {g.group(1)}."
            return answer
        raise ValueError(f"cannot parse {task!r}")

    return agent


def shop_agent(t: dict[str, Any]):
    """A retail agent (tau-bench style): cancellations, refunds, discounts, quantities, balances."""

    def agent(task: str, transcript: list | None = None) -> str:
        tools = Tools(t, transcript)
        m = re.search(r"I'm (\w+)\. Please cancel order (#W\d+) because (ordered by mistake|no longer needed)", task)
        if m:
            customer_id, order_id, reason = m.groups()
            customer = tools.get_customer(customer_id=customer_id)
            if order_id not in customer["orders"]:
                return f"Order {order_id} is not one of yours."
            order = tools.get_order(order_id=order_id)
            if re.search(r"do not do any of the above|only wanted to know the status", task):
                return f"Order {order_id} is {order['status']}. Nothing was changed."
            if order["status"] != "pending":
                return f"Order {order_id} is {order['status']} and cannot be cancelled."
            tools.cancel_order(order_id=order_id, reason=reason)
            return f"Cancelled order {order_id}."
        m = re.match(r"Refund \$(\d+(?:\.\d+)?) of order #(\d+)\.?$", task)
        if m:
            amount, order_id = float(m.group(1)), m.group(2)
            tools.get_order(order_id=order_id)
            tools.refund(order_id=order_id, amount=amount)
            return f"Refunded ${amount:.2f} of order {order_id}."
        m = re.match(r"Refund (-?\d+(?:\.\d+)?) on order #(\d+)\.?$", task)
        if m:
            amount, order_id = float(m.group(1)), m.group(2)
            tools.refund(order_id=order_id, amount=amount)
            return f"Refunded {amount:g} on order {order_id}."
        m = re.match(r"Discount (\$?)(\d+(?:\.\d+)?)(%?) on order #(\d+)\.?$", task)
        if m:
            _dollar, amount, percent, order_id = m.groups()
            unit = "percent" if percent else "usd"
            tools.discount(order_id=order_id, amount=float(amount), unit=unit)
            return f"Discounted order {order_id} by {amount}{'%' if percent else ' USD'}."
        m = re.match(r"Set line (\d+) of order #(\d+) to quantity (\d+)\.?$", task)
        if m:
            line, order_id, qty = int(m.group(1)), m.group(2), int(m.group(3))
            tools.get_order(order_id=order_id)
            tools.set_quantity(order_id=order_id, line=line, quantity=qty)
            return f"Line {line} of order {order_id} now has quantity {qty}."
        m = re.match(r"Adjust the balance of account (A-\d+) by (-?\d+(?:\.\d+)?)\.?$", task)
        if m:
            account_id, amount = m.group(1), float(m.group(2))
            tools.get_account(account_id=account_id)
            tools.adjust_balance(account_id=account_id, amount=amount)
            return f"Adjusted {account_id} by {amount:g}."
        raise ValueError(f"cannot parse {task!r}")

    return agent


def _refusal(order: dict) -> str | None:
    """Why the agent will not refund ``order`` (None if it will): the policy it reads off the order."""
    if order.get("fraud_hold") and not order.get("approved"):
        return "it is on a fraud hold that was not approved"
    status = order.get("status", "").lower()
    if status not in ("shipped", "delivered", "in transit"):
        return f"it is {order['status']}"
    if order.get("payment", {}).get("card", {}).get("blocked"):
        return "the card it was paid with is blocked"
    if any(item.get("final_sale") for item in order.get("items", [])):
        return "it has a final-sale item"
    if order.get("zz_blocked"):
        return "the account is blocked"
    return None


def returns_agent(t: dict[str, Any]):
    """Refunds: a whole order (after the policy checks), a partial amount, each item in parallel."""

    def agent(task: str, transcript: list | None = None) -> str:
        tools = Tools(t, transcript)
        m = re.match(r"Refund order #(\d+)\.?$", task)
        if m:
            order_id = m.group(1)
            order = tools.get_order(order_id=order_id)
            why = _refusal(order)
            if why:
                return f"Order {order_id} cannot be refunded: {why}."
            tools.refund(order_id=order_id, amount=order["total"])
            return f"Refunded ${order['total']:.2f} for order {order_id}."
        m = re.match(r"Refund each item of order #(\d+)\.?$", task)
        if m:
            order_id = m.group(1)
            order = tools.get_order(order_id=order_id)
            # the model asked for one refund per item in a single turn: they run in parallel
            with ThreadPoolExecutor(max_workers=4) as pool:
                done = list(pool.map(lambda item: t["refund"](order_id=order_id, amount=item["price"]), order["items"]))
            return f"Refunded {len(done)} items of order {order_id}."
        raise ValueError(f"cannot parse {task!r}")

    return agent


def goodwill_agent(t: dict[str, Any]):
    """Partial refunds through a payment provider that can time out after committing.

    It takes no transcript: when a skill hands over, it starts afresh.
    """

    def agent(task: str) -> str:
        m = re.match(r"Refund \$(\d+) of order #(\d+) for the late delivery\.?$", task)
        if not m:
            raise ValueError(f"cannot parse {task!r}")
        amount, order_id = float(m.group(1)), m.group(2)
        order = t["get_order"](order_id=order_id)
        if order["status"] != "delivered":
            return f"Order {order_id} has not been delivered yet."
        try:
            t["refund_payment"](order_id=order_id, amount=amount)
        except TimeoutError:  # the provider may well have committed it: never send a refund twice
            return f"The refund of ${amount:.2f} for order {order_id} was sent; the provider is slow to confirm."
        return f"Refunded ${amount:.2f} for order {order_id}."

    return agent
