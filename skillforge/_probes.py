"""Probes, the pure part: which fact of a run's world to change, the world so changed, and verdicts.

Runs observe; they cannot tell cause from coincidence. A **probe** asks the agent: it runs the agent
again on a recorded run's task with every tool answered from the record, one fact of the world changed
(``_prober`` runs it). This module decides what is changed and how the two behaviours compare:

- **Which facts.** A skill's guards of kinds that say something of the world a read returned
  (``PROBED``): a categorical value, a list's emptiness, a number's sign or scale, a record's fields,
  a task value's relation to a field. Presence and type (``has``) are what the code needs to run at
  all and are never probed; neither are guards over every element of a list.
- **What it is changed to** (``changes``): a flag flipped; a text moved to other values the field is
  known to take (the library's recorded runs); a code word (``pending``) to ``CODES`` such values, and
  where the agent acts alike it keeps to the codes tried (``alike``: one other code treated alike says
  nothing of a third, which a handover then shows); a non-empty list emptied; a field the
  skill does not read taken away; a list of codes given other codes it is known to hold; a task value's relation turned (the field made equal to it); a
  number moved beyond the range seen (ten times it), then between that and the value seen where the
  agent acted otherwise (``BISECT`` times, halving the scale), and below it (a tenth, then 0): its
  facts become the range over which the agent acted alike.
- **Applied consistently** (``changed_world``): the value is changed where the fact read it, in any
  later read of the same call, and, for a distinctive value (an id, an amount), everywhere it appears
  in the record's arguments and results, so that a lookup of the changed id, or a write of the changed
  amount, is answered as the record answered the original.
- **Verdicts** (``verdict``): the agent's writes are compared exactly with the ones the skill makes in
  that world, and answers on the values they carry (numbers, and texts of the world), not on wording.
  ``same``: the fact does not decide, here, and is dropped from the skill's guards; ``different``: it
  decides; ``inconclusive`` (the agent asked for a call the record cannot answer, failed, or an
  unchanged control run already differed from the record; or the skill's code cannot run there):
  the guard is kept.

Facts probed ``same`` on some run of a skill and on none otherwise are dropped from all its runs'
facts before they are merged (``dropped``), so combinations are kept among the facts that decide.
A number's facts dropped so are replaced by the range the agent was seen to act alike over
(``ranges``), so a threshold beyond it is still found by a guard.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ._guards import fact_key
from ._template import NEGATION, TaskTemplate, shape_of, union_shape
from ._spec import At, Guard, Where
from ._trajectory import DIFFERENT, INCONCLUSIVE, SAME, Probe, Trajectory, canonical_json
from ._values import EACH, _leaves, enum_like
from ._wording import CONDITION

__all__ = [
    "CONTROL", "DELETE", "LADDER", "NONE", "PROBED", "SLOT", "Behaviour", "alike", "behaviour", "Change", "Known", "Probed", "carried", "changed_world", "changes", "concrete", "distinctive",
    "dropped", "dropped_lines", "fact_id", "lengthened_world", "relengthened", "free", "pooled", "quoted_from_record", "ranges", "respoken", "sources_followed", "verdict", "widened",
]

# guard kinds a probe may change: facts of a read's world (see the module docstring)
PROBED = frozenset({"eq", "sign", "textsign", "digits", "len", "keys", "equal", "near", "member", "codes"})
NUMERIC = frozenset({"sign", "textsign", "digits"})  # and ``eq`` of a small integer: facts of a number's scale
BISECT = 2  # points tried between where the agent acted alike and where it did not, above the value seen
CODES = 2  # other values of a code word probed, at most: it keeps to the codes tried (``alike``), and a run of another widens it
CONTROL = "control"  # a run's unchanged probe: the agent again, in the world as recorded
SLOT = -2  # the step of a slot-shape probe's records: the task said otherwise, not the world changed
_SAID_AS = (str.lower, str.upper)  # the other ways a name is written that a slot's shape is probed with
_NAME_LIKE = re.compile(r"[A-Z][A-Za-z'-]*(?: [A-Za-z][A-Za-z'-]*)*")  # "Ann Lee", "O'Neil"; not "jon.silva", an id
DELETE = object()  # a change that takes a field away


def fact_id(g: Guard) -> str:
    """A fact's identity in probe records: its kind and path, its value aside."""
    return repr(fact_key(g))


@dataclass(frozen=True, slots=True)
class Change:
    """One fact's world changed: in the result of call ``call``, the value at ``where`` becomes ``to``."""

    call: int
    where: tuple[str | int, ...]
    old: Any
    to: Any  # DELETE: the field is taken away
    said: str  # "order['status'] set to 'delivered'"

    @property
    def number(self) -> bool:
        return as_number(self.old) is not None and as_number(self.to) is not None


