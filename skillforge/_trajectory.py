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

__all__ = ["Call", "Outcome", "ToolRef", "Trajectory", "canonical_json", "json_snapshot"]

_SCALARS = (str, bool, int, type(None))


def canonical_json(value: Any) -> str:
    """The one JSON form that is hashed: sorted keys, fixed separators, UTF-8 text.

    >>> canonical_json({"b": 1, "a": [1.5, None]})
    '{"a":[1.5,null],"b":1}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def content_hash(value: Any) -> str:
    """SHA-256 hex digest of ``canonical_json(value)``."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def json_snapshot(value: Any, tool: str | None, where: str) -> Any:
    """A deep copy of ``value`` if it is a JSON value, else ``NotSerializableError``.

    Nothing is converted: a tuple, a datetime, a set, a NaN or a dict with non-str
    keys is refused with the path to it, so a recording is never silently mangled.
    """
    return _snap(value, tool, where, "")


def _snap(value: Any, tool: str | None, where: str, path: str) -> Any:
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise NotSerializableError(tool, where, path, f"non-finite float ({value!r})")
        return value
    if kind is list:
        return [_snap(v, tool, where, f"{path}[{i}]") for i, v in enumerate(value)]
    if kind is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                raise NotSerializableError(tool, where, f"{path}[{k!r}]", f"dict key of type {type(k).__name__}")
            out[k] = _snap(v, tool, where, f"{path}[{k!r}]")
        return out
    raise NotSerializableError(tool, where, path, type(value).__name__)


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
