"""Which of a skill's facts are about what its runs act on, and which are context. Pure.

Facts that varied between runs that acted alike keep only the combinations the runs
showed together, because a choice may hinge on several of them at once (a refund to
a gift card of an order already shipped). Combining every fact a run read makes
each new world a combination no run showed, though: which other payment methods a
customer holds, their home address, whether the order ships there. So facts are
combined only when they are about what the run **acts on**:

- the result of a read whose arguments carry a task value a write also takes (the
  order a cancellation names, the user whose password is reset), of a read whose
  result feeds a write's arguments (the order whose items are returned, the product
  whose variant is the new item) or the answer, and of each write: its own fields and the lists
  directly under it (a status, whether ``fulfillments`` is empty, the flags of its
  ``devices``);
- the part a task value the run acts with selects (``user['payment_methods'][pm]``,
  ``pick(order['items'], 'name', item_name)``) and its own fields;
- relations of those task values with what was read (``pm in order's payments``),
  comparisons of amounts and dates a write is given, the facts of a picked element.

Every other varied fact (the customer's state or name, the set of payment kinds they
hold, a task value used only to find the customer, the kind of the method a read names by its
id: which one paid the order) is **context**: it must still take
a value some run showed, but on its own, not in combination. So is the value of a field
only some records of a list have (a card's ``brand``, which a gift card lacks): which
kind of record was acted on is its fields and type fields, and those are combined.
"""

from __future__ import annotations

from collections.abc import Callable

from ._spec import At, Guard, Param, Ref, Select, SkillSpec, Where
from ._values import EACH, walk_exprs

__all__ = ["acted_on"]

_ALWAYS = frozenset({"cmp", "chosen", "rank", "said"})  # about a write's amounts and the elements it picks
_RELATIONS = frozenset({"member", "near", "equal"})  # value: (task value's name, observed)


def acted_on(spec: SkillSpec) -> Callable[[int, Guard], bool]:
    """``fact(step, guard)``: whether the guard at ``step`` is about what the runs act on."""
    writes = [i for i, s in enumerate(spec.steps) if not spec.tools[s.tool].read]
    answer = list(walk_exprs(spec.output))  # the answer acts like a write: what it quotes is acted on
    feeding = set(writes) | {e.call for e in answer if isinstance(e, Ref)}
    todo = list(feeding)
    while todo:  # the reads whose results reach a write's arguments, through other reads' arguments
        for _name, arg in spec.steps[todo.pop()].args:
            for e in walk_exprs(arg):
                if isinstance(e, Ref) and e.call not in feeding:
                    feeding.add(e.call)
                    todo.append(e.call)
    params = {
        e.name for i in feeding for _name, arg in spec.steps[i].args for e in walk_exprs(arg) if isinstance(e, Param)
    } | {e.name for e in answer if isinstance(e, Param)}
    roots = feeding | {
        i for i, s in enumerate(spec.steps)
        if any(isinstance(e, Param) and e.name in params for _name, arg in s.args for e in walk_exprs(arg))
    }
    records: dict[int, set[tuple[object, ...]]] = {}
    for e in [e for i in feeding for _name, arg in spec.steps[i].args for e in walk_exprs(arg)] + answer:
        if isinstance(e, Ref) and e.path:
            records.setdefault(e.call, set()).add(e.path[:-1])

    def about(step: int, path: tuple[object, ...]) -> bool:
        if step in roots and _shallow(path):
            return True
        for k, key in enumerate(path):
            if isinstance(key, (At, Where)) and key.name in params and _shallow(path[k + 1:]):
                return True
        return any(path[:len(r)] == r and _shallow(path[len(r):]) for r in records.get(step, ()))

    def fact(step: int, g: Guard) -> bool:
        if g.kind == "chosen" and isinstance(g.value[0], Select) and isinstance(g.value[0].key, Ref):
            return False  # a record one read names by its id in another (``_guards._joined``): which payment paid
        if g.kind in _ALWAYS:
            return True
        if g.kind == "opt":  # a field only some records have (a card's brand): which kind of record it is, its
            return False  # fields and source, is acted on; what the field says of that record is context
        if g.kind in _RELATIONS:
            return g.value[0] in params
        if g.kind == "same":
            return about(step, g.path) or about(g.value[0], g.value[1])
        return about(step, g.path)

    return fact


def _shallow(rest: tuple[object, ...]) -> bool:
    """A record's own field, or the elements of a list directly under it: not a record nested in it."""
    return len(rest) <= 1 or (type(rest[0]) is str and rest[1] == EACH and len(rest) <= 3)
