"""Messages of several requests written the way customers write them (issue #11, the shadow
workloads): who is asking said last or before a colon, a question asked before the request that
writes, requests the agent refused (no write at all), and who-is-asking reads only one request's
write uses. Each sub-run must be the run the request alone would have been: the prelude's reads,
its own calls, its own answer.

The runs alone (``split_run``) on the shop's tools (``tests.toolsets.shop``), then a Forge on the
real SQLite shop, each solve shadowed by its agent alone from the same starting state.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from skillforge._requests import Split, segment, split_run
from skillforge._segments import colon_aligned, segment_at_colon
from skillforge._trajectory import Call, Outcome, Trajectory
from tests.test_requests import ANA, TOOLS, order
from tests.toolsets import shop

HOME = {**ANA, "home": "3 Mill Way"}
STAMP = {"order_id": "W12", "address": "3 Mill Way"}


def run(task: str, calls: list[tuple[str, dict[str, Any], Any]], output: str) -> Trajectory:
    return Trajectory(
        task=task, calls=[Call(tool=t, args=a, result=r) for t, a, r in calls], outcome=Outcome(ok=True, output=output), tools=TOOLS,
    )


def tools(split: Split) -> list[list[str]]:
    return [[c.tool for c in r.calls] for r in split.runs]


# -- who is asking: the prelude's reads are every request's ----------------------------


def cancel_and_ship_home(task: str) -> Trajectory:
    """The agent found the customer, cancelled W11, and shipped W12 to the customer's home (read from
    the customer's record: only the shipping uses what the lookup returned)."""
    return run(task, [
        ("find_customer", {"email": "ana@example.com"}, HOME),
        ("get_order", {"order_id": "W11"}, order("W11")),
        ("cancel_order", {"order_id": "W11", "reason": "it was a mistake"}, {"order_id": "W11", "status": "cancelled"}),
        ("get_order", {"order_id": "W12"}, order("W12")),
        ("ship_to", {"order_id": "W12", "address": "3 Mill Way"}, STAMP),
    ], "Cancelled order #W11. Order #W12 now ships to 3 Mill Way.")


def test_who_asks_said_first_is_read_in_every_requests_run_even_where_one_write_uses_it() -> None:
    split = split_run(cancel_and_ship_home("I'm ana@example.com. Cancel order #W11 because it was a mistake. Ship order #W12 home."))
    assert isinstance(split, Split), split
    assert split.prelude == "I'm ana@example.com. "
    # the cancel's run is the run of "I'm ana@example.com. Cancel order #W11 ...": the agent finds the customer first
    assert tools(split) == [["find_customer", "get_order", "cancel_order"], ["find_customer", "get_order", "ship_to"]]
    assert split.fresh == (True, True)


def test_who_asks_said_last_is_read_in_every_requests_run() -> None:
    split = split_run(cancel_and_ship_home("Cancel order #W11 because it was a mistake. Ship order #W12 home. I'm ana@example.com."))
    assert isinstance(split, Split), split
    assert split.prelude == "" and split.closing == "I'm ana@example.com."
    assert [r.task for r in split.runs] == [
        "Cancel order #W11 because it was a mistake. I'm ana@example.com.", "Ship order #W12 home. I'm ana@example.com.",
    ]
    assert tools(split) == [["find_customer", "get_order", "cancel_order"], ["find_customer", "get_order", "ship_to"]]


def test_a_read_of_a_value_one_clause_says_stays_that_requests_own() -> None:
    # the customer looked up by the email the shipping clause says (not who asks): the cancel's run has no such read
    split = split_run(cancel_and_ship_home("Cancel order #W11 because it was a mistake. Ship order #W12 home to ana@example.com."))
    assert isinstance(split, Split), split
    assert split.closing == ""
    assert tools(split) == [["get_order", "cancel_order"], ["find_customer", "get_order", "ship_to"]]


# -- a question asked before the request that writes -----------------------------------


