"""Branching: runs of one template that acted in two ways or more → one skill with ``if``/``else``. Pure.

Each way is merged on its own (``_merging.merge``), so each branch keeps exactly the guards its runs
showed, with the facts the other ways' programs read of the calls both made where all its runs show
them (``_lent``: the record an order's payment names, read by the runs that paid, is a fact of the
world of a run that answered "already paid" too). A branch is taken on a fact that took other values
in every run of one way than in any run of the other (``_telling_apart``: a relation of the task's
values or a field of the record a value picks first, then a fact about what the runs act on before
one of its context), or on two facts together (``_two_telling``): the branch after the reads both
ways made ("already a member"), a fork whose calls part there ("reset, and unlock too"), or the
answer after a write that told them apart ("I could not change it"). There, the reads before the
write are checked as all the runs showed them together, and each branch checks its own runs' facts
of them once it is known which is taken.
"""


from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from ._census import World
from ._formats import written_later
from ._guards import MISSING, OBSERVED, fact_key, observe
from ._merging import _DOMAINS, _SWITCHES, _aligned, _as_guard, _pooled, _said_texts, merge
from ._records import folded_as
from ._relevance import acted_on
from ._spec import Early, Guard, SkillSpec
from ._template import CHOICE, PHRASING
from ._trajectory import Trajectory
from ._wording import Wording
from ._values import resolve

logger = logging.getLogger(__name__)

__all__ = ["branched"]

def branched(
    specs: list[SkillSpec], runs: list[Trajectory], *, phrased: Wording = (), evidence: tuple[Trajectory, ...] = (),
    world: World | None = None,
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
    ``spec_from_runs``) widens the main way's facts only; the branch's stay its own runs'. ``world``: see ``merge``.
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
        return _chained(specs, runs, list(groups.values()), phrased, evidence, world)
    if len(groups) == 1:  # the same reads, and two answers ("X's manager is Y" / "X has no manager")
        groups = {}
        for k, spec in enumerate(specs):
            groups.setdefault(spec.output, []).append(k)
        if len(groups) >= 2 and any(not specs[0].tools[st.tool].read for st in specs[0].steps):
            return _after_chain(specs, runs, list(groups.values()), phrased, evidence, world)
        if len(groups) < 2 or any(not specs[0].tools[st.tool].read for st in specs[0].steps):
            return None
        if len(groups) > 2:  # three answers or more after the same reads ("in a, b" / "in a" / "in no group")
            return _chained(specs, runs, list(groups.values()), phrased, evidence, world)
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
        sa = merge(_lent(specs, folded, first_group, other_group, after), [runs[k] for k in first_group], phrased=phrased,
                   world=world)
        sb = merge(_lent(specs, folded, other_group, first_group, after), [runs[k] for k in other_group], phrased=phrased,
                   evidence=evidence, world=world)
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
    early = Early(after, when, _unstated(tuple(sa.steps[i].guards for i in range(after + 1)), when), sa.output, sa.steps[after + 1 :])
    return replace(sb, steps=steps, runs=every, early=(early,), tools={**sa.tools, **sb.tools})


_MAX_ANSWERS = 4  # answers after one write that branch on what told them apart, each from all the later ones


def _after_chain(
    specs: list[SkillSpec], runs: list[Trajectory], groups: list[list[int]], phrased: Wording, evidence: tuple[Trajectory, ...] = (),
    world: World | None = None,
) -> SkillSpec | None:
    """One skill for runs that made the same calls, writes among them, and gave two answers or more (a
    refund "back on your Visa card ending in 4321" / "on your gift card" / "on your PayPal account"): each
    answer in turn a branch after the last call, told apart from all the answers after it by a fact
    (``_after_write``; the runs of the answers after it are one skill of their own branches). The first
    order of the answers that splits so (by their first runs); None where none does."""
    if len(groups) == 2:
        return _after_write(specs, runs, groups, phrased, evidence, world)
    if len(groups) > _MAX_ANSWERS:
        return None
    for first in sorted(groups, key=lambda ks: ks[0]):
        rest = sorted(k for ks in groups if ks is not first for k in ks)
        at = {k: n for n, k in enumerate(rest)}
        later = _after_chain([specs[k] for k in rest], [runs[k] for k in rest],
                             [[at[k] for k in ks] for ks in groups if ks is not first], phrased, evidence, world)
        found = None if later is None else _after_write(specs, runs, [first, rest], phrased, evidence, world, later=later)
        if found is not None:
            return found
    return None


