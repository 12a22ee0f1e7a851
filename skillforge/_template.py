"""Task templates: a task with its lifted spans as typed slots, and deterministic binding.

``"Refund order #{order_id}"`` with ``order_id`` of kind ``digits`` matches
``"refund order 1042."`` (case, whitespace and punctuation are tolerated) and
binds ``order_id="1042"``; it does not match ``"Refund the order 1042"``
(literal words are strict). A failed bind is a miss, never a guess.
"""

from __future__ import annotations

import logging
import re
import string
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = [
    "CHOICE",
    "MAX_TASK_CHARS",
    "IGNORED",
    "LIST",
    "SLOT_PATTERNS",
    "UNUSED",
    "Slot",
    "TaskTemplate",
    "affix_parts",
    "parse_date",
    "parse_mapping",
    "parse_number",
    "shape_key",
    "shape_of",
    "separator_regex",
    "shape_regex",
    "union_shape",
    "PHRASING",
    "Refused",
    "bind_phrasings",
    "kind_union",
    "literal_tokens",
    "slot_kind",
    "transform",
]

logger = logging.getLogger(__name__)

_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
).split()
_MONTH_NUM = {m: (i % 12) + 1 for i, m in enumerate(_MONTHS[:12])} | {
    m: n for m, n in zip(_MONTHS[12:], [1, 2, 3, 4, 6, 7, 8, 9, 9, 10, 11, 12], strict=True)
}
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_DATE_FORMATS = {  # a date slot's shape: the way of writing dates it was learned from
    "iso": r"\d{4}-\d{1,2}-\d{1,2}",
    "slash": r"\d{1,2}/\d{1,2}/\d{4}",  # read month first, as learned; 05/06 is another date in Europe
    "words": rf"(?:{_MONTH_RE})\.?\s+{_DAY}(?:,?\s+\d{{4}})?|{_DAY}\s+(?:of\s+)?(?:{_MONTH_RE})\.?(?:,?\s+\d{{4}})?",
}
DATE_PATTERN = "|".join(_DATE_FORMATS.values())

# Binding is bounded (issue #14). A task longer than MAX_TASK_CHARS never binds and is never
# learned: the longest real task seen is 1,422 characters (tau-bench retail; airline 1,334), so
# 4,000 leaves room. Every run of letters, digits or word characters in a slot pattern is capped at
# MAX_RUN characters (a name, an id or a word longer than 100 characters is no value a task says),
# and every slot but the last is matched once together with the literal text after it (an atomic
# group): a slot ends where the text after it is first found, and no later slot makes an earlier
# one try again. Measured (bench/library_scale.py, its binding section): crafted tasks of 4,000
# characters (runs of punctuation, of quotes, of the template's own words) bind in at most 0.2 ms,
# where the old patterns took 13 s (two word slots, 30k characters) and 150 s (four free-text
# slots, 81 characters). Free text says at least one word and ends with one: its trailing
# punctuation goes to the text after it (as lazy matching gave before), so a run of punctuation
# offers no place for a slot to end.
MAX_TASK_CHARS = 4_000
MAX_RUN = 100
_RUN = "{1,%d}" % MAX_RUN

# Slot kind → regex for the span. Typed kinds are "hot" (indexable by shape key).
SLOT_PATTERNS: dict[str, str] = {
    "int": r"\d+",
    "number": r"\d[\d,]*(?:\.\d+)?",
    "money": r"\$?\d[\d,]*(?:\.\d+)?",
    "date": DATE_PATTERN,
    "digits": r"\d+",
    "id": r"[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*",
    "email": r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    "word": r"[^\W\d_][\w'-]{0,%d}" % (MAX_RUN - 1),
    "mapping": r"\{[^{}\n]{0,2000}\}",  # a dict written as Python writes it: {'color': 'blue'}
    "text": r".*?\w",  # free text says a word, and ends with one (the text after it takes punctuation)
}
_HOT_KINDS = frozenset({"int", "number", "money", "digits", "id", "email"})
_EMAIL = re.compile(SLOT_PATTERNS["email"])
_WORD = re.compile(r"\w+")
_VALUE_MARK = "\u00a7"  # the placeholder a value-like token becomes in a shape key


def slot_kind(value: Any) -> str:
    """The slot kind for a lifted value, from its type and shape.

    >>> [slot_kind(v) for v in (3, 2.5, "1042", "W-77", "a@b.io", "Alice", "12 Elm St")]
    ['int', 'number', 'digits', 'id', 'email', 'word', 'text']
    """
    if isinstance(value, bool):
        return "text"
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "number"
    s = str(value)
    if s.isdigit():
        return "digits"
    if _EMAIL.fullmatch(s):
        return "email"
    if re.fullmatch(SLOT_PATTERNS["id"], s):
        return "id"
    if re.fullmatch(SLOT_PATTERNS["word"], s):
        return "word"
    return "text"


_KEY_TOKEN = re.compile(r"[\w.@+/-]+")
_KEY_WORD = re.compile(r"[^\W_]+")
_VALUE_CHAR = re.compile(r"[\d@]")


def shape_key(task: str) -> str:
    """A task's shape: literal words lowercased, each run of value-like tokens as one mark.

    A token with a digit or ``@`` is a value; other tokens contribute their words.
    Templates compute their key with this same function (hot slots filled with a
    digit), so a task and the template that binds it agree by construction.

    >>> shape_key("Refund order #1042, please!") == shape_key("refund order 77 please")
    True
    """
    out: list[str] = []
    marked = False
    for token in _KEY_TOKEN.findall(task.lower()):
        if token.isalpha():
            out.append(token)
            marked = False
        elif _VALUE_CHAR.search(token):
            if not marked:
                out.append(_VALUE_MARK)
                marked = True
        else:
            words = _KEY_WORD.findall(token)
            if words:
                out.extend(words)
                marked = False
    return " ".join(out)

