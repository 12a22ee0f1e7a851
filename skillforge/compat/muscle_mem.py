"""muscle-mem's API, running on skillforge: switch by changing one import.

    from skillforge.compat.muscle_mem import Check, Engine   # was: from muscle_mem import ...

``Engine``, ``@engine.function(pre_check=..., post_check=...)``, ``@engine.method``,
``Check(capture, compare)``, ``set_agent`` / ``set_context`` / ``finalize`` (chainable)
and ``engine(...) -> bool`` (True on a full replay, False when the agent ran) behave
as muscle-mem 0.1.0 documents them. Underneath, runs are compiled into skills with
generated guards, run in the sandbox, and found through an index.

Where muscle-mem is unsafe or wrong, this layer does the safe thing:

1. **The task counts.** muscle-mem matches stored trajectories by their tags only,
   so ``engine("add 2")`` replays an ``"add 1"`` run. Here the engine's arguments
   (with ``params`` and ``tags``) are the task, and a stored run replays only for a
   task its template binds; values the task gives are parameters.
2. **Handing over is not starting over.** muscle-mem restarts the agent from
   scratch after a partial replay, so tool calls already made run again. Here the
   agent continues from the calls made if it accepts ``transcript=``; if it does
   not, it is started afresh only when no tool has run yet, and otherwise the
   engine returns False without re-running anything (``engine.last_result.error``
   says why).
3. **Hits are not stored.** muscle-mem appends every call, hits included, to a
   list it scans on every call, so lookups slow down without bound. Here only
   agent runs are learned, and lookups go through an index: flat as runs pile up.
4. **A failing post-check stops the replay** before the next step (muscle-mem
   raises ``ValueError`` mid-run), and the agent takes over as in 2.
5. **Methods are looked up on the context** by class; ``set_context`` may be
   given several objects over time (the last of each class wins).

Captured check values may be any Python object, as in muscle-mem: they stay in
this engine's memory, and so do its skills (in a temporary directory unless
``skills_dir`` is given). Like muscle-mem's, an engine does not persist across
processes.
"""

from __future__ import annotations

import inspect
import itertools
import shutil
import tempfile
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._agent import accepts_transcript
from .._exceptions import UserError
from .._forge import Forge, Result
from .._tools import Check as _Check

__all__ = ["Check", "Engine", "EngineError"]


class EngineError(UserError, ValueError):
    """Misuse of the engine (also a ValueError, which muscle-mem raises for the same cases)."""


class Check:
    """A cache-validation check: ``capture`` features before (or after) a tool call, ``compare`` them.

    Args:
        capture: called with the tool's arguments (and ``self`` for methods); returns
            any value, kept in the engine's memory.
        compare: ``compare(current, candidate) -> bool | float``; truthy means safe.
    """

    def __init__(self, capture: Callable[..., Any], compare: Callable[[Any, Any], bool | float]) -> None:
        if not callable(capture) or not callable(compare):
            raise EngineError("Check(capture, compare) takes two callables")
        self.capture = capture
        self.compare = compare


