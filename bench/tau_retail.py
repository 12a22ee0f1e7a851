"""tau-bench retail through skillforge: learn from K tasks, serve N, and check every end state against the gold one.

    .venv/bin/python -m bench.tau_retail [--k 100] [--n 200] [--seeds 0 1 2] [--split train] [--json PATH]
                                         [--no-persona] [--probes N]

Per seed, the split's tasks (``bench/data/tau-retail/tasks.json``) are shuffled with
``random.Random(seed)``; skillforge learns from the agent's runs of the first K and then serves
the next N (learning on, as in production). The agent is a deterministic stand-in that makes each
task's gold writes after the reads a careful agent makes (``bench.tau.agent``). A task's end state
is right when it equals the gold one (the gold actions replayed on a fresh database): tau-bench's
reward rule. The exit code is 1 if any task, in either phase, ended in a wrong end state (or
``solve()`` raised).

Columns: ``skill`` served wholly by a skill (a model request saved), ``s+agent`` a skill started
and handed over, ``agent`` no skill bound, ``wrong`` wrong end states (skill / skill+agent /
agent), ``files`` skill files written, ``intents`` how many intents they serve (by identification
route: the tool a skill calls first and its writes in order; files per intent is ``files / intents``), ``ceiling`` serve tasks whose gold write sequence was seen
before in the seed and whose every write argument is traceable to the instruction or to the
agent's reads (``bench.tau.protocol``).

``solve()`` gets each instruction verbatim. ``--no-persona`` drops the synthetic grammar's persona
sentence ("You are logical, independent, polite.") first, to measure what that sentence alone
costs template matching.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.tau.protocol import SeedReport, run_seed
from bench.tau.tasks import TauTask, load_tasks

__all__ = ["main", "render"]

_SHORT = {
    "cancel_pending_order": "cancel", "modify_pending_order_address": "address",
    "modify_pending_order_payment": "payment", "modify_pending_order_items": "items",
    "return_delivered_order_items": "return", "exchange_delivered_order_items": "exchange",
    "modify_user_address": "user_address", "transfer_to_human_agents": "transfer",
}


def _kind(task: TauTask) -> str:
    """The task's gold writes in short, e.g. ``cancel+return``."""
    return "+".join(_SHORT.get(a.name, a.name) for a in task.writes) or "(no write)"


def _row(label: str, cells: list[str]) -> str:
    widths = (7, 9, 7, 15, 7, 7, 9, 9, 15, 8)
    return f"  {label:<5}" + "".join(f"{c:>{w}}" for c, w in zip(cells, widths, strict=True))


def _numbers(r: SeedReport) -> list[float]:
    s, w, learn = r.sources("serve"), r.wrong("serve"), r.sources("learn")
    return [s["skill"], s["skill+agent"], s["agent"], w["skill"], w["skill+agent"], w["agent"], r.requests_saved,
            r.skill_files, r.intents, r.ceiling, learn["skill"], learn["skill+agent"], learn["agent"], r.seconds]


def _cells(v: list[float], mean: bool) -> list[str]:
    """A row's cells: counts as integers, means with one decimal, seconds always with one."""
    def f(x: float) -> str:
        return f"{x:.1f}" if mean else f"{x:.0f}"

    return [f(v[0]), f(v[1]), f(v[2]), f"{f(v[3])}/{f(v[4])}/{f(v[5])}", f(v[6]), f(v[7]), f(v[8]), f(v[9]),
            f"{f(v[10])}/{f(v[11])}/{f(v[12])}", f"{v[13]:.1f}"]


def _pct(outcomes: list[Any]) -> str:
    return f"{100 * sum(o.source == 'skill' for o in outcomes) / len(outcomes):.0f}%" if outcomes else "n/a"


def _learning(reports: list[SeedReport]) -> str:
    """What learning adds to a solve the agent served (its run learned from, probes aside): median and p90."""
    took = sorted(o.learning for r in reports for o in r.outcomes if o.source in ("agent", "skill+agent") and o.learning > 0)
    if not took:
        return "  learning per agent-served solve: none learned from"
    p90 = took[min(len(took) - 1, int(0.9 * len(took)))]
    return (f"  learning per agent-served solve (probes aside): median {statistics.median(took) * 1000:.0f} ms, "
            f"p90 {p90 * 1000:.0f} ms, over {len(took)} solves")