def where_then_cancel(task: str, *, answer: str = "Order #W12 is shipped and goes to 1 Elm Street.") -> Trajectory:
    return run(task, [
        ("find_customer", {"email": "ana@example.com"}, ANA),
        ("get_order", {"order_id": "W12"}, order("W12", status="shipped")),
        ("get_order", {"order_id": "W11"}, order("W11")),
        ("cancel_order", {"order_id": "W11", "reason": "it was a mistake"}, {"order_id": "W11", "status": "cancelled"}),
    ], f"{answer} Cancelled order #W11.")


def test_a_question_asked_before_a_write_is_a_request_of_its_own() -> None:
    split = split_run(where_then_cancel("I'm ana@example.com. Where is order #W12? And cancel order #W11 because it was a mistake."))
    assert isinstance(split, Split), split
    assert split.clauses == ("Where is order #W12? ", "And cancel order #W11 because it was a mistake.")
    assert tools(split) == [["find_customer", "get_order"], ["find_customer", "get_order", "cancel_order"]]
    assert [c.args for c in split.runs[0].calls] == [{"email": "ana@example.com"}, {"order_id": "W12"}]
    assert [r.outcome.output for r in split.runs] == ["Order #W12 is shipped and goes to 1 Elm Street.", "Cancelled order #W11."]
    assert split.fresh == (True, True)


def test_a_read_before_a_write_whose_answer_says_nothing_it_read_is_no_question() -> None:
    # who asks, greeted by name: the answer's first sentence says only what the message said
    traj = run("I'm bo@example.com. And cancel order #W11 because it was a mistake.", [
        ("find_customer", {"email": "bo@example.com"}, {"id": "c2", "name": "Bo Chen"}),
        ("get_order", {"order_id": "W11"}, order("W11")),
        ("cancel_order", {"order_id": "W11", "reason": "it was a mistake"}, {"order_id": "W11", "status": "cancelled"}),
    ], "Hello bo@example.com. Cancelled order #W11.")
    assert isinstance(split_run(traj), str)
    # greeted by the name the lookup returned: the read is made first, before any read of who asks
    named = traj.model_copy(update={"outcome": Outcome(ok=True, output="Hello Bo Chen (bo@example.com). Cancelled order #W11.")})
    assert isinstance(split_run(named), str)
    # a question answered only with what the message said: nothing tells it from a greeting
    said = where_then_cancel("I'm ana@example.com. Where is order #W12? And cancel order #W11 because it was a mistake.",
                             answer="Order #W12: yes.")
    assert isinstance(split_run(said), str)


def test_a_request_after_an_early_question_must_be_joined_on_by_a_connective_word() -> None:
    # a sentence of its own after the question (a change of mind?): the run stays whole
    traj = where_then_cancel("I'm ana@example.com. Where is order #W12? Cancel order #W11 because it was a mistake.")
    assert isinstance(split_run(traj), str)


# -- who is asking, said before a colon in the first sentence ---------------------------


def test_who_asks_before_a_colon_is_the_prelude() -> None:
    traj = where_then_cancel("ana@example.com: where is order #W12? And cancel order #W11 because it was a mistake.")
    split = split_run(traj)
    assert isinstance(split, Split), split
    assert split.prelude == "ana@example.com: "
    assert [r.task for r in split.runs] == [
        "ana@example.com: where is order #W12?", "ana@example.com: And cancel order #W11 because it was a mistake.",
    ]
    assert tools(split) == [["find_customer", "get_order"], ["find_customer", "get_order", "cancel_order"]]


def test_who_asks_said_inside_a_questions_clause_keeps_the_run_whole() -> None:
    # "#W12: ..." says the order asked about, not who asks: no prelude; and the cancel's run would not
    # find the customer the question's clause names
    traj = where_then_cancel("Order #W12: where is it, ana@example.com? And cancel order #W11 because it was a mistake.")
    assert isinstance(split_run(traj), str)


