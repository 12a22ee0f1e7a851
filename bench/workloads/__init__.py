"""Workloads for the shadow harness (``bench.shadow``).

A workload is a module exposing:

- ``TOOLS``: the tool functions (plain, top-level, importable: skill files import them);
- ``READS``: the names of the tools that only observe (registered with ``read=True``);
- ``TOOLBOX``: a name → callable dict the agent calls the tools through; the harness
  fills it with the Forge's wrappers so the agent's calls are recorded inside ``solve()``
  (outside ``solve()`` a wrapper is the plain function);
- ``make_world(path)``, ``use_world(path)``, ``snapshot(path) -> dict``;
- ``agent(task, transcript=None)``: a deterministic stand-in for a model;
- ``tasks(days=2) -> list[Task]``: the task stream, in order: ``days`` days of it, the first
  days the same whatever ``days`` (a longer stream goes on, it does not reshuffle).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

__all__ = ["Task", "Workload", "load", "stream"]


@dataclass(frozen=True, slots=True)
class Task:
    """One request in a workload's stream.

    Attributes:
        text: what the person typed.
        setup_sql: statements applied to the world just before the task (the world moved on:
            someone got locked out, a ticket was closed by a colleague, ...).
        tempting: designed to tempt a wrong replay of a skill learned earlier.
        kind: a short label of the intent, for the report; ``two_requests`` marks a message of several
            requests (``bench.shadow.SEVERAL``: the report says what became of each).
        day: which day of the stream the task belongs to.
    """

    text: str
    setup_sql: tuple[str, ...] = ()
    tempting: bool = False
    kind: str = ""
    day: int = 1
    why: str = field(default="", compare=False)  # what makes a tempting task tempting


class Workload(Protocol):
    TOOLS: Sequence[Callable[..., Any]]
    READS: frozenset[str]
    TOOLBOX: dict[str, Callable[..., Any]]

    def make_world(self, path: Path) -> None: ...
    def use_world(self, path: Path) -> None: ...
    def snapshot(self, path: Path) -> dict[str, Any]: ...
    def agent(self, task: str, transcript: Sequence[Any] | None = None) -> str: ...
    def tasks(self, days: int = 2) -> list[Task]: ...


def load(name: str) -> Workload:
    """The workload module ``bench.workloads.<name>``."""
    return importlib.import_module(f"{__name__}.{name}")  # type: ignore[return-value]


def stream(wl: Workload, days: int | None = None) -> list[Task]:
    """``wl``'s stream: as long as the workload makes it by default, or ``days`` days of it."""
    if days is None:
        return wl.tasks()
    if days < 1:
        raise ValueError(f"days={days}: a stream has at least one day")
    return [t for t in wl.tasks(days=days) if t.day <= days]
