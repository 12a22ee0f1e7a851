"""Trajectories: what a run did, as pydantic models with one canonical JSON form.

A ``Trajectory`` is the task, the tool calls in order (arguments and results as
JSON values), the outcome, and a reference to each tool used (its module and
signature fingerprint), so that lifting and codegen are pure functions of it.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ._exceptions import NotSerializableError

__all__ = ["MAX_INT_DIGITS", "SAME", "DIFFERENT", "INCONCLUSIVE", "Call", "Outcome", "Probe", "ToolRef", "Trajectory", "canonical_json", "check_text",
           "json_snapshot"]

_SCALARS = (bool, type(None))


def canonical_json(value: Any) -> str:
    """The one JSON form that is hashed: sorted keys, fixed separators, UTF-8 text.

    >>> canonical_json({"b": 1, "a": [1.5, None]})
    '{"a":[1.5,null],"b":1}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def content_hash(value: Any) -> str:
    """SHA-256 hex digest of ``canonical_json(value)``."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


# Python converts ints of at most this many digits to text by default (``sys.int_max_str_digits``);
# hashing a run, writing its file and reading it back in another process all convert them, so a
# larger int cannot be recorded (whatever this process's own limit is).
MAX_INT_DIGITS = 4300
_MAX_INT = 10**MAX_INT_DIGITS  # comparing with it costs a size check: no digits are counted
_MIN_INT = -_MAX_INT

_Where = tuple[Any, Any] | None  # (the parent's place, the key or index): a path, rendered only for an error


def json_snapshot(value: Any, tool: str | None, where: str) -> Any:
    """A deep copy of ``value`` if it is a JSON value, else ``NotSerializableError``.

    Nothing is converted: a tuple, a datetime, a set, a NaN or a dict with non-str
    keys is refused with the path to it, so a recording is never silently mangled.
    So is what JSON text cannot carry faithfully: a str with a lone surrogate (not
    UTF-8), an int of more than ``MAX_INT_DIGITS`` digits, a list or dict that
    contains itself, and a value nested deeper than Python can copy.
    """
    try:
        return _snap(value, tool, where, None)
    except RecursionError:
        pass  # a cycle, or nesting deeper than Python recurses: which one, said after the stack unwound
    cycle = _cycle(value)
    if cycle is not None:
        path, kind = cycle
        raise NotSerializableError(tool, where, path, f"{kind} that contains itself (a reference cycle)")
    raise NotSerializableError(tool, where, "", "value nested deeper than Python's recursion limit")


def check_text(text: str, tool: str | None, where: str, path: str = "") -> None:
    """``NotSerializableError`` unless ``text`` is UTF-8 text (no lone surrogate)."""
    problem = _not_utf8(text)
    if problem is not None:
        raise NotSerializableError(tool, where, path, problem)


def _not_utf8(text: str) -> str | None:
    """What keeps ``text`` from being UTF-8 (a lone surrogate), or None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return f"str with a lone surrogate ({text[e.start]!r} at index {e.start}): not UTF-8 text"
    return None


def _snap(value: Any, tool: str | None, where: str, at: _Where) -> Any:
    kind = type(value)
    if kind is str:
        if not value.isascii() and (problem := _not_utf8(value)):
            raise NotSerializableError(tool, where, _path(at), problem)
        return value
    if kind is int:
        if not _MIN_INT < value < _MAX_INT:
            raise NotSerializableError(tool, where, _path(at), f"number of more than {MAX_INT_DIGITS:,} digits")
        return value
    if kind in _SCALARS:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise NotSerializableError(tool, where, _path(at), f"non-finite float ({value!r})")
        return value
    if kind is list:
        return [_snap(v, tool, where, (at, i)) for i, v in enumerate(value)]
    if kind is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                raise NotSerializableError(tool, where, _path((at, k)), f"dict key of type {type(k).__name__}")
            if not k.isascii():
                check_text(k, tool, where, _path((at, k)))
            out[k] = _snap(v, tool, where, (at, k))
        return out
    raise NotSerializableError(tool, where, _path(at), kind.__name__)


def _cycle(value: Any) -> tuple[str, str] | None:
    """Where a list or dict inside ``value`` contains itself (the path, and its kind), or None;
    iterative, so that it answers for values nested deeper than Python recurses."""
    if type(value) is not list and type(value) is not dict:
        return None
    on_path = {id(value)}
    stack = [(value, _members(value))]
    keys: list[Any] = []  # the path to stack[-1]
    while stack:
        container, members = stack[-1]
        for key, child in members:
            if type(child) is list or type(child) is dict:
                keys.append(key)
                if id(child) in on_path:
                    return "".join(f"[{shown(k)}]" for k in keys), type(child).__name__
                on_path.add(id(child))
                stack.append((child, _members(child)))
                break
        else:
            stack.pop()
            on_path.discard(id(container))
            if keys:
                keys.pop()
    return None


