"""Lifting: Trajectory → SkillSpec. Every argument is traced to where it came from.

Rules, in order, for each argument value (and for the run's output):

1. **Task span** — a value that occurs in the task text (on word boundaries)
   becomes a parameter, and its span a slot of the task template. A span used
   twice is one parameter.
2. **Reference** — a value equal to something inside an earlier tool result
   becomes a reference to it (``order["payment_id"]``); the earliest call and
   the shallowest path win.
3. **Containers** — a list or dict not found whole is lifted element by element.
4. **Composition** — a string built from parameters and result values becomes
   an f-string (``f"Order {order_id} is {order['status']}"``).
5. **Constant** — anything else stays a learned constant, marked in the skill.

Task spans beat result values: what the user asked for is the stronger source.
Pure and deterministic: the same trajectory gives the same spec.
"""

from __future__ import annotations

import keyword
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ._antiunify import quoted_ignored
from ._formats import NUMBER_FORMATS, SAID_FORMATS, placed, signs, written_facts
from ._guards import derive_guards
from ._lists import Listing, each_guards, mentions
from ._names import checked_ids
from ._policy import RESERVED
from ._probes import Probed
from ._records import fold, map_blocks, record_template
from ._runchecks import coincidences, element_ref, positional_pins, quoted_item, quoted_parts, tied_constant, unexplained_numbers
from ._selecting import Selecting, _dig, _singular, own_key, referred
from ._spans import TOKEN_END, TOKEN_START, TaskSpans, pieces
from ._spec import Const, DictOf, Each, Expr, Fmt, Guard, Join, Len, ListOf, Neg, Param, Ref, Select, SkillSpec, Step, Update, range_guard, reaching, spans_of, taken_from
from ._template import CHOICE, IGNORED, LIST, PHRASING, SLOT_PATTERNS, Slot, TaskTemplate, _said, parse_mapping, shape_of, union_shape
from ._trajectory import Trajectory, canonical_json
from ._values import _categorical, _leaves, collection, refs_in, resolve, walk_exprs
from ._values import core as bare  # a text as near() compares it

__all__ = ["Rejected", "Site", "discover_template", "expr_at", "lift", "skill_name"]

_MAX_NODES = 5000  # per result: beyond this, deeper values are not indexed
_VERB_PREFIXES = ("get_", "fetch_", "find_", "lookup_", "look_up_", "list_", "search_", "read_", "load_", "query_")
_STOP_WORDS = frozenset(
    "a an the of to for on in is are was my me i you your our please with and at by from "
    "can could would will this that it be do does did".split()
)
# Names generated names never take: what the policy keeps a skill's names from shadowing (helpers,
# safe builtins, constants, SKILL), plus "result" and the phrasing parameter. A name that would be
# one of them gets a trailing "_" (``fetch_all`` → ``all_``, a parameter ``max`` → ``max_``).
_RESERVED = RESERVED | {"result", PHRASING}
_IDENT = re.compile(r"[^0-9a-zA-Z_]+")


@dataclass(frozen=True, slots=True)
class Rejected:
    """A run that cannot become a skill, and why.

    ``numbers``: where that is only numbers the answer says as its own text, which nothing explains
    (a computed value?), each as ``(the answer's literal text it stands in, the number)``: runs of
    other worlds that say them there too may learn them as text (``_numbers``). ``as_text``: the run
    lifted with those numbers as text, what it does (whether it is learned so is for its runs to say)."""

    reason: str
    numbers: frozenset[tuple[str, str]] = frozenset()
    as_text: SkillSpec | None = field(default=None, repr=False, compare=False)


def _ident(text: str, fallback: str) -> str:
    name = _IDENT.sub("_", text).strip("_").lower()
    if not name:
        name = fallback
    if name[0].isdigit():
        name = f"{fallback}_{name}"
    if keyword.iskeyword(name) or name in _RESERVED:
        name = f"{name}_"
    return name


def skill_name(template: str, focus: Iterable[str] = ()) -> str:
    """A readable function name from a template's literal words: those of the sentence that says the
    first of the ``focus`` slots (what the skill's first write uses), else of the whole template.

    >>> skill_name("Refund order #{order_id}")
    'refund_order'
    >>> skill_name("What is the status of order {order_id}?")
    'what_status_order'
    >>> skill_name("I'm {email}. You are {persona}. Cancel order #{order_id} because {reason}.", ["order_id"])
    'cancel_order_because'
    """
    marks = [m.start() for name in focus if (m := re.search(r"(?<!\{)\{" + re.escape(name) + r"\}", template))]
    if marks:
        at = min(marks)
        template = next(template[a:b] for a, b in pieces(template) if a <= at < b)
    literal = re.sub(r"\{[^{}]*\}", " ", template.replace("{{", " ").replace("}}", " "))
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", literal)]
    kept = [w for w in words if w not in _STOP_WORDS] or words
    return _ident("_".join(kept[:4]), "skill")


