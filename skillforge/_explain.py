"""Why a task is served the way it is: ``Forge.explain(task)`` and ``skillforge why``.

For a task, the templates ``solve()`` looks at, in the order it looks (the hot index by the
task's shape, the templates whose literal words the task says, the semantic index), and for each
the values it binds or the first point where binding stops (``_misses``). Which skills bind is
``Forge.find_all``'s answer, the one ``solve()`` acts on; this module adds only the why.

With ``run=True`` each skill that binds is run against the current world with read tools only.
A write tool is never called: every tool call goes through the recording hook (``Run.call``, as
in an agent's run), and ``_ReadOnlyRun`` stops the skill at the first write, before the write's
function is reached. The run reports the guard that stopped it (its words, its line, the values
its condition read), the write it would make next, or the answer it returns without writing.
"""

from __future__ import annotations

import ast
import asyncio
import logging
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from . import runtime
from ._exceptions import BudgetExceeded, GuardFailed, SkillforgeSignal
from ._index import Match, _phrasings
from ._misses import Miss, diagnose
from ._composing import clause_skills, cut
from ._template import MAX_TASK_CHARS, literal_tokens, shape_key
from ._driving import offload
from ._tools import Run, Tool, _loop, activate, deactivate, error_text

if TYPE_CHECKING:
    from ._forge import Forge

__all__ = ["Candidate", "DryRun", "Explanation", "Fact", "dry_run", "explain_task"]

logger = logging.getLogger(__name__)

_SHOWN = 100  # characters of a value shown


@dataclass(frozen=True)
class Fact:
    """A value a guard's condition read when it stopped the skill: ``order['status'] = 'delivered'``."""

    expression: str
    value: str  # its repr (shortened), or "absent"

    def __str__(self) -> str:
        return f"{self.expression} = {self.value}"


@dataclass(frozen=True)
class DryRun:
    """A skill run with read tools only, against the current world.

    Attributes:
        outcome: ``"guard"`` (a guard stopped it), ``"write"`` (its guards held up to its first
            write, which was not made), ``"done"`` (it returned without writing) or ``"error"``.
        message: the same in words.
        reads: the read calls it made, as text.
        line: the line of the skill file it stopped at; ``statement`` its source.
        facts: for a guard, the values its condition read.
        tool, args: for ``"write"``, the write it would make next.
        output: for ``"done"``, what it returned.
    """

    outcome: str
    message: str
    reads: tuple[str, ...] = ()
    line: int | None = None
    statement: str | None = None
    facts: tuple[Fact, ...] = ()
    tool: str | None = None
    args: dict[str, Any] | None = None
    output: Any = None

    def __str__(self) -> str:
        lines = [f"reads: {', '.join(self.reads)}"] if self.reads else []
        lines.append(self.message)
        lines += [f"  {f}" for f in self.facts]
        return "\n".join(lines)


@dataclass(frozen=True)
class Candidate:
    """A template ``solve()`` looked at, the skills that have it, and what binding it gave.

    Attributes:
        template: the template (the phrasing nearest the task, for a skill of several).
        skills: the skills with this template (variants), in the order ``solve()`` tries them.
        found_by: the lookup that proposed it: ``"shape"`` (the hot index), ``"words"`` (a
            template with free text, by its literal words), ``"a referring word"`` (the task says one
            where the template says another: ``_referring``) or ``"semantic"`` (the Chroma index).
        params: the values it binds (None if it does not bind).
        miss: where and why it does not bind (None if it binds).
        run: with ``run=True``, the read-only run of the skill (one skill per bound candidate).
        note: anything else worth knowing (a binding ``solve()`` does not use, and why).
    """

    template: str
    skills: tuple[str, ...]
    found_by: str
    params: dict[str, Any] | None = None
    miss: Miss | None = None
    run: DryRun | None = None
    note: str | None = None

    @property
    def binds(self) -> bool:
        return self.params is not None

    def __str__(self) -> str:
        head = f'"{self.template}"  ({", ".join(self.skills)}; found by {self.found_by})'
        if self.params is not None:
            values = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
            body = [f"binds: {values}" if values else "binds (no values)"]
        else:
            body = [str(self.miss)]
        if self.note:
            body.append(self.note)
        if self.run is not None:
            body += str(self.run).splitlines()
        return "\n".join([head, *(f"   {line}" for line in body)])


