"""Lists the task gives item by item, lifted as one list parameter (a mixin of the lifter).

"Return #W1 via paypal_1: Grill; Desk Lamp;" where the write takes
``item_ids=['11', '42']``: each id is the one of the item the task names
(``pick(order['items'], 'name', item_name)['item_id']``), the same expression for each,
and the names stand side by side in the task, separated by ``;``. The task says a list:
the template has one slot ``{item_names}`` (kind ``list``, items of the shape seen,
separated as seen) and the argument is
``[pick(order['items'], 'name', item_name)['item_id'] for item_name in item_names]``,
so the skill serves one item or five. Learned from a run with two or more items (one
item says nothing of how a list is separated); a run with one item joins a list skill
whose template binds its task.
"""

from __future__ import annotations

import re
from typing import Any

from ._guards import MISSING, derive_guards, fact_key, observe
from ._spec import At, Const, Each, Expr, Guard, Param, Select, Where
from ._trajectory import Call, Trajectory
from ._values import ambiguous, bound_item, evaluate, rebuilt, resolve, var_names, walk_exprs

__all__ = ["SEPARATOR", "Listing", "each_guards", "item_name", "joined_picks", "mentions", "substitute"]

# what may stand between two items of a list the task writes: a comma or semicolon, "and" before
# the last ("A, B and C"); never "or", which says something else
SEPARATOR = re.compile(r"\s*(?:[,;]|[,;]?\s*\band\b)\s*")


def item_name(list_name: str) -> str:
    """The name of one item of a list parameter (``item_names`` → ``item_name``)."""
    return list_name[:-1] if list_name.endswith("s") and len(list_name) > 1 else f"{list_name}_item"


def substitute(expr: Any, names: dict[str, str]) -> Any:
    """``expr`` with each ``Param`` named as ``names`` says (frozen dataclasses and tuples, rebuilt)."""
    return rebuilt(expr, lambda e: Param(names.get(e.name, e.name)) if isinstance(e, Param) else e)


