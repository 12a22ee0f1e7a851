"""Guards: from what a run observed, the facts its choices could depend on.

For each tool result, the facts a replay must see again (each becomes a ``require``
right after the call that establishes it, so it fails before the next write and
before the answer):

- **presence and type** of every path the skill reads from it (``has(order, 'total', kind='number')``),
  and of a text it passes on or quotes, its **lines** (one, or several: a note appended to twice
  may be quoted by its last line, which a text of one line cannot tell from the whole);
- **categorical values**, at any depth of dicts: booleans, None and enum-like strings
  (one to three lowercase or uppercase words such as ``shipped``, ``on hold``,
  ``IN_TRANSIT``, or one capitalised word such as ``Shipped``);
- **emptiness** of lists and dicts, the **sign** of numbers (the value of integers up to
  ``_SMALL_INT``), at any depth of dicts;
- **over the elements of a list** (or of a dict keyed by ids): the set of values of
  each element's flag or status (``values(user['devices'], '*', 'active') == [True]``);
- **which codes a list of code words holds** where the skill neither passes it on nor
  quotes any of it and none is a task value (``among(order['tags'], ['gift', 'web'])``);
- **the part a task value selects**, walked like a result: a dict's entry under a key
  the task says (path step ``At``), the one element of a list of records whose field
  equals a task value (``Where``, rendered with ``pick``);
- **relations between the task's values and what was read**: whether a task value is
  in a list, among a dict's keys, among a field of a list's elements or in a comma-separated
  listing, and whether it equals a field it could be compared with (``group in user['groups']``);
- **comparisons** of each amount or date a write is given with the numbers, numeric
  texts and dates read before it, and of each amount with what is left of a number
  once a smaller one of its record is taken from it (``cmp``; ``order['total'] -
  order['refunded']``), the **scale** of an amount a write takes
  from a result (``digits``), and **ids two reads agree on** (``same``).

Not facts: values a call echoes back from its own arguments, and values equal to a
task value (those are relations). Pure and deterministic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._spec import MINUS, At, taken_from, Expr, Guard, Len, Neg, Param, Ref, Select, Update, Where
from ._trajectory import Trajectory
from ._values import (
    _ISO_DATE,
    bound_item,
    _MAX_NODES,
    _NUMERIC_TEXT,
    _SMALL_INT,
    EACH,
    _alike,
    _at,
    _categorical,
    same_kind,
    _get,
    _keyed,
    _leaves,
    _number,
    _same_type,
    _scalar,
    collect_values,
    collection,
    core,
    evaluate,
    enum_like,
    listing,
    near,
    refs_in,
    resolve,
    token_shape,
    value_kind,
    walk_exprs,
)

__all__ = ["EACH", "OBSERVED", "fact_key", "text_lines", "collect_values", "collection", "core", "digits", "enum_like", "rank", "near", "resolve", "derive_guards", "refs_in", "token_shape", "value_kind", "walk_exprs"]


class _Facts:
    """The facts of one result, in a fixed order (sorted keys, shallowest first)."""

    def __init__(
        self, params: dict[str, Any], echoes: list[Any], used: frozenset[tuple[Any, ...]] = frozenset(), read: bool = True,
        changes: frozenset[str] = frozenset(), last_write: bool = False,
    ) -> None:
        self.params = [(n, v) for n, v in params.items() if v is not None and type(v) in (str, int, float) and v != ""]
        # what the task says of an element (an item's options), not a change it asks for that happens to
        # equal a changed element's options (every option changed)
        self.dicts = [(n, v) for n, v in params.items() if type(v) is dict and v and n not in changes]
        self.echoes = echoes
        self.used = used  # paths the skill passes on or quotes: data, not a decision's input
        self.read = read
        self.last_write = last_write  # what the run's last write returned: nothing written after reads it
        self.out: list[Guard] = []
        self.budget = _MAX_NODES

    def _known(self, v: Any) -> bool:
        """A value the call was given or the task says: a relation, not a fact of the world."""
        return any(_same_type(v, e) and v == e for e in self.echoes) or any(
            _same_type(v, p) and v == p for _n, p in self.params
        )

    def walk(self, v: Any, path: tuple[Any, ...], skip: str | None = None) -> None:
        """Facts of ``v`` at ``path`` (``skip``: a field not to walk, the one that selected ``v``)."""
        self.budget -= 1
        if self.budget < 0:
            return
        if _categorical(v):
            if not self._known(v):
                self.out.append(Guard("eq", path, v))
            elif not any(_same_type(v, e) and v == e for e in self.echoes):  # a name the task says, read back
                self.out.extend(Guard("equal", path, (n, True)) for n, p in self.params if _same_type(v, p) and v == p)
            return
        t = type(v)
        if t in (int, float):
            if t is int and 0 <= v <= _SMALL_INT and not self._known(v) and path not in self.used:
                self.out.append(Guard("eq", path, v))  # a level, a tier, a count of few: each may decide
            elif not self._known(v) and v == v:
                self.out.append(Guard("sign", path, "positive" if v > 0 else "zero" if v == 0 else "negative"))
            self._equalities(v, path)
            return
        if t is str:
            if v == "" and not self._known(v):
                self.out.append(Guard("eq", path, ""))  # nothing there: "not shipped yet" may hinge on it
            elif _NUMERIC_TEXT.fullmatch(v) and not self._known(v):
                n = float(v)
                self.out.append(Guard("textsign", path, "positive" if n > 0 else "zero" if n == 0 else "negative"))
            items = listing(v)
            if items is not None:  # "staff,wiki": whether a task value is listed there
                self._members(items, path)
            self._equalities(v, path)
            return
        if t is list:
            self.out.append(Guard("len", path, "nonempty" if v else "empty"))
            if v and all(type(e) is dict for e in v):
                self._elements(v, path)
                for step, part in _keyed(v, self.params, self.dicts):  # the element the task names, less the field that names it
                    if not self._rewritten(step, part):
                        self.walk(part, (*path, step), skip=step.field if isinstance(step, Where) else None)
            elif v:
                self._members(v, path)
                if all(enum_like(e) for e in v) and not any(self._known(e) for e in v) and not any(
                    u[: len(path)] == path for u in self.used
                ):  # a list of code words the skill does not pass on or quote, nor any of them: which codes it holds
                    self.out.append(Guard("codes", path, tuple(sorted(set(v)))))
            return
        if t is dict:
            if collection(v):
                self.out.append(Guard("len", path, "nonempty" if v else "empty"))
                self._members(list(v), path, keys=True)
                if all(type(e) is dict for e in v.values()):
                    self._elements(list(v.values()), path)
                for step, part in _keyed(v, self.params, self.dicts):
                    self.walk(part, (*path, step))
                return
            if not v:
                self.out.append(Guard("len", path, "empty"))  # no holds, no flags set: either may decide
            elif self.read:  # a field the learned record lacked (a hold reason) may be news
                self.out.append(Guard("keys", path, tuple(sorted(v))))
            flags = len(v) >= 2 and len({type(x) for x in v.values()}) == 1 and type(next(iter(v.values()))) in (bool, int, float)
            keyed = _keyed(v, self.params, self.dicts)
            for name, value in self.params:
                if type(value) is str and value in v:
                    self.out.append(Guard("member", path, (name, True)))
                elif flags and type(value) is str and value.islower() and any(token_shape(k) == token_shape(value) for k in v):
                    self.out.append(Guard("member", path, (name, False)))  # a feature map without this feature
            taken = {v_key for v_key in v if any(type(p) is str and p == v_key for _n, p in self.params)}
            for step, part in keyed:
                self.walk(part, (*path, step))
            for key in sorted(v):
                if key not in taken and key != skip:
                    self.walk(v[key], (*path, key))

    def _rewritten(self, step: At | Where, element: Any) -> bool:
        """Whether ``element`` is one the last write changed: in what it returned, the element a task
        value names alone (``pick(result['items'], 'name', item_name)``) where the task says more of
        it (its options) that it no longer has. No facts of it: which element the name alone picks
        rests on the list holding one of that name (an order may hold two), and they are read after
        the last write, when they can stop no write and the answer (if it reads the element, it
        picks it itself) is no decision they inform."""
        if not self.last_write or not isinstance(step, Where) or step.also or type(element) is not dict:
            return False
        return any(
            type(x) is dict and d.keys() <= x.keys() and any(x[k] != d[k] for k in d)
            for x in element.values() for _n, d in self.dicts
        )

    def _equalities(self, v: Any, path: tuple[str | int, ...]) -> None:
        if any(_same_type(v, e) and v == e for e in self.echoes):
            return  # the call's echo of what it was given
        for name, value in self.params:
            if not _same_type(v, value):
                continue
            if v == value:
                self.out.append(Guard("equal", path, (name, True)))
            elif token_shape(v) == token_shape(value) or _alike(v, value):
                self.out.append(Guard("equal", path, (name, False)))

    def _given(self, value: Any, path: tuple[Any, ...] = ("*",)) -> bool:
        """Whether the call was given ``value``: the key it looked up is seldom what its lists are
        about, unless the list is the whole result (a search for it)."""
        return bool(path) and any(_same_type(value, e) and value == e for e in self.echoes)

    def _members(self, items: list[Any], path: tuple[str | int, ...], keys: bool = False) -> None:
        """Whether each task value is among ``items`` (a list, a listing, or a dict's ``keys``)."""
        where = ("*",) if keys else path  # a dict's keys are never a search's results
        for name, value in self.params:
            found = any(_same_type(e, value) and e == value for e in items)
            if found:
                self.out.append(Guard("member", path, (name, True)))
            elif type(value) is str and any(_scalar(e) and same_kind(e, value) for e in items) and not self._given(value, where):
                # not there, not even up to case, punctuation or type ("VPN-Users", "#W1", 6001): a
                # world where it is, in any of those forms, may be another decision
                self.out.append(Guard("near", path, (name, near(value, items))))
            elif any(_same_type(e, value) and same_kind(e, value) for e in items) and not self._given(value, where):
                self.out.append(Guard("member", path, (name, False)))

    def _elements(self, elements: list[dict[str, Any]], path: tuple[str | int, ...]) -> None:
        """Facts over a list's elements: their flags, their statuses where the list shows some repeat, whether a task value is among a field's values.

        A string field whose values all differ across the elements names them (an item's
        name, an id) rather than saying something about them, so it is no fact.
        """
        fields = sorted({k for e in elements for k in e})
        for f in fields:
            seen = [e[f] for e in elements if f in e]
            each = (*path, EACH, f)
            distinct = collect_values(elements, (EACH, f))
            flags = all(x is None or type(x) is bool for x in seen)
            if seen and all(type(x) is dict for x in seen):  # flags one level down: item['attributes']['final_sale']
                for sub in sorted({k for x in seen for k in x}):
                    inner = [x[sub] for x in seen if sub in x]
                    if all(y is None or type(y) is bool for y in inner):
                        self.out.append(Guard("values", (*each, sub), tuple(collect_values(elements, (EACH, f, sub)))))
                continue
            statuses = all(_categorical(x, element=True) for x in seen) and len(distinct) < len(seen)
            if (flags or statuses) and not any(self._known(x) for x in seen):
                self.out.append(Guard("values", each, tuple(distinct)))
                continue  # the field's values are pinned: whether a task value is among them too
            for name, value in self.params:
                found = any(_same_type(x, value) and x == value for x in seen)
                if found:
                    self.out.append(Guard("member", each, (name, True)))
                elif type(value) is str and any(same_kind(x, value) for x in seen if _scalar(x)) and not self._given(value):
                    self.out.append(Guard("near", each, (name, near(value, seen))))
                elif any(same_kind(x, value) for x in seen) and not self._given(value):
                    self.out.append(Guard("member", each, (name, False)))


def derive_guards(
    traj: Trajectory,
    args: list[tuple[tuple[str, Expr], ...]],
    output: Expr,
    params: dict[str, Any] | None = None,
) -> list[tuple[Guard, ...]]:
    """Guards for each call of ``traj``, given the lifted arguments, output and the task's values."""
    n = len(traj.calls)
    used: list[set[tuple[str | int, ...]]] = [set() for _ in range(n)]
    for step_args in args:
        for _name, expr in step_args:
            for ref in refs_in(expr):
                used[ref.call].add(ref.path)
    for ref in refs_in(output):
        used[ref.call].add(ref.path)
    changes = frozenset(  # the task's dicts that say what to change, not which element
        p.name for step_args in args for _n, expr in step_args for e in walk_exprs(expr)
        if isinstance(e, Update) for p in walk_exprs(e.change) if isinstance(p, Param)
    )
    guards: list[list[Guard]] = []
    last_write = max((i for i, c in enumerate(traj.calls) if not traj.tools.get(c.tool, _WRITE).read), default=-1)
    for i, call in enumerate(traj.calls):
        paths = sorted(used[i], key=lambda p: (len(p), repr(p)))
        has = [Guard("has", p, value_kind(_at(call.result, p))) for p in paths]
        # text the skill passes on or quotes must be there again (an empty tracking number is news), in as
        # many lines: quoting a note of one line whole is also quoting its last line, which two lines tell apart
        has += [Guard("lines", p, text_lines(_at(call.result, p))) for p in paths if type(_at(call.result, p)) is str and _at(call.result, p)]
        facts = _Facts(params or {}, _leaves(call.args), frozenset(paths), traj.tools.get(call.tool, _WRITE).read, changes, i == last_write)
        facts.walk(call.result, ())
        guards.append(has + facts.out)
    for i, step_args in enumerate(args):  # an amount a write takes from a result: its scale
        if traj.tools.get(traj.calls[i].tool, _WRITE).read:
            continue
        for _name, expr in step_args:
            for ref in refs_in(expr):
                v = _get(traj.calls[ref.call].result, ref.path)
                if _number(v) and type(v) is not bool and Guard("digits", ref.path, digits(v)) not in guards[ref.call]:
                    guards[ref.call].append(Guard("digits", ref.path, digits(v)))
    found = _comparisons(traj, args, params or {}) + _cross_reads(traj, params or {}) + _shared_ids(traj) + _joined(traj)
    for at, g in found + _picked(traj, args, output, params or {}):
        if g not in guards[at]:
            guards[at].append(g)
    return [tuple(g) for g in guards]


def _comparisons(
    traj: Trajectory, args: list[tuple[tuple[str, Expr], ...]], params: dict[str, Any]
) -> list[tuple[int, Guard]]:
    """How each amount a write is given compares with each number read before it.

    "Refund 40" when the balance is 100 is a decision the balance could change:
    ``require(amount < account['balance'], ...)``. Placed where both are known.
    """
    out: list[tuple[int, Guard]] = []
    named = [(n, v) for n, v in params.items() if v is not None and type(v) in (str, int, float) and v != ""]
    for i, call in enumerate(traj.calls):
        ref = traj.tools.get(call.tool)
        if ref is None or ref.read:
            continue
        for _name, arg in args[i]:
            expr = arg.value if isinstance(arg, Neg) else arg  # a debit compares by its amount
            if isinstance(expr, Param) and _ordered(params.get(expr.name)):
                lhs, known, value = expr, -1, params[expr.name]
            elif isinstance(expr, Ref) and _ordered(_get(traj.calls[expr.call].result, expr.path)):
                lhs, known, value = expr, expr.call, _get(traj.calls[expr.call].result, expr.path)
            else:
                continue
            for j in range(i):
                if not traj.tools.get(traj.calls[j].tool, _WRITE).read:
                    continue
                echoes = _leaves(traj.calls[j].args)
                for path, leaf in _numbers(traj.calls[j].result, named):
                    if (isinstance(lhs, Ref) and (lhs.call, lhs.path) == (j, path)) or any(
                        _same_type(leaf, e) and leaf == e for e in echoes
                    ):
                        continue
                    pair = _as_ordered(value, leaf)
                    if pair is None:
                        continue
                    a, b = pair
                    extra = (True,) if type(leaf) is str and not _ISO_DATE.fullmatch(leaf) else ()  # money as text
                    out.append((max(j, known), Guard("cmp", path, (j, lhs, (a > b) - (a < b), *extra))))
                if not _number(value) or type(value) is bool:
                    continue  # a date: no difference of it
                for path, less, left in _left(traj.calls[j].result, named, lhs.path if isinstance(lhs, Ref) and lhs.call == j else None):
                    out.append((max(j, known), Guard("cmp", path, (j, lhs, (value > left) - (value < left), (MINUS, less)))))
    return out


def _left(
    result: Any, named: list[tuple[str, Any]], skip: tuple[Any, ...] | None
) -> list[tuple[tuple[Any, ...], tuple[Any, ...], float]]:
    """Pairs of numbers of one record of ``result`` whose difference is what is left of the greater (a
    total less what was refunded of it): ``(its path, the path of what is taken from it, what is left)``.
    Not the number a write takes itself (``skip``): what is left of it says nothing of it."""
    numbers = [(p, v) for p, v in _numbers(result, named) if type(v) in (int, float) and v >= 0 and p and p != skip]
    return [(pa, pb, a - b) for pa, a in numbers for pb, b in numbers if pa[:-1] == pb[:-1] and a > b]


def _picked(
    traj: Trajectory, args: list[tuple[tuple[str, Expr], ...]], output: Expr, params: dict[str, Any]
) -> list[tuple[int, Guard]]:
    """How the numbers of a record a predicate picks compare with the numbers read before the first write.

    "Pay with my gift card" picks the customer's gift card (``pick(user['methods'], 'source',
    method_source)``), and its balance against the order's total decides whether the agent pays
    with it: another customer's card, holding less than the order costs, is another decision
    (``require(pick(...)['balance'] > order['total'])``). The records of an id-keyed dict get no
    other fact of their numbers. Compared with the whole numbers and amounts of each read (not
    numeric texts: a zip code is no limit), and with those the run's calls or answer quote. Only the
    records of dicts: the element of a list a task value picks is compared by ``_cross_reads``."""
    tops = [e for step in args for _n, e in step] + [output]
    selects = {Select(e.seq, e.field, e.key, (), e.also) for top in tops for e in walk_exprs(top) if isinstance(e, Select)}
    results = [c.result for c in traj.calls]
    first_write = min((i for i, c in enumerate(traj.calls) if not traj.tools.get(c.tool, _WRITE).read), default=len(traj.calls))
    quoted = sorted({(r.call, r.path) for top in tops for r in refs_in(top)}, key=repr)
    beside: dict[int, list[tuple[tuple[Any, ...], Any]]] = {}  # each read's numbers, and those the run quotes of it
    for j in range(first_write):
        if traj.tools.get(traj.calls[j].tool, _WRITE).read:
            found = [(p, w) for p, w in _numbers(results[j], []) if type(w) in (int, float)]
            found += [(p, _get(results[j], p)) for c, p in quoted if c == j and type(_get(results[j], p)) in (int, float)]
            echoes = _leaves(traj.calls[j].args)
            beside[j] = [(p, w) for p, w in dict.fromkeys(found) if w not in echoes]
    out: list[tuple[int, Guard]] = []
    for select in sorted(selects, key=repr):
        known = max(r.call for r in refs_in(select))
        try:
            element, seq = evaluate(select, results, params), evaluate(select.seq, results, params)
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        if type(element) is not dict or known >= first_write or type(seq) is not dict:
            continue  # an element of a list a task value picks has its numbers compared already (``_numbers``)
        for field in sorted(element):
            v = element[field]
            if type(v) not in (int, float):
                continue
            lhs = Select(select.seq, select.field, select.key, (field,), select.also)
            for j, numbers in beside.items():
                for path, w in numbers:
                    g = Guard("cmp", path, (j, lhs, (v > w) - (v < w)))
                    if (max(j, known), g) not in out:
                        out.append((max(j, known), g))
    return out


def rank(seq: Any, index: int, field: str) -> str:
    """``"min"``/``"max"`` if ``seq[index][field]`` alone is the least/greatest of that field, else ``"mid"``."""
    if type(seq) is not list or not -len(seq) <= index < len(seq):
        return "mid"
    nums = [e.get(field) if type(e) is dict else None for e in seq]
    if not all(_number(n) and type(n) is not bool for n in nums):
        return "mid"
    mine = nums[index]
    if nums.count(mine) == 1 and mine == min(nums):
        return "min"
    if nums.count(mine) == 1 and mine == max(nums):
        return "max"
    return "mid"


def text_lines(text: str) -> int | str:
    """A text's lines as a fact: 0 (empty), 1, or ``"many"``."""
    n = len(text.splitlines())
    return n if n < 2 else "many"


def digits(v: float) -> int:
    """How many digits a number has before the point: refunding 40 and refunding 900 may be
    different decisions (a limit of the agent's policy lies between), so a write takes an
    amount of the scale it was learned with."""
    return len(str(int(abs(v))))


def _cross_reads(traj: Trajectory, params: dict[str, Any]) -> list[tuple[int, Guard]]:
    """How values two reads returned compare: dates always (a return window against today),
    numbers where the run wrote nothing (its answer may be a comparison: "can A-1 cover #5?")."""
    named = [(n, v) for n, v in params.items() if v is not None and type(v) in (str, int, float) and v != ""]
    reads = [i for i, c in enumerate(traj.calls) if traj.tools.get(c.tool, _WRITE).read]
    numbers_too = len(reads) == len(traj.calls)
    found = {i: [(p, v) for p, v in _numbers(traj.calls[i].result, named) if v not in _leaves(traj.calls[i].args)] for i in reads}
    out: list[tuple[int, Guard]] = []
    for k in reads:
        for j in (j for j in reads if j < k):
            for pj, vj in found[j]:
                for pk, vk in found[k]:
                    dates = type(vj) is str and type(vk) is str and bool(_ISO_DATE.fullmatch(vj)) and bool(_ISO_DATE.fullmatch(vk))
                    numbers = numbers_too and _number(vj) and _number(vk) and type(vj) is not bool and type(vk) is not bool
                    if dates or numbers:
                        out.append((k, Guard("cmp", pk, (k, Ref(j, pj), (vj > vk) - (vj < vk)))))
    for k in reads:  # a list's length against a whole number beside it (devices against max_devices)
        for path, n in _lengths(traj.calls[k].result):
            for pj, vj in found[k]:
                if type(vj) is int and vj > 1 and pj[:-1] == path[:-1]:
                    out.append((k, Guard("cmp", pj, (k, Len(Ref(k, path)), (n > vj) - (n < vj)))))
    return out


def _lengths(value: Any) -> list[tuple[tuple[Any, ...], int]]:
    """The lengths of lists at dict paths of a result (not inside lists or id-keyed dicts)."""
    return _fields(value, lambda v: len(v) if type(v) is list else None)


def _fields(value: Any, found: Callable[[Any], Any], path: tuple[Any, ...] = (), budget: list[int] | None = None) -> list[tuple[tuple[Any, ...], Any]]:
    """``found(v)`` of the values at dict paths of a result (not inside lists or id-keyed dicts)
    where it is not None; a value it finds is not descended into."""
    budget = budget if budget is not None else [2_000]
    hit = found(value)
    if hit is not None:
        return [(path, hit)]
    out: list[tuple[tuple[Any, ...], Any]] = []
    if type(value) is dict and not collection(value):
        for k in sorted(value):
            budget[0] -= 1
            if budget[0] < 0:
                break
            out.extend(_fields(value[k], found, (*path, k), budget))
    return out


def _ordered(v: Any) -> bool:
    """An amount or a date (ISO): what a write's argument is compared with."""
    return _number(v) and type(v) is not bool or (type(v) is str and _ISO_DATE.fullmatch(v) is not None)


def _as_ordered(a: Any, b: Any) -> tuple[Any, Any] | None:
    """``a`` and ``b`` as values of one order (numbers, numeric text as a number, ISO dates), or None."""
    if type(a) is str or type(b) is str:
        if type(a) is str and type(b) is str and _ISO_DATE.fullmatch(a) and _ISO_DATE.fullmatch(b):
            return a, b
        if _number(a) and type(a) is not bool and type(b) is str and _NUMERIC_TEXT.fullmatch(b):
            return a, float(b)
        return None
    if _number(a) and _number(b) and type(a) is not bool and type(b) is not bool:
        return a, b
    return None


def _shared_ids(traj: Trajectory) -> list[tuple[int, Guard]]:
    """Ids two reads agreed on: the order's customer is the customer who wrote in.

    For each read, an id-like value (text with a digit) equal to one an earlier read
    returned: ``require(order['customer_id'] == customer['customer_id'], ...)``. Echoes of
    what a call was given are left out (they are relations to the task).
    """
    out: list[tuple[int, Guard]] = []
    seen: list[tuple[int, tuple[str | int, ...], str]] = []
    for i, call in enumerate(traj.calls):
        if not traj.tools.get(call.tool, _WRITE).read:
            continue
        echoes = {e for e in _leaves(call.args) if type(e) is str}
        mine = [(p, v) for p, v in _ids(call.result) if v not in echoes]
        for path, value in mine:
            for j, other_path, other in seen:
                if other == value:
                    out.append((i, Guard("same", path, (j, other_path))))
                    break
        seen += [(i, p, v) for p, v in mine]
    return out


def _joined(traj: Trajectory) -> list[tuple[int, Guard]]:
    """The fields of a record a read names by its id in another read's id-keyed dict.

    The order's payment names the method it was paid with (``order['payments'][0]['method_id']``), a key
    of the customer's methods: whether that method is a gift card may be what the agent decided on
    ("already paid with your gift card"), so each short text or flag of the record that every record of
    the dict has (which kind of record it is: a card's ``brand`` is no fact of a gift card) is a fact
    (``pick(customer['methods'], 'id', order['payments'][0]['method_id'])['source'] == 'gift_card'``),
    checked once both reads are made. Not a record's own id inside its own dict, nor an id the read
    was given (a relation to the task)."""
    reads = [i for i, c in enumerate(traj.calls) if traj.tools.get(c.tool, _WRITE).read]
    keyed = [  # each id-keyed dict, with the fields all its records have (what kind of record it is)
        (j, q, d, sorted(set.intersection(*(set(r) for r in d.values()))))
        for j in reads for q, d in _fields(traj.calls[j].result, _records_by_id)
    ]
    out: list[tuple[int, Guard]] = []
    for i in reads if keyed else ():
        echoes = {e for e in _leaves(traj.calls[i].args) if type(e) is str}
        for p, v in _id_texts(traj.calls[i].result, (), [_MAX_JOINED]):
            for j, q, d, shared in keyed:
                record = d.get(v) if v not in echoes and not (i == j and p[: len(q)] == q) else None
                key = next((f for f in sorted(record) if record[f] == v), None) if type(record) is dict else None
                if key is None:
                    continue
                select = Select(Ref(j, q), key, Ref(i, p))
                for field in shared:
                    if field != key and _categorical(record[field]):
                        out.append((max(i, j), Guard("chosen", (), (select, field, record[field]))))
    return out


_MAX_JOINED = 200  # values a result's walk for ids looks at


def _records_by_id(v: Any) -> dict[str, Any] | None:
    """``v`` if it is a dict of records keyed by their ids (``{'gift_card_1': {'id': 'gift_card_1', ...}}``)."""
    return v if type(v) is dict and collection(v) and all(type(r) is dict for r in v.values()) else None


def _id_texts(value: Any, path: tuple[str | int, ...], budget: list[int]) -> list[tuple[tuple[str | int, ...], str]]:
    """Id-like texts (as ``_ids``) at the dict and list paths of a result, not inside id-keyed dicts."""
    budget[0] -= 1
    if budget[0] < 0:
        return []
    if type(value) is str:
        return [(path, value)] if _id_like(value) else []
    if type(value) is dict and not collection(value):
        return [found for k in sorted(value) for found in _id_texts(value[k], (*path, k), budget)]
    if type(value) is list:
        return [found for k, v in enumerate(value) for found in _id_texts(v, (*path, k), budget)]
    return []


def _id_like(v: Any) -> bool:
    """Whether ``v`` looks like an id: text of 3 to 64 characters, a digit among them, no space."""
    return type(v) is str and 3 <= len(v) <= 64 and " " not in v and any(c.isdigit() for c in v)


def _ids(value: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """Id-like texts (a letter or symbol and a digit, no spaces) at dict paths of a result."""
    return _fields(value, lambda v: v if _id_like(v) else None)


class _Write:
    read = False


_WRITE = _Write()


def _numbers(
    value: Any, params: list[tuple[str, Any]], path: tuple[Any, ...] = (), budget: list[int] | None = None
) -> list[tuple[tuple[Any, ...], Any]]:
    """Numbers, numeric texts and ISO dates at dict paths of a result, shallowest first: not
    inside lists or id-keyed dicts, except in the part of one that a task value selects."""
    budget = budget if budget is not None else [2_000]
    out: list[tuple[tuple[Any, ...], Any]] = []
    if (_number(value) and type(value) is not bool) or (
        type(value) is str and (_NUMERIC_TEXT.fullmatch(value) or _ISO_DATE.fullmatch(value))
    ):
        return [(path, value)]
    if type(value) is dict and not collection(value):
        taken = {k for k in value if any(type(p) is str and p == k for _n, p in params)}
        for k in sorted(value):
            budget[0] -= 1
            if budget[0] < 0:
                break
            if k not in taken:
                out.extend(_numbers(value[k], params, (*path, k), budget))
    if type(value) in (dict, list):
        for step, part in _keyed(value, params):
            budget[0] -= 1
            if budget[0] >= 0:
                out.extend(_numbers(part, params, (*path, step), budget))
    return out


MISSING = "<missing>"  # what a fact observes where its path does not exist in a result


# the kinds of fact ``observe`` reads off any run's results (the others are agreements and checks)
OBSERVED = frozenset({
    "chosen", "opt", "eq", "member", "near", "equal", "values", "pin", "len", "sign", "textsign", "count", "size",
    "cmp", "same", "digits", "rank", "keys", "has", "each", "lines",
})


def fact_key(g: Guard) -> tuple[Any, ...]:
    """What a fact is about, its value aside: kind, path, and the task value it relates to (facts
    of one key in two runs, or for two items of a list, are one fact observed twice)."""
    if g.kind in ("member", "near", "equal"):
        return (g.kind, g.path, g.value[0])
    if g.kind in ("codes", "range", "alike"):  # the codes each run's list held, the span a number (the codes a code word) was probed over: one
        return (g.kind, g.path)  # fact, whose runs' values merge (``_merging``)
    if g.kind == "cmp":
        return (g.kind, g.path, g.value[0], g.value[1], *g.value[3:])
    if g.kind in ("rank", "chosen"):
        return (g.kind, g.path, g.value[0], g.value[1])
    if g.kind == "each":
        return (g.kind, g.value[0], g.value[1], fact_key(g.value[2]))
    if g.kind == "same":
        return (g.kind, g.path, g.value)
    if g.kind in OBSERVED:
        return (g.kind, g.path)
    return (g.kind, g.path, repr(g.value))



def observe(g: Guard, result: Any, params: dict[str, Any], results: list[Any] | None = None) -> Any:
    """What fact ``g`` (a guard's kind, path and task value) observes in ``result``: its value there.

    Used to compare runs fact by fact, also where a fact was established in one run
    only (a list empty in one run, with elements in another). Hashable; ``MISSING``
    where the path is not there.
    """
    if g.kind == "each":  # a fact of every item of a list the task gives: the value all items share
        listed, var, inner = g.value
        items = params.get(listed)
        if type(items) is not list or not items:
            return MISSING
        seen = {observe(inner, result, {**params, **bound_item(var, item)}, results) for item in items}
        return seen.pop() if len(seen) == 1 else MISSING
    if g.kind == "chosen":  # a field of the element a predicate picked
        select, field, _learned = g.value
        try:
            element = evaluate(select, results or [], params)
        except (KeyError, IndexError, TypeError, ValueError):
            return MISSING
        return element[field] if type(element) is dict and field in element else MISSING
    if g.kind == "cmp":  # an amount (or date) against one read by call ``g.value[0]``
        call, lhs = g.value[:2]
        if results is None:
            return MISSING
        if isinstance(lhs, Len):
            seq = _get(results[lhs.seq.call], lhs.seq.path, params)
            amount = len(seq) if type(seq) is list else None
        elif isinstance(lhs, Select):  # a number of the record a predicate picked
            try:
                amount = evaluate(lhs, results, params)
            except (KeyError, IndexError, TypeError, ValueError):
                return MISSING
        else:
            amount = params.get(lhs.name) if isinstance(lhs, Param) else _get(results[lhs.call], lhs.path, params)
        against = _get(results[call], g.path, params)
        less = taken_from(g)
        if less is not None:  # what is left of it
            taken = _get(results[call], less, params)
            if not (_number(against) and _number(taken)) or type(against) is bool or type(taken) is bool:
                return MISSING
            against = against - taken
        pair = _as_ordered(amount, against)
        if pair is None:
            return MISSING
        a, b = pair
        return (a > b) - (a < b)
    if g.kind == "opt":  # the value of a field some records lack: (value,) or ()
        try:
            parent = resolve(result, g.path[:-1], params)
        except (KeyError, IndexError, TypeError):
            return MISSING
        return tuple(collect_values(parent, g.path[-1:])) if type(parent) is dict else MISSING
    keyed = max((i for i, k in enumerate(g.path) if isinstance(k, (At, Where))), default=-1)
    if EACH in g.path[keyed + 1 :]:
        try:
            part = resolve(result, g.path[: keyed + 1], params)
        except (KeyError, IndexError, TypeError):
            return MISSING
        seen = tuple(collect_values(part, g.path[keyed + 1 :]))
        if g.kind == "near":
            return g.value[0] in params and near(params[g.value[0]], seen)
        if g.kind == "member":
            name = g.value[0]
            return name in params and any(_same_type(v, params[name]) and v == params[name] for v in seen)
        return seen
    try:
        value = resolve(result, g.path, params)
    except (KeyError, IndexError, TypeError):
        return MISSING
    match g.kind:
        case "eq" | "pin":
            return _frozen(value)
        case "has":
            return value_kind(value)
        case "len":
            return ("nonempty" if value else "empty") if type(value) in (list, dict, str) else MISSING
        case "lines":
            return text_lines(value) if type(value) is str else MISSING
        case "size":
            return len(value) if type(value) in (list, dict) else MISSING
        case "count":
            if type(value) not in (list, dict):
                return MISSING
            return len(value) if len(value) < 2 else "many"
        case "same":
            if results is None:
                return MISSING
            other = _get(results[g.value[0]], g.value[1], params)
            return other is not None and other == value
        case "rank":
            return rank(value, g.value[0], g.value[1])
        case "keys":
            return tuple(sorted(value)) if type(value) is dict else MISSING
        case "digits":
            if not _number(value) or type(value) is bool:
                return MISSING
            return digits(value)
        case "textsign":
            if type(value) is not str or not _NUMERIC_TEXT.fullmatch(value):
                return MISSING
            n = float(value)
            return "positive" if n > 0 else "zero" if n == 0 else "negative"
        case "sign":
            if type(value) not in (int, float) or type(value) is bool:
                return MISSING
            return "positive" if value > 0 else "zero" if value == 0 else "negative"
        case "near":
            name = g.value[0]
            if name not in params or type(value) not in (list, dict, str):
                return MISSING
            return near(params[name], value)
        case "member":
            name = g.value[0]
            if name not in params or type(value) not in (list, dict):
                return MISSING
            p = params[name]
            return any(_same_type(e, p) and e == p for e in value)
        case "equal":
            name = g.value[0]
            return name in params and _same_type(value, params[name]) and value == params[name]
    return MISSING


def _frozen(v: Any) -> Any:
    if type(v) is list:
        return tuple(_frozen(x) for x in v)
    if type(v) is dict:
        return tuple((k, _frozen(v[k])) for k in sorted(v))
    return v
