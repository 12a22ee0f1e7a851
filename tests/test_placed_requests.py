"""Requests that say no value of their own ("Please unlock ana.li and reset her password."): placed by
the order of the writes and the one place a request may begin after the values of the one before;
writes that return the fields they changed; lists, which are one request; and messages of such
requests served by composing their skills.

The runs alone first (``split_run``), then a Forge on the real SQLite directory of
``tests.toolsets.accounts``, each solve shadowed by its agent alone from the same starting state.
"""

from __future__ import annotations

from typing import Any

import pytest

from skillforge._requests import Split, split_run
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from tests.toolsets import accounts

TOOLS = {
    name: ToolRef(module="tests.toolsets.accounts", qualname=name, read=name in accounts.READS, params=params)
    for name, params in [("get_user", ("username",)), ("get_group", ("group",)), ("unlock_account", ("username",)),
                         ("reset_password", ("username",)), ("enable_mfa", ("username",)), ("add_to_group", ("username", "group"))]
}


def user(username: str = "ana.li", *, locked: bool = True, mfa: bool = False, groups: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"username": username, "locked": locked, "mfa": mfa, "groups": list(groups)}


def run(task: str, calls: list[tuple[str, dict[str, Any], Any]], output: str) -> Trajectory:
    return Trajectory(
        task=task, calls=[Call(tool=t, args=a, result=r) for t, a, r in calls], outcome=Outcome(ok=True, output=output), tools=TOOLS,
    )


def unlock_and_reset(task: str = "Please unlock ana.li and reset her password.", *,
                     unlocked: dict[str, Any] | None = None) -> Trajectory:
    """The agent read the account once, unlocked it, then reset its password (knowing it unlocked)."""
    return run(task, [
        ("get_user", {"username": "ana.li"}, user()),
        ("unlock_account", {"username": "ana.li"}, unlocked or {"username": "ana.li", "locked": False}),
        ("reset_password", {"username": "ana.li"}, {"username": "ana.li", "sent": True}),
    ], "Unlocked ana.li. Reset the password of ana.li.")


# -- the runs alone ----------------------------------------------------------------------


def test_a_request_that_says_no_value_of_its_own_is_placed_after_the_request_before() -> None:
    split = split_run(unlock_and_reset())
    assert isinstance(split, Split), split
    # the reset says no value (its account is the unlock's): it begins at the one place after "ana.li"
    assert split.clauses == ("Please unlock ana.li ", "and reset her password.")
    assert split.carried == ((), ("ana.li",))
    assert [r.task for r in split.runs] == ["Please unlock ana.li", "ana.li: and reset her password."]
    assert [[c.tool for c in r.calls] for r in split.runs] == [["get_user", "unlock_account"], ["get_user", "reset_password"]]
    assert [r.outcome.output for r in split.runs] == ["Unlocked ana.li.", "Reset the password of ana.li."]
    # the reset acted on the account as the unlock left it (the unlock returned the field it changed)
    assert split.fresh == (True, True)
    assert split.runs[1].calls[0].result == user(locked=False)
    assert split.runs[0].calls[0].result == user()


@pytest.mark.parametrize("task", [
    "Please unlock ana.li and reset her password, thanks.",  # two places after "ana.li": which one begins the reset?
    "Please reset her password and unlock ana.li.",  # the writes' order and the text's disagree: no place after "ana.li"
])
def test_a_request_without_a_value_and_without_exactly_one_place_keeps_the_run_whole(task: str) -> None:
    split = split_run(unlock_and_reset(task))
    assert isinstance(split, str), split


def test_a_place_that_says_a_value_begins_no_request_without_a_value_of_its_own() -> None:
    # two writes that say no value of their own and two places after "ana.li": but the second place
    # says who asks (a value the agent read), which the MFA request cannot be
    traj = run("Please unlock ana.li and reset her password. I'm bo.ng.", [
        ("get_user", {"username": "bo.ng"}, user("bo.ng", locked=False)),
        ("get_user", {"username": "ana.li"}, user()),
        ("unlock_account", {"username": "ana.li"}, {"username": "ana.li", "locked": False}),
        ("reset_password", {"username": "ana.li"}, {"username": "ana.li", "sent": True}),
        ("enable_mfa", {"username": "ana.li"}, {"username": "ana.li", "mfa": True}),
    ], "Unlocked ana.li. Reset the password of ana.li. Enabled MFA for ana.li.")
    split = split_run(traj)
    assert isinstance(split, str), split


def test_a_write_that_returns_only_the_fields_it_changed_shows_what_the_next_request_acted_on() -> None:
    # fields that are not the record's say nothing of it: the reset acted on an account its read does not show
    for unlocked in ({"username": "ana.li", "unlocked": True}, {"username": "ana.li", "locked": False, "at": "09:00"}):
        split = split_run(unlock_and_reset(unlocked=unlocked))
        assert isinstance(split, Split) and split.fresh == (True, False), unlocked
    # the fields of another record (not the id the write was given): not what the read showed
    split = split_run(unlock_and_reset(unlocked={"username": "bo.ng", "locked": False}))
    assert isinstance(split, Split) and split.fresh == (True, False)


