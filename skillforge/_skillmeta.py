"""The ``SKILL`` literal of a skill file, checked whole when the file is read.

A hand edit may change any key of the literal. What the code that serves a skill
relies on (slot names that are regex group names and parameters, transforms, kinds
and types it knows, tools it imports, run files it may read or delete) is checked
here, so that a malformed file is one ``SkillFileError`` in ``forge.problems``
instead of an exception at bind or run time. The checks mirror what skillforge
generates (``_codegen._meta_items``), and say for each what is expected.

``check_code`` then holds the code to the literal: its function takes exactly what the
template binds, and calls each tool by the parameters its entry lists, so that a name
renamed in one place only is a problem when the file is read, not a ``TypeError`` when
it runs.
"""

from __future__ import annotations

import ast
import keyword
import re
import string
from typing import Any

from ._policy import RUNTIME_MODULE
from ._template import CHOICE, IGNORED, LIST, PHRASING, SLOT_PATTERNS, UNUSED, affix_parts, separator_regex

__all__ = ["RUN_HASH", "check_code", "check_meta", "is_run_hash"]

# Trajectory.hash: SHA-256 of the run's canonical JSON, lowercase hex (see _trajectory.py)
RUN_HASH = re.compile(r"[0-9a-f]{64}")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
# a qualified name: a class or function defined inside a function has "<locals>" in it (in-process skills)
_QUALNAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.(?:[A-Za-z_][A-Za-z0-9_]*|<locals>))*")
KINDS = frozenset(SLOT_PATTERNS) | {CHOICE, IGNORED, LIST}
TYPES = frozenset({"str", "int", "float", "dict", "list"})
_TEXT_TRANSFORMS = frozenset({None, "lower", "upper", "title", "squash", "snake"})
_NUMERIC = frozenset({"int", "number", "money"})
_PLAIN_NUMBER_SHAPE = re.compile(r"-?9(?:\.9)?|0")
_MONEY_SHAPE = re.compile(r"-?\$?9(?:\.9)?|\$?0")
_TOOL_BOOLS = ("read", "method", "check", "post_check")


def is_run_hash(value: Any) -> bool:
    """Whether ``value`` can name a run file: the hash a ``Trajectory`` has."""
    return type(value) is str and RUN_HASH.fullmatch(value) is not None


def _identifier(value: Any) -> bool:
    return type(value) is str and value.isidentifier() and value.isascii() and not keyword.iskeyword(value)


def _need(ok: bool, why: str) -> None:
    if not ok:
        raise ValueError(why)


def check_meta(meta: Any) -> None:
    """Raise ``ValueError`` saying what is wrong with a ``SKILL`` literal (None: nothing)."""
    _need(type(meta) is dict, "SKILL must be a dict")
    name = meta.get("name")
    _need(_identifier(name) and not name.startswith("_"), f"SKILL['name'] {name!r} must be a Python name not starting with '_'")
    phrasings = meta.get("phrasings", [])
    _need(type(phrasings) is list and all(type(p) is dict for p in phrasings),
          "SKILL['phrasings'] must be a list of {'template': ..., 'slots': [...]}")
    params = _check_template(meta.get("template"), meta.get("slots"), "SKILL['template']", reserved=bool(phrasings))
    for i, p in enumerate(phrasings):
        these = _check_template(p.get("template"), p.get("slots"), f"phrasing {i + 1}", reserved=True)
        _need(all(these.get(n) == t for n, t in params.items()),
              f"every phrasing must take the parameters of the template, of the same types (phrasing {i + 1} does not); "
              "it may take more (the same request said with more in it)")
    instances = meta.get("instances", [])
    _need(type(instances) is list and all(type(i) in (list, tuple) and len(i) == 2 for i in instances),
          "SKILL['instances'] must be a list of [parameter, class] pairs")
    seen = set(params)
    for param, owner in instances:
        _need(_identifier(param) and not param.startswith("_") and param not in seen,
              f"instance parameter {param!r} must be a Python name of its own (not a slot's)")
        _need(type(owner) is str and _QUALNAME.fullmatch(owner) is not None, f"instance class {owner!r} must be a class's qualified name")
        seen.add(param)
    tools = meta.get("tools")
    _need(type(tools) is dict, "SKILL['tools'] must be a dict of tool name -> {'module': ..., 'qualname': ...}")
    for tool, ref in tools.items():
        _check_tool(tool, ref)
    runs = meta.get("runs", [])
    _need(type(runs) is list, "SKILL['runs'] must be a list of run hashes")
    for run in runs:
        _need(is_run_hash(run), f"SKILL['runs'] names {str(run)[:80]!r}, which is not a run hash (64 lowercase hex digits "
                                "naming a file in skills/runs/)")
    evidence = meta.get("evidence", [])
    _need(type(evidence) is list, "SKILL['evidence'] must be a list of run hashes")
    for run in evidence:
        _need(is_run_hash(run), f"SKILL['evidence'] names {str(run)[:80]!r}, which is not a run hash (64 lowercase hex "
                                "digits naming a file in skills/runs/)")
    world = meta.get("world", [])
    _need(type(world) is list, "SKILL['world'] must be a list of [tool, path, values, reads]")
    for entry in world:
        _need(
            type(entry) is list and len(entry) == 4 and entry[0] in tools and type(entry[1]) is list and entry[1]
            and all(type(k) is str for k in entry[1]) and all(type(n) is int and n > 0 for n in entry[2:]),
            f"SKILL['world'] entry {str(entry)[:80]!r} must be [tool, path, values, reads]: a tool of SKILL['tools'], "
            "a non-empty list of field names, and two positive counts (how many values the field took in how many reads)",
        )
    for key in ("task", "generator"):
        _need(type(meta.get(key, "")) is str, f"SKILL[{key!r}] must be text")


