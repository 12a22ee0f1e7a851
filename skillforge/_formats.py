"""How an answer writes a number, and what the runs leave open about it. Pure.

Lifting reads a number in an answer (or in a text a call is given) as written by a format: ``str``
(``42.5``), ``.2f`` (``42.50``), ``,.2f`` (``1,042.50``), ``,`` for an integer (``1,042``), and
``.15g`` for a float the task says (``42``). A run often cannot tell them apart: $99.99 is written
alike by ``.2f`` and ``,.2f``, and 42.25 by ``str`` too. Lifting takes the first that fits
(``.2f`` before ``,.2f``), and what the runs show settles the rest:

- runs of one program on both sides of 1,000 are written with the format that fits every run
  (``agreed_formats``), and compared ignoring it (``unformatted``);
- where the formats that fit every run (``NUMBER_FORMATS``, the ways lifting reads) would write
  another value apart (every amount learned was under 1,000: ``2073.69`` or ``2,073.69``?), or
  every value learned was 0 or more (``$-5.00`` or ``-$5.00``?), the skill takes only values
  they write alike: a ``written`` guard, ``require(x >= 0 and format(x, '.2f') == format(x, ',.2f'), ...)``,
  checked where the value is first known, so that a world outside is a handover, never an
  answer the agent would have written otherwise. A run that shows the format (an amount of
  1,000 or more) or a negative value drops it (``written_facts`` of all the runs that say the
  same answer, ``written_alike``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ._records import folded_as
from ._spec import DictOf, Expr, Fmt, Guard, Len, ListOf, Neg, Param, Ref, SkillSpec, Step
from ._trajectory import Trajectory
from ._values import evaluate, refs_in

__all__ = [
    "NUMBER_FORMATS", "SAID_FORMATS", "agreed_formats", "placed", "signs", "unformatted", "written_alike", "written_facts",
    "written_later",
]

# how answers write numbers besides ``str``, likeliest first (lifting tries them in this order)
NUMBER_FORMATS: dict[type, tuple[str, ...]] = {float: (".2f", ",.2f"), int: (",",)}
SAID_FORMATS = (".15g",)  # and a float the task says: ``42`` for 42.0
_ALIKE = {",.2f": ".2f", ",": ""}  # a format → the one that writes numbers under 1,000 alike (what lifting picks first)

World = tuple[list[Any], dict[str, Any]]  # a run's results (one per step) and its task values


def unformatted(expr: Any) -> Any:
    """``expr`` (an answer, or a call's arguments) with every number format that writes small numbers as
    another does written as that one: what two runs that quoted 99.99 and 1,042.50 have in common."""
    if isinstance(expr, tuple):
        return tuple(unformatted(x) for x in expr)
    if isinstance(expr, Fmt):
        return Fmt(tuple(p if isinstance(p, str) else (unformatted(p[0]), _ALIKE.get(p[1], p[1])) for p in expr.parts))
    if isinstance(expr, ListOf):
        return ListOf(tuple(unformatted(x) for x in expr.items))
    if isinstance(expr, DictOf):
        return DictOf(tuple((k, unformatted(x)) for k, x in expr.items))
    return expr


def agreed_formats(specs: list[SkillSpec], runs: list[Trajectory]) -> list[SkillSpec]:
    """The runs' answers written with one number format where they differ only in how they write numbers
    and one format writes every run's value as that run wrote it: a run that wrote $99.99 could have
    used ``,.2f`` as well, one that wrote $1,042.50 could not have used ``.2f``. (``specs[i]`` is lifted
    from ``runs[i]``; a hole no format fits in every run keeps the runs' own, and them apart.)"""
    groups: dict[Any, list[int]] = {}
    for k, spec in enumerate(specs):
        groups.setdefault(unformatted(spec.output), []).append(k)
    out = list(specs)
    for ks in groups.values():
        if len({specs[k].output for k in ks}) < 2:
            continue
        holes = {k: _holes(specs[k].output) for k in ks}
        chosen: list[str | None] = []
        for i in range(len(holes[ks[0]])):
            used = sorted({holes[k][i][1] for k in ks}, key=lambda f: (f in _ALIKE.values(), f))  # ',.2f' first
            chosen.append(next((f for f in used if all(_writes_alike(specs[k], runs[k], *holes[k][i], f) for k in ks)), None)
                          if len(used) > 1 else None)
        if any(f is not None for f in chosen):
            for k in ks:
                out[k] = replace(specs[k], output=_respecced(specs[k].output, iter(chosen)))
    return out


def written_facts(tops: list[Expr], worlds: list[World], signed: frozenset[Expr] = frozenset()) -> list[Guard]:
    """For each number the texts of ``tops`` write (an answer, a call's arguments), what the runs
    (``worlds``) leave open about writing it in another world, as a ``written`` guard whose value is
    ``(expr, formats, unsigned)``: the formats that wrote it as it was written in every world, where
    more than its own did (the skill takes only values they all write alike), and whether no world's
    value was negative (the skill takes none; ``signed``: values whose sign a fact guards already).
    None for a number the runs showed both of; none either where a world has no value there (a text
    of an item of a list the task gives: no one value to guard)."""
    out: list[Guard] = []
    for expr, own in dict.fromkeys(h for top in tops for h in _holes(top)):
        values = [_value(expr, *world) for world in worlds]
        if not values or any(v is None for v in values):
            continue
        said = isinstance(expr, Param)
        formats = tuple(
            f for f in _ways(values[0], said) if all(f in _ways(v, said) and _written(v, f) == _written(v, own) for v in values)
        )
        if own not in formats or any(_written(v, own) is None for v in values):
            continue  # written in a way lifting does not offer: nothing to compare it with
        unsigned = not isinstance(expr, Len) and expr not in signed and all(v >= 0 for v in values)
        if len(formats) > 1 or unsigned:
            out.append(Guard("written", (), (expr, formats if len(formats) > 1 else (), unsigned)))
    return out


def placed(facts: list[Guard], reads: list[bool]) -> list[tuple[int, Guard]] | str:
    """Each ``written`` fact with the step after whose call it is checked (``reads[i]``: whether step ``i``
    reads): the last call it reads, or for a value the task says, the first call if it reads, else -1
    (before it, with nothing written yet). Why not, where a fact has no call to be checked after."""
    out: list[tuple[int, Guard]] = []
    for fact in facts:
        calls = [r.call for r in refs_in(fact.value[0])]
        if not calls and not reads:
            return f"the answer writes {fact.value[0]!r}, and no call comes before it to check how"
        out.append((max(calls) if calls else 0 if reads[0] else -1, fact))
    return out


def written_alike(specs: list[SkillSpec], runs: list[Trajectory]) -> list[SkillSpec] | str:
    """``specs`` (``specs[i]`` lifted from ``runs[i]``) with their ``written`` facts those of all the runs
    that say the same things (the same answer and arguments): what one run left open, another may have
    shown (an amount of 1,000 or more). Why not, where a fact has no call to be checked after."""
    groups: dict[Any, list[int]] = {}
    for k, spec in enumerate(specs):
        groups.setdefault((spec.output, tuple(st.args for st in spec.steps)), []).append(k)
    out = list(specs)
    for ks in groups.values():
        worlds: list[World] = []
        for k in ks:
            run = folded_as(runs[k], [st.each for st in specs[k].steps], specs[k].examples)
            worlds.append(([c.result for c in run.calls], specs[k].examples))
        first = specs[ks[0]]
        signed = frozenset.intersection(*(signs(specs[k].steps) for k in ks))
        facts = written_facts([e for st in first.steps for _n, e in st.args] + [first.output], worlds, signed)
        at = placed(facts, [first.tools[st.tool].read for st in first.steps])
        if isinstance(at, str):
            return at
        for k in ks:
            out[k] = replace(specs[k], steps=tuple(_reguarded(step, i, at) for i, step in enumerate(specs[k].steps)))
    return out


def signs(steps: Any) -> frozenset[Expr]:
    """The values whose sign a fact of ``steps`` (each a ``Step``, or a list of its guards) guards."""
    guards = [st.guards if isinstance(st, Step) else st for st in steps]
    return frozenset(Ref(i, g.path) for i, gs in enumerate(guards) for g in gs if g.kind == "sign")


def written_later(spec: SkillSpec, upto: int, at: int) -> SkillSpec:
    """``spec`` with the ``written`` facts of its steps before ``upto`` checked after step ``at`` instead:
    where runs that made the same write gave two answers, what one answer leaves open is a fact of
    that answer's branch, known to be taken only after the write (another answer's runs may have
    values it would refuse: their own answer writes none of them)."""
    moved = [g for st in spec.steps[:upto] for g in (*st.pre, *st.guards) if g.kind == "written"]
    if not moved:
        return spec
    steps = [_reguarded(st, i, []) if i < upto else st for i, st in enumerate(spec.steps)]
    steps[at] = replace(steps[at], guards=(*steps[at].guards, *(g for g in moved if g not in steps[at].guards)))
    return replace(spec, steps=tuple(steps))


def _reguarded(step: Step, i: int, placed: list[tuple[int, Guard]]) -> Step:
    """``step`` (step ``i``) with its ``written`` facts those of ``placed`` for it."""
    guards = tuple(g for g in step.guards if g.kind != "written") + tuple(g for at, g in placed if at == i)
    pre = tuple(g for g in step.pre if g.kind != "written") + (tuple(g for at, g in placed if at < 0) if i == 0 else ())
    return replace(step, guards=guards, pre=pre)


def _ways(value: Any, said: bool) -> tuple[str, ...]:
    """The formats that may have written ``value`` (a number), ``""`` for ``str``: what lifting reads."""
    return ("", *NUMBER_FORMATS.get(type(value), ()), *(SAID_FORMATS if said and type(value) is float else ()))


def _written(value: int | float, spec: str) -> str | None:
    """``value`` written by format ``spec``, or None where the format does not take it."""
    try:
        return format(value, spec)
    except (ValueError, TypeError):
        return None


def _value(expr: Expr, results: list[Any], params: dict[str, Any]) -> int | float | None:
    """The number ``expr`` has in a run, or None (not a number, or no one value there)."""
    try:
        if isinstance(expr, Neg):
            inner = _value(expr.value, results, params)
            return None if inner is None else -inner
        value = len(evaluate(expr.seq, results, params)) if isinstance(expr, Len) else evaluate(expr, results, params)
    except (KeyError, ValueError, IndexError, TypeError):
        return None
    return value if type(value) in (int, float) and value == value else None  # (not a bool, not NaN)


def _holes(expr: Any) -> list[tuple[Any, str]]:
    """The ``(expr, format)`` holes of an answer's texts, in order (inner texts' after their own)."""
    if isinstance(expr, Fmt):
        out: list[tuple[Any, str]] = []
        for p in expr.parts:
            if not isinstance(p, str):
                out.append(p)
                out.extend(_holes(p[0]))
        return out
    if isinstance(expr, ListOf):
        return [h for x in expr.items for h in _holes(x)]
    if isinstance(expr, DictOf):
        return [h for _k, x in expr.items for h in _holes(x)]
    return []


def _respecced(expr: Any, chosen: Any) -> Any:
    """``expr`` with its holes' formats (in ``_holes`` order) replaced where ``chosen`` says one."""
    if isinstance(expr, Fmt):
        parts: list[Any] = []
        for p in expr.parts:
            if isinstance(p, str):
                parts.append(p)
                continue
            f = next(chosen)
            parts.append((_respecced(p[0], chosen), p[1] if f is None else f))
        return Fmt(tuple(parts))
    if isinstance(expr, ListOf):
        return ListOf(tuple(_respecced(x, chosen) for x in expr.items))
    if isinstance(expr, DictOf):
        return DictOf(tuple((k, _respecced(x, chosen)) for k, x in expr.items))
    return expr


def _writes_alike(spec: SkillSpec, run: Trajectory, hole: Any, own: str, other: str) -> bool:
    """Whether format ``other`` writes the value of ``hole`` in ``run`` as the run's own format ``own`` did."""
    run = folded_as(run, [st.each for st in spec.steps], spec.examples)
    value = _value(hole, [c.result for c in run.calls], spec.examples)
    return value is not None and _written(value, own) is not None and _written(value, own) == _written(value, other)
