"""Phrasings: one skill for one intent, however people put it.

"Send ana a password reset link." and "bo is locked out, please send them a reset link anyway."
share no template, yet their runs made the same calls from the same sources: the second run
becomes a second phrasing of the first skill (``SKILL['phrasings']``), found and bound like its
template. Which phrasing a task was said in is a fact of its own, combined with the others, so
a world seen only with one phrasing never replays for another (probe R26 in
tests/test_probes_round2.py is the Forge-level case).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from skillforge._codegen import render_skill, skill_meta
from skillforge._compile import prove_all
from skillforge._exceptions import SkillFileError
from skillforge._index import HotIndex
from skillforge._learning import renamed_template, same_program, spec_from_runs
from skillforge._library import skill_from
from skillforge._lifting import Rejected, discover_template, lift
from skillforge._template import Slot, TaskTemplate
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from tests.test_probes_round2 import check, forge_for, learn
from tests.toolsets import accounts

TOOLS = {
    "get_user": ToolRef(module="desk", qualname="get_user", read=True, params=("username",)),
    "reset_password": ToolRef(module="desk", qualname="reset_password", params=("username",)),
}
FIRST = "Send {} a password reset link."
SECOND = "{} is locked out, please send them a reset link anyway."


def reset_run(task: str, username: str, locked: bool) -> Trajectory:
    return Trajectory(
        task=task.format(username),
        calls=[
            Call(tool="get_user", args={"username": username}, result={"username": username, "locked": locked}),
            Call(tool="reset_password", args={"username": username}, result={"sent": True}),
        ],
        outcome=Outcome(ok=True, output=f"Sent a password reset link to {username}."),
        tools=TOOLS,
    )


def templates(*runs: Trajectory) -> list[TaskTemplate]:
    out = [discover_template(r) for r in runs]
    assert all(isinstance(t, TaskTemplate) for t in out)
    return out  # type: ignore[return-value]


def test_runs_said_in_two_phrasings_make_one_skill_and_the_phrasing_is_a_fact() -> None:
    a, b = reset_run(FIRST, "ana.ruiz", False), reset_run(SECOND, "bo.chen", True)
    first, second = templates(a, b)
    spec = spec_from_runs([a, b], name="send_reset", template=first, phrasings=(second,))
    assert not isinstance(spec, Rejected)
    assert spec.template == first.text and [t for t, _s in spec.phrasings] == [second.text]
    source = render_skill(spec)
    assert "def send_reset(username: str, phrasing: int = 0):" in source
    assert "   or: {username} is locked out, please send them a reset link anyway." in source
    # the account's lock was seen one way with each phrasing: combined with which one was said
    assert "(user['locked'], phrasing) in ((False, 0), (True, 1))" in source
    assert prove_all(source, spec, [a, b]) is None
    assert prove_all(source, spec, [reset_run(FIRST, "cy.diaz", False), reset_run(SECOND, "dee.fox", True)]) is None
    assert prove_all(source, spec, [reset_run(FIRST, "eve.gray", True)]) is not None  # locked, said the first way


def test_runs_that_acted_otherwise_are_not_phrasings_of_one_skill() -> None:
    a = reset_run(FIRST, "ana.ruiz", False)
    other = Trajectory(  # read, then nothing written
        task="Check whether bo.chen is locked out.",
        calls=[Call(tool="get_user", args={"username": "bo.chen"}, result={"username": "bo.chen", "locked": True})],
        outcome=Outcome(ok=True, output="bo.chen is locked out."),
        tools=TOOLS,
    )
    first, second = templates(a, other)
    assert isinstance(spec_from_runs([a, other], name="send_reset", template=first, phrasings=(second,)), Rejected)


def test_phrasings_that_take_other_parameters_are_not_one_skill() -> None:
    a, b = reset_run(FIRST, "ana.ruiz", False), reset_run(SECOND, "bo.chen", True)
    first, second = templates(a, b)
    renamed = TaskTemplate(second.text.replace("{username}", "{user}"), [Slot("user", s.kind, s.type, s.transform, s.shape) for s in second.slots])
    found = spec_from_runs([a, b], name="send_reset", template=first, phrasings=(renamed,))
    assert isinstance(found, Rejected) and "other parameters" in found.reason


def test_a_phrasing_that_names_its_parameter_otherwise_is_the_same_program() -> None:
    a, b = reset_run(FIRST, "ana.ruiz", False), reset_run(SECOND, "bo.chen", False)
    first, second = templates(a, b)
    as_user = renamed_template(second, {"username": "user"})
    assert as_user.text == "{user} is locked out, please send them a reset link anyway."
    mine, theirs = lift(b, template=as_user), lift(a, template=first)
    assert not isinstance(mine, Rejected) and not isinstance(theirs, Rejected)
    names = same_program(mine, theirs)
    assert names == {"user": "username"}
    spec = spec_from_runs([a, b], name="send_reset", template=first, phrasings=(renamed_template(as_user, names),))
    assert not isinstance(spec, Rejected) and spec.phrasings[0][0] == second.text
    other = lift(Trajectory(task="Check bo.chen.", calls=b.calls[:1], outcome=b.outcome, tools=TOOLS), template=None)
    assert not isinstance(other, Rejected) and same_program(other, theirs) is None  # fewer calls: another program


def test_a_skill_file_with_phrasings_reads_back_binds_both_and_is_found_by_either(tmp_path: Path) -> None:
    a, b = reset_run(FIRST, "ana.ruiz", False), reset_run(SECOND, "bo.chen", True)
    first, second = templates(a, b)
    spec = spec_from_runs([a, b], name="send_reset", template=first, phrasings=(second,))
    assert not isinstance(spec, Rejected)
    skill = skill_from(tmp_path / "send_reset.py", render_skill(spec), skill_meta(spec))
    assert [t.text for t in skill.phrasings] == [first.text, second.text]
    assert skill.bind("Send cy.diaz a password reset link.") == (skill.phrasings[0], {"username": "cy.diaz", "phrasing": 0})
    bound = skill.bind("dee.fox is locked out, please send them a reset link anyway.")
    assert bound is not None and bound[1] == {"username": "dee.fox", "phrasing": 1}
    index = HotIndex()
    index.add(skill)
    for task in ("Send cy.diaz a password reset link.", "dee.fox is locked out, please send them a reset link anyway."):
        found = index.find(task) + index.find_free(task)
        assert [m.skill.name for m in found][:1] == ["send_reset"], task
    index.remove("send_reset")
    assert not index.find_free("Send cy.diaz a password reset link.") and not index.by_template and not index.by_word
    # a phrasing must take what the template takes
    meta: dict[str, Any] = skill_meta(spec)
    meta["phrasings"][0]["slots"][0]["name"] = "user"
    meta["phrasings"][0]["template"] = "{user} is locked out, please send them a reset link anyway."
    with pytest.raises(SkillFileError, match="every phrasing must take the parameters"):
        skill_from(tmp_path / "send_reset.py", render_skill(spec), meta)


def test_a_forge_learns_a_second_phrasing_into_the_first_skill_and_not_a_different_intent(tmp_path: Path) -> None:
    def users(name: str, locked: bool) -> dict[str, Any]:
        return {"users": {name: {"username": name, "locked": locked}}}

    forge = forge_for(tmp_path)
    learn(forge, "Send ana.ruiz a password reset link.", users("ana.ruiz", False))
    learn(forge, "bo.chen is locked out, please send them a reset link anyway.", users("bo.chen", False))
    assert len(forge.library.paths()) == 1
    r = check(forge, "bo.chen is locked out, please send them a reset link anyway.", users("bo.chen", False)).result
    assert r.source == "skill"
    # another program (a search before the reset): a skill of its own
    learn(forge, "Reset the password for cy.diaz.", {"users": {"cy.diaz": {"username": "cy.diaz", "locked": False}}})
    assert len(forge.library.paths()) == 2


def named_run(name: str, username: str) -> Trajectory:
    first, last = name.split()
    return Trajectory(
        task=f"I am {name}. Send {username} a password reset link.",
        calls=[
            Call(tool="get_user", args={"username": username},
                 result={"username": username, "first_name": first, "last_name": last, "locked": False}),
            Call(tool="reset_password", args={"username": username}, result={"sent": True}),
        ],
        outcome=Outcome(ok=True, output=f"Sent a password reset link to {username}."),
        tools=TOOLS,
    )


def test_phrasings_that_differ_only_in_a_name_collapse_into_one_template(tmp_path: Path) -> None:
    # a skill whose phrasings are one text but for the customer's name (each learned before a run
    # showed the name varying): widened for a third name, it takes one template, not three phrasings
    from skillforge._learner import _collapsed
    from skillforge._antiunify import generalize
    from skillforge._learning import named

    a, b, c = named_run("Raj Davis", "ana.ruiz"), named_run("Mia Li", "bo.chen"), named_run("Ola Berg", "cy.wu")
    first, second, third = templates(a, b, c)
    assert "Raj Davis" in first.text and "Mia Li" in second.text  # literal: one run each
    spec = spec_from_runs([a, b], name="send_reset", template=first, phrasings=(second,))
    assert not isinstance(spec, Rejected)
    skill = skill_from(tmp_path / "send_reset.py", render_skill(spec), skill_meta(spec))
    wider = generalize(first, third)
    assert wider is not None
    wider = named(wider, [c])
    collapsed = _collapsed(skill, wider, [a, b, c])
    assert collapsed is not None
    template, phrasings = collapsed
    assert phrasings == () and template.text == "I am {first_name} {last_name}. Send {username} a password reset link."
    merged = spec_from_runs([a, b, c], name="send_reset", template=template)
    assert not isinstance(merged, Rejected)
    assert "require(user['first_name'] == first_name" in render_skill(merged)  # the name said is the account's
    # a phrasing said otherwise does not collapse: the skill keeps its phrasings
    other = reset_run(SECOND, "dee.li", False)
    two = spec_from_runs([a, other], name="send_reset", template=first, phrasings=templates(other))
    assert not isinstance(two, Rejected)
    assert _collapsed(skill_from(tmp_path / "two.py", render_skill(two), skill_meta(two)), wider, [a, other, c]) is None


# -- phrasings that say the request in other words take the worlds other such words were seen in ----------

SAID = {
    "send": "Send {} a password reset link.",
    "please": "Please reset the password for {}.",
    "thanks": "Reset the password of {}, thanks!",
    "sales": "Reset the password of {} since they work in sales.",  # names a value the facts took
    "not": "Do not wait for a ticket, reset the password of {} now.",  # a negation
}


def dept_run(said: str, username: str, dept: str, mfa: bool) -> Trajectory:
    return Trajectory(
        task=SAID[said].format(username),
        calls=[
            Call(tool="get_user", args={"username": username}, result={"username": username, "dept": dept, "mfa": mfa}),
            Call(tool="reset_password", args={"username": username}, result={"sent": True}),
        ],
        outcome=Outcome(ok=True, output=f"Sent a password reset link to {username}."),
        tools=TOOLS,
    )


def worded_skill(runs: list[Trajectory]) -> tuple[Any, str]:
    first, *rest = templates(*runs)
    others: list[TaskTemplate] = []
    for t in rest:
        if t.text != first.text and all(t.text != o.text for o in others):
            others.append(t)
    spec = spec_from_runs(runs, name="send_reset", template=first, phrasings=tuple(others))
    assert not isinstance(spec, Rejected), spec
    return spec, render_skill(spec)


LEARNED = [
    dept_run("send", "ana.ruiz", "sales", True),
    dept_run("please", "bo.chen", "eng", False),
    dept_run("please", "cy.diaz", "sales", True),
    dept_run("thanks", "dee.fox", "eng", False),
    dept_run("send", "eve.gray", "hr", True),  # hr: seen said one way only
    dept_run("sales", "fay.lim", "sales", False),
    dept_run("not", "gus.ng", "eng", False),
]


def test_a_phrasing_that_sets_no_condition_takes_worlds_two_other_phrasings_were_seen_in() -> None:
    spec, source = worded_skill(LEARNED)
    assert prove_all(source, spec, LEARNED) is None
    assert "(words that name none of these facts and set no condition)" in source
    # "thanks" was seen only with (eng, False); sales with MFA on was seen said two other plain ways
    assert prove_all(source, spec, [dept_run("thanks", "hal.ito", "sales", True)]) is None
    assert prove_all(source, spec, [dept_run("send", "ivy.ma", "eng", False)]) is None


def test_worlds_no_run_showed_and_values_one_phrasing_showed_are_still_misses() -> None:
    spec, source = worded_skill(LEARNED)
    # issue #9's rule holds for the world: (eng, True) no run showed, whatever the words
    assert prove_all(source, spec, [dept_run("please", "jo.kim", "eng", True)]) is not None
    # hr was seen only said one way: what those words allowed is not taken for others
    assert prove_all(source, spec, [dept_run("please", "kai.oh", "hr", True)]) is not None
    assert prove_all(source, spec, [dept_run("send", "lea.wu", "hr", True)]) is None  # as seen


def test_words_that_name_a_fact_or_negate_keep_only_their_own_worlds() -> None:
    spec, source = worded_skill(LEARNED)
    # "since they work in sales" names a value the department took: only (sales, False), as its run
    assert prove_all(source, spec, [dept_run("sales", "max.yu", "eng", False)]) is not None
    assert prove_all(source, spec, [dept_run("sales", "max.yu", "sales", True)]) is not None
    assert prove_all(source, spec, [dept_run("sales", "ned.po", "sales", False)]) is None
    # a negation: only its own world
    assert prove_all(source, spec, [dept_run("not", "oli.qi", "sales", True)]) is not None
    assert prove_all(source, spec, [dept_run("not", "pia.re", "eng", False)]) is None


def _mfa(username: str, on: bool) -> None:
    with sqlite3.connect(accounts.DB["path"]) as db:
        db.execute("UPDATE users SET mfa = ? WHERE username = ?", (int(on), username))


def test_a_new_plain_phrasing_is_served_in_a_world_other_phrasings_showed_and_a_negation_is_not(accounts_world: Any) -> None:
    forge, tmp = accounts_world
    for task, who, mfa in [
        ("Please unlock {}.", "ana.li", False),
        ("Unlock {}, thanks!", "bo.ng", False),
        ("Please unlock {}.", "fay.wu", True),
        ("Unlock {}, thanks!", "cy.ito", True),
        ("Can you unlock {} for me?", "di.roy", False),  # a third plain phrasing, seen once
        ("Unlock {} and do not reset anything.", "ed.fox", False),  # a negation, seen once
    ]:
        _mfa(who, mfa)
        result, same = accounts.shadowed(forge, tmp, task.format(who))
        assert same and result.source in ("agent", "skill+agent"), (task, result.source)
    assert len(list((tmp / "skills").glob("*.py"))) == 2  # __init__ and one skill of four phrasings
    for who in ("ana.li", "bo.ng", "cy.ito", "di.roy", "ed.fox", "fay.wu"):
        with sqlite3.connect(accounts.DB["path"]) as db:
            db.execute("UPDATE users SET locked = 1 WHERE username = ?", (who,))
    # MFA on was seen said two plain ways: the third plain phrasing takes it
    _mfa("di.roy", True)
    result, same = accounts.shadowed(forge, tmp, "Can you unlock di.roy for me?")
    assert same and result.source == "skill" and result.llm_calls == 0, result.handover
    # the negation keeps the one world it was seen in
    _mfa("ed.fox", True)
    result, same = accounts.shadowed(forge, tmp, "Unlock ed.fox and do not reset anything.")
    assert same and result.source == "skill+agent" and "phrasing" in (result.handover or ""), result.handover


@pytest.mark.parametrize(("words", "sets_condition"), [
    ("Pay for order {} with my gift card.", True),  # a value inside a fact's tuple of sources
    ("Use one of my payment methods for order {}.", True),  # a field on the fact's path ("payment_methods")
    ("Please sort out the payment for order {}.", False),  # one word of it only
    ("Pay for order {}, thanks!", False),
    ("Pay for order {} unless it shipped.", True),  # a word of condition
    ("Pay for order {}; no rush.", True),  # a negation
])
def test_words_that_name_a_fact_or_set_a_condition_are_strict(words: str, sets_condition: bool) -> None:
    from skillforge._spec import Guard
    from skillforge._wording import strict

    sources = Guard("values", ("payment_methods", "*", "source"), None)
    assert strict(words, [(sources, [("credit_card", "gift_card"), ("paypal",)])]) is sets_condition


# -- the field a skill's answer lists is what its phrasings ask for: naming it sets no condition -------------

ASKED = {
    "which": "Which groups is {} in?",
    "what": "What groups does {} belong to?",
    "hi": "Hi! Quick one: what groups is {} a member of? Thanks",
    "sales": "Which groups is {} in, being in sales?",  # names a value the department took
}


def listing_run(said: str, username: str, dept: str, groups: list[str]) -> Trajectory:
    user = {"username": username, "dept": dept, "groups": groups}
    return Trajectory(
        task=ASKED[said].format(username), calls=[Call(tool="get_user", args={"username": username}, result=user)],
        outcome=Outcome(ok=True, output=f"{username} is in: {', '.join(groups)}."), tools=TOOLS,
    )


LISTED = [
    listing_run("which", "ana.ruiz", "sales", ["crm", "staff"]),
    listing_run("what", "bo.chen", "eng", ["jira"]),
    listing_run("which", "cy.diaz", "eng", ["jira"]),
    listing_run("what", "dee.fox", "sales", ["crm", "staff", "wiki"]),
    listing_run("hi", "eve.gray", "eng", ["git", "jira", "vpn"]),
    listing_run("sales", "fay.lim", "sales", ["crm", "vpn"]),
]


def test_a_phrasing_that_names_the_listed_field_takes_worlds_other_phrasings_showed() -> None:
    first, *rest = templates(*LISTED)
    others = [t for k, t in enumerate(rest) if t.text != first.text and all(t.text != o.text for o in rest[:k])]
    spec = spec_from_runs(LISTED, name="groups_of", template=first, phrasings=tuple(others))
    assert not isinstance(spec, Rejected), spec
    source = render_skill(spec)
    assert prove_all(source, spec, LISTED) is None
    assert "(words that name none of these facts and set no condition)" in source
    # "Hi! Quick one" was seen only with (eng, several): (sales, several) was seen said two other plain ways
    assert prove_all(source, spec, [listing_run("hi", "gus.ng", "sales", ["crm", "staff"])]) is None
    # one element in sales no run showed, whatever the words; a value's name keeps its own world only
    assert prove_all(source, spec, [listing_run("which", "hal.ito", "sales", ["crm"])]) is not None
    assert prove_all(source, spec, [listing_run("sales", "ivy.ma", "eng", ["jira", "vpn"])]) is not None


def test_the_listed_field_is_asked_for_and_its_values_still_name_a_fact() -> None:
    from skillforge._spec import Guard
    from skillforge._wording import strict

    count = Guard("count", ("groups",), None)
    seen = [1, "many"]
    assert strict("What groups does {} belong to?", [(count, seen)])
    assert not strict("What groups does {} belong to?", [(count, seen)], asked=frozenset({"groups"}))
    assert strict("What groups does {} belong to, if any?", [(count, seen)], asked=frozenset({"groups"}))
    dept = Guard("eq", ("dept",), None)
    assert strict("Which groups is {} in, being in sales?", [(dept, ["sales", "eng"])], asked=frozenset({"groups"}))
