"""The tau-bench retail benchmark (bench.tau_retail): tools, agent and protocol agree with the gold end states."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from bench import tau_retail
from bench.tau import agent, tools
from bench.tau.protocol import SeedReport, run_seed
from bench.tau.tasks import TauTask, gold_world, load_tasks, task_text, untraceable


def _task(task_id: str) -> TauTask:
    return next(t for t in load_tasks("all") if t.id == task_id)


def _alone(text: str) -> tuple[tools.Database, list[agent.Step]]:
    with tools.using(tools.fresh_db()) as db:
        _answer, steps = agent.run(text)
    return db, steps


def _check_counts(r: SeedReport, k: int, n: int) -> None:
    assert (r.k, r.n) == (k, n)
    assert sum(r.sources("learn").values()) == k
    serve = r.sources("serve")
    assert set(serve) <= {"skill", "skill+agent", "agent"}  # no crash
    assert sum(serve.values()) == n
    assert r.requests_saved == serve["skill"]
    assert 0 <= r.ceiling <= n
    assert 1 <= r.intents <= r.skill_files
    assert not any(o.agent_vs_gold for o in r.outcomes)
    assert [o for o in r.outcomes if o.wrong] == []  # every end state equals the gold one
    assert not r.any_wrong


def test_protocol_small_run_has_no_wrong_end_state_and_counts_add_up() -> None:
    r = run_seed(load_tasks("train"), seed=0, k=15, n=15, split="train")
    _check_counts(r, 15, 15)


def test_protocol_serves_and_hands_over_without_a_wrong_end_state() -> None:
    """Single cancels by name and zip, persona dropped: skills serve most (a handover, where one happens, says why)."""
    users = tools.vendored()["users"]
    cancels = [t for t in load_tasks("train") if [a.name for a in t.writes] == ["cancel_pending_order"]
               and users[t.user_id]["email"] not in t.instruction][:16]
    r = run_seed(cancels, seed=0, k=6, n=10, persona=False)
    _check_counts(r, 6, 10)
    served = r.sources("serve")
    assert served["skill"] >= 5
    assert all(o.handover for o in r.phase("serve") if o.source == "skill+agent")


@pytest.mark.parametrize("task_id", [
    "retail-train-0",  # a return
    "retail-train-3",  # an exchange, then a cancel
    "retail-train-5",  # payment change, then a swap to the same item
    "retail-test-0",  # gold with reads too
    "retail-test-106",  # a gold write the database refuses (gift card balance)
])
def test_gold_replay_and_the_agent_alone_end_the_same(task_id: str) -> None:
    task = _task(task_id)
    gold = gold_world(task)
    alone, steps = _alone(task.instruction)
    assert tools.diff_states(alone, gold) == []
    made = [(s.tool, s.args) for s in steps if s.tool in tools.WRITES]
    assert made == [(a.name, a.kwargs) for a in task.writes]  # the gold writes, in order
    assert steps[0].tool in ("find_user_id_by_email", "find_user_id_by_name_zip")
    assert steps[1].tool == "get_user_details"
    refused = [s for s in steps if s.tool in tools.WRITES and isinstance(s.result, str)]
    changed = any(tools.changed(gold)[t] for t in tools.TABLES)
    assert changed == (len(refused) < len(made))


def test_writes_apply_their_effects_and_refusals_change_nothing() -> None:
    with tools.using(tools.fresh_db()) as db:
        order = tools.get_order_details("#W7602708")
        assert isinstance(order, dict) and order["status"] == "pending"
        assert tools.cancel_pending_order("#W7602708", "because") == "Error: invalid reason"
        assert tools.diff_states(db, tools.fresh_db()) == []
        done = tools.cancel_pending_order("#W7602708", "no longer needed")
        assert isinstance(done, dict) and done["status"] == "cancelled" and done["cancel_reason"] == "no longer needed"
        refunds = [p for p in done["payment_history"] if p["transaction_type"] == "refund"]
        assert [p["amount"] for p in refunds] == [p["amount"] for p in order["payment_history"]]
        assert tools.cancel_pending_order("#W7602708", "no longer needed").startswith("Error: non-pending")
        assert order["status"] == "pending"  # results never alias the database
        assert tools.get_user_details("nobody") == "Error: user not found"
    assert tools.vendored()["orders"]["#W7602708"]["status"] == "pending"  # the vendored data never changes


@dataclass(frozen=True)
class _Call:
    tool: str
    args: dict[str, Any]
    result: Any
    error: str | None = None


def test_agent_continues_from_a_transcript_without_repeating_a_write() -> None:
    task = _task("retail-train-3")  # two writes: an exchange, then a cancel
    _db, steps = _alone(task.instruction)
    first_write = next(i for i, s in enumerate(steps) if s.tool in tools.WRITES)
    with tools.using(tools.fresh_db()) as db:
        transcript = [_Call(s.tool, s.args, tools.FUNCTIONS[s.tool](**s.args)) for s in steps[:first_write + 1]]
        _answer, resumed = agent.run(task.instruction, transcript=transcript)
    made = [s for s in resumed if not s.from_transcript]
    assert [s.tool for s in made if s.tool in tools.WRITES] == ["cancel_pending_order"]
    assert all(s.from_transcript for s in resumed[:first_write + 1])
    assert tools.diff_states(db, gold_world(task)) == []


def test_traceability_rule() -> None:
    task = _task("retail-train-0")
    _db, steps = _alone(task.instruction)
    reads = [s.result for s in steps if s.tool in tools.READS]
    assert untraceable(task, reads) == []
    assert untraceable(task, []) == [  # item ids come only from the order's details
        "return_delivered_order_items.item_ids='9624127908'", "return_delivered_order_items.item_ids='8917609800'"]
    assert task_text(task, persona=False) == task.instruction.replace("You are logical, independent, relaxing, polite. ", "")


def test_cli_prints_the_table_and_exits_zero(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    report = tmp_path / "report.json"
    assert tau_retail.main(["--k", "4", "--n", "4", "--seeds", "1", "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "seed" in out and "mean" in out and "ceiling" in out and "served inside the ceiling:" in out
    assert report.exists()


def test_single_item_exchanges_bind_one_template_and_never_end_wrong() -> None:
    """Exchanges of one item, customers found by email: the item and the variant asked for are picked by
    what the task says (name, options, the change), so every later exchange binds a learned skill."""
    users = tools.vendored()["users"]
    exchanges = [t for t in load_tasks("train") if [a.name for a in t.writes] == ["exchange_delivered_order_items"]
                 and len(t.writes[0].kwargs["item_ids"]) == 1 and users[t.user_id]["email"] in t.instruction][:24]
    r = run_seed(exchanges, seed=0, k=14, n=10)
    _check_counts(r, 14, 10)
    served = r.sources("serve")
    assert served["agent"] == 0 and served["skill"] >= 1  # each bound a skill; guards decided the rest
    assert all(o.handover for o in r.phase("serve") if o.source == "skill+agent")
    assert r.skill_files <= 3


def test_returns_of_any_number_of_items_share_one_list_skill() -> None:
    """Returns of one to four items, customers found by name and zip: a run with two or more items
    learns one list parameter (``item_names``), so returns of another count bind the same skill."""
    users = tools.vendored()["users"]
    returns = [t for t in load_tasks("train") if [a.name for a in t.writes] == ["return_delivered_order_items"]
               and users[t.user_id]["email"] not in t.instruction][:30]
    r = run_seed(returns, seed=0, k=15, n=15)
    _check_counts(r, 15, 15)
    served = [o for o in r.phase("serve") if o.source == "skill"]
    counts = {len(next(t for t in returns if t.id == o.task_id).writes[0].kwargs["item_ids"]) for o in served}
    assert len(served) >= 12 and len({o.skill for o in served}) == 1  # one skill ...
    assert len(counts) >= 3  # ... for one, two, three or four items
    assert r.intents == 1 and r.skill_files <= 2  # the one-item skill learned first is folded into the list skill
