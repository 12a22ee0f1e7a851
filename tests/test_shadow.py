"""The shadow check on workloads nobody tuned the lifter to: every task through solve() and,
from the same starting state, through the agent alone. A skill-served task whose writes or
answer differ is a wrong replay; there must be none."""

from __future__ import annotations

import pytest

from bench import shadow


@pytest.mark.parametrize(("workload", "min_served"), [("helpdesk", 8), ("retail", 0), ("storefront", 0)])
def test_a_task_stream_has_no_wrong_replay(workload: str, min_served: int) -> None:
    report = shadow.run(workload)
    assert report.tasks >= 120 and report.tempting >= 20
    assert report.crashes == [] and report.agent_mismatches == []  # the harness and the agent are sound
    wrong = [(m.task.text, m.skill, m.forge_output, m.agent_output) for m in report.wrong_replays]
    assert wrong == []
    assert report.served >= min_served, shadow.render(report)
    assert report.errors == 0
    # messages of two requests: composed or begun so, never wrong; on the helpdesk clause skills are tried
    assert report.composed_wrong == 0
    if workload == "helpdesk":
        assert report.composed_handed_over + sum(report.composed.values()) >= 1, shadow.render(report)
        assert "composed of clause skills:" in shadow.render(report)
    # every skill file is counted under the intents (task kinds) whose runs it holds
    assert "?" not in report.files_by_kind and set(report.files_by_kind) <= set(report.by_kind)
    assert len(report.skills_written) <= sum(report.files_by_kind.values())
