"""The answer of a message of several requests, cut into one answer per request, and joined again. Pure.

The agent answers a message of several requests in one text ("I cancelled order #W1; I requested
an exchange for order #W2."). Each part names the values of its own request and no other's; the
separator and the final mark found between them (``"; "`` and ``"."``) are how the agent joins
answers (a ``Joiner``), which composition uses to answer a message its skills served.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Joiner"]

_MAX_PARTINGS = 256  # ways of giving each naming in an answer to a request considered


@dataclass(frozen=True, slots=True)
class Joiner:
    """How the agent joins the answers of several requests: each answer without the final mark
    ``end``, separated by ``sep``, then ``end`` once (``"I cancelled #W1; I returned #W2."``).
    ``sep`` None: the agent answered nothing (None) for such messages."""

    sep: str | None
    end: str = ""

    def join(self, outputs: Sequence[Any]) -> tuple[bool, Any]:
        """``(True, the joined answer)``, or ``(False, None)`` when these answers do not join this way."""
        if self.sep is None:
            return (True, None) if all(o is None for o in outputs) else (False, None)
        if not all(isinstance(o, str) and o.endswith(self.end) for o in outputs):
            return False, None
        cut = len(self.end)
        return True, self.sep.join(o[: len(o) - cut] if cut else o for o in outputs) + self.end

    def to_json(self) -> dict[str, Any]:
        return {"sep": self.sep, "end": self.end}

    @classmethod
    def from_json(cls, data: Any) -> Joiner:
        if not isinstance(data, dict) or not isinstance(data.get("end", ""), str):
            raise ValueError(f"not a joiner: {data!r}")
        sep = data.get("sep")
        if sep is not None and not isinstance(sep, str):
            raise ValueError(f"not a joiner: {data!r}")
        return cls(sep, data.get("end", ""))


def _split_answer(output: Any, own: list[set[str]], known_joiners: Sequence[Joiner] = ()) -> tuple[Joiner, list[Any]] | str:
    """How ``output`` is the requests' answers joined: the joiner and each request's answer.

    Each part names a value its request used (``own``: the values of each request's calls, the
    prelude's aside) and no value only other requests used; the cut between two parts is the one
    separator between them. Several ways to cut: no split, unless one is how the agent is known
    to join answers (``known_joiners``)."""
    k = len(own)
    if output is None:
        return Joiner(None), [None] * k
    if not isinstance(output, str):
        return "the answer is not text"
    ends = [output[-1], ""] if output and output[-1] in ".!?" else [""]
    values = sorted({v for vs in own for v in vs})
    for end in ends:
        core = output[: len(output) - len(end)]
        marks = sorted(  # (start, end, the requests whose value it names), each naming of a value
            (m.start(), m.end(), frozenset(q for q in range(k) if v in own[q]))
            for v in values for m in re.finditer(rf"(?<!\w){re.escape(v)}(?!\w)", core)
        )
        seps = sorted({m.group() for m in re.finditer(r"[,;:.!?]?\s+", core)})
        ways: dict[Joiner, list[Any]] = {}
        sentences: dict[Joiner, list[Any]] = {}
        for sep in seps:
            found = {tuple(cuts) for owners in _readings(marks, k) if (cuts := _cuts(core, sep, marks, owners, k))}
            if len(found) == 1:
                cuts = list(found.pop())
                starts = [0, *(c + len(sep) for c in cuts)]
                ways[Joiner(sep, end)] = [core[a:b] + end for a, b in zip(starts, [*cuts, len(core)], strict=True)]
        if end:  # cut between sentences: at the last sentence end before a request's first naming
            for sep in seps:
                if sep.startswith(end) and Joiner(sep, end) not in ways:
                    found = {tuple(cuts) for owners in _readings(marks, k) if (cuts := _cuts(core, sep, marks, owners, k, last=True))}
                    if len(found) == 1:
                        cuts = list(found.pop())
                        starts = [0, *(c + len(sep) for c in cuts)]
                        sentences[Joiner(sep, end)] = [core[a:b] + end for a, b in zip(starts, [*cuts, len(core)], strict=True)]
        known = [j for j in known_joiners if j in ways or j in sentences]
        if len(known) == 1:
            return known[0], ways.get(known[0]) or sentences[known[0]]
        between = {j: parts for j, parts in (sentences | ways).items() if end and j.sep and j.sep.startswith(end)}
        if not known and len(between) == 1:  # the agent's answers are sentences: it joins them between sentences
            return next(iter(between.items()))
        if not known and len(ways) == 1:
            return next(iter(ways.items()))
        if ways:
            return f"the answer falls into one part per request in {len(ways)} ways"
    return "the answer does not fall into one part per request"


def _readings(marks: list[tuple[int, int, frozenset[int]]], k: int) -> list[list[int]]:
    """Ways to give each mark one of its requests such that the requests run 0, 1, ... k-1 in order,
    each named at least once (at most a few hundred)."""
    out: list[list[int]] = []

    def go(i: int, at: int, acc: list[int]) -> None:
        if len(out) >= _MAX_PARTINGS:
            return
        if i == len(marks):
            if at == k - 1 and len(set(acc)) == k:
                out.append(list(acc))
            return
        for q in (at, at + 1):
            if q < k and q in marks[i][2] and (acc or q == 0):
                go(i + 1, q, [*acc, q])

    if marks:
        go(0, 0, [])
    return out


def _cuts(core: str, sep: str, marks: list[tuple[int, int, frozenset[int]]], owners: list[int], k: int,
          *, last: bool = False) -> list[int] | None:
    """Where ``core`` is cut between requests (one ``sep`` between two requests' namings), or None.
    ``last``: the last ``sep`` between them, however many there are (the text between stays with the earlier)."""
    cuts = []
    for q in range(k - 1):
        end = max(e for (_s, e, _o), r in zip(marks, owners, strict=True) if r == q)
        first = min(s for (s, _e, _o), r in zip(marks, owners, strict=True) if r == q + 1)
        at = [m.start() for m in re.finditer(re.escape(sep), core[end:first])]
        if not at or len(at) > 1 and not last:
            return None
        cuts.append(end + at[-1])
    return cuts
