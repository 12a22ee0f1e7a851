"""Which words a task was said in, as a fact of a skill of several phrasings.

A skill of several phrasings keeps, with its other switch-like facts, the phrasing each run was said
in, so that words which set a condition ("unlock X if they are in sales", "don't unlock anything,
just reset X's password") never replay in a world those words were not seen in. Kept strictly, that
rule asks every phrasing to meet every combination of facts on its own, and a request said a new
way is handed over until it has.

This module decides when a phrasing may take the worlds its skill's other phrasings were seen in,
acting alike (in one branch of the skill). A phrasing may when its own words can set no condition on
those worlds, as far as the runs can tell:

- it was seen acting this way (in this branch) at least once;
- its literal words (the template without its slots) hold no negation and no word of condition
  ("if", "unless", "only", "except", "even", ...);
- its literal words name none of the facts that varied: no field name on their paths and no value
  any run saw them take ("sales", "locked", "MFA"). The name of a field the skill's answer quotes
  (``groups``, where it lists ``user['groups']``) is not counted: it is what the request asks for, and
  every phrasing of it says it.

The worlds it may take are combinations of the facts that a run said in such words showed together
(so issue #9's rule holds: no combination of world facts that no run showed together replays), each
value of which runs said in at least two such phrasings showed (a value only one phrasing was seen
with, an account that was "disabled" when someone asked to unlock it "even though she left", may be
what that phrasing's words allowed). Every other phrasing keeps exactly the combinations its own runs
showed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ._guards import MISSING
from ._spec import Guard
from ._template import NEGATION, TaskTemplate
from ._values import enum_like

__all__ = ["CONDITION", "Wording", "alike_words", "literal", "shared_worlds", "strict", "worded"]

# words that make a request depend on something: never taken as saying the same as other words
CONDITION = re.compile(
    r"\b(?:if|unless|only|except|but|even|instead|otherwise|regardless|anyway|whether|provided|when)\b", re.IGNORECASE,
)
_SLOT = re.compile(r"\{[^{}]*\}")
_WORD = re.compile(r"[^\W_]+")

Wording = tuple[str, ...]  # the literal text of each phrasing of a skill, by its index


def literal(template: TaskTemplate) -> str:
    """The words of ``template`` that no slot takes."""
    return _SLOT.sub(" ", template.text)


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _words(text: str) -> set[str]:
    """The words of ``text``, lower-cased, each also without a plural's "s"."""
    return {form for w in _WORD.findall(text.lower()) for form in (w, _singular(w))}


def _named(fact: Guard, seen: Sequence[Any], asked: frozenset[str] = frozenset()) -> list[set[str]]:
    """The names of ``fact``, each as the set of its words: its fields' names but those of ``asked``, and
    the texts of the values runs saw (``"on hold"`` is named where both words are said)."""
    names = [str(step).replace("_", " ") for step in fact.path if type(step) is str and step not in asked]
    names += _texts(seen)
    out = []
    for name in names:
        words = {w for w in _WORD.findall(name.lower()) if len(w) > 2}
        if words:
            out.append(words)
    return out


def _texts(values: Any) -> list[str]:
    """The texts among ``values``, inside the tuples and lists a fact's value may be (a set of sources)."""
    if type(values) is str:
        return [values.replace("_", " ")]
    if isinstance(values, (tuple, list, set, frozenset)):
        return [t for v in values for t in _texts(v)]
    return []


def strict(text: str, facts: Sequence[tuple[Guard, Sequence[Any]]], asked: frozenset[str] = frozenset()) -> bool:
    """Whether the words ``text`` may set a condition on ``facts`` (each a fact and what runs saw of it):
    a negation, a word of condition, or words naming one of them. A field in ``asked`` (what the skill's
    answer quotes: ``groups`` where it answers with ``user['groups']``) is what
    the request asks for, which every phrasing of it names: its name sets no condition; the texts its
    values took still do."""
    if NEGATION.search(text) or CONDITION.search(text):
        return True
    mine = _words(text)
    return any(all(_singular(w) in mine for w in name) for g, seen in facts for name in _named(g, seen, asked))


