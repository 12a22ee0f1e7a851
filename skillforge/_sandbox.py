"""Executing skill files through RestrictedPython, within a budget.

A skill file is compiled with ``compile_restricted`` and executed with a small
set of builtins and an import hook that resolves ``from <tool module> import
<tool>`` to the *registered* tools only (or to stand-ins, for admission). Code
objects are cached by source text.

The budget is enforced on every operation that can loop or grow, not by a timer
(an alarm can be swallowed, and one C call such as ``'a' * 10**9`` cannot be
interrupted). Compiling rewrites them:

- every loop iteration (``for`` statements, comprehensions) goes through
  ``_getiter_``, which counts it against ``MAX_ITERATIONS`` and, every 32
  iterations, checks the run's deadline (``Forge(max_skill_seconds=...)``);
- ``+`` and ``*`` go through guards that charge the characters or items they
  would build to ``MAX_BUILT`` *before* building them, and keep integers under
  ``MAX_INT_BITS``; so do ``sum()`` and the ``join`` helper; ``%``, f-strings,
  ``str()``, ``repr()`` and ``format()`` are charged as soon as they are made
  (their widths are capped, so each piece is small), and, inside loops, where copies add up,
  ``sorted()``, ``list()``, ``dict()`` and the ``values``, ``updated`` and ``distinct`` helpers; ``format()`` and ``%`` refuse widths and
  precisions past 99 (the policy refuses them in f-strings); ``round()`` takes
  at most 400 digits either way.

A skill past a budget stops with ``BudgetExceeded``, which hands over to the
agent like a failed guard. ``-``, ``/`` and ``//`` are left alone: they never
make a value much larger than their operands.

This is a policy for code we generated and people reviewed, running in-process
with the user's own tools. It is not an isolation boundary for hostile code.
"""

from __future__ import annotations

import ast
import logging
import operator
import re
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from types import CodeType, SimpleNamespace
from typing import Any

from RestrictedPython import RestrictingNodeTransformer, compile_restricted_exec, safe_builtins
from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence, safer_getattr

from . import runtime
from ._exceptions import BudgetExceeded, SandboxError
from ._policy import HELPERS, MAX_FORMAT_WIDTH, RUNTIME_MODULE, modest_format
from ._tools import MAX_BUILT, MAX_INT_BITS, MAX_ITERATIONS, current_run, spend_built

__all__ = ["MAX_BUILT", "MAX_INT_BITS", "MAX_ITERATIONS", "SandboxError", "compile_skill", "load_function"]

logger = logging.getLogger(__name__)


_ALLOWED_BUILTINS = (
    "False None True abs bool float int isinstance len range repr round str "
    "ArithmeticError Exception KeyError IndexError LookupError TypeError ValueError ZeroDivisionError"
).split()


MAX_ROUND_DIGITS = 400  # round(x, n): floats span 10**-324..10**308; round(1, -10**15) computes 10**(10**15)


def _write(obj: Any) -> Any:
    return obj


def _apply(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return func(*args, **kwargs)


def _inplacevar(op: str, x: Any, y: Any) -> Any:
    if op == "+=":
        return _add(x, y)
    if op == "-=":
        return x - y
    raise SandboxError(f"in-place operator {op} is not allowed in skills")


# -- loops -------------------------------------------------------------------------------------
def _getiter(obj: Any) -> Iterator[Any]:
    run = current_run()
    return iter(obj) if run is None else _counted(iter(obj), run)


def _counted(items: Iterator[Any], run: Any) -> Iterator[Any]:
    """``items``, each one counted against the run's iterations; every 32nd iteration of the run checks its
    deadline (an iteration's work is bounded by the other budgets; the clock costs as much as the rest)."""
    for item in items:
        run.iterations -= 1
        if not run.iterations & 31:
            if run.iterations < 0:
                raise BudgetExceeded(f"the skill used its budget of {MAX_ITERATIONS:,} loop iterations")
            run.out_of_time()
        yield item


# -- operations that grow ----------------------------------------------------------------------
_SEQUENCES = (str, list, tuple)


def _too_big(bits: int) -> BudgetExceeded:
    return BudgetExceeded(f"the skill would make an integer of {bits:,} bits, past its budget of {MAX_INT_BITS:,}")


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, _SEQUENCES) and isinstance(b, _SEQUENCES):
        spend_built(len(a) + len(b))
        return a + b
    out = a + b
    if type(out) is int and out.bit_length() > MAX_INT_BITS:
        raise _too_big(out.bit_length())
    return out


