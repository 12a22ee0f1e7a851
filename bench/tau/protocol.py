"""The tau-bench retail protocol: learn from K tasks, serve N, compare every end state with the gold one.

For each seed, the split's tasks are shuffled with ``random.Random(seed)``; the first K are the
learning phase and the next N the serve phase. Each seed gets a fresh Forge (skills and state in
a temporary directory) and each task a fresh database (tau tasks are independent). Every task,
in both phases, goes through ``forge.solve()`` (the serve phase learns too, as production would);
its end state is compared with the gold end state (the gold actions replayed on a fresh database
with the plain tool functions).

The **ceiling** counts serve tasks a skill could at best have served: the sequence of their gold
writes (tool names with their argument keys) was seen on an earlier task of the seed (learning
phase, or earlier in the serve phase), and every gold write argument value is traceable to the
instruction or to the results of the reads the agent makes for it (``tasks.untraceable``).
"""

from __future__ import annotations

import logging
import random
import re
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from skillforge import Forge

from . import agent, tools
from .tasks import TauTask, gold_world, load_tasks, shape, task_text, untraceable

__all__ = ["Outcome", "SeedReport", "run", "run_seed", "solve_task"]

logger = logging.getLogger(__name__)

SOURCES = ("skill", "skill+agent", "agent")


@dataclass(slots=True)
class Outcome:
    """One task's solve: how it was served, whether its end state was right, and whether a skill could have served it."""

    task_id: str
    phase: str  # "learn" or "serve"
    source: str  # "skill", "skill+agent", "agent" or "crash"
    skill: str | None
    writes: int  # gold write calls
    wrong: bool  # end state differs from the gold one
    diff: list[str]
    shape_seen: bool  # the gold write sequence was seen on an earlier task of this seed
    untraceable: list[str]  # gold write argument values neither the instruction nor the agent's reads hold
    handover: str | None = None
    handover_at: int | None = None
    learned: str | None = None
    not_learned: str | None = None
    error: str | None = None
    agent_vs_gold: bool = False  # the agent alone's end state differs from the gold one (a harness bug)
    clauses: int = 0  # served (or started) by composing this many skills, one per clause; 0 if not composed
    kinds_seen: bool = False  # every gold write's kind (tool and argument keys) was seen on an earlier task of the seed
    seconds: float = 0.0
    learning: float = 0.0  # of them, the seconds solve() spent learning from the agent's run (probes aside)

    @property
    def ceiling(self) -> bool:
        return self.shape_seen and not self.untraceable


