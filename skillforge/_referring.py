"""Words that stood for a value: "reset **his** password" where a skill was learned with "her". Pure.

A request of a message of several often names its subject by a word that refers back ("Unlock
ana.li and reset **her** password"): its clause's run carries the value over from the clause before
(``_requests.carried_text``), and its skill's template says the word literally, as its run did. One
run cannot make that word a slot (a single word is a choice of the texts runs showed), so "reset
**his** password" was a miss however often "her" was served.

What a word of a template stands for is learned from the skill's phrasings, never from a list of
words: where two phrasings of one skill (one program) differ only in that one says a word where the
other has a slot that the first binds elsewhere (carried over, or said before),

    "{username} is locked out. Please unlock him"   /   "Please unlock {username}"

the word stood for that slot's value ("him" for ``username``; "his" where the other says
``{username}'s``), and is a *referring word*. The
library's referring words are those of all its skills. A task that no template binds, with a
referring word where a template says another ("Please unlock her" against the first phrasing
above), is bound by that template: one referring word stands for the value as well as another,
and the value itself is bound from where the template binds it (the carried value, the sentence
before). The word never becomes a slot, passes nothing on and widens no other word.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Sequence

from ._template import NEGATION

__all__ = ["MAX_VARIANTS", "referring_words", "variants"]

MAX_VARIANTS = 24  # tasks tried with one referring word for another, per lookup
_TOKEN = re.compile(r"\{\{|\}\}|\{\w+\}(?:['\u2019]s\b)?|\w+(?:['\u2019]\w+)*|[^\w\s]")
_WORD = re.compile(r"[a-z]+")
_SLOT = re.compile(r"\{(\w+)\}(?:['\u2019]s)?")
_IN_TASK = re.compile(r"(?<![\w.@#'\u2019-])[A-Za-z]+(?![\w@#'\u2019-]|\.\w)")


def _slot(token: str) -> str | None:
    """The slot a token says (``{username}``), or says the possessive of (``{username}'s``: "his")."""
    m = _SLOT.fullmatch(token)
    return m[1] if m else None


def _referring(p: list[str], q: list[str]) -> Iterator[str]:
    """Words of ``p`` said where ``q`` has a slot ``p`` has elsewhere, between words both say."""
    for slot in sorted({s for s in map(_slot, p) if s} & {s for s in map(_slot, q) if s}):
        # p's own place of the slot (the carried value, the sentence before) is not where q says it
        low_p = ["\0" if _slot(t) == slot else t.lower() for t in p]
        low_q = [t.lower() for t in q]
        ops = difflib.SequenceMatcher(None, low_p, low_q, autojunk=False).get_opcodes()
        for k, (tag, i1, i2, j1, j2) in enumerate(ops):
            if tag != "replace" or i2 - i1 != 1 or j2 - j1 != 1 or _slot(q[j1]) != slot:
                continue
            word = low_p[i1]
            if not _WORD.fullmatch(word) or NEGATION.search(word):
                continue
            if _said(ops, k - 1, low_p) and (i2 == len(p) or _said(ops, k + 1, low_p)):
                yield word


def _said(ops: list[tuple[str, int, int, int, int]], k: int, tokens: list[str]) -> bool:
    """Whether op ``k`` is text both sides say, with a word in it."""
    return 0 <= k < len(ops) and ops[k][0] == "equal" and any(_WORD.fullmatch(t) for t in tokens[ops[k][1]:ops[k][2]])


def referring_words(templates: Sequence[str]) -> frozenset[str]:
    """The referring words the phrasings (template texts) of one skill show, lowercased."""
    tokens = [_TOKEN.findall(t) for t in templates]
    found: set[str] = set()
    for a, b in ((a, b) for a in range(len(tokens)) for b in range(len(tokens)) if a != b):
        found.update(_referring(tokens[a], tokens[b]))
    return frozenset(found)


def variants(task: str, words: Iterable[str]) -> list[str]:
    """``task`` with one of its referring words (of ``words``) said as another, in a fixed order, at most
    ``MAX_VARIANTS``; the word keeps its capital."""
    known = sorted(set(words))
    out: list[str] = []
    for m in _IN_TASK.finditer(task):
        said = m.group().lower()
        if said not in known:
            continue
        for other in known:
            if other == said:
                continue
            word = other.capitalize() if m.group()[0].isupper() else other
            out.append(task[: m.start()] + word + task[m.end():])
            if len(out) >= MAX_VARIANTS:
                return out
    return out
