"""A rendered function body, tidied for its reviewer. Pure.

Codegen writes each guard and argument from the facts it stands for, one at a time, so two facts
can render to one check, and an element a task value picks from a list is picked again wherever it
is used. Two passes over the body's lines fix that; neither changes what the code does, only how
often it says it:

- ``once``: a ``require`` whose condition one before it on the same path already checked is not
  written again (``stock['available']`` is 0, and is zero);
- ``named``: an element picked twice or more on one path is picked once, into a name
  (``item = pick(order['items'], 'name', item_name)``), where the code would first pick it
  anyway, and used by that name after. Guard messages keep the whole expression: a reason read in
  a handover names what it checked without the code around it.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

__all__ = ["named", "once", "texts"]

_INDENT = "    "
_WORD = re.compile(r"[A-Za-z_]\w*")
_STRING = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")  # a one-line literal, as repr writes it
# plural endings of a list's key, and the singular each names an element by ("items" -> "item")
_SINGULAR = (("ies", "y"), ("sses", "ss"), ("uses", "us"), ("xes", "x"), ("ches", "ch"), ("shes", "sh"), ("s", ""))


def once(lines: list[str]) -> list[str]:
    """``lines`` less each ``require`` whose condition one before it already checked on the way there.

    Facts of different kinds can say one thing (``stock['available']`` is 0 and is zero; a list
    is empty and has 0 elements): the second check could not fail, and a reviewer reads it twice.
    A check inside an ``if`` block holds only there; the blocks of a function all return.
    """
    out: list[str] = []
    checked: list[tuple[int, set[str]]] = [(0, set())]  # (indent, conditions checked) per block open here
    opened: set[str] = set()  # what the ``if`` just before holds inside its block
    for line in lines:
        indent = len(line) - len(line.lstrip(" "))
        while len(checked) > 1 and indent < checked[-1][0]:
            checked.pop()
        if indent > checked[-1][0]:
            checked.append((indent, opened))
        opened = set()
        stmt = line.strip()
        lists = frozenset(t for _i, seen in checked for c in seen if (t := _listed(c)) is not None)
        if stmt.startswith("if ") and (test := _if_test(stmt)) is not None:
            opened = set(_holding(test, lists))
        cond = _condition(stmt)
        if cond is not None:
            said = _normal(cond)
            if any(said in seen for _i, seen in checked):
                continue
            checked[-1][1].update(_holding(cond, lists))
        out.append(line)
    return _before_stronger(out)


def _before_stronger(lines: list[str]) -> list[str]:
    """``lines`` less each ``require`` that a later one of the same run of checks (nothing but checks
    and comments between them, in the same block) makes sure of: ``x not in items`` before
    ``not near(x, items)``."""
    conds = [_condition(line.strip()) for line in lines]
    indents = [len(line) - len(line.lstrip(" ")) for line in lines]
    drop: set[int] = set()
    for i, cond in enumerate(conds):
        if cond is None or "has(" in cond:  # what must be there is checked first: a check that reads it then stops cleanly
            continue
        said = _normal(cond)
        for j in range(i + 1, len(lines)):
            if indents[j] == indents[i] and lines[j].lstrip().startswith("#"):
                continue
            later = conds[j]
            if indents[j] != indents[i] or later is None:
                break
            if said in _holding(later) and _normal(later) != said:
                drop.add(i)
                break
    return [line for k, line in enumerate(lines) if k not in drop]


_HAS_TEXT = re.compile(r"require\(has\((\w+)((?:, (?:'(?:[^'\\\\]|\\\\.)*'|-?\d+))*), kind='str'\), ")


def texts(lines: list[str]) -> list[str]:
    """``lines`` with a text that must be there (``has(user, 'manager', kind='str')``) and be one line
    long (``lines(user['manager']) == 1``) in one block checked in one ``require``, where the first was."""
    out = list(lines)
    drop: set[int] = set()
    for i, line in enumerate(out):
        m = _HAS_TEXT.match(line.strip())
        if m is None:
            continue
        indent = len(line) - len(line.lstrip(" "))
        target = m.group(1) + "".join(f"[{k}]" for k in m.group(2)[2:].split(", ") if k)
        want = f"require(lines({target}) == 1, "
        for j in range(i + 1, len(out)):
            other = out[j]
            there = len(other) - len(other.lstrip(" "))
            if there < indent or (there == indent and other.lstrip().startswith(("if ", "return "))):
                break
            if there == indent and other.strip().startswith(want):
                cond = f"has({m.group(1)}{m.group(2)}, kind='str') and lines({target}) == 1"
                out[i] = " " * indent + f"require({cond}, {f'{target} is one line of text, as when learned'!r})"
                drop.add(j)
                break
    return [line for k, line in enumerate(out) if k not in drop]


def _if_test(stmt: str) -> str | None:
    """The test of a one-line ``if <test>:`` (a comment after it allowed), or None."""
    code = stmt.split("  #", 1)[0].rstrip()
    return code[3:-1] if code.endswith(":") else None


@lru_cache(maxsize=8192)
def _normal(cond: str) -> str:
    """``cond`` as ``ast.unparse`` writes it (so two spellings of one check compare equal)."""
    try:
        return ast.unparse(ast.parse(cond, mode="eval"))
    except SyntaxError:
        return cond


@lru_cache(maxsize=8192)
def _listed(cond: str) -> str | None:
    """For a check that a value is a list or a dict (``has(user, 'groups', kind='list')``), the value
    (``user['groups']``), as ``ast.unparse`` writes it; else None."""
    if not cond.startswith("has(") or not cond.endswith(("kind='list')", "kind='dict')")):
        return None
    try:
        call = ast.parse(cond, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call) or not call.args or not all(isinstance(a, ast.Constant) for a in call.args[1:]):
        return None
    target: ast.expr = call.args[0]
    for key in call.args[1:]:
        target = ast.Subscript(target, key)
    return ast.unparse(target)


@lru_cache(maxsize=8192)
def _holding(cond: str, lists: frozenset[str] = frozenset()) -> frozenset[str]:
    """What holds where ``cond`` does: itself, and the checks it makes sure of (``x in items`` means
    ``near(x, items)`` and ``len(items) > 0``; ``not near(x, items)`` means ``x not in items``; a text
    equal to ``'Open'`` is one line of text; a number from 1 to 5 is positive). Each is written as
    ``ast.unparse`` writes it. Between ``in`` and ``near`` only over a list or a dict: ``values(...)``,
    a literal, or one of ``lists`` (checked to be one); over a text ``in`` finds a part of it, and
    ``near`` one of its listed items."""
    try:
        tree = ast.parse(cond, mode="eval").body
    except SyntaxError:
        return frozenset({cond})
    out: set[str] = set()
    todo = [tree]
    while todo:
        node = todo.pop()
        out.add(ast.unparse(node))
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            todo.extend(node.values)
        else:
            out.update(ast.unparse(n) for n in _implied(node, lists))
    return frozenset(out)


def _call(name: str, *args: ast.expr) -> ast.expr:
    return ast.Call(ast.Name(name), list(args), [])


def _compare(left: ast.expr, op: ast.cmpop, right: Any) -> ast.expr:
    return ast.Compare(left, [op], [right if isinstance(right, ast.AST) else ast.Constant(right)])


def _has(target: ast.expr, kind: str) -> ast.expr | None:
    """``has(var, 'key', ..., kind=kind)`` for ``var['key']...``, or None for another expression."""
    keys: list[ast.expr] = []
    while isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
        keys.insert(0, target.slice)
        target = target.value
    if not isinstance(target, ast.Name) or not keys:
        return None
    return ast.Call(ast.Name("has"), [target, *keys], [ast.keyword("kind", ast.Constant(kind))])


def _no_text(node: ast.expr, lists: frozenset[str]) -> bool:
    """Whether ``node`` is sure to be a list or a dict (see ``_holding``)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "values":
        return True
    return isinstance(node, ast.Tuple | ast.List) or ast.unparse(node) in lists


