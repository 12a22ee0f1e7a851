"""Learning: the runs of one template → one skill, as specific as the runs require. Pure.

A skill is the least general program consistent with its runs. Each run is lifted on
its own (``lift``); runs whose programs agree (the same calls, from the same sources)
become one skill whose guards are the facts of the world the runs saw:

- a fact that held in every run stays a guard as it is;
- a switch-like fact that varied (a categorical value, a flag over a list's elements,
  a list's emptiness, a number's sign, a task value's membership or equality, a value
  taken by position) keeps only the values, and for several such facts the
  combinations, the runs showed together: after (fraud_hold False, approved False)
  and (True, True), the world (True, False) is a miss; facts of the last write's result (and of
  later reads), when the answer quotes none of them, are combined with each other only: the
  facts before the write were checked, in a combination some run showed, before it was made;
- a text fact that took at least ``ATTRIBUTE_RUNS`` values, more of them the more runs there are
  that acted alike describes *which* thing the run was about (a name, a city), not
  *what to do*: it is not guarded, and the skill says on how many runs that rests. A fact
  about what the runs do not act on (``_relevance``: the customer's home city when an
  order is returned) needs ``CONTEXT_RUNS`` values.
  Lowercase code words (``pending``, ``on hold``) are a program's vocabulary, never an
  attribute: a status new in each of five runs is still a status.

A number the answers say as text that nothing explains is learned as text where enough runs of
other worlds say it in the same place (``_numbers``, checked on the runs each time); amounts the
runs wrote in two formats that one format fits ($99.99 and $1,042.50) are written in that one.

Facts are compared by observing each one in every run's recorded results
(``observe``), so runs merge even where a fact was established in one run only (a
list empty in one run and not in another). Anything else that differs (another
call, argument source, check capture, or a fact whose path one run lacks) keeps the
runs apart.
"""

from __future__ import annotations

import logging
import string
from dataclasses import replace
from collections.abc import Callable
from typing import Any

from ._guards import MISSING, OBSERVED, fact_key, observe
from ._lifting import Rejected, Site, expr_at, lift
from ._joins import alone, listed_alike, settled, shown
from ._lists import joined_picks, substitute
from ._names import named
from ._numbers import Places, agreed_formats, lift_said, number_evidence, unformatted
from ._relevance import acted_on
from ._records import folded_as
from ._spec import At, Early, Expr, Guard, Param, Ref, SkillSpec, Step, Where
from ._template import CHOICE, IGNORED, LIST, PHRASING, Slot, TaskTemplate, choices
from ._trajectory import Trajectory
from ._variants import grouped, variant_name
from ._wording import Wording, literal, worded
from ._values import EACH, _leaves, ambiguous, bound_item, enum_like, resolve, walk_exprs

logger = logging.getLogger(__name__)

__all__ = [
    "ATTRIBUTE_RUNS", "CONTEXT_RUNS", "route_key", "branched", "merge", "named", "renamed_template", "same_program", "settle", "spec_from_runs",
    "without_idle_reads",
]

ATTRIBUTE_RUNS = 5  # runs that acted alike, each with another value, before a text fact counts as an attribute
CONTEXT_RUNS = 3  # the same for a fact about what the runs do not act on (the customer's city when an order is returned)
_OBSERVED = OBSERVED  # facts that can be read off any run's results
_SWITCHES = OBSERVED - {"has", "each"}  # of those, kept as sets of values


def spec_from_runs(
    runs: list[Trajectory], *, name: str, template: TaskTemplate, importable: bool = True,
    phrasings: tuple[TaskTemplate, ...] = (), evidence: tuple[Trajectory, ...] = (),
) -> SkillSpec | Rejected:
    """The spec of a skill learned from several runs (in order), as its file is rendered.

    ``phrasings`` are other templates of the same task (the same parameters, said otherwise):
    each run is lifted with the first of ``template`` and them that binds its task, and the
    runs make one skill if they made the same calls from the same sources.

    ``evidence`` are runs of the same request reached by another identification route: the same
    calls after their first (a customer found by email in one, by name and zip in another), from
    the same sources, and the same answer. What they observed is added to the values the skill's
    switch-like and attribute-like facts took in runs that acted alike (never a fact of their own:
    the first call differs; and never a run the skill must reproduce).
    """
    every = (template, *phrasings)
    takes = sorted((s.name, s.type) for s in template.params)
    if any(sorted((s.name, s.type) for s in t.params) != takes for t in phrasings):
        return _with_variants(runs, name=name, template=template, importable=importable, phrasings=phrasings, evidence=evidence)

    def lifted(traj: Trajectory, prefer: Any = None, literal: Places = frozenset(), one_listed: bool = True) -> SkillSpec | Rejected:
        k = next((i for i, t in enumerate(every) if t.bind(traj.task) is not None), 0)
        one = lift(traj, name=name, template=every[k], prefer=prefer, importable=importable, literal=literal, one_listed=one_listed)
        if phrasings and not isinstance(one, Rejected):  # which phrasing the task was said in: a fact of the run
            one = replace(one, examples={**one.examples, PHRASING: k})
        return one

    said = lift_said(runs, lambda traj, places: lifted(traj, None, places))  # numbers the answers say as text
    if isinstance(said, Rejected):
        return said
    specs, places = said
    prefers: dict[int, dict[Site, tuple[Expr, tuple[Expr, ...]]]] = {}
    if len(specs) > 1 and any(s.alts for s in specs):
        groups: dict[Any, list[int]] = {}  # runs that made the same calls settle together (other calls: a branch)
        for k, spec in enumerate(specs):
            groups.setdefault(_calls_upto(spec, -1), []).append(k)
        for ks in groups.values():
            prefer = settle([specs[k] for k in ks]) if any(specs[k].alts for k in ks) else {}
            if prefer is None:
                return Rejected("the runs disagree on where a value comes from")
            prefers.update((k, prefer) for k in ks)
        specs = []
        for k, traj in enumerate(runs):
            one = lifted(traj, prefers[k], places)
            if isinstance(one, Rejected):
                return one
            specs.append(one)
    if not specs:
        return Rejected("a skill needs at least one run")
    specs = listed_alike(specs)  # a list one run listed from one element, listed as runs that listed more
    for k in alone(specs):  # no other run listed that list: its element by position, as the others took it
        one = lifted(runs[k], prefers.get(k), places, one_listed=False)
        if isinstance(one, Rejected):
            return one
        specs[k] = one
    specs = _picked_alike(specs, template)
    specs = agreed_formats(specs, runs)  # $99.99 and $1,042.50: one way to write amounts
    if places and (why := number_evidence(specs, runs, places)) is not None:
        return Rejected(why)
    extra = tuple((t.text, t.slots) for t in phrasings)
    if len(specs) == 1 and not phrasings and not evidence:
        return specs[0]
    wording = tuple(literal(t) for t in every) if phrasings else ()
    merged = merge(specs, runs, phrased=wording, evidence=evidence)
    if merged is None:
        merged = branched(specs, runs, phrased=wording, evidence=evidence)
    if merged is not None and evidence:
        merged = replace(merged, evidence=tuple(run.hash for run in evidence))
    if merged is None:
        return Rejected("the runs differ in more than the switch-like facts their guards check")
    return replace(merged, template=template.text, slots=template.slots, phrasings=extra) if phrasings else merged


