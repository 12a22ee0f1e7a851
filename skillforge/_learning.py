"""Learning: the runs of one template → one skill, as specific as the runs require. Pure.

A skill is the least general program consistent with its runs. Each run is lifted on
its own (``lift``); runs whose programs agree (the same calls, from the same sources)
become one skill whose guards are the facts of the world the runs saw (``_merging``:
which facts stay guards, which are combined, which are attributes); runs of one template
that acted in two ways or more become one skill with branches (``_branching``); phrasings
that take more parameters are variants learned from their own runs (``_variants``).

A number the answers say as text that nothing explains is learned as text where enough runs of
other worlds say it in the same place (``_numbers``, checked on the runs each time); amounts the
runs wrote in two formats that one format fits ($99.99 and $1,042.50) are written in that one, and
a number the runs leave open how to write (every amount under 1,000) is guarded to where every way
they fit writes it alike (``_formats``).
"""

from __future__ import annotations

import logging
import string
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ._antiunify import shared_shapes
from ._branching import branched
from ._census import World
from ._lifting import Rejected, Site, expr_at, lift
from ._joins import alone, listed_alike, settled, shown
from ._merging import ATTRIBUTE_RUNS, CONTEXT_RUNS, _aligned, merge
from ._lists import joined_picks, substitute
from ._formats import agreed_formats, unformatted, written_alike
from ._names import named
from ._numbers import Places, lift_said, number_evidence
from ._probes import NONE, Probed, behaviour, sources_followed
from ._spec import Const, Expr, Fmt, Param, Ref, SkillSpec
from ._template import LIST, PHRASING, TaskTemplate
from ._trajectory import Trajectory
from ._variants import grouped, variant_name
from ._wording import alike_words, literal
from ._values import _leaves, computed, walk_exprs

logger = logging.getLogger(__name__)

__all__ = [
    "ATTRIBUTE_RUNS", "CONTEXT_RUNS", "computes", "route_key", "route_shape", "branched", "merge", "named", "renamed_template", "same_program", "settle", "spec_from_runs",
    "without_idle_reads",
]