def _check_tool(name: Any, ref: Any) -> None:
    _need(_identifier(name), f"tool name {name!r} in SKILL['tools'] must be a Python name")
    _need(type(ref) is dict, f"SKILL['tools'][{name!r}] must be a dict")
    for key, pattern in (("module", _DOTTED), ("qualname", _QUALNAME)):
        _need(type(ref.get(key)) is str and pattern.fullmatch(ref[key]) is not None,
              f"SKILL['tools'][{name!r}][{key!r}] must be a dotted Python name")
    for key in _TOOL_BOOLS:
        _need(type(ref.get(key, False)) is bool, f"SKILL['tools'][{name!r}][{key!r}] must be True or False")
    _need(type(ref.get("fingerprint", "")) is str, f"SKILL['tools'][{name!r}]['fingerprint'] must be text")
    params = ref.get("params", [])
    _need(type(params) is list and all(_identifier(p) for p in params),
          f"SKILL['tools'][{name!r}]['params'] must be a list of parameter names")
    if ref.get("method", False):
        _need("." in ref["qualname"], f"SKILL['tools'][{name!r}] is a method: its qualname must be Class.method")


def _check_template(text: Any, slots: Any, where: str, *, reserved: bool) -> dict[str, str]:
    """The data parameters (name → type) a template takes, after checking it and its slots."""
    _need(type(text) is str, f"{where} must be text")
    _need(type(slots) is list, f"the slots of {where} must be a list")
    by_name = _check_slots(slots, where)
    try:
        fields = list(string.Formatter().parse(text))
    except ValueError as e:
        raise ValueError(f"{where} {text!r} is not a template ({e})") from e
    for _literal, field, spec, conversion in fields:
        if field is None:
            continue
        _need(field in by_name and not spec and conversion is None,
              f"{where} {text!r}: {{{field}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}} must be "
              "{name} of one of its slots")
    said = {field for _literal, field, _spec, _conversion in fields}
    for name in by_name:  # a slot its text does not say is never bound: its parameter would get no value
        _need(name in said, f"slot {name!r} of {where} is not in its text {text!r}: a task never binds it; put {{{name}}} "
                            "in the text where the task says it, or remove the slot (and the parameter)")
    params = {n: s["type"] for n, s in by_name.items() if s["kind"] not in UNUSED}
    if reserved:
        _need(PHRASING not in params, f"a skill of several phrasings has a parameter {PHRASING!r} of its own: rename the slot")
    return params


def _check_slots(slots: list[Any], where: str) -> dict[str, dict[str, Any]]:
    by_name: dict[str, dict[str, Any]] = {}
    for slot in slots:
        _check_slot(slot, where)
        _need(slot["name"] not in by_name, f"slot {slot['name']!r} of {where} is defined twice")
        by_name[slot["name"]] = slot
    for slot in slots:
        same = slot.get("same_as")
        _need(same is None or same in by_name, f"slot {slot['name']!r} must equal slot {same!r}, which {where} does not define")
    return by_name