@dataclass(frozen=True)
class Explanation:
    """What ``solve()`` would do with a task, and why: ``forge.explain(task)``.

    Attributes:
        task: the task.
        outcome: ``"skill"`` (a skill binds it; with ``run``, one would serve it), ``"handover"``
            (with ``run``: every skill that binds stops before writing, the agent takes over),
            ``"clauses"`` (served clause by clause), ``"agent"`` (no skill binds it), ``"no skills"``,
            or ``"too long"``.
        verdict: the same in a sentence: which skill would serve it, or why the agent would.
        skill: the skill that would serve it (with ``run``), or the first that binds.
        candidates: the templates that bind (each skill that would be tried, in order), then the
            nearest that do not, each with where binding stops.
        skills: how many skills the forge serves; ``skills_dir`` where they are read from.
        clauses: for a message served clause by clause, each clause and the skill that takes it.
        problems: skill files that are not served, and why.
        ran: whether the skills that bind were run (read tools only).

    Example:
        >>> print(forge.explain("Refund the order #1042"))  # doctest: +SKIP
        "Refund the order #1042": no skill binds it; solve() hands it to the agent.
    """

    task: str
    outcome: str
    verdict: str
    skill: str | None = None
    candidates: tuple[Candidate, ...] = ()
    skills: int = 0
    skills_dir: str = ""
    clauses: tuple[tuple[str, str], ...] = ()
    problems: tuple[str, ...] = ()
    ran: bool = False

    @property
    def bound(self) -> tuple[Candidate, ...]:
        """The candidates that bind, in the order ``solve()`` tries them."""
        return tuple(c for c in self.candidates if c.binds and c.note is None)

    def to_dict(self) -> dict[str, Any]:
        """The explanation as plain data (``json.dumps(..., default=repr)`` writes it)."""
        return asdict(self)

    def __str__(self) -> str:
        lines = [f"{_quoted(self.task)}: {self.verdict}"]
        for clause, skill in self.clauses:
            lines.append(f"  clause {_quoted(clause.strip())}: {skill}")
        bound = [c for c in self.candidates if c.binds and c.note is None]
        others = [c for c in self.candidates if c not in bound]
        if bound:
            lines.append("binds:")
            lines += _numbered(bound)
        if others:
            lines.append("nearest templates that do not bind:" if bound or not self.clauses else "nearest templates:")
            lines += _numbered(others)
        if self.problems:
            lines.append(f"{len(self.problems)} skill file{'s' * (len(self.problems) != 1)} not served (`skillforge skills` lists them):")
            lines += [f"  {p}" for p in self.problems]
        return "\n".join(lines)


def _numbered(candidates: list[Candidate]) -> list[str]:
    out = []
    for i, c in enumerate(candidates, 1):
        first, *rest = str(c).splitlines()
        out.append(f"{i:>2}. {first}")
        out += [f"  {line}" for line in rest]
    return out


def _quoted(text: str) -> str:
    return '"' + (text if len(text) <= 80 else text[:77] + "...") + '"'


# -- explaining ---------------------------------------------------------------------------------
def explain_task(forge: Forge, task: str, *, run: bool = False, limit: int = 5) -> Explanation:
    """What ``forge.solve(task)`` would do, and why (see ``Forge.explain``)."""
    forge._index()
    with forge._lock:
        forge._sync_disk()  # as solve() does before it pays for the agent: skills learned elsewhere count
    hot = forge._index()
    problems = tuple(f"{p.path}: {p.reason}" for p in forge.problems)
    where = str(forge.skills_dir.resolve())
    if len(task) > MAX_TASK_CHARS:
        return Explanation(task, "too long", f"the task has {len(task):,} characters; past {MAX_TASK_CHARS:,} no task "
                           "binds a skill, so the agent serves it (and it is not learned)", skills=len(hot), skills_dir=where,
                           problems=problems)
    if not len(hot):
        return Explanation(task, "no skills", _no_skills(forge, where, problems), skills_dir=where, problems=problems)
    matches = forge.find_all(task)
    bound = _bound(forge, hot, task, matches, run)
    seen = {c.template for c in bound}
    nearest = [c for c in _nearest(forge, hot, task, matches) if c.template not in seen][: max(limit, 0)]
    clauses: tuple[tuple[str, str], ...] = ()
    if matches:
        outcome, skill, verdict = _verdict(bound, run)
    else:
        clauses, outcome, verdict = _composition(forge, hot, task)
        skill = None
    return Explanation(task, outcome, verdict, skill, (*bound, *nearest), len(hot), where, clauses, problems, run)


