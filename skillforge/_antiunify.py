"""Templates of several runs' tasks: anti-unification (``generalize``) and widening (``widened``). Pure.

Two tasks whose runs made one program share text; where their texts differ and the
region feeds no argument, the region is a slot that feeds nothing: a list of lowercase
words or capitalised words becomes an *ignored* slot of the narrowest shape that fits
both (``shy, logical`` / ``direct, busy``), a single word a *choice* of exactly the texts
seen. A region that carries a digit, a sign, a negation or a sentence boundary keeps the
runs apart. ``ignores_data`` refuses ignored text that names something a run read, or that
its answer or a call's argument says (``quoted_ignored``): the answer is part of the program.
"""

from __future__ import annotations

import difflib
import re
import string
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ._names import _fresh, _unnamed
from ._template import CHOICE, IGNORED, LIST, NEGATION, SNAKE, Slot, TaskTemplate, affix_parts, choices, kind_union, shape_of, slot_kind, union_shape
from ._trajectory import Trajectory

__all__ = [
    "CHOICE_SLOT", "chose_words", "generalize", "ignores_data", "joined", "quoted_ignored", "says", "shared_shapes", "unrepeated", "widened",
    "wider_slot",
]


_TOKEN = re.compile(r"\s*(?:\{\{|\}\}|\{[^{}]*\}|\w+|[^\w\s])")
_MEANINGFUL = set("-+$\u20ac\u00a3\u00a5%")
CHOICE_SLOT = "_1"
_SPOKEN = frozenset({"text", "word"})  # kinds of a slot whose value is free text: it may take text a run left literal