def test_segment_never_ends_a_prelude_at_a_colon() -> None:
    # a skill that takes free text after its colon: cut there, the next clause would be its note (the ticket
    # closed twice, the second time with the MFA request as its note); no skill takes the MFA request
    def binds(text: str) -> bool:
        return re.fullmatch(r"Close INC-\d+ with note: .+", text) is not None

    assert segment("Close INC-1 with note: swapped the dock. Also enable MFA for lena.", binds) is None
    # who asks before a colon is served only where each clause's skill binds it some other way (a value
    # carried over: tests below), never by a prelude the text alone cannot tell from a free text
    known = {"ana@example.com: where is order #W12?", "ana@example.com: And cancel order #W11 because it was a mistake."}
    assert segment("ana@example.com: where is order #W12? And cancel order #W11 because it was a mistake.", known.__contains__) is None


def test_a_prelude_ends_at_a_colon_where_each_clause_binds_a_template_that_says_its_words_after_its_colon() -> None:
    task = "ana@example.com: where is order #W12? And cancel order #W11 because it was a mistake."
    known = {"ana@example.com: where is order #W12?": "{email}: where is order {order_id}?",
             "ana@example.com: And cancel order #W11 because it was a mistake.": "{email}: And cancel order {order_id} because {reason}."}

    def after_colon(prelude: str, text: str) -> bool:
        said = (prelude + text).strip()
        return said in known and colon_aligned(known[said], said)

    assert segment_at_colon(task, after_colon) == (
        "ana@example.com: ", ["where is order #W12? ", "And cancel order #W11 because it was a mistake."], "",
    )
    # a template whose colon a free text follows takes whatever follows it: no prelude of that colon
    assert not colon_aligned("Close INC-{n} with note: {note}", "Close INC-1 with note: Also enable MFA for lena.")
    assert not colon_aligned("{email}: And cancel order {order_id} because {reason}.", "ana@example.com: and cancel order #W11.")
    assert not colon_aligned("Where is {order_id}: tell me", "Where is #W1 tell me: now")  # the colons are not the same one
    close = {"Close INC-1 with note: swapped the dock.": "Close INC-{n} with note: {note}",
             "Close INC-1 with note: Also enable MFA for lena.": "Close INC-{n} with note: {note}"}
    assert segment_at_colon("Close INC-1 with note: swapped the dock. Also enable MFA for lena.",
                            lambda p, t: (p + t).strip() in close and colon_aligned(close[(p + t).strip()], (p + t).strip())) is None


# -- requests the agent refused: no write at all ----------------------------------------


def refused_then_where(task: str, output: str = "Order #W13 is shipped; I changed nothing. Order #W12 is pending and goes to "
                                                "1 Elm Street.") -> Trajectory:
    return run(task, [
        ("find_customer", {"email": "ana@example.com"}, ANA),
        ("get_order", {"order_id": "W13"}, order("W13", status="shipped")),
        ("get_order", {"order_id": "W12"}, order("W12")),
    ], output)


def test_a_refused_request_and_a_question_are_two_requests_with_no_write() -> None:
    split = split_run(refused_then_where(
        "I'm ana@example.com. Cancel order #W13 because it was a mistake, and tell me where #W12 is."))
    assert isinstance(split, Split), split
    assert split.clauses == ("Cancel order #W13 because it was a mistake, ", "and tell me where #W12 is.")
    assert tools(split) == [["find_customer", "get_order"], ["find_customer", "get_order"]]
    assert [r.outcome.output for r in split.runs] == [
        "Order #W13 is shipped; I changed nothing.", "Order #W12 is pending and goes to 1 Elm Street.",
    ]
    assert split.fresh == (True, True)


