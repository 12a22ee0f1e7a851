"""The sandbox policy: an allow-list that a skill file's source must pass before it runs.

A skill file may contain a docstring, imports of registered tools (from their own
modules) and of ``skillforge.runtime`` helpers, one literal ``SKILL = {...}`` and one
function (followed by the functions of its variants, ``<function>_given_<parameters>``, which
only it may call: the same request said with more parameters, see ``_variants``; no function
calls itself or another, so there is no recursion). Inside a function: assignments to plain names, calls, ``if``, ``for``
over values that came from tool results, ``return``. Calls go only to registered
tools, the runtime helpers and a few safe builtins. Refused anywhere: names and
attributes starting with ``_``, attribute access other than a tool method called on
the instance parameter itself (a parameter the file declares an instance for, never
rebound anywhere in the function: ``inventory = result`` would make
``inventory.append`` a list's), ``while``, ``try``, ``with``, ``raise``, ``del``,
``global``, nested ``def``/``class``/``lambda``, set and dict comprehensions and list
comprehensions other than one plain ``for`` over a parameter, a result or the ``distinct``
elements of such a comprehension, ``**`` and
other powers and shifts, repetition of a literal sequence, ``*``/``**`` unpacking,
format specs computed at run time or with a width or precision past 99, and names
that shadow the helpers, the tools or the builtins (``RESERVED``).

What the code may contain bounds what it does: no ``while``, no recursion, loops
only over values that exist. How long those loops run and how large the values
they build grow is the sandbox's budget (``skillforge._sandbox``), enforced on every
iteration and every operation that can grow, since one C call (``'a' * 10**9``)
cannot be interrupted and a timer can be swallowed.

Together with RestrictedPython's compile-time and run-time guards this makes
generated, reviewed code terminate and reach nothing but the user's tools. It is a
policy for code we generated and people reviewed, running in-process with the
user's own tools; it is not an isolation boundary for hostile code.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["HELPERS", "POLICY_VERSION", "RESERVED", "SAFE_BUILTINS", "Violation", "check_policy", "modest_format"]

# Changes whenever the policy refuses something it allowed before: a verdict cached under another
# version (``Forge``'s state dir) is not trusted. 2: instance names never rebound, format specs bounded.
# 3: ``distinct`` is a helper (a name no parameter or local may take).
# 4: a skill's variants (functions only the skill's function calls) and ``str | None`` parameters.
# 6: ``compare`` is a helper.
POLICY_VERSION = 6
HELPERS = frozenset({"require", "has", "check", "pick", "values", "join", "near", "rank", "updated", "distinct", "lines", "among", "compare"})
RUNTIME_MODULE = "skillforge.runtime"
SAFE_BUILTINS = frozenset(
    {"len", "str", "int", "float", "bool", "format", "min", "max", "sum", "sorted", "any", "all", "round", "abs",
     "list", "dict", "isinstance", "repr", "enumerate"}
)
_CONSTANTS = frozenset({"True", "False", "None"})
_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod)
_MAX_INT = 10**15
_MAX_STR = 100_000
# Names a skill's own names (parameters, results, loop variables) must never take: they would shadow
# what the file calls. Codegen names around them (``skillforge._lifting``), so generated code passes.
RESERVED = HELPERS | SAFE_BUILTINS | _CONSTANTS | {"SKILL"}

# Widths and precisions in format specs: codegen writes ``.2f``, ``,.2f``, ``,`` and ``.15g`` (15 at most);
# ``f"{x:>3000000000}"`` would build a 3 GB string in one step, so anything past 99 is refused.
MAX_FORMAT_WIDTH = 99
_FORMAT_SPEC = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(\d*)[,_]?(?:\.(\d*))?[bcdeEfFgGnosxX%]?", re.S)


def modest_format(spec: object) -> bool:
    """Whether ``spec`` is a format spec (as for ``format(value, spec)``) with no width or precision past 99.

    >>> modest_format(",.2f"), modest_format(">12"), modest_format(">3000000000"), modest_format(".1000f")
    (True, True, False, False)
    """
    if type(spec) is not str:
        return False
    m = _FORMAT_SPEC.fullmatch(spec)
    return m is not None and all(len(g) <= 2 for g in m.groups() if g)


@dataclass(frozen=True, slots=True)
class Violation:
    """Where a skill file breaks the policy, and which rule."""

    line: int
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.rule}: {self.detail}"


class _Checker:
    def __init__(self, tools: dict[str, set[str]], methods: dict[str, set[str]]) -> None:
        self.tools = tools  # module → registered function names
        self.methods = methods  # instance parameter → registered method names
        self.violations: list[Violation] = []
        self.callables: set[str] = set(SAFE_BUILTINS)
        self.imported: set[str] = set()
        self.locals: set[str] = set()
        self.result_vars: set[str] = set()  # names bound to tool results (or parts of them)
        self.params: set[str] = set()
        self.stored: set[str] = set()  # every name the function assigns anywhere (targets of =, for, comprehensions)

    def bad(self, node: ast.AST, rule: str, detail: str) -> None:
        self.violations.append(Violation(getattr(node, "lineno", 0), rule, detail))

    # -- module --------------------------------------------------------------------
    def module(self, tree: ast.Module, function: str) -> None:
        defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        for i, node in enumerate(tree.body):
            if i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                continue
            if isinstance(node, ast.ImportFrom):
                self.import_from(node)
            elif isinstance(node, ast.Import):
                self.bad(node, "import", f"'import {node.names[0].name}': skills import only tools, with 'from <tool module> import ...'")
            elif isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["SKILL"]:
                try:
                    ast.literal_eval(node.value)
                except ValueError:
                    self.bad(node, "metadata", "SKILL must be a literal")
            elif isinstance(node, ast.FunctionDef):
                continue
            else:
                self.bad(node, "module statement", f"{type(node).__name__} is not allowed at module level")
        variants = [d.name for d in defs[1:] if d.name.startswith(f"{function}_given_")]
        if not defs or defs[0].name != function or len(defs) != 1 + len(variants):
            self.bad(tree, "function", f"the file must define exactly one function, {function!r} (then, if it has "
                     f"variants, one function for each, named {function}_given_<parameters>)")
        for d in defs:  # each function on its own: its parameters and locals are its own
            one = _Checker(self.tools, self.methods)
            one.imported = self.imported
            one.callables = self.callables | (set(variants) if d.name == function else set())
            one.function(d)
            self.violations += one.violations

    def import_from(self, node: ast.ImportFrom) -> None:
        mod = node.module or ""
        if node.level:
            self.bad(node, "import", "relative imports are not allowed")
            return
        allowed = HELPERS if mod == RUNTIME_MODULE else self.tools.get(mod)
        if allowed is None:
            self.bad(node, "import", f"module {mod!r} provides no registered tools")
            return
        for alias in node.names:
            name = alias.asname or alias.name
            if alias.name not in allowed:
                what = "runtime helper" if mod == RUNTIME_MODULE else "registered tool"
                self.bad(node, "import", f"{mod}.{alias.name} is not a {what}")
            elif name.startswith("_") or name in SAFE_BUILTINS or (name in HELPERS and name != alias.name):
                self.bad(node, "shadowing", f"cannot import {alias.name} as {name!r}")
            else:
                self.imported.add(name)
                self.callables.add(name)

    # -- function ------------------------------------------------------------------
    def function(self, node: ast.FunctionDef) -> None:
        if node.decorator_list:
            self.bad(node, "decorator", "the skill function takes no decorators")
        args = node.args
        if args.vararg or args.kwarg:
            self.bad(node, "parameters", "no *args or **kwargs")
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            self.bind(a, a.arg, param=True)
        self.stored = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            if not isinstance(default, ast.Constant):
                self.bad(default, "parameters", "defaults must be constants")
        for ann in [a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs] if a.annotation]:
            plain = isinstance(ann, ast.Name) and ann.id in ("str", "int", "float", "bool", "dict", "list")
            listed = (  # list[str]: a list the task gives item by item; list[tuple[str, dict]]: of records
                isinstance(ann, ast.Subscript) and isinstance(ann.value, ast.Name) and ann.value.id == "list"
                and (_plain(ann.slice) or isinstance(ann.slice, ast.Subscript) and isinstance(ann.slice.value, ast.Name)
                     and ann.slice.value.id == "tuple" and isinstance(ann.slice.slice, ast.Tuple)
                     and all(_plain(e) or _maybe(e) for e in ann.slice.slice.elts))
            )
            maybe = (  # str | None: what only a variant's phrasings give (None where the task did not say it)
                isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr) and isinstance(ann.left, ast.Name)
                and ann.left.id in ("str", "int", "float", "bool") and isinstance(ann.right, ast.Constant) and ann.right.value is None
            )
            if not (plain or listed or maybe):
                self.bad(ann, "annotation", "parameter annotations are limited to str, int, float, bool, dict, list, "
                         "list[str] and list[tuple[str, dict, ...]] (a record's part may be 'dict | None'), and "
                         "'str | None' (or int, float, bool) for what only some phrasings give")
        if node.returns is not None:
            self.bad(node.returns, "annotation", "no return annotation")
        self.body(node.body, top=True)

    def bind(self, node: ast.AST, name: str, *, param: bool = False) -> None:
        if name.startswith("_"):
            self.bad(node, "underscore", f"name {name!r} starts with '_'")
        elif name in RESERVED or name in self.imported:
            self.bad(node, "shadowing", f"{name!r} would shadow a helper, a tool or a builtin")
        if param:
            self.params.add(name)
        self.locals.add(name)

    def body(self, stmts: Iterable[ast.stmt], *, top: bool = False) -> None:
        for i, st in enumerate(stmts):
            if top and i == 0 and isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
                continue
            self.stmt(st)

    def stmt(self, st: ast.stmt) -> None:
        if isinstance(st, ast.Assign):
            for t in st.targets:
                if not isinstance(t, ast.Name):
                    self.bad(t, "assignment", "assign only to plain names")
                    continue
                self.bind(t, t.id)
                if self.from_results(st.value):
                    self.result_vars.add(t.id)
            self.expr(st.value)
        elif isinstance(st, ast.Expr):
            if not isinstance(st.value, ast.Call):
                self.bad(st, "statement", "a bare expression must be a call")
            self.expr(st.value)
        elif isinstance(st, ast.Return):
            if st.value is not None:
                self.expr(st.value)
        elif isinstance(st, ast.If):
            self.expr(st.test)
            self.body(st.body)
            self.body(st.orelse)
        elif isinstance(st, ast.For):
            if not isinstance(st.target, ast.Name):
                self.bad(st.target, "loop", "loop over one plain name")
            else:
                self.bind(st.target, st.target.id)
                self.result_vars.add(st.target.id)
            if not self.from_results(st.iter) or isinstance(st.iter, ast.Call):
                self.bad(st.iter, "loop", "loops may only go over values that came from tool results")
            self.expr(st.iter)
            if st.orelse:
                self.bad(st, "loop", "no for ... else")
            self.body(st.body)
        elif isinstance(st, (ast.Pass, ast.Break, ast.Continue)):
            return
        else:
            names = {
                ast.While: "no 'while' loops (a skill must terminate)",
                ast.Try: "no 'try': a guard that fails must stop the skill",
                ast.FunctionDef: "no nested functions",
                ast.AsyncFunctionDef: "no async functions",
                ast.ClassDef: "no classes",
                ast.With: "no 'with'",
                ast.Raise: "no 'raise': use require(condition, why)",
                ast.Delete: "no 'del'",
                ast.Global: "no 'global'",
                ast.Nonlocal: "no 'nonlocal'",
                ast.Import: "no imports inside the function",
                ast.ImportFrom: "no imports inside the function",
                ast.Assert: "no 'assert': use require(condition, why)",
                ast.AugAssign: "no augmented assignment",
                ast.AnnAssign: "no annotated assignment",
            }
            detail = names.get(type(st), f"{type(st).__name__} is not allowed")
            self.bad(st, "statement", detail)

    def instance(self, e: ast.expr) -> bool:
        """Whether ``e`` is an instance parameter itself: a parameter given a provided instance, never rebound
        (a name rebound to a result would call ``dict.update`` or ``list.append`` on live objects, unrecorded)."""
        return isinstance(e, ast.Name) and e.id in self.methods and e.id in self.params and e.id not in self.stored

    def from_results(self, e: ast.expr) -> bool:
        """Whether ``e`` is a tool call, or a name or subscript rooted in a tool result."""
        if isinstance(e, ast.ListComp):  # a tool called for each item of a list: a list of its results
            return isinstance(e.elt, ast.Call) and self.from_results(e.elt)
        if isinstance(e, ast.Call):
            f = e.func
            return (isinstance(f, ast.Name) and f.id in self.imported) or (
                isinstance(f, ast.Attribute) and self.instance(f.value)
            )
        while isinstance(e, ast.Subscript):
            e = e.value
        return isinstance(e, ast.Name) and e.id in self.result_vars

    def expr(self, e: ast.AST) -> None:
        for node in ast.walk(e):
            if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
                self.comprehension(node)
        for node in ast.walk(e):
            self.node(node)

    def comprehension(self, n: ast.ListComp | ast.GeneratorExp) -> None:
        """``[... for item in items]`` / ``all(... for item in items)``: one plain loop over a parameter
        or a tool result, no conditions (a list the task gives or a tool returned: it terminates)."""
        if len(n.generators) != 1:
            self.bad(n, "comprehension", "one 'for' per comprehension")
            return
        gen = n.generators[0]
        if gen.ifs or gen.is_async:
            self.bad(n, "comprehension", "no 'if' or 'async for' in a comprehension")
        over_param = isinstance(gen.iter, ast.Name) and gen.iter.id in self.params
        targets = gen.target.elts if isinstance(gen.target, ast.Tuple) and over_param else [gen.target]
        if not targets or not all(isinstance(t, ast.Name) for t in targets):  # the parts of a record: names too
            self.bad(gen.target, "comprehension", "a comprehension goes over one plain name (or the names of a record's parts)")
            return
        it = gen.iter  # distinct([... for item in items]): a sublist of a list that terminates
        over_distinct = (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "distinct"
                         and len(it.args) == 1 and not it.keywords and isinstance(it.args[0], ast.ListComp))
        if not over_param and not over_distinct and (not self.from_results(gen.iter) or isinstance(gen.iter, ast.Call)):
            self.bad(gen.iter, "comprehension", "comprehensions may only go over a parameter, values that came from "
                     "tool results, or the distinct() elements of such a comprehension")
        for t in [t for t in targets if isinstance(t, ast.Name)]:
            if t.id in self.params:
                self.bad(t, "shadowing", f"{t.id!r} would shadow a parameter")
            self.bind(t, t.id)
            if not over_param:
                self.result_vars.add(t.id)

    def node(self, n: ast.AST) -> None:
        if isinstance(n, ast.Name):
            if n.id.startswith("_"):
                self.bad(n, "underscore", f"name {n.id!r} starts with '_'")
            elif n.id not in self.locals and n.id not in self.callables and n.id not in _CONSTANTS:
                self.bad(n, "name", f"{n.id!r} is not a parameter, a local, a tool, a helper or a safe builtin")
        elif isinstance(n, ast.Attribute):
            if self.instance(n.value) and n.attr in self.methods[n.value.id]:  # type: ignore[attr-defined]
                return
            if isinstance(n.value, ast.Name) and n.value.id in self.methods and n.value.id in self.stored:
                self.bad(n, "attribute", f"'{n.value.id}.{n.attr}': {n.value.id!r} is rebound in the function, so it may "
                         "not hold the instance; call tool methods on the instance parameter itself, never reassigned")
            else:
                self.bad(n, "attribute", f"attribute access '.{n.attr}' is not allowed (only an instance's tool methods)")
        elif isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name):
                if f.id not in self.callables:
                    self.bad(n, "call", f"{f.id}() is not a registered tool, a helper or a safe builtin")
            elif not isinstance(f, ast.Attribute):
                self.bad(n, "call", "only named tools, helpers and builtins may be called")
            for kw in n.keywords:
                if kw.arg is None:
                    self.bad(n, "unpacking", "no **unpacking in calls")
        elif isinstance(n, ast.FormattedValue) and n.format_spec is not None:
            parts = n.format_spec.values if isinstance(n.format_spec, ast.JoinedStr) else [n.format_spec]
            if not all(isinstance(p, ast.Constant) and isinstance(p.value, str) for p in parts):
                self.bad(n, "format spec", "a format spec must be written out, not computed at run time")
            elif not modest_format("".join(p.value for p in parts)):  # type: ignore[attr-defined]
                self.bad(n, "format spec", f"format spec {''.join(p.value for p in parts)!r}: widths and precisions "  # type: ignore[attr-defined]
                         f"past {MAX_FORMAT_WIDTH} are not allowed")
        elif isinstance(n, ast.Starred):
            self.bad(n, "unpacking", "no *unpacking")
        elif isinstance(n, ast.BinOp):
            if not isinstance(n.op, _BINOPS):
                self.bad(n, "operator", f"operator {type(n.op).__name__} is not allowed (no powers, shifts or bit tricks)")
            elif isinstance(n.op, ast.Mult) and any(_is_sequence(x) for x in (n.left, n.right)):
                self.bad(n, "operator", "no repetition of strings or lists")
        elif isinstance(n, ast.Constant):
            v = n.value
            if isinstance(v, int) and not isinstance(v, bool) and abs(v) > _MAX_INT:
                self.bad(n, "constant", "integer constant too large")
            elif isinstance(v, (str, bytes)) and len(v) > _MAX_STR:
                self.bad(n, "constant", "string constant too large")
        elif isinstance(n, (ast.Lambda, ast.SetComp, ast.DictComp)):
            self.bad(n, "expression", f"{type(n).__name__} is not allowed")
        elif isinstance(n, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            self.bad(n, "expression", f"{type(n).__name__} is not allowed")


def _is_sequence(e: ast.expr) -> bool:
    return isinstance(e, (ast.List, ast.Tuple, ast.JoinedStr)) or (
        isinstance(e, ast.Constant) and isinstance(e.value, (str, bytes))
    )


def _plain(e: ast.expr) -> bool:
    return isinstance(e, ast.Name) and e.id in ("str", "int", "float", "dict")


def _maybe(e: ast.expr) -> bool:
    """``dict | None``: a part of a record that some items leave out."""
    return (isinstance(e, ast.BinOp) and isinstance(e.op, ast.BitOr) and _plain(e.left)
            and isinstance(e.right, ast.Constant) and e.right.value is None)


def check_policy(
    source: str,
    function: str,
    tools: dict[str, set[str]],
    methods: dict[str, set[str]] | None = None,
) -> list[Violation]:
    """Every policy violation in a skill's source (empty: it may run).

    Args:
        source: the file's text.
        function: the name of its skill function.
        tools: module → names of the registered tools it may import from there.
        methods: instance parameter → names of the registered method tools it may call.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        return [Violation(e.lineno or 0, "syntax", e.msg)]
    checker = _Checker(tools, methods or {})
    checker.module(tree, function)
    return sorted(set(checker.violations), key=lambda v: (v.line, v.rule, v.detail))
