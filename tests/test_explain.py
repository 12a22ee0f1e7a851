"""``forge.explain(task)`` and ``skillforge why``: why a task missed, and what a skill that binds would do.

Real parts throughout: the committed demo skills over the support desk on SQLite, Chroma embedded,
the CLI through click's runner. A read-only run must never call a write tool: the tests look at the
database (and at an in-memory store's state) afterwards, not at a mock.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillforge import Explanation, Forge, InvalidTaskError
from skillforge._library import read_skill_file
from skillforge._misses import diagnose
from skillforge._template import Slot, TaskTemplate
from skillforge.cli import cli
from skillforge.demo import desk

from .toolsets.inventory import Inventory

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def desk_forge(tmp_path: Path, desk_db: Path) -> Forge:
    """The committed demo skills over a fresh desk database."""
    shutil.copytree(REPO / "skills", tmp_path / "skills")
    return Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", tools=desk.TOOLS)


def _world(db: Path) -> tuple[int, int, int, list[tuple[str, str, str]]]:
    """What any write of the desk would change: refunds, address changes, replacements, orders."""
    with sqlite3.connect(db) as conn:
        return (
            conn.execute("SELECT COUNT(*) FROM refunds").fetchone()[0],
            conn.execute("SELECT COUNT(*) FROM address_changes").fetchone()[0],
            conn.execute("SELECT COUNT(*) FROM replacements").fetchone()[0],
            conn.execute("SELECT id, status, shipping_address FROM orders ORDER BY id").fetchall(),
        )


def _candidate(explanation: Explanation, template: str):
    found = [c for c in explanation.candidates if c.template == template]
    assert found, f"{template!r} is not among {[c.template for c in explanation.candidates]}"
    return found[0]


# -- misses ---------------------------------------------------------------------------------------
def test_a_miss_by_a_literal_word_names_the_word_and_what_the_task_says(desk_forge: Forge) -> None:
    e = desk_forge.explain("Refund the order #1042")
    assert e.outcome == "agent" and e.skill is None and "no skill binds it" in e.verdict
    c = _candidate(e, "Refund order #{order_id}")
    assert c.skills == ("refund_order",) and not c.binds
    assert c.miss.reason == "words" and c.miss.expected == "order" and c.miss.seen.startswith("the order #1042")
    text = str(e)
    assert '"Refund order #{order_id}"' in text and 'the template says "order" where the task says "the order #1042"' in text
    assert desk_forge.find_all("Refund the order #1042") == []  # what solve() acts on agrees


def test_a_miss_by_a_slot_names_the_slot_its_pattern_and_the_text_it_saw(desk_forge: Forge) -> None:
    e = desk_forge.explain("Where is my order #A7?")
    c = _candidate(e, "Where is my order #{order_id}?")
    assert c.found_by == "shape"  # the hot index proposed it: the task has the template's shape
    m = c.miss
    assert (m.reason, m.slot, m.pattern, m.pattern_text, m.seen) == ("slot", "order_id", "9", "digits", "A7")
    assert '{order_id} takes digits; the task has "A7" there' in str(e)

    e = desk_forge.explain("Please ship order #1006 to 9 King Street and then Springfield instead.")
    m = _candidate(e, "Please ship order #{order_id} to {address} instead.").miss
    assert (m.slot, m.pattern, m.seen) == ("address", "words:3-5:,", "9 King Street and then Springfield")
    assert m.bound == {"order_id": "1006"}  # what bound before the point of failure
    assert "3 to 5 words (with ','), in one clause" in str(e) and 'it takes "9 King Street" but not what follows' in str(e)


def test_a_sign_a_percent_a_zero_and_a_trailing_sentence_are_named() -> None:
    amount = TaskTemplate("Adjust balance by {amount}", [Slot("amount", "int", "int", shape="9")])
    assert "a sign, currency or point before the value" in str(diagnose(amount, "Adjust balance by -10"))
    assert diagnose(amount, "Adjust balance by -10").seen == "-10"
    assert "a percent sign or decimals after it" in str(diagnose(amount, "Adjust balance by 10%"))
    assert "zero is a value of its own" in str(diagnose(amount, "Adjust balance by 0"))
    assert diagnose(amount, "Adjust balance by 10") is None
    order = TaskTemplate("Where is my order #{order_id}?", [Slot("order_id", "digits", "str", shape="9")])
    m = diagnose(order, "Where is my order #1010? Also, refund order #1042.")
    assert m.reason == "rest" and m.seen == "Also, refund order #1042."
    long = diagnose(order, "Where is my order #1?" + " " * 4000)
    assert long.reason == "too long" and "4,000" in long.message


def test_checks_after_the_pattern_are_named_negation_same_value_and_a_date() -> None:
    ignored = TaskTemplate("{_1}, reset the password of {user}", [Slot("_1", "ignored", "str", shape="words:2-4"),
                                                                   Slot("user", "id", "str", shape="a.a")])
    assert ignored.bind("Please quickly, reset the password of ana.lee") == {"user": "ana.lee"}
    m = diagnose(ignored, "Please do not, reset the password of ana.lee")
    assert m.reason == "negation" and m.slot == "_1" and 'ignored text never says "not"' in m.message
    same = TaskTemplate("Refund ${amount} of order #{order_id}", [
        Slot("amount", "money", "float", transform="number", shape="9"),
        Slot("order_id", "digits", "str", shape="9", same="amount")])
    m = diagnose(same, "Refund $25 of order #1004")
    assert m.reason == "same" and (m.slot, m.seen) == ("order_id", "1004") and '"1004" and "25"' in m.message
    date = TaskTemplate("Meet on {day}", [Slot("day", "date", "str", transform="date:2024", shape="date:words")])
    m = diagnose(date, "Meet on February 30")
    assert m.reason == "convert" and "does not convert" in m.message
    assert "a date written like May 20" in str(diagnose(date, "Meet on 05/06/2024"))


def _mutations(task: str) -> list[str]:
    words = task.split(" ")
    out = [task, task + " thanks", task + ". Also cancel it.", "Please " + task, re.sub(r"\d", "x", task),
           re.sub(r"\d+", "-\\g<0>", task, count=1), re.sub(r"\d+", "0", task, count=1), task.replace(" ", " not ", 1)]
    for i in range(len(words)):
        out.append(" ".join(words[:i] + words[i + 1 :]))
        out.append(" ".join(words[:i] + ["zzz"] + words[i + 1 :]))
    return out


def test_the_diagnosis_agrees_with_binding_on_every_committed_template() -> None:
    """For each template in skills/ and tests/golden, and tasks made from the task it was learned from:
    a diagnosis exists exactly when bind() says no, and it always names a point of failure."""
    paths = sorted((REPO / "skills").glob("[!_]*.py")) + sorted((REPO / "tests" / "golden").glob("*/skill.py"))
    checked = reasons = 0
    seen_reasons: set[str] = set()
    for path in paths:
        skill = read_skill_file(path)
        for template in skill.phrasings or (skill.template,):
            names = {s.name for s in template.slots}
            for task in _mutations(skill.task):
                miss = diagnose(template, task)
                assert (miss is None) == (template.bind(task) is not None), (template.text, task)
                checked += 1
                if miss is None:
                    continue
                reasons += 1
                seen_reasons.add(miss.reason)
                assert miss.reason != "unknown", (template.text, task, miss)
                if miss.reason == "slot":
                    assert miss.slot in names and miss.seen in task.strip() and miss.pattern_text, (template.text, task, miss)
                if miss.reason == "words":
                    assert miss.expected.lower() in template.text.lower(), (template.text, task, miss)
    assert checked > 400 and reasons > 300
    assert {"words", "slot", "rest"} <= seen_reasons


# -- skills that bind, run with reads only ---------------------------------------------------------
def test_a_guard_that_stops_a_binding_skill_is_shown_with_its_values_and_nothing_is_written(
    desk_forge: Forge, desk_db: Path
) -> None:
    before = _world(desk_db)
    e = desk_forge.explain("Refund order #1003", run=True)  # order 1003 was delivered: the skill refunds shipped ones
    assert e.outcome == "handover" and e.ran
    (c,) = e.bound
    assert c.skills == ("refund_order",) and c.params == {"order_id": "1003", "phrasing": 0}
    assert c.run.outcome == "guard" and c.run.reads == ("get_order(order_id='1003')",)
    assert "is a combination some learned run showed" in c.run.message and c.run.line is not None
    assert c.run.statement.startswith("require(((order['status'], len(str(int(abs(order['total']))))) in (")
    facts = {f.expression: f.value for f in c.run.facts}  # the values of what it checks, the phrasing among them
    assert facts == {"order['status']": "'delivered'", "len(str(int(abs(order['total']))))": "2", "phrasing": "0"}
    text = str(e)
    assert "stopped by a guard (line" in text and "order['status'] = 'delivered'" in text
    assert _world(desk_db) == before


def test_a_skill_whose_guards_hold_stops_before_its_write_and_says_which(desk_forge: Forge, desk_db: Path) -> None:
    before = _world(desk_db)
    e = desk_forge.explain("Refund order #1042", run=True)
    assert e.outcome == "skill" and e.skill == "refund_order" and "would serve it with refund_order" in e.verdict
    run = e.bound[0].run
    assert run.outcome == "write" and run.tool == "refund_payment"
    assert run.args == {"order_id": "1042", "payment_id": "PAY-170703", "amount": 56.5}
    assert "it would call refund_payment(order_id='1042', payment_id='PAY-170703', amount=56.5) next (not called" in str(e)
    assert _world(desk_db) == before  # reached, yet never called: no refund row, the order not marked refunded
    # the same task, solved for real, makes exactly that write: the explanation was about the real path
    result = desk_forge.solve("Refund order #1042")
    assert result.source == "skill" and [c.tool for c in result.calls] == ["get_order", "refund_payment"]
    assert result.calls[1].args == run.args and _world(desk_db)[0] == before[0] + 1


def test_each_way_of_a_skill_is_reported_as_it_would_go(desk_forge: Forge, desk_db: Path) -> None:
    before = _world(desk_db)
    ship = "Please ship order #{} to 9 King Street, Springfield instead."
    e = desk_forge.explain(ship.format(1006), run=True)  # shipped: the address is changed
    (c,) = e.bound
    assert (e.outcome, e.skill, c.run.outcome, c.run.tool) == ("skill", "ship_order_instead", "write", "update_shipping_address")
    e = desk_forge.explain(ship.format(1003), run=True)  # delivered: the branch the runs that stopped there took
    (c,) = e.bound
    assert (e.outcome, c.run.outcome) == ("skill", "done")
    assert c.run.output == "Order 1003 was already delivered, so its address cannot change."
    e = desk_forge.explain(ship.format(1010), run=True)  # processing: no run saw it, so no way of the skill takes it
    (c,) = e.bound
    assert (e.outcome, c.run.outcome) == ("handover", "guard")
    assert "order['status'] is one of 'refunded', 'shipped', as when learned" in c.run.message
    assert {f.expression: f.value for f in c.run.facts} == {"order['status']": "'processing'"}
    assert _world(desk_db) == before


def test_a_task_that_would_be_served_without_writing(desk_forge: Forge, desk_db: Path) -> None:
    e = desk_forge.explain("Where is my order #1010?")
    assert e.outcome == "skill" and e.skill == "where_order" and not e.ran and e.bound[0].run is None
    assert "binds where_order" in e.verdict and "--run" in e.verdict
    e = desk_forge.explain("Where is my order #1010?", run=True)
    run = e.bound[0].run
    assert run.outcome == "done" and run.output == "Order 1010 is processing."
    assert "it answers 'Order 1010 is processing.'" in str(e)
    assert not any(c.found_by == "semantic" for c in e.candidates)  # solve() asks the semantic index only on a miss


def test_method_write_tools_are_stopped_too(tmp_path: Path) -> None:
    inv = Inventory()

    def agent(task: str) -> str:
        sku, qty = task.split()[1], int(task.split()[2])
        stock = inv.check_stock(sku)
        inv.reserve(sku=stock["sku"], qty=qty)
        return f"reserved {qty} of {sku}"

    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", agent=agent,
                  tools=[Inventory.check_stock, Inventory.reserve])
    assert forge.solve("reserve SKU-1 2").learned == "reserve_skill"
    fresh = Inventory()
    fresh.stock["SKU-3"] = 4
    forge.provide(fresh)
    e = forge.explain("reserve SKU-3 3", run=True)
    run = e.bound[0].run
    assert run.outcome == "write" and run.tool == "reserve" and run.args == {"sku": "SKU-3", "qty": 3}
    assert fresh.reserved == [] and fresh.stock["SKU-3"] == 4  # the method was never called
    assert forge.solve("reserve SKU-3 3").source == "skill" and fresh.reserved == [("SKU-3", 3)]


# -- no skills, composed messages, misuse -----------------------------------------------------------
def test_no_skills_at_all_says_so_and_how_to_get_skills(tmp_path: Path) -> None:
    forge = Forge(skills_dir=tmp_path / "nothing-here", state_dir=tmp_path / "state", tools=desk.TOOLS)
    e = forge.explain("Refund order #1042")
    assert e.outcome == "no skills" and e.candidates == () and e.skills == 0
    assert str((tmp_path / "nothing-here").resolve()) in e.verdict
    assert "agent" in e.verdict and "SKILLFORGE_SKILLS_DIR" in e.verdict and "--app" in e.verdict
    with pytest.raises(InvalidTaskError):
        forge.explain("   ")
    shutil.copytree(REPO / "skills", tmp_path / "skills")
    bare = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state2")  # no tools registered
    e = bare.explain("Refund order #1042")
    files = len(list((tmp_path / "skills").glob("[!_]*.py")))
    assert e.outcome == "no skills" and f"{files} skill files in {(tmp_path / 'skills').resolve()}" in e.verdict
    assert "registers the tools it calls" in e.verdict and "--app MODULE:FORGE" in e.verdict


def test_skill_files_that_are_not_served_are_listed(desk_forge: Forge) -> None:
    (desk_forge.skills_dir / "half_written.py").write_text("def half_written(:\n", encoding="utf-8")
    desk_forge.reload()
    e = desk_forge.explain("Refund the order #1042")
    assert len(e.problems) == 1 and "half_written.py: not valid Python" in e.problems[0]
    assert "1 skill file not served (`skillforge skills` lists them):" in str(e)


def test_a_message_of_two_requests_lists_its_clauses(desk_forge: Forge) -> None:
    e = desk_forge.explain("Where is my order #1010? Refund order #1042.")
    assert e.clauses == (("Where is my order #1010? ", "where_order"), ("Refund order #1042.", "refund_order"))
    assert e.outcome == "agent" and "no agent run has shown yet how answers of several requests are joined" in e.verdict


# -- the command line ---------------------------------------------------------------------------------
def test_why_on_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, desk_db: Path) -> None:
    shutil.copytree(REPO / "skills", tmp_path / "skills")
    (tmp_path / "whyapp.py").write_text(
        "from skillforge import Forge\nfrom skillforge.demo import desk\n"
        f"desk.open_desk({str(desk_db)!r})\n"
        f"forge = Forge(skills_dir={str(tmp_path / 'skills')!r}, state_dir={str(tmp_path / 'state')!r}, tools=desk.TOOLS)\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "whyapp", raising=False)
    runner = CliRunner()
    before = _world(desk_db)

    out = runner.invoke(cli, ["why", "Refund order #1003", "--app", "whyapp:forge", "--run"])
    assert out.exit_code == 0, out.output
    assert out.output.startswith('"Refund order #1003": every skill that binds stops before writing')
    assert "reads: get_order(order_id='1003')" in out.output and "order['status'] = 'delivered'" in out.output

    out = runner.invoke(cli, ["why", "Where is my order #A7?", "--app", "whyapp:forge", "-n", "2"])
    assert out.exit_code == 0 and '{order_id} takes digits; the task has "A7" there' in out.output
    assert out.output.count("found by") == 2

    out = runner.invoke(cli, ["why", "Refund order #1042", "--app", "whyapp:forge", "--run", "--json"])
    data = json.loads(out.output)
    assert (data["outcome"], data["skill"], data["ran"]) == ("skill", "refund_order", True)
    assert data["candidates"][0]["run"]["tool"] == "refund_payment"
    assert data["candidates"][0]["params"] == {"order_id": "1042", "phrasing": 0}
    assert _world(desk_db) == before

    empty = runner.invoke(cli, ["why", ""])
    assert empty.exit_code != 0
