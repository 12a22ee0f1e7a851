"""Merging: runs whose programs agree → one skill whose guards are the facts their worlds showed. Pure.

- a fact that held in every run stays a guard as it is;
- a switch-like fact that varied (a categorical value, a flag over a list's elements,
  a list's emptiness, a number's sign, a task value's membership or equality, a value
  taken by position) keeps only the values, and for several such facts the
  combinations, the runs showed together: after (fraud_hold False, approved False)
  and (True, True), the world (True, False) is a miss; facts of the last write's result (and of
  later reads), when the answer quotes none of them, are combined with each other only: the
  facts before the write were checked, in a combination some run showed, before it was made;
- which codes a list of code words held (an order's tags): any code some run's list held, and no
  other (``among``): each run that acted alike adds its codes, as attributes widen;
- a text fact that took at least ``ATTRIBUTE_RUNS`` values, more of them the more runs there are
  that acted alike describes *which* thing the run was about (a name, a city), not
  *what to do*: it is not guarded, and the skill says on how many runs that rests. A fact
  about what the runs do not act on (``_relevance``: the customer's home city when an
  order is returned) needs ``CONTEXT_RUNS`` values.
  Code words (``pending``, ``on hold``, ``IN_TRANSIT``) are a program's vocabulary, never an
  attribute: a status new in each of five runs is still a status.

Facts are compared by observing each one in every run's recorded results
(``observe``), so runs merge even where a fact was established in one run only (a
list empty in one run and not in another). Anything else that differs (another
call, argument source, check capture, or a fact whose path one run lacks) keeps the
runs apart.
"""


from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ._census import World
from ._guards import MISSING, OBSERVED, fact_key, observe
from ._joins import listings
from ._relevance import acted_on
from ._records import folded_as
from ._spec import At, Const, Guard, Param, Ref, SkillSpec, Step, Where, range_guard, reaching, spans_of
from ._template import CHOICE, IGNORED, PHRASING, Slot, choices
from ._trajectory import Trajectory
from ._wording import Wording, worded
from ._values import EACH, ambiguous, bound_item, enum_like, resolve, walk_exprs

logger = logging.getLogger(__name__)

__all__ = ["ATTRIBUTE_RUNS", "CONTEXT_RUNS", "merge"]

ATTRIBUTE_RUNS = 5  # runs that acted alike, each with another value, before a text fact counts as an attribute
CONTEXT_RUNS = 3  # the same for a fact about what the runs do not act on (the customer's city when an order is returned)
_OBSERVED = OBSERVED  # facts that can be read off any run's results
_SWITCHES = OBSERVED - {"has", "each"}  # of those, kept as sets of values


def merge(
    specs: list[SkillSpec], runs: list[Trajectory], *, phrased: Wording = (), evidence: tuple[Trajectory, ...] = (),
    attributes: dict[tuple[int, tuple[Any, ...]], Guard] | None = None, world: World | None = None,
) -> SkillSpec | None:
    """One skill for runs (``specs[i]`` lifted from ``runs[i]``) that made the same calls from the same sources, or None.

    ``phrased``: the literal words of each of the skill's phrasings, if several: the runs' tasks may be said in any
    of them, as long as they take the same parameters, and which one is a fact. ``evidence``: see
    ``spec_from_runs``. ``attributes``: (step, path) → the note of a field more runs than these (all the runs of a
    skill, these one branch's) showed to be an attribute: not guarded here either, whatever values these took.
    ``world``: the fields the library's runs show name things (``_census``): a context fact of one of them
    that these runs showed with two values or more is not guarded."""
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
        _length_answered(facts, i, first, specs, runs)
        # a record noted in any run as saying which thing an item is (its options) is guarded in none
        notes = [g for g in facts.values() if g.kind == "unguarded" and g.value == ("items",)]
        for key, g in facts.items():
            if g in notes:
                kept[i].append(g)
                continue
            if any(g.path[: len(n.path)] == n.path for n in notes):
                continue
            if attributes and g.kind in _OBSERVED and (i, g.path) in attributes:
                if attributes[(i, g.path)] not in kept[i]:
                    kept[i].append(attributes[(i, g.path)])
                continue
            if g.kind == "codes":  # the codes a list held in each run: any of them, as attributes are widened
                held = [next((h.value for h in spec.steps[i].guards if fact_key(h) == key), None)
                        if _holds(run.calls[i].result, g.path, spec.examples) else () for spec, run in zip(specs, runs, strict=True)]
                if all(h is not None for h in held):  # else a run's list held a task value, or other things
                    kept[i].append(Guard("codes", g.path, tuple(sorted({c for h in held if h for c in h}))))
                continue
            if g.kind == "alike":  # a code word probes showed not to decide: any code some run or probe acted alike for
                seen = [h.value for spec in specs for h in spec.steps[i].guards if fact_key(h) == key]
                kept[i].append(Guard("alike", g.path, tuple(sorted({c for v in seen for c in v}))))
                continue
            if g.kind == "range":  # a number probes showed not to decide: over every run's span
                # runs that acted alike over spans apart keep to each: the number may decide between them
                probed = [sp for spec in specs for h in spec.steps[i].guards if fact_key(h) == key for sp in spans_of(h)]
                spans = list(spans_of(range_guard(g.path, probed, g.value[2])))
                for spec, run in zip(specs, runs, strict=True):  # a run with no span there: its own value, reached to
                    if not any(fact_key(h) == key for h in spec.steps[i].guards):
                        for v in _number_at(run.calls[i].result, g.path, spec.examples, g.value[2]):
                            spans = reaching(spans, v)
                kept[i].append(range_guard(g.path, spans, g.value[2]))
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
            if MISSING in seen and g.kind == "chosen" and isinstance(g.value[0].key, Ref):
                continue  # a record one run's read named by its id (``_guards._joined``) that another's did not name
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
            elif world and not core(i, g) and (named := _names_a_thing(g, every, step.tool, world)) is not None:
                kept[i].append(named)
            else:
                varied.append((i, g, seen + pooled))
    said = [spec.examples.get(PHRASING, 0) for spec in specs] + [MISSING] * len(others)
    if len(phrased) > 1:  # the words a task is said in are a switch: combined with the facts runs saw with them
        varied.append((0, Guard("said", (), len(phrased)), said))
    for slot in first.slots:  # texts a choice said are facts too: never combined with other facts no run showed with them
        if slot.kind == CHOICE and varied and len({tuple(_said_texts(spec, slot.name)) for spec in specs}) > 1:
            logger.debug("runs not merged: a choice said other texts where other facts varied: %s", slot.name)
            return None
    _combine(kept, varied, len(specs) + len(others), core, _answer_only(first), phrased, _asked(first))
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
        constants=first.constants, alts=first.alts, probed=tuple(dict.fromkeys(line for spec in specs for line in spec.probed)),
    )


