"""Messages of several requests: served by the skills of their clauses, learned one request at a time.

The policy (what a request is, how a message is cut, how answers join) is the pure module
``_requests``; this mixin does the I/O around it for the ``Forge``:

- learning: an agent's run that ``split_run`` cuts into requests is learned as one run per
  request (each becomes or strengthens a skill of its own), and the way the agent joined their
  answers is kept in the state directory (``compose.json``);
- serving: a message no skill takes whole is cut (``segment``) into a prelude and clauses that
  each bind a skill with the prelude (and the closing, who asks said last); a clause that names what
  it acts on only by a pronoun binds the skill learned with that value carried over (``carry``); the
  skills run in message order, each making its own reads
  (after an earlier clause's writes a read shows them), and the answers are joined as the agent
  joins them. A guard that stops a clause hands the whole message over to the agent with every call
  made so far, so no write is repeated. The plan is never written to ``skills/``: it is a sequence
  of reviewed skills, and ``Result.clauses`` (and the run log) say which skill served which clause.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._compile import Compiled
from ._driving import Step, Steps
from ._requests import Joiner, Split, carried_text, split_run
from ._segments import colon_aligned, colon_binds, segment, segment_at_colon
from ._result import Attempt, Result
from ._trajectory import Trajectory
from ._usage import Usage

if TYPE_CHECKING:
    from ._index import HotIndex, Match
    from ._library import Library
    from ._runlog import RunLog
    from ._template import TaskTemplate

__all__ = ["Composing"]

logger = logging.getLogger(__name__)

_JOINERS = "compose.json"


class Composing:
    """The composing half of a ``Forge`` (a mixin)."""

    state_dir: Path
    library: Library
    importable_skills: bool
    runlog: RunLog | None

    if TYPE_CHECKING:  # provided by Forge

        def _index(self) -> HotIndex: ...
        def find_all(self, task: str) -> list[Match]: ...
        def learn(self, traj: Trajectory, *, family: TaskTemplate | None = None) -> Any: ...
        def _run_skill(self, match: Match, usage: Usage | None = None) -> tuple[Any, list[Any], Attempt | None]: ...
        def _threaded(self, match: Match) -> bool: ...
        def _logged(self, result: Result, usage: Usage | None = None) -> Result: ...
        def _agent_steps(self, task: str, start: float, *, prior: list[Any] | None, skill: str | None,
                         handover: str | None, family: TaskTemplate | None, captures: dict[int, Any] | None = None,
                         post_captures: dict[int, Any] | None = None, clauses: tuple[tuple[str, str], ...] = (),
                         usage: Usage | None = None) -> Steps: ...

    # -- how the agent joins answers -------------------------------------------------
    def joiner(self) -> Joiner | None:
        """How the agent joins the answers of several requests, once a run of its showed it (else None;
        also None when its runs showed more than one way: then no message is composed)."""
        seen = self._joiners()
        return seen[0] if len(seen) == 1 else None

    def _joiners(self) -> list[Joiner]:
        path = self.state_dir / _JOINERS
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return [Joiner.from_json(j) for j in data["joiners"]]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, KeyError, TypeError) as e:  # derived state: a broken file costs compositions only
            logger.warning("ignoring %s (%s); messages of several requests go to the agent until a run shows how it joins answers", path, e)
            return []

    def _keep_joiner(self, joiner: Joiner) -> None:
        path = self.state_dir / _JOINERS
        try:
            with self.library.lock():  # one writer at a time, across threads and processes
                seen = self._joiners()
                if joiner in seen:
                    return
                seen.append(joiner)
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
                tmp.write_text(json.dumps({"joiners": [j.to_json() for j in seen]}, indent=1) + "\n", encoding="utf-8")
                tmp.replace(path)
        except OSError as e:  # derived state (the lock lives in skills/): costs compositions, never the solve
            logger.warning("could not keep how the agent joins answers in %s: %s", path, e)

    # -- learning ------------------------------------------------------------------
    def _learn_requests(self, traj: Trajectory) -> tuple[list[str], list[str]] | None:
        """Learn ``traj`` one request at a time if it holds several: the skills written, and why the
        other requests were not learned. None if it is one request (or cannot be cut into them)."""
        try:
            split = split_run(traj, importable=self.importable_skills, joiners=self._joiners())
        except Exception:  # the agent's writes are done: a bug in cutting must cost the cut, not the solve
            logger.exception("could not cut the run of %r into requests; it is learned whole", traj.task)
            return None
        if isinstance(split, str):
            logger.debug("learned whole: %s", split)
            return None
        self._keep_joiner(split.joiner)
        return self._learn_split(split)

    def _learn_split(self, split: Split) -> tuple[list[str], list[str]]:
        learned: list[str] = []
        why: list[str] = []
        for i, (run, fresh) in enumerate(zip(split.runs, split.fresh, strict=True)):
            if not fresh:
                why.append(f"request {i + 1}: it read what another request then wrote to, and acted after that write")
                continue
            verdict = self.learn(run)
            if isinstance(verdict, Compiled):
                learned.append(verdict.spec.name)
            else:
                why.append(f"request {i + 1}: {verdict.reason}")
        return learned, why

    # -- serving -------------------------------------------------------------------
    def _composed(self, task: str, start: float, usage: Usage) -> Steps:
        """Serve ``task`` by the skills of its clauses; None when it is not cut into clauses skills take.
        Yields the skill runs and the agent's part (see ``_driving``)."""
        joiner = self.joiner()
        if joiner is None:
            return None
        hot = self._index()
        found = cut(task, hot.lookup)
        if found is None:
            return None
        (prelude, clauses, closing), colon = found
        calls: list[Any] = []
        outputs: list[Any] = []
        served: list[tuple[str, str]] = []
        before: dict[str, Any] = {}  # the values the skill of the clause before was called with
        for i, clause in enumerate(clauses):
            try:
                matches = clause_skills(self.find_all, before, prelude, clause, closing, colon)
                missing = "no skill takes it any more"
            except Exception as e:  # earlier clauses may have written: hand over, never raise
                logger.exception("could not look up a skill for clause %d of %r", i + 1, task)
                matches, missing = [], f"looking up its skill failed ({type(e).__name__}: {e})"
            attempt: Attempt | None = None if matches else Attempt("", [], missing, False, {}, {})
            for match in matches:
                output, made, attempt = yield Step(self._run_skill, match, usage, threaded=self._threaded(match))
                if attempt is None:
                    calls += made
                    outputs.append(output)
                    served.append((clause, match.skill.name))
                    before = match.params
                    break
                if attempt.wrote:
                    break  # a write happened: only the agent may continue from here
            if attempt is not None:
                at = len(calls)
                logger.info("skill %s stopped on clause %d of %d (%s); handing over", attempt.skill, i + 1, len(clauses), attempt.reason)
                return (yield from self._agent_steps(
                    task, start, prior=calls + attempt.calls, skill=attempt.skill or None,
                    handover=f"{attempt.reason} (clause {i + 1} of {len(clauses)})", family=None,
                    captures={at + k: v for k, v in attempt.captures.items()},
                    post_captures={at + k: v for k, v in attempt.post_captures.items()},
                    clauses=(*served, (clause, attempt.skill)) if attempt.skill else tuple(served), usage=usage,
                ))
        ok, output = joiner.join(outputs)
        if not ok:
            return (yield from self._agent_steps(
                task, start, prior=calls, skill=served[-1][1], family=None, clauses=tuple(served),
                handover=f"the answers of {len(clauses)} clauses do not join the way the agent joins answers",
                usage=usage,
            ))
        result = Result(
            task, output, "skill", " + ".join(name for _c, name in served), duration=time.perf_counter() - start,
            clauses=tuple(served), _raw_calls=calls,
        )
        return self._logged(result, usage)


