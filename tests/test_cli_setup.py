"""Which settings, skills directory and app the command line uses, and what it says when it finds nothing.

A new user's IT helpdesk: its own package and pyproject.toml in a folder of its own, skills learned
there by its own agent. The command line is then run from that folder, from a subfolder and from
somewhere else, with and without ``app`` in ``[tool.skillforge]``: each case that used to answer
with silence (an empty listing, "no skill matches", "0 of 1 skill files pass", "reindexed 0
skills") names the settings file, the skills directory and the app, and the fix.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import skillforge
from skillforge.cli import cli

REPO = Path(__file__).resolve().parent.parent

TOOLS = '''"""An IT helpdesk's tools, on skillforge's default Forge."""
import skillforge

USERS = {"alice": {"id": "u1", "locked": True}, "bob": {"id": "u2", "locked": False}}


@skillforge.tool(read=True)
def get_user(username: str) -> dict:
    return dict(USERS[username])


@skillforge.tool
def unlock_account(user_id: str) -> dict:
    return {"user_id": user_id, "unlocked": True}


def agent(task: str) -> str:
    username = task.rsplit(" ", 1)[-1]
    user = get_user(username=username)
    unlock_account(user_id=user["id"])
    return f"unlocked {username}"
'''

OWN_FORGE = '''from skillforge import Forge
from ithelpdesk.tools import get_user, unlock_account

forge = Forge(skills_dir="skills", state_dir=".skillforge", tools=[get_user, unlock_account])
'''

LEARN = """
import skillforge, ithelpdesk.tools as t
forge = skillforge.default_forge()
forge.agent = t.agent
for name in ("alice", "bob"):
    result = forge.solve("Unlock the account of " + name)
    assert result.ok, result
assert [s.name for s in forge.skills()] == ["unlock_account_skill"], forge.skills()
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLFORGE_")}
    env["PYTHONPATH"] = str(REPO)  # skillforge from this checkout; the app is NOT on the path
    return {**env, **extra}