# -- slot shapes: the narrowest pattern that fits the text a slot was learned from --------------
#
# A shape is a short, readable description kept in the skill's SKILL metadata:
#   "a.a"        a run of lowercase letters, ".", a run of lowercase letters (carol.diaz)
#   "A-9"        uppercase letters, "-", digits;   "AaAa A9": ThinkPad T14
#   "`INC`-9"    an id's uppercase prefix kept as it was (INC-4820): a prefix names a kind of
#                thing (an incident, a change), which the agent may decide on
#   "$9.9" / "-9" / "9"   numbers, with their sign and currency as learned (an int has no decimals),
#                never zero;   "0": zero, which is another decision than an amount ("quantity 0")
#   "words:2-4"  2 to 4 words of free text (":," adds punctuation the learned text had; ":~." a mark
#                it had only inside a token, "v2.3", which never ends a word)
#   "Names:1-3"  1 to 3 capitalised words: names seen in several lengths (Grill, Water Bottle),
#                with a margin of one word, as free text has
#   "date:words" (May 20), "date:iso", "date:slash" (read month first); "email"
# Case is part of a token shape (the text is passed on as written, so "Carol.Diaz" is not
# "carol.diaz"); no shape crosses a sentence or clause boundary unless the learned text did.

_CONNECTIVES = ("and", "but", "then", "also", "or", "plus")
_SENTENCE_ENDS = ".!?;:\n"
_LOWER = "a-z\u00df-\u00f6\u00f8-\u00ff"
_UPPER = "A-Z\u00c0-\u00d6\u00d8-\u00de"
_NUMERIC_KINDS = frozenset({"int", "number", "money"})


def _char_class(ch: str) -> str:
    if ch.isdigit() and ch.isascii():
        return "9"
    if ch.islower():
        return "a"
    if ch.isupper():
        return "A"
    if ch.isalpha():
        return "x"  # a letter without case
    return ch


