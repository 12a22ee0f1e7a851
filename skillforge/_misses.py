"""Why a template does not bind a task: the literal word or the slot where binding stops.

Pure: a ``TaskTemplate`` and a task in, a ``Miss`` out (None when it binds). Whether a task
binds is always ``TaskTemplate.bind``'s answer; this module only says where and why it did not,
by walking the template's own regex (``TaskTemplate.anatomy``) the way ``fullmatch`` does:

- its atomic groups are matched in turn, each once, at the first place it fits (as the regex
  engine commits to them: an earlier slot never gives text back to a later one);
- in the group that does not match, its pieces are matched one more at a time, so the first
  piece that cannot follow is named: a literal word the task does not say there, or a slot whose
  pattern refuses the text it sees (its name, its shape in the ``SKILL`` metadata and in words,
  the text);
- a match the regex does find, yet ``values`` refuses (ignored text that says "not", two slots
  that must say the same value, "February 30"), is named by that check.

Example:
    >>> from skillforge._template import Slot, TaskTemplate
    >>> t = TaskTemplate("Refund order #{order_id}", [Slot("order_id", "digits", "str", shape="9")])
    >>> print(diagnose(t, "Refund the order #1042"))
    the template says "order" where the task says "the order #1042"
    >>> print(diagnose(t, "Refund order #A-7"))
    {order_id} takes digits; the task has "A-7" there: it does not fit
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._template import (
    _LITERAL_TOKEN,
    _MEANINGFUL_BEFORE,
    CHOICE,
    IGNORED,
    LIST,
    MAX_RUN,
    MAX_TASK_CHARS,
    SLOT_PATTERNS,
    Refused,
    Slot,
    TaskTemplate,
    _words_regex,
    choices,
    shape_regex,
)

__all__ = ["Miss", "describe_slot", "diagnose"]

_FLAGS = re.IGNORECASE | re.DOTALL
_SHOWN = 60  # characters of the task shown at a point of failure


@dataclass(frozen=True)
class Miss:
    """Where and why a template does not bind a task.

    Attributes:
        reason: ``"words"`` (a literal word is not there), ``"choice"`` (none of a choice's texts),
            ``"slot"`` (a slot's pattern refuses the text), ``"rest"`` (the task goes on after the
            template ends), ``"too long"``, ``"template"`` (it does not compile), or the check that
            refused a match: ``"negation"``, ``"same"``, ``"records"``, ``"convert"``, ``"fraction"``.
        message: the same in words (also ``str(miss)``).
        at: the offset in the task (stripped) where it stops.
        expected: the literal text (or choices) the template has there.
        slot: the slot concerned, if any; ``pattern`` its shape (or kind) as the ``SKILL`` metadata
            writes it, ``pattern_text`` the same in words.
        seen: the text of the task at that point (what the slot saw).
        bound: the text each slot before that point took.
    """

    reason: str
    message: str
    at: int = 0
    expected: str | None = None
    slot: str | None = None
    pattern: str | None = None
    pattern_text: str | None = None
    seen: str = ""
    bound: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.message


def diagnose(template: TaskTemplate, task: str) -> Miss | None:
    """Why ``template`` does not bind ``task``; None if it binds."""
    if template.bind(task) is not None:
        return None
    if len(task) > template.max_chars:
        return Miss("too long", f"the task has {len(task):,} characters; past {MAX_TASK_CHARS:,} no task binds a skill "
                    "(the agent serves it, and it is not learned)", at=template.max_chars)
    text = task.strip()
    try:
        pieces, by_piece, groups = template.anatomy()
        m = template.regex.fullmatch(text)
    except (ValueError, re.error, RecursionError) as e:
        return Miss("template", f"the template does not compile ({e}); it binds no task")
    slots = {s.name: s for s in template.slots}
    if m is not None:
        refused = template.values(m)
        if isinstance(refused, Refused):
            return _refusal(template, refused, m)
        return Miss("unknown", "the template's pattern takes the task, yet it binds nothing")  # bind() said no: never "binds"
    pos = 0
    bound: dict[str, str] = {}
    for k, (regex, lo, hi) in enumerate(groups):
        last = k == len(groups) - 1
        pattern = re.compile(_known(regex, bound), _FLAGS)
        gm = pattern.fullmatch(text, pos) if last else pattern.match(text, pos)
        if gm is None:
            return _inside(text, pos, pieces, by_piece, slots, lo, hi, last, bound)
        bound.update({n: v for n, v in gm.groupdict().items() if v is not None})
        pos = gm.end()
    return Miss("unknown", "the template's pattern takes the task, yet it binds nothing")


def _known(regex: str, bound: dict[str, str]) -> str:
    """``regex`` with each back-reference to a slot an earlier group took replaced by that text."""
    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        return re.escape(bound[name]) if name in bound and f"(?P<{name}>" not in regex else m.group()

    return re.sub(r"\(\?P=(\w+)\)", sub, regex)


def _inside(
    text: str, pos: int, pieces: list[tuple[str, str | None]], by_piece: list[list[str]], slots: dict[str, Slot],
    lo: int, hi: int, last: bool, bound: dict[str, str],
) -> Miss:
    """The first piece of the group ``lo``..``hi`` (matched at ``pos``) that cannot follow the ones before."""
    prefix = ""
    best: re.Match[str] | None = None  # the match of the pieces lo..j-1
    j = lo
    while j < hi:
        attempt = re.compile(_known(prefix + "".join(by_piece[j]), bound), _FLAGS).match(text, pos)
        if attempt is None:
            break
        prefix += "".join(by_piece[j])
        best = attempt
        j += 1
    groups = {n: v for n, v in best.groupdict().items() if v is not None} if best is not None else {}
    taken = {**bound, **groups}
    end = best.end() if best is not None else pos
    if j == hi:
        if last:  # every piece matched, yet not to the end of the task
            final = next((i for i in range(hi - 1, lo - 1, -1) if pieces[i][1] is not None), None)
            name = pieces[final][1] if final is not None else None
            if best is not None and name is not None and slots[name].kind != CHOICE and name in groups and not any(
                _LITERAL_TOKEN.search(pieces[i][0]) for i in range(final + 1, hi)
            ) and not re.search(r"[.!?;]\s*\w", text[best.end(name):]):
                # the template ends with this slot, and the task's clause goes on: the slot refuses the rest
                del taken[name]
                start = best.start(name)
                return _slot_miss(text, start, slots[name], text[start:].rstrip(".!?;:, \t\n"),
                                  pieces[final - 1][0] if final else "", taken)
            rest = text[end:].strip()
            return Miss("rest", f"the task goes on after the template ends: {_shown(rest)}", at=end, seen=rest, bound=taken)
        # else the group's pieces matched, but the slot after them (piece hi) cannot start where they end
    literal, name = pieces[j]
    if name is not None and slots[name].kind == CHOICE:
        said = " or ".join(f'"{a}"' if a else "nothing" for a in choices(slots[name]))
        return Miss("choice", f"the template says {said} where the task says {_shown(text[end:])}",
                    at=end, expected=said, slot=name, seen=text[end:], bound=taken)
    if name is not None:
        seen = _until(text, end, pieces, by_piece, j + 1, taken)
        return _slot_miss(text, end, slots[name], seen, pieces[j - 1][0] if j else "", taken)
    before = pieces[j - 1][1] if j > 0 else None
    following = pieces[j + 1][1] if j + 1 < len(pieces) else None
    if not _LITERAL_TOKEN.search(literal) and following is not None and slots[following].kind != CHOICE:
        # spacing or punctuation between two values: the value after it is what the task does not say
        seen = _until(text, end, pieces, by_piece, j + 2, taken)
        return _slot_miss(text, end, slots[following], seen.lstrip(" \t"), literal, taken)
    if before is not None and slots[before].kind != CHOICE and before in groups:
        # a literal after a slot: if the task says it further on, the slot refused the text between
        start = best.start(before) if best is not None else end
        found = re.compile(_known("".join(by_piece[j]), taken), _FLAGS).search(text, start)
        if found is not None and found.start() > start:
            del taken[before]
            return _slot_miss(text, start, slots[before], text[start:found.start()], pieces[j - 2][0] if j > 1 else "", taken)
        took = f' ("{_cut(best.group(before))}")' if best is not None and best.group(before) else ""
        return _words_miss(text, end, literal, taken, after=f"after {{{before}}}{took} ", slot=before)
    return _words_miss(text, end, literal, taken)


def _until(text: str, pos: int, pieces: list[tuple[str, str | None]], by_piece: list[list[str]], j: int, bound: dict[str, str]) -> str:
    """The text a slot at ``pos`` sees: up to where the literal words after it are next found, else to the end."""
    literal = pieces[j][0] if j < len(pieces) and pieces[j][1] is None else ""
    if _LITERAL_TOKEN.search(literal):
        found = re.compile(_known("".join(by_piece[j]), bound), _FLAGS).search(text, pos)
        if found is not None:
            return text[pos:found.start()]
    elif literal.strip() and j == len(pieces) - 1:  # the template ends with punctuation ("?"): not the slot's
        return text[pos:].rstrip(literal + " \t\n")
    return text[pos:]


def _words_miss(text: str, pos: int, literal: str, bound: dict[str, str], after: str = "", slot: str | None = None) -> Miss:
    """The first word of ``literal`` the task does not say at ``pos`` (``after`` a slot, if one precedes it)."""
    at = pos
    for token in _LITERAL_TOKEN.finditer(literal):
        said = re.compile(r"\W*" + _words_regex(literal[: token.end()]), _FLAGS).match(text, pos)
        if said is None:
            seen = text[at:].lstrip()
            where = f"where the task says {_shown(seen)}" if seen else "where the task has ended"
            return Miss("words", f'the template says "{token.group()}" {after}{where}', at=at, expected=token.group(),
                        slot=slot, seen=seen, bound=bound)
        at = said.end()
    tokens = list(_LITERAL_TOKEN.finditer(literal))
    tail = literal[tokens[-1].end():].strip() if tokens else literal.strip()
    seen = text[at:].lstrip()
    where = f"where the task says {_shown(seen)}" if seen else "where the task has ended"
    if tail:  # the words are there; the punctuation that carries meaning is not
        return Miss("words", f'the template has "{tail}" {after}{where} (a sign, currency or point next to a value is '
                    "part of what it says)", at=at, expected=tail, slot=slot, seen=seen, bound=bound)
    return Miss("words", f"the template's text ends {after}{where}", at=at, expected=literal, slot=slot, seen=seen, bound=bound)


def _slot_miss(text: str, at: int, slot: Slot, seen: str, before: str, bound: dict[str, str]) -> Miss:
    """A slot refuses ``seen``, the text at ``at`` (after the template's literal ``before``): its
    pattern, and what about the text it refuses."""
    learned = before[-1:] in tuple(_MEANINGFUL_BEFORE)  # the template has a sign or currency there
    while not learned and at > 0 and text[at - 1] in _MEANINGFUL_BEFORE and not seen[:1].isspace():
        at -= 1  # a sign the literal's spacing took is the value's: show it
        seen = text[at] + seen
    said = seen.strip()
    pattern = slot.shape or slot.kind
    described = describe_slot(slot)
    if not said:
        detail = "the task has nothing there"
        head = f"{{{slot.name}}} takes {described}; {detail}"
    else:
        detail = _refused(text, at + (len(seen) - len(seen.lstrip())), slot, said, before)
        head = f'{{{slot.name}}} takes {described}; the task has "{_cut(said)}" there: {detail}'
    return Miss("slot", head, at=at, slot=slot.name, pattern=pattern, pattern_text=described, seen=said, bound=bound)


def _refused(text: str, at: int, slot: Slot, said: str, before: str) -> str:
    """What about ``said`` (at ``at`` in ``text``, after the literal ``before``) the slot's pattern refuses."""
    if any(len(run) > MAX_RUN for run in re.findall(r"\w+", said)):
        return f"a run of more than {MAX_RUN} letters or digits is no value a task says"
    learned = before[-1:] in tuple(_MEANINGFUL_BEFORE)  # the template itself has a sign or currency there
    sign = said[0] in _MEANINGFUL_BEFORE or (not learned and at > 0 and text[at - 1] in _MEANINGFUL_BEFORE)
    if sign and slot.kind in ("int", "number", "money", "digits", "id"):
        return "a sign, currency or point before the value changes what it means, and the template has none there"
    try:
        regex = _slot_regex(slot)
    except ValueError as e:
        return f"its pattern is not valid ({e})"
    taken = re.compile(regex, _FLAGS).match(said)
    if (taken is None or not taken.group()) and slot.shape and slot.kind in ("int", "number", "money") and re.fullmatch(
        r"\$?0+(?:\.0+)?", said
    ):
        return "zero is a value of its own (\"quantity 0\" removes a line), and the slot was learned from others"
    if taken is None or not taken.group():
        return "it does not fit"
    rest = said[taken.end():]
    if rest.startswith("%") or re.match(r"[.,]\d", rest):
        return f'it takes "{taken.group()}", but a percent sign or decimals after it change what it means'
    if rest:
        return f'it takes "{_cut(taken.group())}" but not what follows ("{_cut(rest)}")'
    return "it fits the slot alone, but not where the template puts it"


def _slot_regex(slot: Slot) -> str:
    if slot.kind == LIST:
        return shape_regex(slot.shape, "text") if slot.shape else SLOT_PATTERNS["word"]
    return shape_regex(slot.shape, slot.kind) if slot.shape else SLOT_PATTERNS.get(slot.kind, SLOT_PATTERNS["text"])


def _refusal(template: TaskTemplate, refused: Refused, m: re.Match[str]) -> Miss:
    """A match the template's checks refuse, in words."""
    slots = {s.name: s for s in template.slots}
    slot = slots[refused.slot]
    text = str(refused.text)
    bound = {n: v for n, v in m.groupdict().items() if v is not None}
    at = m.start(refused.slot)
    if refused.check == "negation":
        msg = f'{{{slot.name}}} is text the skill ignores, and it says "{_cut(text)}": ignored text never says "not"'
    elif refused.check == "same":
        msg = (f'{{{slot.name}}} and {{{refused.other}}} said the same value when the skill was learned; the task says '
               f'"{_cut(text)}" and "{_cut(str(bound.get(refused.other or "", "")))}", so which one feeds which is not known yet')
    elif refused.check == "records":
        msg = f'{{{slot.name}}} is a list of "{slot.item}"; an item of "{_cut(text)}" does not bind it'
    elif refused.check == "fraction":
        msg = f'{{{slot.name}}} is a whole number; the task says "{_cut(text)}"'
    else:
        msg = f'{{{slot.name}}} took "{_cut(text)}", which is not {describe_slot(slot)}: it does not convert'
    return Miss(refused.check, msg, at=at, slot=slot.name, pattern=slot.shape or slot.kind,
                pattern_text=describe_slot(slot), seen=text, bound=bound)


# -- slot patterns in words ---------------------------------------------------------------------
_KINDS = {
    "int": "a whole number", "number": "a number", "money": "an amount", "date": "a date", "digits": "digits",
    "id": "an id (letters, digits, '-' or '_', with a digit)", "email": "an email address", "word": "one word",
    "mapping": "a dict written as {'key': 'value'}", "text": "free text (a word or more)", IGNORED: "any text",
}
_DATES = {"iso": "2024-05-20", "slash": "05/20/2024 (month first)", "words": "May 20 or 20th of May"}
_TOKENS = {"9": "digits", "a": "a lowercase word", "A": "an uppercase word", "Aa": "a capitalised word"}
_LEGEND = {"a": "a: lowercase letters", "A": "A: uppercase letters", "9": "9: digits", "x": "x: letters without case"}


def describe_slot(slot: Slot) -> str:
    """A slot's pattern in words.

    >>> describe_slot(Slot("who", "text", "str", shape="words:2-4"))
    '2 to 4 words, in one clause'
    """
    if slot.kind == CHOICE:
        return "one of " + ", ".join(f'"{a}"' for a in choices(slot))
    if slot.kind == LIST:
        item = f'items of "{slot.item}"' if slot.item else describe_shape(slot.shape, "text") if slot.shape else "words"
        seps = " or ".join(f'"{s}"' for s in (slot.transform or "each:,")[5:].split("|"))
        return f"a list of {item}, separated by {seps}"
    if slot.shape is None:
        return _KINDS.get(slot.kind, "text")
    return describe_shape(slot.shape, slot.kind)


def describe_shape(shape: str, kind: str) -> str:
    """A slot shape (``shape_of``) in words."""
    if "||" in shape:
        return " or ".join(describe_shape(part, kind) for part in shape.split("||"))
    if shape == "date" or shape in ("email", "mapping"):
        return _KINDS[shape if shape != "date" else "date"]
    if shape.startswith("date:"):
        return f"a date written like {_DATES.get(shape[5:], shape[5:])}"
    if kind in ("int", "number", "money"):
        zero = re.fullmatch(r"(\$?)0", shape)
        if zero is not None:
            return f"zero{' written with $' if zero[1] else ''}"
        m = re.fullmatch(r"(-?)(\$?)9(\.9)?", shape)
        if m is not None:
            what = "a whole number" if kind == "int" else "a number"
            marks = m[1] + m[2]
            return f"{what} written with {marks!r}, not zero" if marks else f"{what} with no sign or currency, not zero"
    m = re.fullmatch(r"Names:(\d+)-(\d+)", shape)
    if m is not None:
        return f"{m[1]} to {m[2]} capitalised words"
    m = re.fullmatch(r"words:(\d+)-(\d+)(?::(.*))?", shape)
    if m is not None:
        span = m[1] if m[1] == m[2] else f"{m[1]} to {m[2]}"
        ends, _sep, inside = (m[3] or "").partition("~")
        marks = (f" (with {ends!r})" if ends else "") + (f" ({inside!r} inside a word only)" if inside else "")
        return f"{span} word{'s' * (m[2] != '1')}{marks}, in one clause"
    if shape in _TOKENS:
        return _TOKENS[shape]
    prefix = re.fullmatch(r"([^`]*)`([A-Z]{1,4})`(.*)", shape)
    legend = [text for mark, text in _LEGEND.items() if mark in (prefix[1] + prefix[3] if prefix else shape)]
    said = f"; {prefix[2]!r} as written" if prefix else ""
    return f"text shaped like {shape!r} ({', '.join(legend)}{said})" if legend else f"the text {shape!r}"


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _shown(text: str) -> str:
    return f'"{_cut(text)}"' if text else "nothing"
