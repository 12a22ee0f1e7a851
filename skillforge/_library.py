"""The skill library: ``skills/`` is the truth, one readable file per skill.

Metadata is read back from each file with libcst (the ``SKILL = {...}``
literal), so a human edit counts. Writes are atomic (temp file + rename) under
a file lock; the runs a skill was learned from are kept beside it in
``skills/runs/<hash>.json`` so that any skill can be re-rendered and re-admitted.
"""

from __future__ import annotations

import ast
import logging
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst
from filelock import FileLock

from ._codegen import body_hash, split_header
from ._exceptions import SkillFileError
from ._template import Slot, TaskTemplate
from ._trajectory import ToolRef, Trajectory

__all__ = ["Library", "SkillFile", "read_skill_file"]

logger = logging.getLogger(__name__)

RUNS_DIR = "runs"


@dataclass(eq=False)
class SkillFile:
    """A skill file read back from disk."""

    path: Path
    name: str
    source: str
    template: TaskTemplate
    tools: dict[str, ToolRef]
    instances: tuple[tuple[str, str], ...]
    runs: tuple[str, ...]
    task: str
    recorded_hash: str | None
    content_hash: str
    meta: dict[str, Any] = field(repr=False)
    func: Any = field(default=None, repr=False)  # loaded lazily by the Forge

    @property
    def edited(self) -> bool:
        """True when the file was changed by hand since it was generated."""
        return self.recorded_hash is not None and self.recorded_hash != self.content_hash


def _literal(module: cst.Module, node: cst.BaseExpression, path: Path) -> Any:
    try:
        return ast.literal_eval(module.code_for_node(node))
    except (ValueError, SyntaxError) as e:
        raise SkillFileError(str(path), f"SKILL must be a literal dict ({e})") from e


def read_skill_file(path: Path) -> SkillFile:
    """Parse one skill file; ``SkillFileError`` says what is wrong with it."""
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SkillFileError(str(path), f"cannot read it ({e})") from e
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as e:
        raise SkillFileError(str(path), f"not valid Python (line {e.raw_line}: {e.message})") from e
    meta: Any = None
    functions: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            functions.add(stmt.name.value)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if (
                    isinstance(small, cst.Assign)
                    and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                    and small.targets[0].target.value == "SKILL"
                ):
                    meta = _literal(module, small.value, path)
    if not isinstance(meta, dict):
        raise SkillFileError(str(path), "no SKILL = {...} metadata dict at module level")
    try:
        name = meta["name"]
        slots = [Slot(s["name"], s["kind"], s["type"], s.get("transform")) for s in meta["slots"]]
        template = TaskTemplate(meta["template"], slots)
        tools = {k: ToolRef(**{**v, "params": tuple(v.get("params", ()))}) for k, v in meta["tools"].items()}
        instances = tuple((str(p), str(o)) for p, o in meta.get("instances", []))
        runs = tuple(meta.get("runs", []))
        task = str(meta.get("task", ""))
    except (KeyError, TypeError, ValueError) as e:
        raise SkillFileError(str(path), f"SKILL metadata is incomplete or invalid ({type(e).__name__}: {e})") from e
    if name not in functions:
        raise SkillFileError(str(path), f"SKILL names function {name!r}, which the file does not define")
    recorded, body = split_header(source)
    return SkillFile(
        path=path,
        name=name,
        source=source,
        template=template,
        tools=tools,
        instances=instances,
        runs=runs,
        task=task,
        recorded_hash=recorded,
        content_hash=body_hash(body),
        meta=meta,
    )


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the whole new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


class Library:
    """The ``skills/`` directory."""

    def __init__(self, skills_dir: str | os.PathLike[str]) -> None:
        self.dir = Path(skills_dir)
        self._lock: FileLock | None = None

    def lock(self) -> FileLock:
        """The library's inter-process lock (re-entrant within this process)."""
        if self._lock is None:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._lock = FileLock(str(self.dir / ".skillforge.lock"))
        return self._lock

    def paths(self) -> list[Path]:
        if not self.dir.is_dir():
            return []
        return sorted(p for p in self.dir.glob("*.py") if not p.name.startswith(("_", ".")))

    def scan(self) -> tuple[list[SkillFile], list[SkillFileError]]:
        """Every readable skill file, and the errors of the others (never raised)."""
        good: list[SkillFile] = []
        bad: list[SkillFileError] = []
        for path in self.paths():
            try:
                good.append(read_skill_file(path))
            except SkillFileError as e:
                bad.append(e)
        return good, bad

    def path_for(self, name: str) -> Path:
        return self.dir / f"{name}.py"

    def run_path(self, run_hash: str) -> Path:
        return self.dir / RUNS_DIR / f"{run_hash}.json"

    def write(self, name: str, source: str, runs: list[Trajectory]) -> Path:
        """Write a skill and its runs atomically (runs first, so a skill never lacks its proof)."""
        with self.lock():
            for traj in runs:
                rp = self.run_path(traj.hash)
                if not rp.exists():
                    atomic_write(rp, traj.model_dump_json(indent=1) + "\n")
            path = self.path_for(name)
            atomic_write(path, source)
        return path

    def load_run(self, run_hash: str) -> Trajectory:
        path = self.run_path(run_hash)
        try:
            return Trajectory.from_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise SkillFileError(str(path), f"recorded run cannot be read ({e})") from e
