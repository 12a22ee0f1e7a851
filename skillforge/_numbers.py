"""Numbers an answer says as its own text, learned as text from the evidence of several runs. Pure.

One run cannot tell a number the agent always says ("refunded within 5-7 business days",
"in 24 hours", "up to 3 tries") from one it computed (a sum, a count, days left) when nothing
the task says or a tool returned explains it: lifting rejects such a run (``Rejected.numbers``
says where it stands), since another world might need another number. Runs of other worlds
settle it: the number is learned as literal text of the answer when at least ``NUMBER_RUNS``
runs of one skill say it in the same place (the same literal text of the answer around it), and
each two of them differ in a value the answer quotes from a tool result: the worlds differed
where the answer reads them, and the number did not.

- Runs whose quoted values are all equal are no evidence: a number computed from the same
  world, or from worlds alike where the answer looks, would coincide.
- A number that differs between runs, or that one run says and another does not, is in another
  literal text of the answer: another place, with evidence of its own (and runs whose answers
  differ so are one skill only as branches told apart by a fact, as any two answers are).
- ``NUMBER_RUNS`` is 3, like ``CONTEXT_RUNS``: a number learned as text is a claim about every
  world, as dropping a fact is; two worlds in which a small computed number (a count of the
  items that pass a filter) coincides are common, three much less.

How an answer writes a number (``$99.99`` or ``$1,042.50``) is ``_formats``'s.
"""

from __future__ import annotations

from collections.abc import Callable

from ._lifting import Rejected
from ._records import folded_as
from ._runchecks import unexplained_numbers
from ._spec import Fmt, Join, Len, Param, SkillSpec
from ._trajectory import Trajectory, canonical_json
from ._values import evaluate, refs_in, walk_exprs

__all__ = ["NUMBER_RUNS", "Places", "lift_said", "number_evidence"]

NUMBER_RUNS = 3  # runs of other worlds that say a number in one place before it is learned as text

Places = frozenset[tuple[str, str]]  # (the answer's literal text a number stands in, the number)


def lift_said(
    runs: list[Trajectory], lift_one: Callable[[Trajectory, Places], SkillSpec | Rejected]
) -> tuple[list[SkillSpec], Places] | Rejected:
    """Each run lifted (``lift_one(run, places)``), and the places of numbers some were lifted with as
    text: where runs were rejected only for numbers their answers say, they are lifted again with all
    those numbers as text. Whether the runs show enough to learn them so is ``number_evidence``'s say."""
    first = [lift_one(run, frozenset()) for run in runs]
    places: Places = frozenset(p for one in first if isinstance(one, Rejected) for p in one.numbers)
    out: list[SkillSpec] = []
    for run, one in zip(runs, first, strict=True):
        if isinstance(one, Rejected):
            if not one.numbers:
                return one
            one = lift_one(run, places)
            if isinstance(one, Rejected):
                return one
        out.append(one)
    return out, places


def number_evidence(specs: list[SkillSpec], runs: list[Trajectory], places: Places) -> str | None:
    """Why the numbers at ``places`` are not learned as text from these runs (``specs[i]`` lifted from
    ``runs[i]`` with them as text, the runs of one skill), or None where each place shows enough
    evidence: ``NUMBER_RUNS`` runs that say the number there, each two of which differ in what the
    answer quotes from tool results."""
    for place in sorted(places):
        seen: list[str] = []  # what the answers quote from results, one entry per world unlike the others
        for spec, run in zip(specs, runs, strict=True):
            if place in unexplained_numbers(spec.output, run.task):
                quoted = _quoted(spec, run)
                if quoted is not None and quoted not in seen:
                    seen.append(quoted)
        if len(seen) < NUMBER_RUNS:
            return (
                f"the answer says {place[1]!r} as its text in {len(seen)} run(s) whose answers quote other tool results "
                f"than each other; {NUMBER_RUNS} are needed before it is learned as text (a computed value could coincide)"
            )
    return None


def _quoted(spec: SkillSpec, run: Trajectory) -> str | None:
    """The values ``spec``'s answer quotes from tool results in ``run``, as one text (None if it quotes none)."""
    run = folded_as(run, [st.each for st in spec.steps], spec.examples)
    results = [c.result for c in run.calls]
    holes = [p[0] for e in walk_exprs(spec.output) if isinstance(e, Fmt) for p in e.parts if not isinstance(p, str)]
    values = []
    for hole in holes or [spec.output]:
        if isinstance(hole, Param) or not any(True for _ in refs_in(hole)):
            continue  # the task's words, or text: no reading of the world
        if isinstance(hole, (Join, Len)):
            hole = hole.seq  # the list it lists or counts
        try:
            values.append(evaluate(hole, results, spec.examples))
        except (KeyError, ValueError, IndexError, TypeError):
            values.append([canonical_json(results[r.call]) for r in refs_in(hole)])  # what it reads, whole
    return canonical_json(values) if values else None
