"""Task spans: where a value occurs in the task's text, as a whole token, verbatim or normalised."""

from __future__ import annotations

import itertools
import re
from typing import Any

from ._template import DATE_PATTERN, SLOT_PATTERNS, SNAKE, parse_date, parse_mapping, parse_number, slot_kind

__all__ = ["TOKEN_END", "TOKEN_START", "TaskSpans", "pieces"]

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# a whole token of the task: not part of "gina.rossi", "INC-4820" or "a@b.io" (a sentence's full stop may follow)
TOKEN_START = r"(?<!\w)(?<!\w[.@_/-])"
TOKEN_END = r"(?!\w|[.@_/-]\w)"
_NUMBER_SPAN = re.compile(r"(?<![\w.$-])-?\$?\d[\d,]*(?:\.\d+)?(?![\w]|\.\d)")


class TaskSpans:
    """Finds values in the task text, on word boundaries, without overlaps."""

    def __init__(self, task: str) -> None:
        self.task = task
        self.claimed: list[tuple[int, int, str]] = []  # (start, end, param name)

    def _overlaps(self, start: int, end: int) -> str | None:
        for s, e, name in self.claimed:
            if start < e and s < end:
                return name if (s, e) == (start, end) else ""
        return None

    def find(self, value: Any, at: tuple[int, int] | None = None) -> tuple[int, int, str, str | None] | None:
        """``(start, end, slot kind, transform)`` of the first span of the task that says ``value`` and is
        free or already says it (``at``: that span only).

        Verbatim first; then normalised: case (``"ALICE"`` → ``"alice"``), number formats
        (``"$1,200.50"`` → ``1200.5``), common date formats (``"May 20"`` → ``"2024-05-20"``).
        """
        for start, end, kind, how in self._candidates(value):
            if at is not None and (start, end) != at:
                continue
            hit = self._overlaps(start, end)
            if hit is None or hit:
                return start, end, kind, how
        return None

    def occurrences(self, value: Any) -> list[tuple[int, int, str, str | None]]:
        """Every span of the task that says ``value``, claimed or not: ``(start, end, slot kind, transform)``."""
        return self._candidates(value)

    def _candidates(self, value: Any) -> list[tuple[int, int, str, str | None]]:
        task = self.task
        out: list[tuple[int, int, str, str | None]] = []
        t = type(value)
        if t is str:
            if (len(value) < 2 and not value.isdigit()) or (_absent(value, task) and not _ISO_DATE.fullmatch(value)):
                return out  # (not there in any way written below: no pattern to compile for it)
            kind = slot_kind(value)
            pattern = rf"{TOKEN_START}{re.escape(value)}{TOKEN_END}"
            if _ISO_DATE.fullmatch(value):  # any common way of writing a date binds, as ISO
                out += [(m.start(), m.end(), "date", "date") for m in re.finditer(pattern, task)]
            else:
                out += [(m.start(), m.end(), kind, None) for m in re.finditer(pattern, task)]
            if " " in value.strip():  # the same words, spaced differently in the task
                words = value.split()
                spaced = r"\s+".join(re.escape(w) for w in words)
                loose = rf"{TOKEN_START}{spaced}{TOKEN_END}"
                for m in re.finditer(loose, task):
                    if m.group() != value and " ".join(m.group().split()) == value:
                        out.append((m.start(), m.end(), kind, "squash"))
            for m in re.finditer(pattern, task, re.IGNORECASE):
                raw = m.group()
                if raw != value and raw.lower() == value:
                    out.append((m.start(), m.end(), kind, "lower"))
                elif raw != value and raw.upper() == value:
                    out.append((m.start(), m.end(), kind, "upper"))
                elif raw != value and raw.title() == value and value != value.lower() and (
                    re.search(r"\w[\s-]\w", value) or raw in (raw.lower(), raw.upper())
                ):
                    # "cycling helmet" for "Cycling Helmet": a name of several words; or one word the task
                    # writes all in capitals or all in lower case ("AARAV", "yusuf" for "Aarav", "Yusuf").
                    # A capitalised word written as is may be only the first word of a sentence.
                    out.append((m.start(), m.end(), kind, "title"))
            if SNAKE.fullmatch(value):  # a code word written as words: "gift card", "Gift-Card" for 'gift_card'
                words = r"[\s-]+".join(re.escape(w) for w in value.split("_"))
                for m in re.finditer(rf"{TOKEN_START}{words}{TOKEN_END}", task, re.IGNORECASE):
                    out.append((m.start(), m.end(), slot_kind(m.group()), "snake"))
            if _ISO_DATE.fullmatch(value):
                year = int(value[:4])
                for m in re.finditer(rf"(?<![\w/-])(?:{DATE_PATTERN})(?![\w/-])", task, re.IGNORECASE):
                    raw = m.group()
                    if raw == value:
                        continue
                    has_year = re.search(r"\d{4}", raw) is not None
                    if parse_date(raw, None if has_year else year) == value:
                        out.append((m.start(), m.end(), "date", "date" if has_year else f"date:{year}"))
        elif t is dict:
            for m in re.finditer(SLOT_PATTERNS["mapping"], task):
                if parse_mapping(m.group()) == value:
                    out.append((m.start(), m.end(), "mapping", "literal"))
        elif t is int or t is float:
            for m in _NUMBER_SPAN.finditer(task):
                raw = m.group()
                if parse_number(raw) != value:
                    continue
                plain = re.fullmatch(r"-?\d+" if t is int else r"-?\d+(?:\.\d+)?", raw) is not None
                if plain:
                    out.append((m.start(), m.end(), "int" if t is int else "number", None))
                else:
                    out.append((m.start(), m.end(), "money", "number"))
        return out