def spec_from_runs(
    runs: list[Trajectory], *, name: str, template: TaskTemplate, importable: bool = True,
    phrasings: tuple[TaskTemplate, ...] = (), evidence: tuple[Trajectory, ...] = (), world: World | None = None,
) -> SkillSpec | Rejected:
    """The spec of a skill learned from several runs (in order), as its file is rendered.

    ``phrasings`` are other templates of the same task (the same parameters, said otherwise):
    each run is lifted with the first of ``template`` and them that binds its task, and the
    runs make one skill if they made the same calls from the same sources.

    ``evidence`` are runs of the same request in other skills (``lends_evidence``): reached by another
    identification route (a customer found by email in one, by name and zip in another) or said in a
    phrasing learned on its own, with the same calls after their first, from the same sources, and
    the same answer. What they observed is added to the values the skill's
    switch-like and attribute-like facts took in runs that acted alike (never a fact of their own:
    the first call differs; and never a run the skill must reproduce).

    ``world``: the fields the library's runs show name things (``_census``; a file's ``SKILL['world']``
    when it is rendered again): a context fact of one that runs acting alike showed with two values
    or more is not guarded.
    """
    takes = sorted((s.name, s.type) for s in template.params)
    if any(sorted((s.name, s.type) for s in t.params) != takes for t in phrasings):
        return _with_variants(runs, name=name, template=template, importable=importable, phrasings=phrasings, evidence=evidence,
                              world=world)
    if phrasings:  # a parameter takes in each phrasing the shapes the skill's runs passed it in any
        template, phrasings = _shared(runs, template, phrasings)
    every = (template, *phrasings)
    # what probes settled holds for every run, where runs of each phrasing showed it (a phrasing may decide)
    # what probes settled where runs of every phrasing and behaviour settled it (a phrasing, or a branch, may decide);
    # measured against pruning each run by its own context only: that split skills into more files (tau-bench
    # retail, seed 0: 23 files and 165 served, against 14 and 175) for 3 more served on the helpdesk
    probed = NONE
    if any(r.probes for r in runs):  # only then: what a run did is worked out for no other use
        contexts = [(next((i for i, t in enumerate(every) if t.bind(r.task) is not None), 0), behaviour(r)) for r in runs]
        probed = Probed.of(runs, contexts, {i: t.text for i, t in enumerate(every)})

    follows = sources_followed(runs)  # slots whose value the agent takes from a record where the two coincide (probed)

    def lifted(traj: Trajectory, prefer: Any = None, literal: Places = frozenset(), one_listed: bool = True) -> SkillSpec | Rejected:
        k = next((i for i, t in enumerate(every) if t.bind(traj.task) is not None), 0)
        one = lift(traj, name=name, template=every[k], prefer=prefer, importable=importable, literal=literal, one_listed=one_listed,
                   probed=probed)
        if follows and not isinstance(one, Rejected):
            one = _quoting_records(one, traj, follows)
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
    for k, prefer in _written_as_is(specs, runs).items():  # a text composed of a value that merely fit it
        prefers[k] = {**prefers.get(k, {}), **prefer}
        one = lifted(runs[k], prefers[k], places)
        if isinstance(one, Rejected):
            return one
        specs[k] = one
    specs = listed_alike(specs)  # a list one run listed from one element, listed as runs that listed more
    for k in alone(specs):  # no other run listed that list: its element by position, as the others took it
        one = lifted(runs[k], prefers.get(k), places, one_listed=False)
        if isinstance(one, Rejected):
            return one
        specs[k] = one
    specs = _picked_alike(specs, template)
    specs = agreed_formats(specs, runs)  # $99.99 and $1,042.50: one way to write amounts
    alike = written_alike(specs, runs)  # and where no run shows which, only amounts every way writes alike
    if isinstance(alike, str):
        return Rejected(alike)
    specs = alike
    if places and (why := number_evidence(specs, runs, places)) is not None:
        return Rejected(why)
    extra = tuple((t.text, t.slots) for t in phrasings)
    if len(specs) == 1 and not phrasings and not evidence:
        return specs[0]
    wording = tuple(literal(t) for t in every) if phrasings else ()
    merged = merge(specs, runs, phrased=wording, evidence=evidence, world=world)
    if merged is None:
        merged = branched(specs, runs, phrased=wording, evidence=evidence, world=world)
    if merged is not None and evidence:
        merged = replace(merged, evidence=tuple(run.hash for run in evidence))
    if merged is None:
        return Rejected("the runs differ in more than the switch-like facts their guards check")
    return replace(merged, template=template.text, slots=template.slots, phrasings=extra) if phrasings else merged


def _with_variants(
    runs: list[Trajectory], *, name: str, template: TaskTemplate, importable: bool,
    phrasings: tuple[TaskTemplate, ...], evidence: tuple[Trajectory, ...], world: World | None = None,
) -> SkillSpec | Rejected:
    """The skill of ``template`` and its phrasings of the same parameters, with one variant per group
    of phrasings that take more (``_variants``): each learned from the runs said in its phrasings
    only (a run belongs to the first phrasing, in the file's order, that binds its task)."""
    groups = grouped(template, phrasings)
    if isinstance(groups, str):
        return Rejected(groups)
    order = [(g, t) for g, (_extra, ts) in enumerate(groups) for t in ts]  # the file's order, each with its group
    owner = [next((g for g, t in order if t.bind(run.task) is not None), None) for run in runs]
    if None in owner:
        return Rejected("a run's task binds none of the skill's phrasings")
    specs: list[SkillSpec] = []
    for g, (extra, ts) in enumerate(groups):
        mine = [run for run, k in zip(runs, owner, strict=True) if k == g]
        if not mine:
            return Rejected(f"no run was said in {ts[0].text!r}: a phrasing of more parameters needs runs of its own")
        one = spec_from_runs(mine, name=variant_name(name, extra) if extra else name, template=ts[0], importable=importable,
                             phrasings=tuple(ts[1:]), evidence=evidence if not extra else (), world=world)
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


