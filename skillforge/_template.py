"""Task templates: a task with its lifted spans as typed slots, and deterministic binding.

``"Refund order #{order_id}"`` with ``order_id`` of kind ``digits`` matches
``"refund order 1042."`` (case, whitespace and punctuation are tolerated) and
binds ``order_id="1042"``; it does not match ``"Refund the order 1042"``
(literal words are strict). A failed bind is a miss, never a guess.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Any

__all__ = ["SLOT_PATTERNS", "Slot", "TaskTemplate", "shape_key", "slot_kind"]

# Slot kind → regex for the span. Typed kinds are "hot" (indexable by shape key).
SLOT_PATTERNS: dict[str, str] = {
    "int": r"\d+",
    "number": r"\d[\d,]*(?:\.\d+)?",
    "digits": r"\d+",
    "id": r"[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*",
    "email": r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    "word": r"[^\W\d_][\w'-]*",
    "text": r".+?",
}
_HOT_KINDS = frozenset({"int", "number", "digits", "id", "email"})
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


def _to_float(raw: str) -> float:
    return float(raw.replace(",", ""))


@dataclass(frozen=True, slots=True)
class Slot:
    """A template slot: the parameter it binds, its kind and its Python type."""

    name: str
    kind: str
    type: str  # "str" | "int" | "float"


class TaskTemplate:
    """A compiled task template.

    Example:
        >>> t = TaskTemplate("Refund order #{order_id}", [Slot("order_id", "digits", "str")])
        >>> t.bind("refund order 1042.")
        {'order_id': '1042'}
        >>> t.bind("Refund the order 1042") is None
        True
    """

    __slots__ = ("text", "slots", "regex", "key", "specificity", "_convert")

    def __init__(self, text: str, slots: list[Slot] | tuple[Slot, ...]) -> None:
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
        regex_parts: list[str] = []
        sample: list[str] = []  # the template with hot slots filled by a digit: its shape key
        hot = True
        literal_words = 0
        seen: set[str] = set()
        n = len(pieces)
        for i, (literal, name) in enumerate(pieces):
            if name is None:
                words = _WORD.findall(literal)
                literal_words += len(words)
                between_slots = 0 < i < n - 1 and pieces[i - 1][1] is not None and pieces[i + 1][1] is not None
                if words:
                    regex_parts.append(r"\W*" + r"\W+".join(rf"\b{re.escape(w)}\b" for w in words) + r"\W*")
                elif between_slots and literal:
                    regex_parts.append(r"\W+")
                elif literal or i in (0, n - 1):
                    regex_parts.append(r"\W*")
                sample.append(literal)
            else:
                slot = by_name[name]
                if name in seen:
                    regex_parts.append(f"(?P={name})")
                else:
                    regex_parts.append(f"(?P<{name}>{SLOT_PATTERNS[slot.kind]})")
                    seen.add(name)
                if slot.kind in _HOT_KINDS:
                    sample.append("0")
                else:
                    hot = False
        if pieces and pieces[-1][1] is not None:  # ends with a slot: allow trailing punctuation
            regex_parts.append(r"\W*")
        self.regex = re.compile("".join(regex_parts), re.IGNORECASE | re.DOTALL)
        self.key = shape_key("".join(sample)) if hot else None
        typed = sum(1 for s in self.slots if s.kind in _HOT_KINDS)
        # more literal words first, then more typed (narrower) slots, then fewer slots
        self.specificity = (literal_words, typed, -len(self.slots))
        self._convert = tuple((s.name, int if s.type == "int" else _to_float) for s in self.slots if s.type in ("int", "float"))

    def bind(self, task: str) -> dict[str, Any] | None:
        """The slot values for ``task``, or None if it does not fit this template."""
        m = self.regex.fullmatch(task.strip())
        if m is None:
            return None
        out: dict[str, Any] = m.groupdict()
        for name, convert in self._convert:
            out[name] = convert(out[name])
        return out

    def __repr__(self) -> str:
        return f"TaskTemplate({self.text!r})"
