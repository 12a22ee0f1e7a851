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

__all__ = ["MAX_INT_DIGITS", "Call", "Outcome", "ToolRef", "Trajectory", "canonical_json", "check_text", "json_snapshot"]

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
_MAX_INT = 10**MAX_INT_DIGITS
_SAFE_INT_BITS = 14_000  # 2**14000 has 4,215 digits: ints of fewer bits need no digit count


def json_snapshot(value: Any, tool: str | None, where: str) -> Any:
    """A deep copy of ``value`` if it is a JSON value, else ``NotSerializableError``.

    Nothing is converted: a tuple, a datetime, a set, a NaN or a dict with non-str
    keys is refused with the path to it, so a recording is never silently mangled.
    So is what JSON text cannot carry faithfully: a str with a lone surrogate (not
    UTF-8), an int of more than ``MAX_INT_DIGITS`` digits, a list or dict that
    contains itself, and a value nested deeper than Python can copy.
    """
    try:
        return _snap(value, tool, where, "", set())
    except RecursionError:
        raise NotSerializableError(tool, where, "", "value nested deeper than Python's recursion limit") from None


def check_text(text: str, tool: str | None, where: str, path: str = "") -> None:
    """``NotSerializableError`` unless ``text`` is UTF-8 text (no lone surrogate)."""
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        bad = text[e.start]
        raise NotSerializableError(
            tool, where, path, f"str with a lone surrogate ({bad!r} at index {e.start}): not UTF-8 text"
        ) from None


def _snap(value: Any, tool: str | None, where: str, path: str, active: set[int]) -> Any:
    kind = type(value)
    if kind is str:
        check_text(value, tool, where, path)
        return value
    if kind is int:
        if value.bit_length() > _SAFE_INT_BITS and not -_MAX_INT < value < _MAX_INT:
            raise NotSerializableError(tool, where, path, f"number of more than {MAX_INT_DIGITS:,} digits")
        return value
    if kind in _SCALARS:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise NotSerializableError(tool, where, path, f"non-finite float ({value!r})")
        return value
    if kind is list or kind is dict:
        key = id(value)
        if key in active:
            raise NotSerializableError(tool, where, path, f"{kind.__name__} that contains itself (a reference cycle)")
        active.add(key)
        try:
            if kind is list:
                return [_snap(v, tool, where, f"{path}[{i}]", active) for i, v in enumerate(value)]
            out = {}
            for k, v in value.items():
                if type(k) is not str:
                    raise NotSerializableError(tool, where, f"{path}[{_shown(k)}]", f"dict key of type {type(k).__name__}")
                check_text(k, tool, where, f"{path}[{k!r}]")
                out[k] = _snap(v, tool, where, f"{path}[{k!r}]", active)
            return out
        finally:
            active.discard(key)
    raise NotSerializableError(tool, where, path, kind.__name__)


def _shown(key: Any) -> str:
    """``repr(key)`` for a path, or its type where its repr fails."""
    try:
        return repr(key)
    except Exception:
        return f"<{type(key).__name__}>"


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


class Outcome(BaseModel):
    """How a run ended: its output, or the error that stopped it."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    output: Any = None
    error: str | None = None


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
