"""Several requests in one message: a run split into one run per request, and their answers joined.

A message such as "Your name is Ana Li, zip 10001. Cancel order #W1 because I moved. For #W2,
exchange ..." holds a *prelude* (who the customer is) and *clauses*, one per request. A run of
such a message is split into sub-runs, one per request, each of them the prelude's calls plus
the request's own calls, with the prelude's text plus the clause's text as its task; each is then
learned like any run, so the request becomes (or strengthens) a skill of its own. Serving a
message is the other way round: ``segment`` finds a prelude and clauses that each bind a skill,
and the skills run in message order (see ``_composing``).

Everything here is learned from the run, never from words of a dataset:

- a write belongs to the clause that says the values it uses (its arguments' task spans); writes
  said by the same clause are one request; the text is cut between sentences (after ``.``, ``!``,
  ``?`` or ``;`` and a space) and, if that does not cut the run, also inside a sentence, after a
  comma, and before a connective word of English (``and``, ``also``, ``then``, ``plus``: used the way
  punctuation is, as where a request may end, never as what a request is); text between two
  requests' values stays with the earlier;
- a value an earlier request used does not place a later one ("Ship order #W1 to ... and cancel it
  because ..."): the later request is placed by its own values, and its run carries the value over
  from the clause that said it, written before its clause (``carried_text``: ``"W1: and cancel it
  because ..."``), where its skill's template binds it and composition passes it on;
- a request that says no value of its own ("Please unlock ana.li and reset her password": the reset
  takes only the account the unlock took) is placed by the order of the writes: at the one place a
  piece begins between the values of the request before and the next request's (or the end), at the
  finest cut; with no place there it is the request before's second write, with several it is
  unclear. Several such requests take as many places, in order; where the requests before them are
  said only by whole sentences opening the message and there is one place more, those sentences are
  the prelude (who the requests are about: "ana.li is locked out. | Please unlock her | and enable
  MFA too."), and each request is named in the answer by the values the prelude said;
- a clause that says only values, connective words and punctuation ("and wiki-editors." of "Add
  ana.li to jira-users and wiki-editors.") is an item of a list, not a request: no split;
- a read no call uses, of values said after the first write's, may be a request of its own (a
  question: "..., and tell me where order #W2 is"), when the answer has a part for it; so may such a
  read made before the first write ("Where is order #W2? And cancel #W1 ..."), or in a run with no
  write at all (a request the agent refused, answered from what it read, and a question), where its
  answer says something the read returned that the message does not say (never only a naming: "Hello
  ana.li"), the reads made before it are the prelude's (one at least: who asks), and every later
  request is joined on by a connective word;
- a request may have written nothing and read nothing of its own: "Please unlock ana.li | and reset
  her password." where ana.li is not locked (the agent read her account, answered that it isn't
  locked, and reset the password). Its act is only an answer, drawn from a read another request
  makes too, placed like any act by that read's values; it is a request only when the answer cuts
  the way the agent is known to join answers, in one reading only, every later request is joined on
  by a connective word (never a change of mind or a courtesy, a sentence of its own), and each
  request that wrote says a word of its write's tool (``reset_password``) while the answering clause
  says none (``_answered``);
- a read belongs to every request that acts after it and whose writes it feeds (through the data
  flow) or whose values it names (a read is safe to make again, so it may serve several), and to the
  requests of the reads it is made from; a request whose clause names its values only in passing
  ("ship #W2 to 5 Oak Lane, as I asked for #W1": no act of it uses them, or what the read returned)
  has it only when no other request that names them acts on them; a read of
  the opening's values (or of a closing's, whole sentences after the last request: "... My email is
  ana@x.com."), who is asking, is the prelude's, part of every request's run, even where one
  request's write alone uses what it returned (each request alone would have read it); so is a read
  of nothing the message says that no single request needs (a composed message's skills each make
  the prelude's reads again: a call may use any of those same reads, the one its request's run keeps);
  the opening may end at the first sentence's colon where the text before it says who is asking (values
  no write takes: "Ana Li, zip 10001: what's ...");
- a request that read something before another request wrote to it, and acted after that write,
  acted on what that write returned where it returned the record itself (an order of the same
  fields and id) or the fields of it that it changed (``{"username": "ana.li", "locked": False}``
  for an account read whole): its run reads that record, as its skill would read it after the
  earlier request's skill wrote; else (a write that returns fields the record does not have, or
  another record's) it acted on a world its reads do not show, and its run is not learned from
  (``Split.fresh``);
- the answer is cut where each request's part names that request's own values and no other's: the
  separator and the final mark found there (``"; "`` and ``"."``) are how the agent joins answers;
  when the agent's answers are sentences, between sentences (the last sentence end before the next
  request's first naming).

A split that any of these leaves unclear is no split: the run is learned whole, as before.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ._answers import Joiner, _split_answer
from ._lifting import _check_run, _Lifter, _lift_values
from ._segments import segment
from ._spans import _CONNECTIVE, pieces
from ._stale import _UNREAD, _acts_alike, _as_returned, _at, _made_again, _read_after, _returned_record, _superseded
from ._spec import Param, Ref
from ._trajectory import Call, Outcome, Trajectory, canonical_json
from ._values import _leaves, walk_exprs
from ._values import scalars as _scalars

__all__ = ["Joiner", "Split", "carried_text", "pieces", "segment", "split_run"]

_MAX_READINGS = 4096  # ways of placing the writes in the message considered


@dataclass(frozen=True, slots=True)
class Split:
    """A run of several requests as one run per request (message order).

    ``fresh[i]`` is False when request ``i`` read something before another request wrote to it (a
    value both calls take) and acted after that write: the sub-run is not a run of its own and is
    not learned from."""

    runs: tuple[Trajectory, ...]
    fresh: tuple[bool, ...]
    prelude: str
    clauses: tuple[str, ...]
    joiner: Joiner
    closing: str = ""  # text after the last request that every request's run has (who is asking, said last)
    carried: tuple[tuple[Any, ...], ...] = ()  # per request: the values its clause carries over from an earlier one


def _windows(occurs: list[list[tuple[int, int]]], n: int) -> list[tuple[int, int]]:
    """Every run of pieces that holds an occurrence of each value and no shorter run inside it does."""
    holds = [
        (lo, hi) for lo in range(n) for hi in range(lo, n)
        if all(any(lo <= a and b <= hi for a, b in occ) for occ in occurs)
    ]
    return [(lo, hi) for lo, hi in holds if not any((a, b) != (lo, hi) and lo <= a and b <= hi for a, b in holds)]


def _requests(candidates: list[list[tuple[int, int]] | None], places: _Places) -> list[tuple[int, int]] | str:
    """One window per act (``candidates``: each act's, in the order the acts were made; None for an act
    that says no value of its own, placed by ``_placed``) such that two windows are the same (one
    request) or apart, in the order the acts were made: the reading with the most requests, if
    exactly one reading has that many."""
    best: list[list[tuple[int, int]]] = []
    most = 0
    anchored = [c for c in candidates if c is not None]
    for chosen in itertools.islice(itertools.product(*anchored), _MAX_READINGS):
        it = iter(chosen)
        pick = _placed([None if c is None else next(it) for c in candidates], places)
        if pick is None:
            continue
        spans = sorted(set(pick))
        if any(b[0] <= a[1] for a, b in itertools.pairwise(spans)):
            continue
        ranks = [spans.index(w) for w in pick]
        if any(b < a for a, b in itertools.pairwise(ranks)):
            continue
        if len(spans) > most:
            best, most = [list(pick)], len(spans)
        elif len(spans) == most and list(pick) not in best:
            best.append(list(pick))
    if not best:
        return "the clauses of two writes overlap"
    if len(best) > 1:
        return "the writes' values are said in more than one place"
    return best[0]


@dataclass(frozen=True, slots=True)
class _Places:
    """Where the pieces a message is cut into may begin a request: ``n`` pieces, those that begin a
    sentence, those whose text holds a finer place (a comma, a connective word) inside it, and those
    that say a value a call takes."""

    n: int
    sentence_starts: frozenset[int]
    split_inside: frozenset[int]
    valued: frozenset[int]


def _placed(pick: list[tuple[int, int] | None], places: _Places) -> list[tuple[int, int]] | None:
    """``pick`` with each act that says no value of its own (None) placed, or None where that is unclear.

    The acts between two acts placed by their values (or after the last) go, in the order they were
    made, to the places a piece begins between the earlier act's values and the later act's: one
    act to each place when there are exactly as many places as acts ("unlock ana.li | and reset her
    password"); with no place there, they are the earlier act's request (its second write). When
    the acts before them are said only by whole sentences that open the message and there is one
    place more, those sentences are an opening that says who the requests are about, and the earlier
    acts go to the first place ("ana.li is locked out. | Please unlock her | and enable MFA too").
    Places are counted at the finest cut: a piece with a finer place inside it makes it unclear, and
    so does one that says a value (what a request that says no value of its own cannot have: "... and
    reset her password. I'm bo.ng." has a place for the reset and one for who asks)."""
    out = list(pick)
    i = 0
    while i < len(out):
        if out[i] is not None:
            i += 1
            continue
        j = i
        while j < len(out) and out[j] is None:
            j += 1
        prev = out[i - 1]
        nxt = out[j] if j < len(out) else None
        if prev is None:  # the first act always says a value of its own
            return None
        free = list(range(prev[1] + 1, nxt[0] if nxt is not None else places.n))
        k = j - i
        if any(p in places.split_inside or p in places.valued for p in free):
            return None
        if not free:
            out[i:j] = [prev] * k
        elif len(free) == k:
            out[i:j] = [(p, p) for p in free]
        elif (len(free) == k + 1 and prev[0] == 0 and prev[1] + 1 in places.sentence_starts
              and all(w == prev for w in out[:i])):
            out[:i] = [(free[0], free[0])] * i
            out[i:j] = [(p, p) for p in free[1:]]
        else:
            return None
        i = j
    return out  # type: ignore[return-value]  # every None is placed


_RETRY = ("fewer than two writes", "the message is one sentence", "every write uses values of one clause",
          "the clauses of two writes overlap", "the writes' values are said in more than one place")
_MAX_ASKS = 3  # reads that may each be a request of their own (a question) considered together


@dataclass(slots=True)
class _Facts:
    """What a run says, whatever the pieces its message is cut into: each call's task values and data flow."""

    calls: list[Any]
    is_read: list[bool]
    writes: list[int]
    said_at: dict[str, list[tuple[int, int]]]  # task value (param name) → where the message says it (chars)
    value_of: dict[str, Any]  # task value (param name) → the value
    params_of: list[set[str]]
    refs_of: list[set[int]]
    deps: list[set[int]]
    # the same, a value the message says read as said even where the lifter took it from a result that
    # echoes it (``ship_to`` returning the order id the next read takes): how a carried value flows
    said_params_of: list[set[str]]
    said_refs_of: list[set[int]]
    said_deps: list[set[int]]
    ref_paths: list[set[tuple[int, tuple[Any, ...]]]]  # per call: (call, path) of each result it uses


def _facts(traj: Trajectory) -> _Facts:
    calls = traj.calls
    is_read = [bool(traj.tools.get(c.tool) and traj.tools[c.tool].read) for c in calls]
    lifter = _Lifter(traj, roll=False)
    steps, _output, _eaches, _taken = _lift_values(lifter, traj)
    said_at: dict[str, list[tuple[int, int]]] = {}
    value_of: dict[str, Any] = {}
    for (s, e), (name, value, _kind, _how) in lifter.params.items():
        value_of[name] = value
        found = {(s, e)} | {(a, b) for a, b, _k, _h in lifter.spans.occurrences(value)}
        said_at.setdefault(name, []).extend(sorted(found))
    params_of = [{x.name for _k, a in args for x in walk_exprs(a) if isinstance(x, Param)} for _t, args in steps]
    refs_of = [{x.call for _k, a in args for x in walk_exprs(a) if isinstance(x, Ref)} for _t, args in steps]
    named = {canonical_json(v): name for name, v in value_of.items() if type(v) in (str, int)}
    said_params_of = [set(p) for p in params_of]
    said_refs_of: list[set[int]] = [set() for _ in calls]
    for i, (_t, args) in enumerate(steps):
        for _k, a in args:
            for x in walk_exprs(a):
                if isinstance(x, Ref):
                    name = named.get(canonical_json(_at(calls[x.call].result, x.path)))
                    if name is None:
                        said_refs_of[i].add(x.call)
                    else:
                        said_params_of[i].add(name)
    ref_paths = [{(x.call, tuple(x.path)) for _k, a in args for x in walk_exprs(a) if isinstance(x, Ref)} for _t, args in steps]
    return _Facts(list(calls), is_read, [i for i, r in enumerate(is_read) if not r], said_at, value_of, params_of, refs_of,
                  _deps(refs_of), said_params_of, said_refs_of, _deps(said_refs_of), ref_paths)


def _deps(refs_of: list[set[int]]) -> list[set[int]]:
    """Every call whose result each call uses, directly or through other calls."""
    deps: list[set[int]] = []
    for i, refs in enumerate(refs_of):
        deps.append(set(refs).union(*(deps[j] for j in refs if j < i)))
    return deps


def split_run(traj: Trajectory, *, importable: bool = True, joiners: Sequence[Joiner] = ()) -> Split | str:
    """``traj`` as one run per request, or why it is one request (or cannot be told apart).

    Sentences first, writes as the requests' acts; then, if that does not cut the run, reads that
    answer a question of their own (a read no call uses, of values the message says: after the first
    write first, then before it, with ``_split``'s guards for those), and cuts inside sentences
    (``pieces(fine=True)``).

    ``joiners``: how the agent was seen to join answers before (an answer that could be cut in
    several ways is cut the known way)."""
    writes = [i for i, c in enumerate(traj.calls) if not (traj.tools.get(c.tool) and traj.tools[c.tool].read)]
    alone = not writes or len(writes) < 2 and len(traj.calls) == writes[0] + 1 and (not joiners or not writes[0])
    if alone and not _may_ask(traj, writes):
        # no second write, no read after the write, no read to answer from (_answered), and no question before it
        return "fewer than two writes"
    problem = _check_run(traj, importable)
    if problem is not None:
        return problem.reason
    facts = _facts(traj)
    sentences, fine = pieces(traj.task), pieces(traj.task, fine=True)
    colon = _colon(traj.task, sentences)
    if colon is not None and _who_asks_before(colon, facts):  # "Ana Li, zip 10001: ..." is a prelude
        sentences, fine = _cut_at(sentences, colon), _cut_at(fine, colon)
    first = _split(traj, facts, sentences, sentences, writes, joiners) if len(writes) >= 2 else "fewer than two writes"
    if isinstance(first, Split) or not first.startswith(_RETRY):
        return first
    used = set().union(*facts.refs_of)
    first_write = writes[0] if writes else len(facts.calls)
    unused = [r for r, read in enumerate(facts.is_read) if read and r not in used and facts.params_of[r] & set(facts.said_at)]
    # questions asked after the first write first (never who is asking), then before it (_split's guards: ``early``)
    asks = ([r for r in unused if r > first_write] + [r for r in unused if r < first_write])[:_MAX_ASKS]
    for parts, carry in itertools.product((sentences, fine), (False, True)):
        if parts is not sentences and len(parts) == len(sentences):
            continue
        for size in range(len(asks) + 1):
            for chosen in itertools.combinations(asks, size):
                acts = sorted([*writes, *chosen])
                if len(acts) < 2 or (parts is sentences and not chosen and not carry):
                    continue
                early = frozenset(r for r in chosen if r < first_write)
                split = _split(traj, facts, parts, sentences, acts, joiners, carry=carry, early=early)
                if isinstance(split, Split):
                    return split
    answered = _answered(traj, facts, sentences, joiners)
    return answered if answered is not None else first


def _may_ask(traj: Trajectory, writes: list[int]) -> bool:
    """Whether the run may hold a question asked before its first write, or (no write) two, by a cheap
    look at its text before lifting it: reads made before the first write of a value the message says
    and no write takes, whose results no later call takes."""
    said = re.sub(r"\W", "", traj.task.lower())
    calls = traj.calls
    first = writes[0] if writes else len(calls)
    written = set().union(*(_scalars(calls[w].args) for w in writes))
    asked: set[str] = set()
    for i, c in enumerate(calls[:first]):
        if not (traj.tools.get(c.tool) and traj.tools[c.tool].read) or _scalars(c.result) & set().union(
                *(_scalars(d.args) for d in calls[i + 1 :])):
            continue
        asked |= {v for v in _scalars(c.args) - written if len(key := re.sub(r"\W", "", v.lower())) >= 2 and key in said}
    return len(asked) >= (1 if writes else 2) and len(pieces(traj.task, fine=True)) >= 2


_COLON = re.compile(r":[ \t]+")


def _colon(task: str, sentences: list[tuple[int, int]]) -> int | None:
    """Where the text after the first colon of the first sentence begins (``"Ana Li, zip 10001: what's
    ..."``), or None: where a prelude may end inside the first sentence."""
    if not sentences:
        return None
    a, b = sentences[0]
    m = _COLON.search(task, a, b)
    return m.end() if m is not None and m.end() < b else None


def _cut_at(parts: list[tuple[int, int]], at: int) -> list[tuple[int, int]]:
    """``parts`` with the piece holding ``at`` cut there."""
    return [q for a, b in parts for q in (((a, at), (at, b)) if a < at < b else ((a, b),))]


def _who_asks_before(at: int, facts: _Facts) -> bool:
    """Whether the text before ``at`` says a value and only values that no write takes: who is asking."""
    before = {p for p, found in facts.said_at.items() if any(e <= at for _s, e in found)}
    written = set().union(*(facts.params_of[w] | facts.said_params_of[w] for w in facts.writes))
    return bool(before) and not before & written


def _drawn(answer: Any, result: Any, task: str) -> bool:
    """Whether ``answer`` says a value of ``result`` (three characters or more) that ``task`` does not:
    an answer drawn from what was read, not only a naming of what the message said ("Hello ana.li")."""
    if not isinstance(answer, str):
        return False
    said = task.lower()
    for v in _leaves(result):
        text = v.strip() if type(v) is str else str(v) if type(v) in (int, float) else ""
        if len(text) >= 3 and text.lower() not in said and re.search(rf"(?<!\w){re.escape(text)}(?!\w)", answer, re.IGNORECASE):
            return True
    return False


_ANSWER = "<answer>"  # the act of a request that only answered: no call of the run
_MAX_ANSWERS = 24  # (where, from which read) an answer-only request may be, considered


def _answered(traj: Trajectory, facts: _Facts, sentences: list[tuple[int, int]], joiners: Sequence[Joiner]) -> Split | None:
    """``traj`` split with one request that wrote nothing and read nothing of its own: its act is only
    an answer drawn from a read made before it (``"Please unlock ana.li | and reset her password."``,
    ana.li not locked: the agent read her account, answered that it isn't locked and reset the
    password). The answer is an act said by the clause of the read's values, placed like any act;
    its run is the read and its part of the agent's answer. Only when the answer cuts into one part
    per request the way the agent is known to join answers (``joiners``: seen on runs whose writes
    told the requests apart), in one way only (the answer given before a write or after it, from one
    read or another), and ``_told_apart``: a message whose answer is several sentences of one request
    ("Please reset ana.li's password, thanks.") is never cut by a guess. None: no such split."""
    writes = facts.writes
    if not writes or not joiners:
        return None
    # the reads an answer may be drawn from: of values the message says, a read a write's request needs too
    # (one it feeds, or of a value a write takes); the answer given just before a write, or last
    sources = [r for r, read in enumerate(facts.is_read) if read and facts.params_of[r] & facts.said_at.keys() and any(
        r in facts.deps[w] or facts.params_of[r] & (facts.params_of[w] | facts.said_params_of[w]) for w in writes)]
    tries = [(at, r) for at in sorted({*writes, len(facts.calls)}) for r in sources if r < at]
    if len(tries) > _MAX_ANSWERS:  # too many readings to be sure there is only one
        return None
    found: dict[str, Split] = {}
    fine = pieces(traj.task, fine=True)
    for at, r in tries:
        with_answer = _answer_at(facts, at, r, facts.params_of[r] & facts.said_at.keys())
        acts = sorted([*(w + (w >= at) for w in writes), at])
        for parts, carry in itertools.product((sentences, fine), (False, True)):
            if parts is not sentences and len(parts) == len(sentences):
                continue
            split = _split(traj, with_answer, parts, sentences, acts, joiners, carry=carry)
            if isinstance(split, Split) and split.joiner in joiners and _told_apart(split, traj):
                split = _without_answer(split)
                runs = [[run.task, run.outcome.output, [c.tool for c in run.calls]] for run in split.runs]
                found.setdefault(canonical_json([runs, split.fresh]), split)
                break
    return next(iter(found.values())) if len(found) == 1 else None


def _words(text: str) -> set[str]:
    """The words of ``text`` (or of a tool's name: ``reset_password``, ``enableMfa``), lower case."""
    return {w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", text)}


def _told_apart(split: Split, traj: Trajectory) -> bool:
    """Whether ``split``, with one request that only answered, tells that request from the others by
    more than the values (its clause and the next may say the same account, or one says none):

    - every request after the first is joined on by a connective word (``"and reset her password."``),
      never a sentence of its own: a change of mind ("Actually, never mind — just reset her password.")
      or a courtesy (``", thanks."``) is no request, and the answer of a sentence before it is no
      answer-only request;
    - each request that wrote says a word of a tool it wrote with (``reset_password``: ``"reset"``) and
      the answering request's clause says none: what the answer is for is not what a write did;
    - the answering request has no read of its own: each of its reads is another request's too."""
    answered = [q for q, run in enumerate(split.runs) if any(c.tool == _ANSWER for c in run.calls)]
    if len(answered) != 1 or not all(_JOINED.match(clause) for clause in split.clauses[1:]):
        return False
    written: set[str] = set()
    others: set[str] = set()
    for q, run in enumerate(split.runs):
        if q in answered:
            continue
        writes = [c.tool for c in run.calls if not (traj.tools.get(c.tool) and traj.tools[c.tool].read)]
        tools = {w for t in writes for w in _words(t) if len(w) >= 3}
        if not tools & _words(split.clauses[q]):
            return False
        written |= tools
        others |= {canonical_json([c.tool, c.args]) for c in run.calls}
    q = answered[0]
    own = {canonical_json([c.tool, c.args]) for c in split.runs[q].calls if c.tool != _ANSWER}
    return own <= others and not written & _words(split.clauses[q])


_JOINED = re.compile(rf"\W*{_CONNECTIVE}\b", re.IGNORECASE)


def _answer_at(facts: _Facts, at: int, r: int, said: set[str]) -> _Facts:
    """``facts`` with an answer drawn from read ``r`` as a call at ``at`` (the calls from ``at`` on one later):
    a read of the values ``said`` that uses read ``r``."""
    def shift(refs: Iterable[int]) -> set[int]:
        return {j + (j >= at) for j in refs}

    def put(rows: list[Any], row: Any) -> list[Any]:
        return [*rows[:at], row, *rows[at:]]

    answer = Call(tool=_ANSWER, args={p: facts.value_of[p] for p in sorted(said)}, result=None)
    refs_of = put([shift(s) for s in facts.refs_of], {r})
    said_refs_of = put([shift(s) for s in facts.said_refs_of], {r})
    return _Facts(
        put(facts.calls, answer), put(facts.is_read, True), [w + (w >= at) for w in facts.writes], facts.said_at,
        facts.value_of, put(facts.params_of, set(said)), refs_of, _deps(refs_of),
        put(facts.said_params_of, set(said)), said_refs_of, _deps(said_refs_of),
        put([{(j + (j >= at), path) for j, path in s} for s in facts.ref_paths], set()),
    )


def _without_answer(split: Split) -> Split:
    """``split`` with each run's answer act taken out: what the request's own run was."""
    runs = tuple(run.model_copy(update={"calls": [c for c in run.calls if c.tool != _ANSWER]}) for run in split.runs)
    return dataclasses.replace(split, runs=runs)


def _split(traj: Trajectory, facts: _Facts, parts: list[tuple[int, int]], sentences: list[tuple[int, int]],
           acts: list[int], joiners: Sequence[Joiner], *, carry: bool = False, early: frozenset[int] = frozenset()) -> Split | str:
    """``traj`` cut at ``parts`` into one run per request, each request a set of ``acts`` (writes, and
    reads that answer a question) said by one clause; or why not.

    ``carry``: a value an earlier act used does not place a later act (``"Ship order #W1 to ... and
    cancel it because ..."``: the cancel is placed by its reason); the request whose clause does not
    say it carries it over from the clause that did (``Split.carried``).

    ``early``: acts that are questions asked before the first write (or in a run with no write: a
    request the agent refused is answered from its reads too). Such a read could be who is asking,
    so it is a question only where its answer says something it read that the message does not say
    (``_drawn``), the reads made before it are the prelude's and there is one at least (who asks is
    read first, and is everyone's: a read made first, "Hi Ana Ruiz" answered from it, may be who
    asks), and every later request is joined on by a connective word (never a sentence of its own:
    a change of mind)."""
    calls, is_read, writes = facts.calls, facts.is_read, facts.writes
    if carry:
        params_of, refs_of, deps = facts.said_params_of, facts.said_refs_of, facts.said_deps
    else:
        params_of, refs_of, deps = facts.params_of, facts.refs_of, facts.deps
    if len(parts) < 2:
        return "the message is one sentence"
    n = len(parts)

    def piece_span(a: int, b: int) -> tuple[int, int]:
        first = next(i for i, (s, e) in enumerate(parts) if a < e)
        last = next(i for i, (s, e) in reversed(list(enumerate(parts))) if s < b)
        return first, max(first, last)

    occurs = {name: [piece_span(a, b) for a, b in found] for name, found in facts.said_at.items()}

    # acts → requests, by the pieces that say their values (or, saying none of their own, by their order)
    candidates: list[list[tuple[int, int]] | None] = []
    for i, w in enumerate(acts):
        said = sorted(p for p in params_of[w] if p in occurs)
        if not said:
            return f"call {w} ({calls[w].tool}) uses no value the message says"
        if carry:
            earlier = set().union(*(params_of[v] for v in acts[:i]))
            said = [p for p in said if p not in earlier]
            if not said:
                candidates.append(None)
                continue
        candidates.append(_windows([occurs[p] for p in said], n))
    finest = {a for a, _b in pieces(traj.task, fine=True)}
    picked = _requests(candidates, _Places(
        n, frozenset(i for i, (a, _b) in enumerate(parts) if a in {s for s, _e in sentences}),
        frozenset(i for i, (a, b) in enumerate(parts) if any(a < f < b for f in finest)),
        frozenset(i for p in set().union(*params_of) & occurs.keys() for lo, hi in occurs[p] for i in range(lo, hi + 1)),
    ))
    if isinstance(picked, str):
        return picked
    windows = dict(zip(acts, picked, strict=True))
    spans = sorted(set(picked))
    if len(spans) < 2:
        return "every write uses values of one clause"
    request_of = {w: spans.index(windows[w]) for w in acts}
    if any(is_read[r] and sum(1 for w in acts if request_of[w] == request_of[r]) > 1 for r in acts):
        return "a question is said by a clause that asks for more"
    k = len(spans)
    starts = [lo for lo, _hi in spans]
    bounds = {a for a, _b in sentences}
    if parts[starts[0]][0] not in bounds:
        return "the first request starts inside a sentence"
    # a closing (who is asking, said after every request): its reads are everyone's, like the opening's
    coda = next((i for i in range(spans[-1][1] + 1, n) if parts[i][0] in bounds), n)
    if not any(a >= coda for occ in occurs.values() for a, _b in occ):
        coda = n
    regions = [(starts[q], (starts[q + 1] if q + 1 < k else coda)) for q in range(k)]  # piece ranges

    for q, (lo, hi) in enumerate(regions[1:], start=1):
        if _only_values(traj.task, parts[lo][0], parts[hi][0] if hi < n else len(traj.task), facts.said_at.values()):
            return f"request {q + 1}'s clause says only values: an item of a list, not a request"

    def said_in(p: str, lo: int, hi: int) -> bool:
        return any(lo <= a and b < hi for a, b in occurs[p])

    # values a request's acts use that its clause does not say: carried over from an earlier clause
    carried: list[list[str]] = []
    for q, (lo, hi) in enumerate(regions):
        mine = sorted({p for w in acts if request_of[w] == q for p in params_of[w] if p in occurs})
        away = [p for p in mine if not said_in(p, lo, hi) and not any(b < starts[0] or a >= coda for a, b in occurs[p])]
        if away and (q == 0 or any(not any(said_in(p, *regions[e]) for e in range(q)) for p in away)):
            return f"request {q + 1} uses a value no earlier clause says"
        if len(away) > 1 or any(type(facts.value_of[p]) not in (str, int) for p in away):
            return f"request {q + 1} carries more than one value, or one that is not a word or a number"
        carried.append(sorted(away, key=lambda p: min(a for a, _b in occurs[p])))

    # reads → the requests they serve (a read may serve several: it is safe to make again), or the prelude
    owners: dict[int, set[int]] = {w: {request_of[w]} for w in acts}
    shared: set[int] = set()  # the prelude's calls: part of every request's run
    for r in range(len(calls)):
        if not is_read[r] or r in request_of:
            continue
        said = sorted(p for p in params_of[r] if p in occurs)
        homes = {q for q, (lo, hi) in enumerate(regions) if said and all(p in carried[q] or said_in(p, lo, hi) for p in said)}
        opening = bool(said) and all(any(b < starts[0] or a >= coda for a, b in occurs[p]) for p in said)
        if said and not homes and not opening:
            return f"call {r} ({calls[r].tool}) reads values of several clauses"
        users = {request_of[w] for w in writes if r in deps[w]}
        fed = set().union(*(owners[j] for j in refs_of[r] if j not in shared))
        homes = {q for q in homes if any(w > r and request_of[w] == q for w in acts)} or homes  # not for a request done
        # a clause that names the read's values only in passing ("ship #W2 there, as for #W1") has it only
        # when no other clause that names them acts on them (uses them, or what the read returned)
        acting = {request_of[w] for w in acts if (params_of[w] | facts.said_params_of[w]) & set(said) or r in deps[w]}
        homes = homes & acting or homes
        fed = {q for q in fed if any(w > r and request_of[w] == q for w in acts)} or fed
        if opening or not said and not fed:  # who is asking: every request's run reads it, as it would alone
            shared.add(r)
        else:
            owners[r] = users | homes | fed
    for a in early:  # who is asking was read before the question, and only who is asking
        before = [c for c in range(a) if is_read[c] and c not in request_of]
        if not any(c in shared for c in before) or any(c not in shared for c in before):
            return f"call {a} ({calls[a].tool}) is not made after the prelude's reads alone: it may be who is asking"
    runs_of = [_superseded([c for c in range(len(calls)) if c in shared or q in owners.get(c, ())], calls, acts, request_of, q)
               for q in range(k)]
    for q, mine in enumerate(runs_of):
        if not any(not is_read[c] or c in request_of for c in mine):
            return f"request {q + 1} does nothing"
        for c in mine:
            if any(j in refs_of[c] and j not in mine and not _made_again(j, path, c, mine, calls)
                   and not _returned_record(j, path, c, mine, calls, is_read)
                   for j, path in facts.ref_paths[c]):
                return f"call {c} ({calls[c].tool}) uses what another request's call returned"

    opening_values = {v for c in shared for v in _said(calls[c].args)}
    named = [{v for c in mine if c not in shared for v in _said(calls[c].args)} for mine in runs_of]
    # a request that acts only on what the opening said (who it is about) is named by those values
    joined = _split_answer(traj.outcome.output, [(vs - opening_values) or vs for vs in named], joiners)
    if isinstance(joined, str):
        return joined
    joiner, answers = joined

    task = traj.task
    prelude = task[: parts[starts[0]][0]] if starts[0] else ""
    closing = task[parts[coda][0] :] if coda < n else ""
    clauses = tuple(task[parts[lo][0] : (parts[hi][0] if hi < n else len(task))] for lo, hi in regions)
    for a in early:
        if not _drawn(answers[request_of[a]], calls[a].result, task):
            return f"the answer for call {a} ({calls[a].tool}) says nothing it read"
    if early and not all(_JOINED.match(clause) for clause in clauses[1:]):
        return "a request after a question is not joined on by a connective word"
    world = set().union(*(_scalars(c.args) | _scalars(c.result) for c, r in zip(calls, is_read, strict=True) if r))
    runs, fresh = [], []
    for q in range(k):
        mine = runs_of[q]
        last = max(mine)
        renewed: dict[int, Any] = {}  # reads another request's write made stale: the record as that write returned it
        again: dict[int, Any] = {}  # or as the read made again right after that write returned it (``Call.after``)
        seen_write = False  # a read made before another request's write to what it read, acted on after that write
        for c in mine:
            touching = [
                w for w in writes
                if is_read[c] and c < w < last and q not in owners[w] and _scalars(calls[w].args) & _scalars(calls[c].args) & world
            ]
            if touching:
                now = _as_returned(calls[c].result, calls[touching[-1]])
                if now is not None:
                    renewed[c] = calls[c].model_copy(update={"result": now})
                elif (after := _read_after(calls, c, touching[-1])) is not _UNREAD:
                    again[c] = calls[c].model_copy(update={"result": after})
                else:
                    seen_write = True

        def run_of(reads: dict[int, Any]) -> Trajectory:
            return Trajectory(
                task=(prelude + carried_text([facts.value_of[p] for p in carried[q]]) + clauses[q] + closing).strip(),
                calls=[reads.get(c, calls[c]).model_copy(update={"after": None}) for c in mine],
                outcome=Outcome(ok=True, output=answers[q]),
                tools={t: ref for t, ref in traj.tools.items() if any(calls[c].tool == t for c in mine)},
            )

        run = run_of(renewed)
        if again and not seen_write:  # learned as the world was, where what the agent knew of it cannot matter
            after_write = run_of({**renewed, **again})
            written = frozenset().union(*(_scalars(calls[w].args) for w in writes if q not in owners[w]))
            if _acts_alike(run, after_write, written):
                run = after_write
            else:
                seen_write = True
        fresh.append(not seen_write)
        runs.append(run)
    return Split(tuple(runs), tuple(fresh), prelude, clauses, joiner, closing,
                 tuple(tuple(facts.value_of[p] for p in c) for c in carried))


_CONNECTIVES_ONLY = re.compile(rf"(?:\W|\b{_CONNECTIVE}\b)*", re.IGNORECASE)


def _only_values(task: str, start: int, end: int, said_at: Iterable[list[tuple[int, int]]]) -> bool:
    """Whether ``task[start:end]`` is only values the message says, connective words and punctuation
    (``"and wiki-editors."`` of ``"Add ana.li to jira-users and wiki-editors."``): no words of a
    request of its own."""
    text = list(task[start:end])
    for found in said_at:
        for a, b in found:
            for i in range(max(a, start), min(b, end)):
                text[i - start] = " "
    return _CONNECTIVES_ONLY.fullmatch("".join(text)) is not None


def carried_text(values: Sequence[Any]) -> str:
    """How a request's run says the values its clause carries over from an earlier one (``"W11: "``
    before ``"and cancel it because ..."``): the text its skill's template binds them from."""
    return f"{', '.join(str(v) for v in values)}: " if values else ""


def _said(args: dict[str, Any]) -> set[str]:
    """The texts of an argument's scalar values an answer may name (strings of two characters or more)."""
    leaves = _leaves(args)
    return {v.strip() for v in leaves if type(v) is str and len(v.strip()) >= 2} | {
        str(v) for v in leaves if type(v) in (int, float)
    }


