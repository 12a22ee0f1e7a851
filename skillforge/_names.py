"""Names a task says that a run read back: slots the skill checks, not text it ignores. Pure.

Anti-unification makes the words where two tasks differ and that fed no argument an
ignored slot ("I am {_2}." from "I am Raj Davis." and "I am Mia Li."). If those words
say a value the run read (the customer read back is named Raj), the agent may have
checked them: a name that is not the account's is refused. ``named`` cuts such words out
of an ignored slot into a slot of their own, named after the field read
(``first_name``), which the lifted skill relates to that field
(``customer['first_name'] == first_name``); ``_unnamed`` turns them back into ignored text
so that a later run's task anti-unifies with the template again.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Callable
from typing import Any

from . import runtime
from ._selecting import _singular
from ._template import CHOICE, IGNORED, Slot, TaskTemplate, shape_of, union_shape
from ._trajectory import Trajectory
from ._values import enum_like

__all__ = ["checked_ids", "named"]

_NOT_NAMES = frozenset(runtime.__all__) | {"SKILL", "result"}  # names a skill file already uses


def named(template: TaskTemplate, runs: list[Trajectory]) -> TaskTemplate:
    """``template`` with the words of an ignored slot that say a value the runs read made slots of their own
    (and a choice each of whose texts is such a value: "Sophia" / "Yara", each run's customer's first name).

    "I am {_2}." learned from "I am Raj Davis." where the customer read back is named
    ``Raj``: the first word names what the agent read, so it may be what the agent checked
    (a name that is not the account's is refused). It becomes a slot (``first_name``,
    named after the field), which the skill takes, and the lifted skill relates it to the
    field read (``customer['first_name'] == first_name``); the other words stay ignored.
    Each ignored slot's text is cut, left to right, into the longest runs of words equal to
    a text some call returned, and ignored words between them; every run must cut the same
    way, else the template is returned unchanged.
    """
    slots = {s.name: s for s in template.slots}
    text = template.text
    taken = set(slots) | {t for run in runs for t in run.tools}  # a parameter never shadows a tool
    changed = False
    for slot in [s for s in template.slots if s.kind in (IGNORED, CHOICE)]:
        cuts: list[list[tuple[str, str]]] = []  # per run: (field the words say, or "", the words)
        for run in runs:
            m = template.regex.fullmatch(run.task.strip())
            said = (m.group(slot.name) or "").split() if m is not None else []
            if not said:
                break
            cuts.append(_cut(said, _read_texts(run)))
        if len(cuts) != len(runs) or len({tuple(f for f, _w in c) for c in cuts}) != 1 or all(not f for f, _w in cuts[0]):
            continue
        if slot.kind == CHOICE and not all(f for f, _w in cuts[0]):
            continue  # a choice ("Sophia" / "Yara") is a slot only where every word it said is a value read
        placeholders = []
        taken.discard(slot.name)  # the words left ignored keep its name
        del slots[slot.name]
        for k, (field, _words) in enumerate(cuts[0]):
            texts = [c[k][1] for c in cuts]
            name = _free(field or "_", taken)
            taken.add(name)
            kind = "word" if all(" " not in t for t in texts) else "text"
            shape = shape_of(texts[0], kind if field else "text")
            for t in texts[1:]:
                shape = union_shape(shape, shape_of(t, kind if field else "text"))
            slots[name] = Slot(name, kind if field else IGNORED, "str", None, shape)
            placeholders.append("{" + name + "}")
        text = text.replace("{" + slot.name + "}", " ".join(placeholders))
        changed = True
    if not changed:
        return template
    try:
        return TaskTemplate(text, list(slots.values()))
    except ValueError:
        return template


def _unnamed(a: TaskTemplate, real: set[str]) -> TaskTemplate:
    """``a`` with each run of word slots not in ``real`` (names ``named`` cut out of ignored text)
    and ignored slots, side by side, as one ignored slot again; ``a`` itself if that cannot be said."""
    by_name = {s.name: s for s in a.slots}
    loose = {s.name for s in a.slots if s.kind == IGNORED or (s.kind in ("word", "text") and s.name not in real)}
    group = re.compile(r"\{(\w+)\}(?: \{(\w+)\})*")
    if any(a.text.count("{" + n + "}") > 1 for n in loose):
        return a  # a name said twice ("Jon Smith should be John Smith"): two ignored texts would not say it is one
    text, slots, taken = a.text, {n: s for n, s in by_name.items()}, set(by_name)
    for m in list(group.finditer(a.text)):
        names = re.findall(r"\{(\w+)\}", m.group())
        if not set(names) <= loose or all(by_name[n].kind == IGNORED for n in names):
            continue
        lo = hi = 0
        for n in names:
            counts = _name_counts(by_name[n].shape)
            if counts is None:
                return a
            lo, hi = lo + counts[0], hi + counts[1]
        for n in names:
            del slots[n]
            taken.discard(n)
        name = _fresh(taken)
        taken.add(name)
        slots[name] = Slot(name, IGNORED, "str", None, f"Names:{lo}-{hi}" if (lo, hi) != (1, 1) else "Aa")
        text = text.replace(m.group(), "{" + name + "}", 1)
    try:
        return TaskTemplate(text, list(slots.values()))
    except ValueError:
        return a


def _name_counts(shape: str | None) -> tuple[int, int] | None:
    """How many capitalised words a name-like shape takes (``Aa``: one, ``Aa Aa``: two, ``Names:1-3``)."""
    if shape is None:
        return None
    m = re.fullmatch(r"Names:(\d+)-(\d+)", shape)
    if m:
        return int(m[1]), int(m[2])
    counts = [p.count("Aa") for p in shape.split("||")]
    if not all(re.fullmatch(r"Aa(?: Aa)*", p) for p in shape.split("||")):
        return None
    return min(counts), max(counts)


def _cut(words: list[str], reads: dict[str, str]) -> list[tuple[str, str]]:
    """``words`` as runs of words equal to a text read (with the field it was read from) and runs of other words."""
    out: list[tuple[str, str]] = []
    k = 0
    while k < len(words):
        for j in range(len(words), k, -1):
            field = reads.get(" ".join(words[k:j]).lower())
            if field is not None:
                out.append((field, " ".join(words[k:j])))
                k = j
                break
        else:
            if out and not out[-1][0]:
                out[-1] = ("", out[-1][1] + " " + words[k])
            else:
                out.append(("", words[k]))
            k += 1
    return out


def _read_texts(run: Trajectory) -> dict[str, str]:
    """Name-like texts the run's reads returned (lowercased) → the field each was read from."""
    name = re.compile(r"[^\W\d_]+(?:[ '-][^\W\d_]+)*")
    return _read_strings(run, lambda v: v.lower() if len(v) >= 2 and name.fullmatch(v) and not enum_like(v) else None)


