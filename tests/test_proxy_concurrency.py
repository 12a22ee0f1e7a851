"""skillforge proxy under concurrent conversations: 8 clients x 25 conversations on loopback, four
API keys, half of them streamed, learning while serving. No conversation gets another's values."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from skillforge.demo.model import StandInModel
from skillforge.testing import ChatServer

from .proxying import desk_tools, proxy_for, stream_agent

CLIENTS, CONVERSATIONS = 8, 25


def _order(order_id: str) -> dict[str, Any]:
    """A world of pure functions: every order's facts follow from its id."""
    n = int(order_id)
    return {"id": order_id, "customer_id": f"C-{n % 20 + 101}", "status": "processing", "total": float(n % 89 + 10),
            "payment_id": f"PAY-{n * 7 % 100000:05d}", "shipping_address": f"{n % 90 + 1} Elm Street",
            "items": [{"sku": "MUG-1", "name": "mug"}], "address_changed": False}


def _tool(name: str, args: dict[str, Any]) -> Any:
    if name == "get_order":
        return _order(args["order_id"])
    if name == "refund_payment":
        return {"refund_id": f"R-{args['order_id']}", "amount": args["amount"], "status": "refunded"}
    raise AssertionError(f"unexpected call {name}({args})")


def _plain_agent(client: Any, task: str) -> tuple[str | None, list[tuple[str, dict[str, Any]]]]:
    """OpenAIAgent's loop, without a Forge: the tools are the pure functions above."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
    calls = []
    for _ in range(6):
        msg = client.chat.completions.create(model="stand-in", messages=messages, tools=desk_tools()).choices[0].message
        if not msg.tool_calls:
            return msg.content, calls
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in msg.tool_calls]})
        for c in msg.tool_calls:
            args = json.loads(c.function.arguments)
            calls.append((c.function.name, args))
            messages.append({"role": "tool", "tool_call_id": c.id, "content": json.dumps(_tool(c.function.name, args))})
    raise AssertionError("no final answer")


def test_eight_clients_by_twenty_five_conversations_are_never_mixed_up(tmp_path: Path) -> None:
    with ChatServer(StandInModel()) as upstream, proxy_for(upstream, tmp_path) as proxy:
        wrong: list[str] = []
        done = Counter[int]()
        errors: list[BaseException] = []

        def client_thread(k: int) -> None:
            client = proxy.client(f"sk-team-{k // 2}")  # two clients per API key
            try:
                for j in range(CONVERSATIONS):
                    order_id = str(2000 + 100 * k + j)
                    task = f"Refund order #{order_id}"
                    if j % 2:
                        answer, calls, _ = stream_agent(client, task, _tool, tools=desk_tools(), system="")
                    else:
                        answer, calls = _plain_agent(client, task)
                    o = _order(order_id)
                    want_calls = [("get_order", {"order_id": order_id}),
                                  ("refund_payment", {"order_id": order_id, "payment_id": o["payment_id"], "amount": o["total"]})]
                    want = f"Refunded ${o['total']:.2f} to {o['payment_id']} for order {order_id}."
                    if calls != want_calls or answer != want:
                        wrong.append(f"{task}: {calls} -> {answer!r}")
                    done[k] += 1
            except BaseException as e:  # reported below, in the test's thread
                errors.append(e)

        threads = [threading.Thread(target=client_thread, args=(k,)) for k in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not errors, errors[:3]
        assert not wrong, wrong[:5]
        assert sum(done.values()) == CLIENTS * CONVERSATIONS
        assert proxy.proxy.wait_idle(30)
        stats = proxy.proxy.stats
        # each conversation asks three times; most were answered by the skills, learned while serving
        assert stats["requests"] == 3 * CLIENTS * CONVERSATIONS
        assert stats["served_calls"] + stats["served_answers"] + stats["forwarded"] == stats["requests"]
        assert stats["served_answers"] > CLIENTS * CONVERSATIONS // 2
        assert len(upstream.requests) == stats["forwarded"]
        assert stats["upstream_errors"] == 0
        # four keys, and the streamed conversations (no system prompt) are a namespace of their own
        namespaces = {p.parent for p in (tmp_path / "proxy-skills").rglob("refund_order.py")}
        assert len(namespaces) == 8
