"""The tau-bench retail tasks (``bench/data/tau-retail/tasks.json``), gold replay, and what the ceiling needs.

A task is an instruction (what the simulated customer wants), the gold actions (tool calls; in
the train split only writes, in test and dev reads too) and ``outputs`` (what the customer must
be told). tau-bench's reward rule: a run is right when the database it leaves equals the
database left by replaying the gold actions on a fresh copy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from . import tools

__all__ = [
    "PERSONA", "Action", "TauTask", "by_text", "gold_world", "load_tasks", "shape", "task_text", "traceable", "untraceable",
]

SPLITS = ("train", "test", "dev")

PERSONA = re.compile(r"(?<=\. )You are [a-z]+(?:, [a-z]+)*\. ")
"""The persona sentence of the synthetic (train) grammar, e.g. "You are logical, independent, polite. "."""


@dataclass(frozen=True, slots=True)
class Action:
    """One gold tool call."""

    name: str
    kwargs: dict[str, Any]

    @property
    def is_write(self) -> bool:
        return self.name in tools.WRITES


@dataclass(frozen=True, slots=True)
class TauTask:
    """One tau-bench retail task."""

    id: str
    split: str
    user_id: str
    instruction: str
    actions: tuple[Action, ...]
    outputs: tuple[str, ...]

    @property
    def writes(self) -> tuple[Action, ...]:
        """The gold write calls, in order."""
        return tuple(a for a in self.actions if a.is_write)


@cache
def _all() -> tuple[TauTask, ...]:
    raw = json.loads((tools.DATA_DIR / "tasks.json").read_text())
    return tuple(
        TauTask(t["id"], t["split"], t["user_id"], t["instruction"],
                tuple(Action(a["name"], a["kwargs"]) for a in t["actions"]), tuple(t["outputs"]))
        for t in raw
    )


def load_tasks(split: str = "train") -> list[TauTask]:
    """The tasks of ``split`` ("train", "test", "dev", or "all"), in the file's order."""
    if split == "all":
        return list(_all())
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: choose one of {', '.join(SPLITS)} or 'all'")
    return [t for t in _all() if t.split == split]


def task_text(task: TauTask, *, persona: bool = True) -> str:
    """The text handed to ``forge.solve()``: the instruction, or without its persona sentence (``persona=False``)."""
    return task.instruction if persona else PERSONA.sub("", task.instruction, count=1)


@cache
def by_text() -> dict[str, TauTask]:
    """Every task by its instruction text, and by that text without the persona sentence.

    Two test tasks share one instruction, and four train tasks one text without the persona;
    each such pair has the same gold actions (checked).
    """
    out: dict[str, TauTask] = {}
    for t in _all():
        for text in (t.instruction, task_text(t, persona=False)):
            if text in out and out[text].actions != t.actions:
                raise ValueError(f"tasks {out[text].id} and {t.id} share a text but not their actions")
            out.setdefault(text, t)
    return out


def gold_world(task: TauTask) -> tools.Database:
    """A fresh database after replaying ``task``'s gold actions with the plain tool functions.

    The tools' current database is restored afterwards.
    """
    with tools.using(tools.fresh_db()) as db:
        for a in task.actions:
            tools.FUNCTIONS[a.name](**a.kwargs)
    return db


def shape(task: TauTask) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The sequence of the task's gold writes as (tool name, sorted argument keys)."""
    return tuple((a.name, tuple(sorted(a.kwargs))) for a in task.writes)


def _elements(value: Any) -> Iterable[Any]:
    return value if isinstance(value, list) else (value,)


def untraceable(task: TauTask, reads: Sequence[Any], text: str | None = None) -> list[str]:
    """The gold write argument values that neither the task text nor a read result holds.

    The rule (a containment check): a value, or each element of a list value, is traceable when
    it is the empty string, or its text occurs in the task text (``text``, by default the
    instruction; ignoring case), or it occurs as
    a whole JSON value in the JSON text of the read results (``json.dumps(value)`` is a substring
    of ``json.dumps(reads)``: ``"#W6067464"`` quoted, so ``"1"`` does not match inside ``"12"``).
    """
    text = (task.instruction if text is None else text).lower()
    seen = json.dumps(list(reads))
    missing = []
    for a in task.writes:
        for key, value in a.kwargs.items():
            for v in _elements(value):
                if v == "" or str(v).lower() in text or json.dumps(v) in seen:
                    continue
                missing.append(f"{a.name}.{key}={v!r}")
    return missing


def traceable(task: TauTask, reads: Sequence[Any], text: str | None = None) -> bool:
    """Whether every gold write argument value is traceable (see ``untraceable``)."""
    return not untraceable(task, reads, text)
