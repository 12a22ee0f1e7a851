"""The shadow check on a workload nobody tuned the lifter to: every task through solve() and,
from the same starting state, through the agent alone. A skill-served task whose writes or
answer differ is a wrong replay; there must be none, and skills must still serve."""

from __future__ import annotations

from bench import shadow


def test_the_helpdesk_stream_has_no_wrong_replay_and_skills_serve_part_of_it() -> None:
    report = shadow.run("helpdesk")
    assert report.tasks >= 120 and report.tempting >= 20
    assert report.crashes == [] and report.agent_mismatches == []  # the harness and the agent are sound
    wrong = [(m.task.text, m.skill, m.forge_output, m.agent_output) for m in report.wrong_replays]
    assert wrong == []
    assert report.served >= 10, shadow.render(report)
    assert report.errors == 0