def _no_skills(forge: Forge, where: str, problems: tuple[str, ...]) -> str:
    files = len(forge.library.paths())
    if not files:
        return (
            f"no skills to serve it: there is no skill file in {where}. Skills are learned from agent runs: "
            "give the Forge an agent (Forge(agent=...), or SKILLFORGE_AGENT=openai for the default forge) and solve "
            "tasks; or, if your skills are elsewhere, point at them (--app MODULE:FORGE, skills_dir= or "
            "SKILLFORGE_SKILLS_DIR)"
        )
    broken = f"{len(problems)} cannot be read or run (listed below); " if problems else ""
    return (
        f"no skills to serve it: {files} skill file{'s' * (files != 1)} in {where}, but this forge serves "
        f"none of them: {broken}a skill is served only by a forge that registers the tools it calls. Pass the "
        "Forge with your tools (--app MODULE:FORGE), or register them on this one (@forge.tool)"
    )


def _bound(forge: Forge, hot: Any, task: str, matches: list[Match], run: bool) -> list[Candidate]:
    """The skills that bind, in the order solve() tries them; run with reads only if ``run``."""
    by_shape = {m.skill.name for m in hot.find(task)}
    by_words = {m.skill.name for m in hot.find_free(task)} if matches and not by_shape else set()
    by_referring = {m.skill.name for m in hot.lookup(task)} if matches and not by_shape and not by_words else set()
    out = []
    for match in matches:
        name = match.skill.name
        found = "shape" if name in by_shape else "words" if name in by_words else (
            "a referring word" if name in by_referring else "semantic")
        dry = dry_run(forge, match) if run else None
        out.append(Candidate(match.template.text, (match.skill.name,), found, dict(match.params), run=dry))
    return out


def _verdict(bound: list[Candidate], run: bool) -> tuple[str, str | None, str]:
    """``(outcome, skill, sentence)`` for a task skills bind."""
    names = [c.skills[0] for c in bound]
    if not run:
        how = (f"binds {names[0]}; solve() runs it, and its guards decide" if len(names) == 1 else
               f"binds {', '.join(names)}; solve() tries them in turn, and their guards decide")
        return "skill", names[0], f"{how} on the current world (run=True / --run runs them with read tools only)"
    for c in bound:
        if c.run is not None and c.run.outcome in ("write", "done"):
            what = f"it would call {c.run.tool} next" if c.run.outcome == "write" else "it answers without writing"
            return "skill", c.skills[0], f"solve() would serve it with {c.skills[0]} ({what})"
    last = bound[-1].skills[0]
    return "handover", last, (f"every skill that binds stops before writing; solve() would hand over to the agent "
                              f"after {last} stopped, with the reads made so far")


def _composition(forge: Forge, hot: Any, task: str) -> tuple[tuple[tuple[str, str], ...], str, str]:
    """``(clauses, outcome, sentence)`` for a task no skill binds whole: the clauses skills take, if any."""
    miss = "no skill binds it; solve() hands it to the agent (and learns from its run)"
    try:
        found = cut(task, hot.lookup)
    except Exception as e:  # explaining must not fail on the cutting
        logger.info("could not cut %r into clauses: %s", task, e)
        return (), "agent", miss
    if found is None:
        return (), "agent", miss
    (prelude, parts, closing), colon = found
    clauses = []
    before: dict[str, Any] = {}  # the values the skill of the clause before binds, as serving carries them
    for part in parts:
        skills = clause_skills(forge.find_all, before, prelude, part, closing, colon)
        clauses.append((part, skills[0].skill.name if skills else "-"))
        before = skills[0].params if skills else {}
    if forge.joiner() is None:
        return tuple(clauses), "agent", (
            "no skill binds it whole, and its clauses each bind a skill, but no agent run has shown yet how answers "
            "of several requests are joined: solve() hands it to the agent (whose run shows it)"
        )
    return tuple(clauses), "clauses", f"no skill binds it whole; solve() serves it clause by clause ({len(clauses)} clauses)"


