"""solve() on a hit vs calling the same nine tools directly, measured side by side in one run.

Reference to beat (muscle-mem 0.1.0, same kind of machine): 146 us per hit
without checks, 412 us with pre-checks, 71-209x its direct call.
"""

from __future__ import annotations

import gc
import importlib
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from skillforge import Forge

from . import nine_tools


def _side_by_side(fns: dict[str, Callable[[], Any]], *, rounds: int, per_batch: int) -> dict[str, float]:
    """Median per-call time in microseconds; the variants take turns, batch by batch."""
    for fn in fns.values():  # warm up
        for _ in range(per_batch):
            fn()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    gc.disable()
    try:
        for _ in range(rounds):
            for name, fn in fns.items():
                t0 = time.perf_counter_ns()
                for _ in range(per_batch):
                    fn()
                samples[name].append((time.perf_counter_ns() - t0) / per_batch / 1000)
    finally:
        gc.enable()
    return {name: statistics.median(values) for name, values in samples.items()}


def run(quick: bool = False) -> list[tuple[str, float, str, str]]:
    rounds, per_batch = (30, 100) if quick else (300, 200)
    rows: list[tuple[str, float, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="skillforge-bench-") as tmp:
        forge = Forge(skills_dir=Path(tmp) / "bench_skills", state_dir=Path(tmp) / "state")
        for f in nine_tools.READS:
            forge.tool(read=True)(f)
        for f in nine_tools.WRITES:
            forge.tool(f)
        wrapped = {t.name: t.wrapper for t in forge.registry}

        def agent(task: str) -> str:
            tid = task.rsplit(" ", 1)[-1]
            r = wrapped["fetch_ticket"](ticket_id=tid)
            for name in ("step_b", "step_c", "step_d", "step_e", "step_f", "step_g", "step_h"):
                r = wrapped[name](key=r["next"])
            return wrapped["close_ticket"](key=r["next"], ticket_id=tid)["closed"]

        forge.agent = agent
        learned = forge.solve("Close ticket T-1000")
        if not learned.learned:
            raise RuntimeError(f"the benchmark run was not learned: {learned.not_learned}")
        hit = forge.solve("Close ticket T-2000")
        if hit.source != "skill" or hit.output != "T-2000" or len(hit.calls) != 9:
            raise RuntimeError(f"expected a 9-call skill hit, got {hit.source} with {len(hit.calls)} calls")

        source = (Path(tmp) / "bench_skills" / f"{learned.learned}.py").read_text()
        if "require(" not in source:
            raise RuntimeError("the benchmark skill has no guards")
        unguarded = "\n".join(line for line in source.splitlines() if "require(" not in line) + "\n"
        # beside skills/, not in it: a second file of the skill's name there would be served by the forges below
        (Path(tmp) / "bench_unguarded").mkdir()
        (Path(tmp) / "bench_unguarded" / "unguarded.py").write_text(unguarded)
        sys.path.insert(0, tmp)
        try:
            plain = getattr(importlib.import_module(f"bench_skills.{learned.learned}"), learned.learned)
            bare = getattr(importlib.import_module("bench_unguarded.unguarded"), learned.learned)
        finally:
            sys.path.remove(tmp)
        quiet = Forge(skills_dir=Path(tmp) / "bench_skills", state_dir=Path(tmp) / "state2", run_log=False)
        for t in forge.registry:
            quiet.tool(t.wrapper)
        if quiet.solve("Close ticket T-3000").source != "skill":
            raise RuntimeError("the second forge did not find the skill")
        match = forge.find("Close ticket T-3000")
        sandboxed = forge._function(match.skill)  # the RestrictedPython function solve() runs

        w = SimpleNamespace(**wrapped)
        timed = _side_by_side(
            {
                "direct": lambda: nine_tools.direct("T-3000"),
                "decorated": lambda: nine_tools.direct("T-3000", tools=w),
                "bare": lambda: bare(ticket_id="T-3000"),
                "plain": lambda: plain(ticket_id="T-3000"),
                "sandboxed": lambda: sandboxed(ticket_id="T-3000"),
                "solve": lambda: forge.solve("Close ticket T-3000"),
                "nolog": lambda: quiet.solve("Close ticket T-3000"),
                "find": lambda: forge.find("Close ticket T-3000"),
            },
            rounds=rounds,
            per_batch=per_batch,
        )
        direct, base = timed["direct"], timed["plain"]
        rows.append(("direct: the 9 plain functions called by hand", direct, "1.0x", f"{direct / base:.2f}x"))
        for key, label in (
            ("decorated", "the same, through the decorated tools (outside solve)"),
            ("bare", "generated skill, plain import, its guards deleted"),
            ("plain", "generated skill, plain import (16 guards)"),
            ("sandboxed", "the same skill in the sandbox, decorated tools"),
            ("solve", "forge.solve() hit: find, bind, sandbox, guards, recording, run log"),
            ("nolog", "  the same with the run log off (Forge(run_log=False))"),
            ("find", "  of which forge.find(): template index + bind"),
        ):
            rows.append((label, timed[key], f"{timed[key] / direct:.1f}x", f"{timed[key] / base:.2f}x"))

        for label, f in (("run log on: its batch of <= 1,024 results", forge), ("run log off", quiet)):
            f.solve("Close ticket T-3000")
            tracemalloc.start()
            for _ in range(5000):
                f.solve("Close ticket T-3000")
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            rows.append((f"peak traced memory over 5,000 hits, {label} (KiB)", peak / 1024, "", ""))
        rows.append(("process peak RSS (MiB)", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "", ""))
    return rows


def report(rows: list[tuple[str, float, str, str]]) -> str:
    lines = [
        "hit path: 9-step task, trivial tools (median per call)",
        f"{'':68} {'us':>9} {'/direct':>8} {'/skill':>8}",
    ]
    for label, value, ratio, vs_skill in rows:
        lines.append(f"{label:68} {value:9.2f} {ratio:>8} {vs_skill:>8}")
    lines.append("/skill: ratio to the generated skill imported as a plain function, guards on")
    lines.append("muscle-mem 0.1.0 reference: 146 us/hit without checks, 412 us with pre-checks (71-209x direct)")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys as _sys

    _sys.stdout.write(report(run(quick="--quick" in _sys.argv)) + "\n")
