"""``--json`` on ``skills``, ``stats`` and ``check``: one JSON object on stdout, keys sorted, the exit
status as without it; failures too print valid JSON (and exit non-zero)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import skillforge
from skillforge.cli import cli

REPO = Path(__file__).resolve().parent.parent
HEAD = {"app", "settings_file", "skills_dir"}


@pytest.fixture
def desk_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, desk_db: Path) -> Path:
    """The repository's skills with the demo desk's tools, as ``--app deskapp:forge`` (no pyproject)."""
    shutil.copytree(REPO / "skills", tmp_path / "skills")
    (tmp_path / "deskapp.py").write_text(
        "from skillforge import Forge\nfrom skillforge.demo import desk\n"
        f"desk.open_desk({str(desk_db)!r})\n"
        f"forge = Forge(skills_dir={str(tmp_path / 'skills')!r}, state_dir={str(tmp_path / 'state')!r}, tools=desk.TOOLS)\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    return tmp_path


def _run(args: list[str]) -> Result:
    sys.modules.pop("deskapp", None)  # a fresh import per command, as in a process of its own
    skillforge._default = None
    return CliRunner().invoke(cli, [*args, "--app", "deskapp:forge"])


def _json(result: Result) -> dict:
    answer = json.loads(result.stdout)  # the whole of stdout is one object
    assert isinstance(answer, dict)
    assert result.stdout == json.dumps(answer, indent=2, sort_keys=True, ensure_ascii=False) + "\n"  # sorted, stable
    return answer


def test_skills_json_lists_each_skill_with_its_template_hits_and_file(desk_app: Path) -> None:
    names = sorted(p.stem for p in (desk_app / "skills").glob("[!_]*.py"))
    first = _run(["skills", "--json"])
    assert first.exit_code == 0, first.output
    answer = _json(first)
    assert set(answer) == HEAD | {"skills", "problems", "hint"}
    assert answer["app"] == "deskapp:forge" and answer["settings_file"] is None
    assert answer["skills_dir"] == str(desk_app / "skills")
    assert [s["name"] for s in answer["skills"]] == names
    where = next(s for s in answer["skills"] if s["name"] == "where_order")
    assert where == {
        "name": "where_order", "template": "Where is my order #{order_id}?", "phrasings": ["Where is my order #{order_id}?"],
        "hits": 0, "edited": False, "file": str(desk_app / "skills" / "where_order.py"),
    }
    assert answer["problems"] == [] and answer["hint"] is None
    assert _run(["skills", "--json"]).stdout == first.stdout  # the same library prints the same text

    assert _run(["solve", "Where is my order #1010?"]).exit_code == 0
    after = _json(_run(["skills", "--json"]))
    assert next(s["hits"] for s in after["skills"] if s["name"] == "where_order") == 1

    (desk_app / "skills" / "broken.py").write_text("SKILL = {'name': 'broken'}\n")
    broken = _json(_run(["skills", "--json"]))
    assert [p["file"] for p in broken["problems"]] == [str(desk_app / "skills" / "broken.py")]
    assert broken["problems"][0]["reason"]


def test_stats_json_before_and_after_a_solve(desk_app: Path) -> None:
    empty = _run(["stats", "--json"])
    assert empty.exit_code == 0, empty.output  # a library nothing was solved with yet: zeros, and why
    answer = _json(empty)
    assert set(answer) == HEAD | {"overall", "skills", "run_log", "hint"}
    assert answer["overall"]["solves"] == 0 and answer["skills"] == []
    assert answer["run_log"] == str(desk_app / "state" / "runs.sqlite3")
    assert answer["hint"].startswith(f"no run log at {desk_app / 'state' / 'runs.sqlite3'}")
    assert not (desk_app / "state" / "runs.sqlite3").exists()  # asking made no log

    assert _run(["solve", "Where is my order #1010?"]).exit_code == 0
    assert _run(["solve", "Where is my order #1011?"]).exit_code == 0
    answer = _json(_run(["stats", "--json"]))
    overall = answer["overall"]
    assert (overall["solves"], overall["hits"], overall["agent"], overall["failed"], overall["llm_calls"]) == (2, 2, 0, 0, 0)
    assert "name" not in overall and answer["hint"] is None
    (per,) = answer["skills"]
    assert per["name"] == "where_order" and per["hits"] == 2 and per["median_hit_ms"] > 0


def test_check_json_passes_then_fails_on_a_tampered_file_with_valid_json_and_exit_1(desk_app: Path) -> None:
    ok = _run(["check", "--json"])
    assert ok.exit_code == 0, ok.output
    answer = _json(ok)
    assert set(answer) == HEAD | {"pass", "files", "skill_files", "other_files", "hint"}
    skill_count = len(list((desk_app / "skills").glob("[!_]*.py")))
    assert answer["pass"] is True and answer["hint"] is None
    assert answer["skill_files"] == {"total": skill_count, "passed": skill_count}
    assert answer["other_files"] == {"total": 1, "passed": 1}
    assert all(f["ok"] and f["problems"] == [] for f in answer["files"])
    where = next(f for f in answer["files"] if f["file"] == "where_order.py")
    assert where == {"file": "where_order.py", "kind": "skill", "ok": True, "problems": [], "runs": 5, "edited": False}

    path = desk_app / "skills" / "where_order.py"
    path.write_text(path.read_text().replace("get_order(order_id=order_id)", "get_order(order_id='1010')"))
    (desk_app / "skills" / "_helpers.py").write_text("x = 1\n")
    bad = _run(["check", "--json"])
    assert bad.exit_code == 1
    answer = _json(bad)
    assert answer["pass"] is False
    assert answer["skill_files"] == {"total": skill_count, "passed": skill_count - 1}
    assert answer["other_files"] == {"total": 2, "passed": 1}
    failed = {f["file"]: f for f in answer["files"] if not f["ok"]}
    assert set(failed) == {"where_order.py", "_helpers.py"}
    assert failed["where_order.py"]["edited"] is True
    assert any(p.startswith("run ") for p in failed["where_order.py"]["problems"])
    assert "not a skill file" in failed["_helpers.py"]["problems"][0]
    text = _run(["check"])  # the same verdict without --json
    assert text.exit_code == 1 and "FAIL where_order.py: run " in text.stdout and f"{skill_count - 1} of {skill_count}" in text.stdout


def test_json_when_nothing_is_found_is_still_one_object_with_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(skillforge, "_default", None)
    for command in ("skills", "check", "stats"):
        out = CliRunner().invoke(cli, [command, "--json"])
        assert out.exit_code == 1, (command, out.output)
        answer = json.loads(out.stdout)
        assert answer["skills_dir"] == str(tmp_path / "skills") and answer["settings_file"] is None
        assert answer["app"] is None
        assert "does not exist" in answer["hint"] and "fix: run from your project's folder" in answer["hint"]
        assert answer.get("pass", False) is False
        assert "fix:" in out.stderr  # and said on stderr, for a person reading the CI log
