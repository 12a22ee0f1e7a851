"""The proxy's own replies, in the chat-completions format, and reading an upstream's stream back.

Pure: a served decision becomes a ``chat.completion`` body or the server-sent events of
one (``chat.completion.chunk`` objects, then ``[DONE]``); errors take OpenAI's shape
(``{"error": {"message", "type", "param", "code"}}``). ``StreamReader`` follows an
upstream's events as they pass through, to tell a final answer (which ends a
conversation, and is learned from) from a tool call.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from .conversations import Conversation
from .replay import Served

__all__ = ["StreamReader", "completion", "error_body", "events", "message_of"]

ZERO_USAGE = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


def error_body(message: str, type_: str, code: str | None = None) -> dict[str, Any]:
    """An error in OpenAI's shape, which its clients raise with the message."""
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def _content(answer: Any) -> str:
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)


def message_of(served: Served) -> tuple[dict[str, Any], str]:
    """The assistant message a served decision says, and its finish reason."""
    if served.call is None:
        return {"role": "assistant", "content": _content(served.answer)}, "stop"
    name, args = served.call
    call = {"id": f"call_sf{secrets.token_hex(12)}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"


def _head(conv: Conversation) -> dict[str, Any]:
    return {"id": f"chatcmpl-sf{secrets.token_hex(12)}", "created": int(time.time()), "model": conv.model}


def completion(conv: Conversation, served: Served) -> dict[str, Any]:
    """The ``chat.completion`` body answering ``conv`` with ``served`` (usage zero)."""
    message, finish = message_of(served)
    return {
        **_head(conv),
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": dict(ZERO_USAGE),
    }


def events(conv: Conversation, served: Served) -> list[bytes]:
    """The server-sent events of the same reply: the role, the content or the call, the finish
    reason, a usage chunk if the client asked for one (``stream_options.include_usage``), ``[DONE]``."""
    message, finish = message_of(served)
    head = {**_head(conv), "object": "chat.completion.chunk"}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        body = {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}]}
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n".encode()

    if served.call is None:
        out = [chunk({"role": "assistant", "content": ""}), chunk({"content": message["content"]})]
    else:
        call = message["tool_calls"][0]
        out = [chunk({"role": "assistant", "content": None,
                      "tool_calls": [{"index": 0, **call}]})]
    out.append(chunk({}, finish))
    if conv.include_usage:
        usage = {**head, "choices": [], "usage": dict(ZERO_USAGE)}
        out.append(f"data: {json.dumps(usage)}\n\n".encode())
    out.append(b"data: [DONE]\n\n")
    return out


class StreamReader:
    """Follows a streamed chat completion as its bytes pass, and rebuilds the first choice's message."""

    def __init__(self) -> None:
        self._buffer = b""
        self.content: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.done = False
        self.broken = False  # an event that was not a chunk of one choice: nothing is learned from it

    def feed(self, data: bytes) -> None:
        self._buffer += data
        while True:
            end = self._buffer.find(b"\n\n")
            cut = 2
            crlf = self._buffer.find(b"\r\n\r\n")
            if crlf != -1 and (end == -1 or crlf < end):
                end, cut = crlf, 4
            if end == -1:
                return
            event, self._buffer = self._buffer[:end], self._buffer[end + cut :]
            self._event(event)

    def _event(self, event: bytes) -> None:
        data = b"\n".join(line[5:].lstrip() for line in event.splitlines() if line.startswith(b"data:"))
        if not data:
            return
        if data == b"[DONE]":
            self.done = True
            return
        try:
            chunk = json.loads(data)
        except ValueError:
            self.broken = True
            return
        for choice in chunk.get("choices") or () if isinstance(chunk, dict) else ():
            if choice.get("index", 0) != 0:
                self.broken = True
                continue
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                self.content.append(delta["content"])
            for piece in delta.get("tool_calls") or ():
                call = self.calls.setdefault(piece.get("index", 0), {"arguments": ""})
                fn = piece.get("function") or {}
                call["name"] = fn.get("name") or call.get("name")
                call["arguments"] += fn.get("arguments") or ""
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        if isinstance(chunk, dict) and "error" in chunk:
            self.broken = True

    def message(self) -> tuple[dict[str, Any], str | None] | None:
        """The streamed message and its finish reason, once the stream ended with ``[DONE]``."""
        if not self.done or self.broken:
            return None
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.content) if self.content else None}
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        return message, self.finish_reason
