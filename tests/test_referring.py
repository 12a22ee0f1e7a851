"""Words that stood for a value ("reset **his** password" where the skill was learned from "her"):
learned from a skill's phrasings (``skillforge._referring``), then used to bind a task that says one
such word where a template says another. First the pure part, then a Forge on the real SQLite
directory of ``tests.toolsets.accounts``, each solve shadowed by its agent alone.
"""

from __future__ import annotations

from typing import Any

import pytest

from skillforge._referring import MAX_VARIANTS, referring_words, variants
from tests.toolsets import accounts

# -- learned from phrasings --------------------------------------------------------------------


@pytest.mark.parametrize(("phrasings", "words"), [
    # the word is said where the other phrasing has the slot the first binds before it
    (["{username} is locked out. Please unlock him", "Please unlock {username}"], {"him"}),
    # a carried value ("ana.li: and ...") binds the slot; the other phrasing says it in the sentence
    (["{username}: and also add her to {group}.", "Add {username} to {group}"], {"her"}),
    (["Tell me which groups he is in. {username}", "Tell me which groups {username} is in."], {"he"}),
    # a possessive: "his" where the other phrasing says "{username}'s"
    (["{username}: and reset his password.", "Don't unlock anything, just reset {username}'s password."], {"his"}),
])
def test_a_word_said_where_another_phrasing_has_the_value_is_a_referring_word(phrasings: list[str], words: set[str]) -> None:
    assert referring_words(phrasings) == words
    assert referring_words(list(reversed(phrasings))) == words


@pytest.mark.parametrize("phrasings", [
    # one phrasing: nothing to learn from
    ["{username} is locked out. Please unlock him"],
    # the word stands where the other has a slot the first does not bind: it is that value, not a reference
    ["Please unlock him", "Please unlock {username}"],
    # several words for the slot, not one
    ["{username}: and add the new hire to {group}.", "Add {username} to {group}"],
    # a negation never stands for a value
    ["{username}: and add nobody to {group}.", "Add {username} to {group}"],
    # text only on one side of the word: nothing shows the two say the same thing around it
    ["{username}: her", "{username}: {username}"],
    # phrasings that differ in other words at the place
    ["{username} is locked out. Please unlock him", "Please reset {username}"],
])
def test_no_referring_word_without_a_phrasing_that_says_the_value_there(phrasings: list[str]) -> None:
    assert referring_words(phrasings) == frozenset()


def test_variants_say_one_referring_word_as_another_keeping_its_capital() -> None:
    assert variants("Please unlock him and enable MFA. Him, yes.", {"her", "him"}) == [
        "Please unlock her and enable MFA. Him, yes.", "Please unlock him and enable MFA. Her, yes.",
    ]
    # a word inside a value (an address, a username) is the value's, never a referring word
    assert variants("Add him.li to her-team", {"her", "him"}) == []
    assert variants("Nothing here", {"her", "him"}) == []
    assert len(variants(" ".join(["her"] * 40), {"her", "him"})) == MAX_VARIANTS


# -- binding, composing: a real directory of accounts --------------------------------------------


def learn_referring_words(forge: Any, tmp: Any) -> None:
    """Runs whose skills show "him" and "her" standing for the account (each through the agent)."""
    for task in ("Please unlock ana.li and add him to vpn-users.",  # clauses: "Please unlock {u}", "{u}: and add him to {g}."
                 "Add bo.ng to wiki-editors.",  # the add's skill: "Add {u} to {g}." beside "and add him to {g}."
                 "cy.ito is locked out. Please unlock her and enable MFA too."):  # the unlock's: "{u} is locked out. Please unlock her"
        result, same = accounts.shadowed(forge, tmp, task)
        assert result.source == "agent" and same, result
        assert result.learned, result.not_learned


def test_a_message_that_says_him_is_composed_of_skills_learned_from_her(accounts_world: Any) -> None:
    forge, tmp = accounts_world
    learn_referring_words(forge, tmp)
    result, same = accounts.shadowed(forge, tmp, "di.roy is locked out. Please unlock him and enable MFA too.")
    assert result.source == "skill" and result.llm_calls == 0 and same, result.handover
    assert [c for c, _s in result.clauses] == ["Please unlock him ", "and enable MFA too."]
    assert result.output == "Unlocked di.roy. Enabled MFA for di.roy."
    assert [c.tool for c in result.calls] == ["get_user", "unlock_account", "get_user", "enable_mfa"]
    # a carried value's clause too: "and add her to" by the skill learned from "and add him to"
    result, same = accounts.shadowed(forge, tmp, "Please unlock ed.fox and add her to vpn-users.")
    assert result.source == "skill" and same, result.handover
    assert result.output == "Unlocked ed.fox. Added ed.fox to vpn-users."


def test_explain_says_a_referring_word_found_the_skill(accounts_world: Any) -> None:
    forge, tmp = accounts_world
    learn_referring_words(forge, tmp)
    found = forge.explain("di.roy is locked out. Please unlock him")
    assert found.outcome == "skill", found
    assert found.candidates[0].found_by == "a referring word"
    assert found.candidates[0].params["username"] == "di.roy"


def test_a_word_no_run_showed_standing_for_a_value_binds_nothing(accounts_world: Any) -> None:
    forge, tmp = accounts_world
    learn_referring_words(forge, tmp)
    # "everyone" never stood for an account: the clause is first seen, the agent serves it
    assert forge.explain("di.roy is locked out. Please unlock everyone").outcome == "agent"
    result, same = accounts.shadowed(forge, tmp, "di.roy is locked out. Please unlock everyone and enable MFA too.")
    assert result.source == "agent" and same


def test_without_the_runs_that_show_it_a_pronoun_is_first_seen(accounts_world: Any) -> None:
    forge, tmp = accounts_world
    result, same = accounts.shadowed(forge, tmp, "cy.ito is locked out. Please unlock her and enable MFA too.")
    assert result.source == "agent" and same and result.learned
    # one run: "her" is a word of its template, and nothing shows "him" stands for what it stood for
    result, same = accounts.shadowed(forge, tmp, "di.roy is locked out. Please unlock him and enable MFA too.")
    assert result.source == "agent" and same
