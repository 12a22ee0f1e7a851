"""The first lookup in a fresh process: a hit the template index answers, and a miss that asks Chroma.

    .venv/bin/python -m bench.first_hit [--reps 9] [--quick] [--before REF]

Each repetition starts fresh interpreters, one per variant, taking turns, on the same library
(the demo's ``skills/``, with a warm state directory: its metadata cache and Chroma store made
by a first process, as a running service has them):

- ``now``: this checkout;
- ``before``: the code of git revision ``REF`` (default ``main``), extracted with ``git archive``
  (skipped, with a note, when git or the revision is not there);
- ``eager``: this checkout, with ``import chromadb`` right after ``import skillforge``: what a
  process pays when chromadb is imported up front, whether or not the semantic index is used.

In each process: ``import`` (skillforge and the app's tools), ``first hit`` (a Forge opened on
the library and its first ``solve()``, answered by the template index), their sum, and then
``first miss`` (a task no template binds: the semantic index is opened, chromadb imported if it
was not, and synced with the library). Medians over the repetitions; and whether chromadb was
in ``sys.modules`` after the hit.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import skillforge
from skillforge.demo import desk
if sys.argv[4] == "eager":
    import chromadb
t1 = time.perf_counter()
desk.open_desk(sys.argv[3])
forge = skillforge.Forge(skills_dir=sys.argv[1], state_dir=sys.argv[2], tools=desk.TOOLS,
                         agent=lambda task: "noted", learn=False, run_log=False)
hit = forge.solve("Where is my order #1030?")
t2 = time.perf_counter()
on_hit = "chromadb" in sys.modules
miss = forge.solve("Can I change the colour of my mug?")
t3 = time.perf_counter()
if hit.source != "skill" or miss.source != "agent":
    raise SystemExit(f"expected a hit and a miss, got {hit.source} and {miss.source}")
print(json.dumps({"import": t1 - t0, "first hit": t2 - t1, "to first hit": t2 - t0, "first miss": t3 - t2,
                  "chromadb after the hit": on_hit, "file": skillforge.__file__}))
"""

COLUMNS = ("import", "first hit", "to first hit", "first miss")


def _extract(ref: str, into: Path) -> Path | None:
    """The ``skillforge`` package and ``templates`` of git revision ``ref`` under ``into``; None if unavailable."""
    try:
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", "--format=tar", ref, "skillforge", "templates"],
            capture_output=True, check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    into.mkdir(parents=True)
    tar_path = into / "code.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(into, filter="data")
    tar_path.unlink()
    return into


def _child(code_root: Path, mode: str, skills: Path, state: Path, db: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code_root))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(skills), str(state), str(db), mode],
        capture_output=True, text=True, env=env, cwd=skills.parent, timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the {mode} process failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def run(reps: int, before: str | None) -> tuple[dict[str, dict[str, float]], dict[str, bool], list[str]]:
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="skillforge-first-hit-") as tmp_name:
        tmp = Path(tmp_name)
        skills, state, db = tmp / "skills", tmp / "state", tmp / "desk.sqlite3"
        shutil.copytree(REPO / "skills", skills, ignore=shutil.ignore_patterns("__pycache__"))
        variants: dict[str, tuple[Path, str]] = {"now": (REPO, "lazy")}
        if before:
            code = _extract(before, tmp / "before")
            if code is None:
                notes.append(f"'before' skipped: git revision {before!r} is not available here")
            else:
                variants["before"] = (code, "lazy")
        variants["eager"] = (REPO, "eager")
        _child(REPO, "lazy", skills, state, db)  # the state directory a running service has: cache and Chroma store
        samples: dict[str, dict[str, list[float]]] = {v: {c: [] for c in COLUMNS} for v in variants}
        imported: dict[str, bool] = {}
        for _ in range(reps):
            for name, (code, mode) in variants.items():  # the variants take turns
                out = _child(code, mode, skills, state, db)
                if name == "before" and not out["file"].startswith(str(code)):
                    raise RuntimeError(f"the 'before' process imported {out['file']}, not the extracted code")
                for c in COLUMNS:
                    samples[name][c].append(out[c])
                imported[name] = imported.get(name, False) or out["chromadb after the hit"]
    medians = {v: {c: statistics.median(xs) for c, xs in cols.items()} for v, cols in samples.items()}
    return medians, imported, notes


def report(medians: dict[str, dict[str, float]], imported: dict[str, bool], notes: list[str], reps: int, before: str | None) -> str:
    lines = [
        f"first lookup in a fresh process (median of {reps}; seconds; warm state directory)",
        f"{'variant':34} " + " ".join(f"{c:>13}" for c in COLUMNS) + f" {'chromadb after hit':>19}",
    ]
    labels = {"now": "now (this checkout)", "before": f"before ({before})", "eager": "eager (import chromadb up front)"}
    for name, cols in medians.items():
        lines.append(
            f"{labels[name]:34} " + " ".join(f"{cols[c]:13.3f}" for c in COLUMNS) + f" {str(imported[name]):>19}"
        )
    now, eager = medians["now"], medians["eager"]
    lines.append(
        f"chromadb up front costs the first hit {eager['to first hit'] - now['to first hit']:+.3f} s "
        f"({eager['to first hit'] / now['to first hit']:.2f}x); the first miss pays it instead "
        f"({now['first miss']:.3f} s now, {eager['first miss']:.3f} s with chromadb already imported)"
    )
    lines.extend(notes)
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.first_hit", description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="3 repetitions")
    parser.add_argument("--before", default="main", help="git revision measured as 'before' ('' to skip)")
    args = parser.parse_args(argv)
    reps = 3 if args.quick else args.reps
    medians, imported, notes = run(reps, args.before or None)
    sys.stdout.write(report(medians, imported, notes, reps, args.before or None) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
