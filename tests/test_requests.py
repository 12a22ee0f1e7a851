"""Several requests in one message: runs split into one run per request, and messages served by
composing the skills of their clauses (``skillforge._requests``, ``skillforge._composing``).

The runs alone first (what a request is, the shared prelude, data flow across requests, reads made
stale by another request's write, answers that do not fall apart), then a Forge on a real SQLite
shop, shadowed by its agent alone from the same starting state.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from skillforge import Forge
from skillforge._requests import Joiner, Split, pieces, segment, split_run
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from tests.toolsets import shop

TOOLS = {
    "find_customer": ToolRef(module="tests.toolsets.shop", qualname="find_customer", read=True, params=("email",)),
    "get_order": ToolRef(module="tests.toolsets.shop", qualname="get_order", read=True, params=("order_id",)),
    "cancel_order": ToolRef(module="tests.toolsets.shop", qualname="cancel_order", params=("order_id", "reason")),
    "ship_to": ToolRef(module="tests.toolsets.shop", qualname="ship_to", params=("order_id", "address")),
}
ANA = {"id": "c1", "name": "Ana Ruiz"}


def order(order_id: str, status: str = "pending", address: str = "1 Elm Street") -> dict[str, Any]:
    return {"id": order_id, "customer": "c1", "status": status, "address": address}


def run(task: str, calls: list[tuple[str, dict[str, Any], Any]], output: Any) -> Trajectory:
    return Trajectory(
        task=task, calls=[Call(tool=t, args=a, result=r) for t, a, r in calls], outcome=Outcome(ok=True, output=output), tools=TOOLS
    )


def two_requests() -> Trajectory:
    return run(
        "I'm ana@example.com. Cancel order #W11 because it was a mistake. Ship order #W12 to 5 Oak Lane.",
        [
            ("find_customer", {"email": "ana@example.com"}, ANA),
            ("get_order", {"order_id": "W11"}, order("W11")),
            ("cancel_order", {"order_id": "W11", "reason": "it was a mistake"}, {"order_id": "W11", "status": "cancelled"}),
            ("get_order", {"order_id": "W12"}, order("W12")),
            ("ship_to", {"order_id": "W12", "address": "5 Oak Lane"}, {"order_id": "W12", "address": "5 Oak Lane"}),
        ],
        "Cancelled order #W11. Order #W12 now ships to 5 Oak Lane.",
    )


# -- splitting runs --------------------------------------------------------------


def test_pieces_cut_after_sentences_and_keep_the_space_with_the_sentence() -> None:
    text = "I'm ana@example.com. Cancel #W11; ship #W12.\nThanks!"
    assert [text[a:b] for a, b in pieces(text)] == ["I'm ana@example.com. ", "Cancel #W11; ", "ship #W12.\n", "Thanks!"]
    assert pieces("jack.nguyen needs 3.5 GB") == [(0, 24)]  # no space after the dot: no cut


def test_a_run_of_two_requests_is_a_shared_prelude_and_one_run_per_request() -> None:
    split = split_run(two_requests())
    assert isinstance(split, Split)
    assert split.prelude == "I'm ana@example.com. "
    assert split.clauses == ("Cancel order #W11 because it was a mistake. ", "Ship order #W12 to 5 Oak Lane.")
    first, second = split.runs
    assert first.task == "I'm ana@example.com. Cancel order #W11 because it was a mistake."
    assert [c.tool for c in first.calls] == ["find_customer", "get_order", "cancel_order"]
    assert second.task == "I'm ana@example.com. Ship order #W12 to 5 Oak Lane."
    assert [c.tool for c in second.calls] == ["find_customer", "get_order", "ship_to"]  # the prelude's call in both
    # the answer, cut where the agent joined its sentences: each request's own sentence
    assert (first.outcome.output, second.outcome.output) == ("Cancelled order #W11.", "Order #W12 now ships to 5 Oak Lane.")
    assert split.joiner == Joiner(". ", ".")
    assert split.fresh == (True, True)
    assert set(first.tools) == {"find_customer", "get_order", "cancel_order"}


def test_joining_the_answers_back_gives_the_agents_answer() -> None:
    split = split_run(two_requests())
    assert isinstance(split, Split)
    assert split.joiner.join([r.outcome.output for r in split.runs]) == (True, two_requests().outcome.output)
    assert Joiner("; ", ".").join(["I cancelled #W1.", "I returned #W2."]) == (True, "I cancelled #W1; I returned #W2.")
    assert Joiner("; ", ".").join(["I cancelled #W1.", {"not": "text"}]) == (False, None)
    assert Joiner("; ", ".").join(["I cancelled #W1!", "I returned #W2."]) == (False, None)  # not the agent's way
    assert Joiner(None).join([None, None]) == (True, None)
    assert Joiner.from_json(Joiner("; ", ".").to_json()) == Joiner("; ", ".")
    with pytest.raises(ValueError, match="not a joiner"):
        Joiner.from_json({"sep": 3})


def test_a_read_for_one_request_that_another_request_uses_is_in_both_runs() -> None:
    # the second request ships to the first order's address: its write reads what get_order(W11) returned
    traj = run(
        "I'm ana@example.com. Cancel order #W11 because it was a mistake. Ship order #W12 to where order #W11 was going.",
        [
            ("find_customer", {"email": "ana@example.com"}, ANA),
            ("get_order", {"order_id": "W11"}, order("W11", address="7 Hill Road")),
            ("get_order", {"order_id": "W12"}, order("W12")),
            ("cancel_order", {"order_id": "W11", "reason": "it was a mistake"}, {"order_id": "W11", "status": "cancelled"}),
            ("ship_to", {"order_id": "W12", "address": "7 Hill Road"}, {"order_id": "W12", "address": "7 Hill Road"}),
        ],
        "Cancelled order #W11. Order #W12 now ships to 7 Hill Road.",
    )
    split = split_run(traj)
    assert isinstance(split, Split)
    assert [c.args for c in split.runs[1].calls if c.tool == "get_order"] == [{"order_id": "W11"}, {"order_id": "W12"}]
    # but that read came before the cancel of W11 and the shipping after it: the second request acted on
    # what the cancel may have changed, so its run is not learned from
    assert split.fresh == (True, False)


def test_a_request_whose_calls_follow_another_requests_write_to_the_same_order_is_not_learned() -> None:
    traj = run(
        "I'm ana@example.com. Ship order #W11 to 5 Oak Lane. Cancel order #W11 because it was a mistake.",
        [
            ("find_customer", {"email": "ana@example.com"}, ANA),
            ("get_order", {"order_id": "W11"}, order("W11")),
            ("ship_to", {"order_id": "W11", "address": "5 Oak Lane"}, {"order_id": "W11", "address": "5 Oak Lane"}),
            ("cancel_order", {"order_id": "W11", "reason": "it was a mistake"}, {"order_id": "W11", "status": "cancelled"}),
        ],
        "Order #W11 now ships to 5 Oak Lane. Cancelled order #W11.",
    )
    split = split_run(traj)
    assert isinstance(split, Split)
    # the cancel's view of order W11 is the read made before the address changed: not a run of its own
    assert split.fresh == (True, False)


def test_a_request_that_read_before_a_write_which_returned_the_record_reads_that_record() -> None:
    # the agent read order W11 once, shipped it (the write returned the whole order), then cancelled it:
    # what it knew of the order when it cancelled is what the write returned, as a fresh read would show
    shipped = order("W11", address="5 Oak Lane")
    traj = run(
        "I'm ana@example.com. Ship order #W11 to 5 Oak Lane. Cancel order #W11 because it was a mistake.",
        [
            ("find_customer", {"email": "ana@example.com"}, ANA),
            ("get_order", {"order_id": "W11"}, order("W11")),
            ("ship_to", {"order_id": "W11", "address": "5 Oak Lane"}, shipped),
            ("cancel_order", {"order_id": "W11", "reason": "it was a mistake"}, {"order_id": "W11", "status": "cancelled"}),
        ],
        "Order #W11 now ships to 5 Oak Lane. Cancelled order #W11.",
    )
    split = split_run(traj)
    assert isinstance(split, Split) and split.fresh == (True, True)
    # the first request's run saw the order as read; the second's, as the shipping left it
    assert [c.result for c in split.runs[0].calls if c.tool == "get_order"] == [order("W11")]
    assert [c.result for c in split.runs[1].calls if c.tool == "get_order"] == [shipped]
    # a write that returns fields the record does not have ("order_id", not its "id"), or another record:
    # what the cancel acted on is not known, not learned (the fields it changed, under the record's own
    # names, would be: tests/test_placed_requests.py)
    partial = traj.model_copy(update={"calls": [
        *traj.calls[:2], traj.calls[2].model_copy(update={"result": {"order_id": "W11", "address": "5 Oak Lane"}}), traj.calls[3],
    ]})
    assert split_run(partial).fresh == (True, False)
    other = traj.model_copy(update={"calls": [
        *traj.calls[:2], traj.calls[2].model_copy(update={"result": order("W12", address="5 Oak Lane")}), traj.calls[3],
    ]})
    assert split_run(other).fresh == (True, False)


def test_a_request_that_uses_what_an_earlier_write_returned_of_its_record_reads_that_record() -> None:
    # the second request sends the tracking number the first request's write returned with the whole
    # order (the read before it had none): its run reads the order as that write returned it
    read = {**order("W11"), "tracking": ""}
    moved = {**order("W11", address="5 Oak Lane"), "tracking": "T-77"}
    tools = {**TOOLS, "send_tracking": ToolRef(module="tests.toolsets.shop", qualname="send_tracking", params=("order_id", "tracking"))}
    traj = Trajectory(
        task="I'm ana@example.com. Ship order #W11 to 5 Oak Lane. Email me the tracking number of order #W11.",
        calls=[
            Call(tool="find_customer", args={"email": "ana@example.com"}, result=ANA),
            Call(tool="get_order", args={"order_id": "W11"}, result=read),
            Call(tool="ship_to", args={"order_id": "W11", "address": "5 Oak Lane"}, result=moved),
            Call(tool="send_tracking", args={"order_id": "W11", "tracking": "T-77"}, result={"order_id": "W11", "sent": True}),
        ],
        outcome=Outcome(ok=True, output="Order #W11 now ships to 5 Oak Lane. Sent the tracking number of order #W11."),
        tools=tools,
    )
    split = split_run(traj)
    assert isinstance(split, Split) and split.fresh == (True, True), split
    assert [c.result for c in split.runs[1].calls if c.tool == "get_order"] == [moved]
    # a write that returned less than the record: the tracking number is in no call of the second request's run
    partial = traj.model_copy(update={"calls": [
        *traj.calls[:2], traj.calls[2].model_copy(update={"result": {"order_id": "W11", "tracking": "T-77"}}), traj.calls[3],
    ]})
    assert split_run(partial) == "call 3 (send_tracking) uses what another request's call returned"


def test_a_request_whose_reads_follow_another_requests_write_is_learned() -> None:
    # as a composed message runs: each request's skill reads after the earlier request wrote
    traj = run(
        "I'm ana@example.com. Ship order #W11 to 5 Oak Lane. Cancel order #W11 because it was a mistake.",
        [
            ("find_customer", {"email": "ana@example.com"}, ANA),
            ("get_order", {"order_id": "W11"}, order("W11")),
            ("ship_to", {"order_id": "W11", "address": "5 Oak Lane"}, {"order_id": "W11", "address": "5 Oak Lane"}),
            ("get_order", {"order_id": "W11"}, order("W11", address="5 Oak Lane")),
            ("cancel_order", {"order_id": "W11", "reason": "it was a mistake"}, {"order_id": "W11", "status": "cancelled"}),
        ],
        "Order #W11 now ships to 5 Oak Lane. Cancelled order #W11.",
    )
    split = split_run(traj)
    assert isinstance(split, Split)
    # each request's run has the read made for it: the cancel's, the order as the new address left it
    assert [c.result["address"] for c in split.runs[0].calls if c.tool == "get_order"] == ["1 Elm Street"]
    assert [c.result["address"] for c in split.runs[1].calls if c.tool == "get_order"] == ["5 Oak Lane"]
    assert split.fresh == (True, True)


def test_a_write_that_uses_another_requests_write_keeps_the_run_whole() -> None:
    traj = run(
        "I'm ana@example.com. Cancel order #W11 because it was a mistake. Ship order #W12 to 5 Oak Lane.",
        [
            ("find_customer", {"email": "ana@example.com"}, ANA),
            ("cancel_order", {"order_id": "W11", "reason": "it was a mistake"}, {"order_id": "W11", "note": "n-77"}),
            ("ship_to", {"order_id": "W12", "address": "5 Oak Lane n-77"}, {"order_id": "W12"}),
        ],
        "Cancelled order #W11. Order #W12 now ships to 5 Oak Lane.",
    )
    assert "uses what another request's call returned" in str(split_run(traj))


def test_an_answer_cut_two_ways_is_cut_the_way_the_agent_is_known_to_join() -> None:
    # between the two orders' names stand both ": " and "; ": either could be where the answers meet
    traj = two_requests().model_copy(update={"outcome": Outcome(
        ok=True, output="Cancelled order #W11 (status: cancelled); order #W12 now ships to 5 Oak Lane.",
    )})
    assert split_run(traj) == "the answer falls into one part per request in 2 ways"
    split = split_run(traj, joiners=[Joiner("; ", ".")])
    assert isinstance(split, Split) and split.joiner == Joiner("; ", ".")
    assert [r.outcome.output for r in split.runs] == [
        "Cancelled order #W11 (status: cancelled).", "order #W12 now ships to 5 Oak Lane.",
    ]


@pytest.mark.parametrize(
    ("task", "output", "why"),
    [
        # one sentence: the text gives no place to cut
        ("I'm ana@example.com and please cancel order #W11 because it was a mistake and ship order #W12 to 5 Oak Lane",
         "Cancelled order #W11. Order #W12 now ships to 5 Oak Lane.", "one sentence"),
        # the answer names neither order: no telling which part answers which request
        ("I'm ana@example.com. Cancel order #W11 because it was a mistake. Ship order #W12 to 5 Oak Lane.",
         "Done, both of them.", "does not fall into one part per request"),
        # the answer names them out of the message's order
        ("I'm ana@example.com. Cancel order #W11 because it was a mistake. Ship order #W12 to 5 Oak Lane.",
         "Order #W12 now ships to 5 Oak Lane. Cancelled order #W11.", "does not fall into one part per request"),
    ],
)
def test_runs_that_cannot_be_cut_into_requests_stay_whole(task: str, output: str, why: str) -> None:
    traj = two_requests().model_copy(update={"task": task, "outcome": Outcome(ok=True, output=output)})
    assert why in str(split_run(traj))


def test_one_request_with_two_writes_is_one_request() -> None:
    traj = run(
        "I'm ana@example.com. Move order #W11 to 5 Oak Lane and cancel it because we moved house.",
        [
            ("find_customer", {"email": "ana@example.com"}, ANA),
            ("ship_to", {"order_id": "W11", "address": "5 Oak Lane"}, {}),
            ("cancel_order", {"order_id": "W11", "reason": "I moved"}, {}),
        ],
        "Done.",
    )
    assert split_run(traj) == "every write uses values of one clause"
    assert split_run(run("I'm ana@example.com. Cancel order #W11 because x.", two_requests().model_dump()["calls"][:0], None)) == (
        "fewer than two writes"
    )


def test_segment_finds_the_shortest_prelude_and_the_fewest_clauses() -> None:
    known = {"I'm ana@example.com. Cancel order #W11.", "I'm ana@example.com. Ship order #W12 to 5 Oak Lane."}
    binds = known.__contains__
    assert segment("I'm ana@example.com. Cancel order #W11. Ship order #W12 to 5 Oak Lane.", binds) == (
        "I'm ana@example.com. ", ["Cancel order #W11. ", "Ship order #W12 to 5 Oak Lane."], "",
    )
    # a sentence no clause of any skill takes: no cutting
    assert segment("I'm ana@example.com. Cancel order #W11. Call me tomorrow.", binds) is None
    assert segment("I'm ana@example.com. Cancel order #W11.", binds) is None  # one request: not a composition


def test_a_skill_is_named_after_the_sentence_its_first_write_says() -> None:
    from skillforge._lifting import skill_name

    template = "I'm {email}. You are {persona}. Cancel order #{order_id} because {reason}."
    assert skill_name(template, ["order_id"]) == "cancel_order_because"
    assert skill_name(template) == "m_cancel_order_because"  # no focus: the first words of the whole template
    assert skill_name("Refund order #{order_id}", ["order_id"]) == "refund_order"


# -- composing, on a real shop ---------------------------------------------------


@pytest.fixture
def world(tmp_path: Path) -> Any:
    forge = shop.open_shop(tmp_path, shop.agent)
    yield forge, tmp_path
    forge.close()
    shop.TOOLBOX.clear()


def shadowed(forge: Forge, tmp: Path, task: str) -> tuple[Any, bool]:
    """``task`` through ``forge.solve()`` and, from the same starting state, through the agent alone."""
    return shop.shadowed(forge, tmp, task, shop.agent)


FIRST = "I'm ana@example.com. Cancel order #W11 because it was a mistake. Ship order #W12 to 5 Oak Lane."
SECOND = "I'm bo@example.com. Cancel order #W21 because we moved house. Ship order #W22 to 7 Pine Road."


def test_a_message_of_two_requests_seen_before_is_served_by_composing_their_skills(world: Any) -> None:
    forge, tmp = world
    first, same = shadowed(forge, tmp, FIRST)
    assert first.source == "agent" and same
    assert first.learned is not None and len(first.learned.split(", ")) == 2  # one skill per request
    assert len([p for p in (tmp / "skills").glob("*.py") if p.stem != "__init__"]) == 2
    # another customer: learned from one run, the skills knew one customer; the agent's run widens them
    second, same = shadowed(forge, tmp, SECOND)
    assert second.source == "skill+agent" and "customer['id']" in (second.handover or "") and same
    assert len([p for p in (tmp / "skills").glob("*.py") if p.stem != "__init__"]) == 2
    # then served by the two skills in message order: each makes its own reads, the answers joined as the agent joins them
    result, same = shadowed(forge, tmp, "I'm bo@example.com. Cancel order #W23 because we moved house. Ship order #W24 to 2 Mill Way.")
    assert result.source == "skill" and result.llm_calls == 0 and same, result.handover
    assert result.output == "Cancelled order #W23. Order #W24 now ships to 2 Mill Way."
    assert [c for c, _s in result.clauses] == ["Cancel order #W23 because we moved house. ", "Ship order #W24 to 2 Mill Way."]
    assert [c.tool for c in result.calls] == ["find_customer", "get_order", "cancel_order", "find_customer", "get_order", "ship_to"]
    # the other way round: each clause by its skill, in the message's order
    reverse, same = shadowed(forge, tmp, "I'm ana@example.com. Ship order #W14 to 3 Bay Road. Cancel order #W15 because it is too late.")
    assert reverse.source == "skill" and same
    assert [s for _c, s in reverse.clauses] == [s for _c, s in reversed(result.clauses)]
    # the run log says which skill served which clause
    assert forge.runlog is not None
    forge.runlog.flush()
    with sqlite3.connect(tmp / "state" / "runs.sqlite3") as db:
        logged = db.execute("SELECT task, position, clause, skill FROM clauses ORDER BY at, position").fetchall()
    assert [row for row in logged if row[0] == result.task] == [
        (result.task, 0, result.clauses[0][0], result.clauses[0][1]), (result.task, 1, result.clauses[1][0], result.clauses[1][1]),
    ]
    assert [row[1:] for row in logged if row[0] == SECOND] == [(0, second.clauses[0][0], second.clauses[0][1])]  # where it stopped
    # stats count a composed message as a hit of each skill it used, under the skills' own names
    per_skill = {s.name: s for s in forge.stats().skills}
    assert sorted(per_skill) == sorted({name for _c, name in result.clauses})
    assert all(per_skill[name].hits == 2 for _c, name in result.clauses)


def test_a_handover_in_the_second_request_after_the_first_wrote_repeats_no_write(world: Any) -> None:
    forge, tmp = world
    forge.solve(FIRST)
    forge.solve(SECOND)
    # order W13 has shipped: the shipping skill's guard stops it after the cancel was made
    result, same = shadowed(forge, tmp, "I'm ana@example.com. Cancel order #W16 because it was a mistake. Ship order #W13 to 5 Oak Lane.")
    assert result.source == "skill+agent" and same
    assert "clause 2 of 2" in (result.handover or "") and "status" in (result.handover or "")
    assert result.output == "Cancelled order #W16. Order #W13 is shipped; I changed nothing."
    assert [t.tool for t in result.calls].count("cancel_order") == 1  # the agent took the cancel from the transcript
    assert "cancel" in result.clauses[0][1] and "ship" in result.clauses[1][1] and len(result.clauses) == 2


def test_a_message_with_a_clause_no_skill_takes_goes_to_the_agent(world: Any) -> None:
    forge, tmp = world
    forge.solve(FIRST)
    forge.solve(SECOND)
    for task in (
        "I'm bo@example.com. Cancel order #W21 because we moved house. Also call me tomorrow.",
        "I'm bo@example.com. Cancel order #W21 because we moved house. Don't ship order #W22 to 7 Pine Road.",  # a negation
    ):
        result, same = shadowed(forge, tmp, task)
        assert result.source == "agent" and result.clauses == () and same


def test_no_message_is_composed_before_a_run_showed_how_the_agent_joins_answers(world: Any) -> None:
    forge, tmp = world
    forge.solve("I'm ana@example.com. Cancel order #W11 because it was a mistake.")
    forge.solve("I'm ana@example.com. Ship order #W12 to 5 Oak Lane.")
    assert forge.joiner() is None
    result, same = shadowed(forge, tmp, "I'm bo@example.com. Cancel order #W21 because we moved house. Ship order #W22 to 7 Pine Road.")
    assert result.source == "agent" and same
    assert forge.joiner() == Joiner(". ", ".")
    (tmp / "state" / "compose.json").write_text("{not json")  # derived state, broken: compositions wait, nothing fails
    assert forge.joiner() is None
    result, same = shadowed(forge, tmp, "I'm bo@example.com. Cancel order #W23 because we moved house. Ship order #W22 to 9 Bay Road.")
    assert result.source == "agent" and same


def test_a_composed_message_that_stops_after_a_write_with_an_agent_that_cannot_resume_is_left_for_a_person(world: Any) -> None:
    forge, _tmp = world
    forge.solve(FIRST)
    forge.solve(SECOND)

    def plain(task: str) -> str:  # takes no transcript: it would start over and repeat the cancel
        return shop.agent(task)

    forge.agent = plain
    result = forge.solve("I'm ana@example.com. Cancel order #W16 because it was a mistake. Ship order #W13 to 5 Oak Lane.")
    assert result.source == "skill" and not result.ok
    assert "cannot resume" in (result.error or "") and "clause 2 of 2" in (result.handover or "")
    assert [c.tool for c in result.calls].count("cancel_order") == 1 and len(result.clauses) == 2
    assert ("W16", "c1", "cancelled", "1 Elm Street", "it was a mistake") in shop.snapshot()  # the first request's write stands


def test_answers_that_do_not_join_as_the_agent_joins_hand_over_after_the_writes(world: Any) -> None:
    forge, tmp = world
    forge.solve(FIRST)
    forge.solve(SECOND)
    # a way of joining no skill's answer fits (each would have to end with "!")
    (tmp / "state" / "compose.json").write_text('{"joiners": [{"sep": " ", "end": "!"}]}')
    result, same = shadowed(forge, tmp, "I'm bo@example.com. Cancel order #W23 because we moved house. Ship order #W24 to 2 Mill Way.")
    assert result.source == "skill+agent" and same  # the agent answered, from the transcript
    assert "do not join" in (result.handover or "") and len(result.clauses) == 2
    assert [c.tool for c in result.calls].count("cancel_order") == 1 and [c.tool for c in result.calls].count("ship_to") == 1


def test_runs_that_showed_two_ways_of_joining_compose_nothing(world: Any) -> None:
    forge, tmp = world
    forge.solve(FIRST)
    forge.solve(SECOND)
    assert forge.joiner() == Joiner(". ", ".")
    (tmp / "state" / "compose.json").write_text('{"joiners": [{"sep": ". ", "end": "."}, {"sep": " ", "end": ""}]}')
    assert forge.joiner() is None
    result, same = shadowed(forge, tmp, "I'm bo@example.com. Cancel order #W23 because we moved house. Ship order #W24 to 2 Mill Way.")
    assert result.source == "agent" and result.clauses == () and same


def test_a_composed_runs_reads_made_again_by_each_skill_still_split() -> None:
    # a composed message handed over in its second clause: that clause's skill made the prelude's read
    # again (call 3), and the lifter took the customer id its lookup uses from the first one (call 0)
    tools = TOOLS | {"orders_of": ToolRef(module="tests.toolsets.shop", qualname="orders_of", read=True, params=("customer",))}
    traj = Trajectory(task="I'm ana@example.com. Cancel order #W11 because it was a mistake. Ship order #W12 to 5 Oak Lane.", calls=[
        Call(tool="find_customer", args={"email": "ana@example.com"}, result=ANA),
        Call(tool="get_order", args={"order_id": "W11"}, result=order("W11")),
        Call(tool="cancel_order", args={"order_id": "W11", "reason": "it was a mistake"}, result={"order_id": "W11"}),
        Call(tool="find_customer", args={"email": "ana@example.com"}, result=ANA),
        Call(tool="orders_of", args={"customer": "c1"}, result=[order("W12")]),
        Call(tool="ship_to", args={"order_id": "W12", "address": "5 Oak Lane"}, result={"order_id": "W12"}),
    ], outcome=Outcome(ok=True, output="Cancelled order #W11. Order #W12 now ships to 5 Oak Lane."), tools=tools)
    split = split_run(traj, importable=False)
    assert isinstance(split, Split), split
    assert [c.tool for c in split.runs[1].calls] == ["find_customer", "orders_of", "ship_to"]  # one lookup of the customer
    assert split.fresh == (True, True)
    # a read made again whose result differs where the call uses it is not the same read
    other = traj.model_copy(update={"calls": [*traj.calls[:3], traj.calls[3].model_copy(update={"result": {"id": "c9"}}),
                                              *traj.calls[4:]]})
    assert "uses what another request's call returned" in str(split_run(other, importable=False))


def test_a_read_made_after_a_request_is_done_is_not_part_of_its_run() -> None:
    # the agent read order W11 once, for both requests; the product read it made from that order for
    # the second request came after the first request's write: it is the second request's alone
    tools = TOOLS | {"get_product": ToolRef(module="tests.toolsets.shop", qualname="get_product", read=True, params=("product_id",))}
    traj = Trajectory(task="I'm ana@example.com. Ship order #W11 to 5 Oak Lane. Ship order #W12 to the store that made W11.", calls=[
        Call(tool="find_customer", args={"email": "ana@example.com"}, result=ANA),
        Call(tool="get_order", args={"order_id": "W11"}, result=order("W11") | {"product": "p7"}),
        Call(tool="ship_to", args={"order_id": "W11", "address": "5 Oak Lane"}, result={"order_id": "W11"}),
        Call(tool="get_product", args={"product_id": "p7"}, result={"id": "p7", "store": "9 Mill Road"}),
        Call(tool="ship_to", args={"order_id": "W12", "address": "9 Mill Road"}, result={"order_id": "W12"}),
    ], outcome=Outcome(ok=True, output="Order #W11 now ships to 5 Oak Lane. Order #W12 now ships to 9 Mill Road."), tools=tools)
    split = split_run(traj, importable=False)
    assert isinstance(split, Split), split
    assert [c.tool for c in split.runs[0].calls] == ["find_customer", "get_order", "ship_to"]  # no read after its write
    assert [c.tool for c in split.runs[1].calls] == ["find_customer", "get_order", "get_product", "ship_to"]


def test_a_read_a_clause_names_only_in_passing_is_the_run_of_the_request_that_acts_on_it() -> None:
    # the second clause names order W11 only to say where it wants W12 shipped; the agent read W11 (and
    # the product it holds) for the first request, which acts on it: that read, and the read fed from
    # it, are the first request's alone, so the second request's run is the one its skill makes alone
    tools = TOOLS | {"get_product": ToolRef(module="tests.toolsets.shop", qualname="get_product", read=True, params=("product_id",))}
    traj = Trajectory(task="I'm ana@example.com. Ship order #W11 to the store that made it. "
                           "Ship order #W12 to 5 Oak Lane, as I asked for #W11.", calls=[
        Call(tool="find_customer", args={"email": "ana@example.com"}, result=ANA),
        Call(tool="get_order", args={"order_id": "W11"}, result=order("W11") | {"product": "p7"}),
        Call(tool="get_product", args={"product_id": "p7"}, result={"id": "p7", "store": "9 Mill Road"}),
        Call(tool="ship_to", args={"order_id": "W11", "address": "9 Mill Road"}, result={"order_id": "W11"}),
        Call(tool="get_order", args={"order_id": "W12"}, result=order("W12")),
        Call(tool="ship_to", args={"order_id": "W12", "address": "5 Oak Lane"}, result={"order_id": "W12"}),
    ], outcome=Outcome(ok=True, output="Order #W11 now ships to 9 Mill Road. Order #W12 now ships to 5 Oak Lane."), tools=tools)
    split = split_run(traj, importable=False)
    assert isinstance(split, Split), split
    assert [c.tool for c in split.runs[0].calls] == ["find_customer", "get_order", "get_product", "ship_to"]
    assert [(c.tool, c.args) for c in split.runs[1].calls] == [
        ("find_customer", {"email": "ana@example.com"}), ("get_order", {"order_id": "W12"}),
        ("ship_to", {"order_id": "W12", "address": "5 Oak Lane"}),
    ]
    # the second request read nothing the first one's write changed: its run is learned from
    assert split.fresh == (True, True)
    # a read the naming clause alone has a use for stays in its run: the agent looked W11 up for it
    alone = run(
        "I'm ana@example.com. Cancel order #W13 because it was a mistake. Ship order #W12 to 5 Oak Lane, as I asked for #W11.",
        [
            ("find_customer", {"email": "ana@example.com"}, ANA),
            ("get_order", {"order_id": "W13"}, order("W13")),
            ("cancel_order", {"order_id": "W13", "reason": "it was a mistake"}, {"order_id": "W13", "status": "cancelled"}),
            ("get_order", {"order_id": "W11"}, order("W11")),
            ("get_order", {"order_id": "W12"}, order("W12")),
            ("ship_to", {"order_id": "W12", "address": "5 Oak Lane"}, {"order_id": "W12", "address": "5 Oak Lane"}),
        ],
        "Cancelled order #W13. Order #W12 now ships to 5 Oak Lane.",
    )
    split = split_run(alone)
    assert isinstance(split, Split), split
    assert [c.args for c in split.runs[1].calls if c.tool == "get_order"] == [{"order_id": "W11"}, {"order_id": "W12"}]


def aside_agent(task: str, transcript: Any = None) -> str:
    """The shop's agent, for messages whose requests may name another order in passing, in brackets
    ("Ship order #W12 to 5 Oak Lane (as for #W11)."): it reads past the brackets."""
    return shop.agent(re.sub(r" \([^)]*\)", "", task), transcript)


def test_a_request_that_names_another_requests_order_in_passing_is_learned_and_served_alone(tmp_path: Path) -> None:
    forge = shop.open_shop(tmp_path, aside_agent)
    try:
        # the agent read W11 for the cancel, and the shipping clause names W11 only in passing: the
        # shipping request's run is its own reads and write, so it is learned despite the cancel of W11
        first, same = shop.shadowed(forge, tmp_path, "I'm ana@example.com. Cancel order #W11 because it was a mistake. "
                                    "Ship order #W12 to 5 Oak Lane (as for #W11).", aside_agent)
        assert first.source == "agent" and same and first.not_learned is None
        assert first.learned is not None and len(first.learned.split(", ")) == 2
        # a message of that shipping request alone is served by its skill, as the agent alone serves it
        # (the order named in passing is no value the skill takes: learned from one run, it is the same)
        alone, same = shop.shadowed(forge, tmp_path, "I'm ana@example.com. Ship order #W14 to 3 Bay Road (as for #W11).", aside_agent)
        assert alone.source == "skill" and same, alone.handover
        assert [c.tool for c in alone.calls] == ["find_customer", "get_order", "ship_to"]
        assert alone.output == "Order #W14 now ships to 3 Bay Road."
    finally:
        forge.close()
        shop.TOOLBOX.clear()