class Listing:
    """Lifting a list of values as ``Each`` over a list parameter. Expects the lifter's state."""

    bound: dict[str, Any] | None
    said: set[str]
    item: tuple[str, int] | None  # the item of a list being lifted (list, index), if any
    item_values: dict[tuple[str, int], set[str]]  # per item: the values an argument took for it already
    records: dict[str, tuple[str, ...]]  # template mode: a list of records → the names of an item's parts
    params: dict[tuple[int, int], tuple[str, Any, str, str | None]]
    scalars: list[tuple[str, Expr, int, str]]
    roll: bool
    results: dict[int, Any]  # what each step returned so far

    def _each(self, value: list[Any], hint: str, site: tuple[int, tuple[str | int, ...]]) -> Each | None:
        """Template mode: ``value`` as the same expression of each item of a list the template binds."""
        if self.bound is None:
            return None
        for name, items in list(self.bound.items()):
            if type(items) is not list or len(items) != len(value) or not items:
                continue
            saved = self._state()  # type: ignore[attr-defined]
            found = self._per_item(name, value, site)
            if found is not None and found[2]:
                return Each(Param(name), found[0], found[1])
            self._restore(saved)  # type: ignore[attr-defined]
        return None

    def _mapped(self, name: str, group: list[Call], keys: list[str], step: int) -> list[tuple[str | tuple[str, ...], Expr, bool] | None] | None:
        """Each argument of ``group`` (calls of one read tool) lifted as one expression of the items of
        the list ``name``, where the calls are one per distinct argument the items ask for, in the
        order the items first ask for each (two items of one product: one read); None where they
        are not. The item each call serves is the one whose value, by the expression the first
        item's argument lifts as, is that call's argument; the item expressions then must agree."""
        items = (self.bound or {})[name]
        asked = [tuple(c.args[k] for k in keys) for c in group]
        if len(group) > len(items) or any(_index(a, asked[:j]) is not None for j, a in enumerate(asked)):
            return None  # more calls than items, or a read repeated: not one per distinct argument
        served = list(range(len(group))) if len(group) == len(items) else self._served(name, group, keys, step, asked)
        if served is None:
            return None
        return [self._per_item(name, [group[j].args[k] for j in served], (step, (k,))) for k in keys]

    def _served(self, name: str, group: list[Call], keys: list[str], step: int, asked: list[tuple[Any, ...]]) -> list[int] | None:
        """Per item of the list ``name``, the call of ``group`` it asks for: by what the first call's
        arguments lift as for the first item, evaluated for each item; None where an item asks for
        no call of the group, or the calls are not in the order the items first ask for them."""
        items = (self.bound or {})[name]
        var = self.records.get(name) or item_name(name)
        outer = {k: x for k, x in (self.bound or {}).items() if k not in var_names(var)}
        saved = self._state()  # type: ignore[attr-defined]
        bound, said, item, item_values = self.bound, set(self.said), self.item, {k: set(v) for k, v in self.item_values.items()}
        try:
            self.bound, self.item = {**bound_item(var, items[0]), **outer}, (name, 0)
            exprs = [self.lift(group[0].args[k], k, (step, (k,))) for k in keys]  # type: ignore[attr-defined]
        finally:
            self._restore(saved)  # type: ignore[attr-defined]
            self.bound, self.said, self.item, self.item_values = bound, said, item, item_values
        served: list[int] = []
        for it in items:
            params = {**outer, **bound_item(var, it)}
            try:
                wants = tuple(e.value if isinstance(e, Const) else evaluate(e, self.results, params) for e in exprs)  # type: ignore[arg-type]
            except (KeyError, IndexError, TypeError, ValueError):
                return None
            j = _index(wants, asked)
            if j is None:
                return None
            served.append(j)
        first = [j for k, j in enumerate(served) if j not in served[:k]]
        return served if first == list(range(len(group))) else None

    def _per_item(
        self, name: str, value: list[Any], site: tuple[int, tuple[str | int, ...]]
    ) -> tuple[str | tuple[str, ...], Expr, bool] | None:
        """Each value of ``value`` lifted with the matching item of the list ``name`` bound (its
        parts, for records): the item's variable, the one expression all values are, and whether
        it reads the item; None where the values are not one expression."""
        call, path = site
        items = (self.bound or {})[name]
        var: str | tuple[str, ...] = self.records.get(name) or item_name(name)
        names = var_names(var)
        outer = {k: x for k, x in (self.bound or {}).items() if k not in names}
        bodies = []
        before: set[str] = set(self.said)  # type: ignore[attr-defined]
        said = set(before)
        used: dict[str, Expr] = self.used  # type: ignore[attr-defined]
        for i, (item, v) in enumerate(zip(items, value, strict=True)):
            self.bound = {**bound_item(var, item), **outer}
            self.said = set(before)  # what an item's values fed is news for each item
            self.item = (name, i)
            known = set(used)
            bodies.append(self.lift(v, names[0], (call, (*path, i))))  # type: ignore[attr-defined]
            self.item_values.setdefault((name, i), set()).update(set(used) - known)  # this item's values, used once
            said |= self.said  # type: ignore[has-type]
        self.bound = outer
        self.item = None
        self.said = said
        if not all(b == bodies[0] for b in bodies):  # items said with more or less of their parts: picked by what each said
            body = joined_picks(bodies, [{n for n, v in bound_item(var, item).items() if v is None} for item in items])
            if body is None:
                return None
            bodies = [body]
        reads = any(Param(n) in walk_exprs(bodies[0]) for n in names)
        if reads:
            self.said.add(name)  # type: ignore[attr-defined]
            for key in [k for k, e in used.items() if any(Param(n) in walk_exprs(e) for n in names)]:
                del used[key]  # the item is no value outside the list (an answer quoting it is no source)
        return var, bodies[0], reads

    def _rolled(self, items: tuple[Expr, ...], hint: str) -> Each | None:
        """Discovery: elements that are one expression of task spans side by side, as one list slot."""
        if not self.roll or len(items) < 2:
            return None
        spans = {name: span for span, (name, _v, _k, _h) in self.params.items()}
        own = []
        for e in items:
            names = sorted({p.name for p in walk_exprs(e) if isinstance(p, Param) and p.name in spans})
            if len(names) != 1:
                return None
            own.append(names[0])
        if len(set(own)) != len(own):
            return None
        bodies = [substitute(e, {n: own[0]}) for e, n in zip(items, own, strict=True)]
        if not all(b == bodies[0] for b in bodies):
            return None
        task: str = self.traj.task  # type: ignore[attr-defined]
        order = [spans[n] for n in own]
        if any(b[0] <= a[1] for a, b in zip(order, order[1:])):
            return None  # not in the task's order
        gaps = [task[a[1]:b[0]] for a, b in zip(order, order[1:])]
        if not all(SEPARATOR.fullmatch(g) for g in gaps) or len({g.strip() for g in gaps[:-1]}) > 1:
            return None  # the items are not written as one list
        values = [self.params[spans[n]][1] for n in own]
        if not all(type(v) is str for v in values) or any(self.params[spans[n]][3] is not None for n in own):
            return None  # items the task writes other than as passed on (in lowercase, as a number): one slot each
        for n in own:
            del self.params[spans[n]]
        # the items themselves: named after the argument ("tags"); items that select: after what selects ("item_names")
        name = self.namer.take(hint if bodies[0] == Param(own[0]) and hint.endswith("s") else own[0] + "s")  # type: ignore[attr-defined]
        var = item_name(name)
        separators = "|".join(sorted({" ".join(g.split()) for g in gaps}))
        self.params[(order[0][0], order[-1][1])] = (name, values, "list", "each:" + separators)
        self.scalars[:] = [s for s in self.scalars if not (isinstance(s[1], Param) and s[1].name in own)]
        return Each(Param(name), var, substitute(bodies[0], {own[0]: var}))