class _Namer:
    """Unique Python names, deterministic in the order they are asked for."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)

    def take(self, base: str) -> str:
        name = base
        i = 2
        while name in self.taken:
            name = f"{base}_{i}"
            i += 1
        self.taken.add(name)
        return name


def _is_scalar(v: Any) -> bool:
    return type(v) in (str, int, float)


Site = tuple[int, tuple[str | int, ...]]  # (call index, or -1 for the answer; path inside its arguments)


class _Lifter(Selecting, Listing):
    def __init__(
        self,
        traj: Trajectory,
        bound: dict[str, Any] | None = None,
        prefer: dict[Site, tuple[Expr, tuple[Expr, ...]]] | None = None,
        roll: bool = True,
        records: dict[str, tuple[str, ...]] | None = None,
        one_listed: bool = True,
    ) -> None:
        self.traj = traj
        self.one_listed = one_listed  # the only element of a list, quoted, is the list listed (``_only_join``)
        self.last_write = -1  # the last step so far that wrote
        self.records = records or {}  # template mode: a list of records → the names of an item's parts
        self.item: tuple[str, int] | None = None  # the item of a list being lifted
        self.item_values: dict[tuple[str, int], set[str]] = {}  # per item: values its arguments took already
        self.roll = roll  # discovery: lists the task writes item by item become one list slot
        self.prefer = prefer or {}  # settled by several runs: the source to use, and the alternatives still open
        self.alts: dict[Site, tuple[Expr, ...]] = {}  # other sources of the same value, for ambiguous choices
        self.agreements: list[tuple[Expr, Expr]] = []  # a value an answer quotes (or a count it says), and another result that held it too
        self.used: dict[str, Expr] = {}  # value → the source chosen for it: an answer quoting it uses the same
        self.spans = TaskSpans(traj.task)
        self.params: dict[tuple[int, int], tuple[str, Any, str, str | None]] = {}  # span → (name, value, kind, how)
        self.bound = bound  # template mode: the slot values the template binds from the task
        self.namer = _Namer(set(traj.tools) | _imported(traj) | _RESERVED | set(bound or ()))
        self.index: dict[str, tuple[int, tuple[str | int, ...]]] = {}  # canonical value → first source
        self.sources: dict[str, list[tuple[int, tuple[str | int, ...]]]] = {}  # scalar → every source (capped)
        self.results: dict[int, Any] = {}
        self.sorted_lists: set[tuple[int, tuple[str | int, ...], tuple[str | int, ...], str]] = set()  # joins either way
        self.keys: dict[str, tuple[str | int, ...]] = {}  # key of an id-keyed dict in a result → that dict's path
        self.selected: dict[tuple[int, tuple[str | int, ...], Any], Select] = {}  # (call, list, index) → how chosen
        self.scalars: list[tuple[str, Expr, int, str]] = []  # (text, expr, priority, format spec)
        self.referenced: set[int] = set()
        self.constants = 0
        self.said: set[str] = set()  # template mode: the parameters used so far
        self.task_dicts = [  # (start, end, dict): the dicts the task writes out
            (m.start(), m.end(), d) for m in re.finditer(SLOT_PATTERNS["mapping"], traj.task) if (d := parse_mapping(m.group())) is not None
        ]
        for pname, v in (bound or {}).items():
            if type(v) is not list:
                self._quotable(v, Param(pname))

    def _quotable(self, value: Any, param: Param) -> None:
        """A task value as an answer may quote it: as is, and a float also as ``10`` or ``10.5`` (``.15g``) and ``10.50``."""
        self.scalars.append((str(value), param, 0, ""))
        for spec in (*NUMBER_FORMATS.get(type(value), ()), *(SAID_FORMATS if type(value) is float else ())):
            if type(value) is float or format(value, spec) != str(value):
                self.scalars.append((format(value, spec), param, 0, spec))

    # -- sources ------------------------------------------------------------------
    def add_result(self, call: int, result: Any) -> None:
        """Index the values of a result, shallowest first (keys sorted): the first source found wins."""
        self.results[call] = result
        queue: deque[tuple[Any, tuple[str | int, ...]]] = deque([(result, ())])
        budget = _MAX_NODES
        while queue and budget > 0:
            v, path = queue.popleft()
            budget -= 1
            if v is None or type(v) is bool or v == "" or v == [] or v == {}:
                continue
            key = canonical_json(v) if not _is_scalar(v) else f"{type(v).__name__}:{v!r}"
            if _is_scalar(v):
                seen = self.sources.setdefault(key, [])
                if len(seen) < 8:
                    seen.append((call, path))
            if key not in self.index:
                self.index[key] = (call, path)
                if _is_scalar(v) and (type(v) is not str or len(v) >= 2):
                    self.scalars.append((str(v), Ref(call, path), 1 + call, ""))
                    for spec in NUMBER_FORMATS.get(type(v), ()):  # a money amount is written 42.50 first
                        if type(v) is float or format(v, spec) != str(v):
                            self.scalars.append((format(v, spec), Ref(call, path), 1 + call, spec))
            if type(v) is list and v and not _under_list(path) and all(_is_scalar(e) for e in v):
                # a count an answer quotes ("has 3 members"), after every value of the results; only of a
                # list of plain values, whose elements carry nothing a count could have filtered by
                self.scalars.append((str(len(v)), Len(Ref(call, path)), 100 + call, ""))
            if type(v) is dict:
                if collection(v):
                    for k in v:
                        self.keys.setdefault(k, path)
                queue.extend((v[k], (*path, k)) for k in sorted(v))
            elif type(v) is list:
                queue.extend((item, (*path, i)) for i, item in enumerate(v))

    def _param(self, value: Any, hint: str, at: tuple[int, int] | None = None) -> Param | None:
        if self.bound is not None:
            for pname, v in self.bound.items():
                if type(v) is type(value) and v == value and (type(v) is not str or len(v) >= 2 or v.isdigit()):
                    self.said.add(pname)
                    return Param(pname)
            return None
        found = self.spans.find(value, at)
        if found is None:
            return None
        start, end, kind, how = found
        span = (start, end)
        if span in self.params:
            name, seen, _kind, _how = self.params[span]
            return Param(name) if type(seen) is type(value) and seen == value else None
        name = self.namer.take(_ident(hint, "value"))
        self.params[span] = (name, value, kind, how)
        self.spans.claimed.append((start, end, name))
        self._quotable(value, Param(name))
        return Param(name)

    def _ref(self, value: Any, hint: str = "value") -> Ref | Select | None:
        key = canonical_json(value) if not _is_scalar(value) else f"{type(value).__name__}:{value!r}"
        src = self.index.get(key)
        if src is None:
            return None
        if own_key(value, src[1]):  # a source elsewhere, where there is one
            src = next(((c, p) for c, p in self.sources.get(key, []) if not own_key(value, p)), src)
        self.referenced.add(src[0])
        if _is_scalar(value):
            for c, p in self.sources.get(key, []):  # prefer the element a selection already chose
                chosen = self._in_selected(c, p)
                if chosen is not None:
                    return chosen
        first = self._selection(*src, hint=hint)
        if first is not None or not _is_scalar(value):
            return first or Ref(*src)
        for c, p in self.sources.get(key, []):  # the value is in several elements: the one the task names
            if (c, p) != src:
                picked = self._selection(c, p, hint=hint)
                if picked is not None:
                    return picked
        return Ref(*src)

    def _resolve(self, ref: Ref, hint: str) -> Ref | Select:
        """A reference into a list, as the selected element when the value is there too, or a new selection."""
        return self._in_selected(ref.call, ref.path) or self._selection(ref.call, ref.path, hint) or ref

    # -- values -------------------------------------------------------------------
    def lift(self, value: Any, hint: str, site: Site) -> Expr:
        if _is_scalar(value):
            found = self._scalar(value, hint, site)
            if found is not None:
                return found
            if type(value) is str and self.prefer.get(site, (None,))[0] != Const(value):  # other runs wrote it as it is
                fmt = self._compose(value, hint, written=site[0] >= 0)
                if fmt is not None:
                    return fmt
            self.constants += 1
            return Const(value)
        if type(value) is dict:
            said = self._param(value, hint)  # a dict the task writes out
            if said is not None:
                return said
        if type(value) in (list, dict) and value:
            call, path = site
            if type(value) is list and all(_is_scalar(v) for v in value):
                # elements the task names (by themselves or by a selection) explain the list better than a
                # result that happens to hold the same list ("return A and B" when the order has A and B)
                saved = self._state()
                each = self._each(value, hint, site)
                if each is not None:
                    return each
                items = tuple(self._element(v, hint, len(value), (call, (*path, i))) for i, v in enumerate(value))
                if any(isinstance(e, Param) for top in items for e in walk_exprs(top)):
                    return self._rolled(items, hint) or ListOf(items)
                self._restore(saved)
            whole = self._ref(value)
            if whole is not None:
                return whole
            if type(value) is list:
                items = tuple(self._element(v, hint, len(value), (call, (*path, i))) for i, v in enumerate(value))
                if all(type(e) is Const for e in items):
                    return Const(value)
                return ListOf(items)
            pairs = tuple((k, self.lift(value[k], k, (call, (*path, k)))) for k in sorted(value))
            if all(type(e) is Const for _, e in pairs):
                return Const(value)
            return DictOf(pairs)
        if value is not None:
            self.constants += 1
        return Const(value)

    def _state(self) -> tuple[Any, ...]:
        """What lifting a value may change, to undo a tentative lift."""
        return (
            dict(self.alts), dict(self.used), dict(self.params), list(self.spans.claimed), set(self.namer.taken),
            dict(self.selected), list(self.scalars), set(self.referenced), self.constants, list(self.agreements),
        )

    def _restore(self, state: tuple[Any, ...]) -> None:
        alts, used, params, claimed, taken, selected, scalars, referenced, self.constants, agreements = state
        self.alts, self.used, self.params, self.selected, self.scalars, self.referenced = alts, used, params, selected, scalars, referenced
        self.agreements = agreements
        self.spans.claimed[:] = claimed
        self.namer.taken = taken

    def _element(self, value: Any, hint: str, n: int, site: Site) -> Expr:
        return self.lift(value, f"{hint}_{site[1][-1]}" if n > 1 else hint, site)

    def _scalar(self, value: Any, hint: str, site: Site) -> Expr | None:
        """The source of a scalar by the rule (task span, then earliest call, shallowest path), noting the others."""
        chosen: Expr | None = self._param(value, hint) or self._affixed(value, hint)
        if chosen is None:
            found = self._ref(value, hint)
            key = f"{type(value).__name__}:{value!r}"
            again = key in self.used or (self.item is not None and key in self.item_values.get(self.item, ()))  # "to {}"
            named = isinstance(found, Select) and any(isinstance(e, Param) for e in walk_exprs(found))
            keyed = isinstance(found, Select) and any(type(k) is str and k in self.keys for k in found.rest)  # ['variants']['42']
            if again or keyed or not named:
                chosen = self._matched(value, hint) or found  # the element the task's changes pick, before a bare reference
            else:
                chosen = found
        if chosen is None:
            if type(value) in (int, float) and value < 0:  # a debit of the amount the task or a result says
                positive = self._param(-value, hint) or self._ref(-value, hint)
                if isinstance(positive, (Param, Ref)):
                    return Neg(positive)
            return None
        others: list[Expr] = []
        for c, p in self.sources.get(f"{type(value).__name__}:{value!r}", []):
            if len(others) >= 2:
                break
            ref = Ref(c, p)
            # a result that echoes what its call was given says nothing about where the agent took the value
            keyed = any(type(k) is str and self.keys.get(k) == p[:j] for j, k in enumerate(p))  # variants['4913411651']
            if ref != chosen and ref not in others and not _under_list(p) and not keyed and not self._echo(c, value):
                others.append(ref)
        if isinstance(chosen, Param) and self.bound:  # the task says the value in two slots: either is its source
            others[:0] = [Param(n) for n, v in self.bound.items() if n != chosen.name and type(v) is type(value) and v == value]
        settled = self.prefer.get(site)
        if settled is not None:
            want, still_open = settled
            if want == chosen or want in others:
                chosen = want
                others = [o for o in others if o in still_open]
        self.used.setdefault(f"{type(value).__name__}:{value!r}", chosen)
        for ref in [chosen, *others]:
            if isinstance(ref, Ref):
                self.referenced.add(ref.call)
        if others:
            self.alts[site] = tuple(o for o in others if o != chosen)
        return chosen

    def _affixed(self, value: Any, hint: str) -> Param | Fmt | None:
        """A value the task says with text added around it: ``#W3614011`` or ``INC-4820`` when the task
        says ``W3614011`` or ``4820``.

        Discovering a template, the task's text becomes a slot that binds the whole value (transform
        ``affix:#{}``), so a task that says it bare and one that says it whole take one parameter and
        make the same calls. Unless the run also uses the bare text on its own (an answer that quotes
        "#4820"): then the parameter is the bare text and the code adds the punctuation (``f"#{order_id}"``).
        What the task says beats a result that happens to hold the whole value (the customer's third
        order), which would ignore the order the task names.
        """
        if type(value) is not str:
            return None
        if self.bound is None:
            found = self._affix_param(value, hint)
            if found is not None:
                return found
        m = re.fullmatch(r"([^\w\s]*)(\w(?:[\w.@-]*\w)?)([^\w\s]*)", value)
        if m is None or not (m[1] or m[3]):
            return None
        core = self._param(m[2], hint)
        if core is None:
            return None
        return Fmt(tuple(p for p in (m[1], (core, ""), m[3]) if p != ""))

    def _affix_param(self, value: str, hint: str) -> Param | None:
        """A parameter for ``value`` bound from a task token it contains, with the rest as an affix.

        The value is one token (no space); its part is cut at punctuation (``INC-`` + ``4820``, ``#`` +
        ``W36``), said verbatim in the task; text added that has letters or digits (``INC-``) is taken only around
        a token with a digit (an id's number). None when the run uses the token bare elsewhere.
        """
        if re.search(r"\s", value):
            return None  # one token: an id, never a sentence around a value
        for start, end in _cores(value):
            core, before, after = value[start:end], value[:start], value[end:]
            if re.search(r"\w", before + after) and not re.search(r"\d", core):
                continue
            if "{" in before + after or "}" in before + after or self._bare_elsewhere(core, value):
                continue
            found = self.spans.find(core)
            if found is None or found[3] is not None or (found[0], found[1]) in self.params:
                continue
            s, e, kind, _how = found
            name = self.namer.take(_ident(hint, "value"))
            self.params[(s, e)] = (name, value, kind, f"affix:{before}{{}}{after}")
            self.spans.claimed.append((s, e, name))
            self._quotable(value, Param(name))
            return Param(name)
        return None

    def _bare_elsewhere(self, core: str, whole: str) -> bool:
        """Whether an argument or the answer says ``core`` other than inside ``whole``."""
        bare = re.compile(rf"{TOKEN_START}{re.escape(core)}{TOKEN_END}")
        texts = [v for c in self.traj.calls for v in _leaves(c.args)] + list(_leaves(self.traj.outcome.output))
        for v in texts:
            if type(v) in (int, float) and str(v) == core:
                return True
            if type(v) is str and bare.search(v.replace(whole, " ")):
                return True
        return False

    def _echo(self, call: int, value: Any) -> bool:
        """Whether ``value`` is among the arguments of ``call`` (any depth)."""
        return any(type(v) is type(value) and v == value for v in _leaves(self.traj.calls[call].args))

    def _deref(self, ref: Ref) -> Any:
        value = self.results[ref.call]
        for key in ref.path:
            value = value[key]
        return value

    def _value_key(self, ref: Ref) -> str:
        value = self.results[ref.call]
        for key in ref.path:
            value = value[key]
        return f"{type(value).__name__}:{value!r}"

    def _compose(self, text: str, hint: str = "value", written: bool = False) -> Fmt | None:
        """Split ``text`` into literal text and known values (longest, then task-first).

        A text a call is given (``written``) is not composed of a field of whichever element of a list
        of several sat at a position (``_by_position``): an answer quotes the elements it read (each
        item listed), a write's text that happens to hold one is a coincidence.

        Words of ``text`` that the task says and that look like values (with a
        digit or ``@``, or capitalised and not opening the task) become parameters
        too: ``"Mia Li"`` from "first name Mia, last name Li".
        """
        if self.bound is None:
            first_word = re.match(r"\W*(\w+)", self.traj.task)
            k = 0
            for m in re.finditer(r"[\w.@+-]*\w", text):
                word = m.group()
                valueish = any(c.isdigit() or c == "@" for c in word) or (word[0].isupper() and len(word) >= 2)
                if not valueish or (first_word is not None and word == first_word.group(1)):
                    continue
                if any(piece == word for piece, _e, _p, _s in self.scalars):
                    continue
                k += 1
                if self._param(word, f"{hint}_{k}") is None:  # "INC-4820" from "#4820": its digits are the task's
                    for run in re.findall(r"\d+", word):
                        if run != word:
                            self._param(run, f"{hint}_{k}")
            # a value the task says beats a result that happens to hold it: "already in vpn-users"
            # says the group the task named, whichever element of the user's groups it was
            for piece, expr, _prio, spec in list(self.scalars):
                if not isinstance(expr, Ref) or spec or len(piece) < 2:
                    continue
                if piece not in text or re.search(rf"(?<![\w.@-]){re.escape(piece)}(?![\w@-]|\.\w)", text) is None:
                    continue
                value = self._deref(expr)
                if type(value) is str:
                    keys = [k for k in expr.path if type(k) is str]
                    self._param(value, _singular(keys[-1]) if keys else "value")
            for m in re.finditer(r"[\w.@+-]*\w", text):  # a key of a result's dict, said by the task
                word = m.group()
                if word in self.keys and len(word) >= 2:
                    owner = [k for k in self.keys[word] if type(k) is str]
                    self._param(word, _singular(owner[-1]) if owner else "key")
        taken: list[tuple[int, int, Expr, str]] = []
        ranked = sorted(self.scalars, key=lambda s: (-len(s[0]), s[2], s[3] == ""))
        for piece, expr, _prio, spec in ranked:
            if isinstance(expr, Ref):  # the value an argument already took from somewhere: quote that source
                expr = self.used.get(self._value_key(expr), expr)
            if isinstance(expr, Ref) and own_key(self._deref(expr), expr.path):
                expr = self._own_record(expr)
            if (len(piece) < 2 and not piece.isdigit()) or piece not in text:
                continue  # (not there at all: no pattern to compile for it)
            bounds = _DIGITS_IN_WORD if piece.isdigit() else (r"(?<![\w.@-])", r"(?![\w@-]|\.\w)")
            found = list(re.finditer(rf"{bounds[0]}{re.escape(piece)}{bounds[1]}", text))
            if found and written and isinstance(expr, Ref) and self._by_position(expr) and isinstance(self._resolve(expr, "value"), Ref):
                continue  # a field of whichever element sat there: an index that merely fit this run explains no text
            for m in found:
                if any(m.start() < e and s < m.end() for s, e, _, _ in taken):
                    continue
                taken.append((m.start(), m.end(), expr, spec))
        if not taken:
            return None
        taken.sort(key=lambda t: t[0])
        parts: list[str | tuple[Expr, str]] = []
        pos = 0
        for s, e, expr, spec in taken:
            if s > pos:
                parts.append(text[pos:s])
            if isinstance(expr, Ref):
                self.referenced.add(expr.call)
                if _under_list(expr.path):
                    expr = self._resolve(expr, "value")
                else:
                    keyed = self._keyed(expr.call, expr.path, "value")  # a record under a key the task does not say
                    keyed = keyed or self._picked_record(expr)  # or one a predicate over the task's values picks
                    if keyed is None:
                        self._agreeing(expr)
                    expr = keyed or expr
            parts.append((expr, spec))
            pos = e
        if pos < len(text):
            parts.append(text[pos:])
        return Fmt(self._counted(self._joins(parts)))

    def _by_position(self, ref: Ref) -> bool:
        """Whether ``ref`` is a field of an element of a list of several, taken by its position, that
        nothing the run took before came from (``order['items'][2]['options']['waterproof']``): a value
        such a path holds fits a text by chance. The element a write took by position (the first item,
        replaced) is the one its answer names."""
        taken = {(r.call, r.path) for e in self.used.values() for r in refs_in(e)}
        for j, key in enumerate(ref.path[:-1]):
            if type(key) is int:
                container = self._deref(Ref(ref.call, ref.path[:j]))
                element = ref.path[: j + 1]
                if type(container) is list and len(container) > 1 and not any(
                    c == ref.call and p[: j + 1] == element for c, p in taken
                ):
                    return True
        return False

    def _picked_record(self, ref: Ref) -> Select | None:
        """A value inside a record of an id-keyed collection, under the record's own id, as the record a
        predicate picks (``_matched``: the variant "in blue" is), so an answer or a text argument that
        says the new variant's price says the price of the variant the task names, before a write
        names it too: ``pick(product['variants'], 'options', updated(...))['price']``. None if no
        predicate picks it."""
        chosen = self._in_selected(ref.call, ref.path)
        if chosen is not None:
            return chosen
        for j, key in enumerate(ref.path[:-1]):
            container = self._deref(Ref(ref.call, ref.path[:j]))
            if type(key) is not str or type(container) is not dict or not collection(container):
                continue
            record = container.get(key)
            if type(record) is not dict or key not in record.values():
                continue  # only a record under its own id, which no task names
            found = self._matched(key, "value")
            if found is not None and found.seq == Ref(ref.call, ref.path[:j]):
                return Select(found.seq, found.field, found.key, ref.path[j + 1 :], found.also)
        return None

    def _own_record(self, ref: Ref) -> Ref | Select:
        """A record's id quoted from under its own key (``user['cards']['card_7']['id']``, which only that
        customer has), as the record whose id a source elsewhere names: ``pick(user['cards'], 'id',
        order['payments'][0]['card_id'])['id']``. The record is then checked as any picked record is (what
        the answer says of it, "your PayPal account", must hold of the next one). Unchanged if no other
        source holds the id."""
        value = self._deref(ref)
        k = ref.path.index(value)
        record = self._deref(Ref(ref.call, ref.path[: k + 1]))
        fields = sorted(f for f, v in record.items() if v == value) if type(record) is dict else []
        for c, p in self.sources.get(self._value_key(ref), []):
            if fields and not own_key(value, p):
                self.referenced.add(c)
                return Select(Ref(ref.call, ref.path[:k]), fields[0], Ref(c, p), ref.path[k + 1 :])
        return ref

    def _counted(self, parts: tuple[str | tuple[Expr, str], ...]) -> tuple[str | tuple[Expr, str], ...]:
        """A count said beside a listing of a whole list (``"It has 3 item(s): a, b, c"``) is that list's
        length, where one listed list has it: a number of the text, or another list's length that happened
        to be the same (whose agreement the skill then checks: either may be what the agent counted)."""
        listed: dict[int, list[Ref]] = {}
        for part in parts:
            if not isinstance(part, str) and isinstance(part[0], Join):
                seq = part[0].seq
                if seq not in listed.setdefault(len(self._deref(seq)), []):
                    listed[len(self._deref(seq))].append(seq)
        if not listed:
            return parts

        def length(n: int) -> Ref | None:
            seqs = listed.get(n, [])
            return seqs[0] if len(seqs) == 1 else None

        def agreeing(seq: Ref, n: int) -> None:
            others = [e.seq for piece, e, _p, _s in self.scalars if isinstance(e, Len) and piece == str(n)]  # of plain values
            for other in dict.fromkeys([*others, *listed.get(n, [])]):
                if other != seq and (Len(seq), Len(other)) not in self.agreements:
                    self.agreements.append((Len(seq), Len(other)))

        out: list[str | tuple[Expr, str]] = []
        for part in parts:
            if isinstance(part, str):
                pos = 0
                for m in re.finditer(rf"{_DIGITS_IN_WORD[0]}(?<![\w.@$-])\d+{_DIGITS_IN_WORD[1]}(?!\w|[-–]\d)", part):
                    seq = length(int(m.group()))
                    if seq is None:
                        continue
                    out += [part[pos : m.start()]] if m.start() > pos else []
                    out.append((Len(seq), ""))
                    agreeing(seq, int(m.group()))
                    pos = m.end()
                out += [part[pos:]] if pos < len(part) else []
                continue
            expr, spec = part
            n = len(self._deref(expr.seq)) if isinstance(expr, Len) and not spec else -1
            if n in listed:  # a listed list's length is the count, where one listed list has it
                seq = expr.seq if expr.seq in listed[n] else length(n)
                if seq is not None:
                    out.append((Len(seq), ""))
                    agreeing(seq, n)
                    continue
            out.append(part)
        return tuple(out)

    def _agreeing(self, quoted: Ref) -> None:
        """Note the other results that held the value an answer quotes from ``quoted``: the answer says one
        text, which either may be ("manager (maria.lopez) or the group owner (maria.lopez)"), so the skill
        checks that they still agree (where they differ, its answer would quote the wrong one)."""
        if self._value_key(quoted) in self.used:
            return  # an argument took this value: its other sources are that argument's to settle (``alts``)
        value = self._deref(quoted)
        for c, p in self.sources.get(f"{type(value).__name__}:{value!r}", []):
            other = Ref(c, p)
            keyed = any(type(k) is str and self.keys.get(k) == p[:j] for j, k in enumerate(p))
            if other == quoted or _under_list(p) or keyed or self._echo(c, value) or (quoted, other) in self.agreements:
                continue
            self.agreements.append((quoted, other))

    def _joins(self, parts: list[str | tuple[Expr, str]]) -> tuple[str | tuple[Expr, str], ...]:
        """Runs of a list's elements with one separator between them, covering the whole list, as a ``Join``.

        "is in: staff, vpn-users" lists ``user['groups']``, not its first two elements: in
        the list's order, or sorted (when the run's list was in neither order, it stays
        positional and a guard pins it). When the list was already sorted, either reading
        fits, so a guard keeps the skill to sorted lists until a run settles it.
        """
        out: list[str | tuple[Expr, str]] = []
        i = 0
        while i < len(parts):
            found = self._join_at(parts, i)
            if found is None:
                out.append(parts[i])
                i += 1
                continue
            join, end = found
            out.append((join, ""))
            i = end
        return tuple(out)

    def _join_at(self, parts: list[str | tuple[Expr, str]], i: int) -> tuple[Join, int] | None:
        first = parts[i]
        if isinstance(first, str) or first[1] or not isinstance(first[0], Ref):
            return None
        head = element_ref(first[0])
        if head is None:
            return None
        call, seq_path, _k, tail = head
        seq = self._deref(Ref(call, seq_path))
        n = len(seq)
        if n == 1:
            return self._only_join(parts, i, call, seq_path, tail) if self.one_listed else None
        if n < 2:
            return None
        indices = [head[2]]
        sep: str | None = None
        j = i + 1
        while j + 1 < len(parts) and len(indices) < n:
            between, nxt = parts[j], parts[j + 1]
            if not isinstance(between, str) or isinstance(nxt, str) or nxt[1] or not isinstance(nxt[0], Ref):
                break
            if sep is not None and between != sep:
                break
            el = element_ref(nxt[0])
            if el is None or (el[0], el[1], el[3]) != (call, seq_path, tail):
                break
            sep = between
            indices.append(el[2])
            j += 2
        if sep is None or sorted(indices) != list(range(n)):
            return None
        items = [_dig(seq[k], tail) for k in indices]
        in_order = indices == list(range(n))
        try:
            is_sorted = items == sorted(items)
        except TypeError:
            is_sorted = False
        if not (in_order or is_sorted):
            return None
        if in_order and is_sorted:
            self.sorted_lists.add((call, seq_path, tail, sep))
        return Join(Ref(call, seq_path), sep, tail, sort=not in_order), j

    def _only_join(
        self, parts: list[str | tuple[Expr, str]], i: int, call: int, seq_path: tuple[str | int, ...], tail: tuple[str | int, ...]
    ) -> tuple[Join, int] | None:
        """The text of the only element of a list, quoted once, as the whole list listed: "is in:
        github-org" from a user with one group is what "is in: staff, wiki" is from one with two, so
        the runs are one program. One element shows no separator (``sep`` None): learning pins the
        list to one element (``count``) until a run of the program that listed more says how."""
        if type(_dig(self._deref(Ref(call, seq_path))[0], tail)) is not str:
            return None  # a number or a record: a value of the element, not a listing
        if self.last_write > call:
            return None  # a write since the read may have changed the list (a post added): the element as read
        elements = [element_ref(p[0]) for p in parts if not isinstance(p, str) and isinstance(p[0], Ref)]
        if sum(e is not None and e[:2] == (call, seq_path) for e in elements) != 1:
            return None  # two parts of the element ("Mug (x2)"): its values, not a listing
        return Join(Ref(call, seq_path), None, tail), i + 1


def _narrowed(template: TaskTemplate, task: str) -> tuple[Slot, ...]:
    """The template's slots, each choice narrowed to the text this run's task said there.

    A run learned under a widened template ("cancel|return") speaks only for the
    text it saw: its skill takes that text, until runs that said the others merge in.
    """
    said = template.chosen(task)
    return tuple(
        Slot(s.name, s.kind, s.type, s.transform, said.get(s.name, s.shape), s.same) if s.kind == CHOICE else s
        for s in template.slots
    )


def _apart(template: TaskTemplate, bound: dict[str, Any], used: set[str]) -> list[Guard]:
    """A task value that fed nothing (a slot the skill only checks, "(same as {order})") and another of
    its shape that said something else in this run: they must differ again ("same as" the order the task
    changes is not what the run saw; the agent may refuse it)."""
    real = [s for s in template.slots if s.kind not in (CHOICE, IGNORED, LIST) and s.type == "str" and not s.parts]
    out: list[Guard] = []
    for s in real:
        if s.name in used:
            continue
        for o in real:
            if o.name != s.name and o.shape == s.shape and bound.get(o.name) != bound.get(s.name):
                guard = Guard("apart", (), (Param(o.name), Param(s.name)) if o.name < s.name else (Param(s.name), Param(o.name)))
                if guard not in out:
                    out.append(guard)
    return out


def _members(results: list[Any]) -> set[str]:
    """The texts (lowercased, no surrounding marks) results hold as members of a collection: anywhere
    inside a list, or as the key of a dict whose values are collections (``{"vpn-users": {"since": ...}}``); not a
    record's field names or values (``{"mfa": False, "status": "open"}``)."""
    out: set[str] = set()
    stack: list[tuple[Any, bool]] = [(r, False) for r in results]
    budget = _MAX_NODES
    while stack and budget > 0:
        value, inside = stack.pop()
        budget -= 1
        if type(value) is str and inside:
            out.add(bare(value))
        elif type(value) is list:
            stack.extend((v, True) for v in value)
        elif type(value) is dict:
            for k, v in value.items():
                if type(k) is str and (inside or type(v) in (dict, list)):
                    out.add(bare(k))
                stack.append((v, inside))
    return out