def concrete(result: Any, path: tuple[Any, ...], params: dict[str, Any]) -> tuple[str | int, ...] | None:
    """``path`` (with ``At``/``Where`` steps taking task values) as keys and indices into ``result``, or
    None where it does not lead to one value (a step over every element, a record not found)."""
    out: list[str | int] = []
    value = result
    for key in path:
        if key == EACH:
            return None
        if isinstance(key, At):
            key = params.get(key.name)
            if type(value) is not dict or type(key) is not str or key not in value:
                return None
        elif isinstance(key, Where):
            wanted = [(key.field, params.get(key.name)), *((f, params.get(n)) for f, n in key.also)]
            found = [i for i, e in enumerate(value if type(value) is list else ())
                     if type(e) is dict and all(f in e and e[f] == w and type(e[f]) is type(w) for f, w in wanted)]
            if len(found) != 1:
                return None
            key = found[0]
        elif type(value) is dict:
            if key not in value:
                return None
        elif type(value) is list:
            if type(key) is not int or not -len(value) <= key < len(value):
                return None
        else:
            return None
        out.append(key)
        value = value[key]
    return tuple(out)


def _at(value: Any, where: Sequence[str | int]) -> Any:
    for key in where:
        value = value[key]
    return value


def _shape(where: Sequence[str | int]) -> tuple[str, ...]:
    """A place's shape across records: list indices left out (the status of any order of a user)."""
    return tuple(k for k in where if type(k) is str)


class Known:
    """The values each field of each tool's results took in the library's recorded runs: what a text
    or code is known to be able to be otherwise."""

    def __init__(self, runs: Iterable[Trajectory] = ()) -> None:
        self.values: dict[tuple[str, tuple[str, ...]], set[str]] = {}
        for run in runs:
            self.add(run)

    def add(self, run: Trajectory) -> None:
        for call in run.calls:
            self._walk(call.tool, call.result, ())

    def _walk(self, tool: str, value: Any, where: tuple[str, ...]) -> None:
        if type(value) is str:
            if len(self.values.setdefault((tool, where), set())) < 64:
                self.values[(tool, where)].add(value)
        elif type(value) is dict:
            for k, v in value.items():
                self._walk(tool, v, (*where, k))
        elif type(value) is list:
            for v in value[:32]:
                self._walk(tool, v, where)

    def others(self, tool: str, where: Sequence[str | int], value: str) -> list[str]:
        """Other values the field at ``where`` of ``tool``'s results took, sorted."""
        return sorted(v for v in self.values.get((tool, _shape(where)), ()) if v != value)


def as_number(v: Any) -> float | int | None:
    """A number, or a text that is one ("4.75"); else None."""
    if type(v) in (int, float):
        return v  # type: ignore[no-any-return]
    if type(v) is str and _NUMERIC.fullmatch(v):
        return float(v)
    return None


_NUMERIC = re.compile(r"-?\d+(?:\.\d+)?")


def moved(change: Change, x: float) -> Change:
    """``change``'s number moved to ``x`` instead (written as the value was: an int, two decimals, text)."""
    old = change.old
    if type(old) is int:
        to: Any = int(round(x))
    elif type(old) is float:
        to = round(float(x), 2)
    else:
        decimals = len(old.split(".", 1)[1]) if "." in old else 0
        to = f"{x:.{decimals}f}"
    place = change.said.rsplit(" set to ", 1)[0]
    return Change(change.call, change.where, old, to, f"{place} set to {to!r}")


def rungs(v: float) -> tuple[float, list[float]]:
    """Where a number is first moved: beyond the value seen (ten times it), and below it (a tenth, then 0)."""
    if v == 0:
        return 10.0, [-1.0]
    if v < 0:
        return v / 10, [v * 10]
    return v * 10, [v / 10, 0.0]


def between(a: float, b: float) -> float:
    """The point a number's search tries between a value the agent acted alike at and one it did not."""
    if a > 0 and b > 0:
        return (a * b) ** 0.5  # scale is what is unknown: halve it geometrically
    return (a + b) / 2