def _after_write(
    specs: list[SkillSpec], runs: list[Trajectory], groups: list[list[int]], phrased: Wording, evidence: tuple[Trajectory, ...] = (),
    world: World | None = None, later: SkillSpec | None = None,
) -> SkillSpec | None:
    """One skill for runs that made the same calls, writes among them, and gave two answers ("I could
    not change it (Error: ...)" / "I changed it"): what a write returned told them apart. The reads
    before the first write are guarded as all the runs showed them together (every run made that
    write in such a world), then the calls are made, then ``if`` a fact of what the first write and
    the calls after it returned that took other values in every run of one group than in any of
    the other's, that group's guards on those results and its answer; else the other's. Both
    groups made the same writes, so no branch writes what the agent would not. None where the
    runs do not split so, or where a write follows the first.

    ``later``: the skill of the second group's runs, where they gave several answers (``_after_chain``):
    the branch of the first group goes before its branches."""
    first, other = groups if later is not None else sorted(groups, key=lambda ks: ks[0])
    w = next(i for i, st in enumerate(specs[0].steps) if not specs[0].tools[st.tool].read)
    last = len(specs[0].steps) - 1
    specs = [written_later(spec, w, last) for spec in specs]  # how each answer writes a number: in its own branch
    if any(not specs[0].tools[st.tool].read for st in specs[0].steps[w + 1 :]):
        return None  # a later write would be made before the facts of what the first returned are checked
    if any(s.kind == CHOICE and len({tuple(_said_texts(spec, s.name)) for spec in specs}) > 1 for s in specs[0].slots):
        return None  # a text a choice said is a fact no branch condition reads
    before = [  # the runs as one: the same answer, no facts from the first write on
        replace(spec, output=specs[0].output, steps=tuple(replace(st, guards=()) if i >= w else st for i, st in enumerate(spec.steps)))
        for spec in specs
    ]
    joint = merge(before, runs, phrased=phrased, evidence=evidence, world=world)  # every run made the write, as the evidence did
    if joint is None:
        return None
    # a field all the runs showed to be an attribute (a city each) is none in a group of fewer either
    attributes = {(i, g.path): g for i in range(w) for g in joint.steps[i].guards if g.kind == "unguarded"}
    folded = [folded_as(run, [st.each for st in spec.steps], spec.examples) for spec, run in zip(specs, runs, strict=True)]
    sa = merge(_lent(specs, folded, first, other, last), [runs[k] for k in first], phrased=phrased, attributes=attributes,
               world=world)
    sb = later or merge(_lent(specs, folded, other, first, last), [runs[k] for k in other], phrased=phrased, evidence=evidence,
                        attributes=attributes, world=world)
    if sa is None or sb is None:
        return None
    sa = _as_read(sa, joint, w, [(specs[k], folded[k]) for k in first])
    sb = sb if later is not None else _as_read(sb, joint, w, [(specs[k], folded[k]) for k in other])
    when = _telling_apart(
        sa, sb, [(specs[k], folded[k]) for k in first], [(specs[k], folded[k]) for k in other], last, wrote=w,
        attributes=attributes, more_b=_aligned(specs[other[0]], evidence),
    )
    if when is None:
        return None
    shared = tuple(joint.steps[i].guards for i in range(w))
    steps = tuple(  # before the write, what all runs showed together; each way's own, once it is known which
        replace(st, var=st.var or sa.steps[i].var, guards=shared[i], own=st.own if later is not None else st.guards)
        if i < w else st for i, st in enumerate(sb.steps)
    )
    early = Early(last, when, _unstated(tuple(sa.steps[i].guards for i in range(last + 1)), when), sa.output)
    every = tuple(dict.fromkeys(h for spec in specs for h in spec.runs))
    return replace(sb, steps=steps, runs=every, early=(early, *sb.early), tools={**sa.tools, **sb.tools})


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
    world: World | None = None,
) -> SkillSpec | None:
    """One skill for runs of one template that acted in three or more ways, each way but the last the
    first reads of the next and an answer ("already a member" after reading the user; "restricted"
    after reading the group too; otherwise the write): the runs that stopped first are a branch of
    the skill of all the others (``branched`` again), on a fact of their reads that took other values
    in every one of their runs than in any of the others'. None where the runs do not split so."""
    shortest = min(len(specs[ks[0]].steps) for ks in groups)
    for first in sorted((ks for ks in groups if len(specs[ks[0]].steps) == shortest), key=lambda ks: ks[0]):
        rest = sorted(k for ks in groups if ks is not first for k in ks)
        found = _first_branch(specs, runs, first, rest, phrased, evidence, world)
        if found is not None:  # of runs that stopped at one step, the first group a fact tells from all the others
            return found
    return None