def shape_of(raw: str, kind: str) -> str:
    """The narrowest shape that fits ``raw``, the text a slot of ``kind`` was learned from.

    >>> [shape_of(v, k) for v, k in (("carol.diaz", "id"), ("W-77", "id"), ("$1,200.50", "money"),
    ...                                ("ordered by mistake", "text"), ("ThinkPad T14", "text"))]
    ['a.a', '`W`-9', '$9.9', 'words:2-4', 'AaAa A9']
    """
    text = raw.strip()
    if kind == "date":
        return next((f"date:{name}" for name, p in _DATE_FORMATS.items() if re.fullmatch(p, text, re.IGNORECASE)), "date")
    if kind in ("email", "mapping"):
        return kind
    if kind in _NUMERIC_KINDS:
        sign, currency = ("-" if text.startswith("-") else ""), ("$" if "$" in text else "")
        if re.fullmatch(r"-?\$?0+(?:\.0+)?", text):
            return currency + "0"  # zero: "quantity 0" removes a line; it is no quantity like 3
        return sign + currency + ("9.9" if "." in text else "9")
    words = text.split()
    if len(words) > 1 and (len(words) >= 4 or all(w.isalpha() and w.islower() for w in words)):
        n = len(words)
        margin = max(1, n // 3)
        marks = {c for c in text if not c.isalnum() and not c.isspace() and c not in "'-"}
        # a mark seen only inside a token ("v2.3") may not end a word: "duplicate of INC-4807." is no note
        inside = {c for c in marks if all(0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()
                                          for i, ch in enumerate(text) if ch == c)}
        return f"words:{max(1, n - margin)}-{n + margin}" + _marks("".join(sorted(marks - inside)), "".join(sorted(inside)))
    if kind in ("id", "text"):
        m = _ID_PREFIX.fullmatch(text)
        if m and any(c.isdigit() for c in m[3]):
            return m[1] + "`" + m[2] + "`" + _token_shape(m[3])
    return _token_shape(text)


_ID_PREFIX = re.compile(r"([^\w\s]*)([A-Z]{1,4})([^A-Za-z\s]\S*)")  # "#W123", "INC-4820", "SKU-1"


def _token_shape(text: str) -> str:
    out: list[str] = []
    for ch in text:
        c = " " if ch.isspace() else _char_class(ch)
        if c in "9aAx " and out and out[-1] == c:
            continue  # a run
        out.append(c)
    return "".join(out)


PHRASING = "phrasing"  # the parameter of a skill of several phrasings: which one the task was said in


def bind_phrasings(templates: tuple[TaskTemplate, ...] | list[TaskTemplate], task: str) -> tuple[TaskTemplate, dict[str, Any]] | None:
    """The first of a skill's phrasings that binds ``task``, and what it binds; with several
    phrasings, which one said it too (``phrasing``: 0 for the first)."""
    for k, t in enumerate(templates):
        params = t.bind(task)
        if params is not None:
            return t, {**params, PHRASING: k} if len(templates) > 1 else params
    return None


def kind_union(a: str, b: str) -> str | None:
    """The kind of a slot that took a value of each kind: the same, or text for a word and words."""
    if a == b:
        return a
    return "text" if {a, b} == {"word", "text"} else None


def union_shape(a: str | None, b: str | None) -> str | None:
    """The narrowest shape that fits the texts of both: the same, a wider word count, or either.

    >>> union_shape("a.a", "a.a-a"), union_shape("words:2-4", "words:5-7:,")
    ('a.a||a.a-a', 'words:2-7:,')
    """
    if a is None or b is None:
        return None
    if a == b:
        return a
    listed = re.compile(r"a(?:, a)+")
    if a.startswith("words:") or b.startswith("words:") or (listed.fullmatch(a) or a == "a") and (listed.fullmatch(b) or b == "a"):
        a, b = _as_words(a), _as_words(b)  # "a, a" is a list of two lowercase words
    wa, wb = re.fullmatch(r"words:(\d+)-(\d+)(?::(.*))?", a), re.fullmatch(r"words:(\d+)-(\d+)(?::(.*))?", b)
    if wa and wb:
        (ea, ia), (eb, ib) = _split_marks(wa[3]), _split_marks(wb[3])
        ends = set(ea + eb)
        punct = _marks("".join(sorted(ends)), "".join(sorted(set(ia + ib) - ends)))
        return f"words:{min(int(wa[1]), int(wb[1]))}-{max(int(wa[2]), int(wb[2]))}" + punct
    parts = set(a.split("||")) | set(b.split("||"))
    names = _as_names(parts)
    return names if names is not None else "||".join(sorted(parts))


_NAME_WORD = r"(?:Aa|A-Aa|Aa-Aa)"  # a capitalised word, or two joined by a hyphen ("T-Shirt", "Wi-Fi")
_NAME_WORDS = re.compile(rf"{_NAME_WORD}(?: {_NAME_WORD})*")
_NAMES = re.compile(r"Names:(\d{1,2})-(\d{1,2})")


def _as_names(parts: set[str]) -> str | None:
    """Capitalised words seen in several counts (``Grill``, ``Water Bottle``) as a count range
    with a margin of one word (``Names:1-3``), as free text of lowercase words has; else None."""
    counts: set[int] = set()
    for part in parts:
        m = _NAMES.fullmatch(part)
        if m is not None:
            counts |= {int(m[1]), int(m[2]) - 1}
        elif _NAME_WORDS.fullmatch(part):
            counts.add(part.count(" ") + 1)
        else:
            return None
    if len(counts) < 2:
        return None
    return f"Names:{min(counts)}-{max(counts) + 1}"


def _marks(ends: str, inside: str) -> str:
    """The marks part of a free-text shape: ``:,.`` (they may end a word), ``:,~.`` (``.`` only inside a token)."""
    return (":" + ends + (f"~{inside}" if inside else "")) if ends or inside else ""


def _split_marks(punct: str | None) -> tuple[str, str]:
    """The marks a free-text shape's words may end with, and those seen only inside a token."""
    ends, _sep, inside = (punct or "").partition("~")
    return ends, inside


def _as_words(shape: str) -> str:
    """A token shape of lowercase words and commas (``a, a``) as a free-text shape (``words:2-2:,``)."""
    if not re.fullmatch(r"a(?:,? a)*", shape):
        return shape
    n = shape.count("a")
    return f"words:{n}-{n}" + (":," if "," in shape else "")


def shape_regex(shape: str, kind: str) -> str:
    """The regex of a shape (see ``shape_of``); raises ValueError on a shape it does not know.

    ``"a.a||a.a-a"`` is either shape: the slot was learned from texts of both.
    """
    if "||" in shape:
        return "(?:" + "|".join(shape_regex(part, kind) for part in shape.split("||")) + ")"
    if shape == "date":  # a file from before date shapes: any way of writing a date
        return f"(?:{DATE_PATTERN})"
    if shape.startswith("date:"):
        if shape[5:] not in _DATE_FORMATS:
            raise ValueError(f"unknown date shape {shape!r} (use date:iso, date:slash or date:words)")
        return f"(?:{_DATE_FORMATS[shape[5:]]})"
    if shape in ("email", "mapping"):
        return SLOT_PATTERNS[shape]
    if kind in _NUMERIC_KINDS:
        zero = re.fullmatch(r"(\$?)0", shape)
        if zero is not None:
            return re.escape(zero[1]) + r"0+" + ("" if kind == "int" else r"(?:\.0+)?") + r"(?![\d.,])"
        m = re.fullmatch(r"(-?)(\$?)9(\.9)?", shape)
        if m is None:
            raise ValueError(f"unknown number shape {shape!r} (use 9, 9.9, $9, -9, -$9.9 or 0)")
        nonzero = r"(?!0+(?:\.0+)?(?![\d.,]))"  # a zero is another decision than an amount
        return re.escape(m[1]) + re.escape(m[2]) + nonzero + r"(?:\d{1,3}(?:,\d{3})+|\d+)" + ("" if kind == "int" else r"(?:\.\d+)?")
    names = _NAMES.fullmatch(shape)
    if names is not None:  # capitalised words, as many as the range says
        lo, hi = int(names[1]), int(names[2])
        if not 1 <= lo <= hi:
            raise ValueError(f"unknown name shape {shape!r} (use Names:MIN-MAX)")
        low = f"[{_LOWER}]{_RUN}"
        word = f"[{_UPPER}](?:{low}(?:-[{_UPPER}]{low})?|-[{_UPPER}]{low})"  # hyphenated as _NAME_WORD
        return rf"(?-i:{word}(?:[ \t]+{word}){{{lo - 1},{hi - 1}}})"
    if shape.startswith("words:"):
        m = re.fullmatch(r"words:(\d{1,2})-(\d{1,2})(?::([^\w\s]*))?", shape)
        if m is None or not 1 <= int(m[1]) <= int(m[2]):
            raise ValueError(f"unknown free-text shape {shape!r} (use words:MIN-MAX)")
        lo, hi = int(m[1]), int(m[2])
        punct, inside = _split_marks(m[3])
        if kind == IGNORED and lo < hi and "," in punct:  # a list whose length varied may be one item longer or shorter
            lo, hi = max(1, lo - 1), hi + 1
        seen_ends = "".join(c for c in punct if c in _SENTENCE_ENDS)
        ban = "|".join(_CONNECTIVES)
        inner = "'\u2019\\-" + "".join(re.escape(c) for c in punct + inside)
        run = r"[^\W_]" + _RUN
        word = rf"(?!(?:{ban})\b){run}(?:[{inner}]+{run})*" + (f"[{re.escape(punct)}]?" if punct else "")
        if seen_ends:  # the learned text itself spanned a boundary: so may this one
            word = rf"{run}(?:[{inner}]+{run})*[{re.escape(punct)}]?"
        return rf"{word}(?:[ \t]+{word}){{{lo - 1},{hi - 1}}}"
    parts: list[str] = []
    literal = re.fullmatch(r"([^`]*)`([A-Z]{1,4})`(.*)", shape)
    if literal is not None:  # an id's prefix, as learned
        head, tail = (shape_regex(p, kind)[len("(?-i:") : -1] if p else "" for p in (literal[1], literal[3]))
        return "(?-i:" + head + re.escape(literal[2]) + tail + ")"
    for ch in shape:
        if ch == "9":
            parts.append("[0-9]" + _RUN)
        elif ch == "a":
            parts.append(f"[{_LOWER}]" + _RUN)
        elif ch == "A":
            parts.append(f"[{_UPPER}]" + _RUN)
        elif ch == "x":
            parts.append(r"(?:(?![0-9_])\w)" + _RUN)
        elif ch == " ":
            parts.append(r"[ \t]+")
        elif ch.isalnum() or ch in "\n\r":
            raise ValueError(f"unknown character {ch!r} in slot shape {shape!r}")
        else:
            parts.append(re.escape(ch))
    if not parts:
        raise ValueError("an empty slot shape")
    return "(?-i:" + "".join(parts) + ")"


def separator_regex(separators: str) -> str:
    """The regex of a list slot's separators (``";"``, ``",|and|, and"``: any of them), spacing tolerated.

    >>> import re; re.split(separator_regex(",|and"), "Grill, Desk Lamp and Tablet")
    ['Grill', 'Desk Lamp', 'Tablet']
    """
    out = []
    for sep in sorted(set(separators.split("|")), key=lambda x: (-len(x), x)):
        tokens = re.findall(r"\w+|[^\w\s]", sep)
        if not tokens:
            raise ValueError(f"an empty list separator in {separators!r}")
        out.append("".join(rf"[ \t]+{re.escape(t)}(?=[ \t])" if t[0].isalnum() else rf"[ \t]*{re.escape(t)}" for t in tokens) + r"[ \t]*")
    return "|".join(out)


def parse_number(raw: str) -> float:
    """``"$1,200.50"`` → ``1200.5``."""
    return float(raw.replace("$", "").replace(",", ""))


def parse_date(raw: str, default_year: int | None = None) -> str | None:
    """A date written in a common way, as ISO ``YYYY-MM-DD``; None if it is not a real date.

    >>> parse_date("May 20, 2024"), parse_date("20th of May", 2024), parse_date("05/20/2024")
    ('2024-05-20', '2024-05-20', '2024-05-20')
    """
    import datetime as dt

    text = raw.strip().lower().replace(",", " ")
    m = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", text)
    if m:
        y, mo, d = int(m[1]), int(m[2]), int(m[3])
    elif m := re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4})", text):
        mo, d, y = int(m[1]), int(m[2]), int(m[3])
    else:
        words = re.findall(r"[a-z]+|\d+", text)
        months = [w for w in words if w in _MONTH_NUM]
        numbers = [int(w) for w in words if w.isdigit()]
        if len(months) != 1 or not numbers:
            return None
        mo = _MONTH_NUM[months[0]]
        d = numbers[0]
        y = numbers[1] if len(numbers) > 1 else default_year  # type: ignore[assignment]
        if y is None:
            return None
    try:
        return dt.date(y, mo, d).isoformat()
    except ValueError:
        return None