def render(reports: list[SeedReport], tasks: dict[str, TauTask], seconds: float) -> str:
    """The report as text: a row per seed and the mean, then where skills stopped and what they never served."""
    first = reports[0]
    out = [
        f"tau-bench retail, {first.split} split: learn from K={first.k}, serve N={first.n}, "
        f"seeds {' '.join(str(r.seed) for r in reports)}; instructions "
        + ("verbatim" if first.persona else "without the persona sentence"),
        _row("seed", ["skill", "s+agent", "agent", "wrong s/sa/a", "saved", "files", "intents", "ceiling", "learn s/sa/a", "secs"]),
    ]
    rows = [_numbers(r) for r in reports]
    out += [_row(str(r.seed), _cells(v, mean=False)) for r, v in zip(reports, rows, strict=True)]
    out.append(_row("mean", _cells([statistics.fmean(col) for col in zip(*rows, strict=True)], mean=True)))
    crashes = sum(r.crashes for r in reports)
    learn_wrong = sum(sum(r.wrong("learn").values()) for r in reports)
    harness = sum(o.agent_vs_gold for r in reports for o in r.outcomes)
    out += [
        f"  learning-phase wrong end states: {learn_wrong}; solve() crashes: {crashes}; "
        f"agent alone vs gold mismatches: {harness} (a harness bug if not 0)",
        f"  wall time: {seconds:.1f} s",
        _learning(reports),
    ]
    runs = [r.probe_runs for r in reports]
    if any(runs):
        saved = statistics.fmean(r.requests_saved for r in reports)
        out.append(f"  probes: {statistics.fmean(runs):.1f} agent runs per seed ({statistics.fmean(r.probe_requests for r in reports):.1f} "
                   f"model requests), {statistics.fmean(r.probe_runs / max(1, r.skill_files) for r in reports):.1f} per skill file; "
                   f"{saved:.1f} serve tasks saved an agent run: {saved - statistics.fmean(runs):.1f} net")
    inside = statistics.fmean(sum(o.source == "skill" and o.ceiling for o in r.phase("serve")) for r in reports)
    ceiling = statistics.fmean(r.ceiling for r in reports)
    out.append(
        f"  served inside the ceiling: {inside:.1f} of {ceiling:.1f} per seed ({100 * inside / ceiling if ceiling else 0:.0f}%); "
        "the others served are messages of several requests composed in combinations never seen whole"
    )
    kinds: dict[str, Counter[str]] = {}
    for r in reports:
        for o in r.phase("serve"):
            c = kinds.setdefault(_kind(tasks[o.task_id]), Counter())
            c.update(("tasks", o.source) + (("ceiling",) if o.ceiling else ()))
    out += ["", "serve tasks by gold writes (all seeds):",
            f"  {'writes':<28}{'tasks':>6}{'skill':>7}{'s+agent':>9}{'agent':>7}{'ceiling':>9}"]
    ranked = sorted(kinds.items(), key=lambda kv: (-kv[1]["tasks"], kv[0]))
    other: Counter[str] = Counter()
    for kind, c in ranked[8:]:
        other.update(c)
    for kind, c in ranked[:8] + ([("(other)", other)] if other else []):
        out.append(f"  {kind:<28}{c['tasks']:>6}{c['skill']:>7}{c['skill+agent']:>9}{c['agent']:>7}{c['ceiling']:>9}")
    missed = Counter(o.source for r in reports for o in r.phase("serve") if o.ceiling and o.source != "skill")
    out.append(f"  within the ceiling but not served by a skill: {sum(missed.values())} "
               f"({missed['agent']} by the agent, {missed['skill+agent']} handed over)")
    multi = [o for r in reports for o in r.phase("serve") if o.writes > 1]
    seen = [o for o in multi if o.kinds_seen]
    composed = Counter(o.clauses for o in multi if o.source == "skill" and o.clauses)
    whole = sum(1 for o in multi if o.source == "skill" and not o.clauses)
    out += ["", "messages of several requests (serve phase, all seeds):",
            f"  {len(multi)} tasks; {len(seen)} whose every request kind was seen earlier, of which "
            f"{sum(o.source == 'skill' for o in seen)} served by skills ({_pct(seen)}); "
            f"handed over {sum(o.source == 'skill+agent' for o in seen)}, by the agent {sum(o.source == 'agent' for o in seen)}",
            f"  served by composing skills: {sum(composed.values())} "
            f"({', '.join(f'{n} by {k}' for k, n in sorted(composed.items()))}); by one skill for the whole message: {whole}; "
            f"wrong end states among them: {sum(o.wrong for o in multi if o.source != 'agent')}"]
    handovers = sum((r.handovers() for r in reports), Counter())
    if handovers:
        out += ["", "why skills handed over (serve phase, all seeds, most common first):"]
        out += [f"  {n:>4}  {why}" for why, n in handovers.most_common(8)]
    unlearned = sum((r.not_learned() for r in reports), Counter())
    if unlearned:
        out += ["", "why agent runs were not learned (both phases, all seeds, most common first):"]
        out += [f"  {n:>4}  {why}" for why, n in unlearned.most_common(8)]
    wrong = [(r.seed, o) for r in reports for o in r.outcomes if o.wrong or o.source == "crash"]
    if wrong:
        out += ["", "WRONG END STATES:"]
        for seed, o in wrong:
            out.append(f"  seed {seed} {o.phase} {o.task_id} via {o.source} {o.skill or ''} {o.error or ''}".rstrip())
            out += [f"    {line}" for line in o.diff[:6]]
            if o.handover:
                out.append(f"    handover: {o.handover}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tau_retail", description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=100, help="tasks to learn from per seed (default 100)")
    parser.add_argument("--n", type=int, default=200, help="tasks to serve per seed (default 200)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="shuffle seeds (default 0 1 2)")
    parser.add_argument("--split", default="train", choices=["train", "test", "dev", "all"], help="default train")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the full report here")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="keep each seed's skills and state under this directory (default: temporary)")
    parser.add_argument("--no-persona", action="store_true",
                        help="hand solve() the instructions without the persona sentence ('You are patient, confident.')")
    parser.add_argument("--probes", type=int, default=0, metavar="N",
                        help="probe each skill learned or widened with N agent runs (0: no probes), counted in the report")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args.k < 0 or args.n < 0:
        parser.error("--k and --n must not be negative")
    tasks = load_tasks(args.split)
    if args.k + args.n > len(tasks):
        sys.stderr.write(f"note: the {args.split} split has {len(tasks)} tasks; the serve phase gets "
                         f"{max(0, len(tasks) - args.k)}, not {args.n}\n")
    start = time.perf_counter()
    options = {"workdir": args.workdir, "split": args.split, "persona": not args.no_persona, "probes": args.probes}
    reports = [run_seed(tasks, seed, args.k, args.n, **options) for seed in args.seeds]
    seconds = time.perf_counter() - start
    sys.stdout.write(render(reports, {t.id: t for t in tasks}, seconds) + "\n")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(_json(reports, args, seconds), indent=1) + "\n")
    return 1 if any(r.any_wrong for r in reports) else 0


def _json(reports: list[SeedReport], args: argparse.Namespace, seconds: float) -> dict[str, Any]:
    per_seed = [r.to_json() for r in reports]
    keys = ("served_by_skill", "handed_over", "by_agent", "requests_saved", "skill_files", "intents", "ceiling", "seconds")
    return {
        "benchmark": "tau-bench retail", "split": args.split, "k": args.k, "n": args.n, "seeds": args.seeds,
        "persona": not args.no_persona,
        "wall_seconds": round(seconds, 2),
        "wrong_end_states": sum(sum(s["wrong_end_states"].values()) + sum(s["learn_wrong"].values()) for s in per_seed),
        "mean": {k: statistics.fmean(s[k] for s in per_seed) for k in keys},
        "per_seed": per_seed,
    }


if __name__ == "__main__":
    raise SystemExit(main())
