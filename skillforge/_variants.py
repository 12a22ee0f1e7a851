"""Phrasings that take more parameters: the same request said with more in it. Pure.

"Please add ana.li to payroll-admins." and "Hi, this is bo.ng. Please add ana.li to payroll-admins,
thanks!" ask for the same thing; the second also says who asks, and where that matters (a restricted
group) the agent reads the requester's account and decides on it. The two cannot be one program
(the second takes a parameter the first never has, and makes a read the first never makes), nor
should they be two files of one intent. A skill's phrasings may therefore take *more* parameters
than its template: those with the same extra parameters are a *variant*, a program of its own
learned from its own runs only (so its guards are exactly what those runs showed), rendered in the
same file as a second function that the skill's function calls when the task gave those parameters.

This module is the policy of which phrasings make a variant and what each is called; learning each
variant is ``_learning.spec_from_runs`` again, on its runs alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ._spec import Param, Ref, SkillSpec
from ._template import Slot, TaskTemplate
from ._values import walk_exprs

__all__ = ["extra_params", "file_phrasings", "file_runs", "grouped", "reads_more", "same_request", "variant_name"]


def _takes(t: TaskTemplate) -> dict[str, str]:
    return {s.name: s.type for s in t.params}


def extra_params(template: TaskTemplate, other: TaskTemplate) -> tuple[str, ...] | None:
    """The parameters ``other`` takes beyond ``template``'s, sorted (``()``: the same ones); None where
    it lacks one of them or takes one of them as another type (then it is not the same request)."""
    mine, theirs = _takes(template), _takes(other)
    if any(theirs.get(n) != t for n, t in mine.items()):
        return None
    return tuple(sorted(n for n in theirs if n not in mine))


def grouped(template: TaskTemplate, phrasings: Sequence[TaskTemplate]) -> list[tuple[tuple[str, ...], list[TaskTemplate]]] | str:
    """``template`` and ``phrasings`` grouped by the parameters they take beyond the template's:
    ``()`` (the template's own group) first, then each group in the order its first phrasing comes.
    A reason (text) where a phrasing takes fewer parameters than the template or other types."""
    groups: dict[tuple[str, ...], list[TaskTemplate]] = {(): [template]}
    for t in phrasings:
        extra = extra_params(template, t)
        if extra is None:
            return f"the phrasing {t.text!r} takes other parameters than the template: not one skill"
        groups.setdefault(extra, []).append(t)
    return list(groups.items())


def variant_name(name: str, extra: Sequence[str]) -> str:
    """The function of skill ``name`` that serves tasks said with ``extra`` too: ``add_given_requester``."""
    return f"{name}_given_{'_'.join(extra)}"


def file_phrasings(spec: SkillSpec) -> list[tuple[str, tuple[Slot, ...]]]:
    """Every template a skill's file takes tasks by after its first: its own phrasings, then each
    variant's template and phrasings (the order a task's ``phrasing`` number counts in)."""
    return [*spec.phrasings, *((t, sl) for v in spec.variants for t, sl in ((v.template, v.slots), *v.phrasings))]


def file_runs(spec: SkillSpec) -> list[str]:
    """The runs of a skill and of its variants, each once."""
    return list(dict.fromkeys([*spec.runs, *(h for v in spec.variants for h in v.runs)]))


def same_request(skill: SkillSpec, variant: SkillSpec, tools: Iterable[str] | None = None) -> bool:
    """Whether ``variant`` (learned from the runs said with more parameters) asks what ``skill`` asks:
    it wrote (what it asked is then plain), it first made the call the skill first makes, from the same
    sources (the same identification route), the skill has every tool it wrote with, and what it takes
    beyond the skill's parameters (and what it read with them) only decides: it feeds no write and no
    part of the answer but its own text (who asks may be named). More to do or to tell is another
    request: a second order to cancel, an address to ship to, a date the membership ends, the status of
    another order. Each value only it takes is looked up by a read (who asks is read).

    ``tools``: the skill's tools where ``skill`` is one of its runs only (a first test before the runs
    of both are learned together, which is costly)."""
    if not skill.steps or not variant.steps:
        return False
    if (skill.steps[0].tool, skill.steps[0].args) != (variant.steps[0].tool, variant.steps[0].args):
        return False
    extra = {sl.name for sl in variant.slots} - {sl.name for sl in skill.slots}
    paths = [(list(variant.steps), variant.output),
             *(([*variant.steps[: e.after + 1], *e.steps], e.output) for e in variant.early)]
    wrote = False
    for steps, output in paths:
        tainted: set[int] = set()  # calls made with what only the variant takes, or with what they returned
        for i, st in enumerate(steps):
            used = [e for _k, arg in st.args for e in walk_exprs(arg)]
            if any(isinstance(e, Param) and e.name in extra or isinstance(e, Ref) and e.call in tainted for e in used):
                if not variant.tools[st.tool].read:
                    return False
                tainted.add(i)
            elif not variant.tools[st.tool].read:
                if st.tool not in (skill.tools if tools is None else set(tools)):
                    return False
                wrote = True
        if any(isinstance(e, Ref) and e.call in tainted for e in walk_exprs(output)):
            return False
    # and each of them is looked up (who asks is read): a value said only to be checked against what the
    # skill reads anyway (a customer's name beside their email) is the skill's text, not a variant
    looked = {e.name for st in variant.steps if variant.tools[st.tool].read for _k, arg in st.args
              for e in walk_exprs(arg) if isinstance(e, Param)}
    return wrote and extra <= looked


def reads_more(spec: SkillSpec, extra: Iterable[str]) -> bool:
    """Whether some read of ``spec`` (its first way) takes one of ``extra``: a cheap first test of a
    variant, before its runs are learned with the skill's (see ``same_request``)."""
    names = set(extra)
    return any(isinstance(e, Param) and e.name in names for st in spec.steps if spec.tools[st.tool].read
               for _k, arg in st.args for e in walk_exprs(arg))