def generalize(a: TaskTemplate, b: TaskTemplate) -> TaskTemplate | None:
    """The template of two runs' tasks (anti-unification): their common text, with the regions where they differ as slots that feed nothing.

    Slot shapes widen to fit both (``a.a`` and ``a.a-a``: either). A region of several
    words, in both texts of one narrow shape (``shy, logical`` and ``direct, impatient,
    busy``: lowercase words and commas; ``Liam Thomas`` and ``Raj Li``: two capitalised
    words), becomes an *ignored* slot of that shape: it takes any text of the shape and
    passes nothing on. A region of a single word (``he`` / ``she``, ``cancel`` /
    ``return``) becomes a *choice* of exactly the texts runs showed, and a template holds
    at most one choice, so no combination of such texts that no run showed together can
    bind. A region that carries a sign, currency or percent, a digit, a negation, a
    sentence boundary, or outweighs the common text keeps the runs apart (None), as do
    slots that differ.
    """
    real_a = [s for s in a.slots if s.kind not in (CHOICE, IGNORED)]
    if len(real_a) > len(b.slots):  # words ``named`` made slots are text in b: anti-unify them as ignored text
        a = _unnamed(a, {s.name for s in b.slots})
        real_a = [s for s in a.slots if s.kind not in (CHOICE, IGNORED)]
    theirs = {s.name for s in b.slots}
    # a value a's runs took where b's run said text it did not use (a note a run that wrote nothing
    # left literal): b's text is one more value of a's slot, of its kind, if it says no negation
    spoken = [s for s in real_a if s.name not in theirs and s.kind in _SPOKEN and not s.parts]
    real_a = [s for s in real_a if s.name in theirs or s not in spoken]
    if any(s.kind in (CHOICE, IGNORED) for s in b.slots) or len(real_a) != len(b.slots):
        return None
    widened: dict[str, Slot] = {}
    for sa, sb in zip(real_a, b.slots, strict=True):  # the same slots; their shapes widen to fit both
        wide = _wider_slot(sa, sb)
        if wide is None:
            return None
        widened[sa.name] = wide
    ta, tb = _TOKEN.findall(a.text), _TOKEN.findall(b.text)
    ops = _coalesced(ta, tb, [op for op in difflib.SequenceMatcher(None, _norm(ta), _norm(tb), autojunk=False).get_opcodes() if op[0] != "equal"])
    by_name = {s.name: s for s in a.slots}
    if not ops:
        if all(widened[s.name] == s for s in real_a):
            return None  # nothing to widen
        return TaskTemplate(a.text, [widened.get(s.name, s) for s in a.slots])
    common = sum(1 for k, t in enumerate(ta) if re.fullmatch(r"\s*\w+", t) and not any(i1 <= k < i2 for _t, i1, i2, _j1, _j2 in ops))
    if common < 2:
        return None
    taken = {s.name for s in a.slots}
    choice_done = False
    replaced: list[tuple[int, int, str]] = []  # (i1, i2, placeholder) in ``ta``
    for _tag, i1, i2, j1, j2 in ops:
        region_a, region_b = ta[i1:i2], tb[j1:j2]
        if any(_placeholder(t) for t in region_b):
            return None  # a slot of one template is text in the other
        text_b = "".join(region_b).strip()
        names = [_placeholder(t) for t in region_a if _placeholder(t)]
        if names:
            if len(names) != 1 or any(t.strip() for t in region_a if not _placeholder(t)):
                return None
            slot = by_name[names[0]]
            if slot in spoken and names[0] not in widened:
                kind = kind_union(slot.kind, slot_kind(text_b))
                if kind is None or NEGATION.search(text_b):
                    return None
                widened[slot.name] = replace(slot, kind=kind, shape=union_shape(slot.shape, shape_of(text_b, kind)))
            elif slot.kind == CHOICE and not choice_done:
                alternatives = [*choices(slot), text_b]
                if not all(_choosable(x, common) for x in alternatives):
                    return None
                shape = "|".join(sorted(set(alternatives), key=lambda x: (x.lower(), x)))
                widened[slot.name] = Slot(slot.name, CHOICE, "str", None, shape)
                choice_done = True
            elif slot.kind == IGNORED and _ignorable(text_b, common):
                widened[slot.name] = Slot(slot.name, IGNORED, "str", None, union_shape(slot.shape, shape_of(text_b, "text")))
            else:
                return None
            continue
        text_a = "".join(region_a).strip()
        lead = (region_a or region_b or [" "])[0]
        lead = lead[: len(lead) - len(lead.lstrip())] or (" " if i1 else "")
        if _ignorable(text_a, common) and _ignorable(text_b, common) or _listed(text_a, text_b, common):
            name = _fresh(taken)
            widened[name] = Slot(name, IGNORED, "str", None, union_shape(shape_of(text_a, "text"), shape_of(text_b, "text")))
        elif not choice_done and not any(s.kind == CHOICE for s in a.slots) and all(
            _choosable(x, common) for x in (text_a, text_b)
        ):
            name = CHOICE_SLOT
            shape = "|".join(sorted({text_a, text_b}, key=lambda x: (x.lower(), x)))
            widened[name] = Slot(name, CHOICE, "str", None, shape)
            choice_done = True
        else:
            return None
        taken.add(name)
        replaced.append((i1, i2, lead + "{" + name + "}"))
    text = ""
    k = 0
    for i1, i2, placeholder in replaced:
        text += "".join(ta[k:i1]) + placeholder
        k = i2
    text += "".join(ta[k:])
    if any(s.name not in widened for s in spoken):
        return None  # a slot of a that is neither b's nor text b said in its place
    slots = [widened.get(s.name, s) for s in a.slots] + [widened[n] for n in sorted(widened) if n not in by_name]
    try:
        return TaskTemplate(text.strip(), slots)
    except ValueError:
        return None


def unrepeated(narrow: TaskTemplate, wide: TaskTemplate) -> TaskTemplate | None:
    """``narrow`` with its slots named as ``wide``'s at their places, where ``wide`` has two slots
    where ``narrow`` says one slot twice (``zip code is {zip} ... 'zip': '{zip}'`` and ``...
    '{zip_2}'``): each of ``wide``'s slots is ``narrow``'s slot at its place (the texts that feed
    values, in order; what feeds nothing keeps its own). None where their values are not in the
    same order and number, a slot of ``wide`` stands where ``narrow`` has two slots, or no slot is
    said twice. See ``joined``."""
    unused = (CHOICE, IGNORED)
    kinds = {sl.name: sl.kind for sl in (*narrow.slots, *wide.slots)}
    ours = [(lit, name) for lit, name, _s, _c in string.Formatter().parse(narrow.text)]
    theirs = [name for _l, name, _s, _c in string.Formatter().parse(wide.text) if name is not None and kinds.get(name) not in unused]
    values = [name for _l, name in ours if name is not None and kinds.get(name) not in unused]
    if len(values) != len(theirs):
        return None
    names: dict[str, str] = {}  # a slot of wide -> the slot of narrow at its place
    for a, b in zip(values, theirs, strict=True):
        if names.setdefault(b, a) != a:
            return None
    if len(set(names.values())) == len(names):
        return None  # no slot said twice: a renaming, not this
    by_name = {sl.name: sl for sl in narrow.slots}
    at = iter(theirs)
    text = "".join(
        lit.replace("{", "{{").replace("}", "}}")
        + ("" if name is None else "{" + (name if kinds.get(name) in unused else next(at)) + "}")
        for lit, name in ours
    )
    slots = [replace(by_name[names[n]], name=n, same=None) for n in dict.fromkeys(theirs)]
    slots += [sl for sl in narrow.slots if sl.kind in unused]
    try:
        return TaskTemplate(text, slots)
    except ValueError:
        return None