def changes(
    g: Guard, call: int, result: Any, tool: str, params: dict[str, Any], known: Known, read: frozenset[tuple[Any, ...]] = frozenset(),
) -> list[Change] | None:
    """The changes that probe fact ``g`` of call ``call``'s result, in order; None where it is not probed
    (a kind not in ``PROBED``, a place that is not one value, nothing known to change it to). ``read``:
    the places of the result the skill reads (a field taken away is one it does not). A number's one
    change is its first rung: the prober searches on from there (``rungs``, ``between``, ``moved``)."""
    if g.kind not in PROBED:
        return None
    where = concrete(result, g.path, params)
    if where is None and g.kind in ("near", "member") and g.path.count(EACH) == 1:
        where = _first_element(result, g.path, params)  # a task value among a field of every element: the first's
    if where is None:
        return None
    value = _at(result, where)
    shown = _place(g)
    if g.kind == "keys":  # the record's fields: take one away that the skill does not read
        if type(value) is not dict:
            return None
        spare = sorted(k for k in value if type(value[k]) not in (dict, list)
                       and not any(r[: len(where) + 1] == (*where, k) for r in read))
        if not spare:
            return None
        return [Change(call, (*where, spare[-1]), value[spare[-1]], DELETE, f"{shown}[{spare[-1]!r}] taken away")]
    if g.kind in ("equal", "near", "member"):  # a task value's relation: the field made to hold it (or not)
        name, holds = g.value
        task_value = params.get(name)
        if holds or type(task_value) is not str or type(value) not in (str, list, dict) or (type(value) is dict and not value):
            return None  # a relation that holds is what the skill acts on: not moved
        if type(value) is dict:  # a record keyed by id: one more under the task's value, like its first
            to: Any = {**value, task_value: copy.deepcopy(next(iter(value.values())))}
        else:
            to = [*value, task_value] if type(value) is list else task_value
        return [Change(call, where, value, to, f"{shown} set to {to!r} (the task's {name})")]
    if g.kind == "codes":  # the codes a list holds: other codes the field is known to hold, added at once
        if type(value) is not list:
            return None
        extra = [c for c in known.others(tool, where, "") if c not in value][:CODES]
        if not extra:
            return None
        return [Change(call, where, value, [*value, *extra], f"{shown} given {', '.join(map(repr, extra))} too")]
    if type(value) is bool:
        return [Change(call, where, value, not value, f"{shown} set to {not value!r}")]
    if g.kind == "len":
        if type(value) is not list or not value:
            return None  # an empty list is not given elements made up
        return [Change(call, where, value, [], f"{shown} emptied")]
    number = as_number(value) if g.kind in NUMERIC or (g.kind == "eq" and type(value) is int) else None
    if number is not None:
        return [moved(Change(call, where, value, value, shown), rungs(number)[0])]
    if type(value) is str:
        others = known.others(tool, where, value)
        if not others:
            return None
        chosen = others[:CODES] if enum_like(value) else others[:1]
        return [Change(call, where, value, o, f"{shown} set to {o!r}") for o in chosen]
    return None


def _first_element(result: Any, path: tuple[Any, ...], params: dict[str, Any]) -> tuple[str | int, ...] | None:
    """The place of ``path``'s field in the first element of the list its ``EACH`` steps over, or None."""
    k = path.index(EACH)
    head = concrete(result, path[:k], params)
    if head is None:
        return None
    items = _at(result, head)
    if type(items) not in (list, dict) or not items:
        return None
    first = 0 if type(items) is list else next(iter(items))  # a list's first element, an id-keyed record's first
    rest = concrete(items[first], path[k + 1:], params)
    return None if rest is None else (*head, first, *rest)


def pooled(g: Guard, cs: Sequence[Change]) -> bool:
    """Whether fact ``g`` (probed by ``cs``) is probed together with others, in one world where they are
    all changed at once (``_prober`` splits a pool the agent acts otherwise in, to find the facts that
    decide): a task value's relations, a name or place that is no code word, the coincidences a run
    shows most of. A flag, a code word and a number are each probed alone: they decide most often, and
    a pool would let one excuse another (a fine over the limit forgiven for a member who is staff); so
    are a list's emptiness and a record's fields, which the agent acts on or needs as often as not
    (measured on the storefront shadow: a pool holding them seldom came out the same)."""
    if len(cs) != 1 or cs[0].number or type(cs[0].old) is bool:
        return False
    return g.kind in ("equal", "near", "member") or (g.kind == "eq" and not enum_like(cs[0].old))


def priority(g: Guard) -> int:
    """The order facts are probed in, within a budget: what decides most often first (a code, a flag,
    a number), then a list's emptiness, a record's fields, and last a task value's relations."""
    return {"eq": 0, "sign": 0, "textsign": 0, "digits": 0, "len": 1, "keys": 2}.get(g.kind, 3)


def _place(g: Guard) -> str:
    return "".join(f"[{k!r}]" if not isinstance(k, (At, Where)) else f"[{type(k).__name__.lower()} {k.name}]" for k in g.path) or "the result"


def distinctive(v: Any) -> bool:
    """A value that, met elsewhere in a record, is the same thing: an id, an email, an amount."""
    if type(v) is str:
        return len(v) >= 4 and any(c.isdigit() or c == "@" for c in v)
    return type(v) is float or (type(v) is int and abs(v) >= 100)


