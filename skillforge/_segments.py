"""Cutting a message into clauses that skills take, to serve it by composing them. Pure.

The serving half of several requests in one message (``_requests`` learns them): a message no
skill takes whole is cut into a prelude, two or more clauses and a closing such that each clause,
with the prelude and the closing, binds a skill (or binds one with a value of the clause before
carried over), sentences first, then cuts inside sentences.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

from ._spans import pieces

__all__ = ["colon_aligned", "colon_binds", "segment", "segment_at_colon"]

_MAX_LOOKUPS = 4096  # texts a message's cutting may look up a skill for


def segment(task: str, binds: Callable[[str], bool], carries: Callable[[str, str, str, str], bool] | None = None,
            ) -> tuple[str, list[str], str] | None:
    """The prelude, two or more clauses and the closing of ``task`` such that prelude + each clause +
    closing ``binds`` (a skill takes it): sentences first, then cuts inside sentences (``pieces(fine=True)``);
    the shortest prelude that works, then no closing or the shortest, then the fewest clauses (the
    earliest cuts first). The prelude and the closing are whole sentences. None when no such cutting
    exists.

    Never a prelude that ends at a colon inside a sentence (as ``split_run`` may cut "Ana Li, zip
    10001: what's ..." where the values before the colon are who asks): the text alone does not
    tell who asks from a request whose free text follows its colon ("Close INC-1 with note: ...",
    whose note would swallow the next clause). ``segment_at_colon`` cuts there where the skills tell.

    ``carries(before, prelude, clause, closing)``: whether the clause binds a skill with a value carried
    over from ``before`` (prelude + the clause before + closing), for a clause that names what it acts
    on only by a pronoun.

    A clause after the first that binds nothing as said may bind without the connective words it opens
    with ("Also please enable MFA for ana.li." as "please enable MFA for ana.li."), and is returned so."""
    return _cut(task, _looked_up(binds), carries)


def segment_at_colon(task: str, after_colon: Callable[[str, str], bool]) -> tuple[str, list[str], str] | None:
    """``segment`` with a prelude that ends at the first colon of the first sentence (and whole sentences
    after it), where each clause with it binds a skill ``after_colon(prelude, text)`` finds: one whose
    template says, right after its first colon, the words ``text`` begins with (``colon_aligned``), learned
    with who asks before that colon, never one whose colon a free text follows. None where there is no
    such colon or cutting."""
    sentences = pieces(task)
    m = _COLON.search(task, *sentences[0]) if sentences else None
    if m is None or m.end() >= sentences[0][1]:
        return None
    before, rest = task[: m.end()], task[m.end():]
    cut = _cut(rest, _looked_up(lambda text: after_colon(before, text)), None)
    return None if cut is None else (before + cut[0], cut[1], cut[2])


def _looked_up(binds: Callable[[str], bool]) -> Callable[[str], bool]:
    """``binds`` on stripped text, each text once, within ``_MAX_LOOKUPS`` lookups."""
    memo: dict[str, bool] = {}

    def ok(text: str) -> bool:
        text = text.strip()
        if text not in memo:
            memo[text] = len(memo) < _MAX_LOOKUPS and binds(text)
        return memo[text]

    return ok


def _cut(task: str, ok: Callable[[str], bool], carries: Callable[[str, str, str, str], bool] | None,
         ) -> tuple[str, list[str], str] | None:
    """``segment``'s cutting: by sentences, then by the finer pieces inside them."""
    sentences = pieces(task)
    bounds = {a for a, _b in sentences}
    for parts in (sentences, pieces(task, fine=True)):
        if parts is not sentences and len(parts) == len(sentences):
            continue
        cut = _segment(task, parts, bounds, ok, carries)
        if cut is not None:
            return cut
    return None


_COLON = re.compile(r":[ \t]+")


def colon_aligned(template: str, text: str) -> bool:
    """Whether the words right after ``template``'s first colon (a template's text; a colon outside its slots)
    are literal and ``text`` says them right after its own first colon.

    "{email}: And cancel order {order_id} ..." is aligned with "ana@example.com: And cancel order #W11 ...":
    what the template binds before its colon is what the text says before it. "Close INC-{n} with note: {note}"
    is aligned with nothing: a free text follows its colon, and would take the clause after it too."""
    t = next((m for m in _COLON.finditer(template) if template.count("{", 0, m.start()) == template.count("}", 0, m.start())), None)
    c = _COLON.search(text)
    if t is None or c is None:
        return False
    words = re.match(r"[^{}]*", template[t.end():])
    said = words[0].rstrip() if words is not None else ""
    return bool(said) and text[c.end():].startswith(said)


def _segment(task: str, parts: list[tuple[int, int]], bounds: set[int], ok: Callable[[str], bool],
             carries: Callable[[str, str, str, str], bool] | None) -> tuple[str, list[str], str] | None:
    n = len(parts)
    if n < 2:
        return None
    for p in range(n - 1):
        if parts[p][0] not in bounds:
            continue
        prelude = task[: parts[p][0]] if p else ""
        for c in range(n, p + 1, -1):
            if c < n and parts[c][0] not in bounds:
                continue
            closing = task[parts[c][0] :] if c < n else ""
            best: dict[int, list[int]] = {p: []}  # piece index → the fewest cuts that reach it
            bare: dict[tuple[int, int], str] = {}  # clauses bound without the connective word they open with
            for a in range(p, c):
                if a not in best:
                    continue
                for b in range(a + 1, c + 1):
                    if b in best and len(best[b]) <= len(best[a]) + 1 or (a, b) == (p, c):
                        continue  # the whole text as one clause is no composition
                    end = parts[b][0] if b < n else len(task)
                    clause = task[parts[a][0] : end]
                    if ok(prelude + clause + closing) or carries is not None and best[a] and carries(
                        prelude + task[parts[([p, *best[a]])[-2]][0] : parts[a][0]] + closing, prelude, clause, closing,
                    ):
                        best[b] = [*best[a], b]
                    elif a > p and (rest := _bare(clause)) != clause and ok(prelude + rest + closing):
                        best[b] = [*best[a], b]  # "Also please enable MFA for ..." as "please enable MFA for ..."
                        bare[(a, b)] = rest
            cuts = best.get(c)
            if cuts is not None and len(cuts) >= 2:
                edges = [p, *cuts]
                return prelude, [bare.get((a, b)) or task[parts[a][0] : (parts[b][0] if b < n else len(task))]
                                 for a, b in itertools.pairwise(edges)], closing
    return None


_OPENING = re.compile(r"(?:(?:and|also|then|plus)\b[\s,]*)+(?=\S)", re.IGNORECASE)


def _bare(clause: str) -> str:
    """``clause`` without the connective word it opens with ("Also please unlock ana.li." → "please unlock
    ana.li."): a connective is where a request may end and the next begin, never what a request is."""
    lead = len(clause) - len(clause.lstrip())
    m = _OPENING.match(clause, lead)
    return clause[:lead] + clause[m.end():] if m else clause


def colon_binds(lookup: Callable[[str], list[Any]]) -> Callable[[str, str], bool]:
    """``segment_at_colon``'s ``after_colon`` for skills found by ``lookup`` (text → ``Match`` es)."""
    def after_colon(prelude: str, text: str) -> bool:
        said = (prelude + text).strip()
        return any(m.template is not None and colon_aligned(m.template.text, said) for m in lookup(said))
    return after_colon