def _implied(node: ast.expr, lists: frozenset[str] = frozenset()) -> list[ast.expr]:
    """The checks ``node`` makes sure of, beyond itself."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = node.operand
        if (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "near" and len(inner.args) == 2
                and _no_text(inner.args[1], lists)):
            return [_compare(inner.args[0], ast.NotIn(), inner.args[1])]
        return []
    if not isinstance(node, ast.Compare):
        return []
    if len(node.ops) == 2 and all(isinstance(op, ast.LtE | ast.Lt) for op in node.ops):  # low <= x <= high
        low, x, high = node.left, node.comparators[0], node.comparators[1]
        if _number(low) and _number(high):
            if low.value > 0 or (low.value == 0 and isinstance(node.ops[0], ast.Lt)):  # type: ignore[union-attr]
                return [_compare(x, ast.Gt(), 0)]
            if high.value < 0:  # type: ignore[union-attr]
                return [_compare(x, ast.Lt(), 0)]
        return []
    if len(node.ops) != 1:
        return []
    op, left, right = node.ops[0], node.left, node.comparators[0]
    out: list[ast.expr | None] = []
    if isinstance(op, ast.In) and _no_text(right, lists):  # over a text, "" is in ""
        out += [_call("near", left, right), _compare(_call("len", right), ast.Gt(), 0)]
        if isinstance(right, ast.Tuple) and right.elts and all(isinstance(e, ast.Constant) for e in right.elts):
            out += _of_values(left, [e.value for e in right.elts])  # type: ignore[attr-defined]
    elif isinstance(op, ast.Eq | ast.Is) and isinstance(right, ast.Constant):
        out += _of_values(left, [right.value])
    elif isinstance(op, ast.Eq | ast.Gt) and _is_len(left) and _number(right) and right.value > 0:  # type: ignore[union-attr]
        out.append(_compare(left, ast.Gt(), 0))
    elif isinstance(op, ast.Eq) and _is_len(left) and _number(right) and right.value == 0:  # type: ignore[union-attr]
        out.append(_compare(left, ast.Eq(), 0))
    return [n for n in out if n is not None]


def _of_values(target: ast.expr, values: list[Any]) -> list[ast.expr | None]:
    """What a value that is one of ``values`` is sure to be: of their kind, their sign, as many lines."""
    if all(type(v) is str for v in values):
        counts = {len(v.splitlines()) for v in values}
        out = [_has(target, "str")]
        if len(counts) == 1:
            n = counts.pop()
            out.append(_compare(_call("lines", target), ast.Gt(), 1) if n > 1 else _compare(_call("lines", target), ast.Eq(), n))
        return out
    if all(type(v) is bool for v in values):
        return [_has(target, "bool")]
    signs = {(v > 0) - (v < 0) for v in values if type(v) in (int, float)}
    if len(signs) == 1 and all(type(v) in (int, float) for v in values):  # their sign, not their kind: True == 1 too
        return [{1: _compare(target, ast.Gt(), 0), 0: _compare(target, ast.Eq(), 0), -1: _compare(target, ast.Lt(), 0)}[signs.pop()]]
    return []


def _number(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _is_len(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1


def _condition(stmt: str) -> str | None:
    """The condition of ``require(<condition>, <message>)``, a message codegen wrote with ``repr`` (a
    quote inside it is escaped, so the first one unescaped from the end opens it); else None."""
    if not stmt.startswith("require(") or not stmt.endswith("')") and not stmt.endswith('")'):
        return None
    quote, i = stmt[-2], len(stmt) - 3
    while i > 0:
        if stmt[i] == quote:
            slashes = len(stmt[:i]) - len(stmt[:i].rstrip("\\"))
            if not slashes % 2:
                break
        i -= 1
    return stmt[len("require(") : i - 2] if stmt[i - 2 : i] == ", " else None


def named(lines: list[str], taken: set[str]) -> list[str]:
    """``lines`` with each element picked (``pick(...)``) twice or more on one path picked once, into a
    name none of ``taken`` nor of the body's own names is (``item``, else ``item_2``, ...).

    The name is bound just before the first statement that picks the element whatever happens
    (not in an ``and``/``or`` operand after the first, an ``if``-expression's branch or a
    comprehension): that statement would pick it first anyway, so a pick that fails stops the skill
    where it did. Uses before that statement stay as they were; a name bound inside an ``if`` block
    is used only there."""
    if sum(line.count("pick(") for line in lines) < 2:
        return lines
    source = "def _f():\n" + "".join(f"{_INDENT}{line}\n" for line in lines)
    tree = ast.parse(source)
    binds: dict[int, list[str]] = {}  # line index -> "name = pick(...)" lines to put before it (unindented)
    edits: dict[int, list[tuple[int, int, str]]] = {}  # line index -> (start, end, name): UTF-8 offsets in the line
    names = set(taken) | set(_WORD.findall(_STRING.sub("''", source)))  # the body's own names (a text's words are not)

    def fresh(base: str) -> str:
        out, k = base, 2
        while out in names:
            out, k = f"{base}_{k}", k + 1
        names.add(out)
        return out

    rows = [line.encode() for line in source.splitlines()]

    def text(node: ast.AST) -> str:
        if node.lineno == node.end_lineno:  # type: ignore[attr-defined]
            return rows[node.lineno - 1][node.col_offset : node.end_col_offset].decode()  # type: ignore[attr-defined]
        return ast.unparse(node)

    def picks(node: ast.AST, deep: bool = False) -> list[tuple[ast.Call, bool]]:
        if not any(b"pick(" in row for row in rows[node.lineno - 1 : node.end_lineno]):  # type: ignore[attr-defined]
            return []
        return list(_picks(node, rows, deep))

    def inside(node: ast.Call, env: dict[str, str]) -> str:
        """The text of ``node`` with the elements named in ``env`` it picks from by their names."""
        said = text(node)
        if node.lineno != node.end_lineno:  # type: ignore[attr-defined]
            return said
        spans = [(m.col_offset - node.col_offset, m.end_col_offset - node.col_offset, env[t])  # type: ignore[operator]
                 for m, _e in _picks(node, rows) if m is not node and (t := text(m)) in env and m.lineno == m.end_lineno]
        data = said.encode()
        for start, end, name in sorted(_outermost(spans), reverse=True):
            data = data[:start] + name.encode() + data[end:]
        return data.decode()

    def block(stmts: list[ast.stmt], env: dict[str, str]) -> None:
        env = dict(env)
        every = [[text(n) for n, _e in picks(s, deep=True)] for s in stmts]
        rest = Counter(t for said in every for t in said)  # picks from this statement on
        for stmt, said_here in zip(stmts, every, strict=True):
            own = picks(stmt.test) if isinstance(stmt, ast.If) else picks(stmt)
            for node, eager in own:
                said = text(node)
                if said not in env and eager and rest[said] >= 2:
                    bound = inside(node, env)  # what it picks from may be a named element's
                    env[said] = fresh(_element_name(node))
                    binds.setdefault(stmt.lineno - 2, []).append(f"{env[said]} = {bound}")
                if said in env and node.lineno == node.end_lineno:
                    start, end = node.col_offset - len(_INDENT), node.end_col_offset - len(_INDENT)  # type: ignore[operator]
                    edits.setdefault(node.lineno - 2, []).append((start, end, env[said]))
            rest.subtract(said_here)
            if isinstance(stmt, ast.If):  # an ``else`` (codegen writes none) keeps its picks as they are
                block(stmt.body, env)

    block(tree.body[0].body, {})  # type: ignore[attr-defined]
    out: list[str] = []
    for i, line in enumerate(lines):
        indent = line[: len(line) - len(line.lstrip(" "))]
        out.extend(indent + bind for bind in binds.get(i, ()))
        data = line.encode()
        for start, end, name in sorted(_outermost(edits.get(i, [])), reverse=True):
            data = data[:start] + name.encode() + data[end:]
        out.append(data.decode())
    return out


# statements whose bodies may bind names or run more than once (codegen writes none of them): not walked
_OPAQUE = (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _picks(node: ast.AST, rows: list[bytes], deep: bool = False) -> Iterator[tuple[ast.Call, bool]]:
    """The ``pick(...)`` calls in ``node``, each with whether it is evaluated whenever ``node`` is (not
    behind a short circuit); none inside a comprehension or lambda (a name of the body there may mean
    another thing), nor in an f-string where the position Python gives is not the expression's (before
    3.12 it may point at the same text earlier in the line). ``rows``: the source's lines, as UTF-8
    (the offsets ``ast`` gives). ``deep``: also in the blocks of an ``if``."""

    def at(n: ast.expr) -> bytes:
        return rows[n.lineno - 1][n.col_offset : n.end_col_offset] if n.lineno == n.end_lineno else b""  # type: ignore[index]

    def placed(n: ast.expr) -> bool:
        try:
            return ast.dump(ast.parse(at(n).decode(), mode="eval").body) == ast.dump(n)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            return False

    def walk(n: ast.AST, eager: bool, quoted: bool = False) -> Iterator[tuple[ast.Call, bool]]:
        if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda, ast.Constant, *_OPAQUE)):
            return
        if isinstance(n, ast.JoinedStr):
            for part in n.values:
                if isinstance(part, ast.FormattedValue) and not isinstance(part.value, ast.JoinedStr):
                    for m, e in walk(part.value, eager, True):
                        if placed(m):
                            yield m, e
            return
        if not quoted and isinstance(n, ast.expr) and n.lineno == n.end_lineno and b"pick(" not in at(n):
            return  # nothing picked in it (a combination's literal rows): not walked
        if isinstance(n, ast.If) and not deep:
            yield from walk(n.test, eager, quoted)
            return
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "pick":
            yield n, eager
        if isinstance(n, ast.BoolOp):
            yield from walk(n.values[0], eager, quoted)
            for v in n.values[1:]:
                yield from walk(v, False, quoted)
        elif isinstance(n, ast.IfExp):
            yield from walk(n.test, eager, quoted)
            yield from walk(n.body, False, quoted)
            yield from walk(n.orelse, False, quoted)
        elif isinstance(n, ast.Compare):
            yield from walk(n.left, eager, quoted)
            for i, c in enumerate(n.comparators):
                yield from walk(c, eager and i == 0, quoted)
        else:
            for child in ast.iter_child_nodes(n):
                yield from walk(child, eager, quoted)

    yield from walk(node, True)


def _outermost(edits: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Of the spans to replace in one line, those no other span holds (a pick inside a named pick's
    arguments goes with it)."""
    return [e for e in edits if not any(o != e and o[0] <= e[0] and e[1] <= o[1] for o in edits)]


def _element_name(call: ast.Call) -> str:
    """A name for the element ``call`` picks: the singular of the list's key (``items``: ``item``), or
    ``element``."""
    seq = call.args[0] if call.args else None
    key = seq.slice.value if isinstance(seq, ast.Subscript) and isinstance(seq.slice, ast.Constant) else None
    if type(key) is not str or not key.isidentifier() or key.startswith("_"):
        return "element"
    word = key.lower()
    for plural, single in _SINGULAR:
        if word.endswith(plural) and len(word) > len(plural):
            if plural == "s" and word.endswith(("ss", "us")):  # no plural: "address", "status"
                break
            return word[: -len(plural)] + single
    return f"{word}_element"
