"""Shadow harness: does a skill ever do what the agent alone would not have done?

Each task of a workload's stream runs twice from the same starting world: through
``forge.solve()`` on the main world (which evolves through the stream), and through the
agent alone, called directly, on a copy made just before. A task served by a skill
(``source`` "skill" or "skill+agent") whose final world or answer differs from the agent
alone's is a **wrong replay**. A difference on a task the agent served by itself is a
harness or agent bug (non-determinism) and is reported apart; it should be 0.

    .venv/bin/python -m bench.shadow [--workload helpdesk] [--days N] [--workdir DIR --run-log]

With ``--run-log`` the forge keeps its run log (``DIR/state/runs.sqlite3``) and each task a
skill served gets its verdict there (``RunLog.record_shadow``): ``skillforge report --log
DIR/state/runs.sqlite3`` shows the wrong replays per skill.
"""

from __future__ import annotations

import argparse
import logging
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillforge import Forge
from skillforge._requests import pieces

from bench.workloads import Task, Workload, load, stream as days_of

__all__ = ["SEVERAL", "Mismatch", "ShadowReport", "agent_determinism", "diff_states", "render", "run"]

logger = logging.getLogger(__name__)

SEVERAL = "two_requests"  # the kind a workload gives a message of several requests
# what became of a message of several requests, in the order the report lists them: composition's own
# shortfall is "cut, not composed" (every clause bound a skill before solve(), yet none was composed)
FATES = {
    "composed": "served by composing clause skills",
    "clause stopped": "begun so, and handed over where a guard of a clause's skill stopped it",
    "whole": "taken by a skill of the whole message",
    "new words": "a clause no skill took yet (words first seen): to the agent, and learned",
    "cut, not composed": "every clause bound a skill, yet the message was not composed",
}


@dataclass(slots=True)
class Mismatch:
    """A task whose solve() differed from the agent alone's, in writes or in the answer."""

    index: int
    task: Task
    source: str
    skill: str | None
    forge_output: Any
    agent_output: Any
    state_diff: list[str]
    handover: str | None = None


@dataclass(slots=True)
class ShadowReport:
    workload: str
    tasks: int = 0
    served: int = 0  # source == "skill"
    handed_over: int = 0  # source == "skill+agent"
    by_agent: int = 0  # source == "agent"
    errors: int = 0  # solve() results with .error set
    tempting: int = 0
    wrong_replays: list[Mismatch] = field(default_factory=list)
    agent_mismatches: list[Mismatch] = field(default_factory=list)  # should stay empty
    crashes: list[Mismatch] = field(default_factory=list)  # solve() raised (the world may have changed anyway)
    skills_written: list[str] = field(default_factory=list)  # skill files in skills_dir at the end
    learned: int = 0  # solves that wrote or updated a skill
    by_kind: dict[str, Counter[str]] = field(default_factory=dict)
    by_day: dict[int, Counter[str]] = field(default_factory=dict)  # day -> sources (and "wrong"), to see learning go on
    files_by_kind: Counter[str] = field(default_factory=Counter)  # kind -> skill files holding a run of that kind
    files_by_route: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (kind, route) -> those files
    handovers: Counter[str] = field(default_factory=Counter)  # why skills stopped, most common first
    composed: Counter[int] = field(default_factory=Counter)  # messages served wholly by composing skills, by how many
    composed_handed_over: int = 0  # messages a composition began and a clause's skill handed over
    composed_wrong: int = 0  # wrong replays among both
    several: Counter[str] = field(default_factory=Counter)  # messages of several requests (kind ``SEVERAL``), by what became of them
    several_by_day: dict[int, Counter[str]] = field(default_factory=dict)  # day -> the same, to see composition grow
    seconds: float = 0.0
    requires: list[int] = field(default_factory=list)  # require(...) lines per skill file written, sorted
    probe_runs: int = 0  # agent runs made by probes (each a model request, as the agent's one per task)
    probe_requests: int = 0  # the model requests those reported (0 for agents that report none)
    ceiling: int = 0  # tasks whose calls (tools and argument names, in order) the agent alone already made on an earlier task
    served_in_ceiling: int = 0  # of those, served wholly by skills
    worded_before: int = 0  # of the ceiling, tasks said in words an earlier one of those calls was said in (values masked)
    served_worded_before: int = 0  # of those, served wholly by skills
    ceiling_fates: Counter[str] = field(default_factory=Counter)  # ceiling tasks not served: handed over, or to the agent
    ceiling_missed: list[tuple[str, str, str]] = field(default_factory=list)  # (fate, kind, text) of each of those

    @property
    def requests_saved(self) -> int:
        """The agent makes one request per task: every task served fully by a skill saves one."""
        return self.served

    @property
    def wrong_tempting(self) -> int:
        return sum(m.task.tempting for m in self.wrong_replays)