def _substituted(value: Any, old: Any, new: Any) -> Any:
    if type(value) is type(old) and value == old:
        return copy.deepcopy(new)
    if type(value) is dict:
        return {k: _substituted(v, old, new) for k, v in value.items()}
    if type(value) is list:
        return [_substituted(v, old, new) for v in value]
    return value


def changed_world(
    calls: Sequence[Any], change: Change | Sequence[Change] | None,
) -> list[tuple[str, dict[str, Any], Any, str | None]]:
    """The record's calls ``(tool, args, result, error)`` with ``change`` applied consistently (see the
    module docstring); several changes one after another; ``change`` None: the world as recorded."""
    world = [(c.tool, copy.deepcopy(c.args), copy.deepcopy(c.result), c.error) for c in calls]
    keys = [canonical_json([c.tool, c.args]) for c in calls]
    for one in (() if change is None else (change,) if isinstance(change, Change) else change):
        world = _applied(world, keys, one)
    return world


def _applied(
    world: list[tuple[str, dict[str, Any], Any, str | None]], keys: list[str], change: Change,
) -> list[tuple[str, dict[str, Any], Any, str | None]]:
    key = keys[change.call]
    for k, (tool, args, result, error) in enumerate(world):
        if k != change.call and keys[k] != key:
            continue
        if not change.where:  # the whole result (a list a read returned)
            if k == change.call or result == change.old:
                world[k] = (tool, args, copy.deepcopy(change.to), error)
            continue
        parent_where, last = change.where[:-1], change.where[-1]
        try:
            parent = _at(result, parent_where)
            if parent[last] != change.old and k != change.call:
                continue
            if change.to is DELETE:
                del parent[last]
            else:
                parent[last] = copy.deepcopy(change.to)
        except (KeyError, IndexError, TypeError):
            continue
    if change.to is not DELETE and distinctive(change.old) and type(change.to) is type(change.old):
        world = [(t, _substituted(a, change.old, change.to), _substituted(r, change.old, change.to), e) for t, a, r, e in world]
    return world


@dataclass(slots=True)
class Behaviour:
    """What the agent, or the skill, did in a probe's world."""

    writes: list[tuple[str, str]]  # (tool, canonical arguments), in order
    answer: Any = None
    stopped: str | None = None  # a write the world cannot answer (made, then stopped there)
    unanswered: str | None = None  # a read the world cannot answer
    failed: str | None = None  # it raised
    noted: list[str] = field(default_factory=list)  # the skill's guards that did not hold there (what each says)


_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _vocabulary(world: Sequence[tuple[str, dict[str, Any], Any, str | None]], params: dict[str, Any]) -> set[str]:
    leaves = _leaves([[args, result] for _t, args, result, _e in world] + list(params.values()))
    return {v.lower() for v in leaves if type(v) is str and len(v) >= 3 and not _NUMBER.fullmatch(v)}


def carried(answer: Any, vocabulary: set[str]) -> Any:
    """The values an answer carries, its wording aside: the numbers it says and the texts of the world
    (results, arguments, task values) it quotes. A non-text answer is compared whole."""
    if type(answer) is not str:
        try:
            return ("value", canonical_json(answer))
        except (TypeError, ValueError):
            return ("value", repr(answer))
    text = answer.lower()
    numbers = sorted({float(m.replace(",", "")) for m in _NUMBER.findall(text)})
    quoted = sorted(w for w in vocabulary if re.search(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])", text))
    return ("text", numbers, quoted)


def verdict(
    agent: Behaviour, skill: Behaviour, world: Sequence[tuple[str, dict[str, Any], Any, str | None]], params: dict[str, Any],
) -> tuple[str, str]:
    """Whether the agent did in a probe's world what the skill does there: ``(verdict, why)``."""
    if agent.failed is not None:
        return INCONCLUSIVE, f"the agent failed: {agent.failed}"
    if agent.unanswered is not None:
        return INCONCLUSIVE, f"the agent asked {agent.unanswered}, which the record cannot answer"
    if skill.failed is not None or skill.unanswered is not None:
        return INCONCLUSIVE, f"the skill's code cannot run there ({skill.failed or skill.unanswered})"
    for k in range(max(len(agent.writes), len(skill.writes))):
        mine = agent.writes[k] if k < len(agent.writes) else None
        theirs = skill.writes[k] if k < len(skill.writes) else None
        if mine != theirs:
            if mine is None:
                return DIFFERENT, f"the agent made no write where the skill calls {theirs[0]}({theirs[1]})"  # type: ignore[index]
            if theirs is None:
                return DIFFERENT, f"the agent called {mine[0]}({mine[1]}), which the skill does not"
            return DIFFERENT, f"the agent called {mine[0]}({mine[1]}) where the skill calls {theirs[0]}({theirs[1]})"
    if agent.stopped is not None or skill.stopped is not None:
        if agent.stopped == skill.stopped:
            return SAME, f"the same calls, up to {agent.stopped}, which the record cannot answer"
        return DIFFERENT, "the agent and the skill part at a write the record cannot answer"
    vocabulary = _vocabulary(world, params)
    if carried(agent.answer, vocabulary) != carried(skill.answer, vocabulary):
        return DIFFERENT, f"the agent answered {_short(agent.answer)} where the skill answers {_short(skill.answer)}"
    return SAME, "the same calls and answer"


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 120 else text[:117] + "..."