def parse_mapping(raw: str) -> dict[str, Any] | None:
    """A flat dict written as Python writes it (``{'color': 'blue', 'size': 'M'}``), or None.

    Keys are text and values plain (text, numbers, booleans, None): what a task can say.
    """
    import ast

    try:
        value = ast.literal_eval(raw.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if type(value) is not dict or not all(
        type(k) is str and (v is None or type(v) in (str, int, float, bool)) for k, v in value.items()
    ):
        return None
    return value


SNAKE = re.compile(r"[a-z]+(?:_[a-z]+)+")  # a code word of several words ("gift_card"), which a task writes as words


def transform(raw: str, how: str | None) -> Any:
    """Apply a slot's normalisation to the text it bound (None if the text does not convert)."""
    if how is None:
        return raw
    if how == "lower":
        return raw.lower()
    if how == "upper":
        return raw.upper()
    if how == "title":
        return raw.title()
    if how == "squash":
        return " ".join(raw.split())
    if how == "snake":
        return "_".join(re.split(r"[\s-]+", raw.strip().lower()))
    if how == "number":
        return parse_number(raw)
    if how == "literal":
        return parse_mapping(raw)
    if how.startswith("each:"):
        return [item.strip() for item in re.split(separator_regex(how[5:]), raw.strip())]
    if how.startswith("date"):
        _, _, year = how.partition(":")
        return parse_date(raw, int(year) if year else None)
    if how.startswith(("affix:", "affix?:")):
        before, after = affix_parts(how)
        if how.startswith("affix?:") and raw.startswith(before) and raw.endswith(after) and len(raw) > len(before + after):
            return raw  # said whole
        return f"{before}{raw}{after}"
    raise ValueError(f"unknown slot transform {how!r}")


def affix_parts(how: str) -> tuple[str, str]:
    """The text an ``affix:BEFORE{}AFTER`` (or ``affix?:BEFORE{}AFTER``) transform puts before and after
    the text its slot bound.

    Raises ValueError unless ``how`` is ``affix:`` or ``affix?:`` and text with one ``{}`` and no other brace.
    """
    body = how.partition(":")[2] if how.startswith(("affix:", "affix?:")) else None
    if body is None or body.count("{}") != 1 or body.replace("{}", "").count("{") or body.replace("{}", "").count("}"):
        raise ValueError(f"an affix transform is 'affix:' and the value's text with '{{}}' where the task's text goes, not {how!r}")
    before, _, after = body.partition("{}")
    if not (before or after):
        raise ValueError(f"an affix transform adds text before or after the task's text: {how!r} adds none")
    return before, after


class Refused(NamedTuple):
    """Why the text a template's regex matched binds nothing: which check refused which slot's text.

    ``check`` is ``"negation"`` (ignored text says "not"), ``"same"`` (the slot must say what slot
    ``other`` says), ``"records"`` (an item of a list of records does not bind), ``"convert"``
    (the text does not convert: "February 30") or ``"fraction"`` (a whole-number slot got a fraction).
    """

    check: str
    slot: str
    text: Any
    other: str | None = None


@dataclass(frozen=True, slots=True)
class Slot:
    """A template slot: the parameter it binds, its kind, its Python type, and how its text is normalised.

    ``transform`` is None (the text as written), ``"lower"`` / ``"upper"`` / ``"title"`` (case:
    "cycling helmet" for a record's "Cycling Helmet"),
    ``"squash"`` (runs of whitespace as one space), ``"snake"`` (a code word written as words:
    "Gift card" for ``'gift_card'``),
    ``"number"`` (``$1,200.50`` → 1200.5), ``"date"`` / ``"date:YEAR"`` (to ISO,
    with a year learned from the run when the task gives none) or ``"affix:BEFORE{}AFTER"``
    (the value is the text with what the run added around it: "4820" binds "INC-4820" under
    ``"affix:INC-{}"``, so a task that says the bare number and one that says it whole bind one value),
    or ``"affix?:BEFORE{}AFTER"`` (the same, where runs said the value whole too: text said with the
    affix is taken as it is; ``_antiunify`` widens to it only where no text said bare has the affix's
    punctuation, so which of the two a text is never depends on a guess).
    ``shape`` is the narrowest pattern that fits the text it was learned from
    (``shape_of``); without one the slot takes any text of its kind.
    ``same`` names an earlier slot whose text this one must equal: the two spans
    said the same value when learned, so which feeds which argument is not known yet.
    """

    name: str
    kind: str
    type: str  # "str" | "int" | "float" | "dict" | "list"
    transform: str | None = None
    shape: str | None = None
    same: str | None = None
    item: str | None = None  # a list of records: one item's template ("{item_name} {item_options} to {changes}")
    parts: tuple[Slot, ...] = ()  # the slots of ``item``, in its order; an item binds as a tuple of their values
    optional: bool = False  # a part of an item that some items leave out, with the text before it: those bind it as None


_NO_SLOT = Slot("", "", "")
CHOICE = "choice"  # a slot kind: one of the texts runs showed there (``shape`` lists them, "|"-separated)
IGNORED = "ignored"  # a slot kind: text of the shape runs showed there, which feeds nothing (a persona, a name)
NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|nobody|without)\b|n't\b", re.IGNORECASE)  # never ignored text
LIST = "list"  # a slot kind: several items of one shape, separated as learned ("Grill; Tablet; Desk Lamp")
UNUSED = frozenset({CHOICE, IGNORED})  # slot kinds that are text of the task, not data of the skill
_MAX_KEYS = 64