def _with_variants(
    runs: list[Trajectory], *, name: str, template: TaskTemplate, importable: bool,
    phrasings: tuple[TaskTemplate, ...], evidence: tuple[Trajectory, ...],
) -> SkillSpec | Rejected:
    """The skill of ``template`` and its phrasings of the same parameters, with one variant per group
    of phrasings that take more (``_variants``): each learned from the runs said in its phrasings
    only (a run belongs to the first phrasing, in the file's order, that binds its task)."""
    groups = grouped(template, phrasings)
    if isinstance(groups, str):
        return Rejected(groups)
    order = [t for _extra, ts in groups for t in ts]
    owner = [next((k for k, t in enumerate(order) if t.bind(run.task) is not None), None) for run in runs]
    if None in owner:
        return Rejected("a run's task binds none of the skill's phrasings")
    specs: list[SkillSpec] = []
    start = 0
    for extra, ts in groups:
        mine = [run for run, k in zip(runs, owner, strict=True) if start <= k < start + len(ts)]  # type: ignore[operator]
        start += len(ts)
        if not mine:
            return Rejected(f"no run was said in {ts[0].text!r}: a phrasing of more parameters needs runs of its own")
        one = spec_from_runs(mine, name=variant_name(name, extra) if extra else name, template=ts[0], importable=importable,
                             phrasings=tuple(ts[1:]), evidence=evidence if not extra else ())
        if isinstance(one, Rejected):
            return Rejected(f"{one.reason} (the runs said as {ts[0].text!r})")
        specs.append(one)
    main, *variants = specs
    return replace(main, variants=tuple(variants))


def _picked_alike(specs: list[SkillSpec], template: TaskTemplate) -> list[SkillSpec]:
    """``specs`` with the arguments of calls they all made picked alike, where runs whose items all
    left out an optional part (``Return #W1: Grill; Desk Lamp``) picked an element by what they said
    and another run picked by that part too (``Backpack {'color': 'navy'}; Digital Camera``): every
    run's element, picked by all the parts its items said (see ``joined_picks``)."""
    optional = {(s.name, k, p.name) for s in template.slots if s.kind == LIST for k, p in enumerate(s.parts) if p.optional}
    if len(specs) < 2 or not optional or len({tuple(st.tool for st in spec.steps) for spec in specs}) > 1:
        return specs
    unsaid = [
        {part for listed, k, part in optional
         if all(type(item) is tuple and len(item) > k and item[k] is None for item in spec.examples.get(listed) or ())}
        for spec in specs
    ]
    steps = [list(spec.steps) for spec in specs]
    for i in range(len(specs[0].steps)):
        args = [spec.steps[i].args for spec in specs]
        if all(a == args[0] for a in args):
            continue
        joined = joined_picks(args, unsaid)
        if joined is not None:
            for k in range(len(specs)):
                steps[k][i] = replace(steps[k][i], args=joined)
    return [replace(spec, steps=tuple(st)) for spec, st in zip(specs, steps, strict=True)]


