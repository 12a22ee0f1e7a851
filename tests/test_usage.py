"""``skillforge.report_usage``: any agent's model usage, counted in results, the run log and stats."""

from __future__ import annotations

import asyncio
import contextvars
import re
import sqlite3
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import skillforge
from skillforge import Forge, UserError
from skillforge.cli import cli
from skillforge.demo import desk
from tests.toolsets import drafting


def where_agent(task: str, transcript: Sequence[Any] | None = None) -> str:
    """Answers where an order is, "asking a model" three times (reported once, then with a total of two)."""
    order_id = re.search(r"#(\d+)", task)[1]  # type: ignore[index]
    done = {c.tool: c.result for c in transcript or ()}
    skillforge.report_usage(prompt_tokens=300, completion_tokens=20)
    order = done.get("get_order") or desk.get_order(order_id=order_id)
    skillforge.report_usage(requests=2, prompt_tokens=500, completion_tokens=40)
    return f"Order {order_id} is {order['status']}."


def _forge(tmp_path: Path, agent: Any = where_agent, **kw: Any) -> Forge:
    return Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", agent=agent, tools=desk.TOOLS, **kw)


def _logged(forge: Forge) -> list[tuple[Any, ...]]:
    assert forge.runlog is not None
    forge.runlog.flush()
    with sqlite3.connect(forge.runlog.path) as db:
        return db.execute("SELECT task, source, llm_calls, prompt_tokens, completion_tokens FROM log ORDER BY at").fetchall()


