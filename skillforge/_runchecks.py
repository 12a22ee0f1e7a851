"""What a lifted run says of itself: reasons it cannot be a skill, and the values it pins.

Pure functions of a run and its lifted steps (``_lifting``): an answer that says a number
nothing explains, a constant tied to a task value, an answer that names a list's items one
by one, values the run took by position, and task values one run cannot tell from constants.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ._antiunify import says
from ._guards import rank
from ._selecting import _dig
from ._spec import Const, DictOf, Each, Expr, Fmt, Guard, ListOf, Param, Ref, Select
from ._trajectory import Trajectory
from ._values import var_names, walk_exprs

__all__ = ["coincidences", "element_ref", "positional_pins", "quoted_item", "quoted_parts", "tied_constant", "unexplained_numbers"]


def literal_texts(*tops: Expr) -> list[str]:
    """The text ``tops`` (an answer, call arguments) say as their own: constant texts and the literal parts of f-strings."""
    texts = [e.value for top in tops for e in walk_exprs(top) if isinstance(e, Const) and type(e.value) is str]
    return texts + [p for top in tops for e in walk_exprs(top) if isinstance(e, Fmt) for p in e.parts if type(p) is str]


def unexplained_numbers(output: Expr, task: str) -> list[tuple[str, str]]:
    """Each number written in the answer's own text that the task does not say, as ``(text, number)``:
    the literal piece of the answer it stands in (its place) and the number, in the order said."""
    texts = literal_texts(output)
    said = {m.group().replace(",", "") for m in re.finditer(r"\d[\d,]*(?:\.\d+)?", task)}
    out: list[tuple[str, str]] = []
    for text in texts:
        for m in re.finditer(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])", text):
            if m.group().replace(",", "") not in said and (text, m.group()) not in out:
                out.append((text, m.group()))
    return out


def tied_constant(
    traj: Trajectory, raw_steps: list[tuple[str, tuple[tuple[str, Expr], ...]]], output: Expr, bound: dict[str, Any]
) -> str | None:
    """Why the run cannot be a skill, if a learned constant evidently depends on a task value.

    A write given ``-40.0`` (or 4000, or a text holding "40") for a task that says 40,
    where no rule explains how: replaying the constant for "50" would be wrong, so the
    run is not learned.
    """
    values = {name: v for name, v in bound.items() if v is not None}
    numbers = {name: _as_number(v) for name, v in values.items()}
    for i, (tool, args) in enumerate(raw_steps):
        if traj.tools[tool].read:
            continue
        for arg, expr in args:
            for e in walk_exprs(expr):
                if type(e) is not Const or e.value is None or type(e.value) is bool:
                    continue
                c = e.value
                for name, n in numbers.items():
                    if n and type(c) in (int, float) and c != n and (abs(c) == abs(n) or c in (n * 100, n / 100)):
                        return (f"{tool}'s {arg} is the constant {c!r}, tied to the task's {name} ({values[name]!r}) "
                                "by a rule skillforge does not know; not learned (the agent keeps such tasks)")
                    text = str(values[name])
                    if type(c) is str and c != text and len(text) >= 2 and re.search(
                        rf"(?<![\w.@-]){re.escape(text)}(?![\w@-])", c
                    ):
                        return (f"{tool}'s {arg} is the constant {c!r}, which holds the task's {name} ({text!r}) "
                                "where no rule explains it; not learned (the agent keeps such tasks)")
    return None


def quoted_item(
    raw_steps: list[tuple[str, tuple[tuple[str, Expr], ...]]], output: Expr, bound: dict[str, Any],
    items: frozenset[tuple[int, tuple[Any, ...]]] = frozenset(),
) -> str | None:
    """Why the run cannot be a skill, if its answer names an item of a list parameter one by one
    ("Returned Tablet."): an answer for the items of another task would need other text. ``items``:
    the elements of results the list's items picked (call, path), which the answer may quote too."""
    eaches = {e.var: e.seq.name for _t, a in raw_steps for _k, top in a for e in walk_exprs(top) if isinstance(e, Each)}
    if not eaches:
        return None
    names = {n for var in eaches for n in var_names(var)}
    if any(isinstance(e, Param) and e.name in names for e in walk_exprs(output)) or any(
        isinstance(e, Ref) and e.call == c and e.path[: len(p)] == p for e in walk_exprs(output) for c, p in items
    ):
        return "the answer names an item of a list the task gives; not learned (the agent keeps such tasks)"
    texts = literal_texts(output)
    for listed in set(eaches.values()):
        for item in bound.get(listed) or ():
            if type(item) is str and any(re.search(rf"(?<!\w){re.escape(item)}(?!\w)", t) for t in texts):
                return f"the answer says {item!r}, an item of {listed}, as text; not learned (the agent keeps such tasks)"
    return None


