"""Configuration from [tool.skillforge] and SKILLFORGE_* variables."""

from __future__ import annotations

from pathlib import Path

import pytest

import skillforge
from skillforge import ConfigError, OpenAIAgent, load_settings


def _project(tmp_path: Path, table: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[project]\nname = 'x'\n\n[tool.skillforge]\n{table}\n")
    sub = tmp_path / "src" / "deep"
    sub.mkdir(parents=True)
    return sub


def test_pyproject_table_is_read_from_the_nearest_file_and_paths_are_relative_to_it(tmp_path: Path) -> None:
    cwd = _project(tmp_path, 'skills_dir = "my_skills"\nagent = "openai"\nmodel = "local-model"')
    s = load_settings(cwd, environ={})
    assert s.skills_dir == str(tmp_path / "my_skills")
    assert s.agent == "openai" and s.model == "local-model" and s.learn is True


def test_environment_wins_over_the_file(tmp_path: Path) -> None:
    cwd = _project(tmp_path, 'model = "from-file"\nlearn = true')
    s = load_settings(cwd, environ={"SKILLFORGE_MODEL": "from-env", "SKILLFORGE_LEARN": "false"})
    assert s.model == "from-env" and s.learn is False


@pytest.mark.parametrize(
    ("table", "env", "message"),
    [
        ('skils_dir = "typo"', {}, "skils_dir"),
        ('agent = "claude"', {}, "agent"),
        ("", {"SKILLFORGE_LEARN": "perhaps"}, "learn"),
    ],
)
def test_bad_settings_are_errors_that_name_the_key(tmp_path: Path, table: str, env: dict, message: str) -> None:
    cwd = _project(tmp_path, table)
    with pytest.raises(ConfigError, match=message):
        load_settings(cwd, environ=env)


def test_broken_pyproject_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.skillforge\n")
    with pytest.raises(ConfigError, match="pyproject.toml"):
        load_settings(tmp_path, environ={})


def test_default_forge_uses_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(tmp_path, 'agent = "openai"\nmodel = "m-1"\nread_again = false')
    monkeypatch.chdir(tmp_path)
    forge = skillforge.default_forge()
    assert forge is skillforge.default_forge()
    assert isinstance(forge.agent, OpenAIAgent) and forge.agent.model == "m-1"
    assert forge.skills_dir == tmp_path / "skills"
    assert forge.read_again is False
    assert load_settings(tmp_path, environ={"SKILLFORGE_READ_AGAIN": "true"}).read_again is True


def test_app_is_read_from_the_file_and_the_environment_wins(tmp_path: Path) -> None:
    cwd = _project(tmp_path, 'app = "ithelp.tools:forge"')
    assert load_settings(cwd, environ={}).app == "ithelp.tools:forge"
    assert load_settings(cwd, environ={"SKILLFORGE_APP": "other.tools"}).app == "other.tools"
    assert load_settings(tmp_path / "src", environ={"SKILLFORGE_APP": ""}).app == "ithelp.tools:forge"  # empty: unset


@pytest.mark.parametrize("value", ["ithelp/tools.py", "ithelp.tools:", ":forge", "ithelp..tools", "ithelp.tools:forge:x", "1app"])
def test_an_app_that_is_not_module_or_module_colon_attribute_is_an_error_naming_the_key(tmp_path: Path, value: str) -> None:
    cwd = _project(tmp_path, f"app = {value!r}")
    with pytest.raises(ConfigError, match=r"app: .*is not MODULE or MODULE:ATTRIBUTE"):
        load_settings(cwd, environ={})


def test_the_settings_file_is_the_nearest_pyproject_at_or_above_the_folder(tmp_path: Path) -> None:
    from skillforge._config import find_settings_file

    deep = _project(tmp_path, "")
    assert find_settings_file(deep) == tmp_path / "pyproject.toml"
    assert find_settings_file(tmp_path) == tmp_path / "pyproject.toml"
    (deep / "pyproject.toml").write_text("[project]\nname = 'inner'\n")  # a nearer one wins, table or not
    assert find_settings_file(deep) == deep / "pyproject.toml"
    assert load_settings(deep, environ={}).skills_dir == str(deep / "skills")


def _files(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*") if p.is_file()}


def test_state_is_made_only_under_the_configured_state_dir_whatever_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The stray unused/library.sqlite3 once committed at the top of the repository was a Forge given a
    # relative state_dir by a test run from there. Settings are relative to their pyproject, not the cwd:
    # a Forge that learns, logs, caches and indexes from a subfolder writes under skills/ and .skillforge/ only.
    import skillforge.demo.desk as desk

    project = tmp_path / "project"
    project.mkdir()
    sub = _project(project, 'state_dir = ".state"')
    conn = desk.open_desk(tmp_path / "desk.sqlite3")
    monkeypatch.chdir(sub)
    forge = skillforge.default_forge()
    forge.tool(read=True)(desk.get_order)

    def agent(task: str) -> str:
        return desk.get_order(order_id=task.rsplit("#", 1)[-1])["status"]

    forge.agent = agent
    assert forge.solve("Status of order #1010").learned
    assert forge.solve("Status of order #1010").source == "skill"
    forge.reindex()
    forge.stats()
    forge.runlog.close()
    conn.close()
    made = _files(project)
    assert {p.parts[0] for p in made} == {"pyproject.toml", "skills", ".state"}
    assert {".state/runs.sqlite3", ".state/library.sqlite3", ".state/chroma/chroma.sqlite3"} <= {str(p) for p in made}
    assert list(sub.iterdir()) == []


def test_gitignore_keeps_state_files_out_of_the_repository() -> None:
    import shutil
    import subprocess

    repo = Path(__file__).resolve().parent.parent
    if shutil.which("git") is None or not (repo / ".git").exists():
        pytest.skip("not a git checkout")
    states = ["unused/library.sqlite3", ".skillforge/runs.sqlite3", "state/chroma/chroma.sqlite3", "state/runs.sqlite3-wal",
              "skills/.skillforge.lock"]
    ignored = subprocess.run(["git", "check-ignore", "--no-index", *states], cwd=repo, capture_output=True, text=True)
    assert ignored.stdout.split() == states
    tracked = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True, check=True).stdout.split()
    assert [f for f in tracked if ".sqlite3" in f or f.endswith(".skillforge.lock")] == []
