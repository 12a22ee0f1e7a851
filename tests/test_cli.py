"""The skillforge command line, through click's runner (in-process) and as a real subprocess."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from skillforge.cli import cli

REPO = Path(__file__).resolve().parent.parent


def test_demo_serves_most_tickets_from_skills_with_no_model_requests(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["demo", "--dir", str(tmp_path / "demo"), "--stand-in"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "stand-in (rule-based, offline)" in out
    rows = [line for line in out.splitlines() if line[:3].strip().isdigit()]
    assert len(rows) == 60
    skill_rows = [r for r in rows if r.split()[1] == "skill"]
    assert len(skill_rows) >= 34  # most tickets (57%), once each circumstance has been seen
    assert all(r.split()[3] == "0" for r in skill_rows)  # 0 model requests on every skill hit
    assert "FAILED" not in out
    assert "skills written: " in out and "def refund_order(order_id: str" in out
    # a variant learned from a handover: the skill started, the agent finished, a new skill was written
    assert any(r.split()[1] == "skill+agent" and ("->" in r or "(widened)" in r) for r in rows)


def test_solve_skills_show_and_reindex_against_an_app(tmp_path: Path, monkeypatch, desk_db: Path) -> None:
    shutil.copytree(REPO / "skills", tmp_path / "skills")
    (tmp_path / "myapp.py").write_text(
        "from skillforge import Forge\nfrom skillforge.demo import desk\n"
        f"desk.open_desk({str(desk_db)!r})\n"
        f"forge = Forge(skills_dir={str(tmp_path / 'skills')!r}, state_dir={str(tmp_path / 'state')!r}, tools=desk.TOOLS)\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "myapp", raising=False)
    runner = CliRunner()
    listing = runner.invoke(cli, ["skills", "--app", "myapp:forge"])
    assert listing.exit_code == 0 and "refund_order" in listing.output and "Refund order #{order_id}" in listing.output
    shown = runner.invoke(cli, ["show", "where_order", "--app", "myapp:forge"])
    assert shown.exit_code == 0 and "def where_order(order_id: str):" in shown.output
    missing = runner.invoke(cli, ["show", "nope", "--app", "myapp:forge"])
    assert missing.exit_code != 0 and "no skill 'nope'" in missing.output
    solved = runner.invoke(cli, ["solve", "Where is my order #1010?", "--app", "myapp:forge"])
    assert solved.exit_code == 0 and "source: skill" in solved.output and "model requests: 0" in solved.output
    reindexed = runner.invoke(cli, ["reindex", "--app", "myapp:forge"])
    assert reindexed.exit_code == 0 and f"reindexed {len(list((tmp_path / 'skills').glob('[!_]*.py')))} skills" in reindexed.output
    bad = runner.invoke(cli, ["skills", "--app", "myapp:"])
    assert bad.exit_code == 2 and "MODULE:ATTRIBUTE" in bad.output
    missing = runner.invoke(cli, ["skills", "--app", "no_such_module_here"])
    assert missing.exit_code == 2 and "cannot import 'no_such_module_here'" in missing.output


def test_console_script_reports_errors_with_the_fix_and_no_traceback(tmp_path: Path) -> None:
    env = {
        "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO),
        "SKILLFORGE_SKILLS_DIR": str(tmp_path / "s"), "SKILLFORGE_STATE_DIR": str(tmp_path / "t"),
    }
    out = subprocess.run(
        [sys.executable, "-m", "skillforge.cli", "solve", "Refund order #1"], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert out.returncode == 1
    assert out.stderr.startswith("Error: no skill matches 'Refund order #1' and no agent is configured") and "Traceback" not in out.stderr
    assert f"the skills directory {tmp_path / 's'} does not exist" in out.stderr
    assert "fix: SKILLFORGE_SKILLS_DIR names this directory: correct it" in out.stderr
    broken = subprocess.run(  # a SkillforgeError from the settings: one line, exit 1
        [sys.executable, "-m", "skillforge.cli", "skills"], capture_output=True, text=True, cwd=tmp_path,
        env={**env, "SKILLFORGE_APP": "not a module"},
    )
    assert broken.returncode == 1 and broken.stderr.startswith("error: invalid skillforge settings (app: ")
    assert "Traceback" not in broken.stderr


def test_demo_real_without_an_api_key_fails_before_anything_is_made(tmp_path: Path, monkeypatch) -> None:
    import pytest

    from skillforge import ConfigError
    from skillforge.demo.run import run_demo

    monkeypatch.delenv("OPENAI_API_KEY")
    kept = tmp_path / "demo" / "skills" / "refund_order.py"  # a previous run's skills: not emptied for nothing
    kept.parent.mkdir(parents=True)
    kept.write_text("# from an earlier run\n")
    result = CliRunner().invoke(cli, ["demo", "--real", "--dir", str(tmp_path / "demo")])
    assert result.exit_code == 1
    assert "a real model needs OPENAI_API_KEY" in result.stderr and "--stand-in" in result.stderr
    assert "tickets:" not in result.output and kept.read_text() == "# from an earlier run\n"
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        next(run_demo(tmp_path / "api", real_model=True))
    assert not (tmp_path / "api").exists()


def test_demo_where_every_ticket_fails_does_not_look_like_success(tmp_path: Path) -> None:
    # the key is set, but the endpoint (the test environment's closed loopback port) refuses every request
    result = CliRunner().invoke(cli, ["demo", "--real", "-n", "2", "--dir", str(tmp_path / "demo")])
    assert result.exit_code == 1
    assert result.stdout.count("FAILED") == 3  # two tickets, and the summary
    assert "tickets: 2  served by skills: 0" in result.stdout and "FAILED: 2" in result.stdout
    assert "error: every ticket failed; the first: AgentError" in result.stderr