def _as_number(v: Any) -> float | None:
    if type(v) in (int, float):
        return float(v)
    if type(v) is str and re.fullmatch(r"-?\d+(?:\.\d+)?", v):
        return float(v)
    return None


def positional_pins(
    traj: Trajectory, args: list[tuple[tuple[str, Expr], ...]], output: Expr
) -> list[tuple[int, Guard]]:
    """Guards for values taken from a list by position, which nothing in the task or the run explains.

    The only element of a list is no choice: the list must have one element again. From a
    longer list, the element is pinned to the value the run took, so that another world
    cannot silently get another element (a selection by a field, ``pick``, needs no pin).
    """
    exprs = [e for step in args for _k, e in step] + [output]
    refs: list[Ref] = []
    for top in exprs:
        stack: list[Expr] = [top]
        while stack:
            e = stack.pop()
            if isinstance(e, Ref):
                refs.append(e)
            elif isinstance(e, ListOf):
                stack.extend(e.items)
            elif isinstance(e, DictOf):
                stack.extend(x for _k, x in e.items)
            elif isinstance(e, Fmt):
                stack.extend(p[0] for p in e.parts if not isinstance(p, str))
            elif isinstance(e, Select):
                stack.append(e.key)  # its list is chosen by a field, not by position
    out: list[tuple[int, Guard]] = []
    for ref in sorted(set(refs), key=repr):
        value = traj.calls[ref.call].result
        for j, key in enumerate(ref.path):
            if type(key) is int and type(value) is list:
                if len(value) == 1:
                    out.append((ref.call, Guard("count", ref.path[:j], 1)))
                else:  # the value taken, and where: the same position of a list as long
                    out.append((ref.call, Guard("pin", ref.path, _dig(traj.calls[ref.call].result, ref.path))))
                    out.append((ref.call, Guard("size", ref.path[:j], len(value))))
                    # the cheapest, the latest? where it stood among the others, by each number they all have
                    numeric = [f for f in sorted(value[key]) if type(value[key]) is dict and all(
                        type(e) is dict and type(e.get(f)) in (int, float) for e in value)]
                    out.extend((ref.call, Guard("rank", ref.path[:j], (key, f, rank(value, key, f)))) for f in numeric)
                    break
            value = value[key]
    return out


def element_ref(ref: Ref) -> tuple[int, tuple[str | int, ...], int, tuple[str | int, ...]] | None:
    """``(call, path of the list, index, path inside the element)`` of a reference through one list index."""
    ints = [j for j, k in enumerate(ref.path) if type(k) is int]
    if len(ints) != 1:
        return None
    j = ints[0]
    return ref.call, ref.path[:j], ref.path[j], ref.path[j + 1 :]  # type: ignore[return-value]


