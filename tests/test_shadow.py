"""The shadow check on workloads nobody tuned the lifter to: every task through solve() and,
from the same starting state, through the agent alone. A skill-served task whose writes or
answer differ is a wrong replay; there must be none."""

from __future__ import annotations

import logging

import pytest

from bench import shadow
from bench.workloads import load, stream

FATES_STOPPED = shadow.FATES["clause stopped"]


@pytest.mark.parametrize(("workload", "min_served"), [("helpdesk", 8), ("retail", 0), ("storefront", 0)])
def test_a_task_stream_has_no_wrong_replay(workload: str, min_served: int, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=shadow.__name__):
        report = shadow.run(workload)
    assert report.tasks >= 120 and report.tempting >= 20
    assert report.crashes == [] and report.agent_mismatches == []  # the harness and the agent are sound
    wrong = [(m.task.text, m.skill, m.forge_output, m.agent_output) for m in report.wrong_replays]
    assert wrong == []
    assert report.served >= min_served, shadow.render(report)
    assert report.errors == 0
    # messages of two requests: composed or begun so, never wrong; on the helpdesk clause skills are tried
    assert report.composed_wrong == 0
    # composition's own shortfall: a message whose every clause bound a skill before solve() is composed
    several = sum(t.kind == shadow.SEVERAL for t in stream(load(workload)))
    assert sum(report.several.values()) == several > 0 and report.several["cut, not composed"] == 0, shadow.render(report)
    # with -v, each says what became of it and why: the guard that stopped it, or the template nearest it
    told = [r.getMessage() for r in caplog.records if "a message of several requests" in r.getMessage()]
    assert len(told) == several, told
    assert all("guard failed" in m for m in told if FATES_STOPPED in m), told
    assert all("solve() hands it to the agent" in m for m in told if "first seen" in m), told
    if workload == "helpdesk":
        assert report.composed_handed_over + sum(report.composed.values()) >= 1, shadow.render(report)
        assert "composed of clause skills:" in shadow.render(report)
    # every skill file is counted under the intents (task kinds) whose runs it holds
    assert "?" not in report.files_by_kind and set(report.files_by_kind) <= set(report.by_kind)
    assert len(report.skills_written) <= sum(report.files_by_kind.values())


@pytest.mark.parametrize("workload", ["helpdesk", "retail", "storefront"])
def test_a_longer_stream_goes_on_where_the_shorter_one_ends(workload: str) -> None:
    wl = load(workload)
    two, four = stream(wl), stream(wl, 4)
    assert four[: len(two)] == two  # the first two days are the same whatever the length
    assert sorted({t.day for t in four}) == [1, 2, 3, 4]
    later = [t for t in four if t.day == 3]
    assert any(t.tempting for t in later) and {t.kind for t in later} >= {t.kind for t in two if t.day == 2} - {"changed_mind"}
    assert [t.text for t in later] != [t.text for t in two if t.day == 2]  # other values, not day 2 again
    assert stream(wl, 1) == [t for t in two if t.day == 1]
    with pytest.raises(ValueError, match="at least one day"):
        stream(wl, 0)


def test_a_longer_helpdesk_stream_serves_two_request_messages_by_composition() -> None:
    # two days are too few for the clause skills to see the worlds the day-2 messages meet (issue #9's
    # combination rule hands those over); six days of the same traffic are not
    report = shadow.run("helpdesk", days=6)
    assert report.wrong_replays == [] and report.crashes == [] and report.agent_mismatches == [], shadow.render(report)
    assert report.composed_wrong == 0
    assert report.composed[2] >= 10, shadow.render(report)  # messages served wholly by two clause skills
    assert report.several["cut, not composed"] == 0, shadow.render(report)
    # composition grows with the stream: day 2 composes none yet, day 6 several (each day's fates add up)
    daily = report.several_by_day
    assert sum(sum(c.values()) for c in daily.values()) == sum(report.several.values()), shadow.render(report)
    assert daily[6]["composed"] > daily[2]["composed"], shadow.render(report)
    assert "composed by day (of the day's messages of several requests): 1: " in shadow.render(report)
    by_day = report.by_day
    assert by_day[6]["skill"] > 3 * by_day[2]["skill"], shadow.render(report)  # serving grows as runs accumulate


def test_what_became_of_a_message_of_several_requests_is_told_from_explain_and_the_result() -> None:
    from types import SimpleNamespace

    def result(source: str, clauses: tuple[tuple[str, str], ...] = ()) -> SimpleNamespace:
        return SimpleNamespace(source=source, clauses=clauses)

    both = (("Add ana.li to vpn-users", "add"), ("and remove her from wiki.", "remove"))
    assert shadow._fate("clauses", result("skill", both)) == "composed"
    assert shadow._fate("clauses", result("skill+agent", both[:1])) == "clause stopped"
    assert shadow._fate("skill", result("skill")) == "whole"
    assert shadow._fate("skill", result("agent")) == "whole"  # explain() found a skill for the whole message
    assert shadow._fate("agent", result("agent")) == "new words"
    # every clause bound a skill before solve(), yet the message went to the agent: composition's own shortfall
    assert shadow._fate("clauses", result("agent")) == "cut, not composed"
    assert shadow._fate("clauses", result("skill+agent")) == "cut, not composed"  # handed over before any clause was served
    assert set(shadow.FATES) == {"composed", "clause stopped", "whole", "new words", "cut, not composed"}
