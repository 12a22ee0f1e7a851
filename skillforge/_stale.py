"""What a request of a message acted on when another request of it wrote first. Pure.

A request that read a record before an earlier request of the same message wrote to it, and acted
after that write, acted on the record as the write left it. Its run reads that record as the write
returned it (the record itself, or the fields it changed: ``_as_returned``), or as the read made again
right after the write returned it (``Call.after``: ``_read_after``), where its run lifts the same
either way (``_acts_alike``); else it is not learned from. The prelude's reads, made again by each
skill of a composed message, are kept once per request (``_superseded``, ``_made_again``,
``_returned_record``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ._lifting import Rejected, lift
from ._spec import Guard, Step
from ._trajectory import Trajectory, canonical_json
from ._values import scalars as _scalars

__all__: list[str] = []


def _at(value: Any, path: Sequence[str | int]) -> Any:
    """``value`` at ``path``, or None where the path does not lead."""
    for key in path:
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return None
    return value


_UNREAD = object()  # no read made again after a write


def _read_after(calls: Sequence[Any], c: int, w: int) -> Any:
    """What read ``c`` (its tool and arguments) returned when made again right after write ``w``
    (``Call.after``, recorded in agent runs); ``_UNREAD`` if it was not made again."""
    key = canonical_json([calls[c].tool, calls[c].args])
    for k, result in calls[w].after or ():
        if 0 <= k < len(calls) and canonical_json([calls[k].tool, calls[k].args]) == key:
            return result
    return _UNREAD


def _acts_alike(before: Trajectory, after: Trajectory, written: frozenset[str] = frozenset()) -> bool:
    """Whether a request's run lifts to the same program, guards and answer with its reads as they
    were before another request's write and as they were right after it: then what the agent knew of
    that write (did it infer the new record, or act on the one it read?) cannot have mattered to any
    fact the run shows, and the run is learned as the world was after the write, as its skill reads
    it when composed. Else the run is not learned from.

    ``written``: the values the other requests' writes were given (canonical JSON). A code such a write
    put in a list (the group an account was added to) is one the agent knew either way: the codes a
    list holds (``codes``) are compared without it."""
    a, b = lift(before), lift(after)  # the same way both: only whether they agree matters
    if isinstance(a, Rejected) or isinstance(b, Rejected):
        return False
    return (a.template, _known(a.steps, written), a.output, a.early) == (b.template, _known(b.steps, written), b.output, b.early)


def _known(steps: tuple[Step, ...], written: frozenset[str]) -> tuple[Step, ...]:
    """``steps`` with the codes ``written`` taken out of each ``codes`` fact."""
    return tuple(replace(st, guards=tuple(
        Guard(g.kind, g.path, tuple(c for c in g.value if json.dumps(c) not in written)) if g.kind == "codes" else g
        for g in st.guards)) for st in steps)


def _as_returned(read: Any, write: Any) -> Any:
    """What a read would return after ``write`` changed what it read, where the write returned the
    record itself, or the fields of it that it changed: a dict of the read's own fields (all of them,
    or some: ``{"username": "ana.li", "locked": False}`` for an account read whole) that agrees with
    the read on a value the write was given (the record's id); the read's record with those fields as
    the write returned them. Else None: what the request acted on is not known."""
    written = write.result
    if type(read) is not dict or type(written) is not dict or not written.keys() <= read.keys():
        return None
    given = _scalars(write.args)
    if not any(type(v) in (str, int, float) and v == written[k] and json.dumps(v) in given for k, v in read.items() if k in written):
        return None
    return {k: written.get(k, v) for k, v in read.items()}


def _superseded(mine: list[int], calls: Sequence[Any], writes: list[int], request_of: dict[int, int], q: int) -> list[int]:
    """``mine`` with one of each read made several times (the prelude's reads, made again by each
    request's skill when a message was composed): the last one before the request's first write,
    which shows the world it acted on, or else the first."""
    first = min((w for w in writes if request_of[w] == q), default=len(calls))
    groups: dict[str, list[int]] = {}
    for c in mine:
        if c not in request_of:
            groups.setdefault(canonical_json([calls[c].tool, calls[c].args]), []).append(c)
    keep = {max(before) if (before := [c for c in group if c < first]) else group[0] for group in groups.values()}
    return [c for c in mine if c in request_of or c in keep]


def _made_again(j: int, path: Sequence[Any], c: int, mine: list[int], calls: Sequence[Any]) -> bool:
    """Whether ``mine`` has, before call ``c``, a read made again of call ``j`` (tool and arguments) whose
    result holds at ``path`` what ``j``'s did: the reads each skill of a composed message makes again,
    one kept per request."""
    same = canonical_json([calls[j].tool, calls[j].args, _at(calls[j].result, path)])
    return any(k < c and canonical_json([calls[k].tool, calls[k].args, _at(calls[k].result, path)]) == same for k in mine)


def _returned_record(j: int, path: Sequence[Any], c: int, mine: list[int], calls: Sequence[Any], is_read: Sequence[bool]) -> bool:
    """Whether call ``j`` is another request's write that returned the record a read of ``mine`` made
    before it (``_as_returned``), the last such write before call ``c``, holding at ``path`` a value:
    the request's run reads that record as the write returned it, so it has the value itself."""
    if is_read[j] or _at(calls[j].result, path) is None:
        return False
    for k in mine:
        if k < j and is_read[k] and _as_returned(calls[k].result, calls[j]) is not None:
            later = [w for w in range(j + 1, c) if not is_read[w] and w not in mine and _as_returned(calls[k].result, calls[w]) is not None]
            return not later
    return False