def _pyproject(root: Path, table: str = "") -> Path:
    path = root / "pyproject.toml"
    path.write_text(f'[project]\nname = "ithelpdesk"\nversion = "0"\n\n[tool.skillforge]\n{table}\n')
    return path


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The helpdesk project, with one skill learned by its own agent (in a process of its own)."""
    root = tmp_path_factory.mktemp("learned") / "helpdesk"
    (root / "ithelpdesk").mkdir(parents=True)
    (root / "ithelpdesk" / "__init__.py").write_text("")
    (root / "ithelpdesk" / "tools.py").write_text(TOOLS)
    (root / "ithelpdesk" / "app.py").write_text(OWN_FORGE)
    (root / "docs" / "runbooks").mkdir(parents=True)
    _pyproject(root)
    subprocess.run([sys.executable, "-c", LEARN], cwd=root, env=_env(), check=True, capture_output=True)
    shutil.rmtree(root / ".skillforge")  # each test starts with a fresh state dir
    return root


@pytest.fixture
def project(learned: Path, tmp_path: Path) -> Path:
    root = tmp_path / "helpdesk"
    shutil.copytree(learned, root)
    return root


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch):
    """Run the command line in-process from ``cwd``, as a fresh process would: no app imported yet."""

    def invoke(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> Result:
        monkeypatch.chdir(cwd)
        monkeypatch.setattr(sys, "path", list(sys.path))  # the command puts the project's folder on it
        for name in [m for m in sys.modules if m.split(".")[0] == "ithelpdesk"]:
            monkeypatch.delitem(sys.modules, name)
        monkeypatch.setattr(skillforge, "_default", None)
        return CliRunner().invoke(cli, args, env=env)

    return invoke


def _says_where(text: str, project: Path, *, app: str = "none") -> None:
    assert f"settings file: {project / 'pyproject.toml'}" in text
    assert f"skills dir:    {project / 'skills'}" in text
    assert f"app:           {app}" in text


# -- the confusing cases, reproduced: no app configured ------------------------------------------------


@pytest.mark.parametrize("where", [".", "docs/runbooks"])
def test_without_an_app_every_command_names_the_settings_the_skills_dir_and_the_fix(run, project: Path, where: str) -> None:
    cwd = project / where
    fix = f'fix: set app = "ithelpdesk.tools" in [tool.skillforge] of {project / "pyproject.toml"}, or pass --app ithelpdesk.tools'

    listing = run(["skills"], cwd)  # was: only the header, exit 0
    assert listing.exit_code == 1
    assert "1 skill file in" in listing.stderr and "no tools are registered" in listing.stderr
    _says_where(listing.stderr, project, app="none (the default Forge; 0 tools registered)")
    assert fix in listing.stderr

    solved = run(["solve", "Unlock the account of alice"], cwd)  # was: "no skill matches", nothing else
    assert solved.exit_code == 1
    assert "no skill matches 'Unlock the account of alice'" in solved.stderr and fix in solved.stderr
    _says_where(solved.stderr, project)

    checked = run(["check"], cwd)  # was: "0 of 1 skill files pass" and a screen of policy violations
    assert checked.exit_code == 1
    assert "FAIL unlock_account_skill.py: tool 'get_user' is not registered with this forge" in checked.stdout
    assert "policy:" not in checked.stdout  # a file of other tools is not judged by the policy
    assert fix in checked.stderr

    reindexed = run(["reindex"], cwd)  # was: "reindexed 0 skills (N entries changed)": it emptied the index
    assert reindexed.exit_code == 1
    assert "the index is left as it is" in reindexed.stderr and fix in reindexed.stderr
    assert not (project / ".skillforge" / "chroma").exists()

    shown = run(["show", "reset_password"], cwd)
    assert shown.exit_code == 1 and "no skill 'reset_password'" in shown.stderr and fix in shown.stderr
    removed = run(["rm", "reset_password", "--yes"], cwd)
    assert removed.exit_code == 1 and fix in removed.stderr
    assert not (cwd / ".skillforge").exists() or cwd == project  # state lives beside the pyproject, never in a subfolder


@pytest.mark.parametrize("where", [".", "docs/runbooks"])
def test_app_in_pyproject_is_imported_from_the_projects_folder_wherever_the_command_runs(run, project: Path, where: str) -> None:
    _pyproject(project, 'app = "ithelpdesk.tools"')
    cwd = project / where

    listing = run(["skills"], cwd)
    assert listing.exit_code == 0, listing.output
    assert "unlock_account_skill" in listing.stdout and "Unlock the account of {username}" in listing.stdout
    assert listing.stderr == ""

    solved = run(["solve", "Unlock the account of bob"], cwd)
    assert solved.exit_code == 0, solved.output
    assert "source: skill  skill: unlock_account_skill  model requests: 0" in solved.stdout
    missed = run(["solve", "Reset the printer on floor 3"], cwd)  # a task no template takes, and no agent
    assert missed.exit_code == 1 and "no skill matches 'Reset the printer on floor 3'" in missed.stderr
    _says_where(missed.stderr, project, app="ithelpdesk.tools (from [tool.skillforge] of")
    assert "fix: skillforge skills lists the templates these skills take" in missed.stderr

    assert run(["check"], cwd).exit_code == 0
    reindexed = run(["reindex"], cwd)
    assert reindexed.exit_code == 0 and "reindexed 1 skills" in reindexed.stdout
    stats = run(["stats"], cwd)
    assert stats.exit_code == 0 and "solves: 1  hits: 1" in stats.stdout
    assert (project / ".skillforge" / "runs.sqlite3").is_file()
    assert not (project / "docs" / "runbooks" / ".skillforge").exists()


def test_app_option_overrides_the_setting_and_a_bad_setting_names_its_file(run, project: Path) -> None:
    settings = _pyproject(project, 'app = "ithelpdesk.nothing_here"')
    bad = run(["skills"], project)
    assert bad.exit_code == 1
    assert "cannot import 'ithelpdesk.nothing_here'" in bad.stderr
    assert f"(the app, from [tool.skillforge] of {settings})" in bad.stderr

    overridden = run(["skills", "--app", "ithelpdesk.tools"], project)
    assert overridden.exit_code == 0 and "unlock_account_skill" in overridden.stdout

    from_env = run(["skills"], project, env={"SKILLFORGE_APP": "ithelpdesk.tools"})  # the variable wins over the file
    assert from_env.exit_code == 0 and "unlock_account_skill" in from_env.stdout

    _pyproject(project, 'app = "ithelpdesk/tools.py"')
    malformed = run(["skills"], project)
    assert malformed.exit_code == 1 and isinstance(malformed.exception, skillforge.ConfigError)
    assert "app" in str(malformed.exception) and "MODULE:ATTRIBUTE" in str(malformed.exception)


def test_an_apps_own_forge_with_a_relative_skills_dir_run_from_a_subfolder_says_so(run, project: Path) -> None:
    _pyproject(project, 'app = "ithelpdesk.app:forge"')
    assert run(["skills"], project).exit_code == 0  # from the project's folder its relative path is right

    cwd = project / "docs" / "runbooks"
    listing = run(["skills"], cwd)
    assert listing.exit_code == 1
    assert f"the skills directory {cwd / 'skills'} does not exist" in listing.stderr
    assert "app:           ithelpdesk.app:forge (from [tool.skillforge] of" in listing.stderr
    assert f"the Forge ithelpdesk.app:forge has skills_dir='skills', relative to the working directory {cwd}" in listing.stderr
    assert not (cwd / "skills").exists() and not (cwd / ".skillforge").exists()  # looking made nothing

    not_a_forge = run(["skills", "--app", "ithelpdesk.tools:agent"], project)
    assert not_a_forge.exit_code == 2 and "ithelpdesk.tools.agent is a function, not a skillforge.Forge" in not_a_forge.output


def test_skill_files_of_other_tools_beside_usable_ones_are_a_note_and_an_empty_library_is_one_too(run, project: Path) -> None:
    _pyproject(project, 'app = "ithelpdesk.tools"')
    shutil.copy(REPO / "skills" / "where_order.py", project / "skills")  # learned on the demo desk's tools
    listing = run(["skills"], project)
    assert listing.exit_code == 0 and "unlock_account_skill" in listing.stdout
    assert "note: 1 more skill file in" in listing.stderr
    assert "get_order from skillforge.demo.desk" in listing.stderr

    (project / "skills" / "unlock_account_skill.py").unlink()
    other = run(["skills"], project)  # only another app's skills: nothing usable, and that is an error
    assert other.exit_code == 1
    assert f"the skill file in {project / 'skills'} cannot run: it needs tools" in other.stderr and "(get_order from skillforge.demo.desk)" in other.stderr
    assert "fix: importing ithelpdesk.tools registered other tools on the default Forge" in other.stderr
    assert "(--app skillforge.demo.desk)" in other.stderr

    (project / "skills" / "where_order.py").unlink()
    empty = run(["skills"], project)
    assert empty.exit_code == 0
    assert f"note: no skill files in {project / 'skills'} yet" in empty.stderr
    checked = run(["check"], project)
    assert checked.exit_code == 0 and "0 of 0 skill files pass" in checked.stdout


def test_outside_any_project_nothing_is_created_and_the_message_says_where_it_looked(run, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for args in (["skills"], ["stats"], ["check"], ["reindex"], ["show", "unlock_account_skill"]):
        out = run(args, elsewhere)
        assert out.exit_code == 1, (args, out.output)
        assert f"no pyproject.toml in {elsewhere} or any folder above it" in out.stderr, args
        assert f"{elsewhere / 'skills'} (from the default, relative to the working directory, does not exist)" in out.stderr
        assert "fix: run from your project's folder" in out.stderr
    assert list(elsewhere.iterdir()) == []  # no state dir, no run log, no index made by asking


def test_the_console_script_from_a_subfolder_and_from_elsewhere(project: Path, tmp_path: Path) -> None:
    _pyproject(project, 'app = "ithelpdesk.tools"')
    sub = subprocess.run(
        [sys.executable, "-m", "skillforge.cli", "skills"], cwd=project / "docs", env=_env(), capture_output=True, text=True
    )
    assert sub.returncode == 0, sub.stderr
    assert "unlock_account_skill" in sub.stdout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    far = subprocess.run(
        [sys.executable, "-m", "skillforge.cli", "skills", "--app", "ithelpdesk.tools"],
        cwd=elsewhere, env=_env(), capture_output=True, text=True,
    )
    assert far.returncode == 2
    assert f"cannot import 'ithelpdesk.tools': No module named 'ithelpdesk' (looked in {elsewhere}" in far.stderr
    pointed = subprocess.run(
        [sys.executable, "-m", "skillforge.cli", "skills"], cwd=elsewhere, capture_output=True, text=True,
        env=_env(SKILLFORGE_SKILLS_DIR=str(project / "skills"), SKILLFORGE_STATE_DIR=str(project / ".skillforge"),
                 SKILLFORGE_APP="ithelpdesk.tools", PYTHONPATH=f"{REPO}{os.pathsep}{project}"),
    )
    assert pointed.returncode == 0, pointed.stderr
    assert "unlock_account_skill" in pointed.stdout
    assert list(elsewhere.iterdir()) == []
