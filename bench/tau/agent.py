"""A deterministic stand-in for a model on tau-bench retail tasks.

The agent knows each task's gold write calls (it looks the task up by its text: the instruction,
with or without its persona sentence) and
behaves as a careful agent that gets them right would:

1. it identifies the customer: ``find_user_id_by_email`` with the email as the task writes it
   when the task gives the account's email, else ``find_user_id_by_name_zip`` with the
   account's name and zip;
2. it reads the customer (``get_user_details``);
3. before each gold write it reads the order the write touches (``get_order_details``, once per
   order) and, for a swap of items (modify or exchange), the product of each item swapped
   (``get_product_details``, once per product);
4. it makes the gold write, with the gold arguments (a write the database refuses returns an
   ``"Error: ..."`` string; the agent goes on, as the gold replay does);
5. it answers with a short sentence per write and, if the task has ``outputs``, those values.

Given ``transcript=`` (the calls a skill already made before handing over), it continues from
there: a call it would make that the transcript already holds, with the same arguments, is not
made again; its result is taken from the transcript. So no write in the transcript is repeated
(a write that raised counts as made). Tools are called through ``tools.TOOLBOX``, which a harness
fills with a Forge's recording wrappers.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from . import tools
from .tasks import TauTask, by_text

__all__ = ["Step", "agent", "run"]

_SWAPS = ("modify_pending_order_items", "exchange_delivered_order_items")
_PHRASES = {
    "cancel_pending_order": "cancel order {order_id}",
    "modify_pending_order_address": "change the shipping address of order {order_id}",
    "modify_pending_order_payment": "change the payment method of order {order_id}",
    "modify_pending_order_items": "modify the items of order {order_id}",
    "return_delivered_order_items": "request a return for order {order_id}",
    "exchange_delivered_order_items": "request an exchange for order {order_id}",
    "modify_user_address": "update your default address",
    "transfer_to_human_agents": "transfer you to a human agent",
}
_DONE = {
    "cancel_pending_order": "cancelled order {order_id}",
    "modify_pending_order_address": "changed the shipping address of order {order_id}",
    "modify_pending_order_payment": "changed the payment method of order {order_id}",
    "modify_pending_order_items": "modified the items of order {order_id}",
    "return_delivered_order_items": "requested a return for order {order_id}",
    "exchange_delivered_order_items": "requested an exchange for order {order_id}",
    "modify_user_address": "updated your default address",
    "transfer_to_human_agents": "transferred you to a human agent",
}


@dataclass(frozen=True, slots=True)
class Step:
    """A call the agent made or took from the transcript: tool, arguments, result."""

    tool: str
    args: dict[str, Any]
    result: Any
    from_transcript: bool = False


@dataclass(slots=True)
class _Session:
    """One task's calls; a call already in the transcript is answered from it, never made again."""

    pending: list[tuple[str, dict[str, Any], Any, str | None]]
    steps: list[Step] = field(default_factory=list)

    @classmethod
    def of(cls, transcript: Sequence[Any] | None) -> _Session:
        return cls([(c.tool, c.args, c.result, c.error) for c in transcript or ()])

    def call(self, tool: str, **args: Any) -> Any:
        for i, (t, a, result, error) in enumerate(self.pending):
            if t == tool and a == args and (error is None or tool in tools.WRITES):
                del self.pending[i]
                if error is not None:  # a write that raised may have taken effect: never again
                    result = f"Error: {error}"
                result = copy.deepcopy(result)
                self.steps.append(Step(tool, args, result, from_transcript=True))
                return result
        result = tools.TOOLBOX[tool](**args)
        self.steps.append(Step(tool, args, result))
        return result


def _failed(result: Any) -> bool:
    return isinstance(result, str) and result.startswith("Error")


def _identify(s: _Session, task: TauTask, text: str) -> str:
    """The customer's user id, found the way the task's text allows (or an ``"Error: ..."`` string)."""
    user = tools.vendored()["users"].get(task.user_id)
    if user is None:
        return "Error: user not found"
    at = text.lower().find(user["email"].lower())
    if at >= 0:
        return s.call("find_user_id_by_email", email=text[at:at + len(user["email"])])
    name = user["name"]
    return s.call("find_user_id_by_name_zip", first_name=name["first_name"], last_name=name["last_name"],
                  zip=user["address"]["zip"])


def _read_before(s: _Session, write: str, kwargs: dict[str, Any], orders: dict[str, Any], products: set[str]) -> None:
    """What a careful agent reads before ``write``: its order, and the products of the items it swaps."""
    order_id = kwargs.get("order_id")
    if order_id is None:
        return
    if order_id not in orders:
        orders[order_id] = s.call("get_order_details", order_id=order_id)
    order = orders[order_id]
    if write not in _SWAPS or not isinstance(order, dict):
        return
    for item_id in kwargs.get("item_ids", ()):
        item = next((it for it in order["items"] if it["item_id"] == item_id), None)
        if item is not None and item["product_id"] not in products:
            products.add(item["product_id"])
            s.call("get_product_details", product_id=item["product_id"])


def _sentence(write: str, kwargs: dict[str, Any], result: Any) -> str:
    if _failed(result):
        return f"I could not {_PHRASES[write].format(**kwargs)} ({result})"
    return f"I {_DONE[write].format(**kwargs)}"


def run(task: str, transcript: Sequence[Any] | None = None) -> tuple[str, list[Step]]:
    """Serve ``task``; the answer and every call made or taken from ``transcript``, in order."""
    found = by_text().get(task)
    if found is None:
        return "Sorry, I can't help with that request.", []
    s = _Session.of(transcript)
    user_id = _identify(s, found, task)
    if _failed(user_id):
        return "I could not find your account; could you check your details?", s.steps
    s.call("get_user_details", user_id=user_id)
    orders: dict[str, Any] = {}
    products: set[str] = set()
    sentences = []
    for write in found.writes:
        _read_before(s, write.name, write.kwargs, orders, products)
        sentences.append(_sentence(write.name, write.kwargs, s.call(write.name, **write.kwargs)))
    answer = "; ".join(sentences) + "." if sentences else "I have looked into your account."
    if found.outputs:
        answer += f" What you asked: {', '.join(found.outputs)}."
    return answer, s.steps


def agent(task: str, transcript: Sequence[Any] | None = None) -> str:
    """Serve ``task`` with the tools in ``tools.TOOLBOX``; continue from ``transcript`` if given."""
    return run(task, transcript)[0]
