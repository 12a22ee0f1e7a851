"""A list listed from one element: its separator is the one runs of the same program showed. Pure.

"ali.khan is in: github-org." lists a user's one group: the lifter makes it the whole list
joined, ``Join(user['groups'], None)`` (see ``_Lifter._only_join``), with no separator, since
one element shows none, and pins the list to one element (a ``count`` fact). Runs of the same
program that listed more ("bo.chen is in: staff, wiki.") say how the list is listed:
``join(user['groups'], ', ')``. Here the one-element runs take that separator (and order), so
all are one program: merged, the count fact takes the values the runs showed (one, many), and
a two-element listing still serves two elements only (its ``size`` fact), until a run of the same
program lists three or more (``_merging``: then the length is no decision, see ``listings``).

A separator is taken only from runs of the same program (the same calls from the same sources
and the same answer, separators aside), and only where they agree on one. Where no other run of
a skill lists the list at all but some took its element by position (the first item of an order,
sent again and named), the run is that element by position too (``alone``: lifted again so).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ._spec import Guard, Join, SkillSpec
from ._values import rebuilt, walk_exprs

__all__ = ["alone", "listed_alike", "listings", "settled", "shown", "unlisted"]

Listed = dict[tuple[Any, tuple[str | int, ...]], Join]  # (the list, the path inside each element) → how it is listed


def unlisted(x: Any) -> Any:
    """``x`` (an expression, or a tuple of them, as a step's arguments) with each ``Join`` listed
    with no separator and in its order: what a program is, separators aside."""
    return _mapped(x, lambda j: Join(j.seq, None, j.path))


def shown(*exprs: Any) -> Listed:
    """How ``exprs`` list each list they list with a separator, where they all list it one way."""
    seen: dict[tuple[Any, tuple[str | int, ...]], set[Join]] = {}
    for top in exprs:
        for e in _joins(top):
            if e.sep is not None:
                seen.setdefault((e.seq, e.path), set()).add(e)
    return {key: next(iter(ways)) for key, ways in seen.items() if len(ways) == 1}


def settled(x: Any, listed: Listed) -> Any:
    """``x`` with each list listed from one element listed as ``listed`` says (where it says)."""
    return _mapped(x, lambda j: listed.get((j.seq, j.path), j) if j.sep is None else j)


def listed_alike(specs: list[SkillSpec]) -> list[SkillSpec]:
    """``specs`` (runs lifted for one skill) with each list a run listed from one element listed as the
    runs of the same program that listed more list it, and checked alike: where those runs' lists were
    in order and sorted both (``sorted``: the answer may list either), so is the one element."""
    groups: dict[Any, list[int]] = {}
    for k, spec in enumerate(specs):
        key = (tuple((st.tool, unlisted(st.args), st.each) for st in spec.steps), unlisted(spec.output))
        groups.setdefault(key, []).append(k)
    out = list(specs)
    for ks in groups.values():
        listed = shown(*(_exprs(specs[k]) for k in ks))
        if not listed:
            continue
        checks = {g for k in ks for st in specs[k].steps for g in st.guards if g.kind == "sorted"}
        for k in ks:
            spec = specs[k]
            ones = [j for j in _joins(_exprs(spec)) if j.sep is None and (j.seq, j.path) in listed]
            if not ones:
                continue
            steps = [replace(st, args=settled(st.args, listed)) for st in spec.steps]
            for j in ones:
                shown_as = listed[(j.seq, j.path)]
                check = Guard("sorted", j.seq.path, (j.path, shown_as.sep))
                at = steps[j.seq.call]
                if check in checks and check not in at.guards:
                    steps[j.seq.call] = replace(at, guards=(*at.guards, check))
            out[k] = replace(spec, steps=tuple(steps), output=settled(spec.output, listed))
    return out


def alone(specs: list[SkillSpec]) -> list[int]:
    """Which of ``specs`` (after ``listed_alike``) list a list from one element that no other lists
    with a separator, where some of ``specs`` do not: their element is the element, by position."""
    listed = {key for spec in specs for key in shown(*_exprs(spec))}
    ones = [{(j.seq, j.path) for j in _joins(_exprs(spec)) if j.sep is None} for spec in specs]
    found = [k for k, keys in enumerate(ones) if keys and not keys & listed]
    return found if len(found) < len(specs) else []


def listings(spec: SkillSpec) -> set[tuple[int, tuple[str | int, ...]]]:
    """The lists ``spec``'s calls or answer list whole, as (the call whose result holds it, its path)."""
    return {(j.seq.call, j.seq.path) for j in _joins(_exprs(spec))}


def _exprs(spec: SkillSpec) -> tuple[Any, ...]:
    return (*(st.args for st in spec.steps), spec.output)


def _joins(x: Any) -> list[Join]:
    if isinstance(x, tuple):
        return [j for part in x for j in _joins(part)]
    if isinstance(x, str):
        return []
    return [e for e in walk_exprs(x) if isinstance(e, Join)]


def _mapped(x: Any, f: Any) -> Any:
    """``x`` with each ``Join`` in it replaced by ``f`` of it."""
    return rebuilt(x, lambda e: f(e) if isinstance(e, Join) else e)