def _index(value: Any, seen: list[Any]) -> int | None:
    """Where ``value`` is in ``seen`` (equal, and of the same type, as ``distinct`` compares), or None."""
    return next((j for j, x in enumerate(seen) if type(x) is type(value) and x == value), None)


def joined_picks(exprs: list[Any], unsaid: list[set[str]]) -> Any:
    """One expression for ``exprs`` that differ only in what an element is picked by: where one picks
    ``pick(order['items'], 'name', item_name, 'options', item_options)`` and another picks by
    ``item_name`` alone, because its ``item_options`` was not said (``unsaid[i]``: the task values
    ``exprs[i]`` had none of), the first for both (a value not said picks by nothing). None where
    they differ otherwise."""
    out, free = exprs[0], set(unsaid[0])
    for e, none in zip(exprs[1:], unsaid[1:], strict=True):
        out = _join(out, e, free, none)
        if out is _FAIL:
            return None
        free &= none
    return out


_FAIL = object()


def _join(a: Any, b: Any, free_a: set[str], free_b: set[str]) -> Any:
    if a == b:
        return a
    if isinstance(a, Select) and isinstance(b, Select):
        extra_a = [p for p in a.also if p not in b.also]
        extra_b = [p for p in b.also if p not in a.also]
        if a.field != b.field or any(not (isinstance(v, Param) and v.name in free_b) for _f, v in extra_a):
            return _FAIL  # b picked without a value it had
        if any(not (isinstance(v, Param) and v.name in free_a) for _f, v in extra_b):
            return _FAIL
        inner = [_join(getattr(a, f), getattr(b, f), free_a, free_b) for f in ("seq", "key", "rest")]
        return _FAIL if _FAIL in inner else Select(inner[0], a.field, inner[1], inner[2], (*a.also, *extra_b))
    if type(a) is not type(b):
        return _FAIL
    if isinstance(a, tuple):
        if len(a) != len(b):
            return _FAIL
        parts = [_join(x, y, free_a, free_b) for x, y in zip(a, b, strict=True)]
        return _FAIL if _FAIL in parts else tuple(parts)
    if hasattr(a, "__dataclass_fields__"):
        fields = {f: _join(getattr(a, f), getattr(b, f), free_a, free_b) for f in a.__dataclass_fields__}
        return _FAIL if _FAIL in fields.values() else type(a)(**fields)
    return _FAIL


