"""``async def`` tools and ``await forge.asolve(task)``: recorded, learned and replayed like sync ones.

Real asyncio (each test runs its own loop with ``asyncio.run``), real SQLite behind the tools
(reached through ``asyncio.to_thread``, as an async app reaches a blocking driver), real skill
files and a real run log.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import skillforge
from skillforge import Forge, OpenAIAgent, ToolDefinitionError, UserError
from skillforge.cli import cli
from skillforge.testing import ChatServer, Script, answer, tool_call
from tests.toolsets import aio, shop


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Forge]:
    """A forge over the async desk's tools, with the async agent."""
    aio.make_world(tmp_path / "aio.sqlite3")
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", agent=aio.agent)
    aio.TOOLBOX["get_order"] = forge.tool(read=True)(aio.get_order)
    aio.TOOLBOX["refund_order"] = forge.tool(aio.refund_order)
    yield forge
    aio.TOOLBOX.clear()
    aio.DELAY["seconds"] = 0.0


def test_learns_from_an_async_agent_and_serves_a_repeat_from_the_skill(desk: Forge, tmp_path: Path, monkeypatch) -> None:
    async def main() -> tuple[Any, Any, int]:
        learned = await desk.asolve("Refund order #1001")
        hit = await desk.asolve("Refund order #1002")
        return learned, hit, threading.get_ident()

    learned, hit, loop_thread = asyncio.run(main())
    assert learned.source == "agent" and learned.learned and learned.ok
    assert [(c.tool, c.args) for c in learned.calls] == [("get_order", {"order_id": "1001"}), ("refund_order", {"order_id": "1001", "amount": 11.0})]
    assert hit.source == "skill" and hit.skill == learned.learned and hit.llm_calls == 0
    assert hit.output == "Refunded 12.0 for order 1002."
    assert [(c.tool, c.result) for c in hit.calls] == [
        ("get_order", {"id": "1002", "status": "delivered", "total": 12.0}), ("refund_order", {"order_id": "1002", "status": "refunded"}),
    ]
    assert aio.refunds() == [("1001", 11.0), ("1002", 12.0)]  # each write made once
    assert aio.SEEN["threads"] == {loop_thread}  # every tool coroutine ran on the caller's loop, the skill's too
    # the skill is plain synchronous code, like any other, and `skillforge check` proves it against its runs
    source = (tmp_path / "skills" / f"{learned.learned}.py").read_text()
    assert "await" not in source and "async" not in source
    assert "from tests.toolsets.aio import get_order, refund_order" in source
    (tmp_path / "aioapp.py").write_text(
        "from skillforge import Forge\nfrom tests.toolsets import aio\n"
        f"forge = Forge(skills_dir={str(tmp_path / 'skills')!r}, state_dir={str(tmp_path / 'state2')!r})\n"
        "forge.tool(read=True)(aio.get_order)\nforge.tool(aio.refund_order)\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "aioapp", raising=False)
    checked = CliRunner().invoke(cli, ["check", "--app", "aioapp:forge"])
    assert checked.exit_code == 0 and "1 of 1 skill files pass" in checked.output, checked.output


def test_a_guard_hands_over_to_the_async_agent_which_continues_from_the_transcript(desk: Forge) -> None:
    async def main() -> Any:
        await desk.asolve("Refund order #1001")
        return await desk.asolve("Refund order #1007")  # shipped, not delivered: the skill's guard stops it

    result = asyncio.run(main())
    assert result.source == "skill+agent" and result.handover_at == 1 and "status" in (result.handover or "")
    assert [c.tool for c in result.calls] == ["get_order"]  # the agent took the read from the transcript
    assert result.output == "Order 1007 is shipped; it is refunded once it arrives."
    assert result.llm_calls == 1 and result.prompt_tokens == 200  # one "model request" to decide, reported
    assert aio.refunds() == [("1001", 11.0)]
    assert result.learned  # the handover became a branch of the skill: served without the agent next time
    again = asyncio.run(desk.asolve("Refund order #1017"))
    assert again.source == "skill" and again.output == "Order 1017 is shipped; it is refunded once it arrives."


def test_concurrent_asolve_calls_overlap_and_each_is_right(desk: Forge) -> None:
    async def main() -> list[Any]:
        await desk.asolve("Refund order #1001")
        aio.DELAY["seconds"] = 0.05
        return await asyncio.gather(*(desk.asolve(f"Refund order #{n}") for n in range(1010, 1030)))

    results = asyncio.run(main())
    assert aio.SEEN["most_in_flight"] > 1  # tool calls of different solves were in flight at once
    delivered = [str(n) for n in range(1010, 1030) if n % 10 != 7]
    for n, r in zip(range(1010, 1030), results, strict=True):
        assert r.ok, r.error
        if n % 10 == 7:
            assert r.source == "skill+agent" and r.output == f"Order {n} is shipped; it is refunded once it arrives."
        else:
            assert r.source == "skill" and r.output == f"Refunded {10.0 + n % 50} for order {n}."
    assert sorted(o for o, _a in aio.refunds()[1:]) == sorted(delivered)  # every refund made once, none lost
    assert sum(r.llm_calls for r in results) == 2  # the two handovers' requests, each counted in its own result


def test_sync_solve_refuses_async_tools_and_async_agents_and_says_to_use_asolve(desk: Forge, tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"async tools \(get_order, refund_order\).*await forge\.asolve\(task\)"):
        desk.solve("Refund order #1001")
    assert aio.refunds() == [] and desk.stats().overall.solves == 0  # nothing ran, nothing logged

    shop.make_world(tmp_path / "shop.sqlite3")
    plain = Forge(skills_dir=tmp_path / "s2", state_dir=tmp_path / "t2", agent=aio.agent)
    plain.tool(read=True)(shop.get_order)
    with pytest.raises(UserError, match=r"agent .* is async.*asolve"):
        plain.solve("Refund order #W11")
    # a synchronous callable that returns a coroutine is caught when it returns one, before anything is learned
    plain.agent = lambda task: aio.agent(task)
    with pytest.raises(UserError, match="returned an awaitable"):
        plain.solve("Refund order #W11")  # its coroutine is closed: no "never awaited" warning (warnings are errors here)


def test_an_async_tool_outside_a_solve_is_the_plain_coroutine_function(desk: Forge) -> None:
    get_order = aio.TOOLBOX["get_order"]
    assert inspect.iscoroutinefunction(get_order) and get_order.__name__ == "get_order"
    assert get_order.__doc__ == aio.get_order.__doc__
    assert asyncio.run(get_order(order_id="1003")) == {"id": "1003", "status": "delivered", "total": 13.0}
    assert desk.stats().overall.solves == 0
    with pytest.raises(ToolDefinitionError, match="async generator"):

        @desk.tool
        async def stream_orders() -> Any:  # pragma: no cover - refused at registration
            yield {}


def test_openai_agent_in_asolve_calls_async_tools_and_counts_its_requests(desk: Forge) -> None:
    script = Script([tool_call("get_order", order_id="1004"), answer("Order 1004 was delivered.")])
    with ChatServer(script) as server:
        desk.agent = OpenAIAgent(model="scripted", client=server.client())

        async def main() -> tuple[Any, int]:
            return await desk.asolve("Was order 1004 delivered?"), threading.get_ident()

        result, loop_thread = asyncio.run(main())
    assert result.source == "agent" and result.output == "Order 1004 was delivered."
    assert [(c.tool, c.result) for c in result.calls] == [("get_order", {"id": "1004", "status": "delivered", "total": 14.0})]
    assert result.llm_calls == 2 and result.prompt_tokens > 0 and result.completion_tokens > 0
    assert aio.SEEN["threads"] == {loop_thread}  # the agent ran in a worker thread; the async tool on the loop
    assert '"status": "delivered"' in server.requests[1]["messages"][-1]["content"]  # the tool's result reached the model


class Ledger:
    """Accounts, reached through async methods (an async client object)."""

    def __init__(self) -> None:
        self.balances = {"A-1": 50, "A-2": 5}
        self.paid: list[tuple[str, int]] = []

    async def balance(self, account: str) -> dict:
        """An account's balance."""
        await asyncio.sleep(0)
        return {"account": account, "balance": self.balances[account]}

    async def pay(self, account: str, amount: int) -> dict:
        """Pay ``amount`` from an account."""
        await asyncio.sleep(0)
        self.balances[account] -= amount
        self.paid.append((account, amount))
        return {"account": account, "paid": amount}


def test_async_method_tools_are_recorded_and_replayed_through_the_provided_instance(tmp_path: Path, monkeypatch) -> None:
    ledger = Ledger()
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state")
    monkeypatch.setattr(Ledger, "balance", forge.tool(read=True)(Ledger.balance))
    monkeypatch.setattr(Ledger, "pay", forge.tool(Ledger.pay))
    forge.provide(ledger)

    async def agent(task: str) -> str:
        account, amount = task.split()[-1], int(task.split()[1])
        seen = await ledger.balance(account)
        if seen["balance"] < amount:
            return f"{account} cannot pay {amount}."
        await ledger.pay(account, amount)
        return f"Paid {amount} from {account}."

    forge.agent = agent

    async def main() -> list[Any]:
        return [await forge.asolve(t) for t in ("Pay 10 from A-1", "Pay 12 from A-1", "Pay 20 from A-2")]

    learned, hit, stopped = asyncio.run(main())
    assert learned.source == "agent" and learned.learned, learned.not_learned
    assert hit.source == "skill" and hit.output == "Paid 12 from A-1." and hit.llm_calls == 0
    assert stopped.source == "skill+agent" and stopped.output == "A-2 cannot pay 20."  # a guard on the balance
    assert ledger.paid == [("A-1", 10), ("A-1", 12)]


def test_cancelling_asolve_stops_a_skill_before_its_next_async_call_and_logs_an_agent_run(desk: Forge) -> None:
    async def cancel_during_a_read(task: str) -> None:
        running = asyncio.ensure_future(desk.asolve(task))
        while not aio.SEEN["in_flight"]:  # until a tool call is under way
            await asyncio.sleep(0.01)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running

    async def main() -> None:
        await desk.asolve("Refund order #1001")
        aio.DELAY["seconds"] = 0.3
        await cancel_during_a_read("Refund order #1002")  # a hit: the skill's read is under way in its worker thread
        assert aio.SEEN["in_flight"] == 0  # asolve() waited for the skill's thread before it raised
        await cancel_during_a_read("Please refund order #1003")  # a miss: the agent is reading

    asyncio.run(main())
    assert aio.refunds() == [("1001", 11.0)]  # neither went on to refund
    assert desk.runlog is not None
    desk.runlog.flush()
    with sqlite3.connect(desk.runlog.path) as db:
        rows = db.execute("SELECT task, source, error, calls FROM solves ORDER BY id").fetchall()
    task, source, error, calls = rows[-1]
    assert task == "Please refund order #1003" and source == "agent" and error.startswith("interrupted: CancelledError")
    assert '"get_order"' in calls  # what the agent did until then


def test_asolve_serves_sync_tools_and_composes_a_message_of_several_requests(tmp_path: Path) -> None:
    shop.make_world(tmp_path / "shop.sqlite3")
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", agent=shop.agent)
    for f in shop.TOOLS:
        shop.TOOLBOX[f.__name__] = forge.tool(read=f.__name__ in shop.READS)(f)
    try:
        async def main() -> list[Any]:
            return [await forge.asolve(t) for t in (
                "I'm ana@example.com. Cancel order #W11 because it was a mistake. Ship order #W12 to 5 Oak Lane.",
                "I'm bo@example.com. Cancel order #W21 because we moved house. Ship order #W22 to 7 Pine Road.",
                "I'm bo@example.com. Cancel order #W23 because we moved house. Ship order #W24 to 2 Mill Way.",
            )]

        first, second, composed = asyncio.run(main())
    finally:
        shop.TOOLBOX.clear()
    assert first.source == "agent" and second.source == "skill+agent"
    assert composed.source == "skill" and composed.llm_calls == 0
    assert composed.output == "Cancelled order #W23. Order #W24 now ships to 2 Mill Way."
    assert [c.tool for c in composed.calls] == ["find_customer", "get_order", "cancel_order", "find_customer", "get_order", "ship_to"]
    assert ("W23", "c2", "cancelled", "9 Bay Road", "we moved house") in shop.snapshot()


def test_skillforge_asolve_uses_the_default_forge(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SKILLFORGE_SKILLS_DIR", str(tmp_path / "skills"))
    monkeypatch.setenv("SKILLFORGE_STATE_DIR", str(tmp_path / "state"))
    aio.make_world(tmp_path / "aio.sqlite3")
    forge = skillforge.default_forge()
    forge.agent = aio.agent
    aio.TOOLBOX["get_order"] = skillforge.tool(aio.get_order, read=True)
    aio.TOOLBOX["refund_order"] = skillforge.tool(aio.refund_order)
    try:
        result = asyncio.run(skillforge.asolve("Refund order #1005"))
    finally:
        aio.TOOLBOX.clear()
    assert result.source == "agent" and result.output == "Refunded 15.0 for order 1005." and result.learned
    with pytest.raises(UserError, match="asolve"):
        skillforge.solve("Refund order #1006")


def test_the_async_quickstart_example_runs_as_the_readme_shows() -> None:
    from tests.conftest import REPO

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    out = subprocess.run(
        [sys.executable, "-m", "examples.async_quickstart"], cwd=REPO, capture_output=True, text=True, check=True, env=env,
    ).stdout.splitlines()
    assert out[:4] == [
        "agent refund_order 2 560", "skill refund_order 0 Refunded 12.5 for order 5678", "['skill', 'skill']", "2 602 6.0",
    ]


def test_a_check_of_an_async_tool_takes_plain_functions(desk: Forge) -> None:
    async def capture(**args: Any) -> int:  # pragma: no cover - refused at registration
        return 1

    with pytest.raises(ToolDefinitionError, match="capture and compare are plain functions"):
        desk.tool(read=True, name="get_order_checked", guard=skillforge.Check(capture, lambda now, then: True))(aio.get_order)


def test_an_async_tools_pre_check_is_taken_again_before_a_skill_replays_its_call(tmp_path: Path) -> None:
    aio.make_world(tmp_path / "aio.sqlite3")
    policy = {"version": 1}
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", agent=aio.agent)
    same_policy = skillforge.Check(capture=lambda **args: policy["version"], compare=lambda now, then: now == then)
    try:
        aio.TOOLBOX["get_order"] = forge.tool(read=True)(aio.get_order)
        aio.TOOLBOX["refund_order"] = forge.tool(guard=same_policy)(aio.refund_order)

        async def main() -> list[Any]:
            learned = await forge.asolve("Refund order #1001")
            hit = await forge.asolve("Refund order #1002")
            policy["version"] = 2  # the refund policy changed since the skill was learned
            stopped = await forge.asolve("Refund order #1003")
            return [learned, hit, stopped]

        learned, hit, stopped = asyncio.run(main())
    finally:
        aio.TOOLBOX.clear()
    assert "check(refund_order" in (tmp_path / "skills" / f"{learned.learned}.py").read_text()
    assert hit.source == "skill"
    assert stopped.source == "skill+agent" and "pre-check" in (stopped.handover or "")
    assert aio.refunds() == [("1001", 11.0), ("1002", 12.0), ("1003", 13.0)]  # the agent refunded it, once


def test_explain_with_run_never_calls_an_async_write_tool(desk: Forge) -> None:
    learned = asyncio.run(desk.asolve("Refund order #1001"))
    assert learned.learned
    before = aio.refunds()
    explained = desk.explain("Refund order #1002", run=True)
    (bound,) = explained.bound
    assert bound.run is not None and bound.run.outcome == "write", bound.run
    assert bound.run.tool == "refund_order" and bound.run.args == {"order_id": "1002", "amount": 12.0}
    assert aio.refunds() == before  # the refund was not made
    # and from inside a running loop (an async app asking why), the same
    async def main() -> Any:
        return await asyncio.to_thread(desk.explain, "Refund order #1003", run=True)

    inside = asyncio.run(main())
    assert inside.bound[0].run.outcome == "write" and aio.refunds() == before


def test_the_cli_solves_with_async_tools_through_asolve(desk: Forge, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "aiocli.py").write_text(
        "from skillforge import Forge\nfrom tests.toolsets import aio\n"
        f"forge = Forge(skills_dir={str(tmp_path / 'skills')!r}, state_dir={str(tmp_path / 'state3')!r}, agent=aio.agent)\n"
        "aio.TOOLBOX['get_order'] = forge.tool(read=True)(aio.get_order)\naio.TOOLBOX['refund_order'] = forge.tool(aio.refund_order)\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "aiocli", raising=False)
    first = CliRunner().invoke(cli, ["solve", "Refund order #1004", "--app", "aiocli:forge"])
    assert first.exit_code == 0 and "source: agent" in first.output and "learned:" in first.output, first.output
    second = CliRunner().invoke(cli, ["solve", "Refund order #1005", "--app", "aiocli:forge"])
    assert second.exit_code == 0 and "source: skill" in second.output, second.output
    assert aio.refunds() == [("1004", 14.0), ("1005", 15.0)]
