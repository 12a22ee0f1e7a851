"""compile_run: Trajectory → Compiled | Rejected, with admission by proof.

A run becomes a skill only if the compiled function, executed in the sandbox
with stand-ins that return the recorded results instead of the real tools,
makes exactly the recorded calls (same tools, same arguments, same order) and
returns the recorded output, for the parameters its own template binds from the
run's task.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from ._codegen import render_skill
from ._exceptions import BudgetExceeded, GuardFailed, SandboxError, SkillforgeSignal
from ._lifting import Rejected, lift
from ._sandbox import compile_skill, load_function
from ._spec import SkillSpec
from ._template import TaskTemplate, bind_phrasings
from ._tools import Run, activate, deactivate
from ._trajectory import Trajectory, canonical_json
from ._variants import file_phrasings

__all__ = ["Compiled", "Rejected", "admit", "admit_file", "compile_run", "prove_all", "reproduces"]

# A replay against recorded results makes no real tool calls, so it has the sandbox's loop and size
# budgets and this much time (a generated skill is proved in about a millisecond): a hand-planted loop
# stops `skillforge check` and learning with a rejection instead of stalling them.
ADMISSION_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class Compiled:
    """A run compiled and admitted: the spec and the file's full text."""

    spec: SkillSpec
    source: str

    def __repr__(self) -> str:  # short: ``source`` is the whole file
        return f"Compiled(name={self.spec.name!r}, template={self.spec.template!r}, lines={self.source.count(chr(10))})"


class _Mismatch(SkillforgeSignal):
    """The skill under admission deviated from the recorded run."""


