"""Runs held as evidence: rejected only for a number their answer says as text (see ``_numbers``).

Such a run is no skill, but it is evidence: with runs of the same program in other worlds that say
the number in the same place, it is learned (``Learning._learn_held``). The runs are kept under
the state directory, one file per run in a folder per program (``held/<program>/<when>-<run hash>.json``),
so they outlive the process as skills do; deleting them loses evidence, never a skill or
correctness. At most ``MAX_PER_PROGRAM`` runs per program and ``MAX_HELD`` in all are kept (the
oldest go first). The forge reads and writes them under the library's lock.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from pathlib import Path

from ._library import atomic_write
from ._trajectory import Trajectory

__all__ = ["MAX_HELD", "MAX_PER_PROGRAM", "HeldRuns"]

logger = logging.getLogger(__name__)

MAX_HELD = 256  # runs kept in all
MAX_PER_PROGRAM = 32  # runs kept per program and numbers said (the newest): its phrasings' evidence


class HeldRuns:
    """The held runs under ``path``, by program key (what ``Learning._program_key`` says of a run).

    Example:
        >>> held = HeldRuns(Path(".skillforge") / "held")  # doctest: +SKIP
        >>> held.add("key", run); [r.hash for r in held.runs("key")] == [run.hash]  # doctest: +SKIP
        True
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def _folder(self, key: str) -> Path:
        return self.path / hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]

    def runs(self, key: str) -> list[Trajectory]:
        """The runs held for ``key``, oldest first (a file that cannot be read is skipped and removed)."""
        out: list[Trajectory] = []
        for path in sorted(self._files(self._folder(key)), key=lambda p: p.name):  # named by when they were held
            try:
                out.append(Trajectory.from_json(path.read_text(encoding="utf-8")))
            except (OSError, ValueError) as e:
                logger.info("held run %s cannot be read (%s); it is dropped", path, e)
                _unlink(path)
        return out

    def add(self, key: str, run: Trajectory) -> None:
        """Hold ``run`` under ``key`` (again: it counts as the newest), then keep within the bounds."""
        folder = self._folder(key)
        for old in self._files(folder):
            if old.name.endswith(f"-{run.hash}.json"):
                _unlink(old)
        atomic_write(folder / f"{time.time_ns():020d}-{run.hash}.json", run.model_dump_json(indent=1) + "\n")
        self._trim(self._files(folder), MAX_PER_PROGRAM)
        self._trim([p for sub in self._folders() for p in self._files(sub)], MAX_HELD)

    def discard(self, key: str, hashes: set[str]) -> None:
        """Drop the runs ``hashes`` held for ``key`` (learned now: their skill keeps them)."""
        folder = self._folder(key)
        for path in self._files(folder):
            if path.name[:-5].rsplit("-", 1)[-1] in hashes:
                _unlink(path)
        try:
            folder.rmdir()
        except OSError:
            pass  # runs of the program are still held, or there was no folder

    def count(self) -> int:
        """How many runs are held in all."""
        return sum(len(self._files(sub)) for sub in self._folders())

    def _folders(self) -> list[Path]:
        try:
            return [Path(e.path) for e in os.scandir(self.path) if e.is_dir()]
        except (FileNotFoundError, NotADirectoryError):
            return []

    @staticmethod
    def _files(folder: Path) -> list[Path]:
        try:
            return [Path(e.path) for e in os.scandir(folder) if e.name.endswith(".json") and not e.name.startswith(".")]
        except (FileNotFoundError, NotADirectoryError):
            return []

    @staticmethod
    def _trim(files: list[Path], keep: int) -> None:
        if len(files) <= keep:
            return
        for p in sorted(files, key=lambda p: p.name)[: len(files) - keep]:  # the oldest held first
            _unlink(p)
            try:
                p.parent.rmdir()  # the program's last held run: its folder goes too
            except OSError:
                pass


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