def coincidences(
    traj: Trajectory, raw_steps: list[tuple[str, tuple[tuple[str, Expr], ...]]], output: Expr, bound: dict[str, Any]
) -> list[Guard]:
    """Task values one run cannot tell from constants, each pinned to what it said (``require(x == 'v')``).

    - A value of one or two characters the answer quotes more often than the task says it
      ("refunded order 5 ... within 5 business days"): which of them is the constant?
    - Free text the task says whose words a constant argument repeats ("because I changed my
      mind" and ``category='changed_mind'``): the text may be what chose the constant.
    - A value the answer's own text says in any case ("Your desk lamp is on its way" for "Desk
      Lamp", "your PayPal account" for ``paypal``; an answer quotes a parameter only as bound): the
      constant holds for that value only, never for a Floor Fan. Values of three characters or
      more with a letter (a number or a short code may well be the answer's own).

    A second run with other values settles the first two: its skill is learned without the pin.
    The third stays: runs with other values answered other text.
    """
    out: list[Guard] = []
    quoted = Counter(p[0].name for p in (output.parts if isinstance(output, Fmt) else ()) if not isinstance(p, str) and isinstance(p[0], Param))
    for name, n in sorted(quoted.items()):
        value = bound.get(name)
        said = len(re.findall(rf"(?<!\w){re.escape(str(value))}(?!\w)", traj.task)) if value is not None else 0
        if value is not None and len(str(value)) <= 2 and n > said:
            out.append(Guard("agree", (), (Param(name), Const(value))))
    constants = [e.value for _t, args in raw_steps for _k, a in args for e in walk_exprs(a) if isinstance(e, Const) and type(e.value) is str]
    words = {w for c in constants for w in re.findall(r"[a-z]{4,}", c.lower())}
    for name, value in sorted(bound.items()):
        if type(value) is str and " " in value.strip() and words & set(re.findall(r"[a-z]{4,}", value.lower())):
            out.append(Guard("agree", (), (Param(name), Const(value))))
    texts = literal_texts(output)
    for name, value in sorted(bound.items()):
        if type(value) is not str or len(value.strip()) < 3 or not re.search(r"[^\W\d_]", value):
            continue
        if any(says(t, value) for t in texts):
            pin = Guard("agree", (), (Param(name), Const(value)))
            if pin not in out:
                out.append(pin)
    return out


_SEGMENT = re.compile(r"\n|\r|(?<=[.!?;])\s+")


def quoted_parts(traj: Trajectory, args: list[tuple[tuple[str, Expr], ...]], output: Expr) -> list[tuple[int, Guard]]:
    """Texts read whose part (a line, a sentence) the run's own text repeats: each pinned to what it was.

    "Resolved: cleared cached credentials." after reading the note "duplicate of INC-9\\ncleared
    cached credentials" quotes the note's last line, which lifting keeps as constant text; another
    note's last line would be another text. Until a rule explains the part, the skill serves that
    very text only (``require(ticket['note'] == ...)``). A part is a segment of two words or more.
    """
    texts = literal_texts(output, *(e for step in args for _k, e in step))
    if not texts:
        return []
    out: list[tuple[int, Guard]] = []
    for i, call in enumerate(traj.calls):
        for path, value in _texts(call.result):
            parts = [s.strip() for s in _SEGMENT.split(value) if len(s.strip().split()) >= 2]
            if len(parts) >= 2 and any(part in text for part in parts for text in texts):
                out.append((i, Guard("pin", path, value)))
    return out


def _texts(value: Any, path: tuple[str | int, ...] = (), budget: list[int] | None = None) -> list[tuple[tuple[str | int, ...], str]]:
    """The texts in a result, with their paths (inside dicts and lists, within a budget)."""
    budget = budget if budget is not None else [2_000]
    budget[0] -= 1
    if budget[0] < 0:
        return []
    if type(value) is str:
        return [(path, value)]
    out: list[tuple[tuple[str | int, ...], str]] = []
    if type(value) is dict:
        for k in sorted(value, key=str):
            out.extend(_texts(value[k], (*path, k), budget))
    elif type(value) is list:
        for k, v in enumerate(value):
            out.extend(_texts(v, (*path, k), budget))
    return out
