"""Values inside tool results: walking, selecting and describing them. Pure.

The vocabulary facts and selections are written in: a path into a result (``At`` and
``Where`` steps take the task's values), the elements of a list or of an id-keyed dict,
what kind of value a field holds, and when two values are alike (``near``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from ._spec import At, Const, DictOf, Each, Expr, Fmt, Join, Len, ListOf, Neg, Param, Ref, Select, Update, Where

__all__ = [
    "EACH", "ambiguous", "bound_item", "picks_several", "var_names", "collect_values", "collection", "computed", "core", "enum_like", "evaluate", "listing", "near", "refs_in", "resolve",
    "rebuilt", "same_kind", "token_shape", "value_kind", "walk_exprs",
]

EACH = "*"  # in a fact's path: every element of a list (or value of an id-keyed dict)
_CODE_LIKE = re.compile(  # "shipped", "on hold", "pending (item modified)", "IN_TRANSIT"
    r"[a-z][a-z_-]*(?: \(?[a-z][a-z_-]*\)?){0,3}|[A-Z][A-Z_-]*(?: \(?[A-Z][A-Z_-]*\)?){0,3}"
)
_TITLE_WORD = re.compile(r"[A-Z][a-z]+")
_ENUM_WORDS = re.compile(r"[a-z][a-z_-]*(?: \(?[a-z][a-z_-]*\)?){0,3}")  # a program's vocabulary
_CODE_WORDS = re.compile(r"(?=[A-Z_ -]*[A-Z]{4}|[A-Z]+[_ -])[A-Z][A-Z_-]*(?: [A-Z][A-Z_-]*){0,3}")  # SHIPPED, ON_HOLD
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z_]*\d{0,2}")  # "status", "address1"; not "W123", "card_7815826"
_MAX_NODES = 20_000  # per result; a result larger than this is guarded up to here
_SMALL_INT = 9  # integers up to this are guarded by value (a severity, a tier), larger ones by sign


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


def rebuilt(x: Any, change: Any) -> Any:
    """``x`` (an expression, or tuples of them) with each part ``change`` replaces replaced: ``change(e)``
    returns what stands for ``e``, or ``e`` itself to look inside it (frozen dataclasses and tuples,
    rebuilt)."""
    y = change(x)
    if y is not x:
        return y
    if isinstance(x, tuple):
        return tuple(rebuilt(e, change) for e in x)
    if hasattr(x, "__dataclass_fields__"):
        return type(x)(**{f: rebuilt(getattr(x, f), change) for f in x.__dataclass_fields__})
    return x


def walk_exprs(expr: Expr) -> Iterator[Expr]:
    """``expr`` and every expression inside it."""
    yield expr
    if isinstance(expr, Select):
        yield from walk_exprs(expr.seq)  # a Ref, or the element another selection picked
        yield from walk_exprs(expr.key)
        for _field, also in expr.also:
            yield from walk_exprs(also)
    elif isinstance(expr, Update):
        yield from walk_exprs(expr.base)
        yield from walk_exprs(expr.change)
    elif isinstance(expr, (Join, Len)):
        yield expr.seq
    elif isinstance(expr, Neg):
        yield from walk_exprs(expr.value)
    elif isinstance(expr, Each):
        yield expr.seq
        yield from walk_exprs(expr.body)
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


def evaluate(expr: Expr, results: list[Any], params: dict[str, Any]) -> Any:
    """The value of a selection-like expression in a run (its results and task values), as the
    skill computes it; raises ``KeyError`` (or ``ValueError``) where the run has no such value."""
    if isinstance(expr, Param):
        return params[expr.name]
    if isinstance(expr, Ref):
        return _at(results[expr.call], expr.path)
    if isinstance(expr, DictOf):  # the fields a task value sets: {'color': color}
        return {k: evaluate(v, results, params) for k, v in expr.items}
    if isinstance(expr, Update):
        base, change = evaluate(expr.base, results, params), evaluate(expr.change, results, params)
        if type(base) is not dict or type(change) is not dict:
            raise ValueError("an update of something other than a dict")
        return {**base, **change}
    if isinstance(expr, Select):
        seq = evaluate(expr.seq, results, params)
        members = list(seq.values()) if type(seq) is dict else seq
        pairs = wanted((expr.field, evaluate(expr.key, results, params)), [(f, evaluate(v, results, params)) for f, v in expr.also])
        found = [e for e in members if type(e) is dict and all(f in e and e[f] == v for f, v in pairs)]
        if not one(found):
            raise KeyError(expr.field)
        return _at(found[0], expr.rest)
    raise ValueError(f"cannot evaluate {expr!r}")


def computed(expr: Expr, results: list[Any], params: dict[str, Any]) -> Any:
    """The value an argument or answer expression gives in a run, as the skill's code computes it:
    ``evaluate``'s selections, and constants, lengths, signs and the texts a format writes. Raises
    ``ValueError`` for a whole list's join or a loop (what a run says of those is not read off one
    value), ``KeyError`` (or ``IndexError``, ``TypeError``) where the run has no such value."""
    if isinstance(expr, Const):
        return expr.value
    if isinstance(expr, Neg):
        return -computed(expr.value, results, params)
    if isinstance(expr, Len):
        return len(computed(expr.seq, results, params))
    if isinstance(expr, ListOf):
        return [computed(item, results, params) for item in expr.items]
    if isinstance(expr, Fmt):
        out = []
        for part in expr.parts:
            if isinstance(part, str):
                out.append(part)
            else:
                value = computed(part[0], results, params)
                out.append(format(value, part[1]) if part[1] else str(value))
        return "".join(out)
    if isinstance(expr, (Join, Each)):
        raise ValueError(f"cannot compute {expr!r} from one value")
    return evaluate(expr, results, params)


def var_names(var: str | tuple[str, ...]) -> tuple[str, ...]:
    """The names an item of a list is read by: the item's own, or its record's parts."""
    return (var,) if type(var) is str else var


def bound_item(var: str | tuple[str, ...], item: Any) -> dict[str, Any]:
    """The task values one item of a list gives: itself as ``var``, or each part of a record.

    Example:
        >>> bound_item("tag", "red"), bound_item(("name", "qty"), ("mug", 2))
        ({'tag': 'red'}, {'name': 'mug', 'qty': 2})
    """
    if type(var) is str:
        return {var: item}
    return dict(zip(var, item, strict=True)) if isinstance(item, (tuple, list)) and len(item) == len(var) else {}


def one(found: list[Any]) -> bool:
    """Whether the elements a predicate found are one element: exactly one, or copies equal in
    every field (an order that lists the same item twice), so whichever is taken is the same.

    Example:
        >>> one([{"id": 1}]), one([{"id": 1}, {"id": 1}]), one([{"id": 1}, {"id": 2}]), one([])
        (True, True, False, False)
    """
    return bool(found) and all(e == found[0] and _same_type(e, found[0]) for e in found[1:])


def wanted(first: tuple[str, Any], more: Any) -> list[tuple[str, Any]]:
    """The (field, value) pairs a pick compares: the first, and each further one whose value is not
    None (an item's optional part the task did not say picks by nothing).

    Example:
        >>> wanted(("name", "Mug"), [("options", None), ("size", "L")])
        [('name', 'Mug'), ('size', 'L')]
    """
    return [first, *((f, v) for f, v in more if v is not None)]


def _at(value: Any, path: tuple[str | int, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def resolve(value: Any, path: tuple[Any, ...], params: dict[str, Any]) -> Any:
    """``value`` at ``path``, where ``At`` and ``Where`` steps take the task's values from ``params``.

    Raises ``KeyError`` (or ``IndexError``/``TypeError``) where the path is not there,
    including a ``Where`` that does not find exactly one element.
    """
    for key in path:
        if isinstance(key, At):
            value = value[params[key.name]]
        elif isinstance(key, Where):
            pairs = wanted((key.field, params[key.name]), [(f, params[n]) for f, n in key.also])
            found = [e for e in value if type(e) is dict and all(f in e and _same_type(e[f], w) and e[f] == w for f, w in pairs)]
            if not one(found):
                raise KeyError(key)
            value = found[0]
        else:
            value = value[key]
    return value


def _keyed(v: Any, params: list[tuple[str, Any]], dicts: list[tuple[str, Any]] | None = None) -> list[tuple[At | Where, Any]]:
    """The parts of ``v`` a task value selects: a dict's value under a key the task says, the one
    element of a list of records whose field equals a task value. First match per task value."""
    out: list[tuple[At | Where, Any]] = []
    for name, value in params:
        if type(v) is dict and type(value) is str and value in v:
            out.append((At(name), v[value]))
        elif type(v) is list and v and all(type(e) is dict for e in v):
            for f in sorted({k for e in v for k in e}):
                found = [e for e in v if f in e and _same_type(e[f], value) and e[f] == value]
                also = _also(found, f, dicts or [])  # and what the task's dicts say of it (its options)
                if also is not None:
                    out.append((Where(f, name, also[0]), also[1]))
                    break
                if one(found):
                    out.append((Where(f, name), found[0]))
                    break
    return out


def _also(found: list[Any], field: str, params: list[tuple[str, Any]]) -> tuple[tuple[tuple[str, str], ...], Any] | None:
    """Among elements that share a field's value, the one whose dict field equals a dict the task gives."""
    if not found:
        return None
    for name, value in params:
        if type(value) is not dict or not value:
            continue
        for f in sorted({k for e in found for k in e} - {field}):
            picked = [e for e in found if e.get(f) == value]
            if one(picked):
                return ((f, name),), picked[0]
    return None


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


def enum_like(v: Any) -> bool:
    """Code words (``pending``, ``on hold``, ``awaiting_payment``; ``SHIPPED``, ``IN_TRANSIT``): a program's
    vocabulary, not a name or a place. Upper-case codes of two or three letters (``CA``, ``USD``, ``JFK``)
    name places and things as often as states, so they are not."""
    return type(v) is str and (_ENUM_WORDS.fullmatch(v) is not None or _CODE_WORDS.fullmatch(v) is not None)


_LISTING_PIECE = re.compile(r"[^\s,;]{1,32}")


def listing(text: str) -> list[str] | None:
    """The items of text that lists codes (``"staff,vpn-users"``, ``"a; b"``), or None."""
    if "," not in text and ";" not in text:
        return None
    pieces = [p.strip() for p in re.split(r"[,;]", text)]
    return pieces if len(pieces) >= 2 and all(_LISTING_PIECE.fullmatch(p) for p in pieces) else None


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


def core(text: str) -> str:
    """A text without surrounding punctuation, lowercased: ``"#W123"`` → ``"w123"``."""
    return re.sub(r"^[^\w]+|[^\w]+$", "", text).lower()


def near(value: Any, items: Any) -> bool:
    """Whether ``items`` holds ``value`` up to case, surrounding punctuation and type (``"6001"`` ~ ``6001``)."""
    if not _scalar(value):
        return False
    if type(items) is str:
        items = listing(items) or [items]
    want = core(str(value))
    return any(_scalar(e) and core(str(e)) == want for e in items)


def _scalar(v: Any) -> bool:
    return type(v) in (str, int, float)


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _alike(a: Any, b: Any) -> bool:
    """Texts that could be the same value in another world: both emails, both dates, or one kind of
    characters and a similar number of words."""
    if type(a) is not str or type(b) is not str:
        return False
    if any(p.fullmatch(a) and p.fullmatch(b) for p in (_EMAIL, _ISO_DATE)):
        return True
    if not same_kind(a, b):
        return False
    return abs(len(a.split()) - len(b.split())) <= 2 and (" " in a) == (" " in b)


def same_kind(a: Any, b: Any) -> bool:
    """Whether ``a`` could be ``b`` in another world, as far as their kind goes: the same type (a number
    and a text that is one count as one), and for texts the same kind of characters, both numbers or
    neither, both dates or neither, both emails or neither, and marks inside their words in common where
    both have some (a username "maria.lopez" and a group "payroll-admins" are other kinds of value; a
    price is no email)."""
    if type(a) in (str, int, float) and type(b) in (str, int, float):
        return _same_kind(a, b, type(a), type(b))  # the types in the key: 1 and 1.0 and True are of other kinds
    return _kind_met(a, b)


@lru_cache(maxsize=65536)
def _same_kind(a: Any, b: Any, _ta: type, _tb: type) -> bool:
    return _kind_met(a, b)


def _kind_met(a: Any, b: Any) -> bool:
    """``same_kind``, uncached."""
    if type(a) is str and type(b) in (int, float) and type(b) is not bool:
        return _NUMERIC_TEXT.fullmatch(a.strip()) is not None
    if type(b) is str and type(a) in (int, float) and type(a) is not bool:
        return _NUMERIC_TEXT.fullmatch(b.strip()) is not None
    if not _comparable(a, b):
        return False
    if type(a) is not str:
        return True
    if any((p.fullmatch(a.strip()) is None) != (p.fullmatch(b.strip()) is None) for p in (_NUMERIC_TEXT, _ISO_DATE)):
        return False  # a number or a date, and a text that is neither
    marks_a, marks_b = _marks(a), _marks(b)
    return ("@" in marks_a) == ("@" in marks_b) and not (marks_a and marks_b and not marks_a & marks_b)


def _marks(text: str) -> set[str]:
    """The punctuation inside a text's words (not at its ends: a sentence's full stop is not a mark of its kind)."""
    return {c for c in text.strip().strip(".,;:!?'\"()") if not c.isalnum() and not c.isspace()}


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


def scalars(value: Any) -> set[str]:
    """The text and numbers inside ``value`` (a call's arguments or result; booleans, None and empty
    text aside), as canonical JSON: what two calls share when they take or show the same value."""
    return {json.dumps(v) for v in _leaves(value) if type(v) in (str, int, float) and v != ""}


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


def _number(v: Any) -> bool:
    return type(v) in (int, float) and v == v


def _get(value: Any, path: tuple[Any, ...], params: dict[str, Any] | None = None) -> Any:
    try:
        return resolve(value, path, params or {})
    except (KeyError, IndexError, TypeError):
        return None


def ambiguous(path: tuple[Any, ...], seen: list[tuple[Any, dict[str, Any]]]) -> bool:
    """Whether a task value on ``path`` picks several elements in one of ``seen`` (a result and the
    task values it was read with): no one element has the fact there."""
    for m, key in enumerate(path):
        if isinstance(key, Where):
            for result, params in seen:
                try:
                    parent = resolve(result, path[:m], params)
                except (KeyError, IndexError, TypeError):
                    continue
                if type(parent) is list and picks_several(parent, key, params):
                    return True
    return False


def picks_several(elements: Any, where: Where, params: dict[str, Any]) -> bool:
    """Whether ``where`` finds several different elements (the payment and the refund of one card)."""
    try:
        pairs = wanted((where.field, params[where.name]), [(f, params[n]) for f, n in where.also])
    except KeyError:
        return False
    found = [e for e in elements if type(e) is dict and all(f in e and e[f] == w for f, w in pairs)]
    return len(found) > 1 and not one(found)