def _params_used(raw_steps: list[tuple[str, tuple[tuple[str, Expr], ...]]], output: Expr) -> set[str]:
    return {e.name for top in [e for _t, a in raw_steps for _k, e in a] + [output] for e in walk_exprs(top) if isinstance(e, Param)}


_DIGITS_IN_WORD = (r"(?<!\d)(?<!\d[.,])", r"(?!\d|[.,]\d)")  # a digit run may sit inside a code: INC-{n}


def _imported(traj: Trajectory) -> set[str]:
    """The names a skill file imports its function tools by (a tool registered with ``name=`` keeps its function's)."""
    return {ref.qualname for ref in traj.tools.values() if not ref.method}


def _result_var(tool: str) -> str:
    for prefix in _VERB_PREFIXES:
        if tool.startswith(prefix) and len(tool) > len(prefix):
            return tool[len(prefix) :]
    return f"{tool}_result"


def _check_run(traj: Trajectory, importable: bool = True) -> Rejected | None:
    if not traj.outcome.ok:
        return Rejected(f"the run did not succeed: {traj.outcome.error}")
    failed = [c for c in traj.calls if c.error is not None]
    if failed:
        return Rejected(f"tool {failed[0].tool!r} raised during the run ({failed[0].error}); only clean runs are learned")
    missing = sorted({c.tool for c in traj.calls} - set(traj.tools))
    if missing:
        return Rejected(f"the run has no tool reference for {missing}")
    for tool_name, ref in sorted(traj.tools.items()):
        if not importable:
            continue  # skills kept in memory (the muscle-mem layer) never import their tools
        if ref.module in ("", "__main__"):
            return Rejected(
                f"tool {tool_name!r} is defined in {ref.module or 'an unknown module'!r}, which a skill file "
                "cannot import; define tools in an importable module"
            )
        if "<locals>" in ref.qualname:
            return Rejected(f"tool {tool_name!r} is defined inside a function ({ref.qualname}); skill files cannot import it")
    return None