def merge(
    specs: list[SkillSpec], runs: list[Trajectory], *, phrased: Wording = (), evidence: tuple[Trajectory, ...] = (),
) -> SkillSpec | None:
    """One skill for runs (``specs[i]`` lifted from ``runs[i]``) that made the same calls from the same sources, or None.

    ``phrased``: the literal words of each of the skill's phrasings, if several: the runs' tasks may be said in any
    of them, as long as they take the same parameters, and which one is a fact. ``evidence``: see
    ``spec_from_runs``."""
    first = specs[0]
    runs = [folded_as(run, [st.each for st in spec.steps], spec.examples) for spec, run in zip(specs, runs, strict=True)]
    others = _aligned(first, evidence)
    for other in specs[1:]:
        said = (_params(first), _params(other)) if phrased else (
            (first.template, _unchosen(first.slots)), (other.template, _unchosen(other.slots))
        )
        if said[0] != said[1] or (first.output, first.tools, first.instances, first.alts) != (
            other.output, other.tools, other.instances, other.alts
        ) or len(first.steps) != len(other.steps):
            logger.debug("runs not merged: they said other things or made other calls: %s", [
                k for k, x, y in (("said", *said), ("output", first.output, other.output), ("tools", first.tools, other.tools),
                                  ("alts", first.alts, other.alts), ("steps", len(first.steps), len(other.steps))) if x != y])
            return None
        for sa, sb in zip(first.steps, other.steps, strict=True):
            if (sa.tool, sa.args, sa.var, sa.pre, sa.post, sa.each) != (sb.tool, sb.args, sb.var, sb.pre, sb.post, sb.each):
                logger.debug("runs not merged: step %s differs: %s", sa.tool, other.task[:80])
                return None
    core = acted_on(first)
    written = max((i for i, st in enumerate(first.steps) if not first.tools[st.tool].read), default=len(first.steps))
    kept: list[list[Guard]] = []
    varied: list[tuple[int, Guard, list[Any]]] = []  # (step, the fact, what each run observed)
    for i, step in enumerate(first.steps):
        kept.append([])
        facts: dict[tuple[Any, ...], Guard] = {}
        for spec in specs:
            for g in spec.steps[i].guards:
                facts.setdefault(fact_key(g), g)
        # a record noted in any run as saying which thing an item is (its options) is guarded in none
        notes = [g for g in facts.values() if g.kind == "unguarded" and g.value == ("items",)]
        for key, g in facts.items():
            if g in notes:
                kept[i].append(g)
                continue
            if any(g.path[: len(n.path)] == n.path for n in notes):
                continue
            if g.kind not in _OBSERVED:  # an agreement or a check: the same in every run, or no merge
                if any(g not in spec.steps[i].guards for spec in specs):
                    logger.debug("runs not merged: an agreement or check differs: %r", g)
                    return None
                kept[i].append(g)
                continue
            seen = [
                observe(g, run.calls[i].result, spec.examples, [c.result for c in run.calls])
                for spec, run in zip(specs, runs, strict=True)
            ]
            if _in_bag(g, i, specs, runs) and (MISSING in seen or len(set(seen)) > 1):
                if not any(k.kind == "unguarded" and k.path == g.path for k in kept[i]):
                    kept[i].append(Guard("unguarded", g.path, (len(set(seen)), len(seen))))
                continue
            numbers = [v for v in seen if v is not MISSING]
            if (
                g.kind == "eq" and len(set(numbers)) > 1 and all(type(v) in (int, float) for v in numbers)
                and not all(type(v) is int and 0 <= v <= 9 for v in numbers)
            ):
                continue  # a number that took several values, not all small (the sign and digits facts stay): an amount
            if MISSING in seen and g.kind == "eq" and g.path and type(g.path[-1]) is str:
                opt = Guard("opt", g.path)  # a field some records have (a card's brand): its values, or none
                as_opt = [
                    observe(opt, run.calls[i].result, spec.examples, [c.result for c in run.calls])
                    for spec, run in zip(specs, runs, strict=True)
                ]
                if MISSING not in as_opt:
                    g, seen = opt, as_opt
            if MISSING in seen and g.kind == "each" and (
                i >= written or _each_ambiguous(g, [(spec, run, i) for spec, run in zip(specs, runs, strict=True)])
            ):  # an item's task value picks several elements in a run that acted alike, or none in what the last write
                continue  # returned (it changed the item the task describes): no fact of one element of every item
            if MISSING in seen:
                present = _where_present(g, seen, [(spec, run, i) for spec, run in zip(specs, runs, strict=True)])
                if present is _AMBIGUOUS:
                    continue  # the element a task value picks is not one in a run that acted alike: no fact of it
                if present is None:
                    logger.debug("runs not merged: a path one run lacks: %r", g)
                    return None  # a path one run lacks: the runs saw worlds of another shape
                inner, m = present.value
                if inner is None:  # several values where the field is there: a switch whose values include its absence
                    varied.append((i, Guard("maybe", g.path, (g.kind, m)), [None if v is MISSING else v for v in seen] + [MISSING] * len(others)))
                else:
                    kept[i].append(present)
                continue
            pooled = _pooled(g, i, others)  # what runs of the same request by another route observed
            every = seen + [v for v in pooled if v is not MISSING]
            if all(v == seen[0] for v in every):
                kept[i].append(_as_guard(g, seen[0]))
            elif g.kind not in _SWITCHES:
                logger.debug("runs not merged: a fact that is not switch-like varied: %r", g)
                return None
            elif _attribute_like(g, every, ATTRIBUTE_RUNS if core(i, g) else CONTEXT_RUNS):
                kept[i].append(Guard("unguarded", g.path, (len(set(every)), len(every))))
            else:
                varied.append((i, g, seen + pooled))
    said = [spec.examples.get(PHRASING, 0) for spec in specs] + [MISSING] * len(others)
    if len(phrased) > 1:  # the words a task is said in are a switch: combined with the facts runs saw with them
        varied.append((0, Guard("said", (), len(phrased)), said))
    for slot in first.slots:  # texts a choice said are facts too: never combined with other facts no run showed with them
        if slot.kind == CHOICE and varied and len({tuple(_said_texts(spec, slot.name)) for spec in specs}) > 1:
            logger.debug("runs not merged: a choice said other texts where other facts varied: %s", slot.name)
            return None
    _combine(kept, varied, len(specs) + len(others), core, _answer_only(first), phrased)
    steps = tuple(
        Step(tool=s.tool, args=s.args, var=s.var, guards=tuple(kept[i]), pre=s.pre, post=s.post, each=s.each)
        for i, s in enumerate(first.steps)
    )
    all_runs: tuple[str, ...] = ()
    for spec in specs:
        all_runs += tuple(r for r in spec.runs if r not in all_runs)
    slots = tuple(  # a choice takes the texts its runs said
        Slot(s.name, s.kind, s.type, s.transform, "|".join(sorted({t for spec in specs for t in _said_texts(spec, s.name)},
                                                                 key=lambda x: (x.lower(), x))), s.same)
        if s.kind == CHOICE else s
        for s in first.slots
    )
    return SkillSpec(
        name=first.name, template=first.template, slots=slots, examples=first.examples, steps=steps,
        output=first.output, tools=first.tools, instances=first.instances, runs=all_runs, task=first.task,
        constants=first.constants, alts=first.alts,
    )


