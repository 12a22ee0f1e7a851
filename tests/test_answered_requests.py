"""A request that wrote nothing ("Please unlock ana.li and reset her password." where ana.li is not
locked: the agent read the account, answered "ana.li isn't locked." and reset the password): a request
of the split of its own, its run the prelude's read and its answer, when the answer cuts into one
answer per clause the way the agent joins answers.

The runs alone first (``split_run``), then a Forge on the real SQLite directory of
``tests.toolsets.accounts``, each solve shadowed by its agent alone from the same starting state.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from skillforge._requests import Joiner, Split, split_run
from tests.toolsets import accounts
from tests.test_placed_requests import run, user

SENTENCES = Joiner(". ", ".")  # how the accounts agent joins answers: one sentence each


def not_locked_then_reset(task: str = "Please unlock ana.li and reset her password.", *,
                          output: str = "ana.li isn't locked. Reset the password of ana.li.") -> Any:
    """The agent read the account, found it not locked (an answer, no write), then reset its password."""
    return run(task, [
        ("get_user", {"username": "ana.li"}, user(locked=False)),
        ("reset_password", {"username": "ana.li"}, {"username": "ana.li", "sent": True}),
    ], output)


# -- the runs alone ----------------------------------------------------------------------


def test_a_request_that_only_answered_is_a_request_of_its_own() -> None:
    split = split_run(not_locked_then_reset(), joiners=[SENTENCES])
    assert isinstance(split, Split), split
    assert split.clauses == ("Please unlock ana.li ", "and reset her password.")
    assert split.joiner == SENTENCES and split.fresh == (True, True)
    # the first is the run of "Please unlock ana.li" on an account that is not locked: a read and an answer
    first, second = split.runs
    assert first.task == "Please unlock ana.li"
    assert [(c.tool, c.args) for c in first.calls] == [("get_user", {"username": "ana.li"})]
    assert first.outcome.output == "ana.li isn't locked."
    assert set(first.tools) == {"get_user"}
    # the second is the reset, which carries the account over from the first clause
    assert second.task == "ana.li: and reset her password."
    assert [c.tool for c in second.calls] == ["get_user", "reset_password"]
    assert second.outcome.output == "Reset the password of ana.li."
    assert split.carried == ((), ("ana.li",))


def test_a_request_that_only_answered_after_the_write_is_a_request_of_its_own() -> None:
    traj = run("Please reset ana.li's password and unlock her.", [
        ("get_user", {"username": "ana.li"}, user(locked=False)),
        ("reset_password", {"username": "ana.li"}, {"username": "ana.li", "sent": True}),
    ], "Reset the password of ana.li. ana.li isn't locked.")
    split = split_run(traj, joiners=[SENTENCES])
    assert isinstance(split, Split), split
    assert split.clauses == ("Please reset ana.li's password ", "and unlock her.")
    assert [[c.tool for c in r.calls] for r in split.runs] == [["get_user", "reset_password"], ["get_user"]]
    assert [r.outcome.output for r in split.runs] == ["Reset the password of ana.li.", "ana.li isn't locked."]
    # it answered from a read made before the reset wrote to the same account (a write that returns no
    # field of it): it acted on a world its read does not show, and is not learned from
    assert split.fresh == (True, False)


def test_an_answer_only_request_about_what_the_opening_said_takes_its_place_after_the_opening() -> None:
    traj = run("ana.li is locked out. Please unlock her and enable MFA too.", [
        ("get_user", {"username": "ana.li"}, user(locked=False)),
        ("enable_mfa", {"username": "ana.li"}, {"username": "ana.li", "mfa": True}),
    ], "ana.li isn't locked. Enabled MFA for ana.li.")
    split = split_run(traj, joiners=[SENTENCES])
    assert isinstance(split, Split), split
    # the same clauses and runs as when both requests wrote (tests/test_placed_requests.py)
    assert split.prelude == "ana.li is locked out. " and split.clauses == ("Please unlock her ", "and enable MFA too.")
    assert [r.task for r in split.runs] == ["ana.li is locked out. Please unlock her", "ana.li is locked out. and enable MFA too."]
    assert [[c.tool for c in r.calls] for r in split.runs] == [["get_user"], ["get_user", "enable_mfa"]]
    assert [r.outcome.output for r in split.runs] == ["ana.li isn't locked.", "Enabled MFA for ana.li."]


def test_an_answer_only_request_is_not_guessed_from_a_search_cut_short(monkeypatch: pytest.MonkeyPatch) -> None:
    # two places the answer may have been given (before the reset, or last): with room for one only, the
    # other reading is not ruled out, so there is no split
    monkeypatch.setattr("skillforge._requests._MAX_ANSWERS", 1)
    assert split_run(not_locked_then_reset(), joiners=[SENTENCES]) == "fewer than two writes"


def test_an_answer_only_request_needs_the_agents_known_way_of_joining_answers() -> None:
    # no run has shown how the agent joins answers: the answer's two sentences may be one request's answer
    assert split_run(not_locked_then_reset()) == "fewer than two writes"
    # known, but another way
    assert isinstance(split_run(not_locked_then_reset(), joiners=[Joiner("; ", ".")]), str)


@pytest.mark.parametrize(("task", "output"), [
    # the answer names the account once: it does not fall into one answer per clause
    ("Please unlock ana.li and reset her password.", "Reset the password of ana.li, who isn't locked."),
    # one sentence, no place for a second request
    ("Please reset ana.li's password.", "Reset the password of ana.li. ana.li will get a mail."),
    # a courtesy after the request: its answer cuts only a way the agent does not join answers
    ("Please reset ana.li's password, thanks.", "Reset the password of ana.li; ana.li will get a mail."),
    # ... or the agent's way, but the clause the answer would be for says the tool the write was made with
    ("Please reset ana.li's password, thanks.", "Reset the password of ana.li. ana.li will get a mail."),
    # a greeting says no value: it is no clause of a request
    ("Hi! Please reset ana.li's password.", "Hello ana.li. Reset the password of ana.li."),
])
def test_a_message_whose_answer_does_not_cut_per_clause_stays_whole(task: str, output: str) -> None:
    assert isinstance(split_run(not_locked_then_reset(task, output=output), joiners=[SENTENCES]), str)


def test_a_changed_mind_is_not_an_answer_only_request() -> None:
    # "never mind": the agent wrote nothing and answered a question; no request of the message is answer-only
    traj = run("Please add ana.li to vpn-users. Actually, never mind — don't do anything, just tell me which groups she is in.", [
        ("get_user", {"username": "ana.li"}, user(groups=("wiki-editors",))),
    ], "OK, I haven't changed anything. ana.li is in: wiki-editors.")
    assert isinstance(split_run(traj, joiners=[SENTENCES]), str)
    # a change of mind that still writes: the answer's first sentence names no value, so it answers no clause
    traj = run("Please unlock ana.li. Actually, never mind — just reset her password.", [
        ("get_user", {"username": "ana.li"}, user()),
        ("reset_password", {"username": "ana.li"}, {"username": "ana.li", "sent": True}),
    ], "OK, I haven't unlocked anything. Reset the password of ana.li.")
    assert isinstance(split_run(traj, joiners=[SENTENCES]), str)
    # ... and where the answer names the account for the first sentence: the second sentence is not joined
    # on as a request of its own, so the first is not an answer-only request (its skill would add nothing)
    for task in ("Please add ana.li to vpn-users. Actually, never mind — just reset her password.",
                 "Please add ana.li to vpn-users. Actually, never mind — just reset ana.li's password."):
        traj = run(task, [
            ("get_user", {"username": "ana.li"}, user()),
            ("reset_password", {"username": "ana.li"}, {"username": "ana.li", "sent": True}),
        ], "OK, I haven't added ana.li to anything. Reset the password of ana.li.")
        assert isinstance(split_run(traj, joiners=[SENTENCES]), str), task


def test_a_question_answered_from_a_read_of_its_own_is_no_answer_only_request() -> None:
    # the first sentence's answer comes from a read the reset does not make: not drawn from a shared read
    traj = run("What groups is bo.ng in? And please reset ana.li's password.", [
        ("get_user", {"username": "bo.ng"}, user("bo.ng", groups=("vpn-users",))),
        ("get_user", {"username": "ana.li"}, user()),
        ("reset_password", {"username": "ana.li"}, {"username": "ana.li", "sent": True}),
    ], "bo.ng is in: vpn-users. Reset the password of ana.li.")
    # nor a question asked before the write (tests/test_asked_requests.py): no read of who asks came before it
    assert isinstance(split_run(traj, joiners=[SENTENCES]), str)


# -- learning and composing, on a real directory of accounts --------------------------------


def _unlocked(username: str) -> None:
    with sqlite3.connect(accounts.DB["path"]) as db:
        db.execute("UPDATE users SET locked = 0 WHERE username = ?", (username,))


def test_an_answer_only_request_is_learned_as_its_own_skill_and_served_by_composition(accounts_world: Any) -> None:
    forge, tmp = accounts_world
    first, same = accounts.shadowed(forge, tmp, "Please unlock ana.li and reset her password.")  # how the agent joins
    assert first.source == "agent" and same and first.learned is not None and len(first.learned.split(", ")) == 2
    before = sorted(p.name for p in (tmp / "skills").glob("*.py"))
    _unlocked("bo.ng")
    # the unlock's skill stops (bo.ng is not locked) and hands the message over to the agent
    result, same = accounts.shadowed(forge, tmp, "Please unlock bo.ng and reset her password.")
    assert result.source == "skill+agent" and same and "clause 1 of 2" in (result.handover or "")
    assert result.output == "bo.ng isn't locked. Reset the password of bo.ng."
    # its run is two requests: the answer joins the unlock's skill, the reset's skill already does the rest
    assert result.learned == "unlock", (result.learned, result.not_learned)
    assert "reset_her_password already reproduces" in (result.not_learned or "")
    assert sorted(p.name for p in (tmp / "skills").glob("*.py")) == before  # no skill of the whole message
    # both kinds of account are now served without the agent
    _unlocked("cy.ito")
    for who, answer in (("cy.ito", "cy.ito isn't locked. Reset the password of cy.ito."),
                        ("di.roy", "Unlocked di.roy. Reset the password of di.roy.")):
        result, same = accounts.shadowed(forge, tmp, f"Please unlock {who} and reset her password.")
        assert result.source == "skill" and result.llm_calls == 0 and same, result.handover
        assert result.output == answer
    # the answer-only skill serves its request alone, and the unlock still writes where it must
    result, same = accounts.shadowed(forge, tmp, "Please unlock ed.fox")
    assert same and result.output == "Unlocked ed.fox."
