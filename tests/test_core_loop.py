"""The core loop end to end: an agent run is learned, and the next task of that shape is a skill."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from skillforge import Forge, InvalidTaskError, NoAgentError
from skillforge.demo import desk

from .conftest import copy_db

# pairs of tickets whose worlds agree on what the agent's decision hinges on (status, stock, ...)
WORKFLOWS = [
    ("Refund order #1005", "Refund order #1001"),  # totals of one scale (154.50, 125.75: the first shows two decimals)
    ("Where is my order #1002?", "Where is my order #1010?"),
    ("Please ship order #1006 to 12 Elm Street, Springfield instead.", "Please ship order #1040 to 7 Mill Lane, Lakeside instead."),
    ("Change the email of customer C-104 to sam1@example.org", "Change the email of customer C-111 to kim77@example.org"),
    ("Send a replacement for order #1006", "Send a replacement for order #1019"),  # in stock
    ("Send a replacement for order #1009", "Send a replacement for order #1055"),  # out of stock; the first item has the most units
]


def _calls(result):
    return [(c.tool, c.args) for c in result.calls]


@pytest.mark.parametrize(("first", "second"), WORKFLOWS)
def test_second_task_of_a_seen_shape_is_served_by_the_skill_with_the_agents_calls(
    first: str, second: str, desk_db: Path, make_forge, tmp_path: Path
) -> None:
    forge = make_forge()
    learned = forge.solve(first)
    assert learned.source == "agent" and learned.llm_calls >= 2
    assert learned.learned, learned.not_learned

    before = copy_db(desk_db, tmp_path / "before.sqlite3")
    hit = forge.solve(second)
    assert hit.source == "skill", hit.handover
    assert hit.skill == learned.learned
    assert hit.llm_calls == 0

    # the agent's own run for the same task, on the same world
    desk.open_desk(before)
    agent_only = make_forge(learn=False)
    reference = agent_only.solve(second)
    assert reference.source == "agent" and reference.llm_calls > 0
    assert _calls(hit) == _calls(reference)
    assert hit.output == reference.output


def test_a_learned_skill_is_written_once_and_reused(desk_db: Path, make_forge) -> None:
    forge = make_forge()
    forge.solve("Refund order #1005")
    files = sorted(p.name for p in forge.skills_dir.glob("*.py"))
    assert files == ["__init__.py", "refund_order.py"]  # the skill, and the package that exports it
    assert len(list((forge.skills_dir / "runs").glob("*.json"))) == 1
    for order in ("1001", "1016", "1023"):  # delivered, like 1005, and a total of three digits (154.50: two decimals)
        assert forge.solve(f"Refund order #{order}").source == "skill"
    assert sorted(p.name for p in forge.skills_dir.glob("*.py")) == files


def test_a_new_forge_reads_skills_from_files(desk_db: Path, make_forge, tmp_path: Path) -> None:
    first = make_forge()
    first.solve("Where is my order #1002?")
    again = make_forge(skills_dir=first.skills_dir, agent=None)
    result = again.solve("Where is my order #1010?")  # processing, like 1002
    assert result.source == "skill" and result.llm_calls == 0
    assert result.output == "Order 1010 is processing."


def test_different_literal_words_are_a_miss_not_a_wrong_hit(desk_db: Path, make_forge) -> None:
    forge = make_forge()
    forge.solve("Refund order #1001")
    assert forge.find("Refund order #1002") is not None
    assert forge.find("Do not refund order #1002") is None
    assert forge.find("Refund order #1002 twice") is None


def test_generated_skill_imports_and_runs_as_a_plain_function(desk_db: Path, make_forge, tmp_path: Path) -> None:
    forge = make_forge()
    forge.solve("Where is my order #1002?")
    expected = forge.solve("Where is my order #1010?").output
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(forge.skills_dir.parent)!r})\n"
        "from skillforge.demo import desk\n"
        f"desk.open_desk({str(desk_db)!r})\n"
        f"from {forge.skills_dir.name}.where_order import where_order\n"
        "print(where_order(order_id='1010'))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.strip() == expected


# -- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize("task", ["", "   \n", None, 42, b"Refund order #1"])
def test_empty_or_non_string_task_is_refused_with_a_clear_error(task, make_forge, desk_db: Path) -> None:
    forge = make_forge()
    with pytest.raises(InvalidTaskError, match="solve\\(\\)"):
        forge.solve(task)


def test_no_matching_skill_and_no_agent_says_how_to_fix_it(tmp_path: Path) -> None:
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", tools=desk.TOOLS)
    with pytest.raises(NoAgentError, match="no agent is configured: pass agent="):
        forge.solve("Refund order #1001")


def test_a_tool_that_raises_in_a_custom_agent_is_reported_and_not_learned(desk_db: Path, make_forge) -> None:
    def agent(task: str) -> str:
        order = desk.get_order(order_id="1001")
        desk.refund_payment(order_id="1001", payment_id="PAY-WRONG", amount=order["total"])
        return "done"

    forge = make_forge(agent=agent)
    result = forge.solve("Refund order #1001")
    assert not result.ok
    assert "refund_payment" in result.error and "does not belong to order 1001" in result.error
    assert result.learned is None
    assert [c.tool for c in result.calls] == ["get_order", "refund_payment"]
    assert result.calls[-1].error.startswith("ValueError")
    assert not list(forge.skills_dir.glob("*.py"))


def test_a_tool_error_the_model_recovers_from_is_not_learned(desk_db: Path, make_forge) -> None:
    forge = make_forge()
    result = forge.solve("Where is my order #9999?")  # get_order raises LookupError; the model answers
    assert result.ok and result.output == "I could not find order 9999."
    assert result.calls[0].error.startswith("LookupError")
    assert result.learned is None and "raised" in result.not_learned
    assert not list(forge.skills_dir.glob("*.py"))


def test_unparsable_and_incomplete_skill_files_are_skipped_with_a_warning_and_never_run(
    desk_db: Path, make_forge, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    forge = make_forge()
    forge.solve("Where is my order #1002?")
    canary = tmp_path / "canary"
    (forge.skills_dir / "broken.py").write_text("def broken(:\n    pass\n")
    (forge.skills_dir / "no_metadata.py").write_text(
        f"open({str(canary)!r}, 'w').write('ran')\n\ndef no_metadata(order_id):\n    return 1\n"
    )
    fresh = make_forge(skills_dir=forge.skills_dir, agent=None)
    with caplog.at_level(logging.WARNING, logger="skillforge"):
        result = fresh.solve("Where is my order #1010?")
    assert result.source == "skill"
    messages = "\n".join(r.getMessage() for r in caplog.records)
    assert "broken.py" in messages and "not valid Python" in messages
    assert "no_metadata.py" in messages and "no SKILL" in messages
    assert {p.path.rsplit("/", 1)[-1] for p in fresh.problems} == {"broken.py", "no_metadata.py"}
    assert not canary.exists()


def test_non_json_results_are_refused_clearly_and_nothing_is_learned(make_forge, tmp_path: Path) -> None:
    from tests.toolsets import odd

    forge = make_forge()
    get_when = forge.tool(read=True)(odd.get_when)
    forge.agent = lambda task: get_when(event_id="7")["id"]
    result = forge.solve("When is event 7?")
    assert result.ok and result.learned is None
    assert "tool 'get_when': result at ['when'] is a datetime" in result.not_learned
    assert "not a JSON value" in result.not_learned
    # recorded faithfully: the call shows the real value, not a mangled one
    assert type(result.calls[0].result["when"]).__name__ == "datetime"


def test_tuple_arguments_are_refused_not_turned_into_lists(make_forge) -> None:
    from tests.toolsets import odd

    forge = make_forge()
    tag = forge.tool(odd.tag)
    forge.agent = lambda task: tag(event_id="7", labels=("a", "b"))["id"]
    result = forge.solve("Tag event 7 with a and b")
    assert result.learned is None
    assert "argument" in result.not_learned and "['labels'] is a tuple" in result.not_learned


def test_a_stopped_skill_without_an_agent_is_reported_not_raised(desk_db: Path, make_forge) -> None:
    first = make_forge()
    first.solve("Where is my order #1002?")  # processing
    alone = make_forge(skills_dir=first.skills_dir, agent=None)
    result = alone.solve("Where is my order #1001?")  # delivered: the status guard stops the skill
    assert not result.ok and result.source == "skill" and result.skill == "where_order"
    assert "order['status'] is 'processing'" in result.error and "no agent is configured" in result.error
    assert [c.tool for c in result.calls] == ["get_order"]
