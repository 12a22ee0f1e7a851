"""skillforge: muscle memory for tool-calling agents.

An agent solves a task once; skillforge records its tool calls, traces every
argument to the task text or an earlier result, and compiles the run into a
plain Python function in ``skills/``. The next task of that shape runs as code.

Example:
    >>> import skillforge
    >>> forge = skillforge.Forge(skills_dir="skills", state_dir=".skillforge")
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ._agent import Agent, OpenAIAgent
from ._compile import Compiled, Rejected, compile_run
from ._config import Settings, load_settings
from ._exceptions import (
    AgentError,
    BudgetExceeded,
    ConfigError,
    GuardFailed,
    IndexError_,
    InvalidTaskError,
    NoAgentError,
    NotSerializableError,
    PolicyError,
    RunLogError,
    SandboxError,
    SkillFileError,
    SkillforgeError,
    SkillforgeSignal,
    ToolDefinitionError,
    UserError,
)
from ._explain import Explanation
from ._forge import Forge, Result
from ._tools import Check
from ._trajectory import Call, Outcome, ToolRef, Trajectory, canonical_json
from ._usage import report_usage
from ._version import __version__
from .runtime import require

__all__ = [
    "Agent",
    "AgentError",
    "BudgetExceeded",
    "Call",
    "Check",
    "Compiled",
    "ConfigError",
    "Explanation",
    "Forge",
    "GuardFailed",
    "IndexError_",
    "InvalidTaskError",
    "NoAgentError",
    "NotSerializableError",
    "OpenAIAgent",
    "Outcome",
    "PolicyError",
    "Rejected",
    "Result",
    "RunLogError",
    "SandboxError",
    "Settings",
    "SkillFileError",
    "SkillforgeError",
    "SkillforgeSignal",
    "ToolDefinitionError",
    "ToolRef",
    "Trajectory",
    "UserError",
    "__version__",
    "asolve",
    "canonical_json",
    "compile_run",
    "default_forge",
    "load_settings",
    "report_usage",
    "require",
    "solve",
    "tool",
]

_default: Forge | None = None
_default_lock = threading.Lock()


def default_forge() -> Forge:
    """The process-wide Forge behind ``skillforge.solve`` and ``skillforge.tool``.

    Configured from ``[tool.skillforge]`` in the nearest ``pyproject.toml`` and
    ``SKILLFORGE_*`` environment variables (see ``Settings``).
    """
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                settings = load_settings()
                agent = OpenAIAgent(model=settings.model) if settings.agent == "openai" else None
                _default = Forge(
                    skills_dir=settings.skills_dir,
                    state_dir=settings.state_dir,
                    agent=agent,
                    chroma_url=settings.chroma_url,
                    learn=settings.learn,
                    embedding=settings.embedding,
                    edited=settings.edited,
                    read_again=settings.read_again,
                    probes=settings.probes,
                    probes_per_hour=settings.probes_per_hour,
                    probe_new=settings.probe_new,
                )
    return _default


def tool(
    func: Callable[..., Any] | None = None, /, *, read: bool = False, name: str | None = None, guard: Check | None = None
) -> Any:
    """``@skillforge.tool`` / ``@skillforge.tool(read=True, guard=Check(...))`` on the default Forge."""
    forge = default_forge()
    if func is not None:
        return forge.tool(func, read=read, name=name, guard=guard)
    return forge.tool(read=read, name=name, guard=guard)


def solve(task: str) -> Result:
    """Solve ``task`` on the default Forge: a skill if one fits, else its agent."""
    return default_forge().solve(task)


async def asolve(task: str) -> Result:
    """``await skillforge.asolve(task)``: ``solve`` for async tools and agents, on the default Forge."""
    return await default_forge().asolve(task)