def _read_strings(
    run: Trajectory, key: Callable[[str], str | None], element: Callable[[str], str] = lambda field: field
) -> dict[str, str]:
    """``key(text)`` of each text the run's reads returned (where it is not None) → the field it was
    read from (``element(field)`` for an element of a list under ``field``)."""
    out: dict[str, str] = {}
    for call in run.calls:
        if not run.tools[call.tool].read:
            continue
        stack: list[tuple[Any, str]] = [(call.result, "value")]
        while stack and len(out) < 20_000:
            v, field = stack.pop()
            if type(v) is str:
                k = key(v)
                if k is not None:
                    out.setdefault(k, field)
            elif type(v) is dict:
                stack.extend((x, k if type(k) is str else field) for k, x in v.items())
            elif type(v) is list:
                stack.extend((x, element(field)) for x in v)
    return out


def _free(field: str, taken: set[str]) -> str:
    """A parameter name for words that say ``field`` (an ignored slot's name for ``"_"``)."""
    base = re.sub(r"\W+", "_", field).strip("_").lower()
    if field == "_" or not base or base[0].isdigit():
        return _fresh(taken)
    if keyword.iskeyword(base) or base in _NOT_NAMES or hasattr(builtins, base):
        base += "_said"
    name, i = base, 2
    while name in taken:
        name, i = f"{base}_{i}", i + 1
    return name


def _fresh(taken: set[str]) -> str:
    i = 2
    while f"_{i}" in taken:
        i += 1
    return f"_{i}"


_ID_TOKEN = re.compile(r"(?<![\w#])#?[A-Za-z]{0,4}[-_]?\d[\w-]*(?!\w)")  # "#W12", "INC-4820", "10293"


def _id_like(text: str) -> bool:
    """An id: a digit, and a letter or a ``#`` beside it, or five digits or more (not a count or a year)."""
    return len(text) >= 3 and (text[0] == "#" or any(c.isalpha() for c in text) or len(text) >= 5)


def checked_ids(template: TaskTemplate, run: Trajectory) -> TaskTemplate:
    """``template`` with each id in its literal text that a read of ``run`` returned made a slot
    the skill checks ("(same as #W1713682)", where the customer's orders list ``#W1713682``).

    The id fed no argument, so it is no slot by the data; but it names something the agent
    read, so the agent may have acted on it, and text kept literal would keep every run apart
    (each says another id). As a slot of its own (named after the field read, ``order``), the
    lifted skill relates it to what was read (``order in user['orders']``, ``order !=
    order_id``): another task binds only where its id stands in the same relations.
    """
    reads = _read_ids(run)
    if not reads:
        return template
    taken = {s.name for s in template.slots} | set(run.tools)
    slots = list(template.slots)
    pieces: list[str] = []
    changed = False
    for k, part in enumerate(re.split(r"(\{\{|\}\}|\{\w+\})", template.text)):
        if k % 2 == 1:  # a placeholder or an escaped brace
            pieces.append(part)
            continue
        out, pos = [], 0
        for m in _ID_TOKEN.finditer(part):
            field = reads.get(m.group()) if _id_like(m.group()) else None
            if field is None:
                continue
            name = _free(field, taken)
            taken.add(name)
            slots.append(Slot(name, "text", "str", None, shape_of(m.group(), "text")))
            out += [part[pos : m.start()], "{" + name + "}"]
            pos = m.end()
            changed = True
        pieces.append("".join(out) + part[pos:])
    if not changed:
        return template
    try:
        return TaskTemplate("".join(pieces), slots)
    except ValueError:
        return template


def _read_ids(run: Trajectory) -> dict[str, str]:
    """Id-like texts the run's reads returned → the field each was read from (an element of a list
    of ``orders``: ``order``)."""
    return _read_strings(run, lambda v: v if _ID_TOKEN.fullmatch(v) and _id_like(v) else None, _singular)
