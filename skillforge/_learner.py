"""Writing what was learned: a run becomes a new skill, widens one, or is already covered.

The policy of what runs make one skill is the pure ``_learning`` module; this part of
the ``Forge`` feeds it runs from the library and writes what it returns, under the
library's lock, so that processes learning at once end with one file per skill.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ._codegen import render_skill, skill_meta
from ._compile import Compiled, Rejected, admit, admit_file, prove_all
from ._exceptions import SkillFileError, SkillforgeSignal
from ._antiunify import _TOKEN, generalize, ignores_data, joined, widened
from ._census import Census, World, world_from_meta
from ._learning import _walk_all, lends_evidence, named, renamed_template, route_key, route_shape, same_program, spec_from_runs, without_idle_reads
from ._joins import unlisted
from ._lists import substitute
from ._library import MetaCache, SkillFile, content_key, skill_from
from ._held import HeldRuns
from ._lifting import discover_template, lift
from ._formats import unformatted
from ._numbers import NUMBER_RUNS
from ._records import optional_widened, records_widened
from ._spec import Const, Each, Join, Param, Select, SkillSpec
from ._template import LIST, MAX_TASK_CHARS, TaskTemplate, literal_tokens
from ._trajectory import Trajectory
from ._variants import extra_params, file_phrasings, reads_more, same_request
from ._values import rebuilt, var_names

if TYPE_CHECKING:
    from ._index import HotIndex
    from ._library import Library
    from ._policy import Violation

__all__ = ["Learning", "too_long"]

logger = logging.getLogger(__name__)


def too_long(task: str) -> Rejected | None:
    """Why a task is not learned from, if it is longer than any task a template binds (checked
    before lifting builds a regex of it: a 4 MB task took ~50 s to compile before it was rejected)."""
    if len(task) <= MAX_TASK_CHARS:
        return None
    return Rejected(
        f"the task is {len(task):,} characters, longer than the {MAX_TASK_CHARS:,} a skill's template binds; "
        "nothing is learned from it (the agent serves such tasks)"
    )


_WORD_TOKEN = re.compile(r"\s*\w+")


@functools.lru_cache(maxsize=65536)
def _text_words(text: str) -> frozenset[str]:
    """The literal words of a template text as ``generalize`` compares them (lowercased, slots left out)."""
    return frozenset(t.strip().lower() for t in _TOKEN.findall(text) if _WORD_TOKEN.fullmatch(t))


@functools.lru_cache(maxsize=65536)
def _task_words(task: str) -> frozenset[str]:
    return literal_tokens(task)


def _may_generalize(a: str, b: str) -> bool:
    """False where ``generalize`` of templates of texts ``a`` and ``b`` is None for certain: texts
    that differ keep at least two words in common (a set test, where ``generalize`` aligns tokens;
    learning calls it for every template in the library, so this keeps a learn flat as it grows)."""
    return a == b or len(_text_words(a) & _text_words(b)) >= 2


def _program_key(spec: SkillSpec) -> str:
    """What ``same_program`` compares, with parameters named by their order: equal keys for the same
    calls from the same sources and the same answer (a necessary condition, checked by a dict lookup).
    An element is keyed by the first value it is picked by, and a list's item by its first part: a
    list of names and one whose items may say one more value (``Mug {'color': 'red'}; Kettle``) share it."""
    pairs = [_coarse(s.args) for s in spec.steps] + [_coarse(spec.output)]
    order: dict[str, str] = {}
    for x in pairs:
        for e in _walk_all(x):
            name = getattr(e, "name", None)
            if isinstance(e, Param) and name not in order:
                order[name] = f"p{len(order)}"
    return repr(([s.tool for s in spec.steps], [unformatted(substitute(x, order)) for x in pairs]))


def _may_branch(a: SkillSpec | None, b: SkillSpec) -> bool:
    """Whether runs lifted as ``a`` and ``b`` may be branches of one skill (see ``branched``): the
    one with fewer calls made only reads, and they are the other's first calls from the same
    sources (the answers and later calls aside). A necessary condition, as ``_program_key`` is."""
    if a is None:
        return False
    short, long = sorted((a, b), key=lambda s: len(s.steps))
    n = len(short.steps)
    if not n or any(not short.tools[st.tool].read for st in short.steps):
        return False
    return _program_key(replace(short, output=Const(None))) == _program_key(
        replace(long, steps=long.steps[:n], output=Const(None))
    )


def _coarse(x: Any) -> Any:
    """``x`` with each ``Select`` picking by its first value only, each ``Each`` naming its item's first part
    only, and each ``Join`` with no separator."""
    def change(e: Any) -> Any:
        if isinstance(e, Select):
            return Select(_coarse(e.seq), e.field, _coarse(e.key), e.rest)
        if isinstance(e, Each):
            return Each(e.seq, var_names(e.var)[0], _coarse(e.body))
        if isinstance(e, Join):  # a list listed from one element shows no separator (see ``_joins``)
            return unlisted(e)
        return e

    return rebuilt(x, change)


def _without_captures(spec: SkillSpec) -> Any:
    """A spec with its check captures, runs and example values left out: what the skill does."""
    steps = tuple(replace(s, pre=tuple(g.kind for g in s.pre), post=tuple(g.kind for g in s.post)) for s in spec.steps)
    return replace(spec, steps=steps, runs=(), examples={}, task="")


def _phrasings_of(spec: SkillSpec) -> list[TaskTemplate]:
    """Every template of ``spec``'s file: its own first, then its other phrasings (its variants' too)."""
    return [TaskTemplate(spec.template, list(spec.slots)), *(TaskTemplate(t, list(slots)) for t, slots in file_phrasings(spec))]


def _replaced(skill: SkillFile, template: TaskTemplate) -> tuple[TaskTemplate, tuple[TaskTemplate, ...]]:
    """``skill``'s phrasings with the one of ``template``'s text (or its first) replaced by ``template``."""
    every = list(skill.phrasings or (skill.template,))
    k = next((i for i, t in enumerate(every) if t.text == template.text), 0)
    every[k] = template
    return every[0], tuple(every[1:])


def _joined(a: list[TaskTemplate], b: list[TaskTemplate]) -> list[TaskTemplate] | None:
    """The phrasings of two skills made one: those of one text widened to fit both; None if they do not fit."""
    out = []
    for t in a:
        theirs = next((x for x in b if x.text == t.text), None)
        both = widened(t, theirs) if theirs is not None else t
        if both is None:
            return None
        out.append(both)
    return out + [x for x in b if all(x.text != t.text for t in a)]


def _collapsed(
    skill: SkillFile, template: TaskTemplate, runs: list[Trajectory]
) -> tuple[TaskTemplate, tuple[TaskTemplate, ...]] | None:
    """``template`` widened to take every phrasing of ``skill`` too, where that one template binds
    every run's task: the phrasings were one text whose differing words no run had yet shown
    (a customer's name); None where the skill has one phrasing or they do not collapse."""
    if len(skill.phrasings) < 2:
        return None
    wide: TaskTemplate | None = template
    for other in skill.phrasings:
        if wide is None:
            return None
        if other.text != template.text and any(other.bind(r.task) is not None for r in runs):
            both = generalize(wide, other)
            wide = named(both, runs) if both is not None else None
    if wide is None or ignores_data(wide, runs) or any(wide.bind(r.task) is None for r in runs):
        return None
    return wide, ()


def _widened_for(every: list[TaskTemplate], other: SkillFile) -> list[TaskTemplate] | None:
    """``every`` (a skill's phrasings) with its first widened to take what ``other``'s template took:
    the same text with other slot shapes, its list with one item in its place (see
    ``records_widened``), one of its slots said twice (see ``unrepeated``), or its list's items
    said with one more value (see ``optional_widened``); None if none."""
    theirs = other.phrasing(every[0].text) or other.template
    if theirs.text == every[0].text:
        wide = widened(every[0], theirs)
    else:
        wide = (records_widened(every[0], theirs) or joined(every[0], theirs)  # or one slot of theirs said twice where ours has two
                or optional_widened(every[0], theirs, other.task))  # or items of theirs that say one more value
    return None if wide is None else [wide, *every[1:]]


def _lift_said(traj: Trajectory, template: TaskTemplate, importable: bool) -> SkillSpec | Rejected:
    """``traj`` lifted under ``template``, numbers its answer says as text taken as text: what it does, to
    compare with a skill (whether such numbers are learned is ``spec_from_runs``'s say, on every run)."""
    lifted = lift(traj, template=template, importable=importable)
    return lifted.as_text or lifted if isinstance(lifted, Rejected) else lifted


class Learning:
    """The learning half of a ``Forge`` (a mixin: it uses the forge's library, index and policy)."""

    library: Library
    cache: MetaCache
    held: HeldRuns  # runs rejected only for a number their answer says as text, held as evidence
    importable_skills: bool
    _seen: dict[Any, tuple[int, int]]
    _programs: dict[tuple[str, str], Any]
    _keys: dict[tuple[str, str], str | None]  # (skill, content hash) → _program_key of its first run
    _by_key: dict[str | None, set[str]]  # program key → names of skills that had it (checked against _keys)
    _by_route: dict[str, set[str]]  # route shape → names of skills whose first run had it (each run checked again)
    _by_params: dict[frozenset[tuple[str, str]], set[str]]  # a template's parameters → names of skills (checked again)
    _lifts: dict[tuple[str, str], Any]  # (run hash, file content hash) → the run lifted under its phrasing, and the run
    _census: Census  # the values the fields of reads took in the library's runs (see _world)
    # (and (run hash, places) → a held run's template and lift, see _held_lift)
    _said: dict[str, str]  # skill → the content hash its task's words were indexed for
    _caught_up: dict[str, tuple[Any, int]]  # index → (the template index, how many of its additions it has seen)
    _text_of: dict[str, frozenset[str]]  # template texts whose words are indexed in _texts_by_word
    _texts_by_word: dict[str, set[str]]  # a word → template texts that say it (checked against by_template)
    _by_word: dict[str, set[str]]  # a word of a skill's task → skills (checked against the task)
    _synced: bool
    _dir_mtime: int | None
    _problems: list[SkillFileError]  # skill files not run (or run with a warning), with why
    semantic: Any

    if TYPE_CHECKING:  # provided by Forge

        def _index(self) -> HotIndex: ...
        def _sync_disk(self) -> None: ...
        def remove(self, name: str) -> int: ...
        def policy_violations(
            self, source: str, name: str, instances: tuple[tuple[str, str], ...] = ()
        ) -> list[Violation]: ...
        def _cached_policy(self, skill: SkillFile) -> list[Violation]: ...

    def learn(self, traj: Trajectory, *, family: TaskTemplate | None = None) -> Compiled | Rejected:
        """Compile, admit and write a skill from a successful run; the verdict, never an exception
        (a skills directory that cannot be written, or any failure while learning, is a ``Rejected``).

        ``family`` is the template of the skills the task already matched (the run
        then happened because their guards did not hold): the run is lifted against
        it, unless it ignores text of the run that may be what it acted on (``ignores_data``: text
        its answer or a call says, a tool returned, or words that chose what a write took): then
        the run is learned as a task no template took. A run under an existing template is merged into a skill that differs
        from it only in categorical guard values (``status in ('a', 'b')``), or else
        becomes a new *variant* with its own guards; a run an existing skill already
        reproduces is not written again.
        """
        rejected = too_long(traj.task)
        if rejected is not None:
            return rejected
        if family is not None and ignores_data(family, [traj]):
            family = None  # the skills' template ignores text this run acted on (never ignored): learned as a task of its own
        try:
            return self._learn(without_idle_reads(traj), family)
        except SkillFileError as e:  # a skill that would not read back: a bug, never a failed solve()
            logger.warning("not learned, the skill would not read back: %s", e)
            return Rejected(f"the learned skill would not read back ({e}); nothing was written")
        except OSError as e:  # a read-only or full skills/, or a file where the directory should be
            logger.warning("not learned: could not write to %s: %s", self.library.dir, e)
            return Rejected(
                f"could not write to {self.library.dir} ({type(e).__name__}: {e}); make it a writable directory "
                "with free space. Each file is written whole or not at all, so what is there is intact"
            )
        except (Exception, SkillforgeSignal) as e:  # the writes have happened: a bug costs the learning, not the solve
            logger.exception("not learned: learning from the run of %r failed", traj.task)
            return Rejected(
                f"learning failed on an unexpected error ({type(e).__name__}: {e}); files in {self.library.dir} are whole "
                "(each is written atomically), but this run may be learned only in part"
            )

    def _learn(self, traj: Trajectory, family: TaskTemplate | None) -> Compiled | Rejected:
        spec = lift(traj, template=family, importable=self.importable_skills)
        numbers = spec if isinstance(spec, Rejected) and spec.as_text is not None else None  # said as text? this run is evidence
        if numbers is not None:
            spec = numbers.as_text
        if isinstance(spec, Rejected):
            return numbers or spec
        hot = self._index()
        with self.library.lock():
            self._sync_disk()  # another process may have learned this very skill a moment ago
            variants = sorted(hot.by_template.get(spec.template, []), key=lambda s: s.name)
            for existing in variants:
                if isinstance(admit_file(existing, traj), Compiled):
                    return Rejected(f"skill {existing.name} already reproduces this run")
            mine = TaskTemplate(spec.template, list(spec.slots))
            for existing in variants:
                merged = self._merged(existing, traj, mine)
                if merged is not None:
                    return self._write_absorbing(*merged, [v for v in variants if v is not existing])
            for existing in variants:
                refreshed = self._refreshed(existing, traj)
                if refreshed is not None:
                    return self._write(*refreshed)
            if family is None:  # a skill of a wider template may take this task (a list of items, a task of one)
                wider = self._into_wider(spec, traj, variants)
                if wider is not None:
                    return wider
            if family is None and not any(v.bind(traj.task) is not None for v in variants):
                widened = self._generalized(spec, traj)  # a task no template took: widen one that nearly did
                if widened is not None:
                    return widened
                rephrased = self._rephrased(spec, traj)  # or said otherwise: one more phrasing of a skill
                if rephrased is not None:
                    return rephrased
            name = spec.name
            i = 2
            while self.library.path_for(name).exists():  # a stat per name tried, not a listing of the library
                held = self._not_run(name)
                if held is not None:
                    return held
                name = f"{spec.name}_{i}"
                i += 1
            if numbers is not None:  # no skill of one such run: learned with held runs of other worlds, or held
                return self._learn_held(traj, numbers, name, TaskTemplate(spec.template, list(spec.slots)), spec, variants)
            if name != spec.name:
                spec = lift(
                    traj, name=name, template=TaskTemplate(spec.template, list(spec.slots)), importable=self.importable_skills
                )
                if isinstance(spec, Rejected):  # pragma: no cover - lifting is deterministic
                    return spec
            spec = self._with_evidence(spec, [traj], TaskTemplate(spec.template, list(spec.slots)))
            source = render_skill(spec)
            violations = self.policy_violations(source, spec.name, spec.instances)
            if violations:
                return Rejected(f"the generated code breaks the sandbox policy: {violations[0]}")
            verdict = admit(source, spec, traj)
            if isinstance(verdict, Rejected):
                return verdict
            return self._write_absorbing(spec, source, [traj], variants)

    def relearn(self, name: str, templates: tuple[TaskTemplate, ...] | None = None) -> bool:
        """Learn skill ``name`` again from its recorded runs, as they are now (with what probes of them
        found: ``Trajectory.probes``), and write it if it changed; True if it was written. A hand-edited
        file is never written over. ``templates``: its phrasings (the first its template) to learn it
        under instead, its slots' shapes widened where probes showed the agent act alike."""
        hot = self._index()
        with self.library.lock():
            self._sync_disk()
            skill = hot.by_name.get(name)
            if skill is None or skill.edited:
                return False
            try:
                runs = [self.library.load_run(h) for h in skill.runs]
            except SkillFileError as e:
                logger.info("cannot learn %s again: %s", name, e)
                return False
            every = templates or skill.phrasings or (skill.template,)
            got = self._from_runs(runs, skill.name, every[0], tuple(every[1:]))
            if got is None or got[1] == skill.source:
                return False
            self._write(*got)
            return True

    def _learn_held(
        self, traj: Trajectory, numbers: Rejected, name: str, mine: TaskTemplate, spec: SkillSpec, variants: list[SkillFile]
    ) -> Compiled | Rejected:
        """A run rejected only for numbers its answer says as text (``numbers``; ``spec`` is the run lifted
        with them as text), learned with the runs held before it that made the same calls, where its
        template takes their tasks (as it is, its slots widened, or one region of it widened, see
        ``generalize``) or they make the same calls from the same sources said otherwise (one more
        phrasing), and they show the numbers fixed in enough worlds (``_numbers``); else held too."""
        key = repr(([st.tool for st in spec.steps], sorted({text for text, _n in numbers.numbers})))  # where evidence may be
        together: list[Trajectory] = []
        template, phrasings = mine, []
        for run in self.held.runs(key):  # oldest first
            if run.hash == traj.hash:
                continue
            theirs, lifted = self._held_lift(run, numbers.numbers)
            if isinstance(theirs, Rejected):
                continue
            if any(t.bind(run.task) is not None for t in (template, *phrasings)):
                together.append(run)
                continue
            wide = widened(template, theirs) if theirs.text == template.text else None
            if wide is None and _may_generalize(theirs.text, template.text):
                both = generalize(template, theirs)
                wide = named(both, [*together, traj, run]) if both is not None else None
                wide = None if wide is None or ignores_data(wide, [*together, traj, run]) else wide
            if wide is not None and all(wide.bind(r.task) is not None or any(p.bind(r.task) for p in phrasings)
                                        for r in (*together, traj, run)):
                template = wide
                together.append(run)
                continue
            names = same_program(lifted, spec) if not isinstance(lifted, Rejected) else None
            if names is not None and theirs.text not in {t.text for t in (template, *phrasings)}:
                phrasings.append(renamed_template(theirs, names))  # the same program said otherwise
                together.append(run)
        learned = None
        if len(together) + 1 >= NUMBER_RUNS:
            learned = self._from_runs([*together, traj], name, template, tuple(phrasings))
        if learned is None and (template is not mine or phrasings):  # the runs its own template takes, alone
            alone = [r for r in together if mine.bind(r.task) is not None]
            if len(alone) + 1 >= NUMBER_RUNS and len(alone) < len(together):
                together, learned = alone, self._from_runs([*alone, traj], name, mine)
        if learned is None:
            self.held.add(key, traj)
            return Rejected(f"{numbers.reason}; the run is held as evidence, until {NUMBER_RUNS} runs of other worlds "
                            "say it in the same place", numbers.numbers)
        self.held.discard(key, {run.hash for run in together})
        return self._write_absorbing(*learned, variants)

    def _held_lift(self, run: Trajectory, places: frozenset[tuple[str, str]]) -> tuple[Any, Any]:
        """A held run's own template, and the run lifted under it (numbers said as text taken as text):
        kept per run and places, since every later held run of its program looks at it again."""
        key = (run.hash, repr(sorted(places)))
        if key not in self._lifts:
            if len(self._lifts) > 4096:
                self._lifts.clear()
            theirs = discover_template(run, importable=self.importable_skills, literal=places)
            lifted = theirs if isinstance(theirs, Rejected) else _lift_said(run, theirs, self.importable_skills)
            self._lifts[key] = (theirs, lifted)
        found: tuple[Any, Any] = self._lifts[key]
        return found

    def _into_wider(self, spec: SkillSpec, traj: Trajectory, variants: list[SkillFile]) -> Compiled | None:
        """The run learned into a skill of another template that binds its task too, where all their
        runs make one skill: a list of items takes a task of one, two slots take one value said
        twice (``unrepeated``), so the task's own template would be a second file of one intent. The run was learned without a template (a request of a
        message of several), else the skill that bound it was its family already.

        Candidates call the same tools in the same order as the run lifted under their template
        (where from and what they answer, ``spec_from_runs`` decides); hand-edited files are left alone.
        """
        mine = {v.name for v in variants}
        hot = self._index()
        found = [(m.skill, m.template) for m in hot.find_every(traj.task)]
        ours = TaskTemplate(spec.template, list(spec.slots))
        for text in self._near_texts(ours.text):  # a text of two slots where the task says one value twice
            for other in hot.by_template.get(text, ()):
                theirs = other.phrasing(text)
                optional = optional_widened(theirs, ours, traj.task) if theirs is not None else None
                if optional is not None and all(o.name != other.name for o, _t in found):
                    found.append((other, optional))  # its list's items, some said with one more value
                    continue
                wide = joined(theirs, ours) if theirs is not None else None
                wide = named(wide, [traj]) if wide is not None else None
                if wide is None or ignores_data(wide, [traj]):
                    continue
                if wide.bind(traj.task) is not None and all(o.name != other.name for o, _t in found):
                    found.append((other, wide))
        for other, template in found:
            if other.name in mine or other.edited or set(other.tools) != set(spec.tools):
                continue
            lifted = _lift_said(traj, template, self.importable_skills)
            first = self._program(other)
            if isinstance(lifted, Rejected) or (first is not None and [s.tool for s in first.steps] != [s.tool for s in lifted.steps]):
                continue  # other calls: another program (the same calls may still answer otherwise, or take a value elsewhere)
            try:
                runs = [self.library.load_run(h) for h in other.runs]
            except SkillFileError:
                continue
            learned = self._from_runs([*runs, traj], other.name, *_replaced(other, template))
            if learned is not None:
                logger.info("%s now also takes %r, which its template binds", other.name, traj.task)
                same = [v for v in self._index().by_template.get(template.text, []) if v is not other]
                return self._write_absorbing(*learned, same)
        return None

    def _not_run(self, name: str) -> Rejected | None:
        """Why nothing is learned under a name whose file is there but not run: a second skill of the same
        tasks beside it would be a duplicate once the file is fixed (None if it is run)."""
        path = str(self.library.path_for(name))
        problem = next((p for p in self._problems if p.path == path and not p.warning), None)
        if problem is None:
            return None
        return Rejected(
            f"{path} has this skill's name and is not run, so no second skill is learned beside it: fix the file, or "
            f"delete it (`skillforge rm {name}`), and the next such task is learned. What is wrong with it: {problem.reason}"
        )

    def _write_absorbing(
        self, spec: SkillSpec, source: str, runs: list[Trajectory], others: list[SkillFile], skip: Sequence[SkillFile] = ()
    ) -> Compiled:
        """Write ``spec``; a variant of its template whose every run it reproduces is folded into it, and so
        is a skill of a narrower template whose every task it binds (a return of one item, once a
        template takes a list of items), where all their runs make one skill."""
        absorbed: list[SkillFile] = []
        paired = self._with_variant(spec, runs, [*others, *skip])  # the same request said with more (or fewer)
        if paired is not None:
            before = spec.name
            spec, source, runs, other = paired
            if spec.name != other.name:  # the other is this skill's variant now
                absorbed.append(other)
            elif before in self._index().by_name:  # this file is the other's variant now
                absorbed.append(self._index().by_name[before])
        for other in others:
            wider = self._absorbed(spec, source, runs, other)
            if wider is not None:
                spec, source, runs = wider
                absorbed.append(other)
        for other in self._narrower(spec, [*others, *absorbed, *skip]):
            wider = self._subsumed(spec, runs, other)
            if wider is not None:
                spec, source, runs = wider
                absorbed.append(other)
        compiled = self._write(spec, source, runs)
        for other in absorbed:
            logger.info("skill %s now covers every run of %s, which is removed", spec.name, other.name)
            self.remove(other.name)
        return compiled

    def _merged(
        self, existing: SkillFile, traj: Trajectory, mine: TaskTemplate
    ) -> tuple[SkillSpec, str, list[Trajectory]] | None:
        """``existing`` widened to cover ``traj`` too, if they differ only in guard values and slot
        shapes (``mine`` is the template ``traj`` lifted to: the same text, its slots' shapes)."""
        if existing.edited:
            return None  # a person's edit is never regenerated over
        try:
            runs = [self.library.load_run(h) for h in existing.runs]
        except SkillFileError as e:
            logger.info("cannot merge into %s: %s", existing.name, e)
            return None
        template = existing.phrasing(mine.text) or existing.template
        if template.bind(traj.task) is None:
            wider = generalize(template, mine)
            template = widened(template, mine) or (named(wider, [traj]) if wider else template)
        return self._from_runs([*runs, traj], existing.name, *_replaced(existing, template))

    def _from_runs(
        self, runs: list[Trajectory], name: str, template: TaskTemplate, phrasings: tuple[TaskTemplate, ...] = ()
    ) -> tuple[SkillSpec, str, list[Trajectory]] | None:
        """A skill learned from ``runs``, rendered, within the policy and proven on every run; else None
        (and why, at debug level)."""
        world = self._world(runs)
        spec = spec_from_runs(runs, name=name, template=template, importable=self.importable_skills, phrasings=phrasings,
                              world=world)
        if not isinstance(spec, Rejected):
            spec = self._with_evidence(spec, runs, template, phrasings, world)
        problem: Any = spec.reason if isinstance(spec, Rejected) else None
        if not isinstance(spec, Rejected):
            source = render_skill(spec)
            problem = self.policy_violations(source, spec.name, spec.instances) or prove_all(source, spec, runs)
            if not problem:
                return spec, source, runs
        logger.debug("%d runs make no skill %s: %s", len(runs), name, problem)
        return None

    def _generalized(self, spec: SkillSpec, traj: Trajectory) -> Compiled | None:
        """A family of skills whose template differs from this run's task in one region, widened to take it.

        The texts differ in one region that feeds no argument (``he`` / ``she``, a trailing
        "Thanks!"), and this run made the same calls from the same sources as one skill of
        the family in a world of the same kind (they merge): the template keeps exactly the
        texts seen in that region (see ``generalize``), and every skill of the family is
        learned again under it. Families with a hand-edited file are left as they are.
        """
        hot = self._index()
        mine = TaskTemplate(spec.template, list(spec.slots))
        mine_key = _program_key(spec)
        for text in self._near_texts(mine.text):
            family = sorted(hot.by_template[text], key=lambda s: s.name)
            if any(v.edited for v in family):
                continue
            if not any(self._key_of(v) in (mine_key, None) or _may_branch(self._program(v), spec) for v in family):
                continue  # no skill of the family makes this run's calls from its sources (or its first reads): none takes it
            common: TaskTemplate | None = family[0].phrasing(text)
            for v in family[1:]:  # the variants' slots, widened to fit each other's texts
                theirs = v.phrasing(text)
                common = widened(common, theirs) if common is not None and theirs is not None else None
            template = generalize(common, mine) if common is not None else None
            template = named(template, [traj]) if template is not None else None
            if template is None or ignores_data(template, [traj]):
                continue
            absorbed: list[SkillFile] = []
            rewritten = self._relearned(family, template, traj)
            if rewritten is None:
                logger.debug("%s not widened to %r: its runs make no skill under it", family[0].name, template.text)
                continue
            if len(rewritten) > 1:  # the family's variants may be one skill under the wider template
                every: list[Trajectory] = []
                for _spec, _source, runs in rewritten:
                    every += [r for r in runs if r.hash not in {e.hash for e in every}]
                whole = self._from_runs(every, family[0].name, *_replaced(family[0], template))
                if whole is not None:
                    rewritten, absorbed = [whole], family[1:]
            logger.info("%s now also take %r (template %r)", ", ".join(v.name for v in family), traj.task, template.text)
            compiled = None
            for merged, source, runs in rewritten:
                if traj in runs:  # and narrower skills of its intent it now takes, folded in
                    compiled = self._write_absorbing(merged, source, runs, [], skip=[*family, *absorbed])
                else:
                    self._write(merged, source, runs)
            for v in absorbed:  # after the wider skill is written, which names their runs
                logger.info("skill %s now covers every run of %s, which is removed", family[0].name, v.name)
                self.remove(v.name)
            return compiled
        return None

    def _near_texts(self, mine: str) -> list[str]:
        """The template texts ``generalize`` may widen with ``mine`` (see ``_may_generalize``), sorted:
        looked up by their words (an index of template texts' words, kept up to date with the
        library) instead of tried one by one."""
        hot = self._index()
        for text in (t.text for skill in self._new_in(hot, "texts") for t in skill.phrasings or (skill.template,)):
            if text not in self._text_of:
                self._text_of[text] = _text_words(text)
                for word in self._text_of[text]:
                    self._texts_by_word.setdefault(word, set()).add(text)
        counts: dict[str, int] = {}
        for word in _text_words(mine):
            for text in self._texts_by_word.get(word, ()):
                counts[text] = counts.get(text, 0) + 1
        near = {t for t, n in counts.items() if n >= 2} | {mine}
        return sorted(t for t in near if t in hot.by_template and _may_generalize(t, mine))

    def _relearned(
        self, family: list[SkillFile], template: TaskTemplate, traj: Trajectory
    ) -> list[tuple[SkillSpec, str, list[Trajectory]]] | None:
        """Every skill of ``family`` learned again under ``template``, ``traj`` merged into one; None if any fails."""
        out: list[tuple[SkillSpec, str, list[Trajectory]]] = []
        taken = False
        for v in family:
            try:
                runs = [self.library.load_run(h) for h in v.runs]
            except SkillFileError:
                return None
            if ignores_data(template, runs):
                return None
            templates = _collapsed(v, template, [*runs, traj]) or _replaced(v, template)
            candidates = [runs] if taken else [[*runs, traj], runs]
            for these in candidates:
                learned = self._from_runs(these, v.name, *templates)
                if learned is None:
                    continue
                out.append(learned)
                taken = taken or these is not runs
                break
            else:
                return None
        return out if taken else None

    def _absorbed(
        self, spec: SkillSpec, source: str, runs: list[Trajectory], other: SkillFile
    ) -> tuple[SkillSpec, str, list[Trajectory]] | None:
        """``spec`` learned from ``other``'s runs too, if all their runs make one skill (see ``merge``)."""
        if other.edited:
            return None
        try:
            theirs = [self.library.load_run(h) for h in other.runs]
        except SkillFileError:
            return None
        known = {r.hash for r in runs}
        together = runs + [r for r in theirs if r.hash not in known]
        every = _joined(_phrasings_of(spec), list(other.phrasings or (other.template,)))
        return None if every is None else self._from_runs(together, spec.name, every[0], tuple(every[1:]))

    def _narrower(self, spec: SkillSpec, skip: list[SkillFile]) -> list[SkillFile]:
        """Skills of another template text, with the same tools, whose first task ``spec``'s template binds."""
        every = _phrasings_of(spec)
        names = {s.name for s in skip} | {spec.name}
        listed = any(sl.kind == LIST for sl in every[0].slots)  # else _widened_for needs their phrasing of our text
        ours = {t.text for t in every}
        hot = self._index()
        if listed or any(not t.words for t in every):
            pool: list[SkillFile] = list(hot.by_name.values())
        else:  # a template binds only a task that says its words: the skills whose task says them
            pool = self._saying(every) + list(hot.by_template.get(every[0].text, ()))
        out: dict[str, SkillFile] = {}
        for other in pool:
            if other.name in names or other.name in out or other.edited or set(other.tools) != set(spec.tools):
                continue
            if all(p.text in ours for p in other.phrasings or (other.template,)):
                continue  # a skill of our own texts is a variant, not a narrower skill
            said = _task_words(other.task)
            if not any(t.words <= said for t in every) and not listed and other.phrasing(every[0].text) is None:
                continue
            if any(t.bind(other.task) is not None for t in every) or _widened_for(every, other) is not None:
                out[other.name] = other
        return sorted(out.values(), key=lambda s: s.name)

    def _saying(self, templates: list[TaskTemplate]) -> list[SkillFile]:
        """The skills whose first task says every literal word of one of ``templates`` (an index of
        the tasks' words, brought up to date with the library on each call)."""
        hot = self._index()
        for skill in self._new_in(hot, "said"):
            if self._said.get(skill.name) != skill.content_hash:
                self._said[skill.name] = skill.content_hash
                for word in _task_words(skill.task):
                    self._by_word.setdefault(word, set()).add(skill.name)
        found: set[str] = set()
        for t in templates:
            postings = sorted((self._by_word.get(w, set()) for w in t.words), key=len)
            found |= set.intersection(*postings) if postings else set()
        skills = [hot.by_name.get(n) for n in sorted(found)]
        return [f for f in skills if f is not None and any(t.words <= _task_words(f.task) for t in templates)]

    def _subsumed(
        self, spec: SkillSpec, runs: list[Trajectory], other: SkillFile
    ) -> tuple[SkillSpec, str, list[Trajectory]] | None:
        """``spec`` learned from ``other``'s runs too, if its template binds each of their tasks and all make one skill."""
        try:
            theirs = [self.library.load_run(h) for h in other.runs]
        except SkillFileError:
            return None
        every = _widened_for(_phrasings_of(spec), other) or _phrasings_of(spec)
        if any(all(t.bind(r.task) is None for t in every) for r in theirs):
            return None
        known = {r.hash for r in runs}
        return self._from_runs(runs + [r for r in theirs if r.hash not in known], spec.name, every[0], tuple(every[1:]))

    def _refreshed(self, existing: SkillFile, traj: Trajectory) -> tuple[SkillSpec, str, list[Trajectory]] | None:
        """``existing`` learned again from ``traj`` when only its tools' check captures changed.

        A pre- or post-check compares the world now with the world when the skill was
        learned; the newest successful run is the better reference, so its capture
        replaces the old one instead of piling up a variant per expiry.
        """
        if existing.edited:
            return None
        try:
            runs = [self.library.load_run(h) for h in existing.runs]
        except SkillFileError:
            return None
        every = existing.phrasings or (existing.template,)
        old = spec_from_runs(runs, name=existing.name, template=every[0], importable=self.importable_skills, phrasings=every[1:],
                             world=world_from_meta(existing.meta.get("world")))
        bound = existing.bind(traj.task)
        if bound is None:
            return None
        new = lift(traj, name=existing.name, template=bound[0], importable=self.importable_skills)
        if isinstance(old, Rejected) or isinstance(new, Rejected) or not any(s.pre or s.post for s in new.steps):
            return None
        if _without_captures(old) != _without_captures(new):
            return None
        source = render_skill(new)
        if self.policy_violations(source, new.name, new.instances) or prove_all(source, new, [traj]) is not None:
            return None
        return new, source, [traj]

    def _rephrased(self, spec: SkillSpec, traj: Trajectory) -> Compiled | None:
        """A skill that does what this run did, asked in other words: the run's template becomes one
        more of its phrasings (one file per intent, however people put it).

        Candidates take the same parameters and tools and made the same calls from the same
        sources in their first run; the runs must then make one skill (``merge``) under the
        candidate's phrasings and this one, proven on every run. Hand-edited files are left alone.
        """
        mine = TaskTemplate(spec.template, list(spec.slots))
        mine_key = _program_key(spec)
        types = sorted(s.type for s in mine.params)
        for other in self._same_key(mine_key):
            if other.edited or set(other.tools) != set(spec.tools) or other.phrasing(mine.text) is not None:
                continue
            if sorted(s.type for s in other.template.params) != types:
                continue
            first = self._program(other)
            if first is None:
                continue
            names = same_program(spec, first)  # the same calls from the same sources, parameters named as theirs
            if names is None:
                continue  # another program: not the same intent
            try:
                runs = [self.library.load_run(h) for h in other.runs]
            except SkillFileError:
                continue
            every = other.phrasings or (other.template,)
            learned = self._from_runs([*runs, traj], other.name, every[0], (*every[1:], renamed_template(mine, names)))
            if learned is not None:
                logger.info("%s now also takes tasks said as %r", other.name, mine.text)
                return self._write(*learned)
            logger.debug("%s does what %r asks, but their runs make no one skill", other.name, mine.text)
        return None

    def _with_variant(
        self, spec: SkillSpec, runs: list[Trajectory], skip: Sequence[SkillFile]
    ) -> tuple[SkillSpec, str, list[Trajectory], SkillFile] | None:
        """``spec`` (about to be written) and a skill of the same request said with fewer parameters, or
        with more ("Hi, this is bo.ng. Please add ana.li to hr-files, thanks!" beside "Please add ana.li to
        hr-files."), as one file: the phrasings of more parameters are a variant of the other's skill, with
        a program of its own learned from its own runs (``_variants``), where it asks the same
        (``same_request``) and all their runs make that file, proven on every run. Also the skill to
        remove (the one folded in). None where no skill pairs so. Hand-edited files are left alone."""
        mine = _phrasings_of(spec)
        texts = {t.text for t in mine}
        own = mine[0]
        for other in self._nested(own):
            if other.edited or other.name == spec.name or other in skip:
                continue
            theirs = list(other.phrasings or (other.template,))
            if any(t.text in texts for t in theirs):
                continue
            first = self._program(other)
            if first is None or not first.steps or not spec.steps or first.steps[0].tool != spec.steps[0].tool:
                continue  # another identification route: not the same request
            # a first test on what is known without learning both together (costly): this spec, the other's first run
            if (more := extra_params(other.template, own)) and reads_more(spec, more) and same_request(first, spec, other.tools):
                name, templates, theirs_first = other.name, [*theirs, *mine], True
            elif (more := extra_params(own, other.template)) and reads_more(first, more) and (
                    all(ref.read for ref in first.tools.values()) or same_request(spec, first)):  # a refusal first: learn to see
                name, templates, theirs_first = spec.name, [*mine, *theirs], False
            else:
                continue
            try:
                other_runs = [self.library.load_run(h) for h in other.runs]
            except SkillFileError:
                continue
            before, after = (other_runs, runs) if theirs_first else (runs, other_runs)
            known = {r.hash for r in before}
            together = [*before, *(r for r in after if r.hash not in known)]
            learned = self._from_runs(together, name, templates[0], tuple(templates[1:]))
            if learned is None or not learned[0].variants or not all(same_request(learned[0], v) for v in learned[0].variants):
                continue
            logger.info("%s and %s are one request, said with more parameters in one: one file", spec.name, other.name)
            return (*learned, other)
        return None

    def _nested(self, template: TaskTemplate) -> list[SkillFile]:
        """The skills whose template takes a part of ``template``'s parameters, or all of them and more
        (same names and types), by name: looked up by parameter sets (a few per library), not by skill."""
        hot = self._index()
        for skill in self._new_in(hot, "params"):
            self._by_params.setdefault(frozenset((s.name, s.type) for s in skill.template.params), set()).add(skill.name)
        mine = frozenset((s.name, s.type) for s in template.params)
        names = {n for key, ns in self._by_params.items() if key < mine or key > mine for n in ns}
        found = [hot.by_name.get(n) for n in sorted(names)]
        return [f for f in found if f is not None and (extra_params(f.template, template) or extra_params(template, f.template))]

    def _new_in(self, hot: Any, index: str) -> list[SkillFile]:
        """The skills added to ``hot`` since ``index`` (one of the learner's word and key indexes) last
        caught up with it: every skill, the first time or after a reload made a new template index.
        Entries of skills removed or changed since stay in these indexes; every lookup checks what it
        finds against the template index, so they cost a set entry, never a wrong answer."""
        seen, done = self._caught_up.get(index, (None, 0))
        if seen is not hot:
            done = 0
        new = hot.added[done:]
        self._caught_up[index] = (hot, done + len(new))
        return new

    def _same_key(self, key: str) -> list[SkillFile]:
        """The skills whose first run has program key ``key``, by name: a dict lookup once every
        skill's key is known (each is computed once per file text, on first need)."""
        hot = self._index()
        for skill in self._new_in(hot, "keys"):
            self._program(skill)  # files it lifted before are under their key already
        found = [hot.by_name.get(n) for n in sorted(self._by_key.get(key, ()))]
        return [f for f in found if f is not None and self._keys.get((f.name, f.content_hash)) == key]

    def _key_of(self, skill: SkillFile) -> str | None:
        """The ``_program_key`` of ``skill``'s first run (None if it has none)."""
        self._program(skill)
        return self._keys.get((skill.name, skill.content_hash))

    def _program(self, skill: SkillFile) -> SkillSpec | None:
        """``skill``'s first run lifted under its phrasing: what the skill does (kept per file text)."""
        key = (skill.name, skill.content_hash)
        if key not in self._programs:
            lifted = self._lifted(skill, skill.runs[0]) if skill.runs else None
            first: SkillSpec | None = lifted[0] if lifted is not None else None
            if len(self._programs) > 2 * len(self._index().by_name) + 64:  # files rewritten since: drop the stale
                live = {(s.name, s.content_hash) for s in self._index().by_name.values()}
                self._programs = {k: v for k, v in self._programs.items() if k in live}
                self._keys = {k: v for k, v in self._keys.items() if k in live}
            self._programs[key] = first
            self._keys[key] = _program_key(first) if first is not None else None
            self._by_key.setdefault(self._keys[key], set()).add(skill.name)
            if first is not None and route_shape(first) is not None:
                self._by_route.setdefault(route_shape(first), set()).add(skill.name)
        result: SkillSpec | None = self._programs[key]
        return result

    def _with_evidence(
        self, spec: SkillSpec, runs: list[Trajectory], template: TaskTemplate, phrasings: tuple[TaskTemplate, ...] = (),
        world: World | None = None,
    ) -> SkillSpec:
        """``spec`` learned again with the runs of the same request in other skills (other identification
        routes, phrasings learned on their own: ``lends_evidence``) as evidence for its facts (see
        ``spec_from_runs``), where there are any; else ``spec``."""
        evidence = self._evidence(spec, runs)
        if not evidence:
            return spec
        wider = spec_from_runs(
            runs, name=spec.name, template=template, importable=self.importable_skills, phrasings=phrasings, evidence=evidence,
            world=world,
        )
        if isinstance(wider, Rejected) or route_key(wider) != route_key(spec):
            logger.debug("%s not widened by the runs of other routes: %s", spec.name, getattr(wider, "reason", "another program"))
            return spec
        return wider

    def _world(self, runs: list[Trajectory]) -> World:
        """The fields the library's runs (every skill's, and ``runs``) show name things (``_census``): the
        runs of each skill the index holds counted once, and kept counted."""
        hot = self._index()
        for skill in self._new_in(hot, "census"):
            for h in skill.runs:
                if h in self._census.counted:
                    continue
                try:
                    self._census.add(self.library.load_run(h))
                except SkillFileError:
                    continue
        return self._census.world(also=runs)

    def _evidence(self, spec: SkillSpec, own: list[Trajectory]) -> tuple[Trajectory, ...]:
        """The runs of other skills that lend ``spec`` (learned from the runs ``own``) evidence
        (``lends_evidence``), by skill name and run order."""
        key = route_shape(spec)
        if key is None:
            return ()
        hot = self._index()
        for skill in self._new_in(hot, "keys"):
            self._program(skill)  # indexes its route too
        out: list[Trajectory] = []
        for name in sorted(self._by_route.get(key, ())):
            skill = hot.by_name.get(name)
            if skill is None or name == spec.name or skill.edited:
                continue
            for h in skill.runs:
                lifted = self._lifted(skill, h)
                if lifted is None:
                    continue
                theirs, run = lifted
                if lends_evidence(spec, theirs, run, own):
                    out.append(run)
        return tuple(out)

    def _lifted(self, skill: SkillFile, run_hash: str) -> tuple[SkillSpec, Trajectory] | None:
        """Run ``run_hash`` of ``skill`` lifted under the phrasing that binds its task, and the run (kept per
        run and file text: the file's phrasings decide which binds)."""
        key = (run_hash, skill.content_hash)
        if key not in self._lifts:
            if len(self._lifts) > 4096:
                self._lifts.clear()
            found: tuple[SkillSpec, Trajectory] | None = None
            try:
                run = self.library.load_run(run_hash)
            except SkillFileError:
                run = None
            bound = skill.bind(run.task) if run is not None else None
            if run is not None and bound is not None:
                lifted = _lift_said(run, bound[0], self.importable_skills)  # a skill's run: numbers its runs showed fixed
                found = None if isinstance(lifted, Rejected) else (lifted, run)
            self._lifts[key] = found
        return self._lifts[key]

    def _write(self, spec: SkillSpec, source: str, runs: list[Trajectory]) -> Compiled:
        meta = skill_meta(spec)  # just rendered: known, no need to parse it back
        skill_from(self.library.path_for(spec.name), source, meta)  # a file that would not read back is never written
        path = self.library.write(spec.name, source, runs, package=self.importable_skills)
        skill = skill_from(path, source, meta)
        # the spec that rendered the file knows its metadata, and the policy passed it: cached now,
        # so the next process does not parse what this one wrote (a learn is no hot path: saved at once)
        self.cache.put(content_key(source), meta)
        self._cached_policy(skill)
        self.cache.save()
        self._index().add(skill)
        st = path.stat()
        self._seen[path] = (st.st_mtime_ns, st.st_size)
        # every write holds the library's lock, taken after a look at the directory: what changed it
        # since is this write, so the next look need not stat every file again
        self._dir_mtime = self.library.dir.stat().st_mtime_ns
        logger.info("learned skill %s from %r (%d run%s)", skill.name, runs[-1].task, len(runs), "s" * (len(runs) != 1))
        if self._synced:
            try:
                self.semantic.upsert(skill)
            except Exception as e:
                logger.warning("could not add %s to the semantic index (%s); `skillforge reindex` repairs it", skill.name, e)
        return Compiled(spec=spec, source=source)

