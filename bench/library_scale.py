"""Opening and learning into a library of 10k skills, through a real Forge; and bounded binding.

    .venv/bin/python -m bench.library_scale [--skills 10000] [--window 1000] [--quick] [--keep DIR]

Learning: an agent serves tasks of ``--skills`` distinct shapes (``refund red urgent order #4711``:
a verb, a colour, an adjective and a noun from bench/scale.py's words, drawn at random), each with a constant
of its own in its calls, so every solve writes one new skill file; the time per learn (the
whole ``solve()``: the agent's run, lifting, proving, writing, indexing) is reported for the
first and the last window of learns. Opening: a fresh process builds a Forge on the library and
serves one task of its shapes, cold (no state directory: every file is read and parsed) and warm
(the state directory's metadata cache, as the learning process left it).
Binding: crafted tasks of ``MAX_TASK_CHARS`` characters (runs of punctuation, repeated literal
words) against templates of several free-text and word slots; the worst time per bind.

Goals (issue #14): warm open <= 1 s at 10k, learn time flat within 1.5x (last window over the
first); binding of any crafted task in milliseconds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from skillforge import Forge

from .scale import ADJS, COLORS, NOUNS, VERBS


def lookup(ref: str) -> dict:
    """The record of a reference."""
    return {"ref": ref, "status": "open"}


def act(ref: str, action: str) -> str:
    """Do ``action`` to a reference."""
    return f"{action}:{ref}"


def shapes(n: int) -> list[str]:
    """``n`` distinct task shapes (literal words; the reference is the slot), drawn at random (seeded)
    from every verb, colour, adjective and noun, so that a shape shares words with a few others, as
    tasks of one business do, and not three of its four words with thousands."""
    sizes = (len(VERBS), len(COLORS), len(ADJS), len(NOUNS))
    total = sizes[0] * sizes[1] * sizes[2] * sizes[3]
    out = []
    for k in random.Random(14).sample(range(total), n):
        k, v = divmod(k, sizes[0])
        k, c = divmod(k, sizes[1])
        nn, a = divmod(k, sizes[2])
        out.append(f"{VERBS[v]} {COLORS[c]} {ADJS[a]} {NOUNS[nn]}")
    return out


def forge_on(skills: Path, state: Path) -> Forge:
    forge = Forge(skills_dir=skills, state_dir=state, run_log=False)
    forge.tool(read=True)(lookup)
    forge.tool(act)
    wrapped = {t.name: t.wrapper for t in forge.registry}

    def agent(task: str) -> str:
        words, _, ref = task.rpartition(" #")
        wrapped["lookup"](ref=ref)
        code = "k" + hashlib.sha256(words.encode()).hexdigest()[:8]  # a constant of this shape, not in its task
        return wrapped["act"](ref=ref, action=code)

    forge.agent = agent
    return forge


def learn(skills: Path, state: Path, n: int, window: int) -> dict[str, Any]:
    """Learn ``n`` skills; ms per learn over the first and the last ``window`` learns (and each window)."""
    forge = forge_on(skills, state)
    per: list[float] = []
    t_all = time.perf_counter()
    for i, shape in enumerate(shapes(n)):
        t0 = time.perf_counter()
        result = forge.solve(f"{shape} #{1000 + i}")
        per.append((time.perf_counter() - t0) * 1000)
        if not result.learned:
            raise RuntimeError(f"learn {i} ({shape!r}) wrote nothing: {result.not_learned}")
        if (i + 1) % window == 0:
            sys.stderr.write(f"  {i + 1} skills, last {window}: {statistics.mean(per[-window:]):.1f} ms per learn\n")
    total = time.perf_counter() - t_all
    files = len([p for p in skills.glob("*.py") if not p.name.startswith("_")])
    if files != n:
        raise RuntimeError(f"expected {n} skill files, found {files}")
    windows = [statistics.mean(per[k : k + window]) for k in range(0, n, window)]
    return {"skills": n, "seconds": total, "first": windows[0], "last": windows[-1], "windows": windows}


_OPEN = """
import json, sys, time
t0 = time.perf_counter()
from bench.library_scale import forge_on
from pathlib import Path
t1 = time.perf_counter()
forge = forge_on(Path(sys.argv[1]), Path(sys.argv[2]))
result = forge.solve(sys.argv[3])
t2 = time.perf_counter()
assert result.source == "skill", (result.source, result.not_learned)
print(json.dumps({"import": t1 - t0, "open": t2 - t1, "skills": len(forge.skills())}))
"""


def open_library(skills: Path, state: Path, task: str) -> dict[str, float]:
    """A fresh process: import, then build a Forge on the library and serve ``task`` from a skill."""
    done = subprocess.run([sys.executable, "-c", _OPEN, str(skills), str(state), task], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"opening the library failed:\n{done.stderr}")
    return json.loads(done.stdout)


def binding() -> list[tuple[str, float]]:
    """Worst ms per bind of crafted tasks of MAX_TASK_CHARS characters, per template."""
    from skillforge._template import MAX_TASK_CHARS, Slot, TaskTemplate

    text, word = (lambda n: Slot(n, "text", "str")), (lambda n: Slot(n, "word", "str"))
    templates = [
        TaskTemplate("Change the name to {first} {last} now", [word("first"), word("last")]),
        TaskTemplate("{a}, {b}, {c} and {d}", [text("a"), text("b"), text("c"), text("d")]),
        TaskTemplate("Note {a} for {b} for {c} for {d} now", [text("a"), text("b"), text("c"), text("d")]),
        TaskTemplate("Return the {item} because {reason}, thanks", [text("item"), text("reason")]),
        TaskTemplate("Ship {qty} of {item} to {who} by {when}", [Slot("qty", "int", "int"), text("item"), word("who"), text("when")]),
    ]
    fillers = [", ", "'", "a'", "for ", "and ", " ", ". ", "-", "to by of ", "Aa "]
    rows = []
    for t in templates:
        worst = 0.0
        for f in fillers:
            for task in (f * (MAX_TASK_CHARS // len(f)), t.text.split("{")[0] + f * ((MAX_TASK_CHARS - 60) // len(f)) + "x"):
                task = task[:MAX_TASK_CHARS]
                t0 = time.perf_counter()
                t.bind(task)
                worst = max(worst, (time.perf_counter() - t0) * 1000)
        rows.append((t.text, worst))
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.library_scale")
    parser.add_argument("--skills", type=int, default=10_000)
    # Chroma's upsert costs about twice as much in every other 500 of each 1,000 adds (measured on its own:
    # 7.6 / 14.6 / 8.8 / 15.2 ms per 500, not growing), so a window of 500 compares a cheap phase with a dear one
    parser.add_argument("--window", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="1,000 skills, windows of 200")
    parser.add_argument("--keep", type=Path, default=None, help="build the library here and keep it")
    args = parser.parse_args(argv)
    from bench.library_scale import learn  # the tools a skill imports must come from an importable module, not __main__
    n, window = (1000, 200) if args.quick else (args.skills, args.window)
    lines = ["binding crafted tasks of the longest length that binds (worst ms per bind)"]
    for text, ms in binding():
        lines.append(f"  {text:48} {ms:8.2f} ms")
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
    root = Path(tempfile.mkdtemp(prefix="skillforge-library-")) if args.keep is None else args.keep
    try:
        skills, state = root / "skills", root / "state"
        learned = learn(skills, state, n, window)
        task = f"{shapes(n)[n // 2]} #99"
        cold_state = root / "cold-state"
        cold = open_library(skills, cold_state, task)
        shutil.rmtree(cold_state, ignore_errors=True)
        warm = open_library(skills, state, task)
        ratio = learned["last"] / learned["first"]
        out = [
            f"learning {n} skills through solve() ({learned['seconds']:.0f} s in all; ms per learn, windows of {window})",
            f"  first {window}: {learned['first']:.1f} ms   last {window}: {learned['last']:.1f} ms   ratio {ratio:.2f}"
            f" (goal <= 1.5)",
            "  every window: " + " ".join(f"{w:.0f}" for w in learned["windows"]),
            f"opening the library of {n} skills in a fresh process (import {warm['import']:.2f} s not included)",
            f"  cold (no state dir): {cold['open']:.2f} s    warm (metadata cache): {warm['open']:.2f} s (goal <= 1 s)",
        ]
        sys.stdout.write("\n".join(out) + "\n")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
