"""Run every benchmark: ``python -m bench [--quick] [--no-muscle-mem] [--no-scale] [--no-library] [--no-tau]``.

The first lookup in a fresh process (``first_hit``: a hit never imports chromadb) runs second.
The shadow check (wrong replays on the helpdesk workload), the probes (phrasings the retail stream never
used, after six days of it; two with ``--quick``), ``skillforge proxy`` (requests saved,
wrong replays and latency on the demo and the helpdesk) and tau-bench retail (learn from
100 tasks, serve 200, three seeds; one with ``--quick``) run with them, and so does the library
at scale (learning 10k skills and opening them, ~15 min; 1,000 skills with ``--quick``).

Each benchmark runs in a process of its own, so that one's garbage does not slow
the next; inside each, the variants it compares are measured side by side.
The muscle-mem comparison installs muscle-mem 0.1.0 from PyPI into its own
environment under ``bench/.venvs`` on first use.
"""

from __future__ import annotations

import platform
import subprocess
import sys


def main(argv: list[str]) -> int:
    flags = [a for a in argv if a == "--quick"]
    names = ["hit_path", "first_hit", "lifting_report", "shadow", "probes", "proxy"] + ([] if "--no-muscle-mem" in argv else ["muscle_mem_compare"])
    names += [] if "--no-scale" in argv else ["scale"]
    names += [] if "--no-library" in argv else ["library_scale"]
    names += [] if "--no-tau" in argv else ["tau_retail"]
    sys.stdout.write(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}\n")
    for name in names:
        sys.stdout.write("\n")
        sys.stdout.flush()
        if name == "shadow":
            args: list[str] = []
        elif name == "probes":
            args = ["--days", "2", "--per", "2"] if flags else []
        elif name == "tau_retail":
            args = ["--seeds", "0"] if flags else []
        else:
            args = flags
        done = subprocess.run([sys.executable, "-m", f"bench.{name}", *args])
        if done.returncode != 0:
            return done.returncode
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