def _lift_values(
    lifter: _Lifter, traj: Trajectory, blocks: dict[int, tuple[int, str]] | None = None
) -> tuple[list[tuple[str, tuple[tuple[str, Expr], ...]]], Expr, list[tuple[str, str | tuple[str, ...]] | None], list[tuple[int, int]]]:
    """The steps' arguments and the output, lifted call by call. ``blocks`` (first call → how many
    calls, which list) are calls that may be one call per distinct argument of the items of a list
    the template binds: each such block whose every argument is one expression of the item (one at
    least reading it) is one step, a *map step*, whose result is the list of the calls' results
    (see ``Listing._mapped``); the others are lifted call
    by call. Also returns, per step, the map's (list, item variable), and the blocks taken."""
    blocks = blocks or {}
    raw_steps: list[tuple[str, tuple[tuple[str, Expr], ...]]] = []
    eaches: list[tuple[str, str | tuple[str, ...]] | None] = []
    taken: list[tuple[int, int]] = []
    i = 0
    while i < len(traj.calls):
        call = traj.calls[i]
        step = len(raw_steps)
        order = {p: n for n, p in enumerate(traj.tools[call.tool].params)}
        keys = sorted(call.args, key=lambda k: (order.get(k, len(order)), k))  # signature order: key order is not data
        if i in blocks:
            n, listed = blocks[i]
            group = traj.calls[i : i + n]
            saved = lifter._state()
            lifted = lifter._mapped(listed, group, keys, step)
            if lifted and all(x is not None for x in lifted) and any(x[2] for x in lifted if x is not None):
                raw_steps.append((call.tool, tuple((k, x[1]) for k, x in zip(keys, lifted, strict=True) if x is not None)))
                eaches.append((listed, next(x[0] for x in lifted if x is not None)))
                taken.append((i, n))
                lifter.last_write = step if not traj.tools[call.tool].read else lifter.last_write
                lifter.add_result(step, [c.result for c in group])
                i += n
                continue
            lifter._restore(saved)
        args = tuple((k, lifter.lift(call.args[k], k, (step, (k,)))) for k in keys)
        raw_steps.append((call.tool, args))
        eaches.append(None)
        lifter.last_write = step if not traj.tools[call.tool].read else lifter.last_write
        lifter.add_result(step, call.result)
        i += 1
    return raw_steps, lifter.lift(traj.outcome.output, "output", (-1, ())), eaches, taken


