"""Lists of records: items the task writes as a group of values each, and calls made once per item.

"For #W1, exchange Dumbbell Set {...} to {...}; Bicycle {...} to {...}; via paypal_1." names two
items, each a name, its options and the change asked for. Discovery gives one slot per value
(``{item_name} {item_options} to {changes}; {item_name_2} {item_options_2} to {changes_2}``);
``record_template`` turns groups of slots that repeat side by side, separated as a list is,
into one slot of kind ``list`` whose item is a template of its own
(``{items}`` with the item ``{item_name} {item_options} to {changes}``). An item binds as a tuple
of its parts' values.

A run of such a task reads something for each item (the product of each item to exchange):
consecutive calls of one read tool, one per distinct argument the items ask for (two items of one
product: one read), are a *map step* (``fold``), lifted as one step that calls the tool once for
each distinct argument (``[get_product(product_id=product_id) for product_id in distinct([...
for ... in items])]``) and whose result is the list of what each call returned.

Pure: no I/O.
"""

from __future__ import annotations

import re
import string
from dataclasses import replace
from typing import Any

from ._antiunify import wider_slot
from ._lists import SEPARATOR, item_name
from ._template import LIST, UNUSED, Slot, TaskTemplate, kind_union, union_shape
from ._trajectory import Call, Trajectory

__all__ = ["fold", "folded_as", "map_blocks", "optional_widened", "record_template", "records_widened"]

_NUMBERED = re.compile(r"_\d+(?=_|$)")


def map_blocks(traj: Trajectory, n: int) -> list[tuple[int, int]]:
    """Where a run may call one read tool once per distinct argument of the items of a list of
    ``n`` items: the first call and the length of each longest stretch of one to ``n`` consecutive
    calls of one read tool with the same arguments' names, none of which failed or carries a
    tool's own check (two items of one product: one read of it)."""
    out: list[tuple[int, int]] = []
    i = 0
    calls = traj.calls
    while i < len(calls):
        j = _stretch(calls, i)
        ref = traj.tools.get(calls[i].tool)
        if j - i <= n and ref is not None and ref.read and not ref.check and not ref.post_check:
            if all(c.error is None for c in calls[i:j]):
                out.append((i, j - i))
        i = j
    return out


def _stretch(calls: list[Call], i: int) -> int:
    """The end of the longest stretch of calls like ``calls[i]`` from ``i`` on."""
    j = i + 1
    while j < len(calls) and _alike(calls[i], calls[j]):
        j += 1
    return j


def _alike(a: Call, b: Call) -> bool:
    return a.tool == b.tool and sorted(a.args) == sorted(b.args)


def fold(traj: Trajectory, blocks: list[tuple[int, int]]) -> Trajectory:
    """``traj`` with each block of ``n`` calls starting at ``start`` made one call: its arguments
    the list of each call's, its result the list of each call's result (so that step ``k`` of a
    skill is call ``k`` of the folded run)."""
    if not blocks:
        return traj
    starts = dict(blocks)
    calls: list[Call] = []
    i = 0
    while i < len(traj.calls):
        n = starts.get(i)
        if n is None:
            calls.append(traj.calls[i])
            i += 1
            continue
        group = traj.calls[i : i + n]
        calls.append(Call(
            tool=group[0].tool,
            args={k: [c.args[k] for c in group] for k in group[0].args},
            result=[c.result for c in group],
        ))
        i += n
    return Trajectory(task=traj.task, calls=calls, outcome=traj.outcome, tools=traj.tools)


def folded_as(traj: Trajectory, each: list[tuple[str, Any] | None], examples: dict[str, Any]) -> Trajectory:
    """``traj`` folded as a skill lifted from it has its steps (``each``: per step, the list a map
    step goes over, or None), so that step ``k`` of the skill is call ``k`` of the run: a map step
    is the stretch of like calls where it starts, one to as many as the list's items."""
    blocks: list[tuple[int, int]] = []
    i = 0
    for e in each:
        if e is None:
            i += 1
            continue
        if i >= len(traj.calls):
            return traj
        m = _stretch(traj.calls, i) - i
        if m > len(examples.get(e[0]) or ()):
            return traj
        blocks.append((i, m))
        i += m
    return fold(traj, blocks) if blocks and i == len(traj.calls) else traj