def diff_states(forge_state: dict[str, list[Any]], agent_state: dict[str, list[Any]]) -> list[str]:
    """Rows only one world has, table by table: ``+`` after solve() only, ``-`` after the agent alone only."""
    lines = []
    for table in sorted(set(forge_state) | set(agent_state)):
        a, b = forge_state.get(table, []), agent_state.get(table, [])
        lines += [f"{table}: + {row}" for row in a if row not in b]
        lines += [f"{table}: - {row}" for row in b if row not in a]
    return lines


def agent_determinism(workload: Workload | str = "helpdesk", *, days: int | None = None) -> list[str]:
    """Run the agent alone twice per task, on two copies of the same world; the tasks where they differ."""
    wl = load(workload) if isinstance(workload, str) else workload
    differ = []
    with tempfile.TemporaryDirectory(prefix="shadow-det-") as tmp:
        a, b = Path(tmp) / "a.sqlite3", Path(tmp) / "b.sqlite3"
        wl.make_world(a)
        for task in days_of(wl, days):
            _apply(a, task.setup_sql)
            shutil.copyfile(a, b)
            outputs = []
            for path in (a, b):
                wl.use_world(path)
                outputs.append(wl.agent(task.text))
            if outputs[0] != outputs[1] or wl.snapshot(a) != wl.snapshot(b):
                differ.append(task.text)
    return differ


def _apply(path: Path, statements: tuple[str, ...]) -> None:
    conn = sqlite3.connect(str(path))
    try:
        for sql in statements:
            conn.execute(sql)
        conn.commit()
    finally:
        conn.close()