def route_key(spec: SkillSpec) -> str | None:
    """What a skill shares with the skills of the same request reached by another identification
    route (the customer found by email, or by name and zip): its calls after the first, from the
    same sources (parameters by name), and its answer: of its main way, where it has branches (the
    runs that took a branch are another way, and no evidence of this one). None for a skill of one call."""
    if len(spec.steps) < 2:
        return None
    return repr(([(st.tool, st.args, st.each) for st in spec.steps[1:]], spec.output))


def route_shape(spec: SkillSpec) -> str | None:
    """The tools of a skill's calls after the first, and which of them loop over a list: what every skill
    of the same request by another route or phrasing has (``lends_evidence`` says which of them do the
    same). None for a skill of one call."""
    if len(spec.steps) < 2:
        return None
    return repr([(st.tool, st.each is not None) for st in spec.steps[1:]])


def lends_evidence(spec: SkillSpec, theirs: SkillSpec, run: Trajectory, own: Sequence[Trajectory]) -> bool:
    """Whether ``run`` of another skill (lifted there as ``theirs``) is evidence for the facts of ``spec``
    (learned from the runs ``own``): it made the same calls after the first, from the same sources, and
    gave the same answer, whether it found the customer by another route or was said in a phrasing
    learned on its own. Either its skill's program is ``spec``'s (``route_key``), or ``spec``'s program
    makes the run's calls and gives its answer on its results (``computes``: its own lifting chose
    another of two sources that were equal there, or another format that wrote its amount alike). The
    two phrasings' words may take each other's worlds (``alike_words``: "cancel it even if it shipped"
    lends nothing to "cancel it"); and it is none of the skill's own runs (a run is evidence once, or
    its own)."""
    key = route_key(spec)
    if key is None or run.hash in {r.hash for r in own}:
        return False
    if route_key(theirs) != key and not computes(spec, run):
        return False
    mine, said = (literal(TaskTemplate(s.template, list(s.slots))) for s in (spec, theirs))
    read = [c.result for r in (run, *own) for c in r.calls if (ref := r.tools.get(c.tool)) is not None and ref.read]
    return alike_words(mine, said, read)  # the world the runs decided in: a write's echo of its arguments says none


def _written_as_is(specs: list[SkillSpec], runs: list[Trajectory]) -> dict[int, dict[Site, tuple[Expr, tuple[Expr, ...]]]]:
    """The runs whose text argument (or answer) was lifted as composed of values a read returned, where
    another run of the same calls wrote the same text as a constant: "no longer needed" composed of an
    item's option ``'no'`` (``f"{item['options']['waterproof']} longer needed"``) in one run is the
    constant every other run wrote, and a value that merely fit one run is no explanation. Each such
    run, by index, with the sites to lift as the constant (``prefer``)."""
    constants: dict[tuple[Any, Site], set[str]] = {}
    composed: list[tuple[int, Any, Site, str]] = []
    for k, (spec, run) in enumerate(zip(specs, runs, strict=True)):
        if len(spec.steps) != len(run.calls) or any(st.each is not None for st in spec.steps):
            continue  # calls folded into a loop: no one call per step
        sites = [((i, (key,)), expr, call.args.get(key)) for i, (st, call) in enumerate(zip(spec.steps, run.calls, strict=True))
                 for key, expr in st.args]
        sites.append(((-1, ()), spec.output, run.outcome.output))
        for site, expr, said in sites:
            shape = _calls_upto(spec, site[0])
            if isinstance(expr, Const) and type(expr.value) is str:
                constants.setdefault((shape, site), set()).add(expr.value)
            elif isinstance(expr, Fmt) and type(said) is str and not any(isinstance(e, Param) for e in walk_exprs(expr)):
                composed.append((k, shape, site, said))
    out: dict[int, dict[Site, tuple[Expr, tuple[Expr, ...]]]] = {}
    for k, shape, site, said in composed:
        if said in constants.get((shape, site), ()):
            out.setdefault(k, {})[site] = (Const(said), ())
    return out