def branched(
    specs: list[SkillSpec], runs: list[Trajectory], *, phrased: Wording = (), evidence: tuple[Trajectory, ...] = (),
) -> SkillSpec | None:
    """One skill for runs of one template that acted in two ways, where one way is the other's first
    reads and an answer ("already a member": read, answer; otherwise read, write, answer), or both
    made the same reads and gave two answers ("X's manager is Y" / "X has no manager"): the
    reads, then ``if`` the fact that told the two groups apart in every run, the first group's
    guards and answer, else the second's guards and the rest. None where the runs do not split so.

    A *fork* is the same for ways whose calls part after the reads both made ("reset" / "reset,
    and unlock too"; "unlock, reset" / "reset"): the branch is taken right after those reads,
    before any write, and carries its own further calls (``Early.steps``).

    Each group is merged on its own (``merge``), so each branch keeps exactly the guards its
    runs showed; the fact (or the two facts, see ``_two_telling``) that picks a branch took
    disjoint values in the two groups. ``evidence`` (runs of the main way by another route, see
    ``spec_from_runs``) widens the main way's facts only; the branch's stay its own runs'.
    """
    groups: dict[Any, list[int]] = {}
    for k, spec in enumerate(specs):
        groups.setdefault(tuple((st.tool, st.args, st.each) for st in spec.steps), []).append(k)
    if len(groups) > 1 and any(len({specs[k].output for k in ks}) > 1 for ks in groups.values()):
        # two answers after the same calls beside runs that called more ("isn't locked" / "is disabled" after
        # the read that the unlocking runs made too): each answer a way of its own
        groups = {}
        for k, spec in enumerate(specs):
            groups.setdefault((tuple((st.tool, st.args, st.each) for st in spec.steps), spec.output), []).append(k)
    if len(groups) > 2:
        return _chained(specs, runs, list(groups.values()), phrased, evidence)
    if len(groups) == 1:  # the same reads, and two answers ("X's manager is Y" / "X has no manager")
        groups = {}
        for k, spec in enumerate(specs):
            groups.setdefault(spec.output, []).append(k)
        if len(groups) == 2 and any(not specs[0].tools[st.tool].read for st in specs[0].steps):
            return _after_write(specs, runs, list(groups.values()), phrased, evidence)
        if len(groups) < 2 or any(not specs[0].tools[st.tool].read for st in specs[0].steps):
            return None
        if len(groups) > 2:  # three answers or more after the same reads ("in a, b" / "in a" / "in no group")
            return _chained(specs, runs, list(groups.values()), phrased, evidence)
    if len(groups) != 2:
        return None
    short, long = sorted(groups.values(), key=lambda ks: (len(specs[ks[0]].steps), ks[0]))
    a, b = specs[short[0]], specs[long[0]]
    calls_a, calls_b = [(x.tool, x.args, x.each) for x in a.steps], [(x.tool, x.args, x.each) for x in b.steps]
    lead = 0  # the reads both ways made first
    while lead < len(calls_a) and lead < len(calls_b) and calls_a[lead] == calls_b[lead] and a.tools[a.steps[lead].tool].read:
        lead += 1
    after = lead - 1  # a fork where the short runs did more than these reads ("reset" / "reset, and unlock too")
    fork = lead < len(calls_a)
    if after < 0 or (fork and calls_a == calls_b):
        return None  # nothing read first, or the same calls with two answers after a write
    if not fork and len(b.steps) == len(a.steps) and a.output == b.output:
        return None
    if any(s.kind == CHOICE and len({tuple(_said_texts(spec, s.name)) for spec in specs}) > 1 for s in a.slots):
        return None  # a text a choice said is a fact no branch condition reads: the runs stay apart
    if phrased and not {specs[k].examples.get(PHRASING, 0) for k in short} & {specs[k].examples.get(PHRASING, 0) for k in long}:
        return None  # asked only in other words than the rest: another intent, not a branch of this one
    folded = [folded_as(run, [st.each for st in spec.steps], spec.examples) for spec, run in zip(specs, runs, strict=True)]
    orders = [(short, long), (long, short)] if len(a.steps) == len(b.steps) else [(short, long)]
    found = []
    for first_group, other_group in orders:  # two answers after the same reads: the branch where a value is none first
        sa = merge([specs[k] for k in first_group], [runs[k] for k in first_group], phrased=phrased)
        sb = merge([specs[k] for k in other_group], [runs[k] for k in other_group], phrased=phrased, evidence=evidence)
        if sa is None or sb is None:
            return None
        when = _telling_apart(sa, sb, [(specs[k], folded[k]) for k in first_group], [(specs[k], folded[k]) for k in other_group], after,
                              more_b=_aligned(specs[other_group[0]], evidence))
        if when is not None:
            found.append((when.value[1] != ((None,),), sa, sb, when))
    if not found:
        return None
    _later, sa, sb, when = min(found, key=lambda f: f[0])  # the first order on a tie
    steps = tuple(  # a read either branch names keeps its name
        replace(st, var=st.var or sa.steps[i].var) if i <= after else st for i, st in enumerate(sb.steps)
    )
    every = tuple(dict.fromkeys(h for spec in specs for h in spec.runs))
    early = Early(after, when, tuple(sa.steps[i].guards for i in range(after + 1)), sa.output, sa.steps[after + 1 :])
    return replace(sb, steps=steps, runs=every, early=(early,), tools={**sa.tools, **sb.tools})


def _after_write(
    specs: list[SkillSpec], runs: list[Trajectory], groups: list[list[int]], phrased: Wording, evidence: tuple[Trajectory, ...] = (),
) -> SkillSpec | None:
    """One skill for runs that made the same calls, writes among them, and gave two answers ("I could
    not change it (Error: ...)" / "I changed it"): what a write returned told them apart. The reads
    before the first write are guarded as all the runs showed them together (every run made that
    write in such a world), then the calls are made, then ``if`` a fact of what the first write and
    the calls after it returned that took other values in every run of one group than in any of
    the other's, that group's guards on those results and its answer; else the other's. Both
    groups made the same writes, so no branch writes what the agent would not. None where the
    runs do not split so, or where a write follows the first."""
    first, other = sorted(groups, key=lambda ks: ks[0])
    w = next(i for i, st in enumerate(specs[0].steps) if not specs[0].tools[st.tool].read)
    last = len(specs[0].steps) - 1
    if any(not specs[0].tools[st.tool].read for st in specs[0].steps[w + 1 :]):
        return None  # a later write would be made before the facts of what the first returned are checked
    if any(s.kind == CHOICE and len({tuple(_said_texts(spec, s.name)) for spec in specs}) > 1 for s in specs[0].slots):
        return None  # a text a choice said is a fact no branch condition reads
    before = [  # the runs as one: the same answer, no facts from the first write on
        replace(spec, output=specs[0].output, steps=tuple(replace(st, guards=()) if i >= w else st for i, st in enumerate(spec.steps)))
        for spec in specs
    ]
    joint = merge(before, runs, phrased=phrased, evidence=evidence)  # every run made the write, as the evidence did
    sa = merge([specs[k] for k in first], [runs[k] for k in first], phrased=phrased)
    sb = merge([specs[k] for k in other], [runs[k] for k in other], phrased=phrased, evidence=evidence)
    if joint is None or sa is None or sb is None:
        return None
    folded = [folded_as(run, [st.each for st in spec.steps], spec.examples) for spec, run in zip(specs, runs, strict=True)]
    sa = _as_read(sa, joint, w, [(specs[k], folded[k]) for k in first])
    sb = _as_read(sb, joint, w, [(specs[k], folded[k]) for k in other])
    when = _telling_apart(
        sa, sb, [(specs[k], folded[k]) for k in first], [(specs[k], folded[k]) for k in other], last, start=w, kinds=_RESULT_KINDS,
        more_b=_aligned(specs[other[0]], evidence),
    )
    if when is None:
        return None
    shared = tuple(joint.steps[i].guards for i in range(w))
    steps = tuple(
        replace(st, var=st.var or sa.steps[i].var, guards=shared[i] if i < w else st.guards) for i, st in enumerate(sb.steps)
    )
    early = Early(last, when, (*shared, *(sa.steps[i].guards for i in range(w, last + 1))), sa.output)
    every = tuple(dict.fromkeys(h for spec in specs for h in spec.runs))
    return replace(sb, steps=steps, runs=every, early=(early,))


def _as_read(spec: SkillSpec, joint: SkillSpec, w: int, group: list[tuple[SkillSpec, Trajectory]]) -> SkillSpec:
    """``spec`` (the runs of one answer after the write) with each text fact of what the write and later
    calls returned, on a field that held in every one of its runs what a read before the write showed
    there (the order's city, which changing its payment left as it was), judged as that read's fact
    was over all the runs (``joint``): not guarded where they showed it to be an attribute. The
    group's own runs are fewer: a city seen twice there is no switch the agent's answer turned on."""
    steps = list(spec.steps)
    for i in range(w, len(steps)):
        guards = []
        for g in steps[i].guards:
            note = next(
                (u for j in range(w) for u in joint.steps[j].guards
                 if g.kind == "eq" and u.kind == "unguarded" and u.path == g.path and _same_there(group, i, j, g.path)),
                None,
            )
            guards.append(note or g)
        steps[i] = replace(steps[i], guards=tuple(guards))
    return replace(spec, steps=tuple(steps))