def _nearest(forge: Forge, hot: Any, task: str, matches: list[Match]) -> list[Candidate]:
    """The templates solve() looks at that do not bind (or that it does not use), nearest first."""
    proposed: dict[str, tuple[Any, str]] = {}  # skill name → (skill, the lookup that proposed it)
    for skill in hot.by_key.get(shape_key(task), ()):
        proposed.setdefault(skill.name, (skill, "shape"))
    tokens = sorted(literal_tokens(task))  # the keys find_free looks under, without its test that all words are said
    for key in ("", *tokens, *(f"{a} {b}" for i, a in enumerate(tokens) for b in tokens[i + 1 :])):
        for skill in hot.by_word.get(key, ()):
            proposed.setdefault(skill.name, (skill, "words"))
    for name in forge._semantic_candidates(task) if not matches else ():  # solve() asks it only on a miss
        skill = hot.by_name.get(name)
        if skill is not None:
            proposed.setdefault(name, (skill, "semantic"))
    used = {m.skill.name for m in matches}
    groups: dict[str, tuple[Any, str, list[str], Miss | None, dict[str, Any] | None]] = {}
    for name, (skill, how) in proposed.items():
        if name in used:
            continue
        template, miss, params = _nearest_phrasing(skill, task)
        if template.text in groups:
            groups[template.text][2].append(name)
            continue
        groups[template.text] = (template, how, [name], miss, params)

    def nearness(group: tuple[Any, str, list[str], Miss | None, dict[str, Any] | None]) -> tuple[int, int]:
        """By lookup, as solve() looks; within the index and the word lookup, the furthest binding got
        first; the semantic index's own order kept (the sort is stable)."""
        _t, how, _n, miss, _p = group
        if how == "semantic":
            return 2, 0
        return (0 if how == "shape" else 1), -(miss.at if miss is not None else 1 << 30)

    ranked = sorted(groups.values(), key=nearness)
    out = []
    for template, how, names, miss, params in ranked:
        note = None
        if params is not None:  # binds, yet not among the skills solve() tries
            note = ("binds too, but solve() tries only the most specific templates that bind"
                    if matches else "binds, yet solve() did not find it: run `skillforge reindex`")
        out.append(Candidate(template.text, tuple(sorted(names)), how, params, miss, note=note))
    return out


def _nearest_phrasing(skill: Any, task: str) -> tuple[Any, Miss | None, dict[str, Any] | None]:
    """The skill's phrasing that gets furthest into the task: it, its miss, and its values if it binds."""
    best = None
    for template in _phrasings(skill):
        params = template.bind(task)
        if params is not None:
            return template, None, params
        try:
            miss = diagnose(template, task)
        except Exception as e:  # a bug in explaining one template must not cost the explanation
            logger.exception("could not explain why %r does not bind %r", template.text, task)
            miss = Miss("unknown", f"binding stops somewhere this explanation cannot say ({type(e).__name__}: {e})")
        if best is None or (miss is not None and best[1] is not None and miss.at > best[1].at):
            best = (template, miss)
    return best[0], best[1], None  # type: ignore[index]


# -- running with reads only --------------------------------------------------------------------
class _WouldWrite(SkillforgeSignal):
    """A read-only run reached a write tool (raised instead of calling it; never leaves this module)."""

    def __init__(self, tool: str, arguments: dict[str, Any]) -> None:
        self.tool = tool
        self.arguments = arguments
        super().__init__(tool)