def joined(wide: TaskTemplate, narrow: TaskTemplate) -> TaskTemplate | None:
    """``wide`` widened to take ``narrow``'s tasks too, where ``narrow`` says one slot twice where
    ``wide`` has two (``unrepeated``): the same text with slot shapes widened, or their common
    template (``generalize``); None where neither."""
    said = unrepeated(narrow, wide)
    if said is None:
        return None
    if said.text == wide.text:
        return widened(wide, said)
    return generalize(wide, said)


def widened(a: TaskTemplate, b: TaskTemplate) -> TaskTemplate | None:
    """One template of the same text as ``a`` and ``b`` whose every slot fits what either's did
    (``Aa`` and ``Aa Aa``: either); None if their texts or slots differ otherwise."""
    if a.text != b.text or len(a.slots) != len(b.slots):
        return None
    if a.slots == b.slots:
        return a
    slots = [wider_slot(sa, sb) for sa, sb in zip(a.slots, b.slots, strict=True)]
    if any(s is None for s in slots):
        return None
    try:
        return TaskTemplate(a.text, [s for s in slots if s is not None])
    except ValueError:
        return None


def wider_slot(a: Slot, b: Slot) -> Slot | None:
    """One slot that takes what either took: a choice of both's texts, or ``_wider_slot``."""
    if a.kind == CHOICE and b.kind == CHOICE and a.name == b.name:
        shape = "|".join(sorted(set(choices(a)) | set(choices(b)), key=lambda x: (x.lower(), x)))
        return Slot(a.name, CHOICE, a.type, a.transform, shape, a.same)
    return _wider_slot(a, b)


def _wider_slot(a: Slot, b: Slot) -> Slot | None:
    """One slot that takes what either took: the same name, type and normalisation, the shapes
    (and an item's parts' shapes) widened to fit both."""
    a, b = _as_records(a, b), _as_records(b, a)
    kind = kind_union(a.kind, b.kind)
    how = _wider_transform(a, b)
    if kind is None and type(how) is str and how.startswith("affix?:"):  # "#W36" as text, "W37" as an id: the shapes tell
        kind = "text" if "text" in (a.kind, b.kind) else "id" if {a.kind, b.kind} <= {"id", "digits"} else None
    if kind is None or how is _NO_TRANSFORM or (a.name, a.type, a.same, a.item) != (b.name, b.type, b.same, b.item):
        return None
    if len(a.parts) != len(b.parts):
        return None
    parts = tuple(_wider_slot(pa, pb) for pa, pb in zip(a.parts, b.parts, strict=True))
    if any(p is None for p in parts):
        return None
    return Slot(a.name, kind, a.type, how, union_shape(a.shape, b.shape), a.same, a.item,  # type: ignore[arg-type]
                tuple(p for p in parts if p is not None), a.optional or b.optional)


def shared_shapes(templates: Sequence[TaskTemplate]) -> list[TaskTemplate]:
    """A skill's phrasings (``templates``, its own first) with each parameter's slot taking the text
    shapes that parameter took in any of them: the values a parameter may take are what the skill's
    runs passed it, whichever words they were said in ("sam.lee2: and remove him from {group}."
    learned from one run takes ``a.a9`` only, while the skill's other phrasings saw ``a.a`` for the same
    ``username``). A slot widens as two runs of one text widen it (``widened``): by a slot of the same
    name, type and reference (``same``), to a normalisation that explains what both did ("#W36" said
    whole in one phrasing, "W37" bare in another: ``affix?:#{}``); lists, records and text that feeds
    nothing keep their own shapes, and so does a phrasing whose slots would no longer make a template.
    The caller checks that every run still binds the values it bound (``spec_from_runs``)."""
    if len(templates) < 2:
        return list(templates)
    seen: dict[str, list[Slot]] = {}
    for t in templates:
        for s in t.slots:
            if _shareable(s):
                seen.setdefault(s.name, []).append(s)
    out = []
    for t in templates:
        slots = []
        for s in t.slots:
            wide = s
            for other in seen.get(s.name, ()) if _shareable(s) else ():
                wide = _wider_slot(wide, other) or wide
            slots.append(wide)
        if slots == list(t.slots):
            out.append(t)
            continue
        try:
            out.append(TaskTemplate(t.text, slots))
        except ValueError:
            out.append(t)
    return out


