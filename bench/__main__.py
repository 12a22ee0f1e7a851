"""Run every benchmark: ``python -m bench [--quick] [--no-muscle-mem]``.

The muscle-mem comparison installs muscle-mem 0.1.0 from PyPI into its own
environment under ``bench/.venvs`` on first use.
"""

from __future__ import annotations

import platform
import sys

from . import hit_path, lifting_report, muscle_mem_compare


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    out = sys.stdout
    out.write(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}\n\n")
    out.write(hit_path.report(hit_path.run(quick=quick)) + "\n\n")
    out.write(lifting_report.report(lifting_report.run(quick=quick)) + "\n\n")
    if "--no-muscle-mem" not in argv:
        out.write(muscle_mem_compare.report(muscle_mem_compare.run(quick=quick)) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
