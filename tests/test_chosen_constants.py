"""Words that chose a constant are never text a skill ignores (a wrong replay found by a probe of the retail stream).

"Please cancel order W1 because I changed my mind." and "... because I found a better price
elsewhere.": the agent filed both as "no longer needed", a reason neither text says. The two tasks
differ in one region of several words that fed no argument, so their common template ignored it
(``because I {_2}``), and "... because I bought it by accident." bound the skill, which cancelled
the order as "no longer needed" where the agent files it "ordered by mistake". A write's text that
the run was neither told nor shown is a choice the agent made from the task's words, and any of
them may have made it: no region of such a run's task is ignored; each reason said is its own
text until a run shows it.
"""

from __future__ import annotations

from pathlib import Path

from skillforge._antiunify import generalize, ignores_data
from skillforge._lifting import Rejected, discover_template
from skillforge._template import IGNORED
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from tests.shadowing import Harness
from tests.toolsets import reasons

TOOLS = {
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
    "cancel_order": ToolRef(module="shop", qualname="cancel_order", params=("order_id", "reason")),
    "ship": ToolRef(module="shop", qualname="ship", params=("order_id", "speed")),
}
H = Harness(reasons)


def cancelled(oid: str, why: str, reason: str) -> Trajectory:
    return Trajectory(
        task=f"Please cancel order {oid} because {why}.",
        calls=[Call(tool="get_order", args={"order_id": oid}, result={"order_id": oid, "status": "pending"}),
               Call(tool="cancel_order", args={"order_id": oid, "reason": reason}, result={"status": "cancelled"})],
        outcome=Outcome(ok=True, output=f"Cancelled order {oid}."), tools=TOOLS,
    )


def test_a_region_of_a_task_whose_run_wrote_a_text_it_was_neither_told_nor_shown_is_not_ignored() -> None:
    runs = [cancelled("W1", "I changed my mind", "no longer needed"),
            cancelled("W2", "I found a better price elsewhere", "no longer needed")]
    templates = [discover_template(r) for r in runs]
    assert not any(isinstance(t, Rejected) for t in templates)
    both = generalize(templates[0], templates[1])
    assert both is not None and [s.kind for s in both.slots if s.kind == IGNORED] == [IGNORED]  # "because I {_2}."
    assert ignores_data(both, runs)  # ... whose words chose "no longer needed": not text to ignore


def test_a_text_the_task_says_or_a_read_returned_chooses_nothing_the_words_around_it_might() -> None:
    def shipped(oid: str, mood: str) -> Trajectory:
        return Trajectory(
            task=f"Please ship order {oid} express, I am {mood} today.",
            calls=[Call(tool="get_order", args={"order_id": oid}, result={"order_id": oid, "speeds": ["standard", "express"]}),
                   Call(tool="ship", args={"order_id": oid, "speed": "express"}, result={"status": "shipped"})],
            outcome=Outcome(ok=True, output=f"Shipped order {oid}."), tools=TOOLS,
        )

    # the speed is said by the task (and a read returned it): the mood beside it chose nothing
    runs = [shipped("W1", "quite busy"), shipped("W2", "very tired")]
    templates = [discover_template(r) for r in runs]
    both = generalize(templates[0], templates[1])
    assert both is not None and [s.kind for s in both.slots if s.kind == IGNORED] == [IGNORED]
    assert not ignores_data(both, runs)


def test_a_reason_said_another_way_goes_to_the_agent_not_to_the_skill_of_another_reason(tmp_path: Path) -> None:
    forge = H.forge(tmp_path, reasons.agent)
    for name, why in (("ana", "I changed my mind"), ("bo", "I found a better price elsewhere"), ("cy", "I changed my mind"),
                      ("dan", "I found a better price elsewhere")):
        H.check(forge, f"I'm {name}@x.io. Please cancel order W1 because {why}.", reasons.world(name))
    # the agent files this one "ordered by mistake": no skill learned from the other reason's words cancels it
    sh = H.check(forge, "I'm eve@x.io. Please cancel order W1 because I bought it by accident.", reasons.world("eve"))
    assert sh.result.source == "agent"
    assert sh.world["writes"] == [("cancel_order", {"order_id": "W1", "reason": "ordered by mistake"})]
    # each reason said as runs said it is served, filed as they filed it
    for name, why in (("fay", "I changed my mind"), ("gus", "I found a better price elsewhere")):
        sh = H.check(forge, f"I'm {name}@x.io. Please cancel order W1 because {why}.", reasons.world(name))
        assert sh.result.source == "skill", sh.result.handover


def test_runs_that_wrote_may_not_join_a_phrasing_that_ignores_text_learned_from_runs_that_did_not(tmp_path: Path) -> None:
    forge = H.forge(tmp_path, reasons.agent)
    # orders already shipped: nothing written, so the reasons' words chose nothing and may be ignored text
    for name, why in (("ana", "I changed my mind"), ("bo", "I found a better price elsewhere"), ("cy", "I changed my mind"),
                      ("dan", "I found a better price elsewhere")):
        H.check(forge, f"I'm {name}@x.io. Please cancel order W1 because {why}.", reasons.world(name, status="shipped"))
    # pending orders, cancelled "no longer needed": these runs' words chose the reason
    for name, why in (("eve", "I changed my mind"), ("fay", "I found a better price elsewhere"), ("gus", "I changed my mind"),
                      ("hal", "I found a better price elsewhere")):
        H.check(forge, f"I'm {name}@x.io. Please cancel order W1 because {why}.", reasons.world(name))
    sh = H.check(forge, "I'm ivy@x.io. Please cancel order W1 because I bought it by accident.", reasons.world("ivy"))
    assert sh.result.source != "skill"
    assert sh.world["writes"] == [("cancel_order", {"order_id": "W1", "reason": "ordered by mistake"})]