def cut(task: str, lookup: Callable[[str], list[Match]]) -> tuple[tuple[str, list[str], str], bool] | None:
    """How serving cuts ``task`` (``segment``) with the skills ``lookup`` finds: ``((prelude, clauses, closing),
    colon)``, ``colon`` where the prelude ends at the first sentence's colon (tried where no other cutting
    works: each clause is then served only by a skill learned with who asks before that colon); None."""
    def carries(before: str, prelude: str, clause: str, closing: str) -> bool:
        found = lookup(before.strip())
        return bool(found and carry(found[0].params, prelude, clause, closing, lookup))

    found = segment(task, lambda text: bool(lookup(text)), carries)
    if found is not None:
        return found, False
    found = segment_at_colon(task, colon_binds(lookup))
    return None if found is None else (found, True)


def clause_skills(find: Callable[[str], list[Match]], before: dict[str, Any], prelude: str, clause: str, closing: str,
                  colon: bool) -> list[Match]:
    """The skills that take ``clause`` of a message ``cut`` cut: with the prelude and the closing, or else with a
    value of the clause before carried over (``before``: the values its skill was called with)."""
    said = (prelude + clause + closing).strip()
    matches = [m for m in find(said) if not colon or m.template is not None and colon_aligned(m.template.text, said)]
    return matches or (carry(before, prelude, clause, closing, find) if before else [])


def carry(before: dict[str, Any], prelude: str, clause: str, closing: str, find: Callable[[str], list[Match]]) -> list[Match]:
    """The skills that take ``clause`` with a value of the clause before carried over (``"reset her
    password"`` after ``"unlock ana.li"``): a value the skill before was called with, which the clause's
    skill binds under the same name, as the run it was learned from carried it (``carried_text``)."""
    for name, value in before.items():
        if type(value) not in (str, int):
            continue
        found = [m for m in find((prelude + carried_text([value]) + clause + closing).strip()) if m.params.get(name) == value]
        if found:
            return found
    return []
