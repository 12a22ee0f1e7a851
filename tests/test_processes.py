"""Many processes against one skills/ directory: no torn, lost or duplicated skill; a kill leaves no partial file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from skillforge import Compiled
from skillforge._compile import admit_file
from skillforge._library import Library

REPO = Path(__file__).resolve().parent.parent

WORKER = textwrap.dedent(
    """
    import json, random, sys
    from pathlib import Path
    from skillforge import Forge, OpenAIAgent
    from skillforge.demo import desk
    from skillforge.demo.model import StandInModel
    from skillforge.testing import ChatServer

    skills, db, seed, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    desk.open_desk(db)
    rng = random.Random(seed)
    orders = [str(i) for i in range(1001, 1061)]
    kinds = [
        lambda: f"Where is my order #{rng.choice(orders)}?",
        lambda: f"Change the email of customer C-{rng.randint(101, 120)} to u{rng.randint(1, 999)}@example.org",
        lambda: f"Please ship order #{rng.choice(orders)} to {rng.randint(1, 99)} Elm Street, Lakeside instead.",
        lambda: f"Send a replacement for order #{rng.choice(orders)}",
    ]
    learned = []
    with ChatServer(StandInModel()) as server:
        forge = Forge(skills_dir=skills, state_dir=Path(db).parent / f"state{seed}", tools=desk.TOOLS,
                      agent=OpenAIAgent(model="stand-in", client=server.client()))
        for _ in range(n):
            task = rng.choice(kinds)()
            r = forge.solve(task)
            if r.learned:
                learned.append(task)
    print(json.dumps(learned))
    """
)


def test_four_processes_solving_and_learning_at_once_leave_a_sound_library(tmp_path: Path) -> None:
    from skillforge.demo import desk

    skills = tmp_path / "skills"
    base = tmp_path / "base.sqlite3"
    desk.open_desk(base).close()
    procs = []
    for seed in range(4):
        db = tmp_path / f"desk{seed}.sqlite3"
        db.write_bytes(base.read_bytes())
        procs.append(subprocess.Popen(
            [sys.executable, "-c", WORKER, str(skills), str(db), str(seed), "50"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
        ))
    learned: set[str] = set()  # the tasks whose runs were written into a skill
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]
        learned.update(__import__("json").loads(out.strip().splitlines()[-1]))

    library = Library(skills)
    files, problems = library.scan()
    assert problems == []  # every file parses and reads back
    held = {library.load_run(h).task for s in files for h in s.runs}
    assert learned and learned <= held  # none lost (a skill folded into a wider one keeps its runs there)
    assert not list(skills.glob(".*.tmp"))  # no temp file left behind
    for skill in files:  # every recorded run is on disk, and the file reproduces each one
        for run_hash in skill.runs:
            assert isinstance(admit_file(skill, library.load_run(run_hash)), Compiled), skill.name
    by_template: dict[str, list] = {}
    for skill in files:
        by_template.setdefault(skill.template.text, []).append(skill)
    for variants in by_template.values():  # none duplicated: no variant reproduces every run of another
        for a in variants:
            for b in variants:
                if a is not b:
                    covered = [isinstance(admit_file(a, library.load_run(h)), Compiled) for h in b.runs]
                    assert not all(covered), (a.name, b.name)


def test_a_process_killed_mid_write_leaves_no_partial_skill(tmp_path: Path) -> None:
    target = tmp_path / "skills" / "refund_order.py"
    target.parent.mkdir()
    target.write_text("# the old, complete file\\n")
    child = textwrap.dedent(
        f"""
        import os, time
        from skillforge import _library
        real_fsync = os.fsync
        def slow_fsync(fd):
            open({str(tmp_path / 'writing')!r}, 'w').close()
            time.sleep(60)
        _library.os.fsync = slow_fsync
        _library.atomic_write(_library.Path({str(target)!r}), "def refund_order():\\n" + "    pass\\n" * 10000)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", child], cwd=REPO)
    deadline = time.monotonic() + 30
    while not (tmp_path / "writing").exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert target.read_text() == "# the old, complete file\\n"  # readers only ever see a whole file
    assert Library(target.parent).paths() == [target]  # the half-written temp is not a skill
    temps = list(target.parent.glob(".refund_order.py.*.tmp"))
    assert len(temps) == 1
    Library(target.parent).write("refund_order", "x = 1\\n", [], package=False)  # the next write tidies up
    assert not list(target.parent.glob(".refund_order.py.*.tmp"))
