"""What the library's runs show of the world: how many values each text field of a read took. Pure.

A skill's runs are few; the library's are many. A field of a read's result that took many
values across every run the library holds (a customer's first name, city or state, read by
``get_user_details`` in runs of any skill) names a thing. Where a skill's runs that acted alike
showed such a field with two values or more, and the field is context to the skill (``_relevance``:
what it does not act on), the field is not guarded (``_merging``): the runs acted alike whatever it
said, and the library shows it is an attribute, not a switch. The skill file says so, with the
numbers (its ``SKILL['world']``), so it re-renders from its runs alone.

A census counts only text values as results hold them: dict fields (``_guards._fields``), never list
elements by position nor the records of an id-keyed dict (each customer's own keys), nor code words (``pending``, ``IN_TRANSIT``: a program's vocabulary, however many there are).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._guards import _fields
from ._trajectory import Trajectory
from ._values import enum_like

__all__ = ["WORLD_VALUES", "Census", "World", "census", "world_from_meta"]

WORLD_VALUES = 10  # values a field took in the library's runs before it names a thing
_KEEP = 4 * WORLD_VALUES  # values kept per field: more say nothing more

World = Mapping[tuple[str, tuple[str, ...]], tuple[int, int]]  # (tool, path) → (distinct values, reads)


@dataclass
class Census:
    """Counts, per read tool and field path, of the text values runs' results held there."""

    values: dict[tuple[str, tuple[str, ...]], set[str]] = field(default_factory=dict)
    reads: dict[tuple[str, tuple[str, ...]], int] = field(default_factory=dict)
    codes: set[tuple[str, tuple[str, ...]]] = field(default_factory=set)  # fields some value of which is a code word
    counted: set[str] = field(default_factory=set)  # the hashes of the runs counted

    def add(self, run: Trajectory) -> None:
        """Count ``run``'s reads (once per run, however often it is added)."""
        if run.hash in self.counted:
            return
        self.counted.add(run.hash)
        for call in run.calls:
            ref = run.tools.get(call.tool)
            if ref is None or not ref.read or call.error is not None or type(call.result) is not dict:
                continue
            for path, value in _fields(call.result, lambda v: v if type(v) is str else None):
                key = (call.tool, path)
                self.reads[key] = self.reads.get(key, 0) + 1
                if enum_like(value):
                    self.codes.add(key)
                seen = self.values.setdefault(key, set())
                if len(seen) < _KEEP:
                    seen.add(value)

    def world(self, also: Iterable[Trajectory] = ()) -> dict[tuple[str, tuple[str, ...]], tuple[int, int]]:
        """The fields that name things, in the runs counted and ``also`` (runs not kept counted): at least
        ``WORLD_VALUES`` values, no code word among them, and more of them the more reads there are (as
        ``_merging`` asks of a skill's own runs)."""
        extra = census(run for run in also if run.hash not in self.counted)
        out, codes = {}, self.codes | extra.codes
        for key in sorted(set(self.values) | set(extra.values)):
            seen = self.values[key] | extra.values[key] if key in self.values and key in extra.values else (
                self.values.get(key) or extra.values[key])
            distinct, reads = min(len(seen), _KEEP), self.reads.get(key, 0) + extra.reads.get(key, 0)
            if distinct >= WORLD_VALUES and key not in codes and (distinct >= _KEEP or distinct * distinct >= reads):
                out[key] = (distinct, reads)
        return out


def census(runs: Iterable[Trajectory]) -> Census:
    """A census of ``runs``."""
    c = Census()
    for run in runs:
        c.add(run)
    return c


def world_from_meta(entries: Any) -> dict[tuple[str, tuple[str, ...]], tuple[int, int]]:
    """``SKILL['world']`` (checked by ``_skillmeta``) as a ``World``."""
    return {(tool, tuple(path)): (distinct, reads) for tool, path, distinct, reads in entries or ()}