def _members(value: list[Any] | dict[Any, Any]) -> Any:
    return iter(enumerate(value)) if type(value) is list else iter(value.items())


def _path(at: _Where) -> str:
    """``['items'][0]['when']``: the place ``at`` names, from the top."""
    keys = []
    while at is not None:
        at, key = at
        keys.append(key)
    return "".join(f"[{shown(k)}]" for k in reversed(keys))


def shown(value: Any) -> str:
    """``repr(value)``, or its type where its repr fails (a path to a bad value, a row of the run log)."""
    try:
        return repr(value)
    except Exception:
        return f"<{type(value).__name__}>"


class ToolRef(BaseModel):
    """Where a tool lives, so a skill file can import it and check it has not changed."""

    model_config = ConfigDict(frozen=True)

    module: str
    qualname: str
    read: bool = False
    method: bool = False
    fingerprint: str = ""
    params: tuple[str, ...] = ()  # parameter order, so generated calls read like the signature
    check: bool = False  # the tool declares a pre-check (``@tool(guard=Check(...))``)
    post_check: bool = False  # the tool declares a post-check (checked after the call)


class Call(BaseModel):
    """One tool call: the tool's name, its arguments by name, and what it returned or raised."""

    model_config = ConfigDict(frozen=True)

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    error: str | None = None
    pre: Any = None  # what the tool's pre-check captured before the call, if it has one
    post: Any = None  # what its post-check captured after the call, if it has one
    # a write of an agent's run: earlier reads of what it took, made again right after it (the read's
    # index, what it returned then): the world a later request of the same message acted on
    after: list[tuple[int, Any]] | None = None


class Outcome(BaseModel):
    """How a run ended: its output, or the error that stopped it."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    output: Any = None
    error: str | None = None


SAME, DIFFERENT, INCONCLUSIVE = "same", "different", "inconclusive"  # what a probe found


class Probe(BaseModel):
    """What the agent did when one fact of a recorded run's world was changed (``_probes``).

    ``step`` is the skill's call whose result held the fact, ``fact`` the fact's identity (its
    kind and path, its value aside: ``repr`` of ``_guards.fact_key``), ``said`` what the guard
    checks, ``change`` what was changed, ``verdict`` one of ``same`` (the agent made the calls and
    answer the skill makes in that world: the fact does not decide there), ``different`` (it
    decides) or ``inconclusive`` (kept as a guard), ``why`` the evidence in a few words and
    ``requests`` the model requests the probe cost (and ``runs`` the agent runs), each counted on a
    world's first record only, ``was`` and ``to`` the value changed and the
    one it was changed to. A run's probes are stored beside it
    (``skills/runs/probes/<run hash>.json``), never in its hash: learning reads them as data.
    """

    model_config = ConfigDict(frozen=True)

    step: int
    fact: str
    said: str = ""
    change: str = ""
    verdict: str
    why: str = ""
    requests: int = 0
    runs: int = 0  # the agent runs the record accounts for: 1 on a world's first record (its requests too), else 0
    was: Any = None  # the value changed, and what it was changed to (a number's probes make its range)
    to: Any = None


class Trajectory(BaseModel):
    """A whole run: task, calls, outcome and the tools it used.

    Example:
        >>> t = Trajectory(task="Refund order #1", calls=[], outcome=Outcome(ok=True))
        >>> len(t.hash)
        64
    """

    model_config = ConfigDict(frozen=True)

    task: str
    calls: list[Call] = Field(default_factory=list)
    outcome: Outcome
    tools: dict[str, ToolRef] = Field(default_factory=dict)
    # what probes of this run found (read from beside the run's file): evidence, never part of its identity
    probes: tuple[Probe, ...] = Field(default=(), exclude=True)

    def canonical_json(self) -> str:
        """The canonical JSON text of this trajectory (what ``hash`` is taken of).

        Fields at their defaults are left out, so adding an optional field later
        does not change the identity of runs recorded before it.
        """
        return canonical_json(self.model_dump(mode="json", exclude_defaults=True))

    @property
    def hash(self) -> str:
        """SHA-256 of the canonical JSON: the run's identity."""
        return hashlib.sha256(self.canonical_json().encode("utf-8")).hexdigest()

    @classmethod
    def from_json(cls, text: str) -> Trajectory:
        """Parse a trajectory from its JSON text."""
        return cls.model_validate_json(text)