def _settled(probes: Iterable[Probe]) -> dict[tuple[int, str], list[Probe]]:
    out: dict[tuple[int, str], list[Probe]] = {}
    for p in probes:
        if p.step >= 0:
            out.setdefault((p.step, p.fact), []).append(p)
    return out


def _numeric(ps: Sequence[Probe]) -> bool:
    return all(as_number(p.was) is not None and as_number(p.to) is not None for p in ps)


def _interval(ps: Sequence[Probe]) -> tuple[float, float]:
    """The values around the run's own that the agent acted alike at, up to the nearest it did not."""
    v = as_number(ps[0].was)
    points: dict[float, str] = {v: SAME}  # type: ignore[dict-item]
    for p in ps:
        x = as_number(p.to)
        if points.get(x, SAME) == SAME:  # type: ignore[arg-type]
            points[x] = p.verdict  # type: ignore[index]
    xs = sorted(points)
    k = xs.index(v)  # type: ignore[arg-type]
    lo = hi = k
    while lo > 0 and points[xs[lo - 1]] == SAME:
        lo -= 1
    while hi < len(xs) - 1 and points[xs[hi + 1]] == SAME:
        hi += 1
    return xs[lo], xs[hi]


_FACT_WORD = re.compile(r"'([^']*)'")
_TEXT_WORD = re.compile(r"[^\W_]+")


def free(said: str, fact: str) -> bool:
    """Whether the words of a phrasing (``said``: a template's text, its slots aside) can set no condition on
    ``fact`` (a fact id): no negation, no word of condition ("if", "unless", "only", ...), and no word of
    the fact's place ("locked" for ``user['locked']``). What probes settled in one such phrasing holds
    in another ("unlock {user} pls" and "{user} can't log in, unlock them?" are not both such: the second
    says "can't"); "Don't unlock anything" is never one."""
    text = re.sub(r"\{[^{}]*\}", " ", said)
    if NEGATION.search(text) or CONDITION.search(text):
        return False
    words = {_one(w.lower()) for w in _TEXT_WORD.findall(text)}
    named = {_one(w.lower()) for k in _FACT_WORD.findall(fact)[1:] for w in _TEXT_WORD.findall(k)}
    return not words & named


