"""A toolset's world shadowed by its agent: one home for the SQLite toolsets' test harness.

A toolset module (``tests.toolsets.sameas``, ``tests.toolsets.routes``, ...) has ``DB`` (the path of
its world), ``TOOLBOX`` (what its agent calls), ``TOOLS``, ``READS``, ``make_world``, ``snapshot``
and ``agent``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from collections.abc import Callable
from types import ModuleType
from typing import Any


def open_world(toolset: ModuleType, tmp: Path, agent: Callable[..., str] | None = None) -> Any:
    """A fresh world of ``toolset`` under ``tmp`` and a Forge over its tools with ``agent`` (the toolset's
    own by default; the recording wrappers in its ``TOOLBOX``, which the caller clears after)."""
    from skillforge import Forge

    toolset.make_world(tmp / "world.sqlite3")
    forge = Forge(skills_dir=tmp / "skills", state_dir=tmp / "state", agent=agent or toolset.agent)
    for f in toolset.TOOLS:
        toolset.TOOLBOX[f.__name__] = forge.tool(read=f.__name__ in toolset.READS)(f)
    return forge


def shadowed(
    toolset: ModuleType, forge: Any, tmp: Path, task: str, alone: Callable[..., str] | None = None,
) -> tuple[Any, bool]:
    """``task`` through ``forge.solve()`` and, from the same starting state, through the agent ``alone``
    (the toolset's own by default) with the plain tools (nothing recorded): the result, and whether the
    two left the same world and gave the same answer."""
    main = toolset.DB["path"]
    shutil.copyfile(main, tmp / "alone.sqlite3")
    result = forge.solve(task)
    after = toolset.snapshot()
    toolset.DB["path"] = tmp / "alone.sqlite3"
    saved = dict(toolset.TOOLBOX)
    toolset.TOOLBOX.update({f.__name__: f for f in toolset.TOOLS})
    try:
        answer = (alone or toolset.agent)(task)
        same = after == toolset.snapshot() and answer == result.output
    finally:
        toolset.TOOLBOX.update(saved)
        toolset.DB["path"] = main
    return result, same