def _first_branch(
    specs: list[SkillSpec], runs: list[Trajectory], first: list[int], rest: list[int], phrased: Wording,
    evidence: tuple[Trajectory, ...] = (), world: World | None = None,
) -> SkillSpec | None:
    """The runs ``first`` as the first branch of the skill of the runs ``rest`` (``branched`` again)."""
    a = specs[first[0]]
    after = len(a.steps) - 1
    folded = [folded_as(run, [st.each for st in spec.steps], spec.examples) for spec, run in zip(specs, runs, strict=True)]
    lent = _lent(specs, folded, rest, first, after) if 0 <= after and all(
        [(x.tool, x.args, x.each) for x in a.steps] == [(x.tool, x.args, x.each) for x in specs[k].steps[: after + 1]] for k in rest
    ) else [specs[k] for k in rest]
    others = branched(lent, [runs[k] for k in rest], phrased=phrased, evidence=evidence, world=world)
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
    sa = merge(_lent(specs, folded, first, rest, after), [runs[k] for k in first], phrased=phrased, world=world)
    if sa is None:
        return None
    when = _telling_apart(sa, others, [(specs[k], folded[k]) for k in first], [(specs[k], folded[k]) for k in rest], after,
                          more_b=_aligned(specs[rest[0]], evidence))
    if when is None:
        return None
    early = Early(after, when, _unstated(tuple(sa.steps[i].guards for i in range(after + 1)), when), sa.output)
    every = tuple(dict.fromkeys(h for spec in specs for h in spec.runs))
    return replace(others, runs=every, early=(early, *others.early))


def _telling_apart(
    sa: SkillSpec, sb: SkillSpec, a_runs: list[tuple[SkillSpec, Trajectory]], b_runs: list[tuple[SkillSpec, Trajectory]], after: int,
    *, wrote: int | None = None, attributes: dict[tuple[int, Any], Guard] | None = None,
    more_b: list[tuple[dict[str, Any], Trajectory, bool]] | None = None,
) -> Guard | None:
    """A switch-like fact of the calls up to ``after`` that took other values in every run of one group
    than in any of the other's. A fact of what kind a value is (``has``: a text where the others had a
    record) becomes whether it is of the first group's kind. ``more_b``: runs of the second group's way
    by another route (``_aligned`` evidence): what they observed counts as the second group's too, so a
    fact they showed on both sides tells nothing apart.

    ``wrote``: both groups made the same calls, the first write at step ``wrote``, and answered two ways:
    the facts of what it and the calls after it returned come first (of any kind, ``has`` too), then
    those of the reads before it, but not ``attributes`` (a step and path all the runs together showed
    to be an attribute: the city of each of six customers); and no two facts are paired.

    A relation of the task's values (the requester is the user's manager), or a field of the record a
    value picks (the kind of method an order was paid with) is the reason a reviewer expects: where no
    one such fact tells the groups apart but two relations do together, they are the branch. Then a
    fact about what the runs act on (``_relevance``) before one about its context, which merely
    happened to differ (the state the customer lives in); then the first call's, the fact of fewest
    values, a flag."""
    steps = list(range(after + 1)) if wrote is None else [*range(wrote, after + 1), *range(wrote)]
    acted = (acted_on(sa), acted_on(sb))
    telling = []
    for order, i in enumerate(steps):
        kinds = _RESULT_KINDS if wrote is not None and i >= wrote else _SWITCHES
        facts: dict[Any, Guard] = {}
        for g in (*sa.steps[i].guards, *sb.steps[i].guards):
            if g.kind in kinds and g.kind != "each" and (i, g.path) not in (attributes or {}):  # every item's fact: no condition reads it
                facts.setdefault(fact_key(g), g)
        for key, g in facts.items():
            seen_a = {observe(g, r.calls[i].result, s.examples, [c.result for c in r.calls]) for s, r in a_runs}
            seen_b = {observe(g, r.calls[i].result, s.examples, [c.result for c in r.calls]) for s, r in b_runs}
            seen_b |= {v for v in _pooled(g, i, more_b or []) if v is not MISSING}
            if MISSING in seen_a | seen_b or seen_a & seen_b or (g.kind == "has" and len(seen_a) != 1):
                continue
            # a value there or none ("no manager on record") is a flag, whatever values it took where there
            nullish = g.kind == "eq" and (seen_a == {None} or seen_b == {None})
            flag = nullish or all(type(v) is bool for v in seen_a | seen_b)
            count = 2 if nullish else len(seen_a | seen_b)
            rank = _TELLING.get(g.kind)
            tier = 0 if rank is not None else 1 if any(f(i, g) for f in acted) else 2
            telling.append(((tier, order, rank or 0, count, not flag, repr(key)), i, g, seen_a))
    found: Guard | None = None
    if telling:
        (tier, *_order), i, g, seen_a = min(telling, key=lambda t: t[0])
        if g.kind == "has":
            found = Guard("combo", (), (((i, Guard("has", g.path, next(iter(seen_a)))),), ((True,),)))
        else:
            found = Guard("combo", (), (((i, g),), tuple((v,) for v in sorted(seen_a, key=repr))))
        if tier == 0 or wrote is not None:
            return found
    if found is not None:
        return _two_telling(sa, sb, a_runs, b_runs, after, relations=True) or found
    return _two_telling(sa, sb, a_runs, b_runs, after)