def test_a_run_with_no_write_stays_whole_unless_each_part_answers_from_its_own_read() -> None:
    # one question about two orders: the second clause says only a value, an item of a list
    assert isinstance(split_run(refused_then_where("I'm ana@example.com. Where are orders #W13 and #W12?")), str)
    # each answer says only what the message said: no telling questions from a list
    assert isinstance(split_run(refused_then_where(
        "I'm ana@example.com. Cancel order #W13 because it was a mistake, and tell me where #W12 is.",
        "Order #W13: no. Order #W12: yes.")), str)
    # a read no part answers from (the second order read, then not named): one request
    assert isinstance(split_run(refused_then_where(
        "I'm ana@example.com. Cancel order #W13 because it was a mistake.", "Order #W13 is shipped; I changed nothing.")), str)


# -- on a real shop ------------------------------------------------------------------------


def test_a_question_asked_first_is_learned_apart_and_served_by_composition(tmp_path: Path) -> None:
    forge = shop.open_shop(tmp_path, shop.clause_agent)
    try:
        first, same = shop.shadowed(forge, tmp_path, "I'm ana@example.com. Tell me where order #W12 is, and cancel order #W11 "
                                    "because it was a mistake.", shop.clause_agent)
        assert first.source == "agent" and same
        assert first.learned is not None and len(first.learned.split(", ")) == 2, first.not_learned  # a skill per request
        result, same = shop.shadowed(forge, tmp_path, "I'm ana@example.com. Tell me where order #W14 is, and cancel order #W15 "
                                     "because it was a mistake.", shop.clause_agent)
        assert result.source == "skill" and result.llm_calls == 0 and same, result.handover
        assert [c.tool for c in result.calls] == ["find_customer", "get_order", "find_customer", "get_order", "cancel_order"]
        assert result.output == "Order #W14 is pending and goes to 1 Elm Street. Cancelled order #W15."
    finally:
        forge.close()
        shop.TOOLBOX.clear()


def colon_agent(task: str, transcript: Any = None) -> str:
    """The shop's clause agent, for messages that say who asks before a colon ("ana@example.com: tell me ...")."""
    return shop.clause_agent(re.sub(r"^(\S+@\S+): ", r"I'm \1. ", task), transcript)


def from_agent(task: str, transcript: Any = None) -> str:
    """The shop's clause agent, for messages that say who asks before a colon with a word before it ("From ana@...: ...")."""
    return shop.clause_agent(re.sub(r"^From (\S+@\S+): ", r"I'm \1. ", task), transcript)


@pytest.mark.parametrize(("said", "agent"), [("", colon_agent), ("From ", from_agent)])
def test_who_asks_before_a_colon_is_the_prelude_of_a_composed_message(tmp_path: Path, said: str, agent: Any) -> None:
    # "ana@...: " binds the second clause's skill as a value carried over; "From ana@...: " is no value: each
    # clause's skill says it, and its words after the colon, as the run it was learned from said them
    forge = shop.open_shop(tmp_path, agent)
    try:
        first, same = shop.shadowed(forge, tmp_path, f"{said}ana@example.com: tell me where order #W12 is, and cancel order #W11 "
                                    "because it was a mistake.", agent)
        assert first.source == "agent" and same
        assert first.learned is not None and len(first.learned.split(", ")) == 2, first.not_learned
        result, same = shop.shadowed(forge, tmp_path, f"{said}ana@example.com: tell me where order #W14 is, and cancel order #W15 "
                                     "because it was a mistake.", agent)
        assert result.source == "skill" and result.llm_calls == 0 and same, result.handover
        assert sorted(s for _c, s in result.clauses) == sorted(first.learned.split(", "))
        assert [c.tool for c in result.calls] == ["find_customer", "get_order", "find_customer", "get_order", "cancel_order"]
        assert result.output == "Order #W14 is pending and goes to 1 Elm Street. Cancelled order #W15."
        # another customer's message, served alike: bo's order is not ana's, so the agent's answer differs and the
        # skills' guards hand it over rather than answer for ana
        other, same = shop.shadowed(forge, tmp_path, f"{said}bo@example.com: tell me where order #W14 is, and cancel order #W21 "
                                    "because it was a mistake.", agent)
        assert same and other.source != "skill"
    finally:
        forge.close()
        shop.TOOLBOX.clear()
