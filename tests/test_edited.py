"""Hand-edited skill files: checked for consistency when read, and run, warned about or refused
when they no longer reproduce their recorded runs (``Forge(edited=...)``)."""

from __future__ import annotations

import json
import logging
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import skillforge
from skillforge import ConfigError, Forge, UserError, load_settings
from skillforge.cli import cli
from skillforge.demo import desk

FIRST = "Where is my order #1002?"  # learned from: order 1002 is processing
TASK = "Where is my order #1010?"  # processing too: the skill serves it
ANSWER = "return f\"Order {order_id} is {order['status']}.\""


def _learned(make_forge) -> Path:
    forge = make_forge()
    assert forge.solve(FIRST).learned == "where_order"
    return forge.skills_dir / "where_order.py"


def _edit(path: Path, *pairs: tuple[str, str], count: int = -1) -> None:
    text = path.read_text()
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new, count)
    path.write_text(text)


def _skill_files(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.glob("*.py") if p.name != "__init__.py")


def _app(path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A user app over ``path``'s skills directory, for the command line (``--app``)."""
    app = path.parent.parent
    (app / "edited_app.py").write_text(
        "from skillforge import Forge\nfrom skillforge.demo import desk\n"
        f"forge = Forge(skills_dir={str(path.parent)!r}, state_dir={str(app / 'app-state')!r}, tools=desk.TOOLS)\n"
    )
    monkeypatch.syspath_prepend(str(app))
    monkeypatch.delitem(sys.modules, "edited_app", raising=False)
    return "edited_app:forge"


def _problem(forge: Forge, name: str = "where_order.py") -> skillforge.SkillFileError:
    (problem,) = [p for p in forge.problems if Path(p.path).name == name]
    return problem


# -- the case: a parameter renamed by find-and-replace ----------------------------------

def test_a_parameter_renamed_by_find_and_replace_is_a_problem_not_a_type_error_and_no_duplicate(
    desk_db: Path, make_forge
) -> None:
    """Every "order_id" in the file became "username", the keyword of the tool call and the tool's
    SKILL entry included: before, no problem was listed and each solve failed with get_order()'s
    TypeError "unexpected keyword argument 'username'"."""
    path = _learned(make_forge)
    _edit(path, ("order_id", "username"))
    fresh = make_forge(skills_dir=path.parent)
    problem = _problem(fresh)
    assert not problem.warning
    assert "['params'] says (username), but get_order takes (order_id)" in problem.reason
    assert "skillforge rm where_order" in problem.reason  # the fix, named
    assert [s.name for s in fresh.skills()] == []
    result = fresh.solve(TASK)
    assert result.source == "agent" and result.handover is None  # never run: a miss, served by the agent
    assert result.output == "Order 1010 is processing." and result.error is None
    assert result.learned is None and "where_order.py" in result.not_learned and "skillforge rm where_order" in result.not_learned
    assert _skill_files(path) == ["where_order.py"]  # no where_order_2 beside the broken file


def _sig_and_body(text: str) -> str:
    """The parameter renamed in the function (as an editor's rename would), not in SKILL."""
    head, sep, body = text.partition("\ndef where_order(")
    return head + sep + body.replace("order_id", "username").replace("get_order(username=", "get_order(order_id=")


def _skill_literal(text: str) -> str:
    """The slot renamed in SKILL (its name and the template), not in the function."""
    return text.replace("'name': 'order_id'", "'name': 'username'").replace("'template': 'Where is my order #{order_id}?'",
                                                                          "'template': 'Where is my order #{username}?'")


@pytest.mark.parametrize(
    ("how", "why"),
    [
        pytest.param(_sig_and_body, "where_order() takes username where its template binds order_id", id="signature-and-body"),
        pytest.param(_skill_literal, "where_order() takes order_id where its template binds username", id="skill-literal"),
        pytest.param(lambda t: t.replace("get_order(order_id=order_id)", "get_order(number=order_id)"),
                     "calls get_order(number=...), a parameter SKILL['tools']['get_order']['params'] does not list (order_id)",
                     id="tool-keyword"),
        pytest.param(lambda t: t.replace("'params': ['order_id']", "'params': ['number']"),
                     "calls get_order(order_id=...), a parameter SKILL['tools']['get_order']['params'] does not list (number)",
                     id="tool-params"),
        pytest.param(lambda t: t.replace("'template': 'Where is my order #{order_id}?'", "'template': 'Where is my order?'"),
                     "slot 'order_id' of SKILL['template'] is not in its text 'Where is my order?'", id="slot-not-in-template"),
    ],
)
def test_a_signature_template_or_skill_literal_that_disagree_is_a_problem_with_the_fix(
    desk_db: Path, make_forge, monkeypatch: pytest.MonkeyPatch, how, why: str
) -> None:
    path = _learned(make_forge)
    path.write_text(how(path.read_text()))
    fresh = make_forge(skills_dir=path.parent)
    problem = _problem(fresh)
    assert why in problem.reason and not problem.warning
    assert "skillforge rm where_order" in problem.reason or "git" in problem.reason
    result = fresh.solve(TASK)
    assert result.source == "agent" and result.handover is None
    assert "where_order.py" in (result.not_learned or "")
    assert _skill_files(path) == ["where_order.py"]
    out = CliRunner().invoke(cli, ["check", "--app", _app(path, monkeypatch)])
    line = next(x for x in out.stdout.splitlines() if "where_order.py" in x)
    assert line.startswith("FAIL") and why in line and out.exit_code == 1


def test_a_skill_file_named_other_than_its_skill_is_a_problem(desk_db: Path, make_forge) -> None:
    """`from skills import where_order` imports skills/where_order.py; `skillforge rm` deletes by name."""
    path = _learned(make_forge)
    path.rename(path.with_name("find_order.py"))
    fresh = make_forge(skills_dir=path.parent)
    problem = _problem(fresh, "find_order.py")
    assert "SKILL names skill 'where_order'" in problem.reason and "rename the file to where_order.py" in problem.reason
    assert fresh.skills() == []


def test_a_type_error_from_the_skills_own_signature_at_run_time_is_a_problem_and_learns_no_duplicate(
    desk_db: Path, make_forge
) -> None:
    """A file whose parse came from a cache that did not check signatures (an older reader's, say):
    its function no longer takes what the template binds, and Python says so only when it is called."""
    from skillforge._library import MetaCache, content_key, read_skill_file

    path = _learned(make_forge)
    meta = read_skill_file(path).meta
    path.write_text(_sig_and_body(path.read_text()))
    state = path.parent.parent / "stale-state"
    cache = MetaCache(state / "library.sqlite3")
    cache.put(content_key(path.read_text()), meta)  # the SKILL literal is unchanged: only the check was skipped
    cache.save()
    forge = Forge(skills_dir=path.parent, state_dir=state, tools=desk.TOOLS, agent=make_forge().agent)
    assert [s.name for s in forge.skills()] == ["where_order"]
    result = forge.solve(TASK)
    assert result.handover and "TypeError" in result.handover and result.output == "Order 1010 is processing."
    assert result.learned is None and "skillforge rm where_order" in result.not_learned
    assert _skill_files(path) == ["where_order.py"]
    assert "does not take what its template binds" in _problem(forge).reason
    again = forge.solve(TASK)
    assert again.source == "agent" and again.handover is None  # no longer run


# -- edited files that no longer reproduce their runs ---------------------------------------------

def _unfaithful(make_forge) -> Path:
    """where_order, edited by hand so that it answers otherwise than its recorded run did."""
    path = _learned(make_forge)
    _edit(path, (ANSWER, "return f\"Your order {order_id} is {order['status']}.\""))
    return path


def _forge(path: Path, edited: str | None, agent=None) -> Forge:
    kwargs = {} if edited is None else {"edited": edited}
    return Forge(skills_dir=path.parent, state_dir=path.parent.parent / f"state-{edited}", tools=desk.TOOLS, agent=agent, **kwargs)


def test_by_default_an_edit_that_no_longer_reproduces_its_runs_is_run_with_a_warning_once(
    desk_db: Path, make_forge, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _unfaithful(make_forge)
    with caplog.at_level(logging.WARNING, logger="skillforge"):
        forge = _forge(path, None)
        assert forge.edited == "warn"
        result = forge.solve(TASK)
        assert result.source == "skill" and result.output == "Your order 1010 is processing."  # the edit is honoured
        problem = _problem(forge)
        assert problem.warning
        for words in ("no longer reproduces its recorded run", "the skill returns 'Your order 1002 is processing.'",
                      "it is still run", "skillforge check", "git", "skillforge rm where_order", "edited = 'refuse'"):
            assert words in problem.reason, words
        _forge(path, None).skills()  # another forge, the same file: the same problem, no second warning
    assert len([r for r in caplog.records if "where_order" in r.getMessage()]) == 1

    from skillforge import _library

    def never(*args, **kwargs):
        raise AssertionError("the runs were replayed again")

    monkeypatch.setattr(_library, "reproduces", never)
    again = _forge(path, None)  # its state dir holds the verdict, by the file's content
    assert _problem(again).warning and again.solve(TASK).source == "skill"


def test_edited_run_serves_the_edit_silently(desk_db: Path, make_forge, caplog: pytest.LogCaptureFixture) -> None:
    path = _unfaithful(make_forge)
    with caplog.at_level(logging.WARNING, logger="skillforge"):
        forge = _forge(path, "run")
        assert forge.solve(TASK).output == "Your order 1010 is processing."
    assert forge.problems == [] and not [r for r in caplog.records if "where_order" in r.getMessage()]


def test_edited_refuse_does_not_run_an_edit_that_no_longer_reproduces_its_runs(desk_db: Path, make_forge) -> None:
    path = _unfaithful(make_forge)
    forge = _forge(path, "refuse", agent=make_forge().agent)
    problem = _problem(forge)
    assert not problem.warning and "is not run (edited = 'refuse')" in problem.reason
    assert "skillforge check" in problem.reason and "skillforge rm where_order" in problem.reason
    assert forge.skills() == []
    result = forge.solve(TASK)
    assert result.source == "agent" and result.handover is None and result.output == "Order 1010 is processing."
    assert result.learned is None and "skillforge rm where_order" in result.not_learned
    assert _skill_files(path) == ["where_order.py"]


def test_edited_refuse_runs_an_edit_that_still_reproduces_and_never_replays_a_generated_file(
    desk_db: Path, make_forge, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillforge._library import read_skill_file

    path = _learned(make_forge)
    committed = Path(__file__).resolve().parent.parent / "skills"
    shutil.copyfile(committed / "change_email_customer.py", path.with_name("change_email_customer.py"))
    for run in read_skill_file(committed / "change_email_customer.py").runs:
        shutil.copyfile(committed / "runs" / f"{run}.json", path.parent / "runs" / f"{run}.json")
    _edit(path, ("Replay of the learned run", "Tells the customer where the order is"))  # edited, still faithful
    forge = _forge(path, "refuse")
    assert forge.problems == [] and forge.solve(TASK).output == "Order 1010 is processing."

    from skillforge import _library

    replayed: list[str] = []
    real = _library.reproduces

    def spy(skill, load_run):
        replayed.append(skill.name)
        return real(skill, load_run)

    monkeypatch.setattr(_library, "reproduces", spy)
    fresh = Forge(skills_dir=path.parent, state_dir=path.parent.parent / "fresh", tools=desk.TOOLS, edited="refuse")
    assert sorted(s.name for s in fresh.skills()) == ["change_email_customer", "where_order"]
    assert replayed == ["where_order"]  # the generated file is not replayed: its header says it is as written


def test_a_file_without_its_header_counts_as_edited(desk_db: Path, make_forge) -> None:
    path = _unfaithful(make_forge)
    path.write_text(path.read_text().split("\n", 2)[2])  # the two header lines, with the content hash, deleted
    forge = _forge(path, "refuse")
    assert "no longer reproduces" in _problem(forge).reason and forge.skills() == []


def test_edited_mode_is_checked_and_configurable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UserError, match="edited='sometimes'.*'run', 'warn' or 'refuse'"):
        Forge(skills_dir=tmp_path / "s", state_dir=tmp_path / "t", edited="sometimes")
    assert load_settings(tmp_path, environ={}).edited == "warn"
    assert load_settings(tmp_path, environ={"SKILLFORGE_EDITED": "refuse"}).edited == "refuse"
    (tmp_path / "pyproject.toml").write_text("[tool.skillforge]\nedited = 'sometimes'\n")
    with pytest.raises(ConfigError, match="edited"):
        load_settings(tmp_path, environ={})
    (tmp_path / "pyproject.toml").write_text("[tool.skillforge]\nedited = 'refuse'\n")
    monkeypatch.chdir(tmp_path)
    assert skillforge.default_forge().edited == "refuse"


def test_skills_lists_the_problems_and_warnings_with_their_fixes(
    desk_db: Path, make_forge, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _unfaithful(make_forge)
    broken = path.with_name("find_order.py")
    shutil.copyfile(path, broken)
    out = CliRunner().invoke(cli, ["skills", "--app", _app(path, monkeypatch)])
    assert out.exit_code == 0, out.output
    assert "where_order" in out.stdout  # still run: listed among the skills
    lines = out.stderr.splitlines()
    assert any(x.startswith("warning: ") and "where_order.py" in x and "it is still run" in x for x in lines)
    assert any(x.startswith("not run: ") and "find_order.py" in x and "rename the file to where_order.py" in x for x in lines)
    listed = json.loads(CliRunner().invoke(cli, ["skills", "--json", "--app", _app(path, monkeypatch)]).stdout)
    assert {Path(p["file"]).name: p["warning"] for p in listed["problems"]} == {"where_order.py": True, "find_order.py": False}
    checked = CliRunner().invoke(cli, ["check", "--app", _app(path, monkeypatch)])  # check reads files as solve() does
    assert checked.exit_code == 1
    assert any(x.startswith("FAIL find_order.py") and "rename the file" in x for x in checked.stdout.splitlines()), checked.stdout