def run(
    workload: Workload | str = "helpdesk", *, days: int | None = None, workdir: Path | None = None, run_log: bool = False,
    probes: int = 0, probe_new: bool = True,
) -> ShadowReport:
    """Run the stream through ``forge.solve()`` and through the agent alone; compare each task.

    With ``run_log`` the forge keeps its run log under ``workdir / "state"``, and each task a skill
    served has its verdict recorded there (``RunLog.record_shadow``). With ``probes`` the forge probes
    each skill it learns or widens with that many agent runs (``Forge(probes=...)``), right after the
    task (in step, not in the background), and the report counts them."""
    if run_log and workdir is None:
        raise ValueError("run_log=True keeps the log under workdir: pass a workdir, or it is deleted with the run")
    wl = load(workload) if isinstance(workload, str) else workload
    name = workload if isinstance(workload, str) else getattr(wl, "__name__", "workload").rsplit(".", 1)[-1]
    stream = days_of(wl, days)
    report = ShadowReport(workload=name)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="shadow-") as tmp:
        root = workdir or Path(tmp)
        if (root / "main.sqlite3").exists():
            raise FileExistsError(f"{root} holds an earlier run: pass an empty or new directory")
        root.mkdir(parents=True, exist_ok=True)
        main, shadow = root / "main.sqlite3", root / "shadow.sqlite3"
        wl.make_world(main)
        forge = Forge(skills_dir=root / "skills", state_dir=root / "state", agent=wl.agent, run_log=run_log, probes=probes,
                      probes_per_hour=10**6, background_probes=False, probe_new=probe_new)  # a day of the stream takes seconds: no hourly cap
        saved = dict(wl.TOOLBOX)
        for f in wl.TOOLS:  # register the module's functions; the agent calls the wrappers (recorded in solve())
            wl.TOOLBOX[f.__name__] = forge.tool(read=f.__name__ in wl.READS)(f)
        shapes: set[tuple[tuple[str, tuple[str, ...]], ...]] = set()  # the calls of each task the agent alone made so far
        wordings: set[tuple[Any, str]] = set()  # (calls, the task's words with the calls' values masked) so far
        try:
            for i, task in enumerate(stream):
                _apply(main, task.setup_sql)
                shutil.copyfile(main, shadow)
                wl.use_world(main)
                foreseen = _foreseen(forge, task)
                before = foreseen if foreseen is None or isinstance(foreseen, str) else foreseen.outcome
                try:
                    result: Any = forge.solve(task.text)
                except Exception as e:  # a crash inside solve() is a finding too; the stream goes on
                    logger.exception("solve() raised on task %d: %r", i, task.text)
                    result = e
                wl.use_world(shadow)
                calls: list[tuple[str, tuple[str, ...]]] = []
                values: list[str] = []
                wrapped = dict(wl.TOOLBOX)
                wl.TOOLBOX.update({n: _noting(f, n, calls, values) for n, f in wrapped.items()})
                try:
                    alone: Any = wl.agent(task.text)
                except Exception as e:  # the agent alone failing is an outcome to compare, not a crash
                    alone = f"<agent raised {type(e).__name__}: {e}>"
                finally:
                    wl.TOOLBOX.update(wrapped)
                wl.use_world(main)
                shape = tuple(calls)
                seen = shape in shapes
                shapes.add(shape)
                wording = (shape, _masked(task.text, values))
                worded = wording in wordings
                wordings.add(wording)
                served = not isinstance(result, Exception) and result.source == "skill"
                report.ceiling += seen
                report.served_in_ceiling += seen and served
                report.worded_before += worded
                report.served_worded_before += worded and served
                if seen and not served:
                    report.ceiling_fates[fate := _ceiling_fate(result, worded)] += 1
                    report.ceiling_missed.append((fate, task.kind, task.text))
                diff = diff_states(wl.snapshot(main), wl.snapshot(shadow))
                _tally(report, i, task, result, alone, diff)
                if before is not None and not isinstance(result, Exception):
                    fate = _fate(before, result)
                    report.several[fate] += 1
                    report.several_by_day.setdefault(task.day, Counter())[fate] += 1
                    logger.info("task %d, a message of several requests: %s: %r (%s)", i, FATES[fate], task.text,
                                result.handover if fate == "clause stopped" else _nearest(foreseen))
                if forge.runlog is not None and not isinstance(result, Exception):
                    wrong = bool(diff) or result.output != alone
                    forge.runlog.record_shadow(result, wrong=wrong, detail=_detail(result.output, alone, diff) if wrong else None)
                if probes:
                    forge.probe()  # stand-ins answer every call: the worlds are not touched
        finally:
            wl.TOOLBOX.clear()
            wl.TOOLBOX.update(saved)
            if forge.runlog is not None:
                forge.runlog.close()
        report.skills_written = sorted(p.stem for p in (root / "skills").glob("*.py") if p.stem != "__init__")
        report.requires = sorted((root / "skills" / f"{n}.py").read_text().count("require(") for n in report.skills_written)
        report.probe_runs, report.probe_requests = forge.prober.made, forge.prober.requests
        held = {skill.name: [forge.library.load_run(h) for h in skill.runs] for skill in forge.skills()}
        for name, keys in sorted(_intents(held, stream).items()):  # which intents each file serves
            report.files_by_kind.update({kind for kind, _route in keys})
            for key in keys:
                report.files_by_route.setdefault(key, []).append(name)
    report.seconds = time.perf_counter() - start
    return report


def _noting(tool: Any, name: str, calls: list[tuple[str, tuple[str, ...]]], values: list[str]) -> Any:
    """``tool``, noting each call's tool and argument names in ``calls`` (the shape of what the agent did), and its
    arguments' values as text in ``values``."""
    def call(*args: Any, **kwargs: Any) -> Any:
        calls.append((name, (*(f"#{k}" for k in range(len(args))), *sorted(kwargs))))
        values.extend(str(v) for v in (*args, *kwargs.values()) if isinstance(v, str | int | float) and str(v))
        return tool(*args, **kwargs)
    return call