def each_guards(
    traj: Trajectory,
    args: list[tuple[tuple[str, Expr], ...]],
    output: Expr,
    bound: dict[str, Any],
    listed: str,
    var: str | tuple[str, ...],
) -> list[list[Guard]] | str:
    """Per call, the facts of each item of the list ``listed`` (as ``Guard("each", (), (listed, var, fact))``),
    or why the list cannot be one parameter.

    The facts are derived for every item (``var`` bound to it); a fact all items share is a guard
    on every item. A fact of a record nested in an item (an item's ``options``) that differs
    between items says which thing each is, and is noted, not guarded. Any other fact that
    differs between items (one item ``delivered``, another ``pending``) means the run treated
    items that differ alike: only its own items are evidence for that, so no list is learned.
    """
    rest = {k: v for k, v in bound.items() if k != listed}
    per_item = [derive_guards(traj, args, output, {**bound_item(var, item), **rest}) for item in bound[listed]]
    out: list[list[Guard]] = []
    written = max((i for i, c in enumerate(traj.calls) if c.tool in traj.tools and not traj.tools[c.tool].read), default=len(traj.calls))
    for i in range(len(traj.calls)):
        facts: dict[tuple[Any, ...], list[Guard | None]] = {}
        for k, guards in enumerate(per_item):
            for g in guards[i]:
                if g.kind != "has" and mentions(g, var):
                    facts.setdefault(fact_key(g), [None] * len(per_item))[k] = g
        here: list[Guard] = []
        for seen in facts.values():
            first = next(g for g in seen if g is not None)
            record = _nested(first, var, traj.calls[i].result, {**bound_item(var, bound[listed][0]), **rest})
            if record is not None:  # says which thing each item is: noted once per record, never guarded
                note = Guard("unguarded", record, ("items",))
                if note not in here:
                    here.append(note)
            elif all(g == first for g in seen):
                here.append(Guard("each", (), (listed, var, first)))
            elif all(g is None or (g.kind in ("member", "near", "equal") and g.value[1] is False) for g in seen):
                continue  # "differs from" where the texts happened to look alike: nothing a decision hangs on
            elif _shared(first, seen, traj, i, [{**bound_item(var, item), **rest} for item in bound[listed]]):
                here.append(Guard("each", (), (listed, var, first)))
            elif i >= written and _shared(first, seen, traj, i, [{**bound_item(var, item), **rest} for item in bound[listed]], gone=True):
                continue  # what the last write returned no longer holds some items' elements as the task says them (changed by it)
            elif all(g == first or (g is None and ambiguous(first.path, [(traj.calls[i].result, {**bound_item(var, item), **rest})]))
                     for g, item in zip(seen, bound[listed], strict=True)):
                continue  # the items without it pick several elements where it reads (one of two of a name): no fact of one
            else:
                return f"the items of {listed} differ in a fact of their own ({first.kind} at {first.path!r})"
        out.append(here)
    return out


def _shared(first: Guard, seen: list[Guard | None], traj: Trajectory, i: int, params: list[dict[str, Any]], *, gone: bool = False) -> bool:
    """Whether the fact ``first`` (derived for some items) holds as it is for the items it was not
    derived for: their facts were said of their element picked otherwise (by its options too,
    where the task's options describe it), and ``first`` reads the same of it. With ``gone``:
    whether ``first`` reads nothing for each of them (no element is as the task says it)."""
    results = [c.result for c in traj.calls]
    k = next(n for n, g in enumerate(seen) if g is not None)
    want = MISSING if gone else observe(first, traj.calls[i].result, params[k], results)
    return (gone or want is not MISSING) and all(
        g == first or (g is None and observe(first, traj.calls[i].result, p, results) == want)
        for g, p in zip(seen, params, strict=True)
    )


def mentions(x: Any, var: str | tuple[str, ...]) -> bool:
    """Whether a guard or an expression (or part of one) reads the item ``var``: a ``Where``/``At``
    step, a relation or a ``Param`` naming it."""
    names = var_names(var)
    if isinstance(x, (Where, At, Param)):
        return x.name in names
    if isinstance(x, Guard):
        if x.kind in ("member", "near", "equal") and x.value[0] in names:
            return True
        return mentions(x.path, var) or mentions(x.value, var)
    if isinstance(x, tuple):
        return any(mentions(e, var) for e in x)
    if hasattr(x, "__dataclass_fields__"):
        return any(mentions(getattr(x, f), var) for f in x.__dataclass_fields__)
    return False


def _nested(g: Guard, var: str | tuple[str, ...], result: Any, params: dict[str, Any]) -> tuple[Any, ...] | None:
    """The path of the record inside the item a fact is about (``item['options']``, for facts of
    ``item['options']['color']``), or None for the item's own fields (its status, whether its own
    list of refunds is empty)."""
    names = var_names(var)
    k = next((j for j, step in enumerate(g.path) if isinstance(step, (Where, At)) and step.name in names), None)
    if k is None or len(g.path) - k - 1 < 1:
        return None
    record = g.path[: k + 2]
    try:
        return record if type(resolve(result, record, params)) is dict else None
    except (KeyError, IndexError, TypeError):
        return None
