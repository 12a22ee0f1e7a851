"""chromadb is imported only when the semantic index is used: never by a hit the template index answers.

Importing chromadb costs a fresh process 0.5-0.8 s, most of its first semantic lookup. Each
check runs in a fresh interpreter, since this test process has long imported chromadb.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PROBE = """
import json, sys
from skillforge import Forge
from skillforge.demo import desk

desk.open_desk(sys.argv[3])
forge = Forge(skills_dir=sys.argv[1], state_dir=sys.argv[2], tools=desk.TOOLS, agent=lambda task: "noted", learn=False)
seen = {"after_import": "chromadb" in sys.modules}
hit = forge.solve("Where is my order #1030?")
seen["hit"] = [hit.source, hit.skill, hit.output, "chromadb" in sys.modules]
hits = [forge.solve(t).source for t in ("Where is my order #1010?", "Where is my order #1002?")]
seen["more_hits"] = [hits, "chromadb" in sys.modules]
miss = forge.solve("Can I change the colour of my mug?")  # no template binds it: the semantic index is asked
seen["miss"] = [miss.source, miss.output, "chromadb" in sys.modules]
seen["index"] = [forge.semantic.complete(), sorted(forge.semantic.query("Refund order 77")), len(forge.skills())]
print(json.dumps(seen))
"""


def _probe(tmp_path: Path) -> dict:
    skills = tmp_path / "skills"
    if not skills.exists():
        shutil.copytree(REPO / "skills", skills)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(skills), str(tmp_path / "state"), str(tmp_path / "desk.sqlite3")],
        capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_hit_in_a_fresh_process_never_imports_chromadb_and_a_miss_imports_it_and_works(tmp_path: Path) -> None:
    for state in ("cold", "warm"):  # no state directory yet; then the one the first process left
        seen = _probe(tmp_path)
        assert seen["after_import"] is False, state
        assert seen["hit"] == ["skill", "where_order", "Order 1030 is processing.", False], state
        assert seen["more_hits"] == [["skill", "skill"], False], state
        assert seen["miss"] == ["agent", "noted", True], state  # the miss asked Chroma, which works
        complete, candidates, skills = seen["index"]
        assert complete is True and skills > 0
        assert any(name.startswith("refund_order") for name in candidates), candidates