def record_template(template: TaskTemplate) -> TaskTemplate | None:
    """``template`` with the longest stretch of slot groups that repeat side by side as one list of
    records, or None where there is none.

    A group is two or more slots with the same text between them in every group; groups are
    separated as a list is (``;``, ``,``, ``and``), the same way but for ``and`` before the last;
    the slots at one place in each group are of one kind, type and normalisation. The parts are
    named after the first group's slots (without the numbers that told the groups apart).
    """
    pieces = [(lit, name) for lit, name, _s, _c in string.Formatter().parse(template.text)]
    lits = [lit for lit, _n in pieces]  # the text before each slot, then the text after the last
    names = [n for _l, n in pieces if n is not None]
    if len(lits) == len(names):
        lits.append("")
    by_name = {s.name: s for s in template.slots}
    best: tuple[int, int, int, int] | None = None  # (slots covered, -start, size, count)
    for size in range(2, len(names) // 2 + 1):
        for start in range(len(names) - 2 * size + 1):
            count = _groups(names, lits, by_name, start, size)
            if count >= 2 and (best is None or (count * size, -start) > best[:2]):
                best = (count * size, -start, size, count)
    if best is None:
        return None
    _cover, neg_start, size, count = best
    start = -neg_start
    group = [[by_name[names[start + g * size + j]] for j in range(size)] for g in range(count)]
    inside = {s.name for g in group for s in g}
    part_names = _part_names([s.name for s in group[0]], set(by_name) - inside)
    if part_names is None:
        return None
    parts = tuple(
        Slot(part_names[j], _kinds([g[j].kind for g in group]), group[0][j].type, group[0][j].transform, _union([g[j].shape for g in group]))
        for j in range(size)
    )
    item = "".join(
        ("" if j == 0 else _escape(lits[start + j])) + "{" + part_names[j] + "}" for j in range(size)
    )
    gaps = [lits[start + g * size + size] for g in range(count - 1)]
    separators = "|".join(sorted({" ".join(g.split()) for g in gaps}))
    list_name = _list_name(part_names[0], (set(by_name) - inside) | set(part_names))
    listed = Slot(list_name, LIST, "list", "each:" + separators, None, None, item, parts)
    text = "".join(_escape(lits[k]) + "{" + names[k] + "}" for k in range(start))
    text += _escape(lits[start]) + "{" + list_name + "}"
    text += "".join(_escape(lits[k]) + "{" + names[k] + "}" for k in range(start + count * size, len(names)))
    text += _escape(lits[len(names)])
    slots = [listed if s.name == names[start] else s for s in template.slots if s.name not in inside or s.name == names[start]]
    try:
        return TaskTemplate(text, slots)
    except ValueError:
        return None


def records_widened(records: TaskTemplate, single: TaskTemplate) -> TaskTemplate | None:
    """``records`` (a list of records, ``exchange {items}; via {pm}``, or a plain list) widened to
    take what ``single`` took, where ``single`` is its text with one item in place of the list
    (``exchange {item_name} {item_options} to {changes}; via {pm}``): each part's shape (a plain
    list's item shape) widens with the slot at its place, and every other slot with the slot of
    its name; else None."""
    listed = [s for s in records.slots if s.kind == LIST]
    if len(listed) != 1:
        return None
    lst = listed[0]
    expanded: list[tuple[str, str | None]] = []
    for lit, name, _s, _c in string.Formatter().parse(records.text):
        if name == lst.name:  # a plain list's item is one value: the list's own slot stands for it
            item = [(ilit, iname) for ilit, iname, _s2, _c2 in string.Formatter().parse(lst.item or "{" + lst.name + "}")]
            expanded.append((lit + item[0][0], item[0][1]))
            expanded.extend(item[1:])
        else:
            expanded.append((lit, name))
    theirs = [(lit, name) for lit, name, _s, _c in string.Formatter().parse(single.text)]
    if [lit for lit, _n in _flat(expanded)] != [lit for lit, _n in _flat(theirs)]:
        return None
    mine_names = [n for _l, n in _flat(expanded) if n is not None]
    their_names = [n for _l, n in _flat(theirs) if n is not None]
    if len(mine_names) != len(their_names):
        return None
    parts = {p.name: p for p in lst.parts}
    by_name = {s.name: s for s in records.slots}
    other = {s.name: s for s in single.slots}
    wide_parts = dict(parts)
    wide = dict(by_name)
    for mine, their in zip(mine_names, their_names, strict=True):
        theirs_slot = other.get(their)
        if theirs_slot is None:
            return None
        if mine == lst.name and lst.item is None:  # a plain list: its items' shape takes the one item's
            if kind_union("text", theirs_slot.kind) is None or (theirs_slot.type, theirs_slot.transform) != ("str", None):
                return None
            wide[mine] = replace(lst, shape=union_shape(lst.shape, theirs_slot.shape))
            continue
        if mine in parts:  # a part of an item takes what the slot at its place took
            part = wider_slot(wide_parts[mine], replace(theirs_slot, name=mine))
            if part is None:
                return None
            wide_parts[mine] = part
            continue
        slot = wider_slot(wide[mine], theirs_slot) if mine == their and mine in by_name else None
        if slot is None:
            return None
        wide[mine] = slot
    if lst.item is not None:
        wide[lst.name] = replace(lst, parts=tuple(wide_parts[p.name] for p in lst.parts))
    try:
        return TaskTemplate(records.text, [wide[s.name] for s in records.slots])
    except ValueError:
        return None


def optional_widened(template: TaskTemplate, ours: TaskTemplate, task: str) -> TaskTemplate | None:
    """``template`` widened to bind ``task`` (whose own template is ``ours``), where ``task`` says some
    items of its list with one more value after them than the others (``Return #W1: Backpack
    {'color': 'navy'}; Digital Camera; Backpack {'color': 'black'};`` for a list of names, or a list of
    records ``{item_name} {item_options}`` given a name alone): the list's items become records
    whose last part is optional (an item that leaves it out binds None there). The optional part is
    of the kind ``ours`` gave that value (a mapping); None where no one such widening binds ``task``."""
    listed = [s for s in template.slots if s.kind == LIST]
    if len(listed) != 1 or template.bind(task) is not None:
        return None
    lst = listed[0]
    taken = {s.name for s in template.slots}
    if lst.item is None:  # a list of names: each a name, and the value said after some
        stem = item_name(lst.name)
        said = [s for s in ours.slots if s.name not in taken and s.type == "dict" and s.kind not in UNUSED]
        names = [s for s in ours.slots if _NUMBERED.sub("", s.name) == stem and s.type == "str"]
        if not said:
            return None
        extra = said[0]
        part_name = _NUMBERED.sub("", extra.name) or extra.name
        if part_name in taken or part_name == stem:
            return None
        head = Slot(stem, "text", "str", None, _union([lst.shape, *(n.shape for n in names)]))
        tail = Slot(part_name, extra.kind, extra.type, extra.transform, extra.shape, optional=True)
        wide = replace(lst, item="{" + stem + "} {" + part_name + "}", parts=(head, tail), shape=None)
    else:  # a list of records whose last part some items leave out
        last = lst.parts[-1]
        if last.optional or last.type != "dict" or not (lst.item or "").rstrip().endswith("{" + last.name + "}"):
            return None
        wide = replace(lst, parts=(*lst.parts[:-1], replace(last, optional=True)))
    try:
        out = TaskTemplate(template.text, [wide if s.name == lst.name else s for s in template.slots])
    except ValueError:
        return None
    return out if out.bind(task) is not None else None


def _flat(pieces: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    """Format pieces with adjacent literals joined (a trailing piece with no slot dropped if empty)."""
    out: list[tuple[str, str | None]] = []
    for lit, name in pieces:
        if out and out[-1][1] is None:
            out[-1] = (out[-1][0] + lit, name)
        else:
            out.append((lit, name))
    return [p for p in out if p != ("", None)]


def _groups(names: list[str], lits: list[str], by_name: dict[str, Slot], start: int, size: int) -> int:
    """How many groups of ``size`` slots like the one at ``start`` follow one another as a list."""
    first = [by_name[n] for n in names[start : start + size]]
    if any(s.kind in UNUSED or s.kind == LIST or s.same is not None for s in first):
        return 0
    inner = [lits[start + j] for j in range(1, size)]
    if any(SEPARATOR.fullmatch(t) for t in inner):
        return 0  # values written as a list themselves: not one item's parts
    count = 1
    gaps: list[str] = []
    while start + (count + 1) * size <= len(names):
        at = start + count * size
        gap = lits[at]
        here = [by_name[n] for n in names[at : at + size]]
        if not SEPARATOR.fullmatch(gap) or [lits[at + j] for j in range(1, size)] != inner:
            break
        if any(kind_union(a.kind, b.kind) is None or (a.type, a.transform) != (b.type, b.transform)
               or b.same is not None and b.same not in {names[start + g * size + j] for g in range(count)}
               for j, (a, b) in enumerate(zip(first, here, strict=True))):
            break  # parts of another kind, or a value tied to something but the same part of an earlier item
        if gaps and gap.strip() != gaps[0].strip() and "and" not in gap.split():
            break
        gaps.append(gap)
        count += 1
    return count


def _part_names(names: list[str], taken: set[str]) -> list[str] | None:
    """The first group's slot names without the numbers that told groups apart, unless that is
    the name of another slot of the template."""
    out = []
    for n in names:
        bare = _NUMBERED.sub("", n) or n
        out.append(n if bare in taken else bare)
    return out if len(set(out)) == len(out) else None


def _list_name(first: str, taken: set[str]) -> str:
    stem = first[: -len("_name")] if first.endswith("_name") and len(first) > 5 else first
    name = stem + "s"
    k = 2
    while name in taken:
        name = f"{stem}s_{k}"
        k += 1
    return name


def _kinds(kinds: list[str]) -> str:
    out = kinds[0]
    for k in kinds[1:]:
        out = kind_union(out, k) or out
    return out


def _union(shapes: list[str | None]) -> str | None:
    out = shapes[0]
    for s in shapes[1:]:
        out = union_shape(out, s)
    return out


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")