class Engine:
    """muscle-mem's ``Engine`` on skillforge.

    Example:
        >>> engine = Engine()
        >>> @engine.function()
        ... def hello(name: str) -> None: ...
    """

    def __init__(self, skills_dir: str | Path | None = None) -> None:
        temporary = skills_dir is None
        base = Path(tempfile.mkdtemp(prefix="skillforge-muscle-mem-")) if temporary else Path(skills_dir)  # type: ignore[arg-type]
        if temporary:  # in memory, like muscle-mem's store: gone with the engine
            weakref.finalize(self, shutil.rmtree, base, True)
        self.forge = Forge(
            skills_dir=base / "skills" if temporary else base,
            state_dir=base / ".state" if temporary else base / ".skillforge",
            importable_skills=False,
        )
        self.agent: Callable[..., Any] | None = None
        self._resumes = False
        self.finalized = False
        self.last_result: Result | None = None
        self._has_methods = False
        self._context: Any = None
        self._snapshots: dict[int, Any] = {}
        self._fresh: list[int] = []
        self._ids = itertools.count(1)

    # -- builder -------------------------------------------------------------------
    def set_agent(self, agent: Callable[..., Any]) -> Engine:
        """The agent to fall back to when no stored run fits."""
        self._not_finalized()
        if not callable(agent):
            raise EngineError(f"set_agent takes a callable, got {type(agent).__name__}")
        self.agent = agent
        self._resumes = accepts_transcript(agent)
        return self

    def set_context(self, method_instance: Any) -> Engine:
        """The object injected as ``self`` into ``@engine.method`` tools on replay."""
        self._not_finalized()
        self._context = method_instance
        self.forge.provide(method_instance)
        return self

    def finalize(self) -> Engine:
        """Check the engine is ready (tools, agent, context) and freeze it."""
        if len(self.forge.registry) == 0:
            raise EngineError("Engine must have at least one tool. Use engine.function() or engine.method() to register tools")
        if self.agent is None:
            raise EngineError("Engine must have an agent to fall back to. Use engine.set_agent(your_agent)")
        if self._has_methods and self._context is None:
            raise EngineError(
                "Engine expects to use method-based tools, but no runtime value was provided for 'self'. "
                "Use engine.set_context(your_dependency_instance)"
            )
        self.finalized = True
        return self

    def _not_finalized(self) -> None:
        if self.finalized:
            raise EngineError("Engine is finalized and cannot be modified")

    # -- tools ---------------------------------------------------------------------
    def function(self, pre_check: Check | None = None, post_check: Check | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator for a function tool, with optional checks before and after each call."""
        return self._register(pre_check, post_check, is_method=False)

    def method(self, pre_check: Check | None = None, post_check: Check | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator for a method tool; its instance comes from ``set_context`` on replay."""
        return self._register(pre_check, post_check, is_method=True)

    def _register(self, pre: Check | None, post: Check | None, *, is_method: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        self._not_finalized()
        for given in (pre, post):
            if given is not None and not isinstance(given, Check):
                raise EngineError(f"checks are Check(capture, compare), got {type(given).__name__}")

        def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
            if is_method:
                self._has_methods = True
            names = [p for p in inspect.signature(func).parameters][1 if is_method else 0 :]
            wrapper = self.forge.tool(
                func,
                guard=self._adapt(pre, names, is_method),
                post_guard=self._adapt(post, names, is_method),
            )
            return wrapper

        return decorate

    def _adapt(self, check: Check | None, names: list[str], is_method: bool) -> _Check | None:
        """A skillforge check that keeps muscle-mem's captured objects in memory, recorded by handle."""
        if check is None:
            return None

        def capture(**named: Any) -> int:
            args = [named.pop(n) for n in names if n in named]
            if is_method:
                args.insert(0, self._context)
            value = check.capture(*args, **named)
            handle = next(self._ids)
            self._snapshots[handle] = value
            self._fresh.append(handle)
            return handle

        def compare(current: int, learned: int) -> bool:
            if learned not in self._snapshots:
                return False  # a capture from another engine or process: nothing to compare with
            return bool(check.compare(self._snapshots[current], self._snapshots[learned]))

        return _Check(capture=capture, compare=compare)

    # -- running -------------------------------------------------------------------
    def __call__(self, *args: Any, tags: list[str] | None = None, params: dict[str, Any] | None = None, **kwargs: Any) -> bool:
        """Run a task: True if a stored run replayed in full, False if the agent ran."""
        if not self.finalized:
            self.finalize()
        user_agent = self.agent
        if self._resumes:

            def agent(task: str, transcript: Any = None) -> Any:
                if transcript:
                    return user_agent(*args, transcript=transcript, **kwargs)  # type: ignore[misc]
                return user_agent(*args, **kwargs)  # type: ignore[misc]

        else:

            def agent(task: str) -> Any:  # type: ignore[misc]
                return user_agent(*args, **kwargs)  # type: ignore[misc]

        self.forge.agent = agent
        self._fresh = []
        try:
            result = self.forge.solve(_task(args, kwargs, tags or [], params or {}))
        finally:
            self.forge.agent = None
        self.last_result = result
        if not result.learned:  # captures of a replay (or of an unlearned run) are not kept: memory stays flat
            for handle in self._fresh:
                self._snapshots.pop(handle, None)
        return result.source == "skill" and result.ok


def _task(args: tuple[Any, ...], kwargs: dict[str, Any], tags: list[str], params: dict[str, Any]) -> str:
    """The task text for the engine's arguments: what a stored run's template must bind."""
    words = [str(a) for a in args] + [f"{k}={v}" for k, v in sorted(kwargs.items())]
    words += [f"[{k} = {v}]" for k, v in sorted(params.items())]
    text = " ".join(words) if words else "(no arguments)"
    if tags:
        text = f"[tags: {', '.join(map(str, tags))}] {text}"
    return text