def _unstated(guards: tuple[tuple[Guard, ...], ...], when: Guard) -> tuple[tuple[Guard, ...], ...]:
    """A branch's guards (one tuple per step) less the one its condition states: a branch taken
    ``if pick(...)['source'] in ('paypal',):`` needs no ``require(pick(...)['source'] == 'paypal', ...)``."""
    facts, seen = when.value
    if len(facts) != 1 or len(seen) != 1:
        return guards
    (call, fact), = facts
    stated = _as_guard(fact, seen[0][0])
    return tuple(tuple(g for g in gs if not (i == call and g == stated)) for i, gs in enumerate(guards))


def _lent(specs: list[SkillSpec], folded: list[Trajectory], mine: list[int], theirs: list[int], upto: int) -> list[SkillSpec]:
    """The specs of the runs ``mine``, each with the facts the runs ``theirs`` have (their programs read
    other things: the record an order's payment names) on the calls up to ``upto`` that both made, where
    every run of ``mine`` shows them too: facts of its runs' worlds, which the branch of ``mine`` checks as
    the runs showed them (``merge``), though its own program reads none of them. Not the kind and lines of
    what their program passes on or quotes (``has``, ``lines``): the shape of its data, no decision's."""
    first = specs[mine[0]]
    calls = [(st.tool, st.args, st.each) for st in first.steps[: upto + 1]]
    lent: list[dict[Any, Guard]] = [{} for _ in calls]
    for k in theirs:
        for i, st in enumerate(specs[k].steps[: len(calls)]):
            if (st.tool, st.args, st.each) != calls[i]:
                break
            for g in st.guards:
                if g.kind in _LENT:
                    lent[i].setdefault(fact_key(g), g)
    for i, facts in enumerate(lent):
        have = {fact_key(h) for k in mine for h in specs[k].steps[i].guards}
        read = {h.path for k in mine for h in specs[k].steps[i].guards if h.kind == "has"}  # what the program passes on or quotes

        def shown(g: Guard, i: int = i) -> bool:
            return all(observe(g, folded[k].calls[i].result, specs[k].examples, [c.result for c in folded[k].calls]) != MISSING
                       for k in mine)

        def _seen(g: Guard, i: int = i) -> Any:
            k = mine[0]
            return observe(g, folded[k].calls[i].result, specs[k].examples, [c.result for c in folded[k].calls])

        # not one they have already, a value their own program reads as data, or one some run of theirs does not show;
        # a list of values as the first of them shows it (the value merging keeps for it is the guard's own)
        lent[i] = {key: Guard(g.kind, g.path, _seen(g, i)) if g.kind == "values" else g
                   for key, g in facts.items() if key not in have and g.path not in read and shown(g)}
    return [
        replace(specs[k], steps=tuple(replace(st, guards=(*st.guards, *lent[i].values())) if i < len(lent) else st
                                      for i, st in enumerate(specs[k].steps)))
        for k in mine
    ]


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


# facts of what a world holds: not the shape of the data a program passes on (``has``, ``lines``), nor the
# values a program took by position (``pin``: what it took there, kept as learned)
_LENT = OBSERVED - {"has", "lines", "pin"}
_RESULT_KINDS = _SWITCHES | {"has"}  # what tells apart runs after a write: its result's facts, and what kind it was
# relations of task values, and fields of the record a value picks, before other facts
_TELLING = {"member": 0, "near": 0, "equal": 0, "same": 1, "cmp": 1, "chosen": 1}