def _mul(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        if a.bit_length() + b.bit_length() > MAX_INT_BITS:
            raise _too_big(a.bit_length() + b.bit_length())
    elif isinstance(a, _SEQUENCES) and isinstance(b, int):
        spend_built(len(a) * max(b, 0))
    elif isinstance(b, _SEQUENCES) and isinstance(a, int):
        spend_built(len(b) * max(a, 0))
    return a * b


# one printf-style conversion: %(key)flags width .precision length type
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d*)(?:\.(\*|\d*))?[hlL]?(.)?", re.S)


def _mod(a: Any, b: Any) -> Any:
    if not isinstance(a, str):
        return a % b  # numbers: never larger than their operands
    for m in _PERCENT.finditer(a):
        if any(g and (g == "*" or len(g) > 2) for g in m.groups()[:2]):
            raise BudgetExceeded(f"the format {m[0]!r} is past the skill's budget: widths and precisions up to {MAX_FORMAT_WIDTH}")
    out = a % b
    spend_built(len(out))
    return out


def _format(value: Any, spec: str = "") -> str:
    if not modest_format(spec):
        raise BudgetExceeded(f"format spec {spec!r} is past the skill's budget: widths and precisions up to {MAX_FORMAT_WIDTH}")
    out = format(value, spec)
    spend_built(len(out))
    return out


def _str(*args: Any) -> str:
    out = str(*args)
    spend_built(len(out))
    return out


def _repr(value: Any) -> str:
    out = repr(value)
    spend_built(len(out))
    return out


def _fstring(text: str) -> str:
    spend_built(len(text))
    return text