def _same_there(group: list[tuple[SkillSpec, Trajectory]], i: int, j: int, path: tuple[Any, ...]) -> bool:
    """Whether the results of calls ``i`` and ``j`` held the same value at ``path`` in every run."""
    for spec, run in group:
        try:
            if resolve(run.calls[i].result, path, spec.examples) != resolve(run.calls[j].result, path, spec.examples):
                return False
        except (KeyError, IndexError, TypeError):
            return False
    return True


def _chained(
    specs: list[SkillSpec], runs: list[Trajectory], groups: list[list[int]], phrased: Wording, evidence: tuple[Trajectory, ...] = (),
) -> SkillSpec | None:
    """One skill for runs of one template that acted in three or more ways, each way but the last the
    first reads of the next and an answer ("already a member" after reading the user; "restricted"
    after reading the group too; otherwise the write): the runs that stopped first are a branch of
    the skill of all the others (``branched`` again), on a fact of their reads that took other values
    in every one of their runs than in any of the others'. None where the runs do not split so."""
    shortest = min(len(specs[ks[0]].steps) for ks in groups)
    for first in sorted((ks for ks in groups if len(specs[ks[0]].steps) == shortest), key=lambda ks: ks[0]):
        rest = sorted(k for ks in groups if ks is not first for k in ks)
        found = _first_branch(specs, runs, first, rest, phrased, evidence)
        if found is not None:  # of runs that stopped at one step, the first group a fact tells from all the others
            return found
    return None


def _first_branch(
    specs: list[SkillSpec], runs: list[Trajectory], first: list[int], rest: list[int], phrased: Wording,
    evidence: tuple[Trajectory, ...] = (),
) -> SkillSpec | None:
    """The runs ``first`` as the first branch of the skill of the runs ``rest`` (``branched`` again)."""
    others = branched([specs[k] for k in rest], [runs[k] for k in rest], phrased=phrased, evidence=evidence)
    a = specs[first[0]]
    after = len(a.steps) - 1
    if others is None or not others.early or after < 0 or after > min(e.after for e in others.early):
        return None  # the rest make no skill, or this branch would not be the first to stop
    if any(not a.tools[st.tool].read for st in a.steps):
        return None
    if [(x.tool, x.args, x.each) for x in a.steps] != [(x.tool, x.args, x.each) for x in others.steps[: after + 1]]:
        return None
    if any(s.kind == CHOICE and len({tuple(_said_texts(spec, s.name)) for spec in specs}) > 1 for s in a.slots):
        return None
    if phrased and not {specs[k].examples.get(PHRASING, 0) for k in first} & {specs[k].examples.get(PHRASING, 0) for k in rest}:
        return None
    sa = merge([specs[k] for k in first], [runs[k] for k in first], phrased=phrased)
    if sa is None:
        return None
    folded = [folded_as(run, [st.each for st in spec.steps], spec.examples) for spec, run in zip(specs, runs, strict=True)]
    when = _telling_apart(sa, others, [(specs[k], folded[k]) for k in first], [(specs[k], folded[k]) for k in rest], after,
                          more_b=_aligned(specs[rest[0]], evidence))
    if when is None:
        return None
    early = Early(after, when, tuple(sa.steps[i].guards for i in range(after + 1)), sa.output)
    every = tuple(dict.fromkeys(h for spec in specs for h in spec.runs))
    return replace(others, runs=every, early=(early, *others.early))


def _telling_apart(
    sa: SkillSpec, sb: SkillSpec, a_runs: list[tuple[SkillSpec, Trajectory]], b_runs: list[tuple[SkillSpec, Trajectory]], after: int,
    *, start: int = 0, kinds: frozenset[str] = _SWITCHES, more_b: list[tuple[dict[str, Any], Trajectory]] | None = None,
) -> Guard | None:
    """A fact of the calls ``start`` to ``after`` (of ``kinds``) that took other values in every run of
    one group than in any of the other's. A fact of what kind a value is (``has``: a text where
    the others had a record) becomes whether it is of the first group's kind. ``more_b``: runs of the
    second group's way by another route (``_aligned`` evidence): what they observed counts as the
    second group's too, so a fact they showed on both sides tells nothing apart.

    A relation of the task's values (the requester is the user's manager) is the reason a reviewer
    expects: where no one relation tells the groups apart but two do together, they are the branch,
    before another fact that happened to differ (the account was locked in the one run refused)."""
    other: Guard | None = None
    for i in range(start, after + 1):
        facts: dict[Any, Guard] = {}
        for g in (*sa.steps[i].guards, *sb.steps[i].guards):
            if g.kind in kinds and g.kind not in ("each", "chosen"):
                facts.setdefault(fact_key(g), g)
        telling = []
        for key, g in facts.items():
            seen_a = {observe(g, r.calls[i].result, s.examples, [c.result for c in r.calls]) for s, r in a_runs}
            seen_b = {observe(g, r.calls[i].result, s.examples, [c.result for c in r.calls]) for s, r in b_runs}
            seen_b |= {v for v in _pooled(g, i, more_b or []) if v is not MISSING}
            if MISSING not in seen_a | seen_b and not seen_a & seen_b:
                # a value there or none ("no manager on record") is a flag, whatever values it took where there
                nullish = g.kind == "eq" and (seen_a == {None} or seen_b == {None})
                flag = nullish or all(type(v) is bool for v in seen_a | seen_b)
                count = 2 if nullish else len(seen_a | seen_b)
                telling.append((_TELLING.get(g.kind, len(_TELLING)), count, not flag, repr(key), g, seen_a))
        if telling:  # a relation of the task's values, then the fact of fewest values, a flag: what a reviewer reads as the reason
            rank, *_order, g, seen_a = min(telling, key=lambda t: t[:4])
            if g.kind == "has":
                if len(seen_a) != 1:
                    continue
                return Guard("combo", (), (((i, Guard("has", g.path, next(iter(seen_a)))),), ((True,),)))
            found = Guard("combo", (), (((i, g),), tuple((v,) for v in sorted(seen_a, key=repr))))
            if rank < len(_TELLING):
                return found
            other = other or found
    if start:  # after a write: what its result says, alone
        return other
    if other is not None:
        return _two_telling(sa, sb, a_runs, b_runs, after, relations=True) or other
    return _two_telling(sa, sb, a_runs, b_runs, after)


