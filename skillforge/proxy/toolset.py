"""The proxy's tools: stand-ins built from a request's tool schemas, answered from the conversation.

The proxy has no tool functions: the client runs its tools. Skills learned through the proxy
call tools by name, and a namespace's Forge registers one stand-in per tool of the request,
whose signature follows the tool's JSON schema (so skills record a fingerprint of it). A
stand-in answers from the conversation being replayed (``replaying``): a call the history
holds returns its recorded result; the first call the history does not hold stops the skill
with ``NextCall``, which is what the proxy answers the client with; a call that differs
from the history's stops it with ``Diverged``.

Which tools only read is not in a schema. It matters to learning (guards compare what a
write takes with what reads returned), so it is taken from the name: a tool whose name
starts with a reading verb (``get_``, ``list_``, ``find_``, ...) is a read, any other a write;
``--reads REGEX`` says otherwise.
"""

from __future__ import annotations

import copy
import inspect
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from .._exceptions import SkillforgeSignal
from .._loading import LOCAL_TOOLS
from .._trajectory import canonical_json
from .conversations import Step

__all__ = ["DEFAULT_READS", "Diverged", "History", "NextCall", "is_read", "replaying", "stand_in"]

# Verbs that name a tool which only observes, as agents' tools are commonly named.
DEFAULT_READS = r"^(get|list|find|search|lookup|check|read|fetch|query|show|describe|count|view|retrieve|calculate|compute|verify|validate)(_|$)"

_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict}


class NextCall(SkillforgeSignal):
    """The skill calls a tool the conversation has not called yet: the proxy's answer."""

    def __init__(self, name: str, args: dict[str, Any]) -> None:
        super().__init__(f"next call: {name}")
        self.name = name
        self.arguments = args  # not ``args``: BaseException keeps its own


class Diverged(SkillforgeSignal):
    """The skill calls something else than the conversation did at the same step."""


class History:
    """The calls a conversation made, answered in order to a skill replaying it."""

    __slots__ = ("pos", "steps")

    def __init__(self, steps: Sequence[Step]) -> None:
        self.steps = steps
        self.pos = 0

    def call(self, name: str, args: dict[str, Any]) -> Any:
        if self.pos >= len(self.steps):
            raise NextCall(name, dict(args))
        step = self.steps[self.pos]
        if step.name != name:
            raise Diverged(f"step {self.pos + 1}: the skill calls {name}, the conversation called {step.name}")
        try:
            same = canonical_json(args) == canonical_json(step.args)
        except (TypeError, ValueError):
            same = False
        if not same:
            raise Diverged(f"step {self.pos + 1}: the skill calls {name} with other arguments than the conversation")
        if step.error is not None:
            raise Diverged(f"step {self.pos + 1}: {name} failed in the conversation ({step.error[:200]})")
        self.pos += 1
        return copy.deepcopy(step.result)


_history: ContextVar[History | None] = ContextVar("skillforge_proxy_history", default=None)


@contextmanager
def replaying(history: History) -> Iterator[History]:
    """Make the stand-ins answer from ``history`` in this context."""
    token = _history.set(history)
    try:
        yield history
    finally:
        _history.reset(token)


def _annotation(schema: Any) -> Any:
    kind = schema.get("type") if isinstance(schema, dict) else None
    return _JSON_TYPES.get(kind, Any) if isinstance(kind, str) else Any


def stand_in(spec: dict[str, Any]) -> Callable[..., Any]:
    """A function standing in for the tool ``spec`` (a request's ``tools`` entry), to register with a Forge.

    Its signature is the schema's: required parameters first, the others defaulting to None.
    Called outside a replay it raises: the client runs the real tool.
    """
    fn = spec["function"]
    name = fn["name"]
    params = (fn.get("parameters") or {}).get("properties") or {}
    required = set((fn.get("parameters") or {}).get("required") or ())
    ordered = [p for p in params if p in required] + [p for p in params if p not in required]

    def tool(**kwargs: Any) -> Any:
        history = _history.get()
        if history is None:
            raise RuntimeError(f"{name} is a stand-in of the proxy's client's tool; it runs only while a conversation is replayed")
        return history.call(name, kwargs)

    tool.__name__ = tool.__qualname__ = name
    tool.__module__ = LOCAL_TOOLS
    tool.__doc__ = fn.get("description") or name
    tool.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                p, inspect.Parameter.KEYWORD_ONLY, annotation=_annotation(params[p]),
                **({} if p in required else {"default": None}),
            )
            for p in ordered
        ]
    )
    tool.__annotations__ = {p: _annotation(params[p]) for p in ordered}
    return tool


def is_read(name: str, pattern: str = DEFAULT_READS) -> bool:
    """Whether the tool ``name`` only observes, by its name.

    >>> is_read("get_order"), is_read("refund_payment"), is_read("Get_Order")
    (True, False, True)
    """
    return re.search(pattern, name, re.IGNORECASE) is not None