def _copied(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``func(...)`` (``sorted``, ``list``, ``dict``, ``values``, ``updated``) inside a loop: its copy charged.

    Outside loops a copy is at most as large as what it copies; in a loop the copies add up
    (``[sorted(rows) for row in rows]``), so there each is charged, after it is made.
    """
    out = func(*args, **kwargs)
    spend_built(len(out))
    return out


def _round(number: Any, ndigits: Any = None) -> Any:
    if type(ndigits) is int and not -MAX_ROUND_DIGITS <= ndigits <= MAX_ROUND_DIGITS:
        raise BudgetExceeded(f"round() to {ndigits:,} digits: the skill's budget allows {MAX_ROUND_DIGITS} either way")
    return round(number, ndigits)


def _sum(items: Any, /, start: Any = 0) -> Any:
    if type(start) in (int, float, bool):
        return sum(items, start)  # numbers (a list or a string among them raises TypeError)
    total = start
    for item in items:  # lists or tuples: each step charged, as with +
        total = _add(total, item)
    return total


_GUARDED_OPS = {ast.Add: "_add_", ast.Mult: "_mul_", ast.Mod: "_mod_"}
_COPIES = frozenset({"sorted", "list", "dict", "values", "updated", "distinct"})  # charged inside loops (see _copied)


class _Budgeted(RestrictingNodeTransformer):
    """RestrictedPython's transformer, plus calls to the budget guards around what can grow."""

    loops = 0  # how many loops (``for`` bodies, comprehensions) the node being visited is inside

    def _looping(self, visit: Callable[[Any], Any], node: Any) -> Any:
        self.loops += 1
        try:
            return visit(node)
        finally:
            self.loops -= 1

    def visit_For(self, node: ast.For) -> Any:
        return self._looping(super().visit_For, node)

    def visit_ListComp(self, node: ast.ListComp) -> Any:
        return self._looping(super().visit_ListComp, node)

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> Any:
        return self._looping(super().visit_GeneratorExp, node)

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        node = self.node_contents_visit(node)
        guard = _GUARDED_OPS.get(type(node.op))
        if guard is None:
            return node
        return ast.copy_location(ast.Call(ast.copy_location(ast.Name(guard, ast.Load()), node), [node.left, node.right], []), node)

    def visit_Call(self, node: ast.Call) -> Any:
        node = super().visit_Call(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str":
            node.func = ast.copy_location(ast.Name("_str_", ast.Load()), node.func)  # str stays the type elsewhere
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _COPIES and self.loops:
            node.args.insert(0, node.func)
            node.func = ast.copy_location(ast.Name("_copied_", ast.Load()), node.func)
        return node

    def visit_FormattedValue(self, node: ast.FormattedValue) -> Any:
        node.value = self.visit(node.value)
        if node.format_spec is not None:  # checked like the rest, but not wrapped: a spec stays a JoinedStr
            node.format_spec = self.node_contents_visit(node.format_spec)
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> Any:
        node = self.node_contents_visit(node)
        return ast.copy_location(ast.Call(ast.copy_location(ast.Name("_fstring_", ast.Load()), node), [node], []), node)


_BASE_BUILTINS: dict[str, Any] = {name: safe_builtins[name] for name in _ALLOWED_BUILTINS if name in safe_builtins}
_BASE_BUILTINS.update(
    {
        "dict": dict,
        "list": list,
        "min": min,
        "max": max,
        "any": any,
        "all": all,
        "sorted": sorted,
        "enumerate": enumerate,
        "format": _format,
        "repr": _repr,
        "round": _round,
        "sum": _sum,
    }
)


@lru_cache(maxsize=4096)
def compile_skill(source: str, filename: str) -> CodeType:
    """Compile a skill's source with RestrictedPython (cached by text)."""
    result = compile_restricted_exec(source, filename=filename, policy=_Budgeted)
    if result.errors or result.code is None:
        raise SandboxError("; ".join(result.errors) or "does not compile")
    return result.code


def load_function(
    code: CodeType,
    name: str,
    modules: Mapping[str, Mapping[str, Any]],
    module_name: str,
    helpers: Mapping[str, Any] | None = None,
) -> Callable[..., Any]:
    """Execute a compiled skill module and return its function ``name``.

    Args:
        code: from ``compile_skill``.
        name: the skill function's name.
        modules: module name → {attribute: object} the file may import from
            (the registered tools, or stand-ins for admission).
        module_name: ``__name__`` for the executed module.
        helpers: runtime helpers to replace (a probe's ``require`` that notes a guard and goes on).
    """

    def importer(mod: str, globals_: Any = None, locals_: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if level:
            raise ImportError("relative imports are not allowed in skills")
        if mod == RUNTIME_MODULE:
            return SimpleNamespace(**{**{name: getattr(runtime, name) for name in HELPERS}, **(helpers or {})})
        if mod in modules:
            if not fromlist:
                raise ImportError(f"use 'from {mod} import ...' in skills")
            return SimpleNamespace(**modules[mod])
        raise ImportError(f"module {mod!r} provides no registered tools; skills may import only tool modules")

    builtins = dict(_BASE_BUILTINS)
    builtins["__import__"] = importer
    glb: dict[str, Any] = {
        "__builtins__": builtins,
        "__name__": module_name,
        "_getattr_": safer_getattr,
        "_getitem_": operator.getitem,
        "_getiter_": _getiter,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_write_": _write,
        "_inplacevar_": _inplacevar,
        "_apply_": _apply,
        "_add_": _add,
        "_mul_": _mul,
        "_mod_": _mod,
        "_str_": _str,
        "_fstring_": _fstring,
        "_copied_": _copied,
    }
    exec(code, glb)  # noqa: S102 - restricted code object, restricted globals
    func = glb.get(name)
    if not callable(func):
        raise SandboxError(f"the file defines no function {name!r}")
    return func
