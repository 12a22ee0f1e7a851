"""SkillSpec: what lifting produces and codegen renders. Plain frozen data.

Expressions say where each argument comes from:

- ``Param(name)``            a span of the task, bound by the template
- ``Ref(call, path)``        a value inside the result of an earlier call
- ``Select(seq, field, key)`` the element of a list whose field equals a task span or an earlier value
  (and ``also`` more fields: the item the task names by its name and its options)
- ``Update(base, change)`` a dict read before, with the fields the task gives changed
- ``Const(value)``           a learned constant (no source found)
- ``ListOf`` / ``DictOf``    containers built from several sources
- ``Fmt(parts)``             a string composed of text and values (an f-string)
- ``Join(seq, sep)``         every element of a list, joined into text
- ``Len(seq)``               how many elements a list has
- ``Neg(value)``             the negative of a number
- ``Each(seq, var, body)``   ``body`` for every item of a list the task gives (``var`` names the item)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

from ._template import Slot
from ._trajectory import ToolRef

__all__ = ["MINUS", "range_guard", "reaching", "spans_of", "taken_from", "At", "Const", "DictOf", "Each", "Early", "Expr", "Fmt", "Guard", "Join", "Len", "ListOf", "Neg", "Param", "Ref", "Select", "SkillSpec", "Step", "Update", "Where"]


@dataclass(frozen=True, slots=True)
class Param:
    name: str


@dataclass(frozen=True, slots=True)
class Ref:
    call: int
    path: tuple[str | int, ...] = ()


@dataclass(frozen=True, slots=True)
class Select:
    """The element of a list (in an earlier result) whose ``field`` equals ``key``, then ``rest`` inside it.

    Rendered ``pick(order['items'], 'name', item_name)['sku']``: the item the task
    names, not whichever happened to be at that index in the learned run.
    """

    seq: Ref
    field: str
    key: Expr
    rest: tuple[str | int, ...] = ()
    also: tuple[tuple[str, Expr], ...] = ()  # more fields the element must have equal: ('options', item_options)


@dataclass(frozen=True, slots=True)
class Update:
    """A dict read before with some of its fields changed as the task says: ``updated(item['options'], changes)``."""

    base: Expr
    change: Expr


@dataclass(frozen=True, slots=True)
class Const:
    value: Any


@dataclass(frozen=True, slots=True)
class ListOf:
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class DictOf:
    items: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True, slots=True)
class Fmt:
    """Text and ``(expr, format_spec)`` pieces, in order."""

    parts: tuple[str | tuple[Expr, str], ...]


@dataclass(frozen=True, slots=True)
class Join:
    """Every element of a list (``path`` inside each), as text joined by ``sep``; sorted if ``sort``.

    Rendered ``join(user['groups'], ', ')``: an answer that lists a whole list lists
    the whole list of the world it runs in, whatever its length. ``sep`` is None where the
    run listed one element, which shows no separator (``join(user['groups'], None)``: one
    element only, until a run of the same program that listed more says how).
    """

    seq: Ref
    sep: str | None
    path: tuple[str | int, ...] = ()
    sort: bool = False


@dataclass(frozen=True, slots=True)
class Len:
    """How many elements a list in an earlier result has: ``len(group['members'])``."""

    seq: Ref


@dataclass(frozen=True, slots=True)
class Neg:
    """The negative of a number from the task or a result: a debit of the amount the task says."""

    value: Expr


@dataclass(frozen=True, slots=True)
class Each:
    """The same expression for every item of a list the task gives, in the task's order.

    Rendered ``[pick(order['items'], 'name', item_name)['item_id'] for item_name in item_names]``:
    ``body`` reads the item as ``Param(var)``. Over a list of records ``var`` names each part
    (``('item_name', 'changes')``: ``for item_name, changes in items``).
    """

    seq: Param
    var: str | tuple[str, ...]
    body: Expr


Expr = Union[Param, Ref, Select, Const, ListOf, DictOf, Fmt, Join, Len, Neg, "Update", "Each"]


@dataclass(frozen=True, slots=True)
class At:
    """In a guard's path: the key of a dict that equals the task's value ``name`` (``accounts[account]``)."""

    name: str


@dataclass(frozen=True, slots=True)
class Where:
    """In a guard's path: the one element of a list whose ``field`` equals the task's value ``name``.

    Rendered ``pick(customer['accounts'], 'account_id', account_id)``.
    """

    field: str
    name: str
    also: tuple[tuple[str, str], ...] = ()  # more (field, task value) pairs where ``field`` alone names several


MINUS = "minus"  # a ``cmp`` guard's extra ``(MINUS, path)``: the number at its path less the one at ``path`` (what is left)


def spans_of(g: Guard) -> tuple[tuple[float, float], ...]:
    """The spans a ``range`` guard keeps a number to, lowest first: one, or several apart (runs and
    probes that acted alike over each, and no evidence between them)."""
    return g.value[3] if len(g.value) > 3 else ((g.value[0], g.value[1]),)


def reaching(spans: Any, v: float) -> list[tuple[float, float]]:
    """``spans`` with ``v`` in one: as they are where one holds it, else the nearest reaching to it (a
    run acted alike at ``v`` too; a value between acting otherwise would be an agent that lends at $0
    and at $4.75 and refuses at $2)."""
    out = list(spans)
    if not out:
        return [(v, v)]
    if any(lo <= v <= hi for lo, hi in out):
        return out
    k = min(range(len(out)), key=lambda j: min(abs(v - out[j][0]), abs(v - out[j][1])))
    out[k] = (min(out[k][0], v), max(out[k][1], v))
    return out


def range_guard(path: tuple[Any, ...], spans: Any, text: bool) -> Guard:
    """A ``range`` guard over ``spans`` (any order; those that overlap or touch are joined): its value is
    ``(low, high, text)``, and ``(low, high, text, spans)`` where the spans lie apart."""
    joined: list[tuple[float, float]] = []
    for lo, hi in sorted(spans):
        if joined and lo <= joined[-1][1]:
            joined[-1] = (joined[-1][0], max(hi, joined[-1][1]))
        else:
            joined.append((lo, hi))
    low, high = joined[0][0], joined[-1][1]
    return Guard("range", path, (low, high, text) if len(joined) == 1 else (low, high, text, tuple(joined)))


def taken_from(g: Guard) -> tuple[str | int, ...] | None:
    """For a ``cmp`` guard that compares with what is left of a number, the path of what is taken from it; else None."""
    return next((x[1] for x in g.value[3:] if type(x) is tuple and x[0] == MINUS), None) if g.kind == "cmp" else None


@dataclass(frozen=True, slots=True)
class Guard:
    """A condition under which replay is the decision the agent made.

    Kinds: ``has`` (the path exists and holds a value of kind ``value``), ``eq``
    (a categorical value equals the learned one, or is one of them when ``value``
    is a tuple: runs merged into one skill), ``len`` (``"empty"`` /
    ``"nonempty"``), ``sign`` (``"positive"`` / ``"zero"`` / ``"negative"``),
    ``check`` (a tool's own pre-check; ``value`` is what it captured when learned).
    """

    kind: str
    path: tuple[str | int, ...] = ()
    value: Any = None


@dataclass(frozen=True, slots=True)
class Step:
    """One tool call of the skill, the checks before it and the guards on its result."""

    tool: str
    args: tuple[tuple[str, Expr], ...]
    var: str | None = None  # the name its result is bound to, if anything reads or guards it
    guards: tuple[Guard, ...] = ()
    pre: tuple[Guard, ...] = ()
    post: tuple[Guard, ...] = ()
    each: tuple[str, str | tuple[str, ...]] | None = None  # called once per item of a list the task gives: (list, var)
    # before a write a branch is taken after (``Early`` after it), ``guards`` are what the runs of every
    # branch showed together, checked as the step is made; ``own`` what the runs that took no branch showed,
    # checked once it is known no branch is taken
    own: tuple[Guard, ...] = ()


@dataclass(frozen=True, slots=True)
class Early:
    """A branch of a skill: after step ``after`` (a read), where ``when`` holds (a ``combo``
    guard: the values the runs that took the branch showed), those runs' own guards on the
    steps so far are checked, their own further calls (``steps``, none where they stopped
    there: "already a member") made under their guards, and ``output`` is the answer. Every
    other task goes on with the skill's steps, under their own guards. A branch taken after a
    write checks its runs' guards on the reads before it there too, beyond what every branch's
    runs showed together (checked before the write, ``Step.guards``; see ``Step.own``)."""

    after: int
    when: Guard
    guards: tuple[tuple[Guard, ...], ...]  # per step 0..after
    output: Expr
    steps: tuple[Step, ...] = ()  # the branch's calls after step ``after`` (a fork: "reset, and unlock too" / "reset")


@dataclass(frozen=True)
class SkillSpec:
    """Everything codegen needs, as a pure function of the runs it was lifted from."""

    name: str
    template: str
    slots: tuple[Slot, ...]
    examples: dict[str, Any]  # slot name → the value seen in the run
    steps: tuple[Step, ...]
    output: Expr
    tools: dict[str, ToolRef]
    instances: tuple[tuple[str, str], ...] = ()  # (parameter name, class qualname) for method tools
    runs: tuple[str, ...] = ()  # hashes of the trajectories it was learned from
    task: str = ""  # the task of the first run
    constants: int = 0  # how many arguments stayed learned constants
    alts: tuple[tuple[Any, tuple[Expr, ...]], ...] = ()  # (site, other sources of the same value) per ambiguous choice
    phrasings: tuple[tuple[str, tuple[Slot, ...]], ...] = ()  # other templates of the same task, the same parameters
    early: tuple[Early, ...] = ()  # runs that stopped after a read and answered: a branch before the rest
    evidence: tuple[str, ...] = ()  # hashes of runs of the same request by another route, whose facts widen its guards
    variants: tuple[SkillSpec, ...] = ()  # the same request said with more parameters (who asks): its own program, called when given
    probed: tuple[str, ...] = ()  # the facts probes showed not to decide, one line each with the evidence (``_probes``)