def alike_words(mine: str, theirs: str, read: Sequence[Any]) -> bool:
    """Whether two phrasings, whose literal words are ``mine`` and ``theirs``, may take each other's worlds
    as far as their words tell: a clause of either that holds a negation or a word of condition is a
    clause of the other too, word for word ("we won't need it after all" said by both says the same in
    both; "don't cancel it" is no "cancel it"), and no word one says and the other does not names a text
    the runs read or a field of theirs that is a switch (``read``: their results; "on hold" and "gift
    card" name ``on_hold`` and ``gift_card``, "express" names a flag ``express``; words of three letters
    or more)."""
    if _conditions(mine) != _conditions(theirs):
        return False
    differ = {w for w in _words(mine) ^ _words(theirs) if len(w) > 2}
    if not differ:
        return True
    stack, budget = list(read), 200_000
    while stack and budget > 0:  # the first word of theirs a run read settles it
        v = stack.pop()
        budget -= 1
        if type(v) is str:
            named = _words(v.replace("_", " "))
        elif type(v) is dict:
            named = {w for k, x in v.items() if type(x) is bool or enum_like(x) for w in _words(str(k).replace("_", " "))}
            stack.extend(v.values())
        else:
            named = set()
            stack.extend(v if type(v) is list else ())
        if differ & named:
            return False
    return True


_CLAUSE_END = re.compile(r"[.,;:!?()\[\]\n\u2013\u2014]+")  # what ends a clause of literal text
_CLAUSE_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")  # "won't" is one word here


def _conditions(text: str) -> frozenset[tuple[str, ...]]:
    """The clauses of ``text`` that hold a negation or a word of condition, each as its words, lower-cased."""
    out = set()
    for clause in _CLAUSE_END.split(text.replace("\u2019", "'")):
        if NEGATION.search(clause) or CONDITION.search(clause):
            out.add(tuple(_CLAUSE_WORD.findall(clause.lower())))
    return frozenset(out)


def shared_worlds(
    worlds: Sequence[tuple[Any, ...]], said: Sequence[Any], free: set[int],
) -> tuple[tuple[Any, ...], ...]:
    """The combinations of world facts (``worlds[r]``: what run ``r`` saw) that a run said in a free
    phrasing (one of ``free``; ``said[r]`` is run ``r``'s) showed, each of whose values runs said in
    at least two free phrasings showed. Runs that saw no value of some fact (``MISSING``) show none."""
    with_value: list[dict[Any, set[Any]]] = [{} for _ in worlds[0]] if worlds else []
    for w, p in zip(worlds, said, strict=True):
        if p in free and MISSING not in w:
            for k, v in enumerate(w):
                with_value[k].setdefault(v, set()).add(p)
    out = {
        w for w, p in zip(worlds, said, strict=True)
        if p in free and MISSING not in w and all(len(with_value[k][v]) >= 2 for k, v in enumerate(w))
    }
    return tuple(sorted(out, key=repr))


def worded(
    upto: list[tuple[int, Guard, list[Any]]], combos: list[tuple[Any, ...]], n_runs: int,
    joint: list[tuple[int, Guard, list[Any]]], wording: Wording, asked: frozenset[str] = frozenset(),
) -> Guard:
    """The guard that the facts ``upto`` are a combination some run showed (``combos``), where one of
    them may be the phrasing the task was said in: then a phrasing whose words set no condition on
    the facts also takes the worlds runs said in such words showed (see the module's docstring)."""
    facts = tuple((c, g) for c, g, _s in upto)
    at = next((k for k, (_c, g, _s) in enumerate(upto) if g.kind == "said"), None)
    if at is None or not wording or len(upto) < 2:
        return Guard("combo", (), (facts, tuple(combos)))
    said = upto[at][2]
    seen = sorted({p for p in said[:n_runs] if p is not MISSING})
    named = [(g, s) for _c, g, s in joint if g.kind != "said"]
    free = {p for p in seen if not strict(wording[p], named, asked)}
    worlds = [tuple(v[2][r] for k, v in enumerate(upto) if k != at) for r in range(n_runs)]
    shared = shared_worlds(worlds, said[:n_runs], free)
    if not shared:
        return Guard("combo", (), (facts, tuple(combos)))
    rest = tuple(c for c in combos if not (c[at] in free and c[:at] + c[at + 1 :] in shared))
    return Guard("combo", (), (facts, rest, (at, shared, tuple(sorted(free)))))
