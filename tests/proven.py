"""What several test files share: a skill learned from runs under the first run's template, proven on every run."""

from __future__ import annotations

from typing import Any

from skillforge._codegen import render_skill
from skillforge._compile import prove_all
from skillforge._learning import spec_from_runs
from skillforge._lifting import Rejected, discover_template
from skillforge._spec import SkillSpec
from skillforge._template import TaskTemplate
from skillforge._trajectory import Trajectory


def proven(runs: list[Trajectory], name: str, **learning: Any) -> tuple[SkillSpec, str]:
    """``(spec, source)`` of the skill learned from ``runs`` (``spec_from_runs`` with ``learning``) under the first
    run's template; the rendered skill reproduces every run."""
    template = discover_template(runs[0])
    assert isinstance(template, TaskTemplate), template
    spec = spec_from_runs(runs, name=name, template=template, **learning)
    assert not isinstance(spec, Rejected), spec
    source = render_skill(spec)
    assert prove_all(source, spec, runs) is None
    return spec, source