def _under_list(path: tuple[str | int, ...]) -> bool:
    return any(type(k) is int for k in path)


def discover_template(
    traj: Trajectory, *, importable: bool = True, roll: bool = True, literal: frozenset[tuple[str, str]] = frozenset()
) -> TaskTemplate | Rejected:
    """The task template of a run: the task with every span an argument or the answer uses as a slot
    (``roll``: a list written item by item as one list slot, see ``_lists``; groups of slots written
    side by side as a list, one list of records, see ``_records``). ``literal``: see ``lift``."""
    found = _spans_template(traj, importable=importable, roll=roll)
    if isinstance(found, Rejected):
        return found
    found = checked_ids(found, traj)
    if not roll:
        return found
    records = record_template(found)
    if records is None:
        return found
    flat = lift(traj, template=found, importable=importable, literal=literal)
    listed = lift(traj, template=records, importable=importable, literal=literal)
    if isinstance(flat, Rejected) or isinstance(listed, Rejected) or listed.constants > flat.constants:
        return found
    name = next(s.name for s in records.slots if s.parts)
    loops = [e for st in listed.steps for _k, top in st.args for e in walk_exprs(top) if isinstance(e, Each) and e.seq.name == name]
    if not loops and not any(st.each is not None and st.each[0] == name for st in listed.steps):
        return found  # the groups feed nothing as a list: one slot each
    if sum(1 for st in listed.steps for g in st.guards if g.kind == "pin") > sum(1 for st in flat.steps for g in st.guards if g.kind == "pin"):
        return found  # taken by position as a list, by a predicate one by one
    return records