@dataclass(slots=True)
class SeedReport:
    """The counts of one seed, and every task's outcome."""

    seed: int
    split: str
    k: int
    n: int
    outcomes: list[Outcome] = field(default_factory=list)
    persona: bool = True  # solve() got the instructions with their persona sentence
    skill_files: int = 0
    intents: int = 0  # distinct (first call, write sequence) pairs among the skill files: intents by route
    seconds: float = 0.0
    probe_runs: int = 0  # agent runs probes made (``probes``), each one agent run, as a task's
    probe_requests: int = 0  # the model requests they reported

    def phase(self, name: str) -> list[Outcome]:
        return [o for o in self.outcomes if o.phase == name]

    def sources(self, phase: str = "serve") -> Counter[str]:
        return Counter(o.source for o in self.phase(phase))

    def wrong(self, phase: str = "serve") -> Counter[str]:
        """Wrong end states by source."""
        return Counter(o.source for o in self.phase(phase) if o.wrong)

    @property
    def requests_saved(self) -> int:
        """Serve tasks served wholly by skills (the agent was never asked)."""
        return self.sources("serve")["skill"]

    @property
    def ceiling(self) -> int:
        return sum(o.ceiling for o in self.phase("serve"))

    @property
    def crashes(self) -> int:
        return sum(o.source == "crash" for o in self.outcomes)

    @property
    def any_wrong(self) -> bool:
        return any(o.wrong for o in self.outcomes) or self.crashes > 0

    def multi_request(self) -> dict[str, int]:
        """Serve tasks of several writes: how many, how many of them had every request kind seen
        earlier, and how those were served (by composing skills, or one skill for the whole message)."""
        multi = [o for o in self.phase("serve") if o.writes > 1]
        seen = [o for o in multi if o.kinds_seen]
        return {
            "tasks": len(multi), "kinds_seen": len(seen), "kinds_seen_served": sum(o.source == "skill" for o in seen),
            "composed": sum(o.source == "skill" and o.clauses > 0 for o in multi),
            "whole": sum(o.source == "skill" and o.clauses == 0 for o in multi),
            "wrong": sum(o.wrong for o in multi if o.source != "agent"),
        }

    def handovers(self, phase: str = "serve") -> Counter[str]:
        """Why skills handed over, values stripped to the guard or reason's text."""
        return Counter(_reason(o.handover) for o in self.phase(phase) if o.handover)

    def not_learned(self) -> Counter[str]:
        """Why agent runs (both phases) were not turned into skills."""
        return Counter(_reason(o.not_learned) for o in self.outcomes if o.not_learned and o.source != "skill")

    def to_json(self) -> dict[str, Any]:
        serve = self.sources("serve")
        return {
            "seed": self.seed, "split": self.split, "k": self.k, "n": self.n, "persona": self.persona,
            "seconds": round(self.seconds, 2),
            "learn": dict(self.sources("learn")), "learn_wrong": dict(self.wrong("learn")),
            "served_by_skill": serve["skill"], "handed_over": serve["skill+agent"], "by_agent": serve["agent"],
            "crashes": self.crashes, "wrong_end_states": dict(self.wrong("serve")),
            "requests_saved": self.requests_saved, "skill_files": self.skill_files, "intents": self.intents,
            "ceiling": self.ceiling, "multi_request": self.multi_request(),
            "probe_runs": self.probe_runs, "probe_requests": self.probe_requests,
            "agent_vs_gold_mismatches": sum(o.agent_vs_gold for o in self.outcomes),
            "handovers": dict(self.handovers().most_common()), "not_learned": dict(self.not_learned().most_common()),
            "tasks": [asdict(o) | {"ceiling": o.ceiling} for o in self.outcomes],
        }


_SKILL_PREFIX = re.compile(r"^(?:guard failed in \w+: |\w+ (?=raised |stopped: ))")
_ANSWER_SAYS = re.compile(r"^(the answer says ')[^']*(')")  # the value quoted varies task by task
_IS_AS_LEARNED = re.compile(r"( is )'[^']*'(, as when learned)")


def _reason(text: str | None) -> str:
    """A handover or not-learned reason without the skill's name, cut to one line; task texts left out."""
    text = _SKILL_PREFIX.sub("", text or "?")
    if text.startswith("the template ") and " does not bind " in text:
        return "the template lifted from the run does not bind the run's own task"
    text = _ANSWER_SAYS.sub(r"\1<value>\2", text)
    text = _IS_AS_LEARNED.sub(r"\1'<value>'\2", text)
    return (text.splitlines() or ["?"])[0][:160]


def solve_task(forge: Forge, task: TauTask, phase: str, seen: set[Any], *, persona: bool = True,
               kinds: set[Any] | None = None) -> Outcome:
    """Solve ``task`` through ``forge`` on a fresh database and judge its end state against the gold one.

    ``persona=False`` hands ``solve()`` the instruction without its persona sentence.
    """
    text = task_text(task, persona=persona)
    db = tools.fresh_db()
    start = time.perf_counter()
    with tools.using(db):
        try:
            result: Any = forge.solve(text)
        except Exception as e:  # a crash inside solve() is a finding; the run goes on
            logger.exception("solve() raised on %s", task.id)
            result = e
    seconds = time.perf_counter() - start
    gold = gold_world(task)
    with tools.using(tools.fresh_db()) as alone:  # outside solve() the Forge's wrappers are the plain tools
        _answer, steps = agent.run(text)
    reads = [s.result for s in steps if s.tool in tools.READS]
    diff = tools.diff_states(db, gold)
    out = Outcome(
        task_id=task.id, phase=phase, source="crash", skill=None, writes=len(task.writes), wrong=bool(diff),
        diff=diff, shape_seen=shape(task) in seen, untraceable=untraceable(task, reads, text),
        agent_vs_gold=bool(tools.diff_states(alone, gold)), seconds=seconds,
        kinds_seen=kinds is not None and all(w in kinds for w in shape(task)),
    )
    if isinstance(result, Exception):
        out.error = f"solve() raised {type(result).__name__}: {result}"
        return out
    out.source, out.skill, out.error = result.source, result.skill, result.error
    out.handover, out.handover_at = result.handover, result.handover_at
    out.learned, out.not_learned = result.learned, result.not_learned
    out.learning = result.learning
    out.clauses = len(result.clauses)
    return out


