"""Probes, the running part: the agent and a skill in a recorded world with one fact changed.

``_probes`` says what to change and how to compare; this module runs both sides:

- **The agent** runs on the run's task inside a recording ``Run`` whose every tool call is answered
  by a stand-in (``Run.stand_in``): a read returns what the record's call with the same tool and
  arguments returned, in the changed world; a write is **never executed**, and returns what the
  record's same write returned. A call the record has no answer for ends the probe (``_Stopped``):
  a read so is inconclusive, a write so is a write the agent made otherwise. No tool's own code runs
  at all (nor its pre- or post-check). An agent whose effects bypass the decorated tools (it writes to
  a database itself, or calls a tool from a thread outside the solve's context) cannot be probed
  safely: configure ``probes=0`` for it. A tool called outside the probe's context while it runs
  makes the probe inconclusive.
- **The skill** (its file's code, in the sandbox) runs in the same world with its ``require`` guards
  noted rather than enforced: what the skill would do there if the fact were not guarded.

``Prober`` probes one skill at a time under a budget: per skill learned or widened (``probes``) and
per hour (``probes_per_hour``), counting every agent run a probe makes, an unchanged control run
included. Each run's probes are written beside it (``Library.write_probes``) and the skill is learned
again from its runs, lighter where the probes showed facts not to decide.
"""

from __future__ import annotations

import ast
import copy
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._codegen import _Renderer  # its words for a guard, so a probe's note reads like the file's guards
from ._compile import ADMISSION_SECONDS, _StandInInstance
from ._exceptions import SkillFileError, SkillforgeError, SkillforgeSignal
from ._lifting import Rejected, lift
from ._probes import (
    BISECT, CONTROL, SLOT, lengthened_world, quoted_from_record, relengthened, respoken, respoken_world, widened, DELETE, NONE, Behaviour, Change, Known, as_number, between, behaviour, changed_world, changes, distinctive, fact_id, free, moved, pooled, priority,
    rungs, verdict,
)
from ._spec import At, Where
from ._values import refs_in
from ._sandbox import compile_skill, load_function
from ._tools import Run, Tool, activate, deactivate, error_text, is_async_callable
from ._trajectory import DIFFERENT, INCONCLUSIVE, SAME, Probe, Trajectory, canonical_json
from ._usage import Usage

if TYPE_CHECKING:
    from ._library import Library, SkillFile

__all__ = ["Prober", "ProbeBudget", "probe_agent", "probe_skill_code"]

logger = logging.getLogger(__name__)

World = list[tuple[str, dict[str, Any], Any, str | None]]


class _Stopped(SkillforgeSignal):
    """A call the probe's world cannot answer: the probe ends there."""


class ProbeToolError(SkillforgeError):
    """The error a recorded call raised, raised again by its stand-in in a probe (the agent sees a
    tool fail as it did when the run was recorded)."""


class _Answers:
    """Answers calls from a probe's world: the recorded call with the same tool and arguments (the
    earliest not yet answered, else the latest), noting the writes made."""

    def __init__(self, world: World, reads: Callable[[str], bool], behaviour: Behaviour) -> None:
        self.world = world
        self.reads = reads
        self.behaviour = behaviour
        self.keys = [canonical_json([t, a]) for t, a, _r, _e in world]
        self.used: set[int] = set()

    def __call__(self, tool: str, args: dict[str, Any]) -> Any:
        try:
            said = canonical_json(args)
        except (TypeError, ValueError):
            said = repr(args)
        shown = f"{tool}({said})"
        key = canonical_json([tool, args]) if said != repr(args) else None
        found = [k for k, x in enumerate(self.keys) if x == key]
        read = self.reads(tool)
        if not read:
            self.behaviour.writes.append((tool, said))
        if not found:
            if read:
                self.behaviour.unanswered = shown
            else:
                self.behaviour.stopped = shown
            raise _Stopped(shown)
        k = next((k for k in found if k not in self.used), found[-1])
        self.used.add(k)
        _t, _a, result, error = self.world[k]
        if error is not None:
            raise ProbeToolError(error)
        return copy.deepcopy(result)