def test_a_custom_agents_usage_is_in_the_result_the_run_log_and_stats(tmp_path: Path, desk_db: Path, monkeypatch) -> None:
    forge = _forge(tmp_path)
    learned = forge.solve("Where is my order #1001?")
    assert learned.source == "agent" and learned.learned
    assert (learned.llm_calls, learned.prompt_tokens, learned.completion_tokens) == (3, 800, 60)
    hit = forge.solve("Where is my order #1003?")
    assert hit.source == "skill" and (hit.llm_calls, hit.prompt_tokens, hit.completion_tokens) == (0, 0, 0)
    assert _logged(forge) == [
        ("Where is my order #1001?", "agent", 3, 800, 60), ("Where is my order #1003?", "skill", 0, 0, 0),
    ]
    overall = forge.stats().overall
    assert (overall.llm_calls, overall.tokens) == (3, 860)
    assert (overall.requests_saved, overall.tokens_saved) == (3, 860)  # the hit saved what the agent's run cost
    # and `skillforge stats` says so
    (tmp_path / "usageapp.py").write_text(
        "from skillforge import Forge\nfrom skillforge.demo import desk\n"
        f"forge = Forge(skills_dir={str(tmp_path / 'skills')!r}, state_dir={str(tmp_path / 'state')!r}, tools=desk.TOOLS)\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "usageapp", raising=False)
    shown = CliRunner().invoke(cli, ["stats", "--app", "usageapp:forge"])
    assert shown.exit_code == 0, shown.output
    assert "model requests: 3 made, ~3 saved; tokens: 860 used, ~860 saved" in shown.output


def test_an_agent_that_takes_over_from_a_skill_reports_into_the_same_result(tmp_path: Path, desk_db: Path) -> None:
    forge = _forge(tmp_path)
    forge.solve("Where is my order #1001?")  # delivered
    result = forge.solve("Where is my order #1006?")  # shipped: the skill's guard stops it after its read
    assert result.source == "skill+agent" and result.handover_at == 1
    assert [c.tool for c in result.calls] == ["get_order"]  # taken from the transcript, not read again
    assert (result.llm_calls, result.prompt_tokens, result.completion_tokens) == (3, 800, 60)
    assert _logged(forge)[-1] == ("Where is my order #1006?", "skill+agent", 3, 800, 60)
    per_skill = {s.name: s for s in forge.stats().skills}
    assert per_skill[result.skill].handovers == 1 and per_skill[result.skill].llm_calls == 6


def test_a_tool_that_calls_a_model_reports_usage_on_skill_hits_too(tmp_path: Path) -> None:
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", agent=drafting.agent)
    drafting.TOOLBOX["get_ticket"] = forge.tool(read=True)(drafting.get_ticket)
    drafting.TOOLBOX["draft_reply"] = forge.tool(read=True)(drafting.draft_reply)
    try:
        learned = forge.solve("Answer ticket T-1")
        widened = forge.solve("Answer ticket T-2")  # another ticket kind: the guard hands over, the run widens it
        hit = forge.solve("Answer ticket T-2")
    finally:
        drafting.TOOLBOX.clear()
    assert learned.source == "agent" and learned.learned, learned.not_learned
    assert (learned.llm_calls, learned.prompt_tokens, learned.completion_tokens) == (2, 340, 42)
    assert widened.source == "skill+agent" and widened.llm_calls == 2
    assert hit.source == "skill" and hit.output == "Sorry about the screen flickers; a technician is on the way (T-2)."
    assert (hit.llm_calls, hit.prompt_tokens, hit.completion_tokens) == (1, 40, 12)  # the tool's request, not the agent's
    assert _logged(forge) == [
        ("Answer ticket T-1", "agent", 2, 340, 42), ("Answer ticket T-2", "skill+agent", 2, 340, 42),
        ("Answer ticket T-2", "skill", 1, 40, 12),
    ]
    overall = forge.stats().overall
    assert overall.hits == 1 and overall.llm_calls == 5  # still a hit, and its request is counted


def test_report_usage_outside_a_solve_or_with_bad_counts_says_how_to_fix_it(tmp_path: Path, desk_db: Path) -> None:
    with pytest.raises(UserError, match=r"outside forge\.solve\(\): call it from your agent"):
        skillforge.report_usage(prompt_tokens=10)
    for bad in ({"requests": -1}, {"prompt_tokens": 1.5}, {"completion_tokens": True}, {"requests": "2"}):
        name = next(iter(bad))
        with pytest.raises(UserError, match=rf"report_usage\({name}=\.\.\.\) takes a whole number >= 0"):
            skillforge.report_usage(**bad)

    def careless(task: str) -> str:
        skillforge.report_usage(prompt_tokens=-5)
        return "never"

    forge = _forge(tmp_path, agent=careless)
    with pytest.raises(UserError, match="prompt_tokens"):  # misuse before any write: raised, as other misuse is
        forge.solve("Where is my order #1001?")


def test_a_thread_the_agent_starts_reports_only_with_the_solves_context(tmp_path: Path, desk_db: Path) -> None:
    errors: list[BaseException] = []

    def in_thread() -> None:
        try:
            skillforge.report_usage(prompt_tokens=7)
        except UserError as e:
            errors.append(e)

    def threaded(task: str) -> str:
        bare = threading.Thread(target=in_thread)
        bare.start()
        bare.join()
        ctx = contextvars.copy_context()
        copied = threading.Thread(target=ctx.run, args=(skillforge.report_usage,), kwargs={"prompt_tokens": 9})
        copied.start()
        copied.join()
        return "done"

    result = _forge(tmp_path, agent=threaded).solve("Where is my order #1001?")
    assert len(errors) == 1 and "contextvars.copy_context().run" in str(errors[0])
    assert (result.llm_calls, result.prompt_tokens) == (1, 9)  # only the thread that ran in the solve's context


def test_concurrent_asolve_calls_count_each_agents_usage_in_its_own_result(tmp_path: Path, desk_db: Path) -> None:
    async def agent(task: str) -> str:
        n = int(task.split()[-1])
        for _ in range(n):
            await asyncio.sleep(0.01)  # the others run meanwhile
            skillforge.report_usage(prompt_tokens=100, completion_tokens=n)
        return f"asked {n} times"

    forge = _forge(tmp_path, agent=agent, learn=False)

    async def main() -> list[Any]:
        return await asyncio.gather(*(forge.asolve(f"Ask the model {n}") for n in (1, 2, 3, 4)))

    results = asyncio.run(main())
    assert [(r.llm_calls, r.prompt_tokens, r.completion_tokens) for r in results] == [
        (1, 100, 1), (2, 200, 4), (3, 300, 9), (4, 400, 16),
    ]
    assert forge.stats().overall.llm_calls == 10