def _shareable(s: Slot) -> bool:
    return s.kind not in (CHOICE, IGNORED, LIST) and s.item is None and not s.parts and s.shape is not None


def _as_records(a: Slot, b: Slot) -> Slot:
    """``a``, a list of names, as the list of records ``b`` is where ``b``'s items are a name and an
    optional value said after it (``Mug {'color': 'red'}; Kettle``): each name its first part, of
    ``a``'s shape. Else ``a`` as it is."""
    if (a.kind, b.kind) != ("list", "list") or a.item is not None or b.item is None or len(b.parts) != 2 or not b.parts[1].optional:
        return a
    if (a.name, a.type, a.transform, a.same) != (b.name, b.type, b.transform, b.same):
        return a
    return Slot(a.name, b.kind, b.type, b.transform, b.shape, b.same, b.item, (replace(b.parts[0], shape=a.shape), b.parts[1]))


_NO_TRANSFORM = object()
_CASES = frozenset({"lower", "upper", "title"})


def _wider_transform(a: Slot, b: Slot) -> str | None | object:
    """The normalisation a slot takes that explains what both did: the same one, or a case one where the
    other took its text as written (``INC-4817`` as written, ``inc-4815`` upper-cased: upper-casing explains
    both, and the runs are proven again under it), or ``affix?:`` where one took its text as written and
    the other added an affix to it (``#W36`` as written, ``W37`` as ``#W37``); ``_NO_TRANSFORM`` where none does."""
    if a.transform == b.transform:
        return a.transform
    if a.transform is None and b.transform in _CASES:
        return b.transform
    if b.transform is None and a.transform in _CASES:
        return a.transform
    for one, other in ((a, b), (b, a)):
        how = one.transform or ""
        if not how.startswith(("affix:", "affix?:")):
            continue
        either = "affix?:" + how.partition(":")[2]
        if other.transform is None and _affix_tells(how, other.shape, bare=False) and (
            how == either or _affix_tells(how, one.shape, bare=True)
        ):
            return either  # one said the value whole, the other bare
        if how == either and other.transform == "affix:" + how.partition(":")[2] and _affix_tells(how, other.shape, bare=True):
            return either
    return _NO_TRANSFORM


def _affix_tells(how: str, shape: str | None, *, bare: bool = True) -> bool:
    """Whether a text said whole shows it, where ``shape`` is a shape of texts said bare (``bare``) or
    said whole: the affix's punctuation next to the value (``#`` of ``#W36``, ``-`` of ``INC-4820``)
    is in no bare text's shape, and the whole texts' shapes say it. A free-text shape tells nothing."""
    before, after = affix_parts(how)
    marks = (before[-1:] if before else "") + (after[:1] if after else "")
    if shape is None or shape.startswith(("words:", "Names:")) or not marks or any(m.isalnum() or m == "`" for m in marks):
        return False
    return all((m in part) != bare for part in shape.split("||") for m in marks)


def ignores_data(template: TaskTemplate, runs: list[Trajectory]) -> bool:
    """Whether an ignored slot of ``template`` takes, in one of ``runs``, text that a tool returned
    ("Return ...: Cycling Helmet" where the order lists a "Cycling Helmet"), or text the run itself
    says (``quoted_ignored``): text that names something the agent read may be what it acted on,
    and text its answer or a call says is part of what it did, so neither is ever ignored. Nor is any
    text of a run whose write takes words it was neither told nor shown (``chose_words``): "because I
    changed my mind" and "because I found a better price elsewhere" both filed as "no longer needed"
    say nothing of which words chose that, and "because I bought it by accident" is filed otherwise."""
    ignored = [s.name for s in template.slots if s.kind == IGNORED]
    if not ignored:
        return False
    if any(chose_words(run) for run in runs):
        return True
    for run in runs:
        m = template.regex.fullmatch(run.task.strip())
        if m is None:
            continue
        said = {(m.group(name) or "").strip().lower() for name in ignored} - {""}
        values = {v.strip().lower() for c in run.calls for v in _texts(c.result)}
        if said & values or quoted_ignored(template, run) is not None:
            return True
    return False


