"""What a chat-completions request says, as a run: pure functions of the request body.

A request the proxy may serve or learn from is a *conversation*: optional system (or
developer) messages, one user message (the task), then the assistant's tool calls, each
answered by a tool message, in order. ``parse`` reads one into a ``Conversation``, or
says why the request is not one (``NotOurs``): the proxy forwards such requests as they
are and learns nothing from them.

The skill's key is what the conversation's behaviour depends on besides the task: the
model, the system messages and the tool list (every schema, descriptions included). A
changed prompt or tool set is another key, so it never replays skills learned under the
old one.

Example:
    >>> tool = {"type": "function", "function": {"name": "get_order", "parameters": {
    ...     "type": "object", "properties": {"order_id": {"type": "string"}}}}}
    >>> conv = parse({"model": "m", "tools": [tool], "messages": [
    ...     {"role": "user", "content": "Where is order #7?"},
    ...     {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
    ...         "function": {"name": "get_order", "arguments": '{"order_id": "7"}'}}]},
    ...     {"role": "tool", "tool_call_id": "c1", "content": '{"status": "shipped"}'}]})
    >>> conv.task, conv.steps[0].name, conv.steps[0].result
    ('Where is order #7?', 'get_order', {'status': 'shipped'})
"""

from __future__ import annotations

import builtins
import hashlib
import json
import keyword
import re
from dataclasses import dataclass
from typing import Any

from .._trajectory import canonical_json
from ..runtime import __all__ as _RUNTIME_NAMES

__all__ = ["Conversation", "NotOurs", "Step", "final_answer", "key_of", "parse", "tool_result", "unusable_name"]

