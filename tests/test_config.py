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
    _project(tmp_path, 'agent = "openai"\nmodel = "m-1"')
    monkeypatch.chdir(tmp_path)
    forge = skillforge.default_forge()
    assert forge is skillforge.default_forge()
    assert isinstance(forge.agent, OpenAIAgent) and forge.agent.model == "m-1"
    assert forge.skills_dir == tmp_path / "skills"
