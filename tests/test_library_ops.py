"""Operating the library: the run log and stats, `skillforge check` in CI, `skillforge rm`."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillforge.cli import cli

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def app(tmp_path: Path, desk_db: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user app (module ``myapp``) whose forge holds the desk tools and a copy of the committed skills."""
    shutil.copytree(REPO / "skills", tmp_path / "skills")
    (tmp_path / "myapp.py").write_text(
        "from skillforge import Forge\nfrom skillforge.demo import desk\n"
        f"desk.open_desk({str(desk_db)!r})\n"
        f"forge = Forge(skills_dir={str(tmp_path / 'skills')!r}, state_dir={str(tmp_path / 'state')!r}, tools=desk.TOOLS)\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "myapp", raising=False)  # each test imports its own app
    return tmp_path


def test_every_solve_is_logged_and_stats_count_hits_handovers_and_savings(desk_db: Path, make_forge, tmp_path: Path) -> None:
    forge = make_forge()
    forge.solve("Where is my order #1002?")  # agent, learned (processing)
    forge.solve("Where is my order #1010?")  # hit
    forge.solve("Where is my order #1015?")  # hit
    forge.solve("Where is my order #1001?")  # delivered: the guard stops it, the agent finishes
    log = forge.state_dir / "runs.sqlite3"
    st = forge.stats()  # flushes the batch
    rows = sqlite3.connect(log).execute("SELECT source, skill, llm_calls FROM log ORDER BY at").fetchall()
    assert [r[0] for r in rows] == ["agent", "skill", "skill", "skill+agent"]
    assert st.overall.solves == 4 and st.overall.hits == 2 and st.overall.agent == 1 and st.overall.handovers == 1
    assert st.overall.llm_calls == rows[0][2] + rows[3][2]
    (where,) = [s for s in st.skills if s.name == "where_order"]
    assert where.hits == 2 and where.requests_saved > 0 and where.median_hit_ms is not None
    assert st.overall.requests_saved == pytest.approx(sum(s.requests_saved for s in st.skills))


def test_hits_are_written_in_batches_not_one_by_one(desk_db: Path, make_forge) -> None:
    forge = make_forge()
    forge.solve("Where is my order #1002?")
    forge.runlog.flush()
    for order in ("1010", "1015", "1021"):
        forge.solve(f"Where is my order #{order}?")
    conn = sqlite3.connect(forge.state_dir / "runs.sqlite3")
    assert conn.execute("SELECT COUNT(*) FROM log").fetchone()[0] == 1  # the hits wait for the next batch
    forge.runlog.flush()
    assert conn.execute("SELECT COUNT(*) FROM log").fetchone()[0] == 4
    assert conn.execute("SELECT COUNT(*) FROM hits").fetchone()[0] == 3


def test_a_forge_dropped_before_exit_keeps_its_queued_solves(desk_db: Path, standin, tmp_path: Path) -> None:
    import gc

    from skillforge import Forge, OpenAIAgent
    from skillforge.demo import desk

    agent = OpenAIAgent(model="stand-in", client=standin.client())
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", agent=agent, tools=desk.TOOLS)
    forge.solve("Where is my order #1002?")
    forge.solve("Where is my order #1010?")
    log = forge.state_dir / "runs.sqlite3"
    del forge  # as a script or a request handler drops its Forge; the exit hook holds the log weakly
    gc.collect()
    rows = sqlite3.connect(log).execute("SELECT source FROM log ORDER BY at").fetchall()
    assert [r[0] for r in rows] == ["agent", "skill"]


def test_cli_stats_and_skills_show_hit_counts(app: Path) -> None:
    runner = CliRunner()
    for order in ("1010", "1015"):
        assert "source: skill" in runner.invoke(cli, ["solve", f"Where is my order #{order}?", "--app", "myapp:forge"]).output
    out = runner.invoke(cli, ["stats", "--app", "myapp:forge"])
    assert out.exit_code == 0 and "solves: 2  hits: 2" in out.output
    listing = runner.invoke(cli, ["skills", "--app", "myapp:forge"])
    assert listing.exit_code == 0
    row = next(line for line in listing.output.splitlines() if line.startswith("where_order "))
    assert row.split()[1] == "2"


def test_check_passes_on_the_committed_skills(app: Path) -> None:
    out = CliRunner().invoke(cli, ["check", "--app", "myapp:forge"])
    assert out.exit_code == 0, out.output
    files = len(list((app / "skills").glob("[!_]*.py")))
    assert f"{files} of {files} skill files pass" in out.output


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        ("amount=order['total'],", "amount=order['total'] * 2,", "arguments"),  # tampered: refunds double
        ("    order = get_order(order_id=order_id)\n", "    order = get_order(order_id=order_id)\n    while True:\n        pass\n", "policy"),
        ("SKILL = {", "SKILL = {{", "not valid Python"),
    ],
)
def test_check_fails_on_a_tampered_skill(app: Path, old: str, new: str, why: str) -> None:
    path = app / "skills" / "refund_order.py"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    out = CliRunner().invoke(cli, ["check", "--app", "myapp:forge"])
    assert out.exit_code == 1
    line = next(line for line in out.output.splitlines() if "refund_order.py" in line)
    assert line.startswith("FAIL") and why in line