def chose_words(run: Trajectory) -> str | None:
    """A text of words (no digit) that a write of ``run`` takes and that the run was neither told (its task
    does not say it, in any case, as whole words) nor shown (no result of a read holds it): a choice the
    agent made from the task's words, where any of them may have made it. None if there is none."""
    shown = {v.strip().lower() for c in run.calls if (ref := run.tools.get(c.tool)) is not None and ref.read
             for v in _texts(c.result)}
    for call in run.calls:
        ref = run.tools.get(call.tool)
        if ref is None or ref.read:
            continue
        for value in _texts(call.args):
            text = value.strip()
            if re.search(r"[^\W\d_]", text) and not any(ch.isdigit() for ch in text) and text.lower() not in shown \
                    and not says(run.task, text):
                return text
    return None


def quoted_ignored(template: TaskTemplate, run: Trajectory) -> str | None:
    """The text an ignored slot of ``template`` takes in ``run``'s task that the run's answer, or an
    argument of one of its calls, says too (in any case, as whole words); None if none does.

    "I want to send back the Desk Lamp and the {_2} ..." ignores "Tea Kettle", and the answer
    says "I don't see a tea kettle": the answer is part of the program, so the text is no text to
    ignore. Ignored, the answer keeps it as a constant and another task's item is answered with
    it; and runs whose answers differ by that text alone would become branches split on whatever
    else told them apart. Such runs make no skill under ``template`` (each keeps its own text).
    """
    ignored = [s.name for s in template.slots if s.kind == IGNORED]
    if not ignored:
        return None
    m = template.regex.fullmatch(run.task.strip())
    if m is None:
        return None
    texts = [v for v in (*_texts(run.outcome.output), *(v for c in run.calls for v in _texts(c.args))) if v.strip()]
    for name in ignored:
        text = (m.group(name) or "").strip()
        if text and any(says(t, text) for t in texts):
            return text
    return None


def says(text: str, value: str) -> bool:
    """Whether ``text`` says ``value`` as whole words, in any case and spacing ("a tea kettle" says "Tea Kettle";
    "your gift card" says the code word ``gift_card``, as a task may write it)."""
    words = [w for w in re.split(r"[\s_]+", value) if w] if SNAKE.fullmatch(value) else value.split()
    if not words:
        return False
    pattern = r"[\s_-]+".join(map(re.escape, words)) if SNAKE.fullmatch(value) else r"\s+".join(map(re.escape, words))
    return re.search(rf"(?<![\w.@-]){pattern}(?![\w@-]|\.\w)", text, re.IGNORECASE) is not None


def _texts(value: Any) -> list[str]:
    out: list[str] = []
    stack = [value]
    while stack and len(out) < 20_000:
        v = stack.pop()
        if type(v) is str:
            out.append(v)
        elif type(v) is dict:
            stack.extend(v.values())
        elif type(v) is list:
            stack.extend(v)
    return out


def _coalesced(ta: list[str], tb: list[str], ops: list[tuple[str, int, int, int, int]]) -> list[tuple[str, int, int, int, int]]:
    """Differing regions with only punctuation between them, as one (``shy, logical`` / ``direct, busy``);
    also with one word between them where both texts together are a list of words (``patient, shy`` /
    ``creative, sad, patient, polite``: the shared ``patient`` is no common text)."""
    out: list[tuple[str, int, int, int, int]] = []
    for op in map(lambda o: _in_list(ta, tb, o), ops):
        if out:
            _t, i1, i2, j1, j2 = out[-1]
            words = sum(1 for t in ta[i2 : op[1]] if re.search(r"\w", t))
            merged = ("".join(ta[i1 : op[2]]).strip(), "".join(tb[j1 : op[4]]).strip())
            if words == 0 or (words == 1 and all(_ignorable(m, len(ta)) for m in merged)):
                out[-1] = ("replace", i1, op[2], j1, op[4])
                continue
        out.append(op)
    return out


