"""Reading chat-completions requests as runs (pure), and the proxy's stand-in tools."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from skillforge.proxy.conversations import Conversation, NotOurs, final_answer, parse
from skillforge.proxy.namespaces import tenant_of
from skillforge.proxy.responses import StreamReader
from skillforge.proxy.toolset import Diverged, History, NextCall, is_read, replaying, stand_in

TOOLS = [
    {"type": "function", "function": {"name": "get_order", "description": "Look up an order.", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}, "verbose": {"type": "boolean"}},
        "required": ["order_id"]}}},
    {"type": "function", "function": {"name": "refund", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}}}}},
]


def _call(cid: str, name: str, args: str) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


BODY = {
    "model": "m", "tools": TOOLS, "temperature": 0,
    "messages": [
        {"role": "system", "content": "Be careful."},
        {"role": "user", "content": [{"type": "text", "text": "Refund order "}, {"type": "text", "text": "#7"}]},
        {"role": "assistant", "content": None, "tool_calls": [_call("a", "get_order", '{"order_id": "7"}')]},
        {"role": "tool", "tool_call_id": "a", "content": '{"status": "shipped", "total": 5}'},
        {"role": "assistant", "content": "Refunding.", "tool_calls": [
            _call("b", "refund", '{"order_id": "7", "amount": 5}'), _call("c", "get_order", '{"order_id": "7"}')]},
        {"role": "tool", "tool_call_id": "c", "content": "not json at all"},
        {"role": "tool", "tool_call_id": "b", "content": "Error: card declined"},
    ],
}


def test_a_conversation_is_its_task_and_its_calls_in_order_with_their_results() -> None:
    conv = parse(BODY)
    assert isinstance(conv, Conversation)
    assert conv.task == "Refund order #7" and conv.system == ("Be careful.",) and conv.model == "m"
    assert [(s.name, s.args, s.result, s.error) for s in conv.steps] == [
        ("get_order", {"order_id": "7"}, {"status": "shipped", "total": 5}, None),
        ("refund", {"order_id": "7", "amount": 5}, None, "Error: card declined"),  # results by id, calls in order
        ("get_order", {"order_id": "7"}, "not json at all", None),
    ]


def test_the_key_changes_with_the_model_the_prompt_and_the_tools_only() -> None:
    key = parse(BODY).key
    same = copy.deepcopy(BODY)
    same["temperature"] = 1
    same["messages"][1]["content"] = "Refund order #8"
    assert parse(same).key == key
    for change in (
        lambda b: b.update(model="m2"),
        lambda b: b["messages"][0].update(content="Be quick."),
        lambda b: b["tools"][0]["function"].update(description="Find an order."),
        lambda b: b["tools"].append({"type": "function", "function": {"name": "cancel_order", "parameters": {}}}),
    ):
        other = copy.deepcopy(BODY)
        change(other)
        assert parse(other).key != key


@pytest.mark.parametrize(("change", "why"), [
    (lambda b: b.update(n=2), "several choices"),
    (lambda b: b.update(tool_choice="required"), "tool_choice"),
    (lambda b: b.update(response_format={"type": "json_object"}), "response_format"),
    (lambda b: b.pop("tools"), "no tools"),
    (lambda b: b["tools"][0]["function"].update(name="get-order"), "not a Python name"),
    (lambda b: b["tools"][1]["function"].update(name="len"), "builtin"),
    (lambda b: b["tools"][1]["function"]["parameters"]["properties"].update({"class": {}}), "keyword"),
    (lambda b: b["tools"][1]["function"]["parameters"]["properties"].update({"_x": {}}), "underscore"),
    (lambda b: b["messages"].append({"role": "user", "content": "And another thing"}), "user message where"),
    (lambda b: b["messages"].pop(), "has no result"),
    (lambda b: b["messages"][2]["tool_calls"][0]["function"].update(arguments="[1]"), "not a JSON object"),
    (lambda b: b["messages"][2]["tool_calls"][0]["function"].update(name="delete_all"), "does not offer"),
    (lambda b: b["messages"].pop(1), "one user message"),
])
def test_requests_that_are_no_conversation_of_tool_calls_are_forwarded_as_they_are(change: Any, why: str) -> None:
    body = copy.deepcopy(BODY)
    change(body)
    verdict = parse(body)
    assert isinstance(verdict, NotOurs) and why in verdict.reason


def test_a_final_answer_is_text_without_calls_that_stopped() -> None:
    assert final_answer({"role": "assistant", "content": "Done."}, "stop") == "Done."
    assert final_answer({"role": "assistant", "content": "Done."}, "length") is None
    assert final_answer({"role": "assistant", "content": None, "tool_calls": [{}]}, "tool_calls") is None


def test_stand_ins_answer_from_the_history_and_stop_at_the_first_new_call() -> None:
    conv = parse(BODY)
    get_order = stand_in(TOOLS[0])
    assert str(__import__("inspect").signature(get_order)) == "(*, order_id: str, verbose: bool = None)"
    with replaying(History(conv.steps)):
        assert get_order(order_id="7") == {"status": "shipped", "total": 5}
        with pytest.raises(Diverged, match="failed in the conversation"):
            stand_in(TOOLS[1])(order_id="7", amount=5)
    with replaying(History(conv.steps[:1])):
        get_order(order_id="7")
        with pytest.raises(NextCall) as nxt:
            stand_in(TOOLS[1])(order_id="7", amount=5)
        assert (nxt.value.name, nxt.value.arguments) == ("refund", {"order_id": "7", "amount": 5})
    with replaying(History(conv.steps)), pytest.raises(Diverged, match="other arguments"):
        get_order(order_id="8")
    with pytest.raises(RuntimeError, match="stand-in"):
        get_order(order_id="7")  # outside a replay: the client runs the real tool


def test_reads_are_told_by_name_and_tenants_by_hashed_key() -> None:
    assert [is_read(n) for n in ("get_order", "list_users", "find_user_id_by_email", "refund", "getaway")] == [
        True, True, True, False, False]
    assert tenant_of("Bearer a", None) != tenant_of("Bearer b", None)
    assert tenant_of("Bearer a", None, share=True) == tenant_of("Bearer b", None, share=True) == "shared"
    assert tenant_of("Bearer a", "../../etc").startswith("key-") and "/" not in tenant_of("Bearer a", "../../etc")


def test_a_stream_read_back_is_the_message_it_carried() -> None:
    reader = StreamReader()
    events = (
        b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\r\n\r\n'
        b'data: {"choices":[{"index":0,"delta":{"content":"lo."},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    )
    for i in range(0, len(events), 7):  # in pieces that cut events anywhere
        assert reader.message() is None
        reader.feed(events[i : i + 7])
    assert reader.message() == ({"role": "assistant", "content": "Hello."}, "stop")
    broken = StreamReader()
    broken.feed(b'data: {"error": {"message": "boom"}}\n\ndata: [DONE]\n\n')
    assert broken.message() is None