def _shared(runs: Sequence[Trajectory], template: TaskTemplate, phrasings: tuple[TaskTemplate, ...]) -> tuple[TaskTemplate, tuple[TaskTemplate, ...]]:
    """``template`` and ``phrasings`` with each parameter's shapes shared (``shared_shapes``), where every run
    binds the phrasing it bound before, to the values it bound; else as they are."""
    every = (template, *phrasings)
    wide = shared_shapes(every)
    for run in runs:
        bound = [t.bind(run.task) for t in every]
        k = next((i for i, b in enumerate(bound) if b is not None), None)
        if k is None:
            continue  # a run no phrasing takes: lifting says so
        if wide[k].bind(run.task) != bound[k] or any(wide[i].bind(run.task) is not None for i in range(k)):
            logger.debug("phrasings keep their own shapes: shared, they bind %r otherwise", run.task)
            return template, phrasings
    return wide[0], tuple(wide[1:])


def computes(spec: SkillSpec, run: Trajectory) -> bool:
    """Whether ``spec``'s main way, on ``run``'s results, makes ``run``'s calls after the first with the
    arguments it made them with, and gives its answer: the task values are those ``spec`` passes whole
    (``get_order(order_id=order_id)``), as the run's calls were given them. The first call is the route
    and may differ; a loop over a list, or an answer that joins a whole list, says more than one value
    shows, and is never judged so."""
    if any(st.each is not None for st in spec.steps) or not run.outcome.ok:
        return False
    aligned = _aligned(spec, (run,))  # the same tools after the first, and the task values the calls were given
    if not aligned:
        return False
    params = aligned[0][0]
    pairs = list(zip(spec.steps[1:], run.calls[1:], strict=True))
    if any({k for k, _ in st.args} != set(call.args) for st, call in pairs):
        return False
    results = [c.result for c in run.calls]
    try:
        made = [(computed(arg, results, params), call.args[key]) for st, call in pairs for key, arg in st.args]
        made.append((computed(spec.output, results, params), run.outcome.output))
    except (KeyError, IndexError, TypeError, ValueError):
        return False
    return all(type(mine) is type(theirs) and mine == theirs for mine, theirs in made)


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


def _quoting_records(spec: SkillSpec, traj: Trajectory, follows: frozenset[str]) -> SkillSpec:
    """``spec`` with its answer quoting, for each slot of ``follows`` it quotes, the first tool result
    that held the same text in the run, instead of the task (probes showed the agent writing the
    record's text where the two differ, ``_probes.quoted_from_record``); its arguments unchanged."""
    if len(spec.steps) != len(traj.calls) or not isinstance(spec.output, Fmt):
        return spec
    held: dict[str, Ref] = {}
    for n in sorted(follows):
        value = spec.examples.get(n)
        ref = next((Ref(i, path) for i, c in enumerate(traj.calls) for path in _paths_to(c.result, value)), None) if type(
            value) is str else None
        if ref is not None:
            held[n] = ref
    if not held:
        return spec
    parts = tuple((held[p[0].name], p[1]) if type(p) is tuple and isinstance(p[0], Param) and p[0].name in held else p
                  for p in spec.output.parts)
    return replace(spec, output=replace(spec.output, parts=parts))


def _paths_to(value: Any, wanted: str, at: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Where ``value`` holds the text ``wanted`` (keys of records only, in their order; no list elements)."""
    if type(value) is str:
        return [at] if value == wanted else []
    if type(value) is dict:
        return [p for k, v in value.items() if type(k) is str for p in _paths_to(v, wanted, (*at, k))]
    return []


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
