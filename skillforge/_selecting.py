"""Selections: which element of a list or collection a run's value came from, said by what the task gives.

A value found inside one element of a list (an order's items) or of an id-keyed dict (a
product's variants) is lifted as the element a predicate picks, never as its position or key:

- a field of the element equals a task value or an earlier value, with every other dict the
  task gives of it (``pick(order['items'], 'name', item_name, 'options', item_options)``);
- its dict field equals a dict read before with the fields a dict in the task changes
  (``pick(product['variants'], 'options', updated(item['options'], changes))``), or with one
  field set to a value the task says ("the same one in brown": ``{'color': color}``).

A mixin of the lifter (``_lifting._Lifter``), which holds the run's results and spans.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._spec import DictOf, Expr, Guard, Param, Ref, Select, Update
from ._values import _categorical, collection, evaluate, one, walk_exprs

if TYPE_CHECKING:
    from ._spans import TaskSpans

__all__ = ["Selecting", "own_key", "referred"]


def own_key(value: Any, path: tuple[str | int, ...]) -> bool:
    """Whether ``path`` reaches ``value`` under a key equal to it: a record's id under its own key
    (``cards['card_7']['id']``), which is no source of that id, since finding it there needs it."""
    return type(value) is str and value in path[:-1]


class Selecting:
    """Selections by predicate, over the state of a ``_Lifter``."""

    results: dict[int, Any]
    sources: dict[str, list[tuple[int, tuple[str | int, ...]]]]
    selected: dict[tuple[int, tuple[str | int, ...], Any], Select]
    referenced: set[int]
    task_dicts: list[tuple[int, int, dict[str, Any]]]
    keys: dict[str, tuple[str | int, ...]]  # a key of an id-keyed dict of a result → that dict's path
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
            return self._keyed(call, path, hint)
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

    def _keyed(self, call: int, path: tuple[str | int, ...], hint: str) -> Select | None:
        """A value inside a record of an id-keyed dict under a key the task does not say (the card an
        order was paid with, among a customer's cards), as the record whose field equals a value
        read elsewhere: ``pick(user['cards'], 'id', order['payments'][0]['card_id'])['last_four']``."""
        record = self.results[call]
        for k, key in enumerate(path[:-1]):
            if type(record) is not dict or key not in record:
                return None
            inner = record[key]
            if type(key) is str and type(inner) is dict and collection(record) and self._param(key, hint) is None:
                rest = path[k + 1 :]
                for field in sorted(inner):
                    v = inner[field]
                    if rest[:1] == (field,) or type(v) is not str or len(v) < 2:
                        continue
                    if not one([e for e in record.values() if type(e) is dict and e.get(field) == v]):
                        continue
                    chosen = self._param(v, f"{_singular(str(path[k - 1]) if k else 'record')}_{field}") or self._elsewhere(v, call, path[: k + 1])
                    if chosen is not None:
                        return Select(Ref(call, path[:k]), field, chosen, rest)
                return None
            record = inner
        return None

    def _elsewhere(self, value: Any, call: int, inside: tuple[str | int, ...]) -> Ref | None:
        """A source of ``value`` outside the record at ``inside`` of ``call``'s result, and not a
        record's id under its own key (finding it there needs it)."""
        for c, p in self.sources.get(f"{type(value).__name__}:{value!r}", []):
            if (c != call or p[: len(inside)] != inside) and not own_key(value, p):
                self.referenced.add(c)
                return Ref(c, p)
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
            return self._one_changed(value, hint)
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

    def _one_changed(self, value: Any, hint: str) -> Select | None:
        """A value inside one element of an id-keyed collection (a product's variants), as the element
        whose dict field (``options``) is a dict read before (the old item's options) with one field set
        to a value the task says ("the same one in brown"): ``pick(variants, 'options',
        updated(item['options'], {'color': color}))``. Exactly one field may differ from the base, and
        exactly one element may match; the field's name is the learned constant."""
        for c, p in self.sources.get(f"{type(value).__name__}:{value!r}", []):
            if not own_key(value, p) and not any(type(k) is str and self.keys.get(k) == p[:j] for j, k in enumerate(p)):
                continue  # only an element under its own id, which no task names
            for j in range(len(p) - 2, -1, -1):
                container = _dig(self.results[c], p[:j])
                if type(container) is not dict or not collection(container) or type(container.get(p[j])) is not dict:
                    continue
                element = container[p[j]]
                for field in sorted(element):
                    target = element[field]
                    if type(target) is not dict or not target or p[j + 1 : j + 2] == (field,):
                        continue
                    if not one([e for e in container.values() if type(e) is dict and e.get(field) == target]):
                        continue
                    if self._read_before(target, c):
                        continue  # the very dict was read before (the old item's options): nothing changed
                    for k in sorted(target):
                        v = target[k]
                        if type(v) is not str:
                            continue
                        base = self._base(target, {k: v}, (c, p[:j]))
                        if base is None:
                            continue
                        said = self._param(v, k)
                        if said is None:
                            continue
                        select = Select(Ref(c, p[:j]), field, Update(base, DictOf(((k, said),))), p[j + 1 :])
                        self.selected[(c, p[:j], p[j])] = select
                        self.referenced.add(c)
                        return select
        return None

    def _read_before(self, target: dict[str, Any], call: int) -> bool:
        """Whether a call before ``call`` returned a dict equal to ``target``."""
        for c, result in self.results.items():
            stack = [result] if c < call else []
            while stack:
                v = stack.pop()
                if v == target:
                    return True
                stack.extend(v.values() if type(v) is dict else v if type(v) is list else ())
        return False

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
            if c < call and not own_key(value, p):
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


def referred(results: list[Any], tops: list[Expr], params: dict[str, Any]) -> list[tuple[int, Guard]]:
    """Facts of the records the program's elements refer to by id, one hop, as (step, guard).

    An answer that says "back on your PayPal account" after reading an order's payment
    (``order['payments'][0]['amount']``) depends on the card that payment names
    (``'card_id': 'paypal_1'``), a record of the customer's id-keyed cards the program never
    reads: its categorical fields (``source``, ``brand``) are facts of the run, checked as
    ``pick(user['cards'], 'id', order['payments'][0]['card_id'])['source'] == 'paypal'``, so a
    customer who paid by card is not told "PayPal"."""
    elements: list[Expr] = []
    for top in tops:
        for e in walk_exprs(top):
            if isinstance(e, Ref) and e.path and Ref(e.call, e.path[:-1]) not in elements:
                elements.append(Ref(e.call, e.path[:-1]))
            elif isinstance(e, Select) and e.rest:
                inner = Select(e.seq, e.field, e.key, e.rest[:-1], e.also)
                if inner not in elements:
                    elements.append(inner)
    out: list[tuple[int, Guard]] = []
    for element in elements:
        try:
            record = evaluate(element, results, params)
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        if type(record) is not dict:
            continue
        for field in sorted(record):
            v = record[field]
            if type(v) is not str or len(v) < 2:
                continue
            found = _record_of(results, v, record)
            if found is None:
                continue
            call, coll, id_field, target = found
            key = _field_of(element, field)
            chosen = Select(Ref(call, coll), id_field, key)
            after = max([call, *(r.call for r in walk_exprs(key) if isinstance(r, Ref))])
            for f in sorted(target):
                if f != id_field and _categorical(target[f], element=True):
                    out.append((after, Guard("chosen", (), (chosen, f, target[f]))))
    return out


def _field_of(element: Expr, field: str) -> Expr:
    if isinstance(element, Ref):
        return Ref(element.call, (*element.path, field))
    if isinstance(element, Select):
        return Select(element.seq, element.field, element.key, (*element.rest, field), element.also)
    raise TypeError(element)  # pragma: no cover - elements are references or selections


def _record_of(results: list[Any], key: str, own: dict[str, Any]) -> tuple[int, tuple[str | int, ...], str, dict[str, Any]] | None:
    """The record under ``key`` in an id-keyed dict of some result, which holds ``key`` as a field of
    its own (its id), other than ``own``: (call, the dict's path, the id field, the record)."""
    for call, result in enumerate(results):
        stack: list[tuple[Any, tuple[str | int, ...]]] = [(result, ())]
        budget = 2000
        while stack and budget > 0:
            budget -= 1
            v, path = stack.pop()
            if type(v) is dict:
                target = v.get(key)
                if type(target) is dict and target is not own and collection(v):
                    ids = sorted(f for f, x in target.items() if x == key and type(x) is str)
                    if ids and one([r for r in v.values() if type(r) is dict and r.get(ids[0]) == key]):
                        return call, path, ids[0], target
                stack.extend((v[k], (*path, k)) for k in sorted(v, reverse=True))
            elif type(v) is list:
                stack.extend((x, (*path, i)) for i, x in reversed(list(enumerate(v))))
    return None