def choices(slot: Slot) -> list[str]:
    """The texts a choice slot accepts, longest first (an empty one: the region may be absent)."""
    return sorted(set((slot.shape or "").split("|")), key=lambda a: (-len(a), a))


def _literal_regex(text: str) -> str:
    words = _words_regex(text)
    return rf"\W*{words}\W*" if words else r"\W*"


_LITERAL_TOKEN = re.compile(r"\d+(?:[.,]\d+)+\w*|\w+")  # "1.5" and "1,200" are one word of literal text


def literal_tokens(task: str) -> frozenset[str]:
    """The task's words as a template's literal text is matched (lowercased): a template can
    bind the task only if its ``words`` are among these."""
    return frozenset(_LITERAL_TOKEN.findall(task.lower()))


def _words_regex(text: str) -> str:
    """The words of literal text, strict, with any spacing and punctuation between them.

    A number among them keeps its sign, currency, decimal point and percent: literal
    ``by -10`` is not ``by 10``, and literal ``10`` is not ``-10``, ``10.5`` or ``10%``
    (while literal ``1.5 liters`` and ``55-75 lbs`` are themselves).
    """
    out = ""
    for k, m in enumerate(_LITERAL_TOKEN.finditer(text)):
        token = m.group()
        piece = rf"\b{re.escape(token)}\b"
        sep = r"\W++" if k else ""  # possessive: a word follows, which no \W can be
        if any(c.isdigit() for c in token):
            before = text[m.start() - 1] if m.start() else ""
            after = text[m.end()] if m.end() < len(text) else ""
            if before and before in _MEANINGFUL_BEFORE:
                sep = r"\W*" if k else ""  # the sign or point is the text between the words
                piece = re.escape(before) + piece
            else:
                piece = _NOT_AFTER_MEANINGFUL + piece
            piece += "%" if after == "%" else "(?!%)"
            piece += r"(?![.,]\d)"
        out += sep + piece
    return out


def _keys(sample: str, choice_slots: list[Slot]) -> tuple[str, ...]:
    """Shape keys of a template: one per combination of its choices (none if too many: found through Chroma)."""
    combos = [sample]
    for slot in choice_slots:
        combos = [c.replace("\0" + slot.name + "\0", " " + a + " ") for c in combos for a in choices(slot)]
        if len(combos) > _MAX_KEYS:
            return ()
    return tuple(sorted({shape_key(c) for c in combos}))