def _masked(text: str, values: list[str]) -> str:
    """``text`` with every call argument's value that it says (in any case) put as ``{}``, longest first: the
    words a task was said in, apart from its values."""
    for v in sorted(set(values), key=lambda v: (-len(v), v)):
        text = re.sub(re.escape(v), "{}", text, flags=re.IGNORECASE)
    return text


def _ceiling_fate(result: Any, worded: bool) -> str:
    """Why a task of calls seen before was not served wholly by skills."""
    words = "said as before" if worded else "said in new words"
    if isinstance(result, Exception):
        return f"{words}: solve() raised"
    return f"{words}: {'a skill took it and handed over' if result.source == 'skill+agent' else 'no skill took it'}"


def _foreseen(forge: Forge, task: Task) -> Any:
    """For a message of several requests, what ``explain()`` said ``solve()`` would do before it ran (its
    ``outcome``: ``"clauses"``, ``"skill"``, ``"agent"``, ...), or ``"?"`` if it raised; None for any other task."""
    if task.kind != SEVERAL:
        return None
    try:
        return forge.explain(task.text)
    except Exception:  # the report's own look ahead: never the stream's
        logger.exception("explain() raised on %r", task.text)
        return "?"


def _nearest(foreseen: Any) -> str:
    """What ``explain()`` said, and the template nearest the message (with ``-v``: why a message went to the agent)."""
    if isinstance(foreseen, str):
        return foreseen
    near = [str(c) for c in foreseen.candidates[:1]]
    return "; ".join([foreseen.verdict, *(f"nearest: {n}" for n in near)])


def _fate(before: str, result: Any) -> str:
    """What became of a message of several requests (a key of ``FATES``)."""
    if result.clauses:
        return "composed" if result.source == "skill" else "clause stopped"
    if before == "clauses":  # every clause bound a skill, yet no clause was served: composition's own
        return "cut, not composed"
    return "whole" if result.source != "agent" or before == "skill" else "new words"


def _detail(output: Any, alone: Any, diff: list[str]) -> str:
    """What differed, for the run log: the answers if they did, and the first rows only one world has."""
    said = [f"answer {output!r}, the agent alone {alone!r}"] if output != alone else []
    return "; ".join(said + diff[:5] + ([f"... {len(diff) - 5} more rows"] if len(diff) > 5 else []))


def _intents(held: dict[str, list[Any]], stream: list[Task]) -> dict[str, set[tuple[str, str]]]:
    """Per skill file, the (kind, identification route) of each of its runs.

    The route is the tool a run called first (a username read, or a person's name looked up
    first). A run of one request of a message of several has the kind of the single-request
    tasks whose runs made the same calls, where those are of one kind; else the message's."""
    whole = {t.text: t.kind for t in stream}
    by_calls: dict[tuple[str, ...], set[str]] = {}
    for runs in held.values():
        for r in runs:
            if r.task in whole:
                by_calls.setdefault(tuple(c.tool for c in r.calls), set()).add(whole[r.task])
    out: dict[str, set[tuple[str, str]]] = {}
    for name, runs in held.items():
        for r in runs:
            kinds = by_calls.get(tuple(c.tool for c in r.calls), set())
            kind = whole.get(r.task) or (next(iter(kinds)) if len(kinds) == 1 else _kind_of(r.task, stream))
            out.setdefault(name, set()).add((kind, r.calls[0].tool if r.calls else "-"))
    return out


def _kind_of(text: str, stream: list[Task]) -> str:
    """The kind of the task a run was of: the task with this text, or for one request of a message
    of several (a prelude and a clause, see ``skillforge._requests``) the first message holding its sentences
    (a value a clause carries over from the one before, written before it as ``"ana.li: "``, aside)."""
    for t in stream:
        if t.text == text:
            return t.kind
    said = [part.strip() for a, b in pieces(text) for part in text[a:b].split(": ")]
    return next((t.kind for t in stream if all(p in t.text for p in said)), "?")