def run_seed(
    tasks: Sequence[TauTask], seed: int, k: int, n: int, *, workdir: Path | None = None, split: str = "",
    persona: bool = True, probes: int = 0,
) -> SeedReport:
    """One seed: shuffle, learn from the first ``k`` tasks, serve the next ``n``; with ``probes``, each
    skill learned or widened is probed with that many agent runs right after its task (in step)."""
    order = list(tasks)
    random.Random(seed).shuffle(order)
    learn, serve = order[:k], order[k:k + n]
    report = SeedReport(seed=seed, split=split, k=len(learn), n=len(serve), persona=persona)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"tau-retail-{seed}-") as tmp:
        root = (workdir / f"seed-{seed}") if workdir is not None else Path(tmp)
        if (root / "skills").exists():
            raise FileExistsError(f"{root} holds an earlier run's skills: pass an empty or new --workdir")
        forge = Forge(skills_dir=root / "skills", state_dir=root / "state", agent=agent.agent, run_log=False, probes=probes,
                      probes_per_hour=10**6, background_probes=False)
        saved = dict(tools.TOOLBOX)
        for f in tools.TOOLS:  # the agent calls the wrappers, so its calls are recorded inside solve()
            tools.TOOLBOX[f.__name__] = forge.tool(read=f.__name__ in tools.READS)(f)
        seen: set[Any] = set()
        kinds: set[Any] = set()
        try:
            for phase, batch in (("learn", learn), ("serve", serve)):
                for task in batch:
                    report.outcomes.append(solve_task(forge, task, phase, seen, persona=persona, kinds=kinds))
                    seen.add(shape(task))
                    kinds.update(shape(task))
                    if probes:
                        forge.probe()  # stand-ins answer every call: the database is not touched
        finally:
            tools.TOOLBOX.clear()
            tools.TOOLBOX.update(saved)
        skills = root / "skills"
        report.skill_files = sum(1 for p in skills.glob("*.py") if p.name != "__init__.py") if skills.exists() else 0
        report.intents = len({_intent(sk.source, sk.tools) for sk in forge.skills()})
        report.probe_runs, report.probe_requests = forge.prober.made, forge.prober.requests
    report.seconds = time.perf_counter() - start
    return report


def _intent(source: str, tools_of: dict[str, Any]) -> tuple[str, ...]:
    """A skill's intent and identification route: the tool it calls first, then its writes in order."""
    body = source.split("\ndef ", 1)[-1]
    calls = [name for name in re.findall(r"\b(\w+)\(", body) if name in tools_of]
    return (calls[0] if calls else "", *(c for c in calls if not tools_of[c].read))


def run(split: str = "train", k: int = 100, n: int = 200, seeds: Sequence[int] = (0, 1, 2), *,
        workdir: Path | None = None, persona: bool = True, probes: int = 0) -> list[SeedReport]:
    """Every seed in turn, on the tasks of ``split``."""
    tasks = load_tasks(split)
    if k + n > len(tasks):
        logger.warning("split %s has %d tasks: K=%d + N=%d do not fit; the serve phase gets the rest", split, len(tasks), k, n)
    return [run_seed(tasks, s, k, n, workdir=workdir, split=split, persona=persona, probes=probes) for s in seeds]