def _spans_template(traj: Trajectory, *, importable: bool = True, roll: bool = True) -> TaskTemplate | Rejected:
    problem = _check_run(traj, importable)
    if problem is not None:
        return problem
    lifter = _Lifter(traj, roll=roll)
    raw_steps, output, _eaches, _taken = _lift_values(lifter, traj)
    used = _params_used(raw_steps, output)
    acted = _params_used(raw_steps, Const(None))
    if acted:  # words only the answer quotes say what the run was asked in the task's words, not what to act on:
        # literal text until runs show them vary ("Please enable MFA for {username}", its answer says "MFA" too;
        # "Is {ticket_id} still open?", its answer says the ticket's status, a fact of the read). A number stays a
        # slot (a constant tied to it is what the run checks reject), and so does a word a collection a result holds
        # has as an element or a key (up to case): whether it is there may be what the run decided on
        members = _members([c.result for c in traj.calls])
        words = {
            name for name, v, _kind, _how in lifter.params.values()
            if type(v) is str and not re.search(r"\d", v) and bare(v) not in members
        }
        used = {name for name in used if name in acted or name not in words}
    values = {name: v for name, v, _kind, _how in lifter.params.values()}
    tops = [e for _t, a in raw_steps for _k, e in a] + [output]
    for listed, var in sorted({(e.seq.name, e.var) for top in tops for e in walk_exprs(top) if isinstance(e, Each)}):
        if isinstance(each_guards(traj, [a for _t, a in raw_steps], output, values, listed, var), str):
            return _spans_template(traj, importable=importable, roll=False)  # items that differ: one slot each
    # a span no argument or answer ended up using stays literal text: a slot the skill
    # ignored would let any value through where the run saw this one
    slots_by_span = sorted((span, p) for span, p in lifter.params.items() if p[0] in used)
    if roll and any(b[0][0] < a[0][1] for a, b in zip(slots_by_span, slots_by_span[1:])):
        # an item of a list quoted on its own (an answer naming each item): one slot per item
        return _spans_template(traj, importable=importable, roll=False)
    said: dict[str, str] = {}  # what each value's text says, to tie spans that said the same value
    slots_list = []
    for (s, e), (n, v, kind, how) in slots_by_span:
        raw = traj.task[s:e]
        key = _said(raw)
        if kind == LIST:  # the narrowest shape that fits every item
            shape: str | None = shape_of(v[0], "text")
            for item in v[1:]:
                shape = union_shape(shape, shape_of(item, "text"))
            slots_list.append(Slot(n, kind, "list", how, shape))
            continue
        slots_list.append(Slot(n, kind, type(v).__name__, how, shape_of(raw, kind), said.get(key)))
        said.setdefault(key, n)
    slots = tuple(slots_list)
    pieces: list[str] = []
    pos = 0
    task = traj.task
    for (s, e), (pname, _v, _kind, _how) in slots_by_span:
        pieces.append(task[pos:s].replace("{", "{{").replace("}", "}}"))
        pieces.append("{" + pname + "}")
        pos = e
    pieces.append(task[pos:].replace("{", "{{").replace("}", "}}"))
    text = "".join(pieces).strip()
    # every other occurrence of a slot's text is that slot too: it must vary together
    for (s, e), (pname, _v, _kind, _how) in slots_by_span:
        text_said = task[s:e]
        if len(text_said) >= 2 or text_said.isdigit():
            text = _also_slot(text, text_said, pname)
    return TaskTemplate(text, list(slots))


