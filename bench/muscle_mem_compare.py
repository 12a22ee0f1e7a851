"""muscle-mem 0.1.0 against its API on skillforge, the same 9-step agent, in one run.

muscle-mem is installed from PyPI into its own virtual environment
(``bench/.venvs/muscle-mem-0.1.0``, made on first use); each engine is measured by
``mm_worker.py`` in a process of its own, one after the other, in the same command.
"""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ENV = HERE / ".venvs" / "muscle-mem-0.1.0"
WORKER = HERE / "mm_worker.py"


def _env_python() -> Path:
    python = ENV / "bin" / "python"
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(ENV)
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "muscle-mem==0.1.0"], capture_output=True, text=True
        )
        if done.returncode != 0:
            raise OSError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "pip failed")
    return python


def _measure(python: Path | str, kind: str, quick: bool) -> dict[str, float]:
    args = [str(python), str(WORKER), kind] + (["--quick"] if quick else [])
    out = subprocess.run(args, check=True, capture_output=True, text=True, cwd=HERE.parent)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(quick: bool = False) -> dict[str, Any]:
    try:
        mm_python = _env_python()
    except (subprocess.CalledProcessError, OSError) as e:
        return {"error": f"could not install muscle-mem==0.1.0 in {ENV}: {e}"}
    return {"muscle_mem": _measure(mm_python, "muscle_mem", quick), "skillforge": _measure(sys.executable, "skillforge", quick)}


def report(result: dict[str, Any]) -> str:
    if "error" in result:
        return f"muscle-mem comparison skipped: {result['error']}"
    mm, sf = result["muscle_mem"], result["skillforge"]
    rows = [
        ("hit, no checks", mm["plain"], sf["plain"]),
        ("hit, pre-checks on all 9 tools", mm["checks"], sf["checks"]),
        ("hit after 10 earlier runs (stale checks)", mm["after_10"], sf["after_10"]),
        ("hit after 100 earlier runs", mm["after_100"], sf["after_100"]),
        ("hit after 2,000 earlier runs", mm["after_2000"], sf["after_2000"]),
    ]
    lines = [
        "muscle-mem 0.1.0 vs skillforge.compat.muscle_mem: the same 9-step agent, trivial tools (median per call)",
        f"{'':44} {'muscle-mem':>12} {'skillforge':>12} {'faster':>8}",
    ]
    for label, a, b in rows:
        lines.append(f"{label:44} {a:10.1f}us {b:10.1f}us {a / b:7.1f}x")
    lines.append(f"{'skillforge forge.solve() hit (no adapter)':44} {'':>12} {sf['solve']:10.1f}us")
    lines.append(
        f"{'direct: the 9 calls by hand':44} {mm['direct']:10.2f}us {sf['direct']:10.2f}us"
        f"   (hit/direct: muscle-mem {mm['plain'] / mm['direct']:.0f}x, skillforge {sf['plain'] / sf['direct']:.0f}x)"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    import sys as _sys

    _sys.stdout.write(report(run(quick="--quick" in _sys.argv)) + "\n")
