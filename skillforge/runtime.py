"""Helpers that generated skills import: ``from skillforge.runtime import require``.

They work the same inside the sandbox and when a skill is imported as a plain
function.
"""

from __future__ import annotations

from ._exceptions import GuardFailed
from ._guards import rank as _rank
from ._values import collect_values
from ._values import near as _near
from ._values import one as _one
from ._values import wanted as _wanted
from ._tools import current_run, spend_built

__all__ = ["among", "check", "compare", "distinct", "has", "join", "lines", "near", "pick", "rank", "require", "updated", "values"]


def require(condition: object, why: str) -> None:
    """Stop the skill unless ``condition`` holds; the agent takes over from here.

    Example:
        >>> require(True, "order is not refunded yet")
        >>> require(False, "order is not refunded yet")
        Traceback (most recent call last):
        ...
        skillforge._exceptions.GuardFailed: order is not refunded yet
    """
    if not condition:
        raise GuardFailed(why)


_KINDS: dict[str, frozenset[type]] = {
    "str": frozenset({str}),
    "number": frozenset({int, float}),
    "bool": frozenset({bool}),
    "null": frozenset({type(None)}),
    "list": frozenset({list}),
    "dict": frozenset({dict}),
}


def has(value: object, *path: object, kind: str | None = None) -> bool:
    """Whether ``value[path[0]][path[1]]...`` exists and is of ``kind`` (of any kind, without one).

    Kinds: ``str``, ``number`` (int or float, not bool), ``bool``, ``null``, ``list``, ``dict``.

    Example:
        >>> has({"items": [{"price": 9.5}]}, "items", 0, "price", kind="number")
        True
        >>> has({"items": []}, "items", 0, "price", kind="number")
        False
        >>> has({"orders": ["#W1"]}, "orders", 1)
        False
    """
    for key in path:
        t = type(value)
        if t is dict:
            if key not in value:  # type: ignore[operator]
                return False
            value = value[key]  # type: ignore[index]
        elif t is list and type(key) is int and -len(value) <= key < len(value):  # type: ignore[arg-type, operator]
            value = value[key]  # type: ignore[index]
        else:
            return False
    if kind is None:
        return True
    try:
        return type(value) in _KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown kind {kind!r}; use one of {', '.join(_KINDS)}") from None


def check(tool: object, learned: object, *, after: bool = False, **args: object) -> bool:
    """Run a tool's declared pre-check (or, ``after=True``, its post-check) against what it captured when learned."""
    spec = getattr(tool, "__skillforge_tool__", None)
    guard = getattr(spec, "post_guard" if after else "guard", None)
    if guard is None:
        what = "post-check" if after else "pre-check"
        raise GuardFailed(f"{getattr(tool, '__name__', tool)!r} has no {what} any more; re-learn the skill")
    current = guard.capture(**args)
    run = current_run()
    if run is not None:  # kept with its call, should the agent take over and learn from here
        if after:
            run.post_captures[len(run.calls) - 1] = current
        else:
            run.captures[len(run.calls)] = current
    return bool(guard.compare(current, learned))


def pick(seq: object, field: str, value: object, *more: object) -> object:
    """The one element of ``seq`` whose ``field`` equals ``value`` (and each further field, value
    pair in ``more``, but a further value None: the task did not say it); the skill stops if there is
    not exactly one (copies equal in every field count as one). A dict's values are its elements.

    Example:
        >>> pick([{"name": "mug", "sku": "M1"}, {"name": "lamp", "sku": "L2"}], "name", "lamp")["sku"]
        'L2'
        >>> pick({"v1": {"color": "red"}, "v2": {"color": "blue"}}, "color", "blue")
        {'color': 'blue'}
    """
    if type(seq) is dict:
        seq = list(seq.values())
    if type(seq) is not list or len(more) % 2:
        raise GuardFailed(f"expected a list to pick {field} == {value!r} from")
    pairs = _wanted((field, value), zip(more[::2], more[1::2], strict=True))
    found = [e for e in seq if type(e) is dict and all(f in e and e[f] == v for f, v in pairs)]
    if not _one(found):
        how = "no element has" if not found else f"{len(found)} elements have"
        said = " and ".join(f"{f} == {v!r}" for f, v in pairs)
        raise GuardFailed(f"{how} {said}, so which one to use is not the learned decision")
    return found[0]


def distinct(items: object) -> list[object]:
    """The elements of ``items`` (a list) without repeats, each where it first appears: the
    arguments of a read made once per distinct argument (two items of one product: one read).

    Example:
        >>> distinct(["9100", "9200", "9100"])
        ['9100', '9200']
    """
    if type(items) is not list:
        raise GuardFailed(f"expected a list to take the distinct elements of, got {type(items).__name__}")
    out: list[object] = []
    for x in items:
        if not any(type(y) is type(x) and y == x for y in out):
            out.append(x)
    return out


