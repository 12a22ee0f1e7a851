"""Numbers an answer says as its own text, learned as text from the evidence of several runs. Pure.

One run cannot tell a number the agent always says ("refunded within 5-7 business days",
"in 24 hours", "up to 3 tries") from one it computed (a sum, a count, days left) when nothing
the task says or a tool returned explains it: lifting rejects such a run (``Rejected.numbers``
says where it stands), since another world might need another number. Runs of other worlds
settle it: the number is learned as literal text of the answer when at least ``NUMBER_RUNS``
runs of one skill say it in the same place (the same literal text of the answer around it), and
each two of them differ in a value the answer quotes from a tool result: the worlds differed
where the answer reads them, and the number did not.

- Runs whose quoted values are all equal are no evidence: a number computed from the same
  world, or from worlds alike where the answer looks, would coincide.
- A number that differs between runs, or that one run says and another does not, is in another
  literal text of the answer: another place, with evidence of its own (and runs whose answers
  differ so are one skill only as branches told apart by a fact, as any two answers are).
- ``NUMBER_RUNS`` is 3, like ``CONTEXT_RUNS``: a number learned as text is a claim about every
  world, as dropping a fact is; two worlds in which a small computed number (a count of the
  items that pass a filter) coincides are common, three much less.

Also here, how an answer writes a number: lifting writes $99.99 with ``.2f`` (the first format that
fits) and $1,042.50 with ``,.2f``; runs of one program on both sides of 1,000 are written with the
format that fits every run (``agreed_formats``), and compared ignoring it (``unformatted``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ._lifting import Rejected
from ._records import folded_as
from ._runchecks import unexplained_numbers
from ._spec import DictOf, Fmt, Join, Len, ListOf, Param, SkillSpec
from ._trajectory import Trajectory, canonical_json
from ._values import evaluate, refs_in, walk_exprs

__all__ = ["NUMBER_RUNS", "Places", "agreed_formats", "lift_said", "number_evidence", "unformatted"]

NUMBER_RUNS = 3  # runs of other worlds that say a number in one place before it is learned as text

Places = frozenset[tuple[str, str]]  # (the answer's literal text a number stands in, the number)


def lift_said(
    runs: list[Trajectory], lift_one: Callable[[Trajectory, Places], SkillSpec | Rejected]
) -> tuple[list[SkillSpec], Places] | Rejected:
    """Each run lifted (``lift_one(run, places)``), and the places of numbers some were lifted with as
    text: where runs were rejected only for numbers their answers say, they are lifted again with all
    those numbers as text. Whether the runs show enough to learn them so is ``number_evidence``'s say."""
    first = [lift_one(run, frozenset()) for run in runs]
    places: Places = frozenset(p for one in first if isinstance(one, Rejected) for p in one.numbers)
    out: list[SkillSpec] = []
    for run, one in zip(runs, first, strict=True):
        if isinstance(one, Rejected):
            if not one.numbers:
                return one
            one = lift_one(run, places)
            if isinstance(one, Rejected):
                return one
        out.append(one)
    return out, places


def number_evidence(specs: list[SkillSpec], runs: list[Trajectory], places: Places) -> str | None:
    """Why the numbers at ``places`` are not learned as text from these runs (``specs[i]`` lifted from
    ``runs[i]`` with them as text, the runs of one skill), or None where each place shows enough
    evidence: ``NUMBER_RUNS`` runs that say the number there, each two of which differ in what the
    answer quotes from tool results."""
    for place in sorted(places):
        seen: list[str] = []  # what the answers quote from results, one entry per world unlike the others
        for spec, run in zip(specs, runs, strict=True):
            if place in unexplained_numbers(spec.output, run.task):
                quoted = _quoted(spec, run)
                if quoted is not None and quoted not in seen:
                    seen.append(quoted)
        if len(seen) < NUMBER_RUNS:
            return (
                f"the answer says {place[1]!r} as its text in {len(seen)} run(s) whose answers quote other tool results "
                f"than each other; {NUMBER_RUNS} are needed before it is learned as text (a computed value could coincide)"
            )
    return None


def _quoted(spec: SkillSpec, run: Trajectory) -> str | None:
    """The values ``spec``'s answer quotes from tool results in ``run``, as one text (None if it quotes none)."""
    run = folded_as(run, [st.each for st in spec.steps], spec.examples)
    results = [c.result for c in run.calls]
    holes = [p[0] for e in walk_exprs(spec.output) if isinstance(e, Fmt) for p in e.parts if not isinstance(p, str)]
    values = []
    for hole in holes or [spec.output]:
        if isinstance(hole, Param) or not any(True for _ in refs_in(hole)):
            continue  # the task's words, or text: no reading of the world
        if isinstance(hole, (Join, Len)):
            hole = hole.seq  # the list it lists or counts
        try:
            values.append(evaluate(hole, results, spec.examples))
        except (KeyError, ValueError, IndexError, TypeError):
            values.append([canonical_json(results[r.call]) for r in refs_in(hole)])  # what it reads, whole
    return canonical_json(values) if values else None


# -- how an answer writes a number: 99.99 is written alike by '.2f' and ',.2f', 1,042.50 only by ',.2f' ----------

_ALIKE = {",.2f": ".2f", ",": ""}  # a format → the one that writes numbers under 1,000 alike (what lifting picks first)


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
    try:
        value = len(evaluate(hole.seq, [c.result for c in run.calls], spec.examples)) if isinstance(hole, Len) else (
            evaluate(hole, [c.result for c in run.calls], spec.examples))
        return type(value) in (int, float) and type(value) is not bool and format(value, own) == format(value, other)
    except (KeyError, ValueError, IndexError, TypeError):
        return False