def _item_template(slot: Slot) -> TaskTemplate:
    """The template of one item of a list of records, checked: its parts are data slots of their own,
    and only the last may be optional."""
    names = [f for _l, f, _s, _c in string.Formatter().parse(slot.item or "") if f is not None]
    if sorted(names) != sorted(p.name for p in slot.parts) or len(set(names)) != len(names) or len(names) < 2:
        raise ValueError(f"list slot {slot.name!r}: its item {slot.item!r} must name each of its parts once, at least two")
    if any(p.kind in UNUSED or p.kind == LIST or p.same is not None for p in slot.parts):
        raise ValueError(f"list slot {slot.name!r}: an item's parts are values (no choice, ignored text, list or same_as)")
    by_name = {p.name: p for p in slot.parts}
    if any(by_name[n].optional for n in names[:-1]):
        raise ValueError(f"list slot {slot.name!r}: only the last part of its item {slot.item!r} may be optional")
    return TaskTemplate(slot.item or "", [by_name[n] for n in names])


def _item_head(slot: Slot) -> TaskTemplate | None:
    """The template of an item of a list of records that leaves out its optional last part (and the
    text before it, and after it): ``{item_name}`` of ``{item_name} {item_options}``; None if no part is optional."""
    pieces = list(string.Formatter().parse(slot.item or ""))
    named = [k for k, (_l, f, _s, _c) in enumerate(pieces) if f is not None]
    last = next(p for p in slot.parts if p.name == pieces[named[-1]][1])
    if not last.optional:
        return None
    text = "".join(_escape_braces(lit) + ("{" + f + "}" if k < named[-1] and f is not None else "") for k, (lit, f, _s, _c) in enumerate(pieces[: named[-1]]))
    return TaskTemplate(text, [p for p in slot.parts if p is not last])