def _one(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def dropped(
    runs: Iterable[Trajectory], contexts: Sequence[Any] | None = None, wording: dict[Any, str] | None = None,
) -> frozenset[tuple[int, str]]:
    """The facts (step, fact id) that probes of ``runs`` settled: a fact probed ``same`` and never
    otherwise; a number's fact probed without doubt (it becomes the range the agent acted alike over,
    ``ranges``). ``contexts`` (one per run: the phrasing its task was said in) are where a fact may
    decide though it did not elsewhere ("Don't unlock anything" makes an account's lock not matter):
    a fact is settled only where probes of a run of every context the runs show settled it, a context
    whose words are ``free`` of it counting as settled by another such (``wording``: each context's
    template text; a context may also be ``(phrasing, behaviour)``: a fact probed in one branch is never
    settled for another so)."""
    runs = list(runs)
    where = list(contexts) if contexts is not None else [0] * len(runs)
    seen: dict[tuple[int, str], list[list[Probe]]] = {}
    covered: dict[tuple[int, str], set[Any]] = {}
    for run, context in zip(runs, where, strict=True):
        for key, ps in _settled(run.probes).items():
            seen.setdefault(key, []).append(ps)
            covered.setdefault(key, set()).add(context)
    out = set()
    for key, per_run in seen.items():
        if covered[key] != set(where) and not _carried_over(key[1], covered[key], set(where), wording):
            continue
        if _settles(per_run):
            out.add(key)
    return frozenset(out)


def _settles(per_run: list[list[Probe]]) -> bool:
    """Whether the probes of a fact on several runs settle it: all the same; or a number's, without
    doubt, where the values each run was seen to act alike over join into one span (runs apart, at 0
    and from 0.45 up, acted otherwise between them: the number decides)."""
    verdicts = {p.verdict for ps in per_run for p in ps}
    if verdicts == {SAME}:
        return True
    if INCONCLUSIVE in verdicts or not all(_numeric(ps) for ps in per_run):
        return False
    spans = sorted(_interval(ps) for ps in per_run)
    return all(b[0] <= a[1] for a, b in zip(spans, spans[1:]))


def behaviour(run: Trajectory) -> tuple[Any, ...]:
    """What a run did, its values aside: its tools in order, and its answer's own words (a word a call was
    given or a read returned, and any number, masked). Runs of one skill that acted otherwise (an order
    "has been delivered (tracking ...)", another "is pending and hasn't shipped yet") are contexts apart:
    a fact probed alike in one branch may decide in the other."""
    seen = {w.lower() for v in _leaves([[c.args, c.result] for c in run.calls]) if type(v) is str for w in _TEXT_WORD.findall(v)}
    answer = run.outcome.output
    if type(answer) is str:
        words = ("_" if w.lower() in seen or any(ch.isdigit() for ch in w) else w.lower() for w in _TEXT_WORD.findall(answer))
        said = re.sub(r"_(?: _)+", "_", " ".join(words))  # a value of several words ("jon.silva", "vpn-users") is one
    else:
        said = type(answer).__name__
    return (tuple(c.tool for c in run.calls), said)


def _carried_over(fact: str, covered: set[Any], every: set[Any], wording: dict[Any, str] | None) -> bool:
    """Whether what probes settled of ``fact`` in the ``covered`` contexts holds in the others: each other
    is worded ``free`` of it, and so is a covered context of the same behaviour (contexts are a phrasing,
    or ``(phrasing, behaviour)``: a fact settled in one branch never holds for another so)."""
    if not wording:
        return False

    def said(c: Any) -> str:
        return wording.get(c[0] if type(c) is tuple else c, "")

    def did(c: Any) -> Any:
        return c[1] if type(c) is tuple else None

    return all(free(said(c), fact) and any(did(d) == did(c) and free(said(d), fact) for d in covered) for c in every - covered)


def dropped_lines(
    runs: Sequence[Trajectory], contexts: Sequence[Any] | None = None, wording: dict[Any, str] | None = None,
) -> tuple[str, ...]:
    """One line per fact ``dropped`` by the probes of ``runs``: what it checked, what was changed, on
    which run; a number's facts (its sign, its digits) one line for the number: the values tried, and
    where the agent acted otherwise."""
    gone = dropped(runs, contexts, wording)
    lines: dict[tuple[int, str], str] = {}
    numbers: dict[tuple[int, str], tuple[list[str], str]] = {}
    for run in runs:
        for key, ps in _settled(run.probes).items():
            if key not in gone:
                continue
            p = ps[0]
            if _numeric(ps):
                place = p.change.rsplit(" set to ", 1)[0]
                said, tried = numbers.setdefault((p.step, place), ([], ""))
                if p.said not in said:
                    said.append(p.said)
                if not tried:
                    alike = sorted({as_number(q.to) for q in ps if q.verdict == SAME})  # type: ignore[type-var]
                    other = sorted({as_number(q.to) for q in ps if q.verdict != SAME})  # type: ignore[type-var]
                    shown = [*(f"{x:g} alike" for x in alike), *(f"{x:g} otherwise" for x in other)]  # type: ignore[str-format]
                    numbers[(p.step, place)] = (said, f"{place} was {p.was!r}; set to {', '.join(shown)} (run {run.hash[:8]})")
            elif key not in lines:
                coded = key[1].startswith("('eq'") and all(enum_like(q.was) for q in ps)  # kept to the codes tried (``alike``)
                lines[key] = f"{p.said}: {'one of the codes tried instead, ' if coded else ''}{p.change}, {p.why} (run {run.hash[:8]})"
    for key, (said, tried) in numbers.items():
        lines[key] = f"{'; '.join(said)}: a range instead, {tried}"
    return tuple(lines[k] for k in sorted(lines))


def ranges(
    runs: Iterable[Trajectory], contexts: Sequence[Any] | None = None, wording: dict[Any, str] | None = None,
) -> dict[tuple[int, str], tuple[float, float]]:
    """Per number fact ``dropped`` (step, fact id): the least and greatest value the agent was seen to
    act alike at, over every run (each run's own value and the values its probes tried)."""
    runs = list(runs)
    gone = dropped(runs, contexts, wording)
    out: dict[tuple[int, str], tuple[float, float]] = {}
    for run in runs:
        for key, ps in _settled(run.probes).items():
            if key not in gone or not _numeric(ps):
                continue
            a, b = _interval(ps)
            lo, hi = out.get(key, (a, b))
            out[key] = (min(lo, a), max(hi, b))
    return out


def alike(runs: Iterable[Trajectory], contexts: Sequence[Any] | None = None, wording: dict[Any, str] | None = None,
          ) -> dict[tuple[int, str], tuple[str, ...]]:
    """Per code-word fact ``dropped`` (step, fact id): the codes the agent was seen to act alike for, over
    every run (each run's own and the ones its probes tried). A code no run nor probe showed
    (``cancelled``, where only ``delivered`` and ``pending`` were known) may be what the agent acts on:
    the skill keeps to these, as a number keeps to its range."""
    runs = list(runs)
    gone = dropped(runs, contexts, wording)
    out: dict[tuple[int, str], set[str]] = {}
    for run in runs:
        for key, ps in _settled(run.probes).items():
            if key in gone and not _numeric(ps) and key[1].startswith("('eq'") and all(enum_like(p.was) for p in ps):
                out.setdefault(key, set()).update({ps[0].was, *(p.to for p in ps if p.verdict == SAME and type(p.to) is str)})
    return {k: tuple(sorted(v)) for k, v in out.items()}


@dataclass(frozen=True, slots=True)
class Probed:
    """What the probes of a skill's runs settled, as learning uses it: the facts dropped, the ranges of
    the numbers among them, the codes of the code words among them, and the file's lines saying so."""

    dropped: frozenset[tuple[int, str]] = frozenset()
    ranges: tuple[tuple[tuple[int, str], tuple[float, float]], ...] = ()
    lines: tuple[str, ...] = ()
    codes: tuple[tuple[tuple[int, str], tuple[str, ...]], ...] = ()

    @classmethod
    def of(cls, runs: Sequence[Trajectory], contexts: Sequence[Any] | None = None, wording: dict[Any, str] | None = None) -> Probed:
        """What probes of ``runs`` settled; ``contexts``: the phrasing (and behaviour) each run was in,
        ``wording`` each phrasing's template text (see ``dropped``)."""
        if not any(r.probes for r in runs):
            return NONE
        return cls(dropped(runs, contexts, wording), tuple(sorted(ranges(runs, contexts, wording).items())),
                   dropped_lines(runs, contexts, wording), tuple(sorted(alike(runs, contexts, wording).items())))

    def pruned(self, guards: list[list[Guard]]) -> None:
        """Take the dropped facts out of each step's guards (in place); a code word becomes the codes the
        agent was seen to act alike for (``Guard("alike", path, codes)``), a number's facts the range
        the agent was seen to act alike over (``Guard("range", path, (low, high, text))``, ``text`` for a
        number written as text)."""
        if not self.dropped:
            return
        spans = dict(self.ranges)
        codes = dict(self.codes)
        for i, gs in enumerate(guards):
            kept: list[Guard] = []
            over: dict[tuple[Any, ...], tuple[float, float, bool]] = {}
            for g in gs:
                key = (i, fact_id(g))
                if key not in self.dropped:
                    kept.append(g)
                elif key in codes:
                    kept.append(Guard("alike", g.path, codes[key]))
                elif key in spans:
                    lo, hi = spans[key]
                    was = over.get(g.path)
                    if was is not None:
                        lo, hi = min(lo, was[0]), max(hi, was[1])
                    over[g.path] = (lo, hi, g.kind == "textsign")
            kept.extend(Guard("range", path, span) for path, span in over.items())
            gs[:] = kept


NONE = Probed()


def respoken(template: Any, params: dict[str, Any], task: str) -> list[tuple[str, dict[str, tuple[str, str]]]]:
    """Slot-shape probes of a run: its task with every name-like slot value (letters only) written
    another way at once (all lower case, all upper case), where the template does not take it yet:
    ``(the task so said, {slot: (value, said)})``. A value the task holds more than once is left as it is."""
    out = []
    slots = [s for s in template.slots if s.kind not in ("choice", "ignored", "list") and s.type == "str" and not s.parts]
    for style in _SAID_AS:
        said, changed = task, {}
        for slot in slots:
            value = params.get(slot.name)
            if type(value) is not str or not _NAME_LIKE.fullmatch(value) or style(value) == value or task.count(value) != 1:
                continue
            said = said.replace(value, style(value), 1)
            changed[slot.name] = (value, style(value))
        if changed and template.bind(said) is None:
            out.append((said, changed))
    return out


def relengthened(
    template: Any, params: dict[str, Any], task: str, calls: Sequence[Any], known: Known,
) -> list[tuple[str, dict[str, tuple[str, str]]]]:
    """Slot-shape probes of a run in the other direction: a text slot's value put as another value the
    same field of a result is known to take (``known``), of more words and of fewer, where the template
    does not take it yet (a title of three words where the run's had two). ``(the task so said,
    {slot: (value, other)})``, one slot at a time. The value is changed everywhere the world holds it
    (``lengthened_world``); one the world already holds elsewhere is not taken (the two would be one)."""
    out = []
    slots = [s for s in template.slots if s.kind not in ("choice", "ignored", "list") and s.type == "str" and not s.parts]
    held = {v for c in calls for v in (*_leaves(c.args), *_leaves(c.result)) if type(v) is str}
    here = Known()  # the places of the run's own results that hold each text
    for c in calls:
        here._walk(c.tool, c.result, ())
    for slot in slots:
        value = params.get(slot.name)
        if type(value) is not str or task.count(value) != 1 or not _NAME_LIKE.fullmatch(value):
            continue
        fields = sorted(place for place, seen in here.values.items() if value in seen)
        words = len(value.split())
        others = sorted({o for tool, w in fields for o in known.others(tool, w, value)
                         if _NAME_LIKE.fullmatch(o) and len(o.split()) != words and o not in held
                         and not any(o in h or h in o for h in held if h and len(h) > 2 and h != value)},
                        key=lambda o: (len(o.split()), o))
        more = next((o for o in others if len(o.split()) > words), None)
        fewer = next((o for o in reversed(others) if len(o.split()) < words), None)
        for other in (more, fewer):
            said = task.replace(value, other, 1) if other is not None else None
            if said is not None and template.bind(said) is None:
                out.append((said, {slot.name: (value, other)}))
    return out


def lengthened_world(
    calls: Sequence[Any], changed: dict[str, tuple[str, str]],
) -> list[tuple[str, dict[str, Any], Any, str | None]]:
    """The record's calls with each changed value put as the other everywhere: in what the calls were
    given and what they returned, whole or inside a text ("Lent 'Secret Garden' until ...")."""
    world = changed_world(calls, None)
    for old, new in changed.values():
        world = [(t, _within(a, old, new), _within(r, old, new), e) for t, a, r, e in world]
    return world


def _within(value: Any, old: str, new: str) -> Any:
    if type(value) is str:
        return value.replace(old, new)
    if type(value) is dict:
        return {k: _within(v, old, new) for k, v in value.items()}
    if type(value) is list:
        return [_within(v, old, new) for v in value]
    return value


def respoken_world(
    calls: Sequence[Any], changed: dict[str, tuple[str, str]],
) -> list[tuple[str, dict[str, Any], Any, str | None]]:
    """The record's calls with each changed slot value written the new way where a call was given it:
    the calls a skill passing the value on as said makes are answered as the record's were."""
    world = changed_world(calls, None)
    for old, new in changed.values():
        world = [(t, _substituted(a, old, new), r, e) for t, a, r, e in world]
    return world


def widened(templates: Sequence[Any], runs: Iterable[Trajectory]) -> tuple[Any, ...] | None:
    """``templates`` with each slot's shape taking the ways of writing its value that slot-shape probes
    of ``runs`` came out ``same`` for; None where there are none it does not take yet."""
    said: dict[str, list[str]] = {}
    for run in runs:
        for p in run.probes:
            if p.step == SLOT and p.verdict == SAME and type(p.to) is str:
                said.setdefault(p.fact.removeprefix("slot "), []).append(p.to)
    if not said:
        return None
    out, grew = [], False
    for t in templates:
        slots = []
        for slot in t.slots:
            shape = slot.shape
            for text in sorted(set(said.get(slot.name, ()))):
                if shape is not None:
                    shape = union_shape(shape, shape_of(text, slot.kind))
            grew = grew or shape != slot.shape
            slots.append(replace(slot, shape=shape))
        out.append(TaskTemplate(t.text, slots))
    return tuple(out) if grew else None


def quoted_from_record(agent: Any, skill: Any, changed: dict[str, tuple[str, str]]) -> list[str] | None:
    """For a slot-shape probe whose answers carry the same values up to case: the slots whose value the
    agent's answer writes as the record does (the run's own writing) where the skill's writes it as the
    task now does, if that is the only difference between them ([] where they are the same); None where
    they differ otherwise. Two coinciding sources (the task's name, the record's) parted: the agent
    follows the record."""
    if type(agent) is not str or type(skill) is not str:
        return [] if agent == skill else None
    if agent == skill:
        return []
    followed = [n for n, (old, new) in changed.items() if new in skill and new not in agent and old in agent]
    back = skill
    for n in followed:
        old, new = changed[n]
        back = back.replace(new, old)
    return followed if followed and back == agent else None


def sources_followed(runs: Iterable[Trajectory]) -> frozenset[str]:
    """The slots whose value slot-shape probes showed the agent to take from a record, not the task,
    where the two said the same in the run (``quoted_from_record``)."""
    return frozenset(p.fact.removeprefix("source ") for r in runs for p in r.probes if p.step == SLOT and p.fact.startswith("source "))
