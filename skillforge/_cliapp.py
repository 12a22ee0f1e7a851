"""The command line's Forge, and what to say when it finds nothing.

Every command opens the same way: settings from the nearest ``pyproject.toml``
(at or above the working directory) and ``SKILLFORGE_*``; the app from
``--app``, else ``SKILLFORGE_APP``, else ``app`` in ``[tool.skillforge]``,
imported with the working directory and the pyproject's folder on
``sys.path``. When a command then sees no usable skill (no skills directory,
skill files whose tools nobody registered, a run log that is not there), it
says which settings file, skills directory and app it used, and how to fix it:
the silent empty answer is what costs a new user the most time.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from ._config import ENV_PREFIX, find_settings_file, load_settings
from ._exceptions import SkillforgeError

__all__ = ["Finding", "Setup", "diagnose", "diagnose_runlog", "open_app"]

# unusable files read to name the tools they need: enough to name the app, cheap on a big library
SURVEY_FILES = 200


@dataclass(frozen=True)
class Setup:
    """The Forge a command runs on, and where each part of it came from."""

    forge: Any  # skillforge.Forge
    cwd: Path
    settings_file: Path | None
    app: str | None
    app_from: str | None  # "--app", "SKILLFORGE_APP" or "[tool.skillforge] of <file>"

    @property
    def skills_dir(self) -> Path:
        return Path(os.path.abspath(self.forge.skills_dir))

    @property
    def own_forge(self) -> bool:
        """The app names a Forge of its own (``module:forge``), not the default one."""
        return bool(self.app and ":" in self.app)

    def context(self) -> dict[str, Any]:
        """Which settings file, skills directory and app: the head of every ``--json`` answer."""
        return {
            "app": self.app,
            "settings_file": None if self.settings_file is None else str(self.settings_file),
            "skills_dir": str(self.skills_dir),
        }

    def describe(self) -> list[str]:
        """The same, for a person: one line each."""
        if self.settings_file is not None:
            settings = str(self.settings_file)
        else:
            settings = f"none found (no pyproject.toml in {self.cwd} or any folder above it)"
        if self.own_forge:
            skills_from = f"the Forge {self.app}"
        elif os.environ.get(ENV_PREFIX + "SKILLS_DIR"):
            skills_from = f"{ENV_PREFIX}SKILLS_DIR"
        elif self.settings_file is not None:
            skills_from = f"settings in {self.settings_file.name}"
        else:
            skills_from = "the default, relative to the working directory"
        exists = "" if self.skills_dir.is_dir() else ", does not exist"
        tools = len(self.forge.registry.tools)
        registered = f"{tools} tool{'s' * (tools != 1)} registered"
        app = f"{self.app} (from {self.app_from}; {registered})" if self.app else f"none (the default Forge; {registered})"
        return [f"  settings file: {settings}", f"  skills dir:    {self.skills_dir} (from {skills_from}{exists})", f"  app:           {app}"]


def open_app(app: str | None) -> Setup:
    """Load the settings and the app, and make the Forge the commands run on."""
    import skillforge

    cwd = Path.cwd()
    settings_file = find_settings_file(cwd)
    app_from: str | None = "--app" if app else None
    if not app:
        settings = load_settings(cwd)
        app = settings.app
        if app:
            app_from = f"{ENV_PREFIX}APP" if os.environ.get(ENV_PREFIX + "APP") else f"[tool.skillforge] of {settings_file}"
    forge = skillforge.default_forge() if not app else _import_app(app, app_from or "", cwd, settings_file)
    return Setup(forge=forge, cwd=cwd, settings_file=settings_file, app=app, app_from=app_from)


def _import_app(app: str, app_from: str, cwd: Path, settings_file: Path | None) -> Any:
    import skillforge

    module_name, colon, attr = app.partition(":")

    def bad(message: str) -> click.ClickException:
        if app_from == "--app":
            return click.BadParameter(message, param_hint="--app")
        return click.ClickException(f"{message} (the app, from {app_from})")

    if not module_name or (colon and not attr):
        raise bad("use MODULE:ATTRIBUTE (e.g. myapp.tools:forge) or MODULE")
    folders = [cwd]
    if settings_file is not None:  # the project's own modules import from its folder, wherever we run
        folders += [settings_file.parent, settings_file.parent / "src"]
    for folder in reversed(folders):
        if folder.is_dir() and str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        where = ", ".join(dict.fromkeys(str(f) for f in folders if f.is_dir()))
        raise bad(
            f"cannot import {module_name!r}: {e} (looked in {where} and the installed packages; run from your "
            f"project's folder, or install it with pip install -e .)"
        ) from e
    if not attr:  # a module whose tools use @skillforge.tool: they are on the default forge now
        return skillforge.default_forge()
    forge = getattr(module, attr, None)
    if not isinstance(forge, skillforge.Forge):
        if not hasattr(module, attr):
            raise bad(f"{module_name} has no attribute {attr!r}: name the Forge that holds your tools")
        raise bad(f"{module_name}.{attr} is a {type(forge).__name__}, not a skillforge.Forge")
    return forge


@dataclass(frozen=True)
class Finding:
    """What a command found wrong or missing: the problem, the fix, and whether it must fail."""

    problem: str
    fix: str
    fatal: bool

    def message(self, setup: Setup) -> str:
        return "\n".join([self.problem, *setup.describe(), f"fix: {self.fix}"])


def diagnose(setup: Setup) -> Finding | None:
    """Why ``setup`` sees no usable skill (None when it sees some, or every file it has is broken:
    those are listed as problems). A skills directory with no skill files is a note, not an error."""
    forge = setup.forge
    skills_dir = setup.skills_dir
    if not skills_dir.is_dir():
        return Finding(f"the skills directory {skills_dir} does not exist", _fix_dir(setup), fatal=True)
    paths = forge.library.paths()
    usable = {s.name for s in forge.skills()}
    broken = {Path(p.path).name for p in forge.problems}
    idle = [p for p in paths if p.stem not in usable and p.name not in broken]
    if not paths:
        return Finding(
            f"no skill files in {skills_dir} yet",
            "skills are written when the agent solves a task (solve() with an agent configured); "
            "if they are elsewhere, " + _fix_dir(setup),
            fatal=False,
        )
    if not idle:
        return None
    needed = _needed_tools(forge, idle)
    modules = Counter(m for m, _t in needed)
    missing = ", ".join(f"{t} from {m}" for m, t in sorted(needed)[:6]) + (", ..." if len(needed) > 6 else "")
    if usable:
        return Finding(
            f"{len(idle)} more skill file{'s' * (len(idle) != 1)} in {skills_dir} need{'s' * (len(idle) == 1)} tools "
            f"this Forge does not register ({missing}); {'they are' if len(idle) != 1 else 'it is'} not run",
            _fix_app(setup, modules, partial=True),
            fatal=False,
        )
    if not forge.registry.tools:
        problem = (
            f"{len(idle)} skill file{'s' * (len(idle) != 1)} in {skills_dir}, but no tools are registered, "
            "so none can run: the module that defines your tools was not imported"
        )
    else:
        files = "the skill file" if len(idle) == 1 else f"none of the {len(idle)} skill files"
        problem = (
            f"{files} in {skills_dir} can{'not' * (len(idle) == 1)} run: "
            f"{'it needs' if len(idle) == 1 else 'they need'} tools this Forge does not register ({missing})"
        )
    return Finding(problem, _fix_app(setup, modules), fatal=True)


def diagnose_runlog(setup: Setup) -> Finding | None:
    """Why ``setup`` has no statistics: no run log in its state directory (None when there is one).
    Fatal when the skills directory is not there either: then the settings are wrong, not new."""
    path = Path(os.path.abspath(setup.forge.runlog.path))
    if path.exists():
        return None
    problem = f"no run log at {path}: nothing has been solved with this state directory"
    if not setup.skills_dir.is_dir():
        return Finding(problem + f", and the skills directory {setup.skills_dir} does not exist", _fix_dir(setup), fatal=True)
    if setup.own_forge:
        where = f"the Forge {setup.app} names its state_dir"
    elif setup.settings_file is not None:
        where = f"set state_dir in [tool.skillforge] of {setup.settings_file} or {ENV_PREFIX}STATE_DIR"
    else:
        where = f"run from your project's folder, or set {ENV_PREFIX}STATE_DIR"
    return Finding(problem + " yet", f"solve() logs each task there; if your tasks were solved with another, {where}", fatal=False)


def _needed_tools(forge: Any, paths: list[Path]) -> set[tuple[str, str]]:
    """(module, tool) pairs the files at ``paths`` import and this forge does not register."""
    from ._library import read_skill_file

    needed: set[tuple[str, str]] = set()
    for path in paths[:SURVEY_FILES]:
        try:
            skill = read_skill_file(path, forge.cache)
        except (SkillforgeError, OSError):
            continue
        needed |= {(ref.module, name) for name, ref in skill.tools.items() if name not in forge.registry.tools}
    return needed


def _fix_app(setup: Setup, modules: Counter[str], *, partial: bool = False) -> str:
    guess = modules.most_common(1)[0][0] if modules else "MODULE[:FORGE]"
    if partial:
        return (
            f"if they are this app's skills, register their tools (import {guess} from your app); skill files of "
            "another app's tools may stay, they are not run here; skillforge check names each file"
        )
    if setup.own_forge:
        return (
            f"register the tools on the Forge {setup.app} (@forge.tool, or Forge(tools=[...])), "
            f"or point --app at the Forge that has them"
        )
    if setup.app:
        registered = "no tools" if not setup.forge.registry.tools else "other tools"
        return (
            f"importing {setup.app} registered {registered} on the default Forge: name the module that defines "
            f"them (--app {guess}), or MODULE:FORGE if they are on a Forge of its own"
        )
    if setup.settings_file is not None:
        return f'set app = "{guess}" in [tool.skillforge] of {setup.settings_file}, or pass --app {guess}'
    return f"pass --app {guess} or set {ENV_PREFIX}APP={guess}, or run from your project's folder with app in its pyproject.toml"


def _fix_dir(setup: Setup) -> str:
    rel = Path(setup.forge.skills_dir)
    if setup.own_forge and not rel.is_absolute():
        return (
            f"the Forge {setup.app} has skills_dir={str(rel)!r}, relative to the working directory {setup.cwd}: "
            f"give it an absolute path (e.g. Path(__file__).parent / {str(rel)!r}), or run from the folder it is relative to"
        )
    if setup.own_forge:
        return f"the Forge {setup.app} names this skills_dir: change it there, or point --app at another Forge"
    if os.environ.get(ENV_PREFIX + "SKILLS_DIR"):
        return f"{ENV_PREFIX}SKILLS_DIR names this directory: correct it, or unset it to use the settings file's"
    if setup.settings_file is None:
        return (
            f"run from your project's folder (where its pyproject.toml is, or below it), or set {ENV_PREFIX}SKILLS_DIR "
            f"(and {ENV_PREFIX}STATE_DIR, {ENV_PREFIX}APP)"
        )
    return (
        f"set skills_dir in [tool.skillforge] of {setup.settings_file} (relative to its folder) "
        f"or {ENV_PREFIX}SKILLS_DIR"
    )
