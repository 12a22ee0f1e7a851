"""What ``solve()`` returns, and what a skill that stopped leaves behind."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._trajectory import Call

__all__ = ["Attempt", "Result"]


@dataclass(slots=True)
class Attempt:
    """A skill run that stopped: what it did and why it stopped."""

    skill: str
    calls: list[tuple[str, dict[str, Any], Any, str | None]]
    reason: str
    wrote: bool
    captures: dict[int, Any]
    post_captures: dict[int, Any]


@dataclass(slots=True)
class Result:
    """What ``solve()`` did for one task.

    Attributes:
        task: the task as given.
        output: what the skill or the agent returned.
        source: ``"skill"``, ``"agent"`` or ``"skill+agent"``.
        skill: the skill that served the task (or started it), or None.
        llm_calls: model requests made for this task (0 on a pure hit).
        prompt_tokens / completion_tokens: tokens those requests used.
        duration: seconds spent in ``solve()``.
        learning: of those, the seconds spent learning from the agent's run (0 where nothing was
            learned from: a hit, a failed run); probes are not in it (they run after ``solve()``).
        error: why the task failed, or None if it succeeded.
        learned: the name of the skill written from this run, if any.
        not_learned: why an agent run was not turned into a skill, if it was not.
        handover: why a skill stopped and handed over to the agent, if it did.
        handover_at: how many of ``calls`` the skill made before it stopped.
        clauses: for a message of several requests served by composing skills, each clause's
            text and the skill that served it (or stopped), in message order; else empty.
    """

    task: str
    output: Any
    source: str
    skill: str | None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    duration: float = 0.0
    learning: float = 0.0
    error: str | None = None
    learned: str | None = None
    not_learned: str | None = None
    handover: str | None = None
    handover_at: int | None = None
    clauses: tuple[tuple[str, str], ...] = ()
    _raw_calls: list[tuple[str, dict[str, Any], Any, str | None]] = field(default_factory=list, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def calls(self) -> list[Call]:
        """The tool calls made, in order (tool, args, result, error)."""
        return [Call.model_construct(tool=t, args=a, result=r, error=e) for t, a, r, e in self._raw_calls]