class _ReadOnlyRun(Run):
    """A skill run that calls read tools only.

    ``snapshot=True`` sends every tool call through ``Run.call`` (the recording path of an agent's
    run, not the inlined skill path), where a write tool is refused before its function is called.
    """

    __slots__ = ()

    def call(self, tool: Tool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self._refuse_a_write(tool, args, kwargs)
        self.check_budget()
        return super().call(tool, args, kwargs)

    async def acall(self, tool: Tool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """An ``async def`` tool's call: refused the same way before its coroutine is awaited."""
        self._refuse_a_write(tool, args, kwargs)
        self.check_budget()
        return await super().acall(tool, args, kwargs)

    @staticmethod
    def _refuse_a_write(tool: Tool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if not tool.read:
            positional = args[1:] if tool.schema.is_method else args
            raise _WouldWrite(tool.name, {**dict(zip(tool.schema.param_names, positional)), **kwargs})


def dry_run(forge: Forge, match: Match) -> DryRun:
    """Run the skill of ``match`` against the current world with read tools only."""
    skill = match.skill
    try:
        func = forge._function(skill)
    except Exception as e:
        return DryRun("error", f"{skill.name} does not load in the sandbox: {e}")
    kwargs = dict(match.params)
    for param, owner in skill.instances:
        inst = forge.instances.get(owner)
        if inst is None:
            return DryRun("error", f"no {owner} instance was provided (forge.provide), so {skill.name} cannot run")
        kwargs[param] = forge.registry.for_skill(owner, inst)  # async methods: through their bridges
    run = _ReadOnlyRun(snapshot=True, instances=dict(forge.instances), tools=forge.registry.tools,
                       budget=forge.max_skill_calls, seconds=forge.max_skill_seconds)
    token = activate(run)
    try:
        output = _on_a_loop(func, kwargs) if forge._threaded(match) else func(**kwargs)
    except _WouldWrite as w:
        return DryRun("write", f"its guards hold up to its first write: it would call {_call(w.tool, w.arguments)} next "
                      "(not called; guards after a write are checked in a real solve)",
                      _reads(run), tool=w.tool, args=w.arguments)
    except GuardFailed as g:
        line, statement, facts = _stopped_at(skill, g)
        at = f" (line {line})" if line is not None else ""
        return DryRun("guard", f"stopped by a guard{at}: {g.reason}", _reads(run), line, statement, facts)
    except BudgetExceeded as b:
        return DryRun("error", f"stopped: {b}", _reads(run))
    except Exception as e:
        return DryRun("error", f"raised {error_text(e)}", _reads(run))
    finally:
        deactivate(token)
    return DryRun("done", f"runs to the end without writing; it answers {_short(output)}", _reads(run), output=output)


def _on_a_loop(func: Any, kwargs: dict[str, Any]) -> Any:
    """Run a skill that calls ``async def`` tools as ``asolve()`` runs it: in a worker thread, each of
    its tool calls on an event loop (one of its own: ``explain`` is synchronous)."""

    async def run() -> Any:
        looping = _loop.set(asyncio.get_running_loop())
        try:
            return await offload(func, **kwargs)
        finally:
            _loop.reset(looping)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run())
    raise RuntimeError("explain(run=True) of a skill with async tools was called on an event loop's thread: "
                       "call it in a worker thread (await asyncio.to_thread(forge.explain, task, run=True))")


def _reads(run: Run) -> tuple[str, ...]:
    return tuple(_call(t, a) + (f" raised {e}" if e else "") for t, a, _r, e in run.calls)


def _call(tool: str, args: dict[str, Any]) -> str:
    return f"{tool}({', '.join(f'{k}={_short(v)}' for k, v in args.items())})"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


# -- the guard that stopped a skill, and the values it read ---------------------------------------
# the functions a guard's values are computed with here: pure, and each call already made (with the same
# values, within the sandbox's budgets) by the condition that failed
_PURE: dict[str, Any] = {
    "len": len, "sorted": sorted, "str": str, "int": int, "float": float, "abs": abs, "min": min, "max": max, "format": format,
    "bool": bool, "values": runtime.values, "pick": runtime.pick, "rank": runtime.rank, "near": runtime.near,
    "has": runtime.has, "lines": runtime.lines, "among": runtime.among,
}


class _Unknown(Exception):
    """An expression this module does not evaluate (a tool call, an attribute): not shown."""


def _stopped_at(skill: Any, signal: BaseException) -> tuple[int | None, str | None, tuple[Fact, ...]]:
    """The line of the skill file a guard stopped at, its statement, and the values its condition read."""
    tb = signal.__traceback__
    frame = None
    mine = (skill.name, f"{skill.name}_given_")  # the skill's function, or one of its variants' it called
    while tb is not None:  # the innermost frame of the file's functions
        code = tb.tb_frame.f_code
        if code.co_filename == str(skill.path) and (code.co_name == skill.name or code.co_name.startswith(mine[1])):
            frame = tb
        tb = tb.tb_next
    if frame is None:
        return None, None, ()
    line, env = frame.tb_lineno, dict(frame.tb_frame.f_locals)
    name = frame.tb_frame.f_code.co_name
    try:
        tree = ast.parse(skill.source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return line, None, ()
    function = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    stmts = [n for n in ast.walk(function) if isinstance(n, ast.stmt) and n is not function] if function else []
    here = [n for n in stmts if n.lineno <= line <= (n.end_lineno or n.lineno)]
    if not here:
        return line, None, ()
    stmt = min(here, key=lambda n: (n.end_lineno or n.lineno) - n.lineno)
    statement = ast.get_source_segment(skill.source, stmt)
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "require" and call.args:
        exprs = list(_operands(call.args[0]))
    else:  # a helper stopped it (pick, join): the values it was given
        exprs = [a for n in ast.walk(stmt) if isinstance(n, ast.Call) and _name(n) in ("pick", "join", "updated")
                 for a in n.args if not _constant(a)]
    facts: dict[str, Fact] = {}
    for expr in exprs:
        fact = _fact(expr, env)
        if fact is not None and fact.expression not in facts:
            facts[fact.expression] = fact
    return line, statement, tuple(facts.values())


def _operands(node: ast.expr) -> Any:
    """The parts of a guard's condition whose values say why it failed."""
    if isinstance(node, ast.BoolOp):
        for v in node.values:
            yield from _operands(v)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield from _operands(node.operand)
    elif isinstance(node, ast.Compare):
        for side in (node.left, *node.comparators):
            yield from _sides(side)
    elif isinstance(node, ast.Call) and _name(node) == "near":
        for a in node.args:
            yield from _sides(a)
    elif isinstance(node, ast.Call) and _name(node) == "check":
        return  # a tool's own pre-check: its capture is not shown
    elif not _constant(node):
        yield node


def _sides(node: ast.expr) -> Any:
    if _constant(node):
        return
    if isinstance(node, (ast.Tuple, ast.List)):
        for e in node.elts:
            yield from _sides(e)
    else:
        yield node


def _name(call: ast.Call) -> str | None:
    return call.func.id if isinstance(call.func, ast.Name) else None


def _constant(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _fact(expr: ast.expr, env: dict[str, Any]) -> Fact | None:
    """``expr`` and its value in the skill's variables; None for what is not evaluated here."""
    if isinstance(expr, ast.Call) and _name(expr) == "has" and expr.args:  # has(x, 'a', 0, kind=...): the value at x['a'][0]
        try:
            value = _value(expr.args[0], env)
            path = [_value(a, env) for a in expr.args[1:]]
        except _Unknown:
            return None
        text = ast.unparse(expr.args[0]) + "".join(f"[{p!r}]" for p in path)
        for key in path:
            try:
                value = value[key]
            except (KeyError, IndexError, TypeError):
                return Fact(text, "absent")
        return Fact(text, f"{_short(value)} ({type(value).__name__})")
    try:
        value = _value(expr, env)
    except _Unknown:
        return None
    except (KeyError, IndexError, TypeError):
        return Fact(ast.unparse(expr), "absent")
    except (Exception, SkillforgeSignal) as e:  # a helper that stops (pick: not exactly one element)
        return Fact(ast.unparse(expr), f"<{e}>")
    return Fact(ast.unparse(expr), _short(value))


def _value(node: ast.expr, env: dict[str, Any]) -> Any:
    """The value of a plain expression over the skill's variables: names, subscripts, literals, and
    calls to pure helpers. Never a tool call or an attribute (``_Unknown``)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise _Unknown(node.id)
        return env[node.id]
    if isinstance(node, ast.Subscript):
        return _value(node.value, env)[_value(node.slice, env)]
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_value(e, env) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
        operand = _value(node.operand, env)
        return -operand if isinstance(node.op, ast.USub) else not operand
    if isinstance(node, ast.Call) and _name(node) in _PURE and not any(isinstance(a, ast.Starred) for a in node.args):
        args = [_value(a, env) for a in node.args]
        kwargs = {k.arg: _value(k.value, env) for k in node.keywords if k.arg is not None}
        return _PURE[_name(node)](*args, **kwargs)  # type: ignore[index]
    raise _Unknown(ast.dump(node)[:40])