def probe_agent(
    agent: Callable[..., Any], task: str, world: World, tools: dict[str, Tool], instances: dict[str, Any],
) -> tuple[Behaviour, int]:
    """The agent on ``task`` in ``world``: what it did, and the model requests it reported."""
    behaviour = Behaviour(writes=[])
    answers = _Answers(world, lambda name: name in tools and tools[name].read, behaviour)
    usage = Usage()
    run = Run(snapshot=True, instances=dict(instances), tools=tools, usage=usage,
              stand_in=lambda tool, args: answers(tool.name, args))
    token = activate(run)
    try:
        behaviour.answer = agent(task)
    except _Stopped:
        pass
    except Exception as e:  # the agent failed, or a tool error it did not handle
        behaviour.failed = error_text(e)
    finally:
        deactivate(token)
    if run.unrecorded:
        behaviour.failed = f"{', '.join(sorted(run.unrecorded))} ran outside the probe (this agent cannot be probed safely)"
    return behaviour, usage.requests


def probe_skill_code(skill: SkillFile, params: dict[str, Any], world: World) -> Behaviour:
    """The skill's code in ``world`` with its guards noted, not enforced: what it would do there."""
    behaviour = Behaviour(writes=[])
    answers = _Answers(world, lambda name: bool(skill.tools[name].read) if name in skill.tools else False, behaviour)
    modules: dict[str, dict[str, Any]] = {}
    stand_ins: dict[str, Any] = {}

    def stand_in(name: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            return answers(name, kwargs)
        return call

    for name, ref in skill.tools.items():
        if ref.method:
            owner = ref.qualname.rsplit(".", 1)[0]
            inst = next(p for p, o in skill.instances if o == owner)
            setattr(stand_ins.setdefault(inst, _StandInInstance()), ref.qualname.rsplit(".", 1)[-1], stand_in(name))
        else:
            modules.setdefault(ref.module, {})[ref.qualname] = stand_in(name)
    noted: list[str] = []

    def require(condition: object, why: str) -> None:
        if not condition:
            noted.append(why)
            behaviour.noted.append(why)

    try:
        code = compile_skill(skill.source, f"<probe {skill.name}>")
        func = load_function(code, skill.name, modules, f"skills.{skill.name}", helpers={"require": require})
        token = activate(Run(snapshot=False, instances={}, seconds=ADMISSION_SECONDS))
        try:
            behaviour.answer = func(**params, **stand_ins)
        finally:
            deactivate(token)
    except _Stopped:
        pass
    except (Exception, SkillforgeSignal) as e:  # a pick that finds nothing, a field not there: it cannot run here
        behaviour.failed = error_text(e)
    return behaviour


@dataclass
class ProbeBudget:
    """How many probe runs may be made: per skill learned or widened, and per hour (0: none)."""

    per_skill: int = 8
    per_hour: int = 120
    made: deque[float] = field(default_factory=deque)
    clock: Callable[[], float] = time.monotonic

    def left_this_hour(self) -> int:
        now = self.clock()
        while self.made and now - self.made[0] > 3600:
            self.made.popleft()
        return max(0, self.per_hour - len(self.made))

    def spend(self) -> None:
        self.made.append(self.clock())


@dataclass(slots=True)
class _Group:
    """The facts one set of changes probes (a number's facts share its rungs)."""

    step: int
    facts: list[Any]  # Guards
    changes: list[Change]
    pooled: bool = False  # probed with others in one world (``_probes.pooled``)


def _compatible(pool: list[_Group]) -> list[_Group]:
    """The pooled groups whose changes can be made in one world (the first such, in order, is kept):
    none at or inside a place another changes, and none changing a value from or to one another
    changes from or to (two ids both set to the task's order id would be one thing in that world)."""
    taken: list[tuple[int, tuple[Any, ...]]] = []
    values: list[Any] = []
    out = []
    for group in pool:
        c = group.changes[0]
        if any(call == c.call and (where[: len(c.where)] == c.where or c.where[: len(where)] == where) for call, where in taken):
            continue
        mine = [v for v in (c.old, c.to) if distinctive(v)]  # those are changed wherever they appear
        if any(type(v) is type(w) and v == w for v in mine for w in values):
            continue
        taken.append((c.call, c.where))
        values += mine
        out.append(group)
    return out


class Prober:
    """Probes the skills a Forge learns, one at a time, and learns them again from what probes found."""

    def __init__(self, forge: Any, budget: ProbeBudget) -> None:
        self.forge = forge
        self.budget = budget
        self.requests = 0  # model requests every probe so far cost
        self.made = 0  # probe runs made
        self.queue: deque[str] = deque()
        self._lock = threading.Lock()

    def want(self, name: str) -> None:
        """Probe skill ``name`` when the queue is next drained (once, however often it is asked)."""
        with self._lock:
            if name not in self.queue:
                self.queue.append(name)

    def drain(self) -> list[str]:
        """Probe every skill queued (each within the budget); the names of the skills written again."""
        rewritten: list[str] = []
        while True:
            with self._lock:
                if not self.queue:
                    return rewritten
                name = self.queue.popleft()
            try:
                if self.probe(name):
                    rewritten.append(name)
            except Exception:  # a probe is evidence, never a failure of anything served
                logger.exception("probing skill %s failed", name)

    def probe(self, name: str) -> bool:
        """Probe skill ``name``'s runs within the budget, keep what was found, and learn it again: True
        if its file was written again."""
        forge = self.forge
        agent = forge.agent
        if agent is None or self.budget.per_skill <= 0 or is_async_callable(agent):
            return False
        skill = forge._index().by_name.get(name)
        if skill is None or skill.edited:
            return False
        try:
            runs = [forge.library.load_run(h) for h in skill.runs]
        except SkillFileError as e:
            logger.info("cannot probe %s: %s", name, e)
            return False
        known = Known(runs)
        for other in forge._index().by_name.values():
            for h in other.runs[-4:] if other is not skill else ():
                try:
                    known.add(forge.library.load_run(h))
                except SkillFileError:
                    continue
        left = self.budget.per_skill
        found_any = False
        # a fact settled on one run is not probed again on the others said alike (each probe costs model
        # requests); the words a task is said in are a context where it may decide (``_probes.dropped``)
        def said_as(r: Trajectory) -> tuple[str, Any] | None:  # its phrasing, and what it did (``_probes.behaviour``)
            bound = skill.bind(r.task)
            return (bound[0].text, behaviour(r)) if bound is not None else None

        settled: dict[tuple[str, Any] | None, set[tuple[int, str]]] = {}
        steady: set[tuple[str, Any] | None] = set()  # contexts where an unchanged control run already came out the same
        for r in runs:
            settled.setdefault(said_as(r), set()).update((p.step, p.fact) for p in r.probes if p.step >= 0)
            if any(p.fact == CONTROL and p.verdict == SAME for p in r.probes):
                steady.add(said_as(r))
        if runs:  # the slots' shapes first (what tasks it takes), on the newest run
            latest = runs[-1]
            made, spent = self._probe_slots(skill, latest, known, left, steady=said_as(latest) in steady)
            left -= spent
            if made:
                forge.library.write_probes(latest.hash, (*latest.probes, *made))
                runs[-1] = latest.model_copy(update={"probes": (*latest.probes, *made)})
                found_any = True
                if any(p.fact == CONTROL and p.verdict == SAME for p in made):
                    steady.add(said_as(latest))
        # the newest run first (the world the skill was last widened for), but first the newest of each
        # context no probe of the skill settled anything in yet: a branch whose facts were never probed keeps them all
        fresh: dict[Any, Trajectory] = {}
        for r in reversed(runs):
            if not settled.get(said_as(r)):
                fresh.setdefault(said_as(r), r)
        order = [*fresh.values(), *(r for r in reversed(runs) if r not in fresh.values())]
        for run in order:
            if left <= 0:
                break
            here = said_as(run)
            mine = settled.setdefault(here, set())
            # and what runs that acted alike settled in other words, where both are free of the fact (``_probes.free``)
            elsewhere = {key for there, keys in settled.items() if there != here and there is not None and here is not None
                         and there[1] == here[1] for key in keys if free(there[0], key[1]) and free(here[0], key[1])}
            made, spent = self._probe_run(skill, run, known, left, mine | elsewhere, steady=here in steady)
            mine |= {(p.step, p.fact) for p in made if p.step >= 0}
            if any(p.fact == CONTROL and p.verdict == SAME for p in made):
                steady.add(here)
            left -= spent
            if made:
                forge.library.write_probes(run.hash, (*run.probes, *made))
                found_any = True
        if not found_any:
            return False
        return forge.relearn(name, widened(skill.phrasings or (skill.template,), runs))

    def _probe_slots(self, skill: SkillFile, run: Trajectory, known: Known, left: int, steady: bool = False) -> tuple[list[Probe], int]:
        """Slot-shape probes of ``run`` (``_probes.respoken``): the agent on its task with names written
        otherwise, the calls it passes them to answered as recorded; the same as the skill there, the
        slots' shapes take that way of writing them. Once per way, within ``left`` agent runs, only
        where the run's unchanged control came out the same."""
        bound = skill.bind(run.task)
        control = next((p for p in run.probes if p.fact == CONTROL), None)
        if bound is None or (control is not None and control.verdict != SAME):
            return [], 0
        template, params = bound
        tried = {(p.fact, p.to) for p in run.probes if p.step == SLOT}
        candidates = [(said, changed, respoken_world(run.calls, changed)) for said, changed in respoken(template, params, run.task)]
        candidates += [(said, changed, lengthened_world(run.calls, changed))
                       for said, changed in relengthened(template, params, run.task, run.calls, known)]
        candidates = [c for c in candidates if not all((f"slot {n}", new) in tried for n, (_old, new) in c[1].items())]
        made: list[Probe] = []
        if not candidates:
            return [], 0
        if control is None and not steady:  # the agent must still do what the record says, unchanged
            if not self._affordable(2, left):
                return [], 0
            made.append(control := self._control(run))
            if control.verdict != SAME:
                return made, 1
        spec = lift(run.model_copy(update={"probes": ()}), name=skill.name, template=template,
                    importable=self.forge.importable_skills, probed=NONE)
        if isinstance(spec, Rejected):
            spec = spec.as_text
        for said, changed, world in candidates:
            if not self._affordable(1, left - sum(p.runs for p in made)):
                break
            agent_did, requests = self._agent(said, world)
            skill_did = probe_skill_code(skill, {**params, **{n: new for n, (_old, new) in changed.items()}}, world)
            outcome, why = verdict(agent_did, skill_did, world, params)
            followed: list[str] = []
            if outcome == SAME:  # answers are compared up to case: here the case is what was changed
                quoted = quoted_from_record(agent_did.answer, skill_did.answer, changed)
                if quoted is None:
                    outcome, why = DIFFERENT, f"the agent answered {agent_did.answer!r} where the skill answers {skill_did.answer!r}"
                elif quoted:
                    followed = quoted
                    why = f"the same, once the answer writes {', '.join(followed)} as the record does: {agent_did.answer!r}"
            runs = 1
            for n, (old, new) in changed.items():
                made.append(Probe(step=SLOT, fact=f"slot {n}", said=f"{n} written {new!r}", change=f"the task said {said!r}",
                                  verdict=outcome, why=why, requests=requests, runs=runs, was=old, to=new))
                requests = runs = 0
            made += [Probe(step=SLOT, fact=f"source {n}", said=f"the answer's {n}", change=f"the task said {said!r}",
                           verdict=DIFFERENT, why=f"the agent wrote the record's {changed[n][0]!r}, not the task's {changed[n][1]!r}",
                           was=changed[n][0], to=changed[n][1]) for n in followed]
            # the facts the task said so turned (a name that no longer equals the record's, up to case): settled alike
            old, new = next(iter(changed.values()))
            made += [Probe(step=i, fact=fact_id(g), said=_said(skill, spec, i, g), change=f"the task said {said!r}", verdict=outcome,
                           why=why, was=old, to=new)
                     for i, g in self._turned(skill, run, template, skill_did.noted, spec)]
        return made, sum(p.runs for p in made)

    def _turned(self, skill: SkillFile, run: Trajectory, template: Any, noted: list[str], spec: Any) -> list[tuple[int, Any]]:
        """The facts of ``spec`` (the run lifted) whose guards the skill noted not holding in a probe."""
        if not noted or spec is None:
            return []
        return [(i, g) for i, step in enumerate(spec.steps) for g in step.guards
                if g.kind in ("equal", "near", "member") and _said(skill, spec, i, g, whole=True) in noted]

    def _probe_run(
        self, skill: SkillFile, run: Trajectory, known: Known, left: int, skill_settled: set[tuple[int, str]] = frozenset(),  # type: ignore[assignment]
        *, steady: bool = False,
    ) -> tuple[list[Probe], int]:
        """Probes of one run, at most ``left`` agent runs: the new records, and the runs they cost.
        ``skill_settled``: facts probes of the skill's other runs settled, not probed again; ``steady``:
        an unchanged control run of another run of its context came out the same (none is made again:
        an agent that acts otherwise unchanged shows it there, and noise only ever keeps a guard)."""
        bound = skill.bind(run.task)
        if bound is None:
            return [], 0
        template, params = bound
        bare = run.model_copy(update={"probes": ()})
        spec = lift(bare, name=skill.name, template=template, importable=self.forge.importable_skills, probed=NONE)
        if isinstance(spec, Rejected) and spec.as_text is not None:
            spec = spec.as_text
        if isinstance(spec, Rejected) or len(spec.steps) != len(run.calls):
            return [], 0  # a run whose calls fold into loops: not probed yet
        settled = {(p.step, p.fact) for p in run.probes} | skill_settled
        control = next((p for p in run.probes if p.fact == CONTROL), None)
        made: list[Probe] = []
        spent = 0
        groups = self._groups(spec, run, params, known, settled)
        if not groups:
            return [], 0
        if control is None and not steady:
            if not self._affordable(1, left):
                return [], 0
            control = self._control(run)
            spent += 1
            made.append(control)
        if control is not None and control.verdict != SAME:
            return made, spent
        pool = [g for g in groups if g.pooled]
        if pool and self._affordable(1, left - spent):
            records, cost = self._pool(skill, spec, run, params, pool, left - spent)
            made += records
            spent += cost
        # a fact of one change before a number's search, and a code word's several values last: the
        # budget goes to as many facts as it can settle
        for group in sorted((g for g in groups if not g.pooled), key=lambda g: (len(g.changes) > 1, g.changes[0].number)):
            if group.changes[0].number:
                found = self._search(skill, run, params, group.changes[0], left - spent)
            elif self._affordable(len(group.changes), left - spent):
                found = []
                for change in group.changes:
                    found.append(self._one(skill, run, params, change))
                    if found[-1][1] != SAME:
                        break  # the fact decides (or doubt keeps it): no other value is needed
            else:
                continue
            spent += len(found)
            for k, g in enumerate(group.facts):
                shown = _said(skill, spec, group.step, g)
                for change, said, why, requests in found:
                    made.append(Probe(step=group.step, fact=fact_id(g), said=shown, change=change.said, verdict=said, why=why,
                                      requests=requests if k == 0 else 0, runs=int(k == 0),
                                      was=change.old, to=change.to if change.to is not DELETE else None))
        return made, spent

    def _one(self, skill: SkillFile, run: Trajectory, params: dict[str, Any], change: Change | Sequence[Change]) -> tuple[Any, str, str, int]:
        """One probe: the agent and the skill in the world with ``change`` (or several at once); the verdict."""
        world = changed_world(run.calls, change)
        agent_did, requests = self._agent(run.task, world)
        skill_did = probe_skill_code(skill, params, world)
        said, why = verdict(agent_did, skill_did, world, params)
        return change, said, why, requests

    def _pool(
        self, skill: SkillFile, spec: Any, run: Trajectory, params: dict[str, Any], pool: list[_Group], left: int,
    ) -> tuple[list[Probe], int]:
        """The pooled facts (``_probes.pooled``) probed together: all changed in one world; where the agent
        acts otherwise there, each half alone, down to the facts that decide. A fact is dropped only by a
        probe it was changed in that came out the same; facts whose halves each came out the same but
        not together decide together, and are kept (recorded ``different``). Within ``left`` agent runs."""
        made: list[Probe] = []
        spent = 0
        owed = [0, 0]  # requests and runs of a pool split further, counted on the next record

        def record(part: list[_Group], said: str, why: str, requests: int, runs: int = 1) -> None:
            requests, runs = requests + owed[0], runs + owed[1]
            owed[:] = [0, 0]
            others = f" (one of {len(part)} facts changed at once)" if len(part) > 1 else ""
            for group in part:
                change = group.changes[0]
                for g in group.facts:
                    made.append(Probe(step=group.step, fact=fact_id(g), said=_said(skill, spec, group.step, g),
                                      change=change.said + others, verdict=said, why=why, requests=requests, runs=runs,
                                      was=change.old, to=change.to if change.to is not DELETE else None))
                    requests = runs = 0  # counted once, on the world's first record

        def probe(part: list[_Group]) -> str | None:
            nonlocal spent
            if not self._affordable(1, left - spent):
                return None
            _c, said, why, requests = self._one(skill, run, params, [g.changes[0] for g in part])
            spent += 1
            if said == SAME or len(part) == 1:
                record(part, said, why, requests)
                return said
            owed[0] += requests
            owed[1] += 1
            half = len(part) // 2
            a = probe(part[:half])
            b = probe(part[half:]) if a is not None else None
            if a == SAME and b == SAME:  # they decide together, or (inconclusive) doubt keeps them
                record(part, said, f"each half of these facts changed alike, all at once not: {why}", 0, 0)
            return said

        rest = list(pool)
        while rest and self._affordable(1, left - spent):
            batch = _compatible(rest)
            probe(batch)
            rest = [g for g in rest if g not in batch]
        return made, spent

    def _search(self, skill: SkillFile, run: Trajectory, params: dict[str, Any], first: Change, left: int) -> list[Any]:
        """A number's probes: beyond the value seen, between there and it where the agent acted
        otherwise, and below it (``_probes.rungs``); each within the budget left."""
        v = as_number(first.old)
        up, downs = rungs(v)  # type: ignore[arg-type]
        found: list[Any] = []

        def probe(x: float) -> str | None:
            if not self._affordable(1, left - len(found)):
                return None
            found.append(self._one(skill, run, params, moved(first, x)))
            return found[-1][1]  # type: ignore[no-any-return]

        alike, other, x = v, None, up
        for _ in range(1 + BISECT):  # beyond, then between the values acted alike and otherwise at
            said = probe(x)
            if said is None or said == INCONCLUSIVE:
                return found
            if said == SAME:
                alike = x
            else:
                other = x
            if other is None:
                break
            x = between(alike, other)  # type: ignore[arg-type]
        for x in downs:
            if probe(x) != SAME:
                break
        return found

    def _affordable(self, n: int, left: int) -> bool:
        return n <= left and n <= self.budget.left_this_hour()

    def _groups(self, spec: Any, run: Trajectory, params: dict[str, Any], known: Known, settled: set[tuple[int, str]]) -> list[_Group]:
        """The facts of a run's lifted spec to probe, grouped by the changes that probe them (a number's
        facts share its search), most telling first (``_probes.priority``), earlier calls first."""
        read: dict[int, set[tuple[Any, ...]]] = {}
        tops = [e for st in spec.steps for _k, e in st.args] + [spec.output]
        for top in tops:
            for ref in refs_in(top):
                read.setdefault(ref.call, set()).add(tuple(ref.path))
        for i, step in enumerate(spec.steps):
            for g in step.guards:
                if g.kind != "keys":
                    read.setdefault(i, set()).add(tuple(k for k in g.path if not isinstance(k, (At, Where))))
        groups: dict[tuple[int, str], _Group] = {}
        rank: dict[tuple[int, str], tuple[int, int]] = {}
        for i, step in enumerate(spec.steps):
            for g in step.guards:
                if (i, fact_id(g)) in settled:
                    continue
                cs = changes(g, i, run.calls[i].result, step.tool, spec.examples, known, frozenset(read.get(i, ())))
                if not cs:
                    continue
                key = (i, repr([(c.where, "deleted" if c.to is DELETE else c.to) for c in cs]))
                group = groups.setdefault(key, _Group(i, [], cs, pooled(g, cs)))
                group.facts.append(g)
                group.pooled = group.pooled and pooled(g, cs)
                rank[key] = min(rank.get(key, (9, i)), (priority(g), i))
        return [groups[k] for k in sorted(groups, key=lambda k: (rank[k], k))]

    def _agent(self, task: str, world: World) -> tuple[Behaviour, int]:
        forge = self.forge
        self.budget.spend()
        self.made += 1
        behaviour, requests = probe_agent(forge.agent, task, world, forge.registry.tools, forge.instances)
        self.requests += requests
        return behaviour, requests

    def _control(self, run: Trajectory) -> Probe:
        """The agent again in the world as recorded: does it still do what the record says?"""
        world = changed_world(run.calls, None)
        did, requests = self._agent(run.task, world)
        recorded = Behaviour(
            writes=[(c.tool, canonical_json(c.args)) for c in run.calls if not run.tools[c.tool].read], answer=run.outcome.output,
        )
        said, why = verdict(did, recorded, world, {})
        if said == DIFFERENT:
            said, why = INCONCLUSIVE, f"unchanged, the agent already acts otherwise than recorded ({why})"
        return Probe(step=-1, fact=CONTROL, said="the world as recorded", change="nothing changed", verdict=said, why=why,
                     requests=requests, runs=1)


def _said(skill: SkillFile, spec: Any, step: int, g: Any, *, whole: bool = False) -> str:
    """What guard ``g`` checks, in the words its ``require`` says (``whole``: all of them)."""
    var = spec.steps[step].var or "result"
    try:
        line = _Renderer(spec).guard(var, g, "")
    except (KeyError, TypeError, ValueError):
        return repr(g)
    try:
        call = ast.parse(line).body[0].value  # type: ignore[attr-defined]
        text = call.args[1].value
    except (SyntaxError, AttributeError, IndexError):
        return line
    return text if whole else text.removesuffix(", as when learned")