def _two_telling(
    sa: SkillSpec, sb: SkillSpec, a_runs: list[tuple[SkillSpec, Trajectory]], b_runs: list[tuple[SkillSpec, Trajectory]], after: int,
    relations: bool = False,
) -> Guard | None:
    """Two switch-like facts of the first reads whose combinations in one group's runs are none of the
    other's (the account was locked, and the task was not said in the words that forbid unlocking):
    the combinations the first group showed. None where no two such facts tell the groups apart.

    Only flags and facts of few values by nature (a relation of task values, an emptiness, which
    words the task was said in) are paired: a pair with a fact of many values (a title) would tell
    any two groups apart by chance. ``relations``: relations of the task's values only."""
    facts: dict[Any, tuple[int, Guard]] = {}
    for i in range(after + 1):
        for g in (*sa.steps[i].guards, *sb.steps[i].guards):
            inner = g.value[0] if g.kind == "combo" else ((i, g),)
            for call, f in inner:
                if relations and f.kind not in _TELLING:
                    continue
                if call <= after and (f.kind in _DOMAINS or f.kind in ("said", "eq")):
                    facts.setdefault((call, fact_key(f)), (call, f))

    def seen(call: int, f: Guard, s: SkillSpec, r: Trajectory) -> Any:
        if f.kind == "said":
            return s.examples.get(PHRASING, 0)
        return observe(f, r.calls[call].result, s.examples, [c.result for c in r.calls])

    observed: list[tuple[tuple[int, Guard], list[Any], list[Any]]] = []
    for key in sorted(facts, key=repr):
        call, f = facts[key]
        va, vb = [seen(call, f, s, r) for s, r in a_runs], [seen(call, f, s, r) for s, r in b_runs]
        values = set(va) | set(vb)
        if MISSING in values or len(values) < 2:
            continue
        if f.kind == "eq" and not all(type(v) is bool or v is None for v in values):
            continue  # a field of many values by nature (a title, a department): never half of a branch condition
        observed.append(((call, f), va, vb))
    pairs = []
    for m, (fa, a1, b1) in enumerate(observed):
        for fb, a2, b2 in observed[m + 1 :]:
            seen_a, seen_b = set(zip(a1, a2, strict=True)), set(zip(b1, b2, strict=True))
            if not seen_a & seen_b:  # the reasons a reviewer expects first: relations of task values and the words said
                rank = sum(f.kind not in _TELLING and f.kind != "said" for _c, f in (fa, fb))
                pairs.append((rank, len(seen_a | seen_b), m, (fa, fb), seen_a))
    if not pairs:
        return None
    *_order, facts, seen_a = min(pairs, key=lambda p: p[:3])
    return Guard("combo", (), (facts, tuple(sorted(seen_a, key=repr))))


_RESULT_KINDS = _SWITCHES | {"has"}  # what tells apart runs after a write: its result's facts, and what kind it was
_TELLING = {"member": 0, "near": 0, "equal": 0, "same": 1, "cmp": 1}  # relations of task values before other facts


def same_program(a: SkillSpec, b: SkillSpec) -> dict[str, str] | None:
    """The names ``b`` gives ``a``'s parameters, if the two make the same calls from the same sources
    and give the same answer but for what they call their parameters ("{ticket_id_1}" and
    "{ticket_id}"); None if they do not (or a parameter would take two names)."""
    if [s.tool for s in a.steps] != [s.tool for s in b.steps] or len(a.steps) != len(b.steps):
        return None
    names: dict[str, str] = {}
    listed = shown(*(st.args for st in (*a.steps, *b.steps)), a.output, b.output)  # one element lists as more do
    pairs = [(settled(sa.args, listed), settled(sb.args, listed)) for sa, sb in zip(a.steps, b.steps, strict=True)]
    pairs.append((settled(a.output, listed), settled(b.output, listed)))
    for x, y in pairs:
        px = [e.name for e in _walk_all(x) if isinstance(e, Param)]
        py = [e.name for e in _walk_all(y) if isinstance(e, Param)]
        if len(px) != len(py):
            return None
        for m, n in zip(px, py, strict=True):
            if names.setdefault(m, n) != n:
                return None
    if len(set(names.values())) != len(names) or any(unformatted(substitute(x, names)) != unformatted(y) for x, y in pairs):
        return None  # (numbers written otherwise, $99.99 and $1,042.50, may be one format: spec_from_runs says)
    return names


def _walk_all(x: Any) -> list[Any]:
    """Every expression in an argument tuple or an expression, in order."""
    if isinstance(x, tuple):
        return [e for part in x for e in _walk_all(part)]
    if isinstance(x, str):
        return []
    return list(walk_exprs(x))


def renamed_template(template: TaskTemplate, names: dict[str, str]) -> TaskTemplate:
    """``template`` with its slots named as ``names`` says."""
    text = "".join(
        lit.replace("{", "{{").replace("}", "}}") + ("{" + names.get(field, field) + "}" if field is not None else "")
        for lit, field, _spec, _conv in string.Formatter().parse(template.text)
    )
    return TaskTemplate(text, [replace(s, name=names.get(s.name, s.name)) for s in template.slots])


def _params(spec: SkillSpec) -> list[tuple[str, str]]:
    """What a skill takes, whatever the words it is asked in: its parameters' names and types."""
    return sorted((s.name, s.type) for s in spec.slots if s.kind not in (CHOICE, IGNORED))


def _unchosen(slots: tuple[Slot, ...]) -> tuple[Slot, ...]:
    return tuple(Slot(s.name, s.kind, s.type, s.transform, None, s.same) if s.kind == CHOICE else s for s in slots)


def _said_texts(spec: SkillSpec, name: str) -> list[str]:
    slot = next((s for s in spec.slots if s.name == name), None)
    return choices(slot) if slot is not None else []  # a phrasing without that choice said none of its texts


def _combine(
    kept: list[list[Guard]], varied: list[tuple[int, Guard, list[Any]]], n_runs: int, core: Callable[[int, Guard], bool],
    answer_only: int | None = None, wording: Wording = (),
) -> None:
    """Guards for the facts that varied: each on its own where the runs showed every combination
    (and context facts always, see ``_relevance``), else jointly.

    At each step, the facts about what the runs act on known so far (its own and earlier
    steps') are checked together, so an unseen combination stops the skill at the first
    read that shows it. From step ``answer_only`` on (the last write, when the answer quotes
    nothing of its result or of later reads: see ``_answer_only``), the facts are checked
    together with each other but not with the facts before it: those were checked, as a
    combination some run showed, before the write was made.
    """
    joint = [v for v in varied if core(v[0], v[1])]
    for i in range(len(kept)):
        here = [v for v in joint if v[0] == i]
        upto = [v for v in joint if v[0] <= i and (answer_only is None or i < answer_only or v[0] >= answer_only)]
        combos = sorted({c for c in (tuple(v[2][r] for v in upto) for r in range(n_runs)) if MISSING not in c}, key=repr)
        full = 1
        for v in upto:
            full *= len(set(v[2]) - {MISSING})
        alone = [v for v in varied if v[0] == i and not core(v[0], v[1])]
        if here and len(combos) < full:
            kept[i].append(worded(upto, combos, n_runs, joint, wording))
        else:
            alone += here  # every combination was seen: each fact on its own
        for call, g, seen in sorted(alone, key=lambda v: varied.index(v)):
            allowed = sorted(set(seen) - {MISSING}, key=repr)
            if len(allowed) == len(_DOMAINS.get(g.kind, ())) or allowed == [False, True] or (g.kind == "said" and len(allowed) == g.value):
                continue  # every value the fact can take: it tells nothing apart
            if g.kind == "eq":
                kept[i].append(Guard("eq", g.path, allowed[0] if len(allowed) == 1 else tuple(allowed)))
            else:
                kept[i].append(Guard("combo", (), (((call, g),), tuple((a,) for a in allowed))))