def _check_slot(slot: Any, where: str) -> None:
    _need(type(slot) is dict, f"each slot of {where} must be a dict")
    name, kind, typ, how = slot.get("name"), slot.get("kind"), slot.get("type"), slot.get("transform")
    _need(_identifier(name), f"slot name {name!r} of {where} must be a Python name (it is a parameter)")
    _need(kind in KINDS, f"slot {name!r} has kind {kind!r}; kinds are {', '.join(sorted(KINDS))}")
    _need(typ in TYPES, f"slot {name!r} has type {typ!r}; types are {', '.join(sorted(TYPES))}")
    _need(how is None or type(how) is str, f"slot {name!r}: transform {how!r} must be text or None")
    for key in ("shape", "same_as", "item"):
        _need(slot.get(key) is None or type(slot.get(key)) is str, f"slot {name!r}: {key} must be text or None")
    _need(type(slot.get("optional", False)) is bool, f"slot {name!r}: optional must be True or False")
    if kind in UNUSED:
        _need(name.startswith("_"), f"slot {name!r} is of kind {kind!r}, text the skill does not take: its name starts with '_'")
        _need(typ == "str" and how is None, f"slot {name!r} of kind {kind!r} has type 'str' and no transform")
        return
    _need(not name.startswith("_"), f"slot {name!r} is a parameter: its name must not start with '_'")
    shape = slot.get("shape")
    shapes = shape.split("||") if isinstance(shape, str) else []
    wanted = _wanted(kind, typ, how, shapes)
    _need(wanted is None, f"slot {name!r} (kind {kind!r}, type {typ!r}, transform {how!r}): {wanted}")
    parts = slot.get("parts", [])
    _need(type(parts) is list, f"slot {name!r}: parts must be a list of slots")
    if parts or slot.get("item") is not None:
        _need(kind == LIST and type(slot.get("item")) is str and len(parts) >= 2,
              f"slot {name!r}: a list of records has kind 'list', an item template and at least two parts")
        _check_slots(parts, f"the item of slot {name!r}")


def _wanted(kind: str, typ: str, how: str | None, shapes: list[str]) -> str | None:
    """What is wrong with a data slot's kind, type and transform together (None: nothing)."""
    if kind == LIST or typ == "list" or (how or "").startswith("each:"):
        if not (kind == LIST and typ == "list" and (how or "").startswith("each:")):
            return "a list slot has kind 'list', type 'list' and transform 'each:SEPARATORS'"
        try:
            separator_regex(how[5:])  # type: ignore[index]
        except ValueError as e:
            return f"transform {how!r}: {e}"
        return None
    if kind == "mapping" or typ == "dict" or how == "literal":
        ok = kind == "mapping" and typ == "dict" and how == "literal"
        return None if ok else "a mapping slot has kind 'mapping', type 'dict' and transform 'literal'"
    if how is not None and how.startswith("date"):
        if not re.fullmatch(r"date(?::\d{4})?", how):
            return "a date transform is 'date' or 'date:YEAR' (four digits)"
        return None if typ == "str" else "a date slot has type 'str' (the date in ISO form)"
    if how == "number":
        if kind not in _NUMERIC or typ not in ("int", "float"):
            return "transform 'number' is for kinds int, number and money, of type 'int' or 'float'"
        return None if all(_MONEY_SHAPE.fullmatch(s) for s in shapes) else "its shape is not a number's (9, 9.9, $9, -$9.9 or 0)"
    if how is not None and how.startswith(("affix:", "affix?:")):
        try:
            affix_parts(how)
        except ValueError as e:
            return str(e)
        return None if typ == "str" else "an affixed slot has type 'str' (the text with its affix)"
    if how not in _TEXT_TRANSFORMS:
        return "transforms are lower, upper, title, squash, snake, number, literal, date, date:YEAR, affix:BEFORE{}AFTER, affix?:BEFORE{}AFTER and each:SEPARATORS"
    if typ in ("int", "float"):
        if how is not None or kind not in ("int", "number") or (typ == "int" and kind != "int"):
            return "type 'int' is for kind 'int' and type 'float' for kinds int and number (as written: no transform)"
        return None if all(_PLAIN_NUMBER_SHAPE.fullmatch(s) for s in shapes) else "its shape is not a plain number's (9, -9, 9.9 or 0)"
    return None


