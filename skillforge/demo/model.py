"""A rule-based stand-in for a chat model, for running the demo offline.

It is not a language model: it reads the ticket with regular expressions and
the tool results in the conversation, and answers in the chat-completions
protocol (tool calls, then a final answer), like a small, reliable agent would.
The demo labels it as a stand-in wherever it is used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..testing import answer, tool_call

__all__ = ["StandInModel"]

Step = Callable[[re.Match[str], list[Any]], dict[str, Any]]


def _refund(m: re.Match[str], results: list[Any]) -> dict[str, Any]:
    order_id = m.group("order")
    if not results:
        return tool_call("get_order", order_id=order_id)
    order = results[0]
    if "error" in order:
        return answer(f"I could not find order {order_id}.")
    if len(results) == 1:
        if order["status"] == "refunded":
            return answer(f"Order {order['id']} was already refunded.")
        return tool_call("refund_payment", order_id=order_id, payment_id=order["payment_id"], amount=order["total"])
    return answer(f"Refunded ${order['total']:.2f} to {order['payment_id']} for order {order_id}.")


def _address(m: re.Match[str], results: list[Any]) -> dict[str, Any]:
    order_id, address = m.group("order"), m.group("address")
    if not results:
        return tool_call("get_order", order_id=order_id)
    if "error" in results[0]:
        return answer(f"I could not find order {order_id}.")
    order = results[0]
    if len(results) == 1:
        if order["status"] == "delivered":
            return answer(f"Order {order_id} was already delivered, so its address cannot change.")
        if order["address_changed"]:
            return answer(f"The address of order {order_id} was already changed once; a person will follow up.")
        return tool_call("update_shipping_address", order_id=order_id, address=address)
    return answer(f"Order {order_id} will now ship to {address}.")


def _status(m: re.Match[str], results: list[Any]) -> dict[str, Any]:
    order_id = m.group("order")
    if not results:
        return tool_call("get_order", order_id=order_id)
    if "error" in results[0]:
        return answer(f"I could not find order {order_id}.")
    return answer(f"Order {order_id} is {results[0]['status']}.")


def _email(m: re.Match[str], results: list[Any]) -> dict[str, Any]:
    customer_id, email = m.group("customer"), m.group("email")
    if not results:
        return tool_call("get_customer", customer_id=customer_id)
    if "error" in results[0]:
        return answer(f"I could not find customer {customer_id}.")
    customer = results[0]
    if len(results) == 1:
        if customer["status"] != "active":
            return answer(f"The account of {customer['name']} is {customer['status']}, so I cannot change its email.")
        return tool_call("update_email", customer_id=customer_id, email=email)
    return answer(f"Updated the email of {customer['name']} to {email}.")


def _replace(m: re.Match[str], results: list[Any]) -> dict[str, Any]:
    order_id = m.group("order")
    product = (m.groupdict().get("product") or "").strip()
    if not results:
        return tool_call("get_order", order_id=order_id)
    order = results[0]
    if "error" in order:
        return answer(f"I could not find order {order_id}.")
    named = [it for it in order["items"] if it["name"] == product] if product else order["items"][:1]
    if not named:
        return answer(f"Order {order_id} has no {product}.")
    item = named[0]
    if len(results) == 1:
        return tool_call("get_stock", sku=item["sku"])
    if len(results) == 2:
        if results[1]["available"] <= 0:
            return answer(f"Sorry, the {item['name']} is out of stock; order {order_id} gets no replacement yet.")
        return tool_call("send_replacement", order_id=order_id, sku=item["sku"])
    return answer(f"Sent a replacement {item['name']} for order {order_id}.")


RULES: list[tuple[re.Pattern[str], Step]] = [
    (re.compile(r"refund\b.*?\border\s*#?(?P<order>\d+)", re.I), _refund),
    (re.compile(r"\bship\b.*?\border\s*#?(?P<order>\d+)\s+to\s+(?P<address>.+?)(?:\s+instead)?[.!]?$", re.I), _address),
    (re.compile(r"(?:where is|status of)\b.*?\border\s*#?(?P<order>\d+)", re.I), _status),
    (re.compile(r"\breplace the (?P<product>[a-z ]+?) from order\s*#?(?P<order>\d+)", re.I), _replace),
    (re.compile(r"\breplacement\b.*?\border\s*#?(?P<order>\d+)", re.I), _replace),
    (re.compile(r"\bemail\b.*?\bcustomer\s+(?P<customer>C-\d+)\s+to\s+(?P<email>[^\s@]+@[^\s@]+?)[.]?$", re.I), _email),
]


class StandInModel:
    """A chat-completions responder (for ``skillforge.testing.ChatServer``) that plays a support agent."""

    label = "stand-in (rule-based, offline)"

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        messages = request.get("messages", [])
        task = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
        results: list[Any] = []
        for msg in messages:
            if msg.get("role") == "tool":
                content = msg.get("content") or ""
                try:
                    results.append(json.loads(content))
                except json.JSONDecodeError:
                    results.append({"error": content})
        for pattern, step in RULES:
            m = pattern.search(task)
            if m:
                return step(m, results)
        return answer("Sorry, I cannot help with that ticket.")