def _absent(value: str, task: str) -> bool:
    """Whether no way ``_candidates`` writes ``value`` (as is, spaced otherwise, in other case, as words for
    its underscores) can be in ``task``: each begins with its first word, ignoring case. Said only of ASCII
    texts, where ignoring case is lowering both (``re.IGNORECASE`` also folds some other letters)."""
    if not (value.isascii() and task.isascii()):
        return False
    first = _FIRST_WORD.split(value.strip().lower(), maxsplit=1)[0]
    return first not in task.lower()


_FIRST_WORD = re.compile(r"[\s_-]+")
_CUT = re.compile(r"(?<=[.!?;])[\"')\]]*[ \t]+|\n\s*")
# finer cuts, inside a sentence: after a comma, and before a connective word of English (used the way
# sentence punctuation is: where one request may end and the next begin, never what a request is)
_CONNECTIVE = r"(?:and|also|then|plus)"
_FINE_CUT = re.compile(rf",[ \t]+|[ \t]+(?={_CONNECTIVE}\b)", re.IGNORECASE)
_ONLY_CONNECTIVES = re.compile(rf"\W*(?:{_CONNECTIVE}\W*)+", re.IGNORECASE)


def pieces(text: str, *, fine: bool = False) -> list[tuple[int, int]]:
    """The sentence-like pieces of ``text`` as ``(start, end)``: cut after ``.``, ``!``, ``?`` or ``;`` and
    a space, and at line breaks; the space stays with the piece before.

    ``fine``: also cut after a comma and before ``and``, ``also``, ``then`` or ``plus``; a piece of such
    words only (``"and "`` of ``", and also add"``) joins the piece after it."""
    cuts = {m.end() for m in _CUT.finditer(text) if 0 < m.end() < len(text)}
    if fine:
        cuts |= {m.end() for m in _FINE_CUT.finditer(text) if 0 < m.end() < len(text)}
    bounds = sorted({0, *cuts, len(text)})
    out = [(a, b) for a, b in itertools.pairwise(bounds) if text[a:b].strip()]
    if fine:
        joined: list[tuple[int, int]] = []
        carry: int | None = None
        for a, b in out:
            start = a if carry is None else carry
            if _ONLY_CONNECTIVES.fullmatch(text[a:b]) and (a, b) != out[-1]:
                carry = start
                continue
            joined.append((start, b))
            carry = None
        out = joined
    return out