def _escape_braces(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _records(
    raw: str, sub: TaskTemplate, first: re.Pattern[str], head: TaskTemplate | None = None
) -> list[tuple[Any, ...]] | None:
    """The items of a list of records as tuples of their parts' values (None if one does not bind);
    an item said without its optional last part (``head`` binds it) has None there."""
    out: list[tuple[Any, ...]] = []
    text: str | None = raw.strip()
    while text is not None:
        m = first.fullmatch(text)
        values = sub.bind(m.group("item")) if m is not None else None
        if m is not None and values is None and head is not None:
            values = head.bind(m.group("item"))
        if m is None or values is None:
            return None
        out.append(tuple(values.get(p.name) for p in sub.params))
        text = m.group("rest")
    return out


def _assembled(pieces: list[tuple[str, str | None]], by_piece: list[list[str]], by_name: dict[str, Slot]) -> list[tuple[str, int, int]]:
    """The template's regex from the regex of each piece, matched in atomic groups: each group's regex
    and the pieces it covers (``lo`` to ``hi``, exclusive), in order; the regex is their concatenation.

    The text before the first data slot is one group; each data slot but the last is one group
    with the text up to the next data slot (literal text and choices). A group is matched once:
    a slot ends at the first place where that text follows it (the longest, for a shaped slot),
    and no later slot makes an earlier one try again. So binding costs about the task's length
    times the number of slots, where backtracking cost the length to the power of the number of
    free-text slots. Where that text may be empty (nothing delimits the slot), the slot is
    matched as before, with the next one.
    """
    data = [i for i, (_l, name) in enumerate(pieces) if name is not None and by_name[name].kind != CHOICE]
    if not data:
        return [("".join("".join(p) for p in by_piece), 0, len(pieces))]
    bounds = [0, *data, len(pieces)]
    out: list[tuple[str, int, int]] = []
    pending, start = "", 0
    for k in range(len(bounds) - 1):
        lo, hi = bounds[k], bounds[k + 1]
        group = pending + "".join("".join(by_piece[j]) for j in range(lo, hi))
        pending = ""
        if hi == len(pieces):  # the last slot and what follows it: matched to the end of the task
            out.append((group, start, hi))
            break
        tail = "".join("".join(by_piece[j]) for j in range(lo + (k > 0), hi))
        if k > 0 and (not tail or re.fullmatch(re.sub(r"\(\?P<\w+>", "(?:", tail), "", re.IGNORECASE | re.DOTALL) is not None):
            pending = group  # nothing delimits this slot: matched with the next one
            continue
        # the group ends where the next slot can start (its "#", "$" or "{" is not spacing); for
        # free text, which may start anywhere, only the sign or point before it is checked
        nxt = by_name[pieces[hi][1] or ""]
        if nxt.kind in ("text", IGNORED) and nxt.shape is None:
            guard = _NOT_AFTER_MEANINGFUL if by_piece[hi][0] == _NOT_AFTER_MEANINGFUL else ""
        else:
            guard = "(?=" + re.sub(r"\(\?P<\w+>", "(?:", "".join(by_piece[hi])) + ")"
        out.append(("(?>" + group + guard + ")", start, hi))
        start = hi
    return out


class TaskTemplate:
    """A compiled task template.

    Example:
        >>> t = TaskTemplate("Refund order #{order_id}", [Slot("order_id", "digits", "str")])
        >>> t.bind("refund order 1042.")
        {'order_id': '1042'}
        >>> t.bind("Refund the order 1042") is None
        True
    """

    __slots__ = ("text", "slots", "_pattern", "_regex", "keys", "specificity", "_convert", "_same", "_ignored", "max_chars", "params", "words",
                 "_records", "_pieces", "_by_name")

    def __init__(self, text: str, slots: list[Slot] | tuple[Slot, ...], *, lazy: bool = False) -> None:
        self.text = text
        self.slots = tuple(slots)
        by_name = {s.name: s for s in self.slots}
        pieces: list[tuple[str, str | None]] = []  # (literal, slot name or None)
        for literal, field_name, _spec, _conv in string.Formatter().parse(text):
            pieces.append((literal, None))
            if field_name is not None:
                if field_name not in by_name:
                    raise ValueError(f"template {text!r} names slot {field_name!r} with no definition")
                pieces.append(("", field_name))
        self._pieces = pieces
        self._by_name = by_name
        literal_words = 0
        sample: list[str] = []  # the template with hot slots filled by a digit: its shape key
        hot = True
        for literal, name in pieces:
            if name is None:
                literal_words += len(_WORD.findall(literal))
                sample.append(literal)
            elif by_name[name].kind == CHOICE:
                literal_words += min(len(_WORD.findall(a)) for a in choices(by_name[name]))
                sample.append("\0" + name + "\0")
            elif by_name[name].kind in _HOT_KINDS:
                sample.append("0")
            else:
                hot = False
        self._pattern: str | None = None
        self._records: dict[str, tuple[TaskTemplate, re.Pattern[str], TaskTemplate | None]] | None = None
        if not lazy:  # built now, which checks every slot's shape and list; lazily when first bound
            self._build()
        records = {n for _l, n in pieces if n is not None and by_name[n].kind == LIST and by_name[n].item is not None}
        self._regex: re.Pattern[str] | None = None  # compiled on first use: opening 10k skills compiled 10k regexes (6 s)
        # the literal words any task it binds says (lowercased tokens): what the word index looks up
        self.words = frozenset(t.lower() for literal, name in pieces if name is None for t in _LITERAL_TOKEN.findall(literal))
        self.keys = _keys("".join(sample), [s for s in self.slots if s.kind == CHOICE]) if hot else ()
        self.params = tuple(s for s in self.slots if s.kind not in UNUSED)  # what a skill takes: choices are not data
        typed = sum(1 for s in self.slots if s.kind in _HOT_KINDS)
        # more literal words first, then more typed (narrower) slots, then fewer slots
        self.specificity = (literal_words, typed, -len(self.params))
        self.max_chars = MAX_TASK_CHARS  # past it a task does not bind: the agent takes it
        self._convert = tuple(
            (s.name, s.transform, s.type) for s in self.slots
            if s.name not in records and (s.transform is not None or s.type in ("int", "float"))
        )
        for s in self.slots:
            if s.kind == LIST and not (s.transform or "").startswith("each:"):
                raise ValueError(f"list slot {s.name!r} needs a transform 'each:SEPARATORS' (for example 'each:;')")
        self._same = tuple((s.name, s.same) for s in self.slots if s.same is not None)
        self._ignored = tuple(s.name for s in self.slots if s.kind == IGNORED)
        for name, other in self._same:
            if other not in by_name:
                raise ValueError(f"slot {name!r} must equal slot {other!r}, which the template does not define")

    def _build(self) -> None:
        """Make the template's pattern (and the item patterns of its lists of records) from its pieces."""
        by_piece, records = self._piece_regexes()
        self._pattern = "".join(regex for regex, _lo, _hi in _assembled(self._pieces, by_piece, self._by_name))
        self._records = records

    def _piece_regexes(self) -> tuple[list[list[str]], dict[str, tuple[TaskTemplate, re.Pattern[str], TaskTemplate | None]]]:
        """The regex of each piece (in parts), and the item patterns of its lists of records."""
        pieces, by_name = self._pieces, self._by_name
        by_piece: list[list[str]] = []  # the regex of each piece
        records: dict[str, tuple[TaskTemplate, re.Pattern[str], TaskTemplate | None]] = {}  # list of records → (item template, first item and rest, item without its optional part)
        seen: set[str] = set()
        n = len(pieces)
        for i, (literal, name) in enumerate(pieces):
            regex_parts: list[str] = []
            by_piece.append(regex_parts)
            if name is None:
                words = _WORD.findall(literal)
                between_slots = (  # two values side by side need something between them (a choice may be empty)
                    0 < i < n - 1
                    and by_name.get(pieces[i - 1][1] or "", _NO_SLOT).kind not in ("", CHOICE)
                    and by_name.get(pieces[i + 1][1] or "", _NO_SLOT).kind not in ("", CHOICE)
                )
                before, middle, after = _split_adjacent(literal, i > 0 and pieces[i - 1][1] is not None,
                                                        i < n - 1 and pieces[i + 1][1] is not None)
                regex_parts.append(re.escape(before))
                if words:
                    said = _words_regex(literal)  # possessive \W* where a word boundary follows
                    regex_parts.append((r"\W*+" if said.startswith((r"\b", _NOT_AFTER_MEANINGFUL)) else r"\W*") + said + r"\W*")
                elif between_slots and literal and not (before or after):
                    regex_parts.append(r"\W+")
                elif middle or i in (0, n - 1):
                    regex_parts.append(r"\W*")
                regex_parts.append(_NOT_AFTER_MEANINGFUL + re.escape(after) if after else "")
            elif by_name[name].kind == CHOICE:  # text that differed between runs and fed nothing: one of those seen
                alternatives = choices(by_name[name])
                regex_parts.append(f"(?P<{name}>" + "|".join(_literal_regex(a) for a in alternatives) + ")")
            else:
                slot = by_name[name]
                prev = pieces[i - 1][0] if i else ""
                if not _ends_meaningful(prev):  # no sign, currency or point may precede the value unless learned
                    regex_parts.append(_NOT_AFTER_MEANINGFUL)
                if name in seen:
                    regex_parts.append(f"(?P={name})")
                elif slot.kind == LIST:  # items of one shape, separated as learned
                    sep = separator_regex((slot.transform or "each:,")[5:])
                    if slot.item is not None:  # records: each item of the item template
                        sub = _item_template(slot)
                        head = _item_head(slot)
                        item = re.sub(r"\(\?P<\w+>", "(?:", sub._pattern)
                        if head is not None:  # or the item without its optional part
                            item = f"{item}|" + re.sub(r"\(\?P<\w+>", "(?:", head._pattern)
                        records[name] = (sub, re.compile(
                            f"(?P<item>{item})(?:(?:{sep})(?P<rest>(?:{item})(?:(?:{sep})(?:{item}))*))?", re.IGNORECASE | re.DOTALL
                        ), head)
                    else:
                        item = shape_regex(slot.shape, "text") if slot.shape else SLOT_PATTERNS["word"]
                    regex_parts.append(f"(?P<{name}>(?:{item})(?:(?:{sep})(?:{item}))*)")
                    seen.add(name)
                else:
                    pattern = shape_regex(slot.shape, slot.kind) if slot.shape else SLOT_PATTERNS.get(slot.kind, SLOT_PATTERNS["text"])
                    regex_parts.append(f"(?P<{name}>{pattern})")
                    seen.add(name)
                nxt = pieces[i + 1][0] if i + 1 < n else ""
                regex_parts.append(r"(?!\w)" + ("" if nxt.startswith("%") else _NO_UNIT_AFTER))
        if pieces and pieces[-1][1] is not None:  # ends with a slot: allow trailing punctuation
            regex_parts.append(r"\W*")
        return by_piece, records

    def anatomy(self) -> tuple[list[tuple[str, str | None]], list[list[str]], list[tuple[str, int, int]]]:
        """How the template matches, for explaining a miss (``_misses``): its pieces (literal text, or
        a slot's name), the regex of each piece (in parts), and its atomic groups with the pieces each
        covers. ``regex`` is the concatenation of the groups; raises ValueError as building does."""
        by_piece, _records = self._piece_regexes()
        return self._pieces, by_piece, _assembled(self._pieces, by_piece, self._by_name)

    @property
    def regex(self) -> re.Pattern[str]:
        """The template's regex (compiled when first needed)."""
        if self._regex is None:
            try:
                if self._pattern is None:
                    self._build()
                self._regex = re.compile(self._pattern, re.IGNORECASE | re.DOTALL)  # type: ignore[arg-type]
            except (ValueError, re.error, RecursionError, MemoryError, OverflowError) as e:  # a hand-edited SKILL checked
                # when read, yet refused by the regex engine: the template binds nothing rather than fail a solve
                logger.warning("template %r does not compile (%s); it binds no task", self.text, e)
                self._regex = re.compile(r"(?!)")
        return self._regex

    def bind(self, task: str) -> dict[str, Any] | None:
        """The slot values for ``task``, or None if it does not fit this template."""
        if len(task) > self.max_chars:
            return None
        m = self.regex.fullmatch(task.strip())
        if m is None:
            return None
        out = self.values(m)
        return out if type(out) is dict else None

    def values(self, m: re.Match[str]) -> dict[str, Any] | Refused:
        """The slot values of a match of ``regex``, or why the text it matched binds nothing."""
        out: dict[str, Any] = {k: v for k, v in m.groupdict().items() if k[0] != "_"}
        for name in self._ignored:
            if NEGATION.search(m.group(name) or ""):
                return Refused("negation", name, m.group(name))  # text a skill ignores never says "not"
        for name, other in self._same:
            if _said(out[name]) != _said(out[other]):
                return Refused("same", name, out[name], other)  # learned from one value said twice: another shape
        for name, (sub, first, head) in self._records.items():  # type: ignore[union-attr]  # built with the regex
            items = _records(out[name], sub, first, head)
            if items is None:
                return Refused("records", name, out[name])
            out[name] = items
        for name, how, kind in self._convert:
            raw = out[name]
            value = transform(raw, how) if how is not None else raw
            if value is None:
                return Refused("convert", name, raw)  # e.g. "February 30": not a date, so not a binding
            if kind == "int":
                if type(value) is float and not value.is_integer():
                    return Refused("fraction", name, raw)
                value = int(value) if type(value) is float else int(value.replace(",", ""))
            elif kind == "float":
                value = float(value) if type(value) is not str else parse_number(value)
            out[name] = value
        return out

    def chosen(self, task: str) -> dict[str, str]:
        """For each choice slot, which of its texts ``task`` says there ({} if it does not bind)."""
        m = self.regex.fullmatch(task.strip()) if len(task) <= self.max_chars else None
        if m is None:
            return {}
        out = {}
        for slot in self.slots:
            if slot.kind == CHOICE:
                said = m.group(slot.name) or ""
                out[slot.name] = next(
                    (a for a in choices(slot) if re.fullmatch(_literal_regex(a), said, re.IGNORECASE)), said.strip()
                )
        return out

    def __repr__(self) -> str:
        return f"TaskTemplate({self.text!r})"


# A sign, currency or decimal point next to a value changes what it means: it is kept
# as literal text of the template (required), and where the template has none, a value
# that carries one does not bind.
_MEANINGFUL_BEFORE = "-+$\u20ac\u00a3\u00a5."
_NOT_AFTER_MEANINGFUL = r"(?<![-+$\u20ac\u00a3\u00a5.])"
_NO_UNIT_AFTER = r"(?!%|[.,]\d)"


def _ends_meaningful(literal: str) -> bool:
    return bool(literal) and literal[-1] in _MEANINGFUL_BEFORE


def _split_adjacent(literal: str, after_slot: bool, before_slot: bool) -> tuple[str, str, str]:
    """``(head, middle, tail)``: the punctuation that touches a slot and carries meaning is kept exactly.

    ``"$"`` before a slot and ``"%"`` after one are required text; the rest of the
    literal is matched loosely (words strict, spacing and other punctuation tolerated).
    """
    head = ""
    if after_slot and literal.startswith("%"):
        head = "%"
    rest = literal[len(head) :]
    tail = ""
    if before_slot:
        touching = re.search(r"[^\w\s]*$", rest).group()  # type: ignore[union-attr]
        k = next((j for j, c in enumerate(touching) if c in _MEANINGFUL_BEFORE), None)
        if k is not None:
            tail = touching[k:]
    middle = rest[: len(rest) - len(tail)]
    return head, middle, tail


def _said(text: str) -> str:
    return text.replace("$", "").replace(",", "").strip().lower()
