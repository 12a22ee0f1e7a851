"""Reading ``skills/`` into a Forge: what is there, what can run here, and why the rest cannot. A mixin.

A file is read (and checked against itself) by the library, then judged against this forge: its
tools must be registered and as learned, it must pass the sandbox policy with them, and a hand
edit must still reproduce its runs unless ``edited`` says otherwise. What passes goes into the hot
template index; what does not is a problem (``forge.problems``) that says how to fix it, never an
exception. Other processes' and people's writes are taken in on the next look (one ``stat``).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
from typing import TYPE_CHECKING, Any

from ._exceptions import PolicyError, SkillFileError
from ._index import HotIndex
from ._library import SkillFile, edited_problem, read_skill_file, undo_hint
from ._policy import POLICY_VERSION, Violation, check_policy

if TYPE_CHECKING:
    from pathlib import Path

    from ._index import SemanticIndex
    from ._library import Library, MetaCache
    from ._tools import ToolRegistry

__all__ = ["LOCAL_TOOLS", "PRELOAD_FILES", "Loading"]

logger = logging.getLogger(__name__)

# Skills that never leave the process (importable_skills=False) import their tools from this
# virtual module, by registry name: their tools may live in __main__ or inside functions.
LOCAL_TOOLS = "skillforge.local_tools"

# a scan that reads more files than this reads the metadata cache in one query first
PRELOAD_FILES = 64


class Loading:
    """The library half of a ``Forge``: the hot index of the skills that can run here, and the problems of the rest."""

    library: Library
    cache: MetaCache
    semantic: SemanticIndex
    registry: ToolRegistry
    importable_skills: bool
    edited: str
    _hot: HotIndex | None
    _loaded: bool
    _lock: threading.RLock
    _problems: list[SkillFileError]
    _seen: dict[Path, tuple[int, int]]
    _dir_mtime: int | None
    _synced: bool
    _tools_keys: dict[tuple[Any, ...], str]

    def _index(self) -> HotIndex:
        hot = self._hot
        if hot is not None and self._loaded:  # the hot path: no lock
            return hot
        with self._lock:  # first use, or a reload under way in another thread: wait for it
            if self._hot is None or not self._loaded:
                self.reload()
            return self._hot  # type: ignore[return-value]

    def reload(self) -> None:
        """Read ``skills/`` again, all of it (after a person edited files in place)."""
        with self._lock:
            self._loaded = False
            self._hot = HotIndex()
            self._problems = []
            self._seen = {}
            self._dir_mtime = None
            self._sync_disk()
            self._loaded = True

    def _sync_disk(self) -> None:
        """Take in what other processes (or people) wrote to ``skills/`` since the last look.

        Cheap when nothing changed: one ``stat`` of the directory. Skillforge writes by
        rename, which always changes the directory, so its own writes are never missed.
        """
        hot = self._hot if self._hot is not None else HotIndex()
        self._hot = hot
        try:
            mtime = self.library.dir.stat().st_mtime_ns
        except FileNotFoundError:
            return
        if mtime == self._dir_mtime:
            return
        current: dict[Path, tuple[int, int]] = {}
        for path in self.library.paths():
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            current[path] = (st.st_mtime_ns, st.st_size)
        for path in set(self._seen) - set(current):
            hot.remove(path.stem)
            self._problems = [p for p in self._problems if p.path != str(path)]
        changed = sorted((path, sig) for path, sig in current.items() if self._seen.get(path) != sig)
        with self.cache.preloaded() if len(changed) > PRELOAD_FILES else contextlib.nullcontext():
            self._take_in(hot, changed)
        self._seen = current
        self._dir_mtime = mtime  # only now: a scan that did not finish is done again at the next look
        self.cache.save()

    def _take_in(self, hot: HotIndex, changed: list[tuple[Path, tuple[int, int]]]) -> None:
        """Read and index each changed file; one that cannot be read is a problem, never an exception."""
        for path, _sig in changed:
            hot.remove(path.stem)
            self._problems = [p for p in self._problems if p.path != str(path)]
            try:
                skill = self.library.read(path, self.cache)
            except SkillFileError as e:
                logger.warning("skipping skill file %s: %s (it will not be run)", e.path, e.reason)
                self._problems.append(e)
                continue
            except Exception as e:  # a reader's bug must cost one file, never the library
                logger.warning("skipping skill file %s: %s: %s (it will not be run)", path, type(e).__name__, e)
                self._problems.append(SkillFileError(str(path), f"cannot be read ({type(e).__name__}: {e})"))
                continue
            self._consider(skill)

    def _consider(self, skill: SkillFile) -> None:
        """Index ``skill`` if it can run here, else record why not (never raises: one file, one problem)."""
        try:
            why, changed = self._unusable(skill)
            violations = [] if why else self._cached_policy(skill)
            edited = None if why or violations else edited_problem(skill, self.edited, self.library.load_run, self.cache)
        except Exception as e:
            logger.warning("skipping skill file %s: %s: %s", skill.path, type(e).__name__, e)
            self._problems.append(SkillFileError(str(skill.path), f"cannot be checked ({type(e).__name__}: {e})"))
            return
        if why and changed:  # a tool the skill calls changed under it: say so loudly
            logger.warning("skill %s is not run: %s", skill.name, why)
            self._problems.append(SkillFileError(str(skill.path), why))
            return
        if why:  # a skill of another app's tools: not ours to run
            logger.info("skill %s is not usable here: %s", skill.name, why)
            return
        if violations:
            problem = PolicyError(str(skill.path), [(v.line, v.rule, v.detail) for v in violations])
            logger.warning("skipping skill file %s: %s", skill.path, problem.reason)
            self._problems.append(problem)
            return
        if edited is not None:  # logged where it is decided
            self._problems.append(edited)
            if not edited.warning:
                return
        self._hot.add(skill)  # type: ignore[union-attr]
        if self._synced:
            try:
                self.semantic.upsert(skill)
            except Exception as e:
                logger.warning("could not add %s to the semantic index (%s); `skillforge reindex` repairs it", skill.name, e)

    @property
    def problems(self) -> list[SkillFileError]:
        """Skill files that are not run, each with what is wrong and how to fix it; and those run with a
        warning (``problem.warning``: hand edits that no longer reproduce their runs, ``edited="warn"``)."""
        self._index()
        return list(self._problems)

    def _cached_policy(self, skill: SkillFile) -> list[Violation]:
        """The policy's verdict on a file, remembered by its content and this forge's tools."""
        tools = tuple(sorted((t.name, t.module, t.qualname, t.is_method) for t in self.registry.tools.values()))
        tools_key = self._tools_keys.get(tools)
        if tools_key is None:
            tools_key = self._tools_keys[tools] = hashlib.sha256(
                repr(list(tools)).encode() + f" policy {POLICY_VERSION}".encode()  # a verdict an older policy gave is not trusted
            ).hexdigest()[:16]
        content_key = hashlib.sha256(skill.source.encode("utf-8")).hexdigest()
        cached = self.cache.get_policy(content_key, tools_key)
        if cached is not None:
            return [Violation(line, rule, detail) for line, rule, detail in cached]
        violations = self.policy_violations(skill.source, skill.name, skill.instances)
        self.cache.put_policy(content_key, tools_key, [[v.line, v.rule, v.detail] for v in violations])
        return violations

    def policy_violations(self, source: str, name: str, instances: tuple[tuple[str, str], ...] = ()) -> list[Violation]:
        """The sandbox policy's verdict on a skill's source, given this forge's tools."""
        tools: dict[str, set[str]] = {}
        methods: dict[str, set[str]] = {}
        owners = dict((o, p) for p, o in instances)
        for tool in self.registry.tools.values():
            if tool.is_method:
                param = owners.get(tool.owner or "")
                if param:
                    methods.setdefault(param, set()).add(tool.qualname.rsplit(".", 1)[-1])
            else:
                tools.setdefault(tool.module, set()).add(tool.qualname)
                if not self.importable_skills:
                    tools.setdefault(LOCAL_TOOLS, set()).add(tool.name)
        return check_policy(source, name, tools, methods)

    def _unusable(self, skill: SkillFile) -> tuple[str | None, bool]:
        """Why ``skill`` cannot run with this forge's tools, and whether a tool changed under it."""
        for name, ref in skill.tools.items():
            tool = self.registry.tools.get(name)
            if tool is None:
                return f"tool {name!r} is not registered with this forge", False
            if ref.module == LOCAL_TOOLS and not self.importable_skills:
                pass  # an in-process skill names its tools by registry name
            elif (tool.module, tool.qualname) != (ref.module, ref.qualname):
                return (
                    f"tool {name!r} is {tool.module}.{tool.qualname} now, the skill imports {ref.module}.{ref.qualname}; "
                    f"delete {skill.path} to re-learn it, or edit its import",
                    True,
                )
            if ref.fingerprint and tool.schema.fingerprint != ref.fingerprint:
                now = tool.schema.param_names
                if ref.params and tuple(ref.params) != tuple(now):
                    what = f"its parameters were ({', '.join(ref.params)}) and are ({', '.join(now)}) now"
                else:
                    what = "its parameter types or defaults changed"
                return (
                    f"tool {name!r} changed incompatibly since the skill was learned: {what}; "
                    f"delete {skill.path} to re-learn it, or edit the calls and the fingerprint in its SKILL",
                    True,
                )
            if ref.post_check != (tool.post_guard is not None):
                state = "declares" if tool.post_guard is not None else "no longer declares"
                return f"tool {name!r} {state} a post-check now; delete {skill.path} to re-learn it", True
            if ref.check != (tool.guard is not None):
                state = "declares" if tool.guard is not None else "no longer declares"
                return f"tool {name!r} {state} a pre-check (guard=Check) now; delete {skill.path} to re-learn it", True
            if ref.params and tuple(ref.params) != tuple(tool.schema.param_names):  # the tool is as learned: the file was edited
                return (
                    f"SKILL['tools'][{name!r}]['params'] says ({', '.join(ref.params)}), but {name} takes "
                    f"({', '.join(tool.schema.param_names)}): call it by its own parameter names and list them there"
                    f"{undo_hint(skill.path)}",
                    True,
                )
        return None, False

    def skills(self) -> list[SkillFile]:
        """The usable skills, by name."""
        return sorted(self._index().by_name.values(), key=lambda s: s.name)

    def remove(self, name: str) -> int:
        """Delete skill ``name``: its file, and the run files no other skill names. Returns runs removed.

        Only files inside ``skills/`` are deleted: ``name`` must be a skill name, and a run
        is a hash that names a file in ``skills/runs/`` (a file whose SKILL cannot be read
        is deleted alone: its run references are not trusted).
        """
        with self.library.lock():
            self._sync_disk()
            path = self.library.path_for(name)
            try:
                doomed = set(read_skill_file(path, self.cache).runs) if path.is_file() else set()
            except SkillFileError as e:
                logger.info("removing %s, whose runs are not known (%s)", path, e.reason)
                doomed = set()
            path.unlink(missing_ok=True)
            for other in self.library.paths():
                try:
                    kept = read_skill_file(other, self.cache)
                    doomed -= set(kept.runs) | set(kept.meta.get("evidence", ()))  # runs its guards rest on too
                except SkillFileError:
                    continue
            for run_hash in doomed:
                self.library.run_path(run_hash).unlink(missing_ok=True)
            if self.importable_skills:
                self.library.write_package_init()
            self._sync_disk()
        try:
            self.semantic.remove(name)
        except Exception as e:  # derived: a later reindex repairs it
            logger.info("could not drop %s from the semantic index (%s)", name, e)
        return len(doomed)

    def reindex(self) -> int:
        """Rebuild the derived Chroma index from ``skills/``; returns entries changed."""
        with self._lock:
            self.reload()
            changed = self.semantic.sync(list(self._index().by_name.values()))
            self._synced = True
            return changed

    def _misfit(self, skill: SkillFile, error: TypeError) -> None:
        """``skill``'s function does not take what its template binds: a problem, no longer run (so that
        no duplicate is learned beside it). The checks on reading make this a last resort."""
        why = (f"its function does not take what its template binds ({error}): use one name in the signature, the "
               f"body, SKILL['slots'] and SKILL['template']{undo_hint(skill.path)}")
        logger.warning("skill file %s is not run: %s", skill.path, why)
        with self._lock:  # what was said of the file before (a warning: it is still run) no longer holds
            self._problems = [p for p in self._problems if p.path != str(skill.path)] + [SkillFileError(str(skill.path), why)]
            if self._hot is not None:
                self._hot.remove(skill.name)