def _holds(result: Any, path: tuple[Any, ...], params: dict[str, Any]) -> bool:
    """Whether ``result`` has something at ``path`` other than an empty list (which holds no codes)."""
    try:
        return resolve(result, path, params) != []
    except (KeyError, IndexError, TypeError):
        return True


def _said_texts(spec: SkillSpec, name: str) -> list[str]:
    slot = next((s for s in spec.slots if s.name == name), None)
    return choices(slot) if slot is not None else []  # a phrasing without that choice said none of its texts


def _combine(
    kept: list[list[Guard]], varied: list[tuple[int, Guard, list[Any]]], n_runs: int, core: Callable[[int, Guard], bool],
    answer_only: int | None = None, wording: Wording = (), asked: frozenset[str] = frozenset(),
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
            kept[i].append(worded(upto, combos, n_runs, joint, wording, asked))
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
_POOLED = frozenset({"eq", "values", "len", "lines", "sign", "textsign", "count", "keys", "opt", "member", "near", "equal"})


def _aligned(first: SkillSpec, evidence: tuple[Trajectory, ...]) -> list[tuple[dict[str, Any], Trajectory, bool]]:
    """The evidence runs whose calls after the first are ``first``'s steps, folded as its runs are,
    each with the task values its calls show: a value ``first`` passes as a whole argument
    (``get_order(order_id=order_id)``) is the argument that run's call was given there. The flag
    says whether the run's first call is ``first``'s too: the same tool, given the same task values
    (``get_user(username=username)``, a phrasing learned on its own), not another route to them."""
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
        out.append((params, folded, _same_first(first.steps[0], folded.calls[0].tool, folded.calls[0].args, params)))
    return out


def _same_first(step: Step, tool: str, args: dict[str, Any], params: dict[str, Any]) -> bool:
    """Whether a call of ``tool`` with ``args`` is ``step`` (a skill's first), given the task values
    ``params`` (the run's, as its later calls show them; those the first call alone takes are added):
    each argument the same constant, or the task value ``step`` passes whole."""
    if step.each is not None or tool != step.tool or {k for k, _a in step.args} != set(args):
        return False
    own: dict[str, Any] = {}
    for key, arg in step.args:
        if isinstance(arg, Param):
            if own.setdefault(arg.name, params.get(arg.name, args[key])) != args[key]:
                return False
        elif not (isinstance(arg, Const) and type(arg.value) is type(args[key]) and arg.value == args[key]):
            return False
    params.update(own)
    return True


def _pooled(g: Guard, step: int, others: list[tuple[dict[str, Any], Trajectory, bool]]) -> list[Any]:
    """What fact ``g`` of step ``step`` observed in each evidence run (``MISSING`` where it cannot say:
    the first call where it was another route to the task's values, a kind of fact not read off one
    result, or a task value that route's tasks do not say)."""
    if g.kind not in _POOLED:
        return [MISSING] * len(others)
    names = {k.name for k in g.path if isinstance(k, (At, Where))} | {
        n for k in g.path if isinstance(k, Where) for _f, n in k.also
    } | ({g.value[0]} if g.kind in ("member", "near", "equal") else set())
    return [
        observe(g, run.calls[step].result, params, [c.result for c in run.calls])
        if (step or same_first) and names <= params.keys() else MISSING
        for params, run, same_first in others
    ]


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


def _length_answered(
    facts: dict[tuple[Any, ...], Guard], step: int, first: SkillSpec, specs: list[SkillSpec], runs: list[Trajectory],
) -> None:
    """A listing's length, in ``facts`` of step ``step``, replaced by its count class where runs that acted alike
    listed three elements or more.

    Two elements listed ("a, b") do not say how three are (``_lifting``: "a, b and c"?), so a run that listed
    two guards the length it listed. A run of the same program that listed three or more shows it: any
    length of two or more is listed alike, and the exact length is no decision of the runs. What stays is
    whether one element or several was listed (one shows no separator, and may be said otherwise), a
    switch like any other. A length a run took elements by position in (``_runchecks``) is not a listing's,
    and stays.
    """
    listed = {path for call, path in listings(first) if call == step}
    for key, g in list(facts.items()):
        if g.kind != "size" or g.path not in listed or any(
            h.kind == "pin" and h.path[: len(g.path)] == g.path for spec in specs for h in spec.steps[step].guards
        ):
            continue
        lengths = [observe(g, run.calls[step].result, spec.examples) for spec, run in zip(specs, runs, strict=True)]
        if any(type(n) is int and n >= 3 for n in lengths):
            del facts[key]
            count = Guard("count", g.path, "many")
            facts.setdefault(fact_key(count), count)


def _asked(spec: SkillSpec) -> frozenset[str]:
    """The fields whose values ``spec``'s answer quotes (``user['groups']``, listed): what its requests ask
    for (``_wording.strict``). What its writes are given is not: words naming it may still say which."""
    return frozenset(e.path[-1] for e in walk_exprs(spec.output) if isinstance(e, Ref) and e.path and type(e.path[-1]) is str)


def _names_a_thing(g: Guard, seen: list[Any], tool: str, world: World) -> Guard | None:
    """The note that ``g`` (a fact of ``tool``'s result) is not guarded, where runs that acted alike showed it
    with two texts or more and the library's runs show its field names a thing (``world``); else None."""
    if g.kind != "eq" or not g.path or not all(type(k) is str for k in g.path) or (tool, g.path) not in world:
        return None
    if len(set(seen)) < 2 or not all(type(v) is str for v in seen) or any(enum_like(v) for v in seen):
        return None
    return Guard("unguarded", g.path, (len(set(seen)), len(seen), *world[(tool, g.path)]))


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


_PRESENT_KINDS = frozenset({"eq", "sign", "textsign", "len", "lines", "count", "digits", "keys", "equal", "member", "near", "cmp"})


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
    if len(values) != 1 and not (g.kind in ("sign", "textsign", "len", "lines") and values):
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
    if g.kind in ("values", "pin", "eq", "len", "lines", "sign", "textsign", "count", "size", "has", "digits", "keys", "opt"):
        return Guard(g.kind, g.path, g.value if g.kind in ("values", "pin") else observed)
    return g


def _params(spec: SkillSpec) -> list[tuple[str, str]]:
    """What a skill takes, whatever the words it is asked in: its parameters' names and types."""
    return sorted((s.name, s.type) for s in spec.slots if s.kind not in (CHOICE, IGNORED))


def _unchosen(slots: tuple[Slot, ...]) -> tuple[Slot, ...]:
    return tuple(Slot(s.name, s.kind, s.type, s.transform, None, s.same) if s.kind == CHOICE else s for s in slots)


_DOMAINS: dict[str, tuple[Any, ...]] = {
    "member": (False, True),
    "near": (False, True),
    "equal": (False, True),
    "same": (False, True),
    "cmp": (-1, 0, 1),
    "len": ("empty", "nonempty"),
    "lines": (0, 1, "many"),
    "sign": ("negative", "positive", "zero"),
    "textsign": ("negative", "positive", "zero"),
}


def _number_at(result: Any, path: tuple[Any, ...], params: dict[str, Any], text: bool) -> list[float]:
    """The number at ``path`` in a run's result (a text read as one, where ``text``), or none."""
    try:
        v = resolve(result, path, params)
        v = float(v) if text and type(v) is str else v
    except (KeyError, IndexError, TypeError, ValueError):
        return []
    return [v] if type(v) in (int, float) else []
