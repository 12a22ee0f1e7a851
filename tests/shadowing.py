"""The shadow contract the safety tests and the red-team probes share.

A task is solved twice from the same starting world: through ``forge.solve()`` and by the
agent alone. Either the forge missed (``source == "agent"``), or its final world and answer
are exactly the agent alone's. A toolset module (``tests/toolsets/safety.py``,
``probes.py``, ``probes_round2.py``) keeps one world at a time: ``load(world)`` replaces it,
``state()`` copies it out, ``READS`` and ``WRITES`` list its tools, and every write appends
to ``world["writes"]``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from skillforge import Forge, Result

__all__ = ["Harness", "Shadow"]


@dataclass
class Shadow:
    """One task solved twice from the same starting world: with skills, and by the agent alone."""

    task: str
    result: Result
    world: dict[str, Any]  # the world after forge.solve
    expected: Any  # what the agent alone answered
    expected_world: dict[str, Any]  # the world after the agent alone

    @property
    def writes(self) -> list:
        return self.world["writes"]

    def describe(self) -> str:
        r = self.result
        return (
            f"\n  task: {self.task!r}"
            f"\n  served by {r.source!r} (skill {r.skill!r}; handover {r.handover!r}; error {r.error!r})"
            f"\n  output:             {r.output!r}"
            f"\n  agent alone output: {self.expected!r}"
            f"\n  writes:             {self.writes}"
            f"\n  agent alone writes: {self.expected_world['writes']}"
        )

    @property
    def same_as_agent(self) -> bool:
        r = self.result
        return r.error is None and r.output == self.expected and self.world == self.expected_world

    def assert_as_agent(self) -> None:
        """A miss is always fine; anything served (even in part) by a skill must be what the agent alone does."""
        if self.result.source == "agent":
            return
        assert self.same_as_agent, "a skill served the task differently from the agent alone:" + self.describe()


class Harness:
    """Forges over a toolset's tools, and the shadow check of a task in one of its worlds."""

    def __init__(self, toolset: ModuleType) -> None:
        self.toolset = toolset

    def forge(self, tmp_path: Path, agent_factory: Callable[[dict[str, Any]], Callable[..., Any]], name: str = "forge") -> Forge:
        """A Forge over every tool of the toolset, its agent built from the registered tools."""
        forge = Forge(skills_dir=tmp_path / name / "skills", state_dir=tmp_path / name / "state", run_log=False)
        tools = {f.__name__: forge.tool(read=True)(f) for f in self.toolset.READS}
        tools |= {f.__name__: forge.tool(f) for f in self.toolset.WRITES}
        forge.agent = agent_factory(tools)
        return forge

    def shadow(self, forge: Forge, agent: Callable[..., Any], task: str, world: dict[str, Any]) -> Shadow:
        """Solve ``task`` with ``forge`` in a copy of ``world``, and with ``agent`` alone in another copy."""
        self.toolset.load(world)
        result = forge.solve(task)
        after = self.toolset.state()
        self.toolset.load(world)
        expected = agent(task)
        return Shadow(task, result, after, expected, self.toolset.state())

    def check(self, forge: Forge, task: str, world: dict[str, Any]) -> Shadow:
        """``shadow`` with the forge's own agent, asserting the result is what the agent alone does."""
        sh = self.shadow(forge, forge.agent, task, world)
        sh.assert_as_agent()
        return sh

    def learn(self, forge: Forge, task: str, world: dict[str, Any], *, after_handover: bool = False) -> Shadow:
        """An agent run (or, with ``after_handover``, a skill's handover to it) that must be
        learned, else the probe that builds on it proves nothing."""
        sh = self.check(forge, task, world)
        sources = ("agent", "skill+agent") if after_handover else ("agent",)
        assert sh.result.source in sources and sh.result.learned, f"not learned: {sh.result.not_learned}" + sh.describe()
        return sh
