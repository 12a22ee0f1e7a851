"""Guards: from what a run observed, the conditions under which replaying it is safe.

For each tool result the skill goes on to depend on:

- **presence and type** of every path the skill reads from it (``has(order, 'total', kind='number')``);
- **categorical values** equal to what was seen: booleans, None and enum-like strings
  (one lower- or upper-case word, such as a status), at depth one or two in dicts,
  whether or not the skill also passes them on (an answer that says "already
  delivered" depends on the status as much as a refund does);
- **emptiness** of top-level lists and the **sign** of top-level numbers, which an
  agent's choice can hinge on.

Guards go right after the call whose result they check, so they fail before the next
write whenever the data allows, and before the answer is given: the answer is a
decision too. Pure and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ._spec import DictOf, Expr, Fmt, Guard, ListOf, Ref, Select
from ._trajectory import Trajectory

__all__ = ["derive_guards", "refs_in", "value_kind", "walk_exprs"]

_ENUM_LIKE = re.compile(r"(?:[a-z][a-z_-]{0,23}|[A-Z][A-Z_-]{0,23})")
_MAX_PER_RESULT = 12


def value_kind(v: Any) -> str:
    """The JSON kind a ``has`` guard checks: str, number, bool, null, list or dict."""
    if v is None:
        return "null"
    if type(v) is bool:
        return "bool"
    if type(v) in (int, float):
        return "number"
    if type(v) is str:
        return "str"
    if type(v) is list:
        return "list"
    return "dict"


def refs_in(expr: Expr) -> Iterator[Ref]:
    """Every reference inside an expression (a selection's list included)."""
    return (e for e in walk_exprs(expr) if isinstance(e, Ref))


def walk_exprs(expr: Expr) -> Iterator[Expr]:
    """``expr`` and every expression inside it."""
    yield expr
    if isinstance(expr, Select):
        yield expr.seq
        yield from walk_exprs(expr.key)
    elif isinstance(expr, ListOf):
        for item in expr.items:
            yield from walk_exprs(item)
    elif isinstance(expr, DictOf):
        for _k, item in expr.items:
            yield from walk_exprs(item)
    elif isinstance(expr, Fmt):
        for part in expr.parts:
            if not isinstance(part, str):
                yield from walk_exprs(part[0])


def _at(value: Any, path: tuple[str | int, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _categorical(v: Any) -> bool:
    return v is None or type(v) is bool or (type(v) is str and _ENUM_LIKE.fullmatch(v) is not None)


def _result_guards(result: Any) -> list[Guard]:
    out: list[Guard] = []
    if _categorical(result):
        return [Guard("eq", (), result)]
    if type(result) is list:
        out.append(Guard("len", (), "nonempty" if result else "empty"))
    if type(result) is not dict:
        return out
    for key in sorted(result):
        v = result[key]
        path = (key,)
        if _categorical(v):
            out.append(Guard("eq", path, v))
        elif type(v) in (int, float) and v == v:
            out.append(Guard("sign", path, "positive" if v > 0 else "zero" if v == 0 else "negative"))
        elif type(v) is list:
            out.append(Guard("len", path, "nonempty" if v else "empty"))
        elif type(v) is dict:
            for sub in sorted(v):
                if _categorical(v[sub]):
                    out.append(Guard("eq", (key, sub), v[sub]))
    return out[:_MAX_PER_RESULT]


def derive_guards(traj: Trajectory, args: list[tuple[tuple[str, Expr], ...]], output: Expr) -> list[tuple[Guard, ...]]:
    """Guards for each call of ``traj``, given the lifted arguments and output."""
    n = len(traj.calls)
    used_later: list[set[tuple[str | int, ...]]] = [set() for _ in range(n)]
    used_by_output: list[set[tuple[str | int, ...]]] = [set() for _ in range(n)]
    for step_args in args:
        for _name, expr in step_args:
            for ref in refs_in(expr):
                used_later[ref.call].add(ref.path)
    for ref in refs_in(output):
        used_by_output[ref.call].add(ref.path)
    guards: list[tuple[Guard, ...]] = []
    for i, call in enumerate(traj.calls):
        used = used_later[i] | used_by_output[i]
        has = [Guard("has", p, value_kind(_at(call.result, p))) for p in sorted(used, key=lambda p: (len(p), repr(p)))]
        guards.append(tuple(has + _result_guards(call.result)))
    return guards
