"""Function → tool schema: signature and type hints through pydantic, descriptions from the docstring.

Pure: takes a function, returns a ``FunctionSchema`` (JSON schema for the model,
the parameter names for binding positional calls, and a signature fingerprint
that skills record to notice incompatible tool changes).
"""

from __future__ import annotations

import hashlib
import inspect
import re
import typing
from dataclasses import dataclass
from typing import Any, Callable

from pydantic import ConfigDict, Field, create_model
from pydantic.errors import PydanticUserError

from ._exceptions import ToolDefinitionError

__all__ = ["FunctionSchema", "function_schema", "import_problem"]

_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Example|Examples|Note|Notes):\s*$")
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


@dataclass(frozen=True, slots=True)
class FunctionSchema:
    """What the registry knows about a tool's signature."""

    name: str
    description: str
    parameters: dict[str, Any]
    param_names: tuple[str, ...]
    is_method: bool
    fingerprint: str


def _docstring_parts(doc: str | None) -> tuple[str, dict[str, str]]:
    """Summary text and per-argument descriptions from a Google-style docstring."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    args: dict[str, str] = {}
    section = None
    current = None
    for line in lines:
        m = _SECTION.match(line)
        if m:
            section, current = m.group(1), None
            continue
        if section is None:
            summary.append(line)
        elif section in ("Args", "Arguments", "Parameters"):
            am = _ARG_LINE.match(line)
            indent = len(line) - len(line.lstrip())
            if am and indent <= 4:
                current = am.group(1).lstrip("*")
                args[current] = am.group(2).strip()
            elif current and line.strip():
                args[current] = f"{args[current]} {line.strip()}".strip()
    return " ".join(s.strip() for s in summary if s.strip()), args


def function_schema(func: Callable[..., Any], name: str | None = None) -> FunctionSchema:
    """Build the schema of ``func``; all problems are reported together.

    Example:
        >>> def get_order(order_id: str) -> dict:
        ...     '''Look up an order.
        ...
        ...     Args:
        ...         order_id: the order's number.
        ...     '''
        >>> s = function_schema(get_order)
        >>> s.parameters["properties"]["order_id"]["description"]
        "the order's number."
    """
    tool_name = name or func.__name__
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError) as e:
        raise ToolDefinitionError(f"tool {tool_name!r}: cannot read its signature ({e})") from e
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # unresolvable forward refs: fall back to the raw annotations
        hints = {}
    params = list(sig.parameters.values())
    qual = getattr(func, "__qualname__", tool_name)
    is_method = bool(params) and params[0].name in ("self", "cls") and "." in qual.replace("<locals>.", "")
    if is_method:
        params = params[1:]
    summary, arg_docs = _docstring_parts(func.__doc__)

    problems: list[str] = []
    fields: dict[str, Any] = {}
    names: list[str] = []
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            problems.append(f"*{p.name}/**{p.name} parameters cannot be described to a model; name each parameter")
            continue
        if p.kind is p.POSITIONAL_ONLY:
            problems.append(f"parameter {p.name!r} is positional-only; tools are called by keyword")
            continue
        ann = hints.get(p.name, p.annotation)
        if ann is inspect.Parameter.empty:
            ann = Any
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[p.name] = (ann, Field(default, description=arg_docs.get(p.name)))
        names.append(p.name)
    if problems:
        raise ToolDefinitionError(f"tool {tool_name!r}: " + "; ".join(problems))
    try:
        model = create_model(f"{tool_name}_args", __config__=ConfigDict(arbitrary_types_allowed=False), **fields)
        schema = model.model_json_schema()
    except (PydanticUserError, TypeError, ValueError) as e:
        raise ToolDefinitionError(
            f"tool {tool_name!r}: its parameter types cannot be described as JSON schema ({e}); "
            "use JSON types (str, int, float, bool, list, dict) or pydantic models"
        ) from e
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    fp_src = repr([(p.name, str(p.kind), repr(hints.get(p.name, p.annotation)), p.default is inspect.Parameter.empty) for p in params])
    fingerprint = hashlib.sha256(f"{tool_name}{fp_src}".encode()).hexdigest()[:16]
    return FunctionSchema(
        name=tool_name,
        description=summary,
        parameters=schema,
        param_names=tuple(names),
        is_method=is_method,
        fingerprint=fingerprint,
    )


def import_problem(name: str, qualname: str, is_method: bool) -> str | None:
    """Why a skill file could not import the tool ``qualname`` by name (``from module import qualname``),
    with how to fix it; None if it can.

    A lambda has no name to import, and a function inside a class that takes no ``self`` (a
    staticmethod, a classmethod, a bound method) is no module attribute. Tools defined inside a
    function (``<locals>``) are left to learning, which says so (they serve as tools all the same).

    Example:
        >>> print(import_problem("stamp", "<lambda>", False).split(";")[0])
        tool 'stamp' is a lambda, which a skill file cannot import by name
        >>> import_problem("get_order", "get_order", False) is None
        True
    """
    parts = qualname.split(".")
    if "<lambda>" in parts:
        return (
            f"tool {name!r} is a lambda, which a skill file cannot import by name; define it with def at module "
            f"level (def {name}(...): ...) and decorate that, or use Forge(importable_skills=False) if its skills "
            "never leave this process"
        )
    if len(parts) > 1 and not is_method and "<locals>" not in parts:
        return (
            f"tool {name!r} is {qualname}, a function inside a class (a staticmethod, classmethod or bound method), "
            f"which a skill file cannot import by name; decorate a function at module level that calls it "
            f"(def {name}(...): return {qualname}(...)), or make it a method taking self and pass the instance with "
            "forge.provide(), or use Forge(importable_skills=False) if its skills never leave this process"
        )
    return None
