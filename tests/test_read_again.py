"""A later request of a message that acted after an earlier request's write to what it read.

"Add ana.li to vpn-users and unlock her.": the agent read the account once, added it to the group, then
unlocked it. The unlock acted on the account after the add changed it, and the add returned
``{"username", "group", "member"}``, not the account: what the unlock saw is not in the run. Whether the
agent inferred the new account or acted on the one it read, the run cannot say. So the Forge makes the
earlier reads of what a write took again right after the write, unrecorded (``Call.after``), and the
split learns the later request from the account as it was then, but only where its run lifts to the
same program, guards and answer with the account as read before: then what the agent knew cannot
have mattered to any fact the run shows.

The runs alone first (``split_run``), then a Forge on the real SQLite directory of
``tests.toolsets.accounts``, each solve shadowed by its agent alone from the same starting state.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from skillforge._requests import Joiner, Split, split_run
from skillforge._trajectory import Call, Outcome, Trajectory
from tests.test_placed_requests import TOOLS, user
from tests.toolsets import accounts

SENTENCES = Joiner(". ", ".")


def add_then_unlock(before: dict[str, Any], after: dict[str, Any] | None) -> Trajectory:
    """The agent's run of "Add ana.li to vpn-users and unlock her."; ``after``: the account read again
    right after the add (None: not read again, as a run recorded before this existed)."""
    added = Call(tool="add_to_group", args={"username": "ana.li", "group": "vpn-users"},
                 result={"username": "ana.li", "group": "vpn-users", "member": True},
                 after=[(0, after)] if after is not None else None)
    return Trajectory(
        task="Add ana.li to vpn-users and unlock her.",
        calls=[Call(tool="get_user", args={"username": "ana.li"}, result=before),
               Call(tool="get_group", args={"group": "vpn-users"}, result={"name": "vpn-users", "restricted": False}),
               added,
               Call(tool="unlock_account", args={"username": "ana.li"}, result={"username": "ana.li", "locked": False})],
        outcome=Outcome(ok=True, output="Added ana.li to vpn-users. Unlocked ana.li."),
        tools=TOOLS,
    )


def test_without_the_read_made_again_the_later_request_is_not_learned() -> None:
    split = split_run(add_then_unlock(user(groups=("wiki-editors",)), None), joiners=[SENTENCES])
    assert isinstance(split, Split), split
    assert split.fresh == (True, False)


def test_the_later_request_is_learned_from_the_account_as_read_again_after_the_write() -> None:
    before = user(groups=("wiki-editors",))
    after = user(groups=("vpn-users", "wiki-editors"))
    split = split_run(add_then_unlock(before, after), joiners=[SENTENCES])
    assert isinstance(split, Split), split
    assert split.fresh == (True, True)
    first, second = split.runs
    assert first.calls[0].result == before  # the add acted on the account as read
    assert second.task == "ana.li: and unlock her."
    assert [(c.tool, c.result) for c in second.calls] == [("get_user", after), ("unlock_account", {"username": "ana.li", "locked": False})]
    assert all(c.after is None for run in split.runs for c in run.calls)  # indices of the whole run mean nothing in a part


def test_where_the_write_changed_a_fact_the_later_run_shows_it_is_not_learned() -> None:
    """The account had no group: read before the add, "its groups are empty"; read after, not. Which the
    agent went by, the run cannot tell, and the two make other guards: not learned from."""
    split = split_run(add_then_unlock(user(groups=()), user(groups=("vpn-users",))), joiners=[SENTENCES])
    assert isinstance(split, Split), split
    assert split.fresh == (True, False)


# -- through the Forge, on SQLite ---------------------------------------------------------


def test_a_forge_reads_again_after_a_write_and_learns_both_requests(accounts_world: Any) -> None:
    forge, tmp = accounts_world
    with sqlite3.connect(accounts.DB["path"]) as db:
        db.execute("INSERT INTO members VALUES ('ana.li', 'wiki-editors'), ('bo.ng', 'wiki-editors')")
    result, same = accounts.shadowed(forge, tmp, "Add ana.li to vpn-users and unlock her.")
    assert same and result.source == "agent"
    assert result.learned is not None and len(result.learned.split(", ")) == 2, (result.learned, result.not_learned)
    assert result.not_learned is None
    # the unlock was learned from the account as read again right after the add: in the group, still locked
    unlock = next(s for s in forge.library.scan()[0] if "unlock_account" in s.tools)
    (run,) = [forge.library.load_run(h) for h in unlock.runs]
    assert run.calls[0].result == {"username": "ana.li", "locked": True, "mfa": False, "groups": ["vpn-users", "wiki-editors"]}
    # each request is now a skill of its own, serving the same message for another account by composition
    again, same = accounts.shadowed(forge, tmp, "Add bo.ng to vpn-users and unlock her.")
    assert same and again.source == "skill" and len(again.clauses) == 2, (again.source, again.handover, again.clauses)


def test_a_forge_does_not_learn_the_later_request_where_the_write_changed_what_it_shows(accounts_world: Any) -> None:
    forge, tmp = accounts_world
    result, same = accounts.shadowed(forge, tmp, "Add cy.ito to vpn-users and unlock her.")  # cy.ito is in no group
    assert same and result.source == "agent"
    assert result.not_learned is not None and "read what another request then wrote to" in result.not_learned


def test_a_forge_that_does_not_read_again_does_not_learn_the_later_request(tmp_path: Any) -> None:
    from skillforge import Forge

    accounts.make_world(tmp_path / "world.sqlite3")
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", agent=accounts.agent, read_again=False)
    try:
        for f in accounts.TOOLS:
            accounts.TOOLBOX[f.__name__] = forge.tool(read=f.__name__ in accounts.READS)(f)
        with sqlite3.connect(accounts.DB["path"]) as db:
            db.execute("INSERT INTO members VALUES ('ana.li', 'wiki-editors')")
        result = forge.solve("Add ana.li to vpn-users and unlock her.")
        assert result.source == "agent" and result.learned == "add"
        assert "read what another request then wrote to" in (result.not_learned or "")
    finally:
        forge.close()
        accounts.TOOLBOX.clear()


_DIRECTORY = {"reads": 0}


def get_user(username: str) -> dict:
    """An account (``tests.toolsets.accounts``), from a directory that goes away after its first read."""
    _DIRECTORY["reads"] += 1
    if _DIRECTORY["reads"] > 1:
        raise ConnectionError("the directory is unavailable")
    return accounts.get_user(username)


def test_a_read_that_fails_when_made_again_costs_the_later_request_only(tmp_path: Any) -> None:
    """The read made again after the add raises: the agent's run goes on untouched (the read again is
    the Forge's, unrecorded), its answer is the agent's, and the unlock is not learned, as before."""
    from skillforge import Forge

    accounts.make_world(tmp_path / "world.sqlite3")
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", agent=accounts.agent)
    _DIRECTORY["reads"] = 0
    try:
        for f in accounts.TOOLS:
            accounts.TOOLBOX[f.__name__] = forge.tool(read=f.__name__ in accounts.READS)(get_user if f.__name__ == "get_user" else f)
        with sqlite3.connect(accounts.DB["path"]) as db:
            db.execute("INSERT INTO members VALUES ('ana.li', 'wiki-editors')")
        result = forge.solve("Add ana.li to vpn-users and unlock her.")
        assert result.error is None and result.output == "Added ana.li to vpn-users. Unlocked ana.li."
        assert _DIRECTORY["reads"] == 3  # the agent's read, and one made again after each write (both failed)
        assert [c.tool for c in result.calls] == ["get_user", "get_group", "add_to_group", "unlock_account"]
        assert result.learned == "add" and "read what another request then wrote to" in (result.not_learned or "")
    finally:
        forge.close()
        accounts.TOOLBOX.clear()