def lift(
    traj: Trajectory,
    *,
    name: str | None = None,
    template: TaskTemplate | None = None,
    prefer: dict[Site, tuple[Expr, tuple[Expr, ...]]] | None = None,
    importable: bool = True,
    literal: frozenset[tuple[str, str]] = frozenset(),
    one_listed: bool = True,
    probed: Probed | None = None,
) -> SkillSpec | Rejected:
    """Lift a successful run into a SkillSpec, or say why it cannot be one.

    ``probed``: what probes of the skill's runs settled (``_probes.Probed``; by default, of this run's
    own probes): the facts they showed not to decide are not guards.

    Without ``template`` the task's spans are discovered first (``discover_template``);
    with one (a skill's own, when a run becomes a variant or is re-rendered) the
    parameters are what that template binds from the task. ``prefer`` carries the
    sources other runs of the same skill settled (see ``spec_from_runs``).

    A value found in several places is bound by the rule (task span first, then
    the earliest call and the shallowest path); the other places are kept as
    alternatives, and an ``agree`` guard makes the skill stop when they differ, so
    that the agent's next run of that shape settles which one it uses.

    A number the answer says as its own text that neither the task nor a result explains is a
    ``Rejected`` (a computed value?) unless ``literal`` holds it, at its place: ``(the answer's
    literal text it stands in, the number)``, which runs of other worlds showed fixed (``_numbers``).
    Rejected for that alone, the ``Rejected`` says where (``numbers``).

    Without ``one_listed``, the only element of a list an answer quotes is that element, by position
    (as where other runs of the skill took it so), not the list listed (see ``_only_join``).

    Example:
        >>> from skillforge._trajectory import Call, Outcome, ToolRef
        >>> t = Trajectory(task="Refund order #1042", outcome=Outcome(ok=True, output="done"),
        ...     calls=[Call(tool="get_order", args={"order_id": "1042"}, result={"pay": "P9"}),
        ...            Call(tool="refund", args={"payment_id": "P9"}, result=True)],
        ...     tools={"get_order": ToolRef(module="m", qualname="get_order", read=True),
        ...            "refund": ToolRef(module="m", qualname="refund")})
        >>> spec = lift(t)
        >>> spec.template, spec.steps[1].args
        ('Refund order #{order_id}', (('payment_id', Ref(call=0, path=('pay',))),))
    """
    problem = _check_run(traj, importable)
    if problem is not None:
        return problem
    if probed is None:
        probed = Probed.of([traj])
    given = template
    if template is None:
        found = discover_template(traj, importable=importable, literal=literal)
        if isinstance(found, Rejected):
            return found
        template = found
    bound = template.bind(traj.task)
    if bound is None:
        return Rejected(f"the template {template.text!r} does not bind the task {traj.task!r}")
    quoted = quoted_ignored(template, traj)
    if quoted is not None:
        return Rejected(f"the run says {quoted!r}, text of its task that the template {template.text!r} ignores; "
                        "what the answer or a call says is part of what the run did, never ignored")
    records = {s.name: tuple(p.name for p in s.parts) for s in template.slots if s.parts}
    blocks: dict[int, tuple[int, str]] = {}  # calls that may be one per item of a list the task gives
    for listed in sorted(n for n, v in bound.items() if type(v) is list and v):
        for start, n in map_blocks(traj, len(bound[listed])):
            blocks.setdefault(start, (n, listed))
    lifter = _Lifter(traj, bound, prefer, records=records, one_listed=one_listed)
    raw_steps, output, eaches, taken = _lift_values(lifter, traj, blocks)
    run_hash = traj.hash
    traj = fold(traj, taken)  # step k is call k from here on
    picked = frozenset(  # the elements items of a list picked
        (c, (*seq_path, index)) for (c, seq_path, index), select in lifter.selected.items() if lifter._by_item(select)
    )
    tied = tied_constant(traj, raw_steps, output, bound) or quoted_item(raw_steps, output, bound, picked)
    if tied is not None:
        return Rejected(tied)
    unexplained = [place for place in unexplained_numbers(output, traj.task) if place not in literal]
    if unexplained:
        # were it text, would the run be a skill? Then runs of other worlds that say it there too may learn it so
        whole = lift(traj, name=name, template=given, prefer=prefer, importable=importable, literal=literal | set(unexplained),
                     one_listed=one_listed, probed=probed)
        return Rejected(
            f"the answer says {unexplained[0][1]!r}, which neither the task nor a tool result explains (a computed value?); "
            "not learned, since another world would need another number",
            frozenset(unexplained) if isinstance(whole, SkillSpec) else frozenset(),
            whole if isinstance(whole, SkillSpec) else None,
        )

    guards = [list(g) for g in derive_guards(traj, [a for _t, a in raw_steps], output, bound)]
    tops = [e for _t, a in raw_steps for _k, e in a] + [output]
    lists = {(e.seq.name, e.var) for top in tops for e in walk_exprs(top) if isinstance(e, Each)} | {e for e in eaches if e}
    for listed, var in sorted(lists, key=repr):
        items = each_guards(traj, [a for _t, a in raw_steps], output, bound, listed, var)
        if isinstance(items, str):  # (a template discovered from this run has one slot per item then)
            return Rejected(items)
        for i, gs in enumerate(items):
            guards[i] += [g for g in gs if g not in guards[i]]
    pre_first: list[Guard] = []  # agreements to check before the first call
    for (call, _path), others in sorted(lifter.alts.items(), key=lambda kv: (kv[0][0] % (len(raw_steps) + 1), repr(kv[0][1]))):
        chosen = expr_at(raw_steps, output, (call, _path))
        for other in others:
            agree = Guard("agree", (), (chosen, other))
            calls = [r.call for r in (*refs_in(chosen), *refs_in(other))]
            if not calls:  # two slots that said one value: with the first read's facts (before any call, if it writes)
                here = guards[0] if traj.calls and traj.tools[traj.calls[0].tool].read else pre_first
                if agree not in here:
                    here.append(agree)
                continue
            after = max(calls)
            if agree not in guards[after]:
                guards[after].append(agree)
    quoted = {r for r in refs_in(output) if isinstance(r, Ref)}
    counted = {e for e in walk_exprs(output) if isinstance(e, Len)}  # a count the answer says of a listed list
    for chosen, other in lifter.agreements:  # values the answer quotes that another result held too
        if chosen in quoted or chosen in counted:
            agree = Guard("agree", (), (chosen, other))
            after = max(r.call for r in (*refs_in(chosen), *refs_in(other)))
            if agree not in guards[after]:
                guards[after].append(agree)
    for top in [e for _t, a in raw_steps for _k, e in a] + [output]:
        for ref in refs_in(top):  # read under a key the task names: the skill reads under the learned key
            for key in ref.path:
                named = sorted(n for n, v in bound.items() if type(v) is str and v == key)
                agree = Guard("agree", (), (Param(named[0]), Const(key))) if named else None
                if agree is not None and agree not in guards[ref.call]:
                    guards[ref.call].append(agree)
    pins = coincidences(traj, raw_steps, output, bound) + _apart(template, bound, _params_used(raw_steps, output))
    if pins:  # checked before the first write: after the first call if it reads, else before it
        first_reads = traj.tools[traj.calls[0].tool].read if traj.calls else False
        (guards[0] if first_reads else pre_first).extend(g for g in pins if g not in guards[0])
    for call, seq_path, tail, sep in sorted(lifter.sorted_lists, key=repr):
        guards[call].append(Guard("sorted", seq_path, (tail, sep)))
    for top in [e for _t, a in raw_steps for _k, e in a] + [output]:
        for e in walk_exprs(top):
            if isinstance(e, Len):  # "1 member" and "3 members" are said differently: the same count class
                n = len(_dig(traj.calls[e.seq.call].result, e.seq.path))
                if n:
                    count = Guard("count", e.seq.path, 1 if n == 1 else "many")
                    if count not in guards[e.seq.call]:
                        guards[e.seq.call].append(count)
            if isinstance(e, Join):  # "a and b" does not say how three are listed ("a, b and c"?)
                n = len(_dig(traj.calls[e.seq.call].result, e.seq.path))
                size = Guard("size", e.seq.path, n)
                if n == 2 and size not in guards[e.seq.call]:
                    guards[e.seq.call].append(size)
                one = Guard("count", e.seq.path, 1)  # one element shows no separator: one element again
                if e.sep is None and one not in guards[e.seq.call]:
                    guards[e.seq.call].append(one)
    for (call, seq_path, index), select in sorted(lifter.selected.items(), key=repr):
        if not isinstance(select.key, Update):
            continue  # an element the task names by a value: its facts are derived like a result's
        element = _dig(traj.calls[call].result, (*seq_path, index))  # picked by a predicate: what it was
        chosen = Select(select.seq, select.field, select.key, (), select.also)
        of_item = next(((listed, var) for listed, var in sorted(lists, key=repr) if mentions(chosen, var)), None)
        for field_name in sorted(element) if type(element) is dict else ():
            if field_name != select.field and _categorical(element[field_name]):
                fact = Guard("chosen", (), (chosen, field_name, element[field_name]))
                if of_item is not None:  # the element each item picks: a fact every item's has
                    if any(g.kind == "each" and g.value[2].kind == "chosen" and g.value[2].value[:2] == (chosen, field_name)
                           and g.value[2] != fact for g in guards[call]):
                        return Rejected(f"the items of {of_item[0]} pick elements that differ in {field_name!r}")
                    fact = Guard("each", (), (*of_item, fact))
                if fact not in guards[call]:
                    guards[call].append(fact)
    results = [c.result for c in traj.calls]
    for call, fact in referred(results, [e for _t, a in raw_steps for _k, e in a] + [output], bound):
        if fact not in guards[call]:
            guards[call].append(fact)
    for call, pin in positional_pins(traj, [a for _t, a in raw_steps], output) + quoted_parts(traj, [a for _t, a in raw_steps], output):
        if pin not in guards[call]:
            guards[call].append(pin)
    agreed = [{*g.value} for gs in guards for g in gs if g.kind == "agree"]
    for gs in guards:  # an agreement already says the two are equal
        gs[:] = [g for g in gs if g.kind != "cmp" or taken_from(g) is not None or {g.value[1], Ref(g.value[0], g.path)} not in agreed]
    # how a number is written, where the run left it open: before the first call if it writes
    at_steps = placed(written_facts(tops, [([c.result for c in traj.calls], bound)], signs(guards)), [traj.tools[t].read for t, _a in raw_steps])
    if isinstance(at_steps, str):
        return Rejected(at_steps)
    written = [fact for at, fact in at_steps if at < 0]
    for at, fact in at_steps:
        if at >= 0:
            guards[at].append(fact)
    probed.pruned(guards)  # facts probes showed not to decide
    for i, gs in enumerate(guards):  # a range the agent acted alike over covers this run's own value too
        gs[:] = [_spanning(g, traj.calls[i].result, bound) if g.kind == "range" else _among(g, traj.calls[i].result, bound)
                 if g.kind == "alike" else g for g in gs]
    compared = {g.value[0] for gs in guards for g in gs if g.kind in ("cmp", "same")}  # results a comparison reads
    compared |= {r.call for gs in guards for g in gs if g.kind == "cmp" for r in refs_in(g.value[1])}
    namer = _Namer(lifter.namer.taken)
    var_of: dict[int, str] = {}
    for i, (tool, _args) in enumerate(raw_steps):
        if i in lifter.referenced or guards[i] or i in compared:
            var_of[i] = namer.take(_ident(_result_var(tool), "result"))
    instances: list[tuple[str, str]] = []
    for tool in sorted({c.tool for c in traj.calls}):
        ref = traj.tools[tool]
        if ref.method:
            owner = ref.qualname.rsplit(".", 1)[0]
            if owner not in [o for _, o in instances]:
                instances.append((namer.take(_ident(_snake(owner.rsplit(".", 1)[-1]), "instance")), owner))
    steps = tuple(
        Step(
            tool=t,
            args=a,
            var=var_of.get(i),
            guards=tuple(guards[i]),
            pre=(*(pre_first if i == 0 else ()), *((Guard("check", (), traj.calls[i].pre),) if traj.tools[t].check else ()),
                 *(written if i == 0 else ())),
            post=(Guard("postcheck", (), traj.calls[i].post),) if traj.tools[t].post_check else (),
            each=eaches[i],
        )
        for i, (t, a) in enumerate(raw_steps)
    )
    writes = [a for t, a in raw_steps if not traj.tools[t].read] or [a for _t, a in raw_steps]
    said = [x.name for _k, e in (writes[0] if writes else ()) for x in walk_exprs(e) if isinstance(x, Param)]
    name = name or skill_name(template.text, said)
    if name in traj.tools or name in {r.qualname for r in traj.tools.values()}:
        name = f"{name}_skill"  # a skill must not shadow the tool it calls
    return SkillSpec(
        name=name,
        template=template.text,
        slots=_narrowed(template, traj.task),
        examples=bound,
        steps=steps,
        output=output,
        tools={t: traj.tools[t] for t in sorted({c.tool for c in traj.calls})},
        instances=tuple(instances),
        runs=(run_hash,),
        task=traj.task,
        constants=lifter.constants,
        alts=tuple(sorted(lifter.alts.items(), key=lambda kv: (kv[0][0], repr(kv[0][1])))),
        probed=probed.lines,
    )