def _tally(report: ShadowReport, i: int, task: Task, result: Any, alone: Any, diff: list[str]) -> None:
    report.tasks += 1
    report.tempting += task.tempting
    if isinstance(result, Exception):
        report.crashes.append(Mismatch(i, task, "crash", None, f"<solve() raised {type(result).__name__}: {result}>", alone, diff))
        report.by_kind.setdefault(task.kind, Counter()).update(("tasks", "crash"))
        return
    report.errors += result.error is not None
    report.learned += result.learned is not None
    counts = report.by_kind.setdefault(task.kind, Counter())
    counts[result.source] += 1
    counts["tasks"] += 1
    daily = report.by_day.setdefault(task.day, Counter())
    daily[result.source] += 1
    if result.source == "agent" and result.error is None and not result.calls:
        logger.warning("task %d: the agent's run recorded no tool calls (are its tools the Forge's wrappers?)", i)
    composed = result.source != "agent" and bool(result.clauses)  # a message served clause by clause, or begun so
    if composed and result.source == "skill":
        report.composed[len(result.clauses)] += 1
    elif composed:
        report.composed_handed_over += 1
    if result.source == "skill":
        report.served += 1
    elif result.source == "skill+agent":
        report.handed_over += 1
        report.handovers[re.sub(r"^guard failed in \w+: ", "", result.handover or "?")] += 1
    else:
        report.by_agent += 1
    if not diff and result.output == alone:
        return
    m = Mismatch(i, task, result.source, result.skill, result.output, alone, diff, result.handover)
    if result.source == "agent":
        logger.error("agent run differs from the agent alone on task %d: %r", i, task.text)
        report.agent_mismatches.append(m)
    else:
        logger.info("wrong replay by %s on task %d: %r", result.skill, i, task.text)
        report.wrong_replays.append(m)
        counts["wrong"] += 1
        daily["wrong"] += 1
        report.composed_wrong += composed


def _share(n: int, of: int) -> str:
    return f"{100 * n / of:.0f}%" if of else "-"


def _median(xs: list[int]) -> float:
    if not xs:
        return 0
    ys = sorted(xs)
    mid = len(ys) // 2
    return ys[mid] if len(ys) % 2 else (ys[mid - 1] + ys[mid]) / 2


