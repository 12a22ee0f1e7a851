"""Measures one engine's hit path: run as ``python mm_worker.py muscle_mem|skillforge``; prints JSON.

Both engines get the same 9-step agent with trivial tools, written against
muscle-mem's API; only the import differs. Kept free of skillforge imports at
module level so that it runs in a virtual environment holding only muscle-mem.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import statistics
import sys
import time

KIND = sys.argv[1]
if KIND == "muscle_mem":
    from muscle_mem import Check, Engine  # type: ignore[import-not-found]
else:
    from skillforge.compat.muscle_mem import Check, Engine

VERSION = [0]


def build(checks: bool):
    engine = Engine()
    pre = Check(lambda x: VERSION[0], lambda now, then: now == then) if checks else None
    tools = []
    for i in range(9):
        def tool(x: str) -> str:
            return x

        tool.__name__ = tool.__qualname__ = f"tool_{i}"
        tools.append(engine.function(pre_check=pre)(tool) if pre else engine.function()(tool))

    def agent(task: str) -> None:
        for t in tools:
            t(f"{task}-{t.__name__}")

    engine.set_agent(agent).finalize()
    return engine


def per_call_us(fn, *, rounds: int, per_batch: int) -> float:
    samples = []
    gc.disable()
    try:
        for _ in range(rounds):
            t0 = time.perf_counter_ns()
            for _ in range(per_batch):
                fn()
            samples.append((time.perf_counter_ns() - t0) / per_batch / 1000)
    finally:
        gc.enable()
    return statistics.median(samples)


def main() -> None:
    quick = "--quick" in sys.argv
    rounds, per_batch = (10, 50) if quick else (40, 100)
    out: dict[str, float] = {}
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):  # muscle-mem prints on replay
        for checks in (False, True):
            VERSION[0] = 0
            engine = build(checks)
            engine("go")
            if not engine("go"):
                raise RuntimeError(f"{KIND}: the second call did not replay")
            out["checks" if checks else "plain"] = per_call_us(lambda e=engine: e("go"), rounds=rounds, per_batch=per_batch)
            if KIND == "skillforge" and not checks:  # the same skill through forge.solve(), without the adapter
                forge = engine.forge
                out["solve"] = per_call_us(lambda f=forge: f.solve("go"), rounds=rounds, per_batch=per_batch)

        def plain_tool(x: str) -> str:
            return x

        raw = [plain_tool] * 9

        def direct() -> None:  # the agent's nine calls, by hand, with no engine
            for i, f in enumerate(raw):
                f(f"go-tool_{i}")

        out["direct"] = per_call_us(direct, rounds=rounds, per_batch=per_batch)
        for n in (10, 100, 2000):
            engine = build(True)
            for k in range(n):  # each run's check goes stale when the version moves on
                VERSION[0] = k
                engine("go")
            if not engine("go"):
                raise RuntimeError(f"{KIND}: no replay after {n} runs")
            out[f"after_{n}"] = per_call_us(lambda e=engine: e("go"), rounds=max(5, rounds // 2), per_batch=10)
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
