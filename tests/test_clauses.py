"""Requests inside one sentence: runs cut at a conjunction, a value named by a pronoun carried over
from the clause that said it, questions as requests of their own, and who asks said last.

The runs alone first (``split_run``, ``segment``), then a Forge on the real SQLite shop of
``tests.toolsets.shop`` with its ``clause_agent``, each solve shadowed by the agent alone from the
same starting state (see ``tests/test_requests.py`` for requests one sentence each).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillforge import Forge
from skillforge._requests import Joiner, Split, pieces, segment, split_run
from skillforge._trajectory import Outcome
from tests.test_requests import ANA, order, run
from tests.toolsets import shop

# -- the runs alone ----------------------------------------------------------------------


def test_fine_pieces_cut_after_commas_and_before_connectives_but_keep_them_with_what_follows() -> None:
    text = "Reset the password for nora.quinn, and also add her to github-org. Then close INC-4801."
    assert [text[a:b] for a, b in pieces(text, fine=True)] == [
        "Reset the password for nora.quinn, ", "and also add her to github-org. ", "Then close INC-4801.",
    ]
    assert [text[a:b] for a, b in pieces(text)] == ["Reset the password for nora.quinn, and also add her to github-org. ", "Then close INC-4801."]
    assert pieces("Anderson and the band", fine=True) == [(0, 9), (9, 21)]  # words, not letters: "band" stays whole


@pytest.mark.parametrize("joint", [" and ", ", and also ", ", and then "])
def test_a_sentence_of_two_requests_is_cut_where_the_second_requests_values_begin(joint: str) -> None:
    traj = run(
        f"I'm ana@example.com. Cancel order #W11 because it was a mistake{joint}ship order #W12 to 5 Oak Lane.",
        [
            ("find_customer", {"email": "ana@example.com"}, ANA),
            ("get_order", {"order_id": "W11"}, order("W11")),
            ("cancel_order", {"order_id": "W11", "reason": "it was a mistake"}, {"order_id": "W11", "status": "cancelled"}),
            ("get_order", {"order_id": "W12"}, order("W12")),
            ("ship_to", {"order_id": "W12", "address": "5 Oak Lane"}, {"order_id": "W12", "address": "5 Oak Lane"}),
        ],
        "Cancelled order #W11. Order #W12 now ships to 5 Oak Lane.",
    )
    split = split_run(traj)
    assert isinstance(split, Split), split
    cut = len("Cancel order #W11 because it was a mistake") + (0 if joint == " and " else 1)
    assert split.prelude == "I'm ana@example.com. "
    assert split.clauses[0] == traj.task[len(split.prelude):][: cut + 1]
    assert split.clauses[1].lstrip(", ").startswith(joint.strip(", ").split()[0])  # the connective opens the second clause
    assert [[c.tool for c in r.calls] for r in split.runs] == [
        ["find_customer", "get_order", "cancel_order"], ["find_customer", "get_order", "ship_to"],
    ]
    assert split.fresh == (True, True) and split.joiner == Joiner(". ", ".")


def test_a_second_write_that_says_no_value_of_its_own_is_a_request_only_where_one_place_follows() -> None:
    # the cancel takes only the order the shipping said: it begins at the one place after that
    # shipping's values ("and cancel it please."), carrying the order over (see tests/test_placed_requests.py)
    calls = [
        ("find_customer", {"email": "ana@example.com"}, ANA),
        ("ship_to", {"order_id": "W11", "address": "5 Oak Lane"}, {}),
        ("cancel_order", {"order_id": "W11", "reason": "moved"}, {}),
    ]
    answer = "Order #W11 now ships to 5 Oak Lane. Cancelled order #W11."
    split = split_run(run("I'm ana@example.com. Move order #W11 to 5 Oak Lane and cancel it please.", calls, answer))
    assert isinstance(split, Split), split
    assert split.clauses == ("Move order #W11 to 5 Oak Lane ", "and cancel it please.") and split.carried == ((), ("W11",))
    # no place after the values both writes take: one request that makes two writes
    assert split_run(run("I'm ana@example.com. Ship and cancel order #W11 to 5 Oak Lane.", calls, answer)) == (
        "every write uses values of one clause"
    )


def pronoun_run(*, read_again: bool = True) -> Any:
    calls = [
        ("find_customer", {"email": "ana@example.com"}, ANA),
        ("get_order", {"order_id": "W11"}, order("W11")),
        ("ship_to", {"order_id": "W11", "address": "5 Oak Lane"}, {"order_id": "W11", "address": "5 Oak Lane"}),
        ("get_order", {"order_id": "W11"}, order("W11", address="5 Oak Lane")),
        ("cancel_order", {"order_id": "W11", "reason": "it was a mistake"}, {"order_id": "W11", "status": "cancelled"}),
    ]
    return run(
        "I'm ana@example.com. Ship order #W11 to 5 Oak Lane and cancel it because it was a mistake.",
        calls if read_again else calls[:3] + calls[4:],
        "Order #W11 now ships to 5 Oak Lane. Cancelled order #W11.",
    )


def test_a_value_named_by_a_pronoun_is_carried_over_from_the_clause_that_said_it() -> None:
    split = split_run(pronoun_run())
    assert isinstance(split, Split), split
    assert split.clauses == ("Ship order #W11 to 5 Oak Lane ", "and cancel it because it was a mistake.")
    assert split.carried == ((), ("W11",))
    # the request's run says the carried value where its skill's template will bind it from
    assert split.runs[1].task == "I'm ana@example.com. W11: and cancel it because it was a mistake."
    # its own read of the order: the one made after the first request's write
    assert [(c.tool, c.result.get("address")) for c in split.runs[1].calls] == [
        ("find_customer", None), ("get_order", "5 Oak Lane"), ("cancel_order", None),
    ]
    assert split.fresh == (True, True)
    # an agent that read the order once, before shipping it: the cancel acted on a world its read does not show
    stale = split_run(pronoun_run(read_again=False))
    assert isinstance(stale, Split) and stale.fresh == (True, False)


def test_a_question_after_a_write_is_a_request_of_its_own() -> None:
    traj = run(
        "I'm ana@example.com. Cancel order #W11 because it was a mistake, and tell me where order #W12 is.",
        [
            ("find_customer", {"email": "ana@example.com"}, ANA),
            ("get_order", {"order_id": "W11"}, order("W11")),
            ("cancel_order", {"order_id": "W11", "reason": "it was a mistake"}, {"order_id": "W11", "status": "cancelled"}),
            ("get_order", {"order_id": "W12"}, order("W12")),
        ],
        "Cancelled order #W11. Order #W12 is pending and goes to 1 Elm Street.",
    )
    split = split_run(traj)
    assert isinstance(split, Split), split
    assert split.clauses == ("Cancel order #W11 because it was a mistake, ", "and tell me where order #W12 is.")
    assert [[c.tool for c in r.calls] for r in split.runs] == [["find_customer", "get_order", "cancel_order"], ["find_customer", "get_order"]]
    assert split.runs[1].outcome.output == "Order #W12 is pending and goes to 1 Elm Street."
    # a read before any write is never a question of its own: who asks stays the prelude's
    assert split_run(traj.model_copy(update={"calls": traj.calls[:1] + traj.calls[3:] + traj.calls[1:3]})) != split


def test_a_question_reads_who_asks_even_when_only_the_write_uses_them() -> None:
    # the shipping takes the customer's own address (a value of find_customer's result): the read is
    # that request's; the question's run has it too, so its skill reads who asks before it answers
    ana = {**ANA, "address": "9 Bay Road"}
    traj = run(
        "I'm ana@example.com. Ship order #W11 to my address, and tell me where order #W12 is.",
        [
            ("find_customer", {"email": "ana@example.com"}, ana),
            ("get_order", {"order_id": "W11"}, order("W11")),
            ("ship_to", {"order_id": "W11", "address": "9 Bay Road"}, {"order_id": "W11", "address": "9 Bay Road"}),
            ("get_order", {"order_id": "W12"}, order("W12")),
        ],
        "Order #W11 now ships to 9 Bay Road. Order #W12 is pending and goes to 1 Elm Street.",
    )
    split = split_run(traj)
    assert isinstance(split, Split), split
    assert [[c.tool for c in r.calls] for r in split.runs] == [["find_customer", "get_order", "ship_to"], ["find_customer", "get_order"]]


def test_who_asks_said_last_is_in_every_requests_run() -> None:
    traj = run(
        "Cancel order #W11 because it was a mistake. Ship order #W12 to 5 Oak Lane. I'm ana@example.com.",
        [
            ("find_customer", {"email": "ana@example.com"}, ANA),
            ("get_order", {"order_id": "W11"}, order("W11")),
            ("cancel_order", {"order_id": "W11", "reason": "it was a mistake"}, {"order_id": "W11", "status": "cancelled"}),
            ("get_order", {"order_id": "W12"}, order("W12")),
            ("ship_to", {"order_id": "W12", "address": "5 Oak Lane"}, {"order_id": "W12", "address": "5 Oak Lane"}),
        ],
        "Cancelled order #W11. Order #W12 now ships to 5 Oak Lane.",
    )
    split = split_run(traj)
    assert isinstance(split, Split), split
    assert split.prelude == "" and split.closing == "I'm ana@example.com."
    assert [r.task for r in split.runs] == [
        "Cancel order #W11 because it was a mistake. I'm ana@example.com.", "Ship order #W12 to 5 Oak Lane. I'm ana@example.com.",
    ]
    assert all(r.calls[0].tool == "find_customer" for r in split.runs)


def test_an_answer_is_cut_at_the_last_sentence_end_before_the_next_requests_naming() -> None:
    traj = run(
        "I'm ana@example.com. Cancel order #W11 because it was a mistake. Ship order #W12 to 5 Oak Lane.",
        [
            ("find_customer", {"email": "ana@example.com"}, ANA),
            ("cancel_order", {"order_id": "W11", "reason": "it was a mistake"}, {}),
            ("ship_to", {"order_id": "W12", "address": "5 Oak Lane"}, {}),
        ],
        "Cancelled order #W11. The refund takes a week, sorry. Done: order #W12 now ships to 5 Oak Lane.",
    )
    split = split_run(traj)
    assert isinstance(split, Split), split
    # not at ", " or ": " (each found once between the two namings): between sentences
    assert [r.outcome.output for r in split.runs] == [
        "Cancelled order #W11. The refund takes a week, sorry.", "Done: order #W12 now ships to 5 Oak Lane.",
    ]
    assert split.joiner == Joiner(". ", ".")
    whole = traj.model_copy(update={"outcome": Outcome(ok=True, output="All done.")})
    assert split_run(whole) == "the answer does not fall into one part per request"


def test_segment_cuts_inside_a_sentence_and_carries_a_value_to_a_pronoun_clause() -> None:
    known = {"I'm ana@example.com. Cancel order #W11 because it was a mistake", "I'm ana@example.com. and ship order #W12 to 5 Oak Lane."}
    assert segment("I'm ana@example.com. Cancel order #W11 because it was a mistake and ship order #W12 to 5 Oak Lane.", known.__contains__) == (
        "I'm ana@example.com. ", ["Cancel order #W11 because it was a mistake ", "and ship order #W12 to 5 Oak Lane."], "",
    )
    asked: list[tuple[str, str]] = []

    def carries(before: str, prelude: str, clause: str, closing: str) -> bool:
        asked.append((before, clause))
        return prelude == "I'm ana@example.com. " and clause == "and cancel it because it was a mistake."

    text = "I'm ana@example.com. Ship order #W12 to 5 Oak Lane and cancel it because it was a mistake."
    known = {"I'm ana@example.com. Ship order #W12 to 5 Oak Lane"}
    assert segment(text, known.__contains__) is None  # no skill takes the pronoun clause on its own
    assert segment(text, known.__contains__, carries) == (
        "I'm ana@example.com. ", ["Ship order #W12 to 5 Oak Lane ", "and cancel it because it was a mistake."], "",
    )
    assert ("I'm ana@example.com. Ship order #W12 to 5 Oak Lane ", "and cancel it because it was a mistake.") in asked
    # who asks, said last, goes with every clause
    known = {"Cancel order #W11 because x. I'm ana@example.com.", "Ship order #W12 to 5 Oak Lane. I'm ana@example.com."}
    assert segment("Cancel order #W11 because x. Ship order #W12 to 5 Oak Lane. I'm ana@example.com.", known.__contains__) == (
        "", ["Cancel order #W11 because x. ", "Ship order #W12 to 5 Oak Lane. "], "I'm ana@example.com.",
    )


# -- composing, on a real shop -----------------------------------------------------------


@pytest.fixture
def world(tmp_path: Path) -> Any:
    forge = shop.open_shop(tmp_path, shop.clause_agent)
    yield forge, tmp_path
    forge.close()
    shop.TOOLBOX.clear()


def shadowed(forge: Forge, tmp: Path, task: str) -> tuple[Any, bool]:
    """``task`` through ``forge.solve()`` and, from the same starting state, through the agent alone."""
    return shop.shadowed(forge, tmp, task, shop.clause_agent)


def learn(forge: Forge, tmp: Path, *tasks: str) -> None:
    for task in tasks:
        result, same = shadowed(forge, tmp, task)
        assert same and result.source in ("agent", "skill+agent"), (task, result.source, result.handover)


AND = "I'm ana@example.com. Cancel order #W11 because it was a mistake and ship order #W12 to 5 Oak Lane."
AND_BO = "I'm bo@example.com. Cancel order #W21 because we moved house and ship order #W22 to 7 Pine Road."


def test_requests_joined_by_and_are_served_by_composing_their_skills(world: Any) -> None:
    forge, tmp = world
    learn(forge, tmp, AND, AND_BO)
    result, same = shadowed(forge, tmp, "I'm bo@example.com. Cancel order #W23 because we moved house and ship order #W24 to 2 Mill Way.")
    assert result.source == "skill" and result.llm_calls == 0 and same, result.handover
    assert [c for c, _s in result.clauses] == ["Cancel order #W23 because we moved house ", "and ship order #W24 to 2 Mill Way."]
    assert [c.tool for c in result.calls if c.tool in ("cancel_order", "ship_to")] == ["cancel_order", "ship_to"]


def test_a_pronoun_clause_is_served_with_the_value_of_the_clause_before(world: Any) -> None:
    forge, tmp = world
    learn(forge, tmp, "I'm ana@example.com. Ship order #W11 to 5 Oak Lane and cancel it because it was a mistake.",
          "I'm bo@example.com. Ship order #W21 to 7 Pine Road and cancel it because we moved house.")
    assert len(forge.skills()) == 2  # shipping, and cancelling an order said before
    result, same = shadowed(forge, tmp, "I'm bo@example.com. Ship order #W23 to 2 Mill Way and cancel it because we moved house.")
    assert result.source == "skill" and same, result.handover
    assert [(c.tool, c.args.get("order_id")) for c in result.calls if c.tool in ("cancel_order", "ship_to")] == [
        ("ship_to", "W23"), ("cancel_order", "W23"),
    ]
    assert ("W23", "c2", "cancelled", "2 Mill Way", "we moved house") in shop.snapshot()
    # explain() cuts the message as serving does, the pronoun clause's skill bound with the order carried over
    e = forge.explain("I'm bo@example.com. Ship order #W24 to 4 Sea View and cancel it because we moved house.")
    assert e.outcome == "clauses" and [c for c, _s in e.clauses] == ["Ship order #W24 to 4 Sea View ", "and cancel it because we moved house."]
    assert all(s != "-" for _c, s in e.clauses), e.clauses
    # "it" is the order of the clause before, whatever it is
    result, same = shadowed(forge, tmp, "I'm bo@example.com. Ship order #W24 to 4 Sea View and cancel it because we moved house.")
    assert result.source == "skill" and same, result.handover
    assert [c.args.get("order_id") for c in result.calls if c.tool == "cancel_order"] == ["W24"]


def test_a_question_clause_is_served_after_the_write_before_it(world: Any) -> None:
    forge, tmp = world
    learn(forge, tmp, "I'm ana@example.com. Cancel order #W11 because it was a mistake, and tell me where order #W12 is.",
          "I'm bo@example.com. Cancel order #W21 because we moved house, and tell me where order #W22 is.")
    result, same = shadowed(forge, tmp, "I'm bo@example.com. Cancel order #W23 because we moved house, and tell me where order #W24 is.")
    assert result.source == "skill" and same, result.handover
    assert result.output == "Cancelled order #W23. Order #W24 is pending and goes to 9 Bay Road."


def test_a_handover_in_the_second_request_of_a_sentence_after_the_first_wrote_repeats_no_write(world: Any) -> None:
    forge, tmp = world
    learn(forge, tmp, AND, AND_BO)
    # order W13 has shipped: the shipping skill's guard stops it after the cancel was made
    result, same = shadowed(forge, tmp, "I'm ana@example.com. Cancel order #W16 because it was a mistake and ship order #W13 to 5 Oak Lane.")
    assert result.source == "skill+agent" and same, (result.source, result.handover)
    assert "clause 2 of 2" in (result.handover or "")
    assert result.output == "Cancelled order #W16. Order #W13 is shipped; I changed nothing."
    assert [c.tool for c in result.calls].count("cancel_order") == 1


def test_a_sentence_with_a_clause_no_skill_takes_goes_to_the_agent(world: Any) -> None:
    forge, tmp = world
    learn(forge, tmp, AND, AND_BO)
    for task in (
        "I'm bo@example.com. Cancel order #W23 because we moved house and call me tomorrow.",
        "I'm bo@example.com. Cancel order #W23 because we moved house and tell me where order #W24 is.",  # never asked before
    ):
        result, same = shadowed(forge, tmp, task)
        assert result.source == "agent" and result.clauses == () and same, (task, result.source)