def _among(g: Guard, result: Any, params: dict[str, Any]) -> Guard:
    """An ``alike`` guard widened to the code its place holds in this run."""
    try:
        v = resolve(result, g.path, params)
    except (KeyError, IndexError, TypeError):
        return g
    return Guard("alike", g.path, tuple(sorted({*g.value, v}))) if type(v) is str and v not in g.value else g


def _spanning(g: Guard, result: Any, params: dict[str, Any]) -> Guard:
    """A ``range`` guard widened to the value its place holds in this run."""
    try:
        v = resolve(result, g.path, params)
    except (KeyError, IndexError, TypeError):
        return g
    text = g.value[2]
    if text and type(v) is str:
        try:
            v = float(v)
        except ValueError:
            return g
    if type(v) not in (int, float):
        return g
    return range_guard(g.path, reaching(spans_of(g), v), text)  # the run acted alike at its own value too


def expr_at(raw_steps: list[tuple[str, tuple[tuple[str, Expr], ...]]], output: Expr, site: Site) -> Expr:
    call, path = site
    if call == -1:
        expr = output
    else:
        expr = dict(raw_steps[call][1])[path[0]]
        path = path[1:]
    for key in path:
        if isinstance(expr, ListOf):
            expr = expr.items[key]  # type: ignore[index]
        elif isinstance(expr, DictOf):
            expr = dict(expr.items)[key]  # type: ignore[index]
    return expr


def _cores(value: str) -> list[tuple[int, int]]:
    """Where a part of ``value`` cut at punctuation starts and ends (not the whole), longest first:
    ``INC-4820`` → ``4820``, ``INC``; ``#W36`` → ``W36``."""
    starts = [i for i in range(len(value)) if value[i].isalnum() and (i == 0 or not value[i - 1].isalnum())]
    ends = [j for j in range(1, len(value) + 1) if value[j - 1].isalnum() and (j == len(value) or not value[j].isalnum())]
    cut = [(i, j) for i in starts for j in ends if j - i >= 2 and (i, j) != (0, len(value))]
    return sorted(cut, key=lambda ij: (ij[0] - ij[1], ij[0]))


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _also_slot(template: str, text: str, pname: str) -> str:
    out: list[str] = []
    pos = 0
    for m in re.finditer(r"\{\{|\}\}|\{[^{}]*\}", template):
        out.append(_sub_literal(template[pos : m.start()], text, pname))
        out.append(m.group(0))
        pos = m.end()
    out.append(_sub_literal(template[pos:], text, pname))
    return "".join(out)


def _sub_literal(literal: str, text: str, pname: str) -> str:
    return re.sub(rf"{TOKEN_START}{re.escape(text)}{TOKEN_END}", "{" + pname + "}", literal)
