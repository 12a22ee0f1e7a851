"""Never replay blind: worlds that differ in what the agent's decision hinges on.

For each workflow a skill is learned in an ordinary world; then a world differs in
one decision-relevant field (order already refunded, account locked, item out of
stock, address already changed). The skill must stop before its write, the agent
must take over without repeating a write, and the result must be what the agent
alone does in that world. Every skill-served result is also checked against the
agent's own run: a difference is a *wrong replay*, and the count must stay 0.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from skillforge.demo import desk

WRITES = {"refund_payment", "update_shipping_address", "update_email", "send_replacement"}

# (workflow, learning task, adversarial task, SQL that makes the adversarial world)
CASES = [
    ("refund", "Refund order #1003", "Refund order #1004", "UPDATE orders SET status = 'refunded' WHERE id = '1004'"),
    ("email", "Change the email of customer C-104 to a1@example.org", "Change the email of customer C-105 to b2@example.org",
     "UPDATE customers SET status = 'locked' WHERE id = 'C-105'"),
    ("replacement", "Send a replacement for order #1006", "Send a replacement for order #1019",
     "UPDATE stock SET available = 0 WHERE sku = 'MUG-1'"),
    ("address", "Please ship order #1006 to 1 Elm Street, Lakeside instead.",
     "Please ship order #1019 to 2 Mill Lane, Fairview instead.",
     "UPDATE orders SET address_changed = 1 WHERE id = '1019'"),
    ("address-delivered", "Please ship order #1006 to 1 Elm Street, Lakeside instead.",
     "Please ship order #1019 to 2 Mill Lane, Fairview instead.",
     "UPDATE orders SET status = 'delivered' WHERE id = '1019'"),
]


def _world(base: Path, dst: Path, sql: str | None) -> Path:
    shutil.copyfile(base, dst)
    if sql:
        conn = sqlite3.connect(dst)
        conn.execute(sql)
        conn.commit()
        conn.close()
    return dst


def _writes(db: Path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(db)
    try:
        return {
            "refunds": conn.execute("SELECT order_id, payment_id, amount FROM refunds ORDER BY id").fetchall(),
            "address_changes": conn.execute("SELECT order_id, new FROM address_changes ORDER BY id").fetchall(),
            "replacements": conn.execute("SELECT order_id, sku FROM replacements ORDER BY id").fetchall(),
            "emails": conn.execute("SELECT id, email FROM customers ORDER BY id").fetchall(),
        }
    finally:
        conn.close()


class ReplayAudit:
    """Runs a task with skills and with the agent alone in twin worlds, and counts wrong replays."""

    def __init__(self, make_forge, tmp_path: Path, base: Path) -> None:
        self.make_forge = make_forge
        self.tmp = tmp_path
        self.base = base
        self.skilled = make_forge()
        self.wrong_replays = 0
        self.n = 0

    def solve(self, task: str, sql: str | None = None):
        self.n += 1
        with_skills = _world(self.base, self.tmp / f"w{self.n}-skills.sqlite3", sql)
        alone = _world(self.base, self.tmp / f"w{self.n}-agent.sqlite3", sql)
        desk.open_desk(with_skills)
        result = self.skilled.solve(task)
        desk.open_desk(alone)
        reference = self.make_forge(learn=False).solve(task)
        same = (
            [(c.tool, c.args) for c in result.calls if c.error is None]
            == [(c.tool, c.args) for c in reference.calls if c.error is None]
            and result.output == reference.output
            and _writes(with_skills) == _writes(alone)
        )
        if not same and result.source != "agent":
            self.wrong_replays += 1
        return result, reference


@pytest.mark.parametrize(("workflow", "learn", "task", "sql"), CASES, ids=[c[0] for c in CASES])
def test_a_decision_relevant_difference_stops_the_skill_before_its_write(
    workflow: str, learn: str, task: str, sql: str, desk_db: Path, make_forge, tmp_path: Path
) -> None:
    audit = ReplayAudit(make_forge, tmp_path, desk_db)
    learned, _ = audit.solve(learn)
    assert learned.learned, learned.not_learned

    result, reference = audit.solve(task, sql)
    assert result.source == "skill+agent", result
    assert "guard failed" in result.handover
    assert result.handover_at >= 1
    assert all(c.tool not in WRITES for c in result.calls[: result.handover_at])  # stopped before any write
    assert result.output == reference.output  # what the agent alone says in this world
    writes = [c.tool for c in result.calls if c.tool in WRITES]
    assert writes == [c.tool for c in reference.calls if c.tool in WRITES]  # no write repeated, none extra
    assert result.llm_calls < reference.llm_calls  # it continued, it did not start over

    # the same circumstance again is served by the variant it learned, without the agent
    again, _ = audit.solve(task, sql)
    assert again.source == "skill" and again.llm_calls == 0
    assert audit.wrong_replays == 0


def test_wrong_replays_stay_zero_over_a_mixed_stream(desk_db: Path, make_forge, tmp_path: Path) -> None:
    audit = ReplayAudit(make_forge, tmp_path, desk_db)
    stream = [(learn, None) for _w, learn, _t, _s in CASES] + [(task, sql) for _w, _l, task, sql in CASES]
    stream += [
        ("Refund order #1002", None),  # processing
        ("Refund order #1002", "UPDATE orders SET status = 'refunded' WHERE id = '1002'"),
        ("Where is my order #1001?", None),
        ("Where is my order #1002?", None),
        ("Where is my order #1002?", "UPDATE orders SET status = 'refunded' WHERE id = '1002'"),
        ("Send a replacement for order #1001", None),  # its first item is out of stock
        ("Send a replacement for order #1003", "UPDATE stock SET available = 0 WHERE sku = 'MUG-1'"),
        ("Change the email of customer C-110 to z9@example.org", "UPDATE customers SET status = 'locked' WHERE id = 'C-110'"),
    ]
    served = 0
    for task, sql in stream * 2:
        result, _ = audit.solve(task, sql)
        served += result.source == "skill"
    assert audit.wrong_replays == 0
    assert served >= len(stream)  # the second pass is served from skills


def test_a_guard_a_person_removes_is_gone_and_the_skill_replays_blind(desk_db: Path, make_forge, tmp_path: Path) -> None:
    """The counter is not vacuous: without its guard, the refund skill refunds twice."""
    audit = ReplayAudit(make_forge, tmp_path, desk_db)
    audit.solve("Refund order #1003")
    path = audit.skilled.skills_dir / "refund_order.py"
    path.write_text("\n".join(line for line in path.read_text().splitlines() if "order['status']" not in line) + "\n")
    audit.skilled.reload()
    result, _ = audit.solve("Refund order #1004", "UPDATE orders SET status = 'refunded' WHERE id = '1004'")
    assert result.source == "skill"
    assert audit.wrong_replays == 1