class _Replayer:
    def __init__(self, traj: Trajectory) -> None:
        self.calls = traj.calls
        self.pos = 0

    def stand_in(self, tool: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if args:
                raise _Mismatch(f"step {self.pos + 1}: {tool} was called with positional arguments")
            if self.pos >= len(self.calls):
                raise _Mismatch(f"step {self.pos + 1}: the skill calls {tool} but the run made only {len(self.calls)} calls")
            want = self.calls[self.pos]
            if want.tool != tool:
                raise _Mismatch(f"step {self.pos + 1}: the skill calls {tool}, the run called {want.tool}")
            got_args, want_args = canonical_json(kwargs), canonical_json(want.args)
            if got_args != want_args:
                raise _Mismatch(f"step {self.pos + 1}: {tool} arguments {got_args} differ from the run's {want_args}")
            self.pos += 1
            return copy.deepcopy(want.result)

        def recorded_capture(**_args: Any) -> Any:
            return self.calls[self.pos].pre if self.pos < len(self.calls) else None

        def recorded_post(**_args: Any) -> Any:
            return self.calls[self.pos - 1].post if self.pos else None

        def same(now: Any, then: Any) -> bool:
            return canonical_json(now) == canonical_json(then)

        # a check replays what was captured: the skill's learned value must equal it
        call.__skillforge_tool__ = SimpleNamespace(  # type: ignore[attr-defined]
            guard=SimpleNamespace(capture=recorded_capture, compare=same),
            post_guard=SimpleNamespace(capture=recorded_post, compare=same),
        )
        return call


def _bound(spec: SkillSpec, task: str) -> dict[str, Any] | None:
    """What the first of ``spec``'s phrasings that binds ``task`` binds."""
    bound = bind_phrasings([TaskTemplate(text, list(slots)) for text, slots in ((spec.template, spec.slots), *file_phrasings(spec))], task)
    return None if bound is None else bound[1]


def admit(source: str, spec: SkillSpec, traj: Trajectory) -> Compiled | Rejected:
    """Prove that ``source`` reproduces ``traj``; the verdict, never an exception."""
    params = _bound(spec, traj.task)
    if params is None:
        return Rejected(f"the template {spec.template!r} does not bind its own task {traj.task!r}")
    if canonical_json(params) != canonical_json(spec.examples):
        return Rejected(f"the template binds {params!r} from the task, the run used {spec.examples!r}")
    why = _prove(source, spec.name, params, spec.tools, spec.instances, traj)
    return Rejected(why) if why else Compiled(spec=spec, source=source)


def admit_file(skill: Any, traj: Trajectory) -> Compiled | Rejected:
    """Whether an existing skill file (a ``SkillFile``) reproduces ``traj`` exactly.

    Used to tell a new circumstance (a new variant) from a run a skill already covers.
    """
    bound = skill.bind(traj.task)
    if bound is None:
        return Rejected(f"{skill.name}'s template does not bind {traj.task!r}")
    params = bound[1]
    why = _prove(skill.source, skill.name, params, skill.tools, skill.instances, traj)
    return Rejected(why) if why else Compiled(spec=None, source=skill.source)  # type: ignore[arg-type]


def reproduces(skill: Any, load_run: Callable[[str], Trajectory]) -> str | None:
    """None if a skill file (a ``SkillFile``) reproduces every run it names; else why not, for the
    first run it does not. ``load_run(hash)`` reads a run; its ``SkillFileError`` is raised as it is."""
    if not skill.runs:
        return "it names no recorded run to prove it against"
    for run_hash in skill.runs:
        verdict = admit_file(skill, load_run(run_hash))
        if isinstance(verdict, Rejected):
            return f"run {run_hash[:12]}: {verdict.reason}"
    return None


def prove_all(source: str, spec: SkillSpec, runs: list[Trajectory]) -> Rejected | None:
    """None if ``source`` reproduces every one of ``runs`` (a skill learned from several); else why not."""
    for traj in runs:
        params = _bound(spec, traj.task)
        if params is None:
            return Rejected(f"the template {spec.template!r} does not bind {traj.task!r}")
        why = _prove(source, spec.name, params, spec.tools, spec.instances, traj)
        if why:
            return Rejected(f"{why} (run {traj.hash[:12]})")
    return None


def _prove(
    source: str,
    name: str,
    params: dict[str, Any],
    tools: dict[str, Any],
    instances: tuple[tuple[str, str], ...],
    traj: Trajectory,
) -> str | None:
    """None if the code makes exactly the recorded calls and answer; else why not."""
    replayer = _Replayer(traj)
    modules: dict[str, dict[str, Any]] = {}
    stand_ins: dict[str, Any] = {}
    for tool_name, ref in tools.items():
        if ref.method:
            owner = ref.qualname.rsplit(".", 1)[0]
            inst = next(p for p, o in instances if o == owner)
            ns = stand_ins.setdefault(inst, _StandInInstance())
            setattr(ns, ref.qualname.rsplit(".", 1)[-1], replayer.stand_in(tool_name))
        else:
            modules.setdefault(ref.module, {})[ref.qualname] = replayer.stand_in(tool_name)
    try:
        code = compile_skill(source, f"<admission {name}>")
        func = load_function(code, name, modules, f"skills.{name}")
        token = activate(Run(snapshot=False, instances={}, seconds=ADMISSION_SECONDS))  # the sandbox's budgets
        try:
            output = func(**params, **stand_ins)
        finally:
            deactivate(token)
    except BudgetExceeded as e:
        return f"admission: the skill stopped on the recorded run: {e}"
    except _Mismatch as e:
        return f"admission: {e}"
    except GuardFailed as e:
        return f"admission: a guard fails on the recorded run: {e.reason}"
    except SandboxError as e:
        return f"admission: the generated code does not load in the sandbox: {e}"
    except Exception as e:  # the generated code itself failed on the recorded data
        return f"admission: the skill raised {type(e).__name__}: {e}"
    if replayer.pos != len(traj.calls):
        return f"admission: the skill made {replayer.pos} of the run's {len(traj.calls)} calls"
    try:
        same_output = canonical_json(output) == canonical_json(traj.outcome.output)
    except (TypeError, ValueError):
        same_output = False
    if not same_output:
        return f"admission: the skill returns {output!r}, the run answered {traj.outcome.output!r}"
    return None


class _StandInInstance:
    """Holds stand-in methods for a method tool's instance during admission."""


def compile_run(traj: Trajectory, *, name: str | None = None) -> Compiled | Rejected:
    """Lift, render and admit one run.

    Example:
        >>> from skillforge._trajectory import Call, Outcome, ToolRef
        >>> t = Trajectory(task="Check order 7", outcome=Outcome(ok=True, output="open"),
        ...     calls=[Call(tool="get_order", args={"order_id": "7"}, result={"status": "open"})],
        ...     tools={"get_order": ToolRef(module="shop", qualname="get_order", read=True)})
        >>> type(compile_run(t)).__name__
        'Compiled'
    """
    spec = lift(traj, name=name)
    if isinstance(spec, Rejected):
        return spec
    source = render_skill(spec)
    return admit(source, spec, traj)