def render(r: ShadowReport) -> str:
    """The report as text: totals, a table by kind, and every wrong replay."""
    wrong_by = Counter(m.source for m in r.wrong_replays)
    out = [
        f"shadow run of {r.workload}: {r.tasks} tasks ({r.tempting} tempting) in {r.seconds:.1f} s",
        f"  served by skills (skill):       {r.served}",
        f"  handed over (skill+agent):      {r.handed_over}",
        f"  by the agent:                   {r.by_agent}",
        f"  ceiling (calls seen before):    {r.ceiling} tasks the agent alone made the calls of an earlier one (tools, argument "
        f"names); {r.served_in_ceiling} of them served by skills ({_share(r.served_in_ceiling, r.ceiling)})",
        f"  ... said as before:             {r.worded_before} of the ceiling in the words of an earlier task of those calls "
        f"(values masked); {r.served_worded_before} of them served by skills ({_share(r.served_worded_before, r.worded_before)})",
        *(f"  ... not served, {why}: {n}" for why, n in sorted(r.ceiling_fates.items())),
        f"  WRONG REPLAYS:                  {len(r.wrong_replays)} ({r.wrong_tempting} among tempting tasks; "
        f"{wrong_by['skill']} skill, {wrong_by['skill+agent']} skill+agent)",
        f"  agent-vs-agent mismatches:      {len(r.agent_mismatches)} (harness/agent non-determinism; should be 0)",
        f"  solve() errors / crashes:       {r.errors} / {len(r.crashes)}",
        f"  skill files written:            {len(r.skills_written)} (from {r.learned} learning solves)",
        f"  model requests saved:           {r.requests_saved} (1 per task served fully by a skill)"
        + (f"; probes made {r.probe_runs} agent runs, so {r.requests_saved - r.probe_runs} net" if r.probe_runs else ""),
        *([f"  probes per skill file:          {r.probe_runs / max(1, len(r.skills_written)):.1f} agent runs: a skill repays "
           f"its probes after as many hits (each saves one agent run); {r.served / max(1, len(r.skills_written)):.1f} hits "
           "per file in this stream"] if r.probe_runs else []),
        f"  require(...) per skill file:    median {_median(r.requires)}, max {max(r.requires, default=0)}",
        f"  composed of clause skills:      {sum(r.composed.values())} served"
        + (f" ({', '.join(f'{n} by {k}' for k, n in sorted(r.composed.items()))})" if r.composed else "")
        + f", {r.composed_handed_over} handed over by a clause's skill, {r.composed_wrong} wrong",
        *([f"  messages of several requests:   {sum(r.several.values())}"]
          + [f"  {r.several[k]:>6}  {why}" for k, why in FATES.items()]
          + ["  composed by day (of the day's messages of several requests): "
             + ", ".join(f"{d}: {c['composed']}/{sum(c.values())}" for d, c in sorted(r.several_by_day.items()))]
          if r.several else []),
        "  by day (served / handed over / by the agent / wrong): "
        + ", ".join(f"{d}: {c['skill']}/{c['skill+agent']}/{c['agent']}/{c['wrong']}" for d, c in sorted(r.by_day.items())),
        "",
        f"  {'kind':<16}{'tasks':>6}{'skill':>7}{'s+agent':>9}{'agent':>7}{'wrong':>7}{'crash':>7}{'files':>7}",
    ]
    for kind, c in sorted(r.by_kind.items()):
        out.append(f"  {kind:<16}{c['tasks']:>6}{c['skill']:>7}{c['skill+agent']:>9}{c['agent']:>7}{c['wrong']:>7}{c['crash']:>7}"
                   f"{r.files_by_kind[kind]:>7}")
    if r.files_by_route:
        one = sum(len(names) == 1 for names in r.files_by_route.values())
        out += ["", f"skill files per (kind, identification route: the tool called first): {one} of {len(r.files_by_route)} "
                    "with one file"]
        for (kind, route), names in sorted(r.files_by_route.items()):
            out.append(f"  {kind:<16}{route:<22}{len(names):>3}" + (f"  {', '.join(names)}" if len(names) > 1 else ""))
    if r.handovers:
        out += ["", "why skills handed over (most common first):"]
        out += [f"  {n:>4}  {why}" for why, n in r.handovers.most_common(10)]
    sections = (("wrong replays", r.wrong_replays), ("agent-vs-agent mismatches", r.agent_mismatches), ("solve() crashes", r.crashes))
    for title, items in sections:
        if items:
            out += ["", f"{title}:"]
        for m in items:
            flag = f" [tempting: {m.task.why}]" if m.task.tempting else ""
            out += [f"#{m.index} day {m.task.day} {m.task.kind} via {m.source} {m.skill}{flag}", f"  task:  {m.task.text}",
                    f"  solve: {m.forge_output!r}", f"  alone: {m.agent_output!r}"]
            out += [f"  {line}" for line in m.state_diff]
            if m.handover:
                out.append(f"  handover: {m.handover}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.shadow", description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", default="helpdesk")
    parser.add_argument("--days", type=int, default=None, help="N days of the stream: fewer than the workload's 2, or more (each later day shaped as day 2)")
    parser.add_argument("--workdir", type=Path, default=None, help="keep the worlds and skills here (a new directory)")
    parser.add_argument("--check-agent", action="store_true", help="first check the agent alone is deterministic")
    parser.add_argument("--run-log", action="store_true",
                        help="keep the run log in WORKDIR/state with each skill-served task's verdict (skillforge report --log)")
    parser.add_argument("--probes", type=int, default=0, help="probe runs per skill learned or widened (0: no probes)")
    parser.add_argument("--recurring", action="store_true",
                        help="probe a skill only once a second run of its shape widens it (Forge(probe_new=False))")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    if args.run_log and args.workdir is None:
        parser.error("--run-log keeps the log in the work directory: give --workdir DIR too")
    if args.days is not None and args.days < 1:
        parser.error(f"--days {args.days}: a stream has at least one day")
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args.check_agent:
        differ = agent_determinism(args.workload, days=args.days)
        sys.stdout.write(f"agent alone on two copies of each world: {len(differ)} tasks differ\n")
        sys.stdout.writelines(f"  {t}\n" for t in differ)
    report = run(args.workload, days=args.days, workdir=args.workdir, run_log=args.run_log, probes=args.probes,
                 probe_new=not args.recurring)
    sys.stdout.write(render(report) + "\n")
    return 1 if report.wrong_replays or report.crashes else 0


if __name__ == "__main__":
    raise SystemExit(main())
