"""A value the task says with text the agent adds around it: one parameter, however it is said.

"Please resolve #1202" and "Resolve case CS-1201": the agent reads the bare number as "CS-1202".
The bare number's slot binds the whole value (transform ``affix:CS-{}``), so both phrasings take
one parameter ``case_id`` and make the same calls: one skill. A run that also uses the bare text on
its own (an answer that quotes "#1202") keeps the bare text as the parameter and the prefix in code,
so no task value ever becomes a literal. And a run that left a free-text value literal (a comment
it did not use, on a case resolved already) is one more text of that value's slot: it becomes a
branch of the skill that takes the comment, not a file of its own.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skillforge._antiunify import generalize, wider_slot
from skillforge._codegen import render_skill, skill_meta
from skillforge._learning import same_program
from skillforge._lifting import lift
from skillforge._skillmeta import check_meta
from skillforge._spec import Fmt, Param, SkillSpec
from skillforge._template import Slot, TaskTemplate, transform
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from tests.shadowing import Harness
from tests.toolsets import cases

TOOLS = {
    "get_case": ToolRef(module="tests.toolsets.cases", qualname="get_case", read=True, params=("case_id",)),
    "resolve_case": ToolRef(module="tests.toolsets.cases", qualname="resolve_case", params=("case_id", "comment")),
}


def resolve_run(task: str, case_id: str, comment: str, answer: str | None = None) -> Trajectory:
    return Trajectory(
        task=task,
        calls=[
            Call(tool="get_case", args={"case_id": case_id}, result={"id": case_id, "state": "open", "comment": ""}),
            Call(tool="resolve_case", args={"case_id": case_id, "comment": comment}, result={"id": case_id, "state": "resolved"}),
        ],
        outcome=Outcome(ok=True, output=answer or f'Resolved {case_id} with the comment "{comment}".'),
        tools=TOOLS,
    )


def lifted(traj: Trajectory) -> SkillSpec:
    spec = lift(traj)
    assert isinstance(spec, SkillSpec), spec
    return spec


def test_a_number_said_bare_binds_the_whole_value_and_is_one_program_with_it_said_whole() -> None:
    bare = lifted(resolve_run("Please resolve #1202 with comment: swapped the cable", "CS-1202", "swapped the cable"))
    whole = lifted(resolve_run("Resolve case CS-1201, comment: cleared the cache", "CS-1201", "cleared the cache"))
    assert bare.template == "Please resolve #{case_id} with comment: {comment}"
    slot = next(s for s in bare.slots if s.name == "case_id")
    assert (slot.kind, slot.transform) == ("digits", "affix:CS-{}")
    assert bare.steps[0].args == (("case_id", Param("case_id")),)  # the whole value, no f"CS-{...}" in code
    assert TaskTemplate(bare.template, list(bare.slots)).bind("Please resolve #77 with comment: new cable") == {
        "case_id": "CS-77", "comment": "new cable",
    }
    assert same_program(bare, whole) == {"case_id": "case_id", "comment": "comment"}
    assert "'1202'" not in render_skill(bare) and "CS-" not in render_skill(bare).split("def ", 1)[1]


def test_punctuation_around_an_id_is_an_affix_too() -> None:
    run = resolve_run("Please resolve W1202 with comment: swapped the cable", "#W1202", "swapped the cable")
    spec = lifted(run)
    assert next(s.transform for s in spec.slots if s.name == "case_id") == "affix:#{}"
    assert spec.steps[1].args[0] == ("case_id", Param("case_id"))


def test_an_answer_that_quotes_the_bare_number_keeps_it_the_parameter() -> None:
    run = resolve_run("Please resolve #1202 with comment: swapped the cable", "CS-1202", "swapped the cable",
                      answer="Resolved #1202.")
    spec = lifted(run)
    slot = next(s for s in spec.slots if s.kind == "digits")
    assert slot.transform is None  # the bare number is the parameter: the answer quotes it
    assert isinstance(spec.steps[0].args[0][1], Fmt)  # and the call adds the prefix: f"CS-{case_id}"
    source = render_skill(spec)
    assert '"CS-{' in source and "1202" not in source.split("def ", 1)[1]  # no task value as a literal


def test_a_word_is_no_affix_and_a_sentence_is_no_affixed_value() -> None:
    # "CS" is not a number the tracker prefixes: only a part with a digit takes letters around it
    run = resolve_run("Please resolve CS with comment: swapped the cable", "CS-1202", "swapped the cable")
    spec = lift(run)
    assert not isinstance(spec, SkillSpec) or all(not (s.transform or "").startswith("affix:") for s in spec.slots)
    # an answer is a sentence, never a value with text around a span of the task
    charge = Trajectory(
        task="Charge 40 to account A-1",
        calls=[Call(tool="resolve_case", args={"case_id": "A-1", "comment": "x"}, result={"ok": True})],
        outcome=Outcome(ok=True, output="Charged 40 to A-1."), tools=TOOLS,
    )
    spec = lift(charge)
    assert not isinstance(spec, SkillSpec) or all(not (s.transform or "").startswith("affix:") for s in spec.slots)


def test_an_affix_transform_is_checked_when_a_skill_file_is_read() -> None:
    assert transform("1202", "affix:CS-{}") == "CS-1202" and transform("W1", "affix:#{}.") == "#W1."
    spec = lifted(resolve_run("Please resolve #1202 with comment: swapped the cable", "CS-1202", "swapped the cable"))
    meta = skill_meta(spec)
    check_meta(meta)
    for bad, why in (("affix:CS-", "'{}'"), ("affix:{}", "adds none"), ("affix:{a}{}", "'{}'")):
        meta["slots"][0]["transform"] = bad
        with pytest.raises(ValueError, match=re.escape(why)):
            check_meta(meta)


def test_text_a_run_left_literal_widens_a_free_text_slot_of_the_family() -> None:
    family = TaskTemplate("Resolve case {case_id}, comment: {comment}",
                          [Slot("case_id", "id", "str", None, "`CS`-9"), Slot("comment", "text", "str", None, "words:2-4")])
    said = TaskTemplate("Resolve case {case_id}, comment: fixed by re-enrolling the device in Intune",
                        [Slot("case_id", "id", "str", None, "`CS`-9")])
    wide = generalize(family, said)
    assert wide is not None and wide.text == family.text
    assert wide.bind("Resolve case CS-9, comment: fixed by re-enrolling the device in Intune") is not None
    assert family.bind("Resolve case CS-9, comment: fixed by re-enrolling the device in Intune") is None
    # text that says "not" where a value went may be why the run wrote nothing: it keeps the runs apart
    negated = TaskTemplate("Resolve case {case_id}, comment: do not close it yet",
                           [Slot("case_id", "id", "str", None, "`CS`-9")])
    assert generalize(family, negated) is None
    # an id's slot is no free text: an id said as literal text keeps the runs apart
    ids = TaskTemplate("Resolve case {case_id}, comment: {other}",
                       [Slot("case_id", "id", "str", None, "`CS`-9"), Slot("other", "id", "str", None, "`CS`-9")])
    assert generalize(ids, TaskTemplate("Resolve case {case_id}, comment: CS-4", [Slot("case_id", "id", "str", None, "`CS`-9")])) is None


# -- Forge level -------------------------------------------------------------------------------------

_HARNESS = Harness(cases)


def _learned(forge, task: str, world: dict) -> None:
    sh = _HARNESS.check(forge, task, world)
    assert sh.result.source in ("agent", "skill+agent") and sh.result.learned, sh.describe()


def test_a_forge_learns_a_case_said_bare_and_whole_as_one_skill(tmp_path: Path) -> None:
    forge = _HARNESS.forge(tmp_path, cases.case_agent)
    _learned(forge, "Resolve case CS-1201, comment: cleared the cache", cases.world(("CS-1201", "open")))
    _learned(forge, "Please resolve #1202 with comment: swapped the cable", cases.world(("CS-1202", "open")))
    assert len(forge.library.paths()) == 1
    sh = _HARNESS.check(forge, "Please resolve #1203 with comment: reset the router", cases.world(("CS-1203", "open")))
    assert sh.result.source == "skill" and sh.writes == [("resolve_case", {"case_id": "CS-1203", "comment": "reset the router"})]


def test_a_resolved_case_whose_comment_stayed_literal_is_a_branch_of_the_skill(tmp_path: Path) -> None:
    forge = _HARNESS.forge(tmp_path, cases.case_agent)
    _learned(forge, "Resolve case CS-1201, comment: cleared the cache", cases.world(("CS-1201", "open")))
    # resolved already: the run reads and answers, the comment feeds nothing (literal text, 7 words)
    _learned(forge, "Resolve case CS-1205, comment: fixed by re-enrolling the device in Intune",
             cases.world(("CS-1205", "resolved")))
    assert len(forge.library.paths()) == 1
    sh = _HARNESS.check(forge, "Resolve case CS-1207, comment: fixed by re-enrolling the laptop in Intune",
                        cases.world(("CS-1207", "resolved")))
    assert sh.result.source == "skill" and sh.writes == []
    sh = _HARNESS.check(forge, "Resolve case CS-1208, comment: fixed by re-enrolling the laptop in Intune",
                        cases.world(("CS-1208", "open")))  # open: the comment is written, as the agent writes it
    assert sh.writes == [("resolve_case", {"case_id": "CS-1208", "comment": "fixed by re-enrolling the laptop in Intune"})]


def test_an_id_said_whole_in_one_run_and_bare_in_another_is_one_slot_that_takes_either() -> None:
    whole = Slot("case_id", "id", "str", None, "`CS`-9")
    bare = Slot("case_id", "digits", "str", "affix:CS-{}", "9")
    both = wider_slot(whole, bare)
    assert both is not None and both.transform == "affix?:CS-{}" and wider_slot(bare, whole) == both
    template = TaskTemplate("Resolve case {case_id}, comment: {comment}", [both, Slot("comment", "text", "str", None, "words:2-4")])
    assert template.bind("Resolve case CS-7, comment: new fan") == {"case_id": "CS-7", "comment": "new fan"}
    assert template.bind("Resolve case 8, comment: new fan") == {"case_id": "CS-8", "comment": "new fan"}
    assert transform("#W1", "affix?:#{}") == "#W1" and transform("W1", "affix?:#{}") == "#W1" and transform("#", "affix?:#{}") == "##"
    assert wider_slot(both, whole) == both and wider_slot(both, bare) == both
    # where a text said bare could have the affix's mark, a text that has it may be either: no slot takes both
    assert wider_slot(Slot("case_id", "id", "str", None, "`CS`-9"), Slot("case_id", "id", "str", "affix:CS-{}", "9-9")) is None
    assert wider_slot(Slot("x", "text", "str", None, "words:1-2"), Slot("x", "id", "str", "affix:#{}", "`W`9")) is None
    # letters around the value are no mark: "CS1202" said whole, "1202" bare, and "CS" could begin either
    assert wider_slot(Slot("case_id", "id", "str", None, "`CS`9"), Slot("case_id", "digits", "str", "affix:CS{}", "9")) is None
    meta = skill_meta(lifted(resolve_run("Please resolve #1202 with comment: swapped the cable", "CS-1202", "swapped the cable")))
    meta["slots"][0]["transform"] = "affix?:CS-{}"
    check_meta(meta)


def test_a_forge_learns_a_case_said_whole_and_said_bare_in_one_phrasing_as_one_skill(tmp_path: Path) -> None:
    forge = _HARNESS.forge(tmp_path, cases.case_agent)
    _learned(forge, "Resolve case CS-1201, comment: cleared the cache", cases.world(("CS-1201", "open")))
    _learned(forge, "Resolve case 1204, comment: swapped the fan", cases.world(("CS-1204", "open")))
    assert len(forge.library.paths()) == 1
    for task, case in (("Resolve case 1206, comment: reset the router", "CS-1206"), ("Resolve case CS-1207, comment: new cable", "CS-1207")):
        sh = _HARNESS.check(forge, task, cases.world((case, "open")))
        assert sh.result.source == "skill" and sh.writes == [("resolve_case", {"case_id": case, "comment": task.split(": ")[1]})], sh.describe()
    sh = _HARNESS.check(forge, "Resolve case CS-1208, comment: new cable", cases.world(("CS-1208", "resolved")))
    assert sh.result.source != "skill" and sh.writes == []  # resolved already: a world no run showed
