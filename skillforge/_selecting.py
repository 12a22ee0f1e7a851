"""Selections: which element of a list or collection a run's value came from, said by what the task gives.

A value found inside one element of a list (an order's items) or of an id-keyed dict (a
product's variants) is lifted as the element a predicate picks, never as its position or key:

- a field of the element equals a task value or an earlier value, with every other dict the
  task gives of it (``pick(order['items'], 'name', item_name, 'options', item_options)``);
- its dict field equals a dict read before with the fields a dict in the task changes
  (``pick(product['variants'], 'options', updated(item['options'], changes))``).

A mixin of the lifter (``_lifting._Lifter``), which holds the run's results and spans.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._spec import Expr, Param, Ref, Select, Update
from ._values import one, walk_exprs

if TYPE_CHECKING:
    from ._spans import TaskSpans

__all__ = ["Selecting"]


class Selecting:
    """Selections by predicate, over the state of a ``_Lifter``."""

    results: dict[int, Any]
    sources: dict[str, list[tuple[int, tuple[str | int, ...]]]]
    selected: dict[tuple[int, tuple[str | int, ...], Any], Select]
    referenced: set[int]
    task_dicts: list[tuple[int, int, dict[str, Any]]]
    bound: dict[str, Any] | None
    said: set[str]
    spans: TaskSpans

    def _param(self, value: Any, hint: str, at: tuple[int, int] | None = None) -> Param | None:  # pragma: no cover
        raise NotImplementedError

    def _resolve(self, ref: Ref, hint: str) -> Ref | Select:  # pragma: no cover - the lifter's
        raise NotImplementedError

    def _by_item(self, select: Select) -> bool:
        """Whether an item of a list made this selection (it reads a value only the item binds)."""
        return self.bound is not None and any(isinstance(e, Param) and e.name not in self.bound for e in walk_exprs(select))

    def _in_selected(self, call: int, path: tuple[str | int, ...]) -> Select | None:
        for (c, seq_path, index), select in self.selected.items():
            n = len(seq_path)
            if self._by_item(select):
                continue  # chosen by an item of a list, which only that list's comprehension names
            if c == call and path[:n] == seq_path and len(path) > n and path[n] == index:
                return Select(select.seq, select.field, select.key, path[n + 1 :], select.also)
        return None

    def _selection(self, call: int, path: tuple[str | int, ...], hint: str) -> Select | None:
        """A value found at a list index, as the element chosen by a field the task or an earlier value names."""
        k = max((i for i, key in enumerate(path) if type(key) is int), default=None)
        if k is None:
            return None
        seq = self.results[call]
        for key in path[:k]:
            seq = seq[key]
        if type(seq) is not list or not all(type(e) is dict for e in seq):
            return None
        element = seq[path[k]]
        owner = path[k - 1] if k and type(path[k - 1]) is str else "element"
        rest = path[k + 1 :]
        for field in sorted(element):
            v = element[field]
            if rest[:1] == (field,) or not (type(v) is str and len(v) >= 2 or type(v) is dict and v):
                continue  # selecting by the very field read would say nothing
            if not one([e for e in seq if e.get(field) == v]) and not one([
                e for e in seq if e.get(field) == v and all(e.get(f) == element[f] for f in self._said_dicts(element, field, rest))
            ]):
                continue  # neither the field nor it and the dicts the task gives of the element pick it out
            hint_of = f"{_singular(str(owner))}_{field}"
            chosen = self._param(v, hint_of) or (None if type(v) is dict else self._earlier(v, call))
            if chosen is not None:
                also = tuple(  # what else the task says of the element (its options), so all it says is checked
                    (f, p) for f in self._said_dicts(element, field, rest)
                    if (p := self._param(element[f], f"{_singular(str(owner))}_{f}")) is not None
                )
                select = Select(Ref(call, path[:k]), field, chosen, path[k + 1 :], also)
                self.selected[(call, path[:k], path[k])] = select
                return select
        return None

    def _said_dicts(self, element: dict[str, Any], field: str, rest: tuple[str | int, ...]) -> list[str]:
        """The other fields of ``element`` holding a dict the task writes out (an item's options)."""
        out = []
        for f in sorted(element):
            v = element[f]
            if f == field or rest[:1] == (f,) or type(v) is not dict or not v:
                continue
            if self.bound is not None:
                if any(type(b) is dict and b == v for b in self.bound.values()):
                    out.append(f)
            elif self.spans.find(v) is not None:
                out.append(f)
        return out

    def _matched(self, value: Any, hint: str) -> Select | None:
        """A value inside one element of a collection (a product's variants), as the element whose
        dict field (``options``) equals a dict read before (the old item's options) with the fields
        a dict in the task gives changed: ``pick(variants, 'options', updated(item['options'], changes))``.
        The base dict is read outside the collection, and exactly one element matches."""
        if not self.task_dicts:
            return None
        for c, p in self.sources.get(f"{type(value).__name__}:{value!r}", []):
            for j in range(len(p) - 1, -1, -1):
                container = _dig(self.results[c], p[:j])
                if type(container) not in (dict, list):
                    continue
                element = container[p[j]]
                if type(element) is not dict:
                    continue
                members = list(container.values()) if type(container) is dict else container
                for field in sorted(element):
                    target = element[field]
                    if type(target) is not dict or not target or p[j + 1 : j + 2] == (field,):
                        continue
                    if not one([e for e in members if type(e) is dict and e.get(field) == target]):
                        continue
                    for start, end, change in self.task_dicts:
                        if self._claimed(start, end, change) or not all(k in target and target[k] == v for k, v in change.items()):
                            continue  # a dict the task said of something else (the old item's options), or another change
                        base = self._base(target, change, (c, p[:j]))
                        if base is None:
                            continue
                        said = self._param(change, f"{hint}_changes", (start, end))
                        if said is None:
                            continue
                        # the collection itself read from a list (the product of each item): by what picks it
                        seq = self._resolve(Ref(c, p[:j]), hint) if any(type(k) is int for k in p[:j]) else Ref(c, p[:j])
                        select = Select(seq, field, Update(base, said), p[j + 1 :])
                        self.selected[(c, p[:j], p[j])] = select
                        self.referenced.add(c)
                        return select
        return None

    def _claimed(self, start: int, end: int, value: dict[str, Any]) -> bool:
        """Whether the task's dict at ``start:end`` already feeds another parameter."""
        if self.bound is None:
            return bool(self.spans._overlaps(start, end))
        return any(type(v) is dict and v == value and name in self.said for name, v in self.bound.items())

    def _base(self, target: dict[str, Any], change: dict[str, Any], inside: tuple[int, tuple[str | int, ...]]) -> Expr | None:
        """The source of a dict, read by a call before the collection ``inside``'s, that ``target`` is
        but for the fields ``change`` sets."""
        found: list[tuple[int, int, tuple[str | int, ...]]] = []
        for call, result in self.results.items():
            if call >= inside[0]:
                continue  # read before the collection: what the change applies to is already known
            stack: list[tuple[Any, tuple[str | int, ...]]] = [(result, ())]
            while stack:
                v, path = stack.pop()
                if type(v) is dict:
                    if (
                        set(v) == set(target) and all(v[k] == target[k] for k in target if k not in change)
                        and not (call == inside[0] and path[: len(inside[1])] == inside[1])
                    ):
                        found.append((call, len(path), path))
                    stack.extend((v[k], (*path, k)) for k in v)
                elif type(v) is list:
                    stack.extend((e, (*path, i)) for i, e in enumerate(v))
        chosen = [f for f in found if self._in_selected(f[0], f[2]) is not None]
        if not found or not chosen and len(found) > 1:
            return None  # several dicts fit and the run chose none of them: which one changed is not known
        # the element the run already chose (the item it returns) before any other that fits
        call, _depth, path = min(chosen or found, key=lambda f: (f[0], f[1], repr(f[2])))
        self.referenced.add(call)
        return self._in_selected(call, path) or self._selection(call, path, "item") or Ref(call, path)

    def _earlier(self, value: Any, call: int) -> Ref | None:
        """A source of ``value`` in a result from before the list's own call (so not derived from it)."""
        for c, p in self.sources.get(f"{type(value).__name__}:{value!r}", []):
            if c < call:
                self.referenced.add(c)
                return Ref(c, p)
        return None


def _dig(value: Any, path: tuple[str | int, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us")) and len(word) > 3:
        return word[:-1]
    return word