def _in_list(ta: list[str], tb: list[str], op: tuple[str, int, int, int, int]) -> tuple[str, int, int, int, int]:
    """A region inside a comma-separated list of words, widened to the whole list: the words both
    lists happen to share ("pessimistic, shy" / "pessimistic, happy, busy") are no common text."""
    tag, i1, i2, j1, j2 = op

    def word(t: str) -> bool:
        return re.fullmatch(r"\s*[a-z]+", t) is not None

    def ignorable(a1: int, a2: int, b1: int, b2: int) -> bool:
        x, y = "".join(ta[a1:a2]).strip(), "".join(tb[b1:b2]).strip()
        return all(_ignorable(t, len(ta)) for t in (x, y)) or _listed(x, y, len(ta))

    def at_comma(k_a: int, k_b: int) -> bool:  # the region's text on each side that has any is a comma there
        sides = [(x, k) for x, k, n in ((ta, k_a, i2 - i1), (tb, k_b, j2 - j1)) if n]
        return bool(sides) and all(comma(x, k) for x, k in sides)

    def comma(x: list[str], k: int) -> bool:
        return 0 <= k < len(x) and x[k].strip() == ","

    inside = any("," in "".join(x) for x in (ta[i1:i2], tb[j1:j2]))
    beside = comma(ta, i1 - 1) and comma(tb, j1 - 1) or comma(ta, i2) and comma(tb, j2)
    if not (inside or beside and all(re.fullmatch(r"[a-z]*", "".join(x).strip()) for x in (ta[i1:i2], tb[j1:j2]))):
        return op  # not a list of words (in either text), nor a lowercase word beside one

    if at_comma(i1, j1) and i1 and j1 and ta[i1 - 1] == tb[j1 - 1] and word(ta[i1 - 1]) and ignorable(i1 - 1, i2, j1 - 1, j2):
        i1, j1 = i1 - 1, j1 - 1  # the region starts at a comma: the item before it is the list's too
    if at_comma(i2 - 1, j2 - 1) and i2 < len(ta) and j2 < len(tb) and ta[i2] == tb[j2] and word(ta[i2]) and ignorable(i1, i2 + 1, j1, j2 + 1):
        i2, j2 = i2 + 1, j2 + 1  # it ends at one: so is the item after it
    while i1 >= 2 and j1 >= 2 and ta[i1 - 2 : i1] == tb[j1 - 2 : j1] and word(ta[i1 - 2]) and ta[i1 - 1].strip() == ",":
        if not ignorable(i1 - 2, i2, j1 - 2, j2):
            break
        i1, j1 = i1 - 2, j1 - 2
    while i2 + 2 <= len(ta) and j2 + 2 <= len(tb) and ta[i2 : i2 + 2] == tb[j2 : j2 + 2] and ta[i2].strip() == "," and word(ta[i2 + 1]):
        if not ignorable(i1, i2 + 2, j1, j2 + 2):
            break
        i2, j2 = i2 + 2, j2 + 2
    if not inside and not all(_list_ends(x, k) for x, k in ((ta, i2), (tb, j2))):
        return op  # words after a comma that go on as a clause ("group, he moved teams"): no list
    return (tag, i1, i2, j1, j2)


def _list_ends(tokens: list[str], k: int) -> bool:
    """Whether a list of words ending before token ``k`` ends there: at the end of a sentence or the text."""
    return k >= len(tokens) or tokens[k].strip() in (".", ";", "!", "?")


def _placeholder(token: str) -> str | None:
    t = token.strip()
    return t[1:-1] if t.startswith("{") and t.endswith("}") and t not in ("{{", "}}") else None


def _choosable(text: str, common: int) -> bool:
    """A region's text that may be one of a choice's texts (it may be empty: the region may be absent)."""
    if "|" in text or "{" in text or "}" in text or _MEANINGFUL & set(text) or (text and not re.search(r"\w", text)):
        return False
    return len(re.findall(r"\w+", text)) <= common


def _ignorable(text: str, common: int) -> bool:
    """A region's text that may become an ignored slot: several words of one narrow shape, saying
    nothing a decision could hang on (no digit, sign, negation or sentence boundary)."""
    words = re.findall(r"\w+", text)
    if len(words) < 2 or len(words) > common or not _choosable(text, common):
        return False
    if any(c.isdigit() for c in text) or any(c in ".!?;:\n" for c in text) or NEGATION.search(text):
        return False
    return not shape_of(text, "text").startswith("words:") or all(w.islower() for w in words)


def _listed(a: str, b: str, common: int) -> bool:
    """Two texts at one place that are lists of lowercase words, one of a single word ("calm" /
    "happy, busy"): the place holds a list, and one word is a list of one."""
    texts = sorted((a, b), key=lambda t: "," in t)
    one, many = texts
    return (
        "," not in one and "," in many and re.fullmatch(r"[a-z]+", one) is not None
        and re.fullmatch(r"[a-z]+(?:, [a-z]+)+", many) is not None
        and _ignorable(many, common) and _choosable(one, common) and not NEGATION.search(one)
    )


def _norm(tokens: list[str]) -> list[str]:
    return [t.strip().lower() for t in tokens]
