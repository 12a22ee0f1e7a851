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
import sqlite3
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

__all__ = ["Task", "Workload", "difference", "load", "pristine", "stream"]


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


Rows = dict[str, frozenset[tuple[Any, ...]]]


def _rows(path: str | Path) -> Rows:
    """Every table's rows in the SQLite world at ``path``."""
    conn = sqlite3.connect(str(path))
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
        return {t: frozenset(conn.execute(f"SELECT * FROM {t}")) for t in tables}
    finally:
        conn.close()


def pristine(make_world: Callable[[Path], None]) -> Rows:
    """Every table's rows in a fresh world that ``make_world`` makes (cache it: a world is made each call)."""
    with tempfile.TemporaryDirectory(prefix="world-") as tmp:
        path = Path(tmp) / "fresh.sqlite3"
        make_world(path)
        return _rows(path)


def difference(path: str | Path, fresh: Mapping[str, frozenset[tuple[Any, ...]]]) -> dict[str, list[list[Any]]]:
    """The world at ``path`` as its difference from ``fresh`` (``pristine``), table by table, sorted:
    ``table`` lists the rows it has that a fresh world lacks, ``table (removed)`` the rows of a fresh
    world it lacks. Two worlds in the same state give equal differences, and a difference stays small
    where a whole world (thousands of rows) is slow to compare."""
    now = _rows(path)
    out: dict[str, list[list[Any]]] = {}
    for table, rows in sorted(fresh.items()):
        current = now.get(table, frozenset())
        out[table] = sorted((list(r) for r in current - rows), key=repr)
        out[f"{table} (removed)"] = sorted((list(r) for r in rows - current), key=repr)
    return out