def test_an_opening_that_says_who_is_the_prelude_of_requests_that_say_no_value_of_their_own() -> None:
    traj = run("ana.li is locked out. Please unlock her and enable MFA too.", [
        ("get_user", {"username": "ana.li"}, user()),
        ("unlock_account", {"username": "ana.li"}, {"username": "ana.li", "locked": False}),
        ("enable_mfa", {"username": "ana.li"}, {"username": "ana.li", "mfa": True}),
    ], "Unlocked ana.li. Enabled MFA for ana.li.")
    split = split_run(traj)
    assert isinstance(split, Split), split
    # two requests, two places after the opening sentence: one each, in the order of the writes
    assert split.prelude == "ana.li is locked out. "
    assert split.clauses == ("Please unlock her ", "and enable MFA too.")
    assert split.carried == ((), ())  # both take the account the opening said
    assert [r.task for r in split.runs] == ["ana.li is locked out. Please unlock her", "ana.li is locked out. and enable MFA too."]
    assert [r.outcome.output for r in split.runs] == ["Unlocked ana.li.", "Enabled MFA for ana.li."]
    assert split.fresh == (True, True) and split.runs[1].calls[0].result == user(locked=False)
    # a place more: which two begin the requests is unclear
    more = traj.model_copy(update={"task": "ana.li is locked out. Please unlock her and enable MFA too, thanks."})
    assert isinstance(split_run(more), str)


def test_a_list_of_values_for_one_request_is_not_cut_into_requests() -> None:
    calls = [
        ("get_user", {"username": "ana.li"}, user()),
        ("get_group", {"group": "vpn-users"}, {"name": "vpn-users", "restricted": False}),
        ("add_to_group", {"username": "ana.li", "group": "vpn-users"}, {"username": "ana.li", "group": "vpn-users", "member": True}),
        ("get_group", {"group": "wiki-editors"}, {"name": "wiki-editors", "restricted": False}),
        ("add_to_group", {"username": "ana.li", "group": "wiki-editors"}, {"username": "ana.li", "group": "wiki-editors", "member": True}),
    ]
    answer = "Added ana.li to vpn-users. Added ana.li to wiki-editors."
    # "and wiki-editors." says only a value: an item of the list, not a request ("remove ana.li from A and
    # B" would bind a skill learned from it, and add)
    assert isinstance(split_run(run("Add ana.li to vpn-users and wiki-editors.", calls, answer)), str)
    assert isinstance(split_run(run("Add ana.li to vpn-users, wiki-editors.", calls, answer)), str)
    # words of its own make it a request (the add acted on an account read before the first add: not learned from)
    split = split_run(run("Add ana.li to vpn-users and also add her to wiki-editors.", calls, answer))
    assert isinstance(split, Split) and split.clauses == ("Add ana.li to vpn-users ", "and also add her to wiki-editors.")
    assert split.fresh == (True, False)


# -- composing, on a real directory of accounts -------------------------------------------


def test_requests_that_say_no_value_of_their_own_are_learned_apart_and_served_by_composition(accounts_world: Any) -> None:
    forge, tmp = accounts_world
    first, same = accounts.shadowed(forge, tmp, "Please unlock ana.li and reset her password.")
    assert first.source == "agent" and same
    assert first.learned is not None and len(first.learned.split(", ")) == 2, first.not_learned  # a skill per request
    result, same = accounts.shadowed(forge, tmp, "Please unlock bo.ng and reset her password.")
    assert result.source == "skill" and result.llm_calls == 0 and same, result.handover
    assert [c for c, _s in result.clauses] == ["Please unlock bo.ng ", "and reset her password."]
    assert result.output == "Unlocked bo.ng. Reset the password of bo.ng."
    assert [c.tool for c in result.calls] == ["get_user", "unlock_account", "get_user", "reset_password"]
    # a list is one request: its run is learned whole, one skill that makes both writes
    listed, same = accounts.shadowed(forge, tmp, "Add ana.li to vpn-users and wiki-editors.")
    assert listed.source == "agent" and same and listed.learned is not None and ", " not in listed.learned


def test_a_handover_in_the_second_request_after_the_first_wrote_repeats_no_write(accounts_world: Any) -> None:
    forge, tmp = accounts_world
    for task in ("Please unlock ana.li and reset her password.", "Please unlock bo.ng and add her to vpn-users."):
        result, same = accounts.shadowed(forge, tmp, task)
        assert result.source == "agent" and same
    # hr-files is restricted: the add's skill stops in clause 2, after the unlock's skill wrote
    result, same = accounts.shadowed(forge, tmp, "Please unlock cy.ito and add her to hr-files.")
    assert result.source == "skill+agent" and same
    assert "clause 2 of 2" in (result.handover or "") and "restricted" in (result.handover or "")
    assert result.output == "Unlocked cy.ito. hr-files is restricted; I did not add cy.ito."
    assert [c.tool for c in result.calls].count("unlock_account") == 1  # the agent took the unlock from the transcript
    assert len(result.clauses) == 2


def test_a_clause_that_opens_with_a_connective_is_served_by_the_skill_of_the_request_said_alone(accounts_world: Any) -> None:
    forge, tmp = accounts_world
    for task in ("Please unlock ana.li and reset her password.",  # shows how the agent joins answers
                 "Please enable MFA for bo.ng."):  # the MFA request, said alone
        result, same = accounts.shadowed(forge, tmp, task)
        assert result.source == "agent" and same and result.learned
    # "Also" is where the second request begins, not part of it: its skill is the one said alone
    result, same = accounts.shadowed(forge, tmp, "Please unlock cy.ito. Also please enable MFA for di.roy.")
    assert result.source == "skill" and result.llm_calls == 0 and same, result.handover
    assert [c for c, _s in result.clauses] == ["Please unlock cy.ito. ", "please enable MFA for di.roy."]
    assert result.output == "Unlocked cy.ito. Enabled MFA for di.roy."
    # a word that is no connective stays part of the clause: "Please" alone is not "Sadly, please ..."
    result, same = accounts.shadowed(forge, tmp, "Please unlock ed.fox. Sadly, please enable MFA for fay.wu.")
    assert result.source == "agent" and same
