"""The Forge: find → run → fall back → learn.

``solve(task)`` looks for a skill whose template binds the task (hot template
index first, Chroma candidates second). A hit runs the skill in the sandbox
against the real tools; a miss, or a skill that stops, goes to the agent while
every tool call is recorded; a clean agent run is compiled, admitted and
written to ``skills/``. ``asolve(task)`` does the same on an event loop, for
``async def`` tools and async agents (the one body both share: ``_driving``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, overload

from ._agent import accepts_transcript
from ._driving import AgentCall, Step, Steps, adrive, drive, is_async_callable
from ._census import Census
from ._compile import Compiled, Rejected
from ._exceptions import (
    BudgetExceeded,
    GuardFailed,
    InvalidTaskError,
    NoAgentError,
    SandboxError,
    SkillFileError,
    SkillforgeSignal,
    UserError,
)
from ._index import HotIndex, Match, SemanticIndex
from ._library import EDITED, Library, MetaCache, SkillFile
from ._composing import Composing
from ._explain import Explanation, explain_task
from ._held import HeldRuns
from ._learner import Learning, too_long
from ._prober import ProbeBudget, Prober
from ._loading import LOCAL_TOOLS, Loading
from ._template import MAX_TASK_CHARS, TaskTemplate
from ._runlog import RunLog, Stats
from ._sandbox import compile_skill, load_function
from ._tools import Check, Run, Tool, ToolRegistry, _loop, activate, deactivate, error_text, use_asolve
from ._result import Attempt, Result
from ._trajectory import Call, Outcome, ToolRef, Trajectory
from ._usage import Usage

__all__ = ["LOCAL_TOOLS", "Forge", "Result"]

logger = logging.getLogger(__name__)


def _check_task(task: Any) -> str:
    if not isinstance(task, str):
        raise InvalidTaskError(f"solve() takes the task as a str, got {type(task).__name__}: pass the task's text")
    if not task.strip():
        raise InvalidTaskError("solve() got an empty task: pass the text of what should be done")
    return task


class Forge(Loading, Learning, Composing):
    """Records an agent's tool calls, learns skills from them, and serves repeats as code.

    Args:
        skills_dir: where skill files are written and read (the source of truth).
        state_dir: derived state (the Chroma index, the run log, a cache of parsed files); safe to
            delete, even under a running process: what is gone is made again when next used.
        agent: ``agent(task)`` that solves tasks by calling the tools; may be set later.
        tools: already-decorated tools (of any forge) to register here too.
        chroma_url: a Chroma server to use instead of the embedded store.
        learn: write skills from successful agent runs.
        max_skill_calls: tool calls one skill run may make before it is stopped.
        max_skill_seconds: time one skill run may take (checked every 8 tool calls and every 32 loop iterations).
        run_log: record every solve in SQLite under ``state_dir`` (``skillforge stats``).
        embedding: ``"hashing"`` (offline, default) or ``"minilm"`` (offline, semantic; an extra).
        importable_skills: require tools that skill files can import (not ``__main__`` or
            local functions); only a forge whose skills never leave the process (the
            muscle-mem layer) turns this off.
        read_again: after each write of an agent's run, make again (unrecorded) the earlier reads of
            what it took, so that a later request of the same message is learned from the world it
            acted on (``Call.after``); reads must be free of effects, as ``read=True`` declares. Turn it
            off for reads too costly to repeat: such requests are then not learned from.
        edited: what a skill file edited by hand that no longer reproduces its recorded runs
            gets: ``"run"`` (run, silently), ``"warn"`` (run, with a warning and a problem that
            says so; the default) or ``"refuse"`` (not run: its tasks go to the agent). Checked
            once per file content; files as skillforge wrote them are never replayed.

    One Forge may be shared by threads. Skill hits run side by side without a lock; reading
    ``skills/``, learning and filling the semantic index take the Forge's one lock (the library's
    thread lock, under which its file lock keeps other processes out). The tools must be safe to
    call from several threads (a database connection per thread, say).

    Example:
        >>> forge = Forge(skills_dir="skills", state_dir=".skillforge")
        >>> @forge.tool(read=True)
        ... def get_order(order_id: str) -> dict:
        ...     return {"id": order_id, "status": "shipped"}
        >>> get_order("7")          # outside solve() it is the plain function
        {'id': '7', 'status': 'shipped'}
    """

    def __init__(
        self,
        skills_dir: str | os.PathLike[str] = "skills",
        state_dir: str | os.PathLike[str] = ".skillforge",
        agent: Callable[..., Any] | None = None,
        *,
        tools: Iterable[Callable[..., Any]] = (),
        chroma_url: str | None = None,
        learn: bool = True,
        max_skill_calls: int = 256,
        max_skill_seconds: float = 30.0,
        importable_skills: bool = True,
        run_log: bool = True,
        embedding: str = "hashing",
        edited: str = "warn",
        read_again: bool = True,
        probes: int = 0,
        probes_per_hour: int = 120,
        background_probes: bool = True,
        probe_new: bool = True,
    ) -> None:
        if max_skill_calls < 1 or max_skill_seconds <= 0:
            raise ValueError("max_skill_calls and max_skill_seconds must be positive")
        for what, n in (("probes", probes), ("probes_per_hour", probes_per_hour)):
            if type(n) is not int or n < 0:
                raise UserError(f"{what}={n!r}: give a whole number of probe runs, 0 or more (0 turns probes off)")
        if edited not in EDITED:
            raise UserError(f"edited={edited!r}: use 'run', 'warn' or 'refuse' (what a hand-edited skill file that no "
                            "longer reproduces its recorded runs gets)")
        self.edited = edited
        self.read_again = read_again
        self.importable_skills = importable_skills
        self.max_skill_calls = max_skill_calls
        self.max_skill_seconds = max_skill_seconds
        self.library = Library(skills_dir)
        self.state_dir = Path(state_dir)
        self.agent = agent
        self.learn_enabled = learn
        self.registry = ToolRegistry(importable=importable_skills)
        self.instances: dict[str, Any] = {}
        self.semantic = SemanticIndex(self.state_dir / "chroma", url=chroma_url, embedding=embedding)
        self.runlog = RunLog(self.state_dir / "runs.sqlite3") if run_log else None
        self.cache = MetaCache(self.state_dir / "library.sqlite3")
        self.held = HeldRuns(self.state_dir / "held")
        self._hot: HotIndex | None = None
        self._problems: list[SkillFileError] = []
        self._seen: dict[Path, tuple[int, int]] = {}
        self._by_route: dict[str, set[str]] = {}  # see Learning._evidence
        self._lifts: dict[tuple[str, str], Any] = {}
        self._census = Census()  # see Learning._world
        self._programs: dict[tuple[str, str], Any] = {}  # (skill, content hash) → its first run, lifted (see _rephrased)
        self._keys: dict[tuple[str, str], str | None] = {}  # the same → what same_program compares (see _rephrased)
        self._by_key: dict[str | None, set[str]] = {}  # a program key → skills of it (see _rephrased)
        self._by_params: dict[frozenset[tuple[str, str]], set[str]] = {}  # a template's parameters → skills (see _with_variant)
        self._said: dict[str, str] = {}  # see Learning._saying
        self._tools_keys: dict[tuple[Any, ...], str] = {}  # the tools → the key of their policy verdicts
        self._caught_up: dict[str, tuple[Any, int]] = {}  # see Learning._new_in
        self._by_word: dict[str, set[str]] = {}
        self._text_of: dict[str, frozenset[str]] = {}  # see Learning._near_texts
        self._texts_by_word: dict[str, set[str]] = {}
        self._dir_mtime: int | None = None
        self._synced = False  # the semantic index had a full sync: skills learned since are added one by one
        self._loaded = False  # the hot index holds all of skills/ (False while it is (re)read)
        # One lock for what threads share: the index, what was seen on disk, learning. It is the
        # library's thread lock, so a thread that learns (holding the library) never waits on itself,
        # and no order of the two can deadlock. Skill hits read the hot index without it.
        self._lock = self.library.mutex
        self.prober = Prober(self, ProbeBudget(per_skill=probes, per_hour=probes_per_hour))
        self.background_probes = background_probes
        self.probe_new = probe_new  # probe a skill when first written; else once a second run widens it
        self._probing = threading.Lock()  # one drain of the probe queue at a time
        self._probe_thread: threading.Thread | None = None
        for t in tools:
            self.registry.register(t)

    def close(self) -> None:
        """Write the queued solves and let go of the open files (the run log, the metadata cache, the
        semantic index); the Forge may be used again after (they open again). ``with Forge(...) as
        forge:`` closes it at the end of the block."""
        thread = self._probe_thread
        if thread is not None:
            thread.join()  # probes under way finish: what they found is written, or nothing is
        with self._lock:
            if self.runlog is not None:
                self.runlog.close()
            self.cache.close()
            self.semantic.close()

    def __enter__(self) -> Forge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def agent(self) -> Callable[..., Any] | None:
        """The agent: ``agent(task)`` (or ``async def``, served by ``asolve``), or None."""
        return self._agent

    @agent.setter
    def agent(self, agent: Callable[..., Any] | None) -> None:
        self._agent_async = is_async_callable(agent)  # solve() refuses an async agent: asked once, here
        self._agent = agent

    @property
    def skills_dir(self) -> Path:
        return self.library.dir

    # -- tools ----------------------------------------------------------------------
    @overload
    def tool(self, func: Callable[..., Any], /) -> Callable[..., Any]: ...
    @overload
    def tool(
        self, func: None = None, /, *, read: bool = False, name: str | None = None, guard: Check | None = None
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]: ...

    def tool(
        self,
        func: Callable[..., Any] | None = None,
        /,
        *,
        read: bool = False,
        name: str | None = None,
        guard: Check | None = None,
        post_guard: Check | None = None,
    ) -> Any:
        """Register a tool: ``@forge.tool`` (a write) or ``@forge.tool(read=True)`` (an observation).

        ``guard=Check(capture, compare)`` declares the tool's own pre-check: skills
        compare what it captures now with what it captured when they were learned;
        ``post_guard`` does the same right after the call.
        The decorated function is returned unchanged in behaviour: outside
        ``solve()`` it only runs.
        """
        if func is not None:
            return self.registry.register(func, read=read, name=name, guard=guard, post_guard=post_guard)

        def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
            return self.registry.register(f, read=read, name=name, guard=guard, post_guard=post_guard)

        return decorate

    def provide(self, *instances: Any) -> None:
        """Make instances available to skills and agents whose tools are their methods."""
        for inst in instances:
            self.instances[type(inst).__qualname__] = inst

    def explain(self, task: str, *, run: bool = False, limit: int = 5) -> Explanation:
        """What ``solve(task)`` would do, and why: the skills that bind it (with their values) and the
        nearest templates that do not, each with the literal word or the slot (its pattern, the text
        it saw) where binding stops. ``skillforge why`` prints it.

        With ``run=True`` each skill that binds runs against the current world with read tools only
        (a write tool is never called: the run stops before it) and says which guard stopped it, with
        the values the guard read, which write it would make next, or what it answers. Nothing is
        learned, and the run log is not written.

        Example:
            >>> print(forge.explain("Refund the order #1042"))  # doctest: +SKIP
            "Refund the order #1042": no skill binds it; solve() hands it to the agent (and learns from its run)
            nearest templates:
             1. "Refund order #{order_id}"  (refund_order; found by shape)
                the template says "order" where the task says "the order #1042"
        """
        return explain_task(self, _check_task(task), run=run, limit=limit)

    def find(self, task: str) -> Match | None:
        """The skill whose template binds ``task`` (most specific first), or None."""
        matches = self.find_all(task)
        return matches[0] if matches else None

    def find_all(self, task: str) -> list[Match]:
        """Every skill whose template binds ``task`` at the highest specificity, variants included."""
        hot = self._index()
        if len(task) > MAX_TASK_CHARS:  # no template binds it: never embed or look up a huge task
            return []
        matches = hot.lookup(task)
        if matches or not len(hot):
            return matches
        names = self._semantic_candidates(task)
        return hot.find_among(names, task) if names else []

    def _semantic_candidates(self, task: str) -> list[str]:
        try:
            if not self.semantic.complete():  # never synced, or its store was deleted since
                with self._lock:  # one full sync, taken in step with learning (which adds to it once synced)
                    if not self.semantic.complete():
                        self.semantic.sync(list(self._index().by_name.values()))
                        self._synced = True
            return self.semantic.query(task)
        except Exception as e:  # the index is derived: a broken one costs hits, never correctness
            logger.warning("semantic index unavailable (%s); only exact template shapes will hit", e)
            return []

    def _function(self, skill: SkillFile) -> Callable[..., Any]:
        """The skill's function, loaded in the sandbox; ``SandboxError`` (and the file becomes a
        problem, no longer served) if it does not compile or load, whatever the cause."""
        if skill.func is None:
            try:
                modules: dict[str, dict[str, Any]] = {}
                for name, ref in skill.tools.items():
                    if not ref.method:
                        modules.setdefault(ref.module, {})[ref.qualname] = self.registry.tools[name].for_skills
                code = compile_skill(skill.source, str(skill.path))
                skill.func = load_function(code, skill.name, modules, f"skills.{skill.name}")
            except Exception as e:  # RecursionError, ImportError, ...: the file's problem, not the caller's
                reason = str(e) if isinstance(e, SandboxError) else f"{type(e).__name__}: {e}"
                self._problems.append(SkillFileError(str(skill.path), f"does not load in the sandbox ({reason})"))
                if self._hot is not None:
                    self._hot.remove(skill.name)
                raise SandboxError(reason) from e
        return skill.func

    # -- solving -------------------------------------------------------------------
    def solve(self, task: str) -> Result:
        """Serve ``task`` from a skill if one binds it, else from the agent (and learn).

        Every solve is recorded in the run log (``forge.stats()``, ``skillforge stats``).

        Variants of a template are tried in turn while no write has happened; when a
        guard fails (or a tool raises) the agent continues from the calls made so far.

        Once a tool that writes may have run, ``solve()`` returns: what went wrong after
        that (the agent or a tool raising, a value that cannot be recorded, a skills
        directory that cannot be written) is in ``result.error`` or ``result.not_learned``,
        and the run log records the solve. Only ``KeyboardInterrupt`` and ``SystemExit``
        pass through (an agent run is logged first).

        Raises:
            InvalidTaskError: ``task`` is not a non-empty string.
            NoAgentError: no skill binds the task and no agent is configured.
            UserError: the agent misused skillforge before any write (e.g. a nested ``solve("")``),
                or the forge has ``async def`` tools or an async agent (use ``asolve``).
        """
        start = time.perf_counter()
        _check_task(task)
        if self.registry.asynchronous or self._agent_async:
            raise self._needs_asolve()
        usage = Usage()  # what report_usage() counts during this solve, by any of its runs
        matches = self.find_all(task)
        first = None
        if matches:  # the hot path: the first variant, here
            output, calls, first = self._run_skill(matches[0], usage)
            if first is None:
                result = Result(task, output, "skill", matches[0].skill.name, duration=time.perf_counter() - start, _raw_calls=calls)
                return self._logged(result, usage)
        return drive(self._serving(task, start, matches, first, usage))  # type: ignore[no-any-return]

    def _serving(self, task: str, start: float, matches: list[Match], first: Attempt | None, usage: Usage) -> Steps:
        """The rest of a solve after its first variant stopped (``first``), or after a miss: the
        other variants, a composition of skills, the agent. One body for ``solve()`` and
        ``asolve()``: it yields the steps that call out (see ``_driving``)."""
        if not matches:
            matches = yield Step(self._look_again, task)  # before paying for the agent
            if not matches:
                composed = yield from self._composed(task, start, usage)
                if composed is not None:
                    return composed
                return (yield from self._agent_steps(task, start, prior=None, skill=None, handover=None, family=None, usage=usage))
        attempt = first
        for match in matches[1:] if first is not None else matches:
            if attempt is not None and attempt.wrote:
                break  # a write happened: only the agent may continue from here
            output, calls, attempt = yield Step(self._run_skill, match, usage, threaded=self._threaded(match))
            if attempt is None:
                result = Result(task, output, "skill", match.skill.name, duration=time.perf_counter() - start, _raw_calls=calls)
                return self._logged(result, usage)
        last: Attempt = attempt  # type: ignore[assignment]  # matches is non-empty
        logger.info("skill %s stopped (%s); handing over", last.skill, last.reason)
        family = matches[0].template or matches[0].skill.template  # the phrasing the task was said in
        return (yield from self._agent_steps(
            task, start, prior=last.calls, skill=last.skill, handover=last.reason, family=family,
            captures=last.captures, post_captures=last.post_captures, usage=usage,
        ))

    def _look_again(self, task: str) -> list[Match]:
        """After a miss: has another process learned a skill for ``task`` meanwhile? (one ``stat``)"""
        with self._lock:
            self._sync_disk()
        return self.find_all(task)

    def _threaded(self, match: Match) -> bool:
        """Whether ``asolve()`` runs the skill in a worker thread: it calls ``async def`` tools."""
        return self.registry.uses_async(match.skill.tools)

    @property
    def needs_asolve(self) -> bool:
        """Whether this forge has ``async def`` tools or an async agent: ``solve()`` refuses it, ``asolve()`` serves it."""
        return bool(self.registry.asynchronous or self._agent_async)

    def _needs_asolve(self) -> Exception:
        if self.registry.asynchronous:
            names = ", ".join(sorted(self.registry.asynchronous))
            return use_asolve(f"this forge has async tools ({names}), which solve() cannot await")
        return use_asolve(f"this forge's agent {self.agent!r} is async, which solve() cannot await")

    async def asolve(self, task: str) -> Result:
        """``solve()`` for async code: ``async def`` tools and async agents, on the running event loop.

        Served and learned exactly as ``solve()`` serves and learns (the same skill files). An async
        agent is awaited on the loop, and its awaited tool calls are recorded; a synchronous agent
        (``OpenAIAgent``) runs in a worker thread, so it does not block the loop. Skills are plain
        code: one that calls ``async def`` tools runs in a worker thread, and each of those calls
        runs on this loop. Several ``asolve()`` calls may run at once (``asyncio.gather``); skillforge's
        worker threads (``_driving.WORKERS``, 32) are its own, not the loop's default executor.

        Cancelled, ``asolve()`` lets a skill or synchronous agent running in a worker thread make no
        further async tool call, waits for that thread to end, and raises ``CancelledError``; the run
        log records what an agent did until then.

        Example:
            >>> result = await forge.asolve("Refund order #1234")   # doctest: +SKIP

        Raises:
            The errors ``solve()`` raises.
        """
        start = time.perf_counter()
        _check_task(task)
        looping = _loop.set(asyncio.get_running_loop())
        try:
            return await adrive(self._serving(task, start, self._hot_matches(task), None, Usage()))  # type: ignore[no-any-return]
        finally:
            _loop.reset(looping)

    def _hot_matches(self, task: str) -> list[Match]:
        """What the template indexes bind ``task`` to, found without waiting on anything; [] before the
        library is read, or when only the semantic index could tell (``asolve`` then looks again in a
        worker thread, as ``solve()`` does after a miss)."""
        hot = self._hot
        if hot is None or not self._loaded or len(task) > MAX_TASK_CHARS:
            return []
        return hot.lookup(task)

    def _run_skill(self, match: Match, usage: Usage | None = None) -> tuple[Any, list[Any], Attempt | None]:
        """``(output, calls, None)`` when the skill finished, else ``(None, calls, attempt)`` saying why not."""
        skill = match.skill
        func = skill.func
        if func is None:
            try:
                func = self._function(skill)
            except Exception as e:  # in a composed message, earlier clauses may have written: never raise
                logger.warning("skill %s does not load in the sandbox (%s); it is skipped", skill.path, e)
                why = e if isinstance(e, SandboxError) else error_text(e)
                return None, [], Attempt(skill.name, [], f"skill {skill.name} failed to load: {why}", False, {}, {})
        kwargs = match.params
        if skill.instances:
            kwargs = dict(kwargs)
            for param, owner in skill.instances:
                inst = self.instances.get(owner)
                if inst is None:
                    why = f"no {owner} instance was provided (forge.provide)"
                    return None, [], Attempt(skill.name, [], why, False, {}, {})
                kwargs[param] = self.registry.for_skill(owner, inst)
        run = Run(
            snapshot=False, instances=self.instances, tools=self.registry.tools,
            budget=self.max_skill_calls, seconds=self.max_skill_seconds, usage=usage,
        )
        token = activate(run)
        try:
            return func(**kwargs), run.calls, None
        except GuardFailed as g:
            reason = f"guard failed in {skill.name}: {g.reason}"
        except BudgetExceeded as b:
            reason = f"{skill.name} stopped: {b}"
        except Exception as e:
            reason = f"{skill.name} raised {type(e).__name__}: {e}"
            if isinstance(e, TypeError) and e.__traceback__ is not None and e.__traceback__.tb_next is None:
                self._misfit(skill, e)  # raised by the call itself: the function does not take what its template binds
        finally:
            deactivate(token)
        wrote = any(not self._is_read(t) for t, _a, _r, _e in run.calls)  # a write that raised may have taken effect
        return None, run.calls, Attempt(skill.name, run.calls, reason, wrote, run.captures, run.post_captures)

    def _agent_steps(
        self,
        task: str,
        start: float,
        *,
        prior: list[Any] | None,
        skill: str | None,
        handover: str | None,
        family: TaskTemplate | None,
        captures: dict[int, Any] | None = None,
        post_captures: dict[int, Any] | None = None,
        clauses: tuple[tuple[str, str], ...] = (),
        usage: Usage | None = None,
    ) -> Steps:
        """The agent's part of a solve (from the start, or continuing from a skill's calls), then
        learning from its run; yields the agent's call and the learning (see ``_driving``)."""
        agent = self.agent
        usage = usage if usage is not None else Usage()
        if agent is None and handover is not None:
            return self._logged(Result(
                task=task, output=None, source="skill", skill=skill, duration=time.perf_counter() - start,
                error=f"{handover}; no agent is configured to continue (pass agent= to Forge() or assign forge.agent)",
                handover=handover, clauses=clauses, _raw_calls=list(prior or []),
            ), usage)
        if agent is None:
            raise NoAgentError(
                f"no skill matches {task!r} and no agent is configured: pass agent= to Forge(), "
                "assign forge.agent, or set SKILLFORGE_AGENT=openai for the default forge"
            )
        prior = list(prior or [])
        source = "skill+agent" if handover is not None else "agent"
        wrote = self._wrote(prior)
        resumes = accepts_transcript(agent)
        if wrote and not resumes:
            return self._logged(Result(
                task=task, output=None, source="skill", skill=skill, duration=time.perf_counter() - start,
                error=f"the skill stopped after a write ({handover}) and the agent cannot resume from a transcript; "
                "writes are never repeated, so the task was left for a person",
                handover=handover, clauses=clauses, _raw_calls=prior,
            ), usage)
        # the transcript the agent continues from; without transcript support it starts afresh (reads only)
        carried = prior if resumes else []
        run = Run(snapshot=True, instances=self.instances, tools=self.registry.tools, usage=usage, read_again=self.read_again)
        for i, (t, a, r, e) in enumerate(carried):  # carried calls become the start of the recorded run
            run.calls.append((t, run._snap(a, t, "arguments"), run._snap(r, t, "result"), e))
            if captures and i in captures:
                run.captures[i] = run._snap(captures[i], t, "pre-check capture")
            if post_captures and i in post_captures:
                run.post_captures[i] = run._snap(post_captures[i], t, "post-check capture")
        token = activate(run)
        error = None
        output = None

        def result_of(error: str | None) -> Result:
            return Result(
                task=task, output=output, source=source, skill=skill, error=error,
                handover=handover, handover_at=len(prior) if handover is not None else None, clauses=clauses,
                _raw_calls=(prior if not carried else []) + run.calls, duration=time.perf_counter() - start,
            )

        try:
            if carried:
                transcript = [Call.model_construct(tool=t, args=a, result=r, error=e) for t, a, r, e in carried]
                output = yield AgentCall(agent, task, transcript=transcript)
            else:
                output = yield AgentCall(agent, task)
        except UserError as e:
            if not self._wrote(run.calls):
                raise  # the developer's misuse, before anything was written: theirs to fix, as raised
            error = error_text(e)
        except SkillforgeSignal as e:  # a skill the agent (or a tool) called as a plain function stopped
            error = f"a skill called as a plain function stopped: {error_text(e)}"
        except Exception as e:
            error = error_text(e)
        except BaseException as e:  # KeyboardInterrupt, SystemExit: not ours to swallow; the solve is logged first
            self._logged(result_of(f"interrupted: {error_text(e)}"), usage)
            raise
        finally:
            deactivate(token)
        if error is not None and len(run.calls) > len(carried) and run.calls[-1][3] is not None:
            error = f"tool {run.calls[-1][0]!r} raised {run.calls[-1][3]}"
        result = result_of(error)
        if error is not None:
            result.not_learned = f"the run failed: {error}"
        elif not self.learn_enabled:
            result.not_learned = "learning is off"
        else:
            began = time.perf_counter()
            yield Step(self._learn_from, task, run, output, result, family)
            result.learning = time.perf_counter() - began
        result.duration = time.perf_counter() - start
        return self._logged(result, usage)

    def _logged(self, result: Result, usage: Usage | None = None) -> Result:
        """Count the solve's model usage into ``result`` and record it in the run log; never raises
        (the log is a record, not the product)."""
        if usage is not None:
            result.llm_calls = usage.requests
            result.prompt_tokens = usage.prompt_tokens
            result.completion_tokens = usage.completion_tokens
        if self.runlog is not None:
            try:
                self.runlog.record(result)
            except Exception:
                logger.exception("could not record a solve in the run log %s", self.runlog.path)
        if self.background_probes and self.prober.queue:
            self._probe_later()
        return result

    # -- probes ------------------------------------------------------------------
    def probe(self) -> list[str]:
        """Probe the skills learned or widened since the last probes, now, within the budget
        (``probes=`` per skill, ``probes_per_hour``); the names of the skills written again, lighter.

        A Forge made with ``probes=N`` does this by itself in a background thread after each solve
        that learned (``background_probes=True``, the default); call it to probe in step with your
        own code instead (``background_probes=False``), as tests and benchmarks do.

        Example:
            >>> forge = Forge(agent=my_agent, probes=8, background_probes=False)  # doctest: +SKIP
            >>> forge.solve("Refund order #1042"); forge.probe()                 # doctest: +SKIP
            ['refund_order']
        """
        with self._probing:
            return self.prober.drain()

    def _probe_later(self) -> None:
        """Drain the probe queue in a background thread, off the serving path (one at a time)."""
        with self._lock:
            thread = self._probe_thread
            if thread is not None and thread.is_alive():
                return  # it takes what was queued meanwhile
            self._probe_thread = threading.Thread(target=self._probe_in_background, name="skillforge-probes", daemon=True)
            self._probe_thread.start()

    def _probe_in_background(self) -> None:
        try:
            self.probe()
        except Exception:  # probes are evidence: a failure costs them, never a solve
            logger.exception("probing in the background failed")

    def _wrote(self, calls: list[tuple[str, dict[str, Any], Any, str | None]]) -> bool:
        """Whether any of ``calls`` may have written (a write that raised may have taken effect)."""
        return any(not self._is_read(t) for t, _a, _r, _e in calls)

    def stats(self) -> Stats:
        """What the run log says: hits, misses, handovers, model requests and tokens made and saved."""
        if self.runlog is None:
            raise UserError("this Forge keeps no run log (run_log=False)")
        return self.runlog.stats()

    def _is_read(self, tool: str) -> bool:
        t = self.registry.tools.get(tool)
        return bool(t and t.read)

    # -- learning ------------------------------------------------------------------
    def _learn_from(self, task: str, run: Run, output: Any, result: Result, family: TaskTemplate | None) -> None:
        """Learn from a successful run into ``result.learned`` / ``result.not_learned``; never raises.

        The run's writes have happened: a failure while hashing, lifting, generating, admitting,
        writing or cutting it into requests costs the learning, never the solve.
        """
        try:
            known = None if self.probe_new or self.prober.budget.per_skill <= 0 else set(self._index().by_name)
            self._learn_run(task, run, output, result, family)
            if result.learned and self.prober.budget.per_skill > 0:
                for name in result.learned.split(", "):
                    if known is None or name in known:  # ``probe_new=False``: once the shape recurs
                        self.prober.want(name)
        except (Exception, SkillforgeSignal) as e:
            logger.exception("learning from the run of %r failed", task)
            result.not_learned = (
                f"learning stopped on an unexpected error ({error_text(e)}); files in {self.skills_dir} are whole "
                "(each is written atomically), but this run may be learned only in part"
            )

    def _learn_run(self, task: str, run: Run, output: Any, result: Result, family: TaskTemplate | None) -> None:
        if (long := too_long(task)) is not None:  # before cutting it into requests or lifting it
            result.not_learned = long.reason
            return
        if run.unlearnable is not None:
            result.not_learned = str(run.unlearnable)
            return
        if run.unrecorded:
            result.not_learned = (
                f"the record is incomplete: {', '.join(sorted(run.unrecorded))} ran outside the recorded context "
                "(in a thread the agent started?); nothing is learned from a partial record. Call tools from the "
                "agent's own thread, or copy the context into worker threads (contextvars.copy_context().run)"
            )
            return
        try:
            traj = self.trajectory(task, run.calls, output, run.captures, run.post_captures, run.rereads)  # a skill's calls too
        except UserError as e:
            result.not_learned = str(e)
            return
        if family is None:
            requests = self._learn_requests(traj)
            if requests is not None:
                learned, why = requests
                result.learned = ", ".join(learned) or None
                if why:
                    result.not_learned = "; ".join(why)
                return
        verdict = self.learn(traj, family=family)
        match verdict:
            case Compiled(spec=spec):
                result.learned = spec.name
            case Rejected(reason=reason):
                result.not_learned = reason
                logger.info("not learned: %s", reason)

    def trajectory(
        self,
        task: str,
        calls: list[tuple[str, dict[str, Any], Any, str | None]],
        output: Any,
        captures: dict[int, Any] | None = None,
        post_captures: dict[int, Any] | None = None,
        rereads: dict[int, list[tuple[int, Any]]] | None = None,
    ) -> Trajectory:
        """Build the trajectory of a recorded run (tools referenced by the registry)."""
        from ._trajectory import check_text, json_snapshot

        check_text(task, None, "the task")  # hashing and writing the run need UTF-8 text
        out = json_snapshot(output, None, "the agent's final answer")
        used = sorted({c[0] for c in calls})
        tools = {name: self._tool_ref(self.registry.tools[name]) for name in used if name in self.registry.tools}
        return Trajectory(
            task=task,
            calls=[
                Call(tool=t, args=a, result=r, error=e, pre=(captures or {}).get(i), post=(post_captures or {}).get(i),
                     after=(rereads or {}).get(i))
                for i, (t, a, r, e) in enumerate(calls)
            ],
            outcome=Outcome(ok=True, output=out),
            tools=tools,
        )

    def _tool_ref(self, tool: Tool) -> ToolRef:
        ref = tool.ref()
        if self.importable_skills or tool.is_method:
            return ref
        return ref.model_copy(update={"module": LOCAL_TOOLS, "qualname": tool.name})
