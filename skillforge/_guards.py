"""Guards: from what a run observed, the facts its choices could depend on.

For each tool result, the facts a replay must see again (each becomes a ``require``
right after the call that establishes it, so it fails before the next write and
before the answer):

- **presence and type** of every path the skill reads from it (``has(order, 'total', kind='number')``);
- **categorical values**, at any depth of dicts: booleans, None and enum-like strings
  (one to three lowercase or uppercase words such as ``shipped``, ``on hold``,
  ``IN_TRANSIT``, or one capitalised word such as ``Shipped``);
- **emptiness** of lists and the **sign** of numbers, at any depth of dicts;
- **over the elements of a list** (or of a dict keyed by ids): the set of values of
  each element's flag or status (``values(user['devices'], '*', 'active') == [True]``);
- **relations between the task's values and what was read**: whether a task value is
  in a list, among a dict's keys or among a field of a list's elements, and whether it
  equals a field it could be compared with (``group in user['groups']``).

Not facts: values a call echoes back from its own arguments, and values equal to a
task value (those are relations). Pure and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ._spec import DictOf, Expr, Fmt, Guard, Join, Len, ListOf, Neg, Param, Ref, Select
from ._trajectory import Trajectory

__all__ = ["EACH", "collect_values", "collection", "core", "near", "derive_guards", "refs_in", "token_shape", "value_kind", "walk_exprs"]

EACH = "*"  # in a fact's path: every element of a list (or value of an id-keyed dict)
_CODE_LIKE = re.compile(  # "shipped", "on hold", "pending (item modified)", "IN_TRANSIT"
    r"[a-z][a-z_-]*(?: \(?[a-z][a-z_-]*\)?){0,3}|[A-Z][A-Z_-]*(?: \(?[A-Z][A-Z_-]*\)?){0,3}"
)
_TITLE_WORD = re.compile(r"[A-Z][a-z]+")
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z_]*\d{0,2}")  # "status", "address1"; not "W123", "card_7815826"
_MAX_NODES = 20_000  # per result; a result larger than this is guarded up to here

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
    elif isinstance(expr, (Join, Len)):
        yield expr.seq
    elif isinstance(expr, Neg):
        yield from walk_exprs(expr.value)
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


def token_shape(v: Any) -> str:
    """Letters, digits and punctuation of a value, runs collapsed: ``"carol.diaz"`` → ``"a.a"``."""
    out: list[str] = []
    for ch in str(v):
        c = "9" if ch.isdigit() else "a" if ch.isalpha() else " " if ch.isspace() else ch
        if not (out and out[-1] == c and c in "9a "):
            out.append(c)
    return "".join(out)


_NUMERIC_TEXT = re.compile(r"-?\d+(?:\.\d+)?")
_SHORT_CODE = re.compile(r"[A-Za-z]{1,2}\d{1,2}")  # a priority or tier: P1, L2, T3


def _categorical(v: Any, element: bool = False) -> bool:
    if v is None or type(v) is bool:
        return True
    if type(v) is not str or not v or len(v) > 32:
        return False
    if _SHORT_CODE.fullmatch(v):
        return True
    return _CODE_LIKE.fullmatch(v) is not None or (not element and _TITLE_WORD.fullmatch(v) is not None)


def collection(d: dict[str, Any]) -> bool:
    """A dict keyed by data (ids, names) rather than by field names.

    Its keys do not look like field names (``"vpn-users"``, ``"W123"``), or it holds two or
    more records of one shape (``{"staff": {"since": ...}, "wiki": {"since": ...}}``).
    """
    if not d:
        return False
    if any(_FIELD_NAME.fullmatch(k) is None for k in d):
        return True
    records = list(d.values())
    return len(records) >= 2 and all(type(r) is dict for r in records) and len({tuple(sorted(r)) for r in records}) == 1


def _sort_key(v: Any) -> tuple[str, str]:
    return (type(v).__name__, repr(v))


def collect_values(value: Any, path: tuple[Any, ...]) -> list[Any]:
    """The distinct scalar values at ``path`` (``EACH`` fans out over a list or dict), sorted.

    Missing keys are skipped, so a value no element has is simply not in the list.

    >>> collect_values({"devices": [{"on": True}, {"on": False}, {"on": True}]}, ("devices", "*", "on"))
    [False, True]
    """
    level = [value]
    for key in path:
        nxt: list[Any] = []
        for v in level:
            if key == EACH and type(v) is list:
                nxt.extend(v)
            elif key == EACH and type(v) is dict:
                nxt.extend(v[k] for k in sorted(v))
            elif type(v) is dict and key in v:
                nxt.append(v[key])
            elif type(v) is list and type(key) is int and -len(v) <= key < len(v):
                nxt.append(v[key])
        level = nxt
    out: dict[tuple[str, str], Any] = {}
    for v in level:
        if v is None or type(v) in (bool, int, float, str):
            out.setdefault(_sort_key(v), v)
    return [out[k] for k in sorted(out)]


def _same_type(a: Any, b: Any) -> bool:
    if type(a) is bool or type(b) is bool:
        return False
    return type(a) is type(b) or (type(a) in (int, float) and type(b) in (int, float))


class _Facts:
    """The facts of one result, in a fixed order (sorted keys, shallowest first)."""

    def __init__(self, params: dict[str, Any], echoes: list[Any]) -> None:
        self.params = [(n, v) for n, v in params.items() if v is not None and type(v) in (str, int, float) and v != ""]
        self.echoes = echoes
        self.out: list[Guard] = []
        self.budget = _MAX_NODES

    def _known(self, v: Any) -> bool:
        """A value the call was given or the task says: a relation, not a fact of the world."""
        return any(_same_type(v, e) and v == e for e in self.echoes) or any(
            _same_type(v, p) and v == p for _n, p in self.params
        )

    def walk(self, v: Any, path: tuple[str | int, ...]) -> None:
        self.budget -= 1
        if self.budget < 0:
            return
        if _categorical(v):
            if not self._known(v):
                self.out.append(Guard("eq", path, v))
            return
        t = type(v)
        if t in (int, float):
            if not self._known(v) and v == v:
                self.out.append(Guard("sign", path, "positive" if v > 0 else "zero" if v == 0 else "negative"))
            self._equalities(v, path)
            return
        if t is str:
            if v == "" and not self._known(v):
                self.out.append(Guard("eq", path, ""))  # nothing there: "not shipped yet" may hinge on it
            elif _NUMERIC_TEXT.fullmatch(v) and not self._known(v):
                n = float(v)
                self.out.append(Guard("textsign", path, "positive" if n > 0 else "zero" if n == 0 else "negative"))
            self._equalities(v, path)
            return
        if t is list:
            self.out.append(Guard("len", path, "nonempty" if v else "empty"))
            if v and all(type(e) is dict for e in v):
                self._elements(v, path)
            elif v:
                self._members(v, path)
            return
        if t is dict:
            if collection(v):
                self.out.append(Guard("len", path, "nonempty" if v else "empty"))
                self._members(list(v), path)
                if all(type(e) is dict for e in v.values()):
                    self._elements(list(v.values()), path)
                return
            for name, value in self.params:
                if type(value) is str and value in v:
                    self.out.append(Guard("member", path, (name, True)))
            for key in sorted(v):
                self.walk(v[key], (*path, key))

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

    def _given(self, value: Any) -> bool:
        """Whether the call was given ``value``: the key it looked up is seldom what its lists are about."""
        return any(_same_type(value, e) and value == e for e in self.echoes)

    def _members(self, items: list[Any], path: tuple[str | int, ...]) -> None:
        for name, value in self.params:
            found = any(_same_type(e, value) and e == value for e in items)
            if found:
                self.out.append(Guard("member", path, (name, True)))
            elif type(value) is str and any(_scalar(e) for e in items) and not self._given(value):
                # not there, not even up to case, punctuation or type ("VPN-Users", "#W1", 6001): a
                # world where it is, in any of those forms, may be another decision
                self.out.append(Guard("near", path, (name, near(value, items))))
            elif any(_same_type(e, value) for e in items) and not self._given(value):
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
            statuses = all(_categorical(x, element=True) for x in seen) and len(distinct) < len(seen)
            if (flags or statuses) and not any(self._known(x) for x in seen):
                self.out.append(Guard("values", each, tuple(distinct)))
                continue  # the field's values are pinned: whether a task value is among them too
            for name, value in self.params:
                found = any(_same_type(x, value) and x == value for x in seen)
                if found:
                    self.out.append(Guard("member", each, (name, True)))
                elif type(value) is str and any(_comparable(str(x), value) for x in seen if _scalar(x)) and not self._given(value):
                    self.out.append(Guard("near", each, (name, near(value, seen))))
                elif any(_comparable(x, value) for x in seen) and not self._given(value):
                    self.out.append(Guard("member", each, (name, False)))


def core(text: str) -> str:
    """A text without surrounding punctuation, lowercased: ``"#W123"`` → ``"w123"``."""
    return re.sub(r"^[^\w]+|[^\w]+$", "", text).lower()


def near(value: Any, items: Any) -> bool:
    """Whether ``items`` holds ``value`` up to case, surrounding punctuation and type (``"6001"`` ~ ``6001``)."""
    if not _scalar(value):
        return False
    want = core(str(value))
    return any(_scalar(e) and core(str(e)) == want for e in items)


def _scalar(v: Any) -> bool:
    return type(v) in (str, int, float)


def _alike(a: Any, b: Any) -> bool:
    """Texts that could be the same value in another world: one kind of characters, a similar number of words."""
    if type(a) is not str or type(b) is not str or not _comparable(a, b):
        return False
    return abs(len(a.split()) - len(b.split())) <= 2 and (" " in a) == (" " in b)


def _comparable(a: Any, b: Any) -> bool:
    """Whether ``a`` could be ``b`` in another world: the same type, and for text the same
    kind of characters (digits only, no digits, or both)."""
    if not _same_type(a, b):
        return False
    if type(a) is not str:
        return True

    def coarse(text: str) -> tuple[bool, bool]:
        return any(c.isdigit() for c in text), any(not c.isdigit() for c in text)

    return coarse(a) == coarse(b)


def _leaves(value: Any) -> list[Any]:
    out: list[Any] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is dict:
            stack.extend(v.values())
        elif type(v) is list:
            stack.extend(v)
        else:
            out.append(v)
    return out


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
    guards: list[list[Guard]] = []
    for i, call in enumerate(traj.calls):
        paths = sorted(used[i], key=lambda p: (len(p), repr(p)))
        has = [Guard("has", p, value_kind(_at(call.result, p))) for p in paths]
        # text the skill passes on or quotes must be there again (an empty tracking number is news)
        has += [Guard("len", p, "nonempty") for p in paths if type(_at(call.result, p)) is str and _at(call.result, p)]
        facts = _Facts(params or {}, _leaves(call.args))
        facts.walk(call.result, ())
        guards.append(has + facts.out)
    for at, g in _comparisons(traj, args, params or {}) + _shared_ids(traj):
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
    for i, call in enumerate(traj.calls):
        ref = traj.tools.get(call.tool)
        if ref is None or ref.read:
            continue
        for _name, arg in args[i]:
            expr = arg.value if isinstance(arg, Neg) else arg  # a debit compares by its amount
            if isinstance(expr, Param) and _number(params.get(expr.name)):
                lhs, known, value = expr, -1, params[expr.name]
            elif isinstance(expr, Ref) and _number(_get(traj.calls[expr.call].result, expr.path)):
                lhs, known, value = expr, expr.call, _get(traj.calls[expr.call].result, expr.path)
            else:
                continue
            for j in range(i):
                if not traj.tools.get(traj.calls[j].tool, _WRITE).read:
                    continue
                echoes = _leaves(traj.calls[j].args)
                for path, leaf in _numbers(traj.calls[j].result):
                    if (isinstance(lhs, Ref) and (lhs.call, lhs.path) == (j, path)) or any(
                        _same_type(leaf, e) and leaf == e for e in echoes
                    ):
                        continue
                    sign = (value > leaf) - (value < leaf)
                    out.append((max(j, known), Guard("cmp", path, (j, lhs, sign))))
    return out


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


def _ids(value: Any, path: tuple[str | int, ...] = (), budget: list[int] | None = None) -> list[tuple[tuple[str | int, ...], str]]:
    """Id-like texts (a letter or symbol and a digit, no spaces) at dict paths of a result, shallowest first."""
    budget = budget if budget is not None else [2_000]
    if type(value) is str:
        ok = 3 <= len(value) <= 64 and " " not in value and any(c.isdigit() for c in value)
        return [(path, value)] if ok else []
    out: list[tuple[tuple[str | int, ...], str]] = []
    if type(value) is dict and not collection(value):
        for k in sorted(value):
            budget[0] -= 1
            if budget[0] < 0:
                break
            out.extend(_ids(value[k], (*path, k), budget))
    return out


class _Write:
    read = False


_WRITE = _Write()


def _number(v: Any) -> bool:
    return type(v) in (int, float) and v == v


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    try:
        return _at(value, path)
    except (KeyError, IndexError, TypeError):
        return None


def _numbers(value: Any, path: tuple[str | int, ...] = (), budget: list[int] | None = None) -> list[tuple[tuple[str | int, ...], Any]]:
    """Numbers at dict paths of a result (not inside lists), shallowest first."""
    budget = budget if budget is not None else [2_000]
    out: list[tuple[tuple[str | int, ...], Any]] = []
    if _number(value) and type(value) is not bool:
        return [(path, value)]
    if type(value) is dict and not collection(value):
        for k in sorted(value):
            budget[0] -= 1
            if budget[0] < 0:
                break
            out.extend(_numbers(value[k], (*path, k), budget))
    return out


MISSING = "<missing>"  # what a fact observes where its path does not exist in a result


def observe(g: Guard, result: Any, params: dict[str, Any], results: list[Any] | None = None) -> Any:
    """What fact ``g`` (a guard's kind, path and task value) observes in ``result``: its value there.

    Used to compare runs fact by fact, also where a fact was established in one run
    only (a list empty in one run, with elements in another). Hashable; ``MISSING``
    where the path is not there.
    """
    if g.kind == "cmp":  # an amount against a number read by call ``g.value[0]``
        call, lhs, _sign = g.value
        if results is None:
            return MISSING
        amount = params.get(lhs.name) if isinstance(lhs, Param) else _get(results[lhs.call], lhs.path)
        leaf = _get(results[call], g.path)
        if not (_number(amount) and _number(leaf)) or type(leaf) is bool or type(amount) is bool:
            return MISSING
        return (amount > leaf) - (amount < leaf)
    if EACH in g.path:
        seen = tuple(collect_values(result, g.path))
        if g.kind == "near":
            return g.value[0] in params and near(params[g.value[0]], seen)
        if g.kind == "member":
            name = g.value[0]
            return name in params and any(_same_type(v, params[name]) and v == params[name] for v in seen)
        return seen
    try:
        value = _at(result, g.path)
    except (KeyError, IndexError, TypeError):
        return MISSING
    match g.kind:
        case "eq" | "pin":
            return _frozen(value)
        case "has":
            return value_kind(value)
        case "len":
            return ("nonempty" if value else "empty") if type(value) in (list, dict, str) else MISSING
        case "size":
            return len(value) if type(value) in (list, dict) else MISSING
        case "count":
            if type(value) not in (list, dict):
                return MISSING
            return len(value) if len(value) < 2 else "many"
        case "same":
            if results is None:
                return MISSING
            other = _get(results[g.value[0]], g.value[1])
            return other is not None and other == value
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
            if name not in params or type(value) not in (list, dict):
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