def check_code(tree: ast.Module, meta: dict[str, Any]) -> list[tuple[int, str, str]]:
    """Where the code (its parsed module) and its ``SKILL`` disagree: each tool imported or method
    called that ``SKILL['tools']`` does not declare (it would run unchecked, or fail to load), as
    policy violations; ``ValueError`` saying how to fix it if its function does not take what a bound
    task gives it, or calls a tool with a parameter the tool's entry does not list (a hand edit that
    renamed a name in one place only: Python would say so only when the skill runs, as a TypeError)."""
    name = meta["name"]
    tools = meta["tools"]
    declared = {(r["module"], r["qualname"]) for r in tools.values() if not r.get("method", False)}
    methods = {r["qualname"] for r in tools.values() if r.get("method", False)}
    owners = {p: o for p, o in meta.get("instances", [])}
    # the tools' entries by what the code calls them: imported names (as imported) and Class.method
    entries = {(r["module"], r["qualname"]): (t, r) for t, r in tools.items() if not r.get("method", False)}
    by_method = {r["qualname"]: (t, r) for t, r in tools.items() if r.get("method", False)}
    imported: dict[str, tuple[str, dict[str, Any]]] = {}  # local name → (tool, entry)
    undeclared: list[tuple[int, str, str]] = []
    calls: list[tuple[ast.Call, tuple[str, dict[str, Any]] | None]] = []  # each call, and the tool it calls (None: by name)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module != RUNTIME_MODULE:
            for alias in node.names:
                if (node.module, alias.name) not in declared:
                    undeclared.append((node.lineno, "import", (
                        f"{node.module}.{alias.name} is not a tool SKILL['tools'] declares: declare it there "
                        "(module, qualname, fingerprint) or remove the import")))
                else:
                    imported[alias.asname or alias.name] = entries[(node.module, alias.name)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            owner = owners.get(node.func.value.id)
            if owner is not None and f"{owner}.{node.func.attr}" not in methods:
                undeclared.append((node.lineno, "call", (
                    f"{node.func.value.id}.{node.func.attr}() is not a method of {owner} that SKILL['tools'] declares")))
            elif owner is not None:
                calls.append((node, by_method[f"{owner}.{node.func.attr}"]))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            calls.append((node, None))  # a tool if it is imported: known once every import is seen
    _check_signature(tree, meta, owners)
    for node, entry in calls:
        if entry is None:
            entry = imported.get(node.func.id)  # type: ignore[attr-defined]
        if entry is None:
            continue  # a helper or a builtin
        tool, ref = entry
        params = ref.get("params") or []  # an entry without its parameters (an older file): not compared
        for kw in node.keywords:
            if params and kw.arg is not None and kw.arg not in params:
                raise ValueError(
                    f"line {node.lineno}: {name}() calls {tool}({kw.arg}=...), a parameter SKILL['tools'][{tool!r}]['params'] "
                    f"does not list ({', '.join(params)}): call {tool} by the names of its own parameters")
    return undeclared


def _check_signature(tree: ast.Module, meta: dict[str, Any], owners: dict[str, str]) -> None:
    """``ValueError`` saying how to fix it unless the skill's function takes exactly what a bound task gives it."""
    name = meta["name"]
    (func,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name][:1] or [None]
    if func is None:
        raise ValueError(f"the file defines no function {name!r} at module level")
    given = {s["name"] for s in meta["slots"] if s["kind"] not in UNUSED} | set(owners)
    if meta.get("phrasings"):
        given.add(PHRASING)
    sometimes = {s["name"] for p in meta.get("phrasings", []) for s in p["slots"] if s["kind"] not in UNUSED} - given
    a = func.args
    positional = [*a.posonlyargs, *a.args]
    names = {x.arg for x in [*positional, *a.kwonlyargs]}
    required = {x.arg for x in positional[: len(positional) - len(a.defaults)]}
    required |= {x.arg for x, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is None}
    missing = sorted((given | sometimes) - names) if a.kwarg is None else []
    unbound = sorted(required - given)
    if missing and unbound:
        raise ValueError(
            f"{name}() takes {', '.join(unbound)} where its template binds {', '.join(missing)}: a parameter renamed "
            "in one place only? Use one name in the signature, the body, SKILL['slots'] and {...} in SKILL['template']"
            " (and its phrasings)")
    if missing:
        raise ValueError(f"{name}() does not take {', '.join(missing)}, which its template binds: add the parameter, "
                         "or remove the slot from SKILL['slots'] and SKILL['template']")
    if unbound:
        raise ValueError(f"{name}() requires {', '.join(unbound)}, which its template does not bind: add a slot, "
                         "or give the parameter a default")
    if {x.arg for x in a.posonlyargs} & given:
        raise ValueError(f"{name}() takes its parameters by name: no positional-only parameters (remove the '/')")
