"""Text that names what a run read, and reads that fed nothing after the last write.

An order id said in passing ("(same as #W12)") feeds no argument but names an order the run read
(the customer's orders list it): it is a slot the skill checks against what it reads, so runs that
name other orders make one skill, and a task naming an order that is not the customer's is not
served. Reads after the last write that no argument or answer used are not learned: they changed
nothing, and what they read (a product of the agent's own choosing) would keep every run apart.
Shadowed by the agent alone from the same starting state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillforge import Forge
from skillforge._learning import without_idle_reads
from skillforge._lifting import Rejected, discover_template
from skillforge._names import checked_ids
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from tests.toolsets import sameas
from tests.toolsets._shadowing import open_world
from tests.toolsets._shadowing import shadowed as shadowed_in

TOOLS = {
    "find_customer": ToolRef(module="tests.toolsets.sameas", qualname="find_customer", read=True, params=("email",)),
    "get_order": ToolRef(module="tests.toolsets.sameas", qualname="get_order", read=True, params=("order_id",)),
    "get_product": ToolRef(module="tests.toolsets.sameas", qualname="get_product", read=True, params=("product_id",)),
    "ship_to": ToolRef(module="tests.toolsets.sameas", qualname="ship_to", params=("order_id", "address")),
}
TASK = "I'm ana@example.com. Ship order #W11 to 5 Oak Lane (same as #W12)."


def traj(calls: list[tuple[str, dict[str, Any], Any]], output: Any, task: str = TASK) -> Trajectory:
    return Trajectory(
        task=task, calls=[Call(tool=t, args=a, result=r) for t, a, r in calls], outcome=Outcome(ok=True, output=output), tools=TOOLS
    )


CUSTOMER = ("find_customer", {"email": "ana@example.com"}, {"id": "c1", "orders": ["#W11", "#W12"]})
ORDER = ("get_order", {"order_id": "#W11"}, {"id": "#W11", "customer": "c1", "status": "pending", "address": "1 Elm Street"})
SHIP = ("ship_to", {"order_id": "#W11", "address": "5 Oak Lane"}, {"order_id": "#W11", "address": "5 Oak Lane"})
PRODUCT = ("get_product", {"product_id": "P1"}, {"id": "P1", "name": "Kettle"})


# -- on runs alone ---------------------------------------------------------------


def test_an_id_the_run_read_is_a_checked_slot_named_after_where_it_was_read() -> None:
    template = discover_template(traj([CUSTOMER, ORDER, SHIP], "Order #W11 now ships to 5 Oak Lane."))
    assert not isinstance(template, Rejected)
    assert template.text.endswith("(same as {order}).")
    assert template.bind("I'm ana@example.com. Ship order #W11 to 5 Oak Lane (same as #W14).")["order"] == "#W14"
    # an id that no read returned stays literal text: nothing ties it to what the run saw
    other = traj([CUSTOMER, ORDER, SHIP], "Order #W11 now ships to 5 Oak Lane.", task=TASK.replace("#W12", "#W99"))
    assert checked_ids(discover_template(other), other).text.endswith("(same as #W99).")


def test_reads_after_the_last_write_that_fed_nothing_are_left_out() -> None:
    run = traj([CUSTOMER, ORDER, SHIP, PRODUCT], "Order #W11 now ships to 5 Oak Lane.")
    assert [c.tool for c in without_idle_reads(run).calls] == ["find_customer", "get_order", "ship_to"]
    assert without_idle_reads(run).hash != run.hash
    # a read that fed only a read that fed nothing fed nothing either
    chain = traj([CUSTOMER, ORDER, SHIP, PRODUCT, ("get_order", {"order_id": "P1"}, {"id": "P1"})], "Done.")
    assert [c.tool for c in without_idle_reads(chain).calls] == ["find_customer", "get_order", "ship_to"]


@pytest.mark.parametrize(
    ("calls", "output", "why"),
    [
        ([CUSTOMER, ORDER, SHIP, PRODUCT], "Order #W11 now ships to 5 Oak Lane. You might like our Kettle.", "the answer quotes it"),
        ([CUSTOMER, ORDER, PRODUCT], "Your order #W11 is pending.", "the run wrote nothing: its reads are what it answers from"),
        ([CUSTOMER, ORDER, SHIP, PRODUCT, ("get_order", {"order_id": "P1"}, {"id": "P1", "status": "in stock"})], "Done: in stock.",
         "a later call uses it"),
        ([CUSTOMER, SHIP, ORDER], "Done: order #W11 is pending.", "the answer quotes what it read"),
    ],
)
def test_reads_that_feed_the_answer_or_a_later_call_or_a_run_without_writes_are_kept(calls: Any, output: str, why: str) -> None:
    run = traj(calls, output)
    kept = without_idle_reads(run)
    assert kept == run, why


def test_a_failed_read_after_the_write_is_kept() -> None:
    failed = Call(tool="get_product", args={"product_id": "P9"}, error="LookupError: no product P9")
    run = traj([CUSTOMER, ORDER, SHIP], "Order #W11 now ships to 5 Oak Lane.")
    run = run.model_copy(update={"calls": [*run.calls, failed]})
    assert without_idle_reads(run) == run


# -- a Forge on a real SQLite shop, shadowed by its agent ---------------------------


@pytest.fixture
def world(tmp_path: Path) -> Any:
    forge = open_world(sameas, tmp_path)
    yield forge, tmp_path
    sameas.TOOLBOX.clear()


def shadowed(forge: Forge, tmp: Path, task: str) -> tuple[Any, bool]:
    return shadowed_in(sameas, forge, tmp, task)


def test_tasks_naming_other_orders_make_one_skill_that_checks_the_order_named(world: Any) -> None:
    forge, tmp = world
    learned_from = [("ana", "5 Oak Lane"), ("bo", "7 Pine Road"), ("cy", "3 Hill Road"), ("di", "8 Dock Street"), ("ed", "2 Sea View")]
    for k, (name, address) in enumerate(learned_from, start=1):
        result, same = shadowed(forge, tmp, f"I'm {name}@example.com. Ship order #W{k}1 to {address} (same as #W{k}2).")
        assert result.source in ("agent", "skill+agent") and same  # after the first: a guard on the customer hands over
    files = sorted(p.name for p in (tmp / "skills").glob("*.py") if p.name != "__init__.py")
    assert len(files) == 1, files
    source = (tmp / "skills" / files[0]).read_text()
    assert "get_product" not in source.split("SKILL = ", 1)[0] and "get_product(" not in source  # the idle read is not learned
    assert "require(order in customer['orders']" in source, source
    assert "require(order != order_id" in source or "require(order_id != order" in source, source

    # another customer, another order named: served by the skill, as the agent would have
    result, same = shadowed(forge, tmp, "I'm fay@example.com. Ship order #W61 to 6 Mill Lane (same as #W62).")
    assert (result.source, same) == ("skill", True)
    assert [c.tool for c in result.calls] == ["find_customer", "get_order", "ship_to"]

    # naming the very order the task changes: the agent refuses, and the skill hands over before its write
    result, same = shadowed(forge, tmp, "I'm fay@example.com. Ship order #W61 to 6 Mill Lane (same as #W61).")
    assert same and result.source != "skill"
    assert result.output == "Order #W61 is not another of your orders; I changed nothing."

    # naming an order that is not the customer's: the agent changes nothing, and so does solve()
    result, same = shadowed(forge, tmp, "I'm gus@example.com. Ship order #W71 to 8 Dock Street (same as #W12).")
    assert same and result.source != "skill"
    assert result.output == "Order #W12 is not another of your orders; I changed nothing."
    assert ("#W71", "c7", "pending", "7 Elm Street") in sameas.snapshot()