# facts whose value is read off a result at a path, with task values named in the path or as the
# related value only: what a run by another route observes the same way
_POOLED = frozenset({"eq", "values", "len", "sign", "textsign", "count", "keys", "opt", "member", "near", "equal"})


def _aligned(first: SkillSpec, evidence: tuple[Trajectory, ...]) -> list[tuple[dict[str, Any], Trajectory]]:
    """The evidence runs whose calls after the first are ``first``'s steps, folded as its runs are,
    each with the task values its calls show: a value ``first`` passes as a whole argument
    (``get_order(order_id=order_id)``) is the argument that run's call was given there."""
    out = []
    eaches = [st.each for st in first.steps]
    mapped = [e for e in eaches if e is not None]
    for run in evidence:
        extra = len(run.calls) - (len(eaches) - len(mapped))
        if mapped and (len({e[0] for e in mapped}) != 1 or extra <= 0 or extra % len(mapped)):
            continue  # map steps over several lists, or calls that do not fold into them
        folded = folded_as(run, eaches, {mapped[0][0]: [None] * (extra // len(mapped))} if mapped else {})
        if len(folded.calls) != len(first.steps) or any(
            c.tool != st.tool for c, st in zip(folded.calls[1:], first.steps[1:], strict=True)
        ):
            continue
        params: dict[str, Any] = {}
        for st, call in zip(first.steps[1:], folded.calls[1:], strict=True):
            if st.each is None:
                for key, arg in st.args:
                    if isinstance(arg, Param) and key in call.args:
                        params.setdefault(arg.name, call.args[key])
        out.append((params, folded))
    return out


def _pooled(g: Guard, step: int, others: list[tuple[dict[str, Any], Trajectory]]) -> list[Any]:
    """What fact ``g`` of step ``step`` observed in each evidence run (``MISSING`` where it cannot say:
    the first call, which differs by route, a kind of fact not read off one result, or a task value
    that route's tasks do not say)."""
    if step == 0 or g.kind not in _POOLED:
        return [MISSING] * len(others)
    names = {k.name for k in g.path if isinstance(k, (At, Where))} | {
        n for k in g.path if isinstance(k, Where) for _f, n in k.also
    } | ({g.value[0]} if g.kind in ("member", "near", "equal") else set())
    return [
        observe(g, run.calls[step].result, params, [c.result for c in run.calls]) if names <= params.keys() else MISSING
        for params, run in others
    ]


def route_key(spec: SkillSpec) -> str | None:
    """What a skill shares with the skills of the same request reached by another identification
    route (the customer found by email, or by name and zip): its calls after the first, from the
    same sources (parameters by name), and its answer: of its main way, where it has branches (the
    runs that took a branch are another way, and no evidence of this one). None for a skill of one call."""
    if len(spec.steps) < 2:
        return None
    return repr(([(st.tool, st.args, st.each) for st in spec.steps[1:]], spec.output))


def _answer_only(spec: SkillSpec) -> int | None:
    """The step from which a skill's facts decide only its answer, and the answer says nothing they
    could change: the last write, where the answer quotes nothing of its result or of a later read
    (``"I requested an exchange for order {order_id}."``). None where there is no write, or the
    answer quotes the write's result (a status it reports: how the agent words it may hinge on that
    status together with what was read before)."""
    writes = [i for i, st in enumerate(spec.steps) if not spec.tools[st.tool].read]
    if not writes:
        return None
    last = writes[-1]
    if any(isinstance(e, Ref) and e.call >= last for e in walk_exprs(spec.output)):
        return None
    return last


_DOMAINS: dict[str, tuple[Any, ...]] = {
    "member": (False, True),
    "near": (False, True),
    "equal": (False, True),
    "same": (False, True),
    "cmp": (-1, 0, 1),
    "len": ("empty", "nonempty"),
    "sign": ("negative", "positive", "zero"),
    "textsign": ("negative", "positive", "zero"),
}


def _attribute_like(g: Guard, seen: list[Any], least: int = 0) -> bool:
    """A text value that took many values (at least ``least``, and more the more runs there are:
    a few cities recur among many customers, while a status seen in every run keeps to its few
    values): it names the thing, it does not decide."""
    distinct = len(set(seen))
    return (
        g.kind == "eq"
        and distinct >= (least or ATTRIBUTE_RUNS)
        and distinct * distinct >= len(seen)
        and all(type(v) is str for v in seen)
        and not all(enum_like(v) for v in seen)  # "pending", "on hold", ...: a vocabulary, however many seen
    )


def _in_bag(g: Guard, i: int, specs: list[SkillSpec], runs: list[Trajectory]) -> bool:
    """Whether ``g`` is about a dict of free-form attributes: its fields (``keys``) or a field of it,
    where the runs' dicts there share no field at all (a product's ``options``: ``color`` and
    ``size`` for one, ``pieces`` and ``theme`` for another). What such a dict holds says which
    thing the run was about; records of one kind (a card, a paypal account) share fields."""
    if g.kind not in _PRESENT_KINDS | {"opt"} or EACH in g.path:
        return False
    path = g.path if g.kind == "keys" else g.path[:-1]
    if g.kind != "keys" and (not g.path or type(g.path[-1]) is not str):
        return False
    fields: list[frozenset[str]] = []
    for spec, run in zip(specs, runs, strict=True):
        try:
            d = resolve(run.calls[i].result, path, spec.examples)
        except (KeyError, IndexError, TypeError):
            return False
        if type(d) is not dict or not d:
            return False
        fields.append(frozenset(d))
    return len(set(fields)) > 1 and not frozenset.intersection(*fields)


_PRESENT_KINDS = frozenset({"eq", "sign", "textsign", "len", "count", "digits", "keys", "equal", "member", "near", "cmp"})


def _where_present(g: Guard, seen: list[Any], where: list[tuple[SkillSpec, Trajectory, int]]) -> Guard | None:
    """A fact about a field some runs' records lack (a gift card's ``balance``, which a card has
    not), as a guard where the field is there: every run that had the field saw the same value
    (its inner fact is None where, for a sign or an emptiness, they saw several: the caller
    makes that a switch whose values include the field's absence), and every run had the
    record. Which fields a record has is a fact of its own (``keys``). ``_AMBIGUOUS`` where a
    task value on the path picked several elements in some run: no one element has the fact."""
    if g.kind not in _PRESENT_KINDS or not g.path or EACH in g.path:
        return None
    if ambiguous(g.path, [(run.calls[i].result, spec.examples) for spec, run, i in where]):
        return _AMBIGUOUS
    values = {v for v in seen if v is not MISSING}
    if len(values) != 1 and not (g.kind in ("sign", "textsign", "len") and values):
        return None  # several texts where the field is there: not one fact
    # the step that is not there in some runs: a field of a record, or the element a task value selects
    optional = [k for k, key in enumerate(g.path) if isinstance(key, Where) or (k == len(g.path) - 1 and type(key) is str)]
    for m in optional:
        reached = True
        for spec, run, i in where:
            try:
                parent = resolve(run.calls[i].result, g.path[:m], spec.examples)
            except (KeyError, IndexError, TypeError):
                return None
            if type(parent) is not (list if isinstance(g.path[m], Where) else dict):
                return None
            try:
                resolve(parent, g.path[m:], spec.examples)
            except (KeyError, IndexError, TypeError):
                reached = False
        if not reached:
            return Guard("present", g.path, (_as_guard(g, values.pop()) if len(values) == 1 else None, m))
    return None


_AMBIGUOUS = Guard("unguarded", (), ("ambiguous",))  # a task value that picked several elements in some run


def _each_ambiguous(g: Guard, where: list[tuple[SkillSpec, Trajectory, int]]) -> bool:
    """Whether a fact of every item of a list (``each``) is one a task value of some item picks
    several elements for in some run (the item changed is one of two of its name in the order
    the write returned): no fact of that item's element, as for a fact of one task value."""
    listed, var, inner = g.value
    seen = [
        (run.calls[i].result, {**spec.examples, **bound_item(var, item)})
        for spec, run, i in where
        if type(spec.examples.get(listed)) is list
        for item in spec.examples[listed]
    ]
    return ambiguous(inner.path, seen)


def _as_guard(g: Guard, observed: Any) -> Guard:
    """The fact ``g`` with the value every run observed (it may have been established in one run only)."""
    if g.kind in ("member", "near", "equal"):
        return Guard(g.kind, g.path, (g.value[0], observed))
    if g.kind == "cmp":
        return Guard("cmp", g.path, (g.value[0], g.value[1], observed, *g.value[3:]))
    if g.kind == "rank":
        return Guard("rank", g.path, (g.value[0], g.value[1], observed))
    if g.kind == "chosen":
        return Guard("chosen", g.path, (g.value[0], g.value[1], observed))
    if g.kind == "each":
        return Guard("each", g.path, (g.value[0], g.value[1], _as_guard(g.value[2], observed)))
    if g.kind == "same":
        return g if observed else Guard("differ", g.path, g.value)
    if g.kind in ("values", "pin", "eq", "len", "sign", "textsign", "count", "size", "has", "digits", "keys", "opt"):
        return Guard(g.kind, g.path, g.value if g.kind in ("values", "pin") else observed)
    return g


def settle(specs: list[SkillSpec]) -> dict[Site, tuple[Expr, tuple[Expr, ...]]] | None:
    """For each ambiguous choice, the sources every run agrees on (best first); None if some choice has none.

    Run 1 bound ``amount`` to ``order['total']`` but ``order['items'][0]['price']`` was
    equal; run 2 (where they differ) used ``order['total']``: settled on it.
    """
    sites = sorted({site for spec in specs for site, _ in spec.alts}, key=lambda s: (s[0], repr(s[1])))
    prefer: dict[Site, tuple[Expr, tuple[Expr, ...]]] = {}
    for site in sites:
        # the runs that made the calls up to the site's (or all of them, for the answer): a run that
        # stopped earlier or called otherwise (a branch) has no say on where that value comes from
        shape = next(_calls_upto(spec, site[0]) for spec in specs if site in dict(spec.alts))
        options = []
        for spec in (s for s in specs if _calls_upto(s, site[0]) == shape):
            chosen = _spec_expr(spec, site)
            if chosen is None:
                return None
            options.append([chosen, *dict(spec.alts).get(site, ())])
        common = [c for c in options[0] if all(c in o for o in options[1:])]
        if not common:
            return None
        prefer[site] = (common[0], tuple(common[1:]))
    return prefer


def _calls_upto(spec: SkillSpec, call: int) -> tuple[Any, ...]:
    """The tools and argument names of ``spec``'s calls up to ``call`` (all of them for the answer, -1)."""
    steps = spec.steps if call < 0 else spec.steps[: call + 1]
    return tuple((s.tool, tuple(k for k, _ in s.args)) for s in steps)


def _spec_expr(spec: SkillSpec, site: Site) -> Expr | None:
    try:
        return expr_at([(s.tool, s.args) for s in spec.steps], spec.output, site)
    except (KeyError, IndexError, TypeError):
        return None  # the runs' arguments do not have the same shape there


def without_idle_reads(traj: Trajectory) -> Trajectory:
    """``traj`` without the reads after its last write that fed nothing: no later call's argument
    and no part of the answer says a value they returned.

    Such a read cannot change what the run wrote, and the answer did not quote it, so it is
    no part of what the skill must do; and what it read is often unexplained by the task
    (the product of some other item looked up after the order was changed), which would
    keep every run apart. A run that wrote nothing keeps its reads (they are what its
    answer rests on), as does every read before the last write (its facts guard the writes).
    """
    last_write = max((i for i, c in enumerate(traj.calls) if c.tool in traj.tools and not traj.tools[c.tool].read), default=-1)
    if last_write < 0:
        return traj
    kept = list(traj.calls)
    said = _leaf_texts(traj.outcome.output)
    for i in range(len(kept) - 1, last_write, -1):
        call = kept[i]
        if call.error is not None:
            continue  # a failed read is what the run saw; never dropped silently
        returned = _leaf_texts(call.result)
        later = set().union(*(_leaf_texts(c.args) for c in kept[i + 1 :])) if i + 1 < len(kept) else set()
        if returned & (later | said) or any(r in s for r in returned for s in said if len(r) >= 4):
            continue
        del kept[i]
    if len(kept) == len(traj.calls):
        return traj
    logger.debug("%d idle reads after the last write left out of %r", len(traj.calls) - len(kept), traj.task[:80])
    return traj.model_copy(update={"calls": kept})


def _leaf_texts(value: Any) -> set[str]:
    """The scalar values in ``value`` as text (strings of two or more characters, numbers)."""
    leaves = _leaves(value)
    return {v.strip().lower() for v in leaves if type(v) is str and len(v.strip()) >= 2} | {
        str(v) for v in leaves if type(v) in (int, float)
    }
