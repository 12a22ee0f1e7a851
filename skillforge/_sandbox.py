"""Executing skill files through RestrictedPython.

A skill file is compiled with ``compile_restricted`` and executed with a small
set of builtins and an import hook that resolves ``from <tool module> import
<tool>`` to the *registered* tools only (or to stand-ins, for admission). Code
objects are cached by source text.

This is a policy for code we generated and people reviewed, running in-process
with the user's own tools. It is not an isolation boundary for hostile code.
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Callable, Mapping
from functools import lru_cache
from types import CodeType, SimpleNamespace
from typing import Any

from RestrictedPython import compile_restricted_exec, safe_builtins
from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence, safer_getattr

from . import runtime
from ._exceptions import SandboxError

__all__ = ["SandboxError", "compile_skill", "load_function"]

logger = logging.getLogger(__name__)

RUNTIME_MODULE = "skillforge.runtime"

_ALLOWED_BUILTINS = (
    "False None True abs bool float int isinstance len range repr round str "
    "ArithmeticError Exception KeyError IndexError LookupError TypeError ValueError ZeroDivisionError"
).split()


def _write(obj: Any) -> Any:
    return obj


def _apply(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return func(*args, **kwargs)


def _inplacevar(op: str, x: Any, y: Any) -> Any:
    if op == "+=":
        return x + y
    if op == "-=":
        return x - y
    raise SandboxError(f"in-place operator {op} is not allowed in skills")


_BASE_BUILTINS: dict[str, Any] = {name: safe_builtins[name] for name in _ALLOWED_BUILTINS if name in safe_builtins}
_BASE_BUILTINS.update(
    {
        "dict": dict,
        "list": list,
        "min": min,
        "max": max,
        "sum": sum,
        "any": any,
        "all": all,
        "sorted": sorted,
        "enumerate": enumerate,
        "format": format,
    }
)


@lru_cache(maxsize=4096)
def compile_skill(source: str, filename: str) -> CodeType:
    """Compile a skill's source with RestrictedPython (cached by text)."""
    result = compile_restricted_exec(source, filename=filename)
    if result.errors or result.code is None:
        raise SandboxError("; ".join(result.errors) or "does not compile")
    return result.code


def load_function(
    code: CodeType,
    name: str,
    modules: Mapping[str, Mapping[str, Any]],
    module_name: str,
) -> Callable[..., Any]:
    """Execute a compiled skill module and return its function ``name``.

    Args:
        code: from ``compile_skill``.
        name: the skill function's name.
        modules: module name → {attribute: object} the file may import from
            (the registered tools, or stand-ins for admission).
        module_name: ``__name__`` for the executed module.
    """

    def importer(mod: str, globals_: Any = None, locals_: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if level:
            raise ImportError("relative imports are not allowed in skills")
        if mod == RUNTIME_MODULE:
            return SimpleNamespace(
                require=runtime.require, has=runtime.has, check=runtime.check, pick=runtime.pick, values=runtime.values,
                join=runtime.join, near=runtime.near, rank=runtime.rank, updated=runtime.updated,
            )
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
        "_getiter_": iter,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_write_": _write,
        "_inplacevar_": _inplacevar,
        "_apply_": _apply,
    }
    exec(code, glb)  # noqa: S102 - restricted code object, restricted globals
    func = glb.get(name)
    if not callable(func):
        raise SandboxError(f"the file defines no function {name!r}")
    return func
