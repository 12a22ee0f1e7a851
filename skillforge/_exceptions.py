"""The skillforge exception tree.

Errors (all catchable as ``SkillforgeError``)::

    SkillforgeError
    ├── UserError                  the developer's misuse: the message says how to fix it
    │   ├── InvalidTaskError       solve() got an empty or non-string task
    │   ├── ToolDefinitionError    a tool cannot be registered (duplicate name, bad signature)
    │   ├── NoAgentError           a task needs the agent, but none is configured
    │   ├── NotSerializableError   a tool argument or result is not a JSON value
    │   └── ConfigError            bad [tool.skillforge] / SKILLFORGE_* settings
    ├── SkillFileError             a file in skills/ cannot be parsed or read back
    │   └── PolicyError            a skill file breaks the sandbox policy (file, line, rule)
    ├── SandboxError               a skill file fails to compile or load in the sandbox
    ├── AgentError                 the agent failed (model error, turn budget, bad tool call)
    ├── IndexError_                the Chroma index could not be read or written
    └── RunLogError                the run log (statistics, under the state dir) cannot be read

Signals (derive from ``BaseException`` so skill code cannot swallow them with
``except Exception``)::

    SkillforgeSignal
    ├── GuardFailed                a guard in a skill did not hold: hand over to the agent
    └── BudgetExceeded             a skill used up its tool-call or time budget

Exceptions carry data (the step, the guard, the observed value); they never
log or act when constructed.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AgentError",
    "BudgetExceeded",
    "ConfigError",
    "GuardFailed",
    "IndexError_",
    "InvalidTaskError",
    "NoAgentError",
    "NotSerializableError",
    "PolicyError",
    "RunLogError",
    "SandboxError",
    "SkillFileError",
    "SkillforgeError",
    "SkillforgeSignal",
    "ToolDefinitionError",
    "UserError",
]


class SkillforgeError(Exception):
    """Base of every error skillforge raises."""


class UserError(SkillforgeError):
    """The developer used skillforge wrongly; the message says how to fix it."""


class InvalidTaskError(UserError):
    """``solve()`` was given something that is not a non-empty string."""


class ToolDefinitionError(UserError):
    """A function cannot be registered as a tool."""


class NoAgentError(UserError):
    """No skill matched the task and no agent is configured to solve it."""


class ConfigError(UserError):
    """A configuration value is missing or invalid."""


class NotSerializableError(UserError):
    """A tool argument or result is not a JSON value, so it cannot be recorded faithfully.

    Attributes:
        tool: the tool's name (None for the agent's final answer).
        where: ``"arguments"``, ``"result"`` or ``"the agent's final answer"``.
        path: the path inside the value, e.g. ``['items'][0]['when']``.
        type_name: the offending Python type.
    """

    def __init__(self, tool: str | None, where: str, path: str, type_name: str) -> None:
        self.tool = tool
        self.where = where
        self.path = path
        self.type_name = type_name
        subject = f"tool {tool!r}: {where}" if tool else where
        at = f" at {path}" if path else ""
        super().__init__(
            f"{subject}{at} is a {type_name}, which is not a JSON value; "
            "skillforge records only JSON values (str, int, float, bool, None, list, "
            "dict with str keys) so that skills replay exactly. Convert it where it is made "
            "(e.g. return date.isoformat(), a list instead of a tuple)."
        )


class SkillFileError(SkillforgeError):
    """A file in ``skills/`` is unparsable, incomplete or tampered with.

    Attributes:
        path: the file.
        reason: what is wrong with it, and how to fix it.
        warning: the file is still run: a hand edit that no longer reproduces its recorded
            runs, under ``Forge(edited="warn")``; otherwise (False) it is never run.
    """

    def __init__(self, path: str, reason: str, *, warning: bool = False) -> None:
        self.path = path
        self.reason = reason
        self.warning = warning
        super().__init__(f"{path}: {reason}")


class PolicyError(SkillFileError):
    """A skill file breaks the sandbox policy; it is reported and never executed.

    Attributes:
        violations: ``(line, rule, detail)`` for each problem found.
    """

    def __init__(self, path: str, violations: list[tuple[int, str, str]]) -> None:
        self.violations = violations
        listed = "; ".join(f"line {line}: {rule}: {detail}" for line, rule, detail in violations[:5])
        more = f" (+{len(violations) - 5} more)" if len(violations) > 5 else ""
        super().__init__(path, f"breaks the sandbox policy, so it is never run: {listed}{more}")


class SandboxError(SkillforgeError):
    """A skill file failed to compile or load in the sandbox."""


class AgentError(SkillforgeError):
    """The agent could not finish the task (model error, turn budget, bad tool call)."""


class IndexError_(SkillforgeError):  # noqa: N801 - avoid shadowing builtins.IndexError
    """The derived Chroma index could not be read or written."""


class RunLogError(SkillforgeError):
    """The run log under the state directory cannot be read (it is corrupt, or not a run log)."""


class SkillforgeSignal(BaseException):
    """Base of control-flow signals that skill code must not be able to swallow."""


class GuardFailed(SkillforgeSignal):
    """A guard in a skill did not hold; the agent takes over from this point.

    Attributes:
        reason: the guard's own words (``require(cond, "why")``).
        step: how many tool calls the skill had made when the guard failed.
    """

    def __init__(self, reason: str, step: int = -1, observed: Any = None) -> None:
        self.reason = reason
        self.step = step
        self.observed = observed
        super().__init__(reason)


class BudgetExceeded(SkillforgeSignal):
    """A skill used up its budget of tool calls or time; the agent takes over."""
