"""compile_run: Trajectory → Compiled | Rejected, with admission by proof.

A run becomes a skill only if the compiled function, executed in the sandbox
with stand-ins that return the recorded results instead of the real tools,
makes exactly the recorded calls (same tools, same arguments, same order) and
returns the recorded output, for the parameters its own template binds from the
run's task.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from ._codegen import render_skill
from ._exceptions import SandboxError, SkillforgeSignal
from ._lifting import Rejected, lift
from ._sandbox import compile_skill, load_function
from ._spec import SkillSpec
from ._template import TaskTemplate
from ._trajectory import Trajectory, canonical_json

__all__ = ["Compiled", "Rejected", "admit", "compile_run"]


@dataclass(frozen=True, slots=True)
class Compiled:
    """A run compiled and admitted: the spec and the file's full text."""

    spec: SkillSpec
    source: str


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

        return call


def admit(source: str, spec: SkillSpec, traj: Trajectory) -> Compiled | Rejected:
    """Prove that ``source`` reproduces ``traj``; the verdict, never an exception."""
    template = TaskTemplate(spec.template, list(spec.slots))
    params = template.bind(traj.task)
    if params is None:
        return Rejected(f"the template {spec.template!r} does not bind its own task {traj.task!r}")
    if canonical_json(params) != canonical_json(spec.examples):
        return Rejected(f"the template binds {params!r} from the task, the run used {spec.examples!r}")
    replayer = _Replayer(traj)
    modules: dict[str, dict[str, Any]] = {}
    instances: dict[str, Any] = {}
    for name, ref in spec.tools.items():
        if ref.method:
            owner = ref.qualname.rsplit(".", 1)[0]
            inst = next(p for p, o in spec.instances if o == owner)
            ns = instances.setdefault(inst, _StandInInstance())
            setattr(ns, ref.qualname.rsplit(".", 1)[-1], replayer.stand_in(name))
        else:
            modules.setdefault(ref.module, {})[ref.qualname] = replayer.stand_in(name)
    try:
        code = compile_skill(source, f"<admission {spec.name}>")
        func = load_function(code, spec.name, modules, f"skills.{spec.name}")
        output = func(**params, **instances)
    except _Mismatch as e:
        return Rejected(f"admission: {e}")
    except SandboxError as e:
        return Rejected(f"admission: the generated code does not load in the sandbox: {e}")
    except Exception as e:  # the generated code itself failed on the recorded data
        return Rejected(f"admission: the skill raised {type(e).__name__}: {e}")
    if replayer.pos != len(traj.calls):
        return Rejected(f"admission: the skill made {replayer.pos} of the run's {len(traj.calls)} calls")
    try:
        same_output = canonical_json(output) == canonical_json(traj.outcome.output)
    except (TypeError, ValueError):
        same_output = False
    if not same_output:
        return Rejected(f"admission: the skill returns {output!r}, the run answered {traj.outcome.output!r}")
    return Compiled(spec=spec, source=source)


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