# Request fields that do not change what a served answer must be. A request with any other
# field (response_format, logprobs, n > 1, functions, audio, ...) is forwarded and not learned.
_NEUTRAL = frozenset({
    "model", "messages", "tools", "stream", "stream_options", "temperature", "top_p", "max_tokens",
    "max_completion_tokens", "parallel_tool_calls", "user", "seed", "store", "metadata", "frequency_penalty",
    "presence_penalty", "service_tier", "n", "tool_choice", "stop",
})
_SYSTEM_ROLES = ("system", "developer")
_FAILED = re.compile(r"\s*error\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Step:
    """One tool call of the conversation and the result its tool message gave (JSON-parsed where JSON).

    ``error`` is the message's text where it reports a failure (text, not JSON, that starts with
    "error", as ``OpenAIAgent`` reports a tool that raised): such a run is not learned, and a
    skill does not replay past it.
    """

    call_id: str
    name: str
    args: dict[str, Any]
    result: Any
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Conversation:
    """A request read as a run so far.

    Attributes:
        model: the model asked for.
        key: a hash of the model, the system messages and the tools: the skills' namespace.
        task: the user message.
        steps: the calls made so far with their results, in order.
        tools: the request's tool schemas (``{"type": "function", "function": {...}}``).
        system: the system (and developer) messages' texts.
        stream: whether the client asked for server-sent events.
        include_usage: whether a streamed reply ends with a usage chunk.
    """

    model: str
    key: str
    task: str
    steps: tuple[Step, ...]
    tools: tuple[dict[str, Any], ...]
    system: tuple[str, ...]
    stream: bool = False
    include_usage: bool = False

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(t["function"]["name"] for t in self.tools)


@dataclass(frozen=True, slots=True)
class NotOurs:
    """A request the proxy forwards without looking further, and why."""

    reason: str


def _text(content: Any) -> str | None:
    """A message's text: a str, or a list of text parts joined; None for anything else (images, audio)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str) for p in content):
        return "".join(p["text"] for p in content)
    return None


def tool_result(content: Any) -> Any:
    """A tool message's content as a run's result: parsed JSON where the text is JSON, else the text.

    >>> tool_result('{"a": 1}'), tool_result("done"), tool_result("NaN")
    ({'a': 1}, 'done', 'NaN')
    """
    text = _text(content)
    if text is None:
        return content
    try:
        return json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return text


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value a run can hold")


def unusable_name(name: Any, *, imported: bool = True) -> str | None:
    """Why a tool name (``imported``: skills import it) or a parameter name (passed by keyword)
    cannot be that name in a skill's Python code, or None.

    >>> unusable_name("get_order") is None, unusable_name("get-order"), unusable_name("len")
    (True, "'get-order' is not a Python name", "'len' is a Python builtin")
    >>> unusable_name("zip", imported=False) is None
    True
    """
    if not isinstance(name, str) or not name.isidentifier():
        return f"{name!r} is not a Python name"
    if keyword.iskeyword(name):
        return f"{name!r} is a Python keyword"
    if name.startswith("_"):
        return f"{name!r} starts with an underscore"
    if not imported:
        return None
    if keyword.issoftkeyword(name) or hasattr(builtins, name):
        return f"{name!r} is a Python builtin"
    if name in _RUNTIME_NAMES:
        return f"{name!r} is a helper skills import from skillforge.runtime"
    return None


def _check_tools(tools: Any) -> tuple[dict[str, Any], ...] | NotOurs:
    if not isinstance(tools, list) or not tools:
        return NotOurs("the request offers no tools")
    seen: set[str] = set()
    for tool in tools:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or tool.get("type") != "function":
            return NotOurs("a tool is not of type 'function'")
        name = fn.get("name")
        why = unusable_name(name)
        if why:
            return NotOurs(f"tool {why}; skills call tools by Python name")
        if name in seen:
            return NotOurs(f"tool {name!r} is offered twice")
        seen.add(name)
        params = fn.get("parameters") or {}
        props = params.get("properties") if isinstance(params, dict) else None
        if props is not None and not isinstance(props, dict):
            return NotOurs(f"tool {name!r} has parameters that are not a JSON-schema object")
        for p in props or {}:
            why = unusable_name(p, imported=False)
            if why:
                return NotOurs(f"tool {name!r}: parameter {why}")
    return tuple(tools)


def key_of(model: str, system: tuple[str, ...], tools: tuple[dict[str, Any], ...]) -> str:
    """The namespace of a conversation's skills: a hash of what its behaviour depends on besides the task."""
    return hashlib.sha256(canonical_json({"model": model, "system": list(system), "tools": list(tools)}).encode()).hexdigest()[:16]


def parse(body: Any) -> Conversation | NotOurs:
    """Read a chat-completions request body as a conversation, or say why it is not one."""
    if not isinstance(body, dict):
        return NotOurs("the body is not a JSON object")
    odd = sorted(set(body) - _NEUTRAL)
    if odd:
        return NotOurs(f"the request sets {', '.join(odd)}")
    if body.get("n") not in (None, 1):
        return NotOurs("the request asks for several choices (n)")
    if body.get("tool_choice") not in (None, "auto"):
        return NotOurs("the request sets tool_choice")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return NotOurs("the request names no model")
    tools = _check_tools(body.get("tools"))
    if isinstance(tools, NotOurs):
        return tools
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return NotOurs("messages is not a list of objects")
    system: list[str] = []
    i = 0
    while i < len(messages) and messages[i].get("role") in _SYSTEM_ROLES:
        text = _text(messages[i].get("content"))
        if text is None:
            return NotOurs("a system message is not text")
        system.append(text)
        i += 1
    if i >= len(messages) or messages[i].get("role") != "user":
        return NotOurs("the conversation does not start with one user message")
    task = _text(messages[i].get("content"))
    if task is None or not task.strip():
        return NotOurs("the user message is not text")
    steps = _steps(messages[i + 1 :], {t["function"]["name"] for t in tools})
    if isinstance(steps, NotOurs):
        return steps
    stream = body.get("stream") is True
    options = body.get("stream_options")
    return Conversation(
        model=model,
        key=key_of(model, tuple(system), tools),
        task=task,
        steps=steps,
        tools=tools,
        system=tuple(system),
        stream=stream,
        include_usage=stream and isinstance(options, dict) and options.get("include_usage") is True,
    )


def _steps(messages: list[dict[str, Any]], offered: set[str]) -> tuple[Step, ...] | NotOurs:
    """The tool calls after the task, each with its result: assistant calls, then a tool message for each."""
    steps: list[Step] = []
    i = 0
    while i < len(messages):
        msg = messages[i]
        if msg.get("role") != "assistant" or not msg.get("tool_calls"):
            return NotOurs(f"message {i + 2} is a {msg.get('role')} message where tool calls or their results belong")
        calls = msg["tool_calls"]
        if not isinstance(calls, list):
            return NotOurs("tool_calls is not a list")
        pending: dict[str, tuple[str, dict[str, Any]]] = {}
        order: list[str] = []
        for call in calls:
            fn = call.get("function") if isinstance(call, dict) else None
            cid = call.get("id") if isinstance(call, dict) else None
            if not isinstance(fn, dict) or not isinstance(cid, str) or cid in pending:
                return NotOurs("a tool call lacks an id or a function")
            if fn.get("name") not in offered:
                return NotOurs(f"the assistant called {fn.get('name')!r}, which the request does not offer")
            try:
                args = json.loads(fn.get("arguments") or "{}", parse_constant=_no_constant)
            except (ValueError, TypeError, RecursionError):
                return NotOurs(f"the arguments of {fn.get('name')!r} are not JSON")
            if not isinstance(args, dict):
                return NotOurs(f"the arguments of {fn.get('name')!r} are not a JSON object")
            pending[cid] = (fn["name"], args)
            order.append(cid)
        i += 1
        results: dict[str, Any] = {}
        while i < len(messages) and messages[i].get("role") == "tool":
            cid = messages[i].get("tool_call_id")
            if cid not in pending or cid in results:
                return NotOurs("a tool message answers no call of the message before it")
            results[cid] = messages[i].get("content")
            i += 1
        if len(results) != len(pending):
            return NotOurs("a tool call has no result")
        for cid in order:
            result = tool_result(results[cid])
            failed = result if isinstance(result, str) and _FAILED.match(result) else None
            steps.append(Step(cid, pending[cid][0], pending[cid][1], None if failed else result, failed))
    return tuple(steps)


def final_answer(message: Any, finish_reason: Any) -> str | None:
    """The text of an assistant message that ends a conversation (no tool calls, finished by
    ``stop``), or None if the message is anything else."""
    if not isinstance(message, dict) or message.get("tool_calls") or finish_reason != "stop":
        return None
    content = message.get("content")
    return content if isinstance(content, str) else None