def updated(base: object, change: object) -> dict[str, object]:
    """``base`` (a dict) with the fields of ``change`` set as ``change`` has them.

    Example:
        >>> updated({"color": "red", "size": "M"}, {"color": "blue"})
        {'color': 'blue', 'size': 'M'}
    """
    if type(base) is not dict or type(change) is not dict:
        raise GuardFailed(f"expected two dicts to update, got {type(base).__name__} and {type(change).__name__}")
    return {**base, **change}


def values(value: object, *path: object) -> list[object]:
    """The distinct values at ``path`` inside ``value``, sorted; ``'*'`` stands for every element.

    Example:
        >>> values({"devices": [{"active": True}, {"active": False}]}, "devices", "*", "active")
        [False, True]
    """
    return collect_values(value, path)


def join(seq: object, sep: str | None, *path: object, sort: bool = False) -> str:
    """Every element of ``seq`` (``path`` inside each) as text, joined by ``sep``; sorted first if ``sort``.

    The skill stops if ``seq`` is not a list or an element lacks ``path``, and where ``sep`` is
    None (learned from a list of one element, which shows no separator) if it has more than one.

    Example:
        >>> join([{"name": "wiki"}, {"name": "staff"}], ", ", "name", sort=True)
        'staff, wiki'
    """
    if type(seq) is not list:
        raise GuardFailed(f"expected a list to join, got {type(seq).__name__}")
    if sep is None and len(seq) != 1:
        raise GuardFailed(f"learned from a list of one element, which shows no separator: this one has {len(seq)}")
    items: list[object] = []
    for element in seq:
        for key in path:
            if type(element) is dict and key in element:
                element = element[key]
            elif type(element) is list and type(key) is int and -len(element) <= key < len(element):
                element = element[key]
            else:
                raise GuardFailed(f"an element of the list has no {key!r} to list")
        items.append(element)
    if sort:
        try:
            items = sorted(items)  # type: ignore[type-var]
        except TypeError:
            raise GuardFailed("the list mixes values that do not sort together") from None
        if all(type(i) is str for i in items) and items != sorted(items, key=lambda i: (str(i).casefold(), i)):
            # learned where both orders agreed: whether the agent sorts "Outage" before "access" is unknown
            raise GuardFailed("sorting this list by code point and alphabetically (case aside) differ")
    texts = [str(i) for i in items]
    spend_built(sum(map(len, texts)) + len(sep or "") * max(len(texts) - 1, 0))  # in a skill: charged before it is built
    return (sep or "").join(texts)


def among(seq: object, allowed: object) -> bool:
    """Whether every element of the list ``seq`` is one of ``allowed`` (an empty list's are): the codes a
    list holds (an order's tags) are among those the skill's runs showed.

    Example:
        >>> among(["gift", "web"], ["gift", "vip", "web"]), among(["gift", "chargeback"], ["gift", "web"])
        (True, False)
    """
    if type(allowed) is not list:  # the skill's own literal, edited into something else
        raise TypeError(f"among() takes the allowed codes as a list, got {type(allowed).__name__}")
    if type(seq) is not list:  # a guard on a list met something else: the world differs from the runs'
        raise GuardFailed(f"expected a list of codes, got {type(seq).__name__}")
    return all(type(e) is str and e in allowed for e in seq)


def compare(a: object, b: object = 0) -> int:
    """-1, 0 or 1 as ``a`` is less than, equal to or more than ``b``; with no ``b``, the sign of ``a``.

    Example:
        >>> compare(2, 5), compare(5, 5), compare(-0.5)
        (-1, 0, -1)
    """
    return (a > b) - (a < b)  # type: ignore[operator]


def lines(text: object) -> int:
    """How many lines ``text`` has (``str.splitlines``; 0 for an empty text).

    Example:
        >>> lines("Waiting on the vendor\\nFan replaced")
        2
    """
    if type(text) is not str:  # a guard on a text met something else: the world differs from the runs'
        raise GuardFailed(f"expected a text, got {type(text).__name__}")
    return len(text.splitlines())


def rank(seq: object, index: int, field: str) -> str:
    """Where ``seq[index][field]`` stands among that field of every element: ``"min"`` or
    ``"max"`` if it alone is the least or the greatest, else ``"mid"`` (also when the
    elements do not all have it as a number).

    Example:
        >>> rank([{"price": 320}, {"price": 210}, {"price": 260}], 1, "price")
        'min'
    """
    return _rank(seq, index, field)


def near(value: object, items: object) -> bool:
    """Whether ``items`` (a list, or a dict's keys) holds ``value`` up to case and surrounding punctuation.

    Example:
        >>> near("W123", ["#W123", "#W456"])
        True
    """
    return _near(value, items)