def test_rm_deletes_the_skill_its_unshared_runs_and_its_export(app: Path) -> None:
    skills = app / "skills"
    runs_before = {p.name for p in (skills / "runs").glob("*.json")}
    out = CliRunner().invoke(cli, ["rm", "where_order", "--yes", "--app", "myapp:forge"])
    assert out.exit_code == 0, out.output
    assert not (skills / "where_order.py").exists()
    assert "'where_order'" not in (skills / "__init__.py").read_text()
    assert len(runs_before - {p.name for p in (skills / "runs").glob("*.json")}) >= 1
    missing = CliRunner().invoke(cli, ["rm", "where_order", "--yes", "--app", "myapp:forge"])
    assert missing.exit_code != 0 and "no skill 'where_order'" in missing.output


def test_a_hand_edit_renaming_a_parameter_is_honoured(desk_db: Path, make_forge, tmp_path: Path) -> None:
    forge = make_forge()
    forge.solve("Where is my order #1002?")
    path = forge.skills_dir / "where_order.py"
    edited = path.read_text()
    for old, new in [
        ("def where_order(order_id: str)", "def where_order(order_number: str)"),
        ("get_order(order_id=order_id)", "get_order(order_id=order_number)"),
        ("{order_id}", "{order_number}"),  # the template, and the answer's f-string
        ("'name': 'order_id'", "'name': 'order_number'"),
    ]:
        assert old in edited
        edited = edited.replace(old, new)
    edited = edited.replace("Replay of the learned run", "Tell the customer where the order is")
    path.write_text(edited)
    fresh = make_forge(skills_dir=forge.skills_dir, agent=None)
    (skill,) = [s for s in fresh.skills() if s.name == "where_order"]
    assert skill.edited and skill.template.text == "Where is my order #{order_number}?"
    result = fresh.solve("Where is my order #1010?")
    assert result.source == "skill" and result.output == "Order 1010 is processing."
    assert [c.args for c in result.calls] == [{"order_id": "1010"}]  # the tool's own parameter is unchanged
    # the edit is what gets indexed, and a learn never writes over it
    assert fresh.reindex() >= 1


def test_a_forge_without_a_run_log_says_so_when_asked_for_stats(tmp_path: Path) -> None:
    from skillforge import Forge, UserError

    forge = Forge(skills_dir=tmp_path / "s", state_dir=tmp_path / "t", run_log=False)
    with pytest.raises(UserError, match="run_log=False"):
        forge.stats()
    assert not (tmp_path / "t" / "runs.sqlite3").exists()


def test_check_with_a_tools_module_uses_the_default_forge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`skillforge check --app skillforge.demo.desk` checks this repository's own skills/ (as its CI can)."""
    import subprocess

    env = {**__import__("os").environ, "SKILLFORGE_SKILLS_DIR": str(REPO / "skills"), "SKILLFORGE_STATE_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-m", "skillforge.cli", "check", "--app", "skillforge.demo.desk"],
        cwd=REPO, env=env, capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "skill files pass" in out.stdout and "FAIL" not in out.stdout


def test_opening_a_library_again_uses_the_parse_cache_and_notices_changes(tmp_path: Path, monkeypatch) -> None:
    from skillforge import Forge
    from skillforge import _library
    from skillforge.demo import desk

    skills = tmp_path / "skills"
    shutil.copytree(REPO / "skills", skills)
    first = Forge(skills_dir=skills, state_dir=tmp_path / "state", tools=desk.TOOLS)
    names = {s.name for s in first.skills()}

    def no_parsing(path, source):
        raise AssertionError(f"{path} was parsed again")

    monkeypatch.setattr(_library, "_parse_meta", no_parsing)
    again = Forge(skills_dir=skills, state_dir=tmp_path / "state", tools=desk.TOOLS)
    assert {s.name for s in again.skills()} == names  # every file came from the cache

    path = skills / "where_order.py"
    path.write_text(path.read_text().replace("Replay of the learned run", "Edited"))
    edited = Forge(skills_dir=skills, state_dir=tmp_path / "state", tools=desk.TOOLS)
    edited.skills()  # new content is never served from the cache: parsing it fails here, as that file's problem
    assert [p.reason for p in edited.problems] == [f"cannot be read (AssertionError: {path} was parsed again)"]
    monkeypatch.undo()
    shutil.rmtree(tmp_path / "state")  # derived: deleting it loses nothing
    assert {s.name for s in Forge(skills_dir=skills, state_dir=tmp_path / "state", tools=desk.TOOLS).skills()} == names


def test_close_writes_the_queued_solves_and_lets_go_of_open_files_and_the_forge_still_works(desk_db: Path, make_forge) -> None:
    import os

    def open_files(state: Path) -> int:
        return sum(1 for fd in os.listdir("/proc/self/fd") if str(state) in _link(fd))

    forge = make_forge()
    forge.solve("Where is my order #1002?")
    forge.solve("Where is my order #1010?")
    assert open_files(forge.state_dir) > 0
    forge.close()
    assert open_files(forge.state_dir) == 0  # the run log and the metadata cache are closed
    with contextlib.closing(sqlite3.connect(forge.state_dir / "runs.sqlite3")) as log:
        rows = log.execute("SELECT source FROM log ORDER BY at").fetchall()
    assert [r[0] for r in rows] == ["agent", "skill"]  # nothing queued was lost
    with forge:  # usable again (its files open when next needed), and closed at the end of the block
        assert forge.solve("Where is my order #1015?").source == "skill"
    assert open_files(forge.state_dir) == 0


def _link(fd: str) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""
