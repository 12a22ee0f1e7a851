"""An amount against what is left of a number read: a total less what was refunded of it.

Probe P02 (``tests/test_probes.py``): a skill learned refunding $30 of an order whose total was 40
and 5 of it already refunded replayed the refund where 20 had been refunded, though the agent
refuses to refund more than is left. The amount was compared with each number read (less than the
total, more than what was refunded: true in both worlds), never with their difference. Each amount a
write is given is now also compared with what is left of each number of a record once another,
smaller number of the same record is taken from it.
"""

from __future__ import annotations

from typing import Any

from skillforge._guards import derive_guards, observe
from skillforge._spec import MINUS, Const, Guard, Param
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from tests.test_learning import learn as learn_runs

TOOLS = {
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
    "refund": ToolRef(module="shop", qualname="refund", params=("order_id", "amount")),
}


def refunded(amount: float, total: float, already: float) -> Trajectory:
    return Trajectory(
        task=f"Refund ${amount:.2f} of order #5",
        calls=[Call(tool="get_order", args={"order_id": "5"}, result={"total": total, "refunded": already, "status": "delivered"}),
               Call(tool="refund", args={"order_id": "5", "amount": amount}, result={"status": "refunded"})],
        outcome=Outcome(ok=True, output="Refunded."),
        tools=TOOLS,
    )


ARGS = [(("order_id", Param("order_id")),), (("order_id", Param("order_id")), ("amount", Param("amount")))]


def left_facts(run: Trajectory, amount: float) -> list[Guard]:
    guards = derive_guards(run, ARGS, Const("Refunded."), {"order_id": "5", "amount": amount})[0]
    return [g for g in guards if g.kind == "cmp" and g.value[3:] and type(g.value[3]) is tuple]


def test_an_amount_is_compared_with_what_is_left_of_the_total() -> None:
    [fact] = left_facts(refunded(30.0, 40.0, 5.0), 30.0)
    assert fact.path == ("total",) and fact.value[2] == -1 and fact.value[3] == (MINUS, ("refunded",))
    # observed in another world: 30 against the 20 left
    results = [{"total": 40.0, "refunded": 20.0}, {"status": "refunded"}]
    assert observe(fact, results[0], {"amount": 30.0}, results) == 1


def test_the_skill_checks_it_and_a_refund_of_more_than_is_left_stops_it() -> None:
    spec, source = learn_runs([refunded(30.0, 40.0, 5.0)], "refund_order")
    assert source is not None, spec
    assert "require(amount < (order['total'] - order['refunded'])" in source


def test_a_number_less_than_the_other_leaves_nothing_to_compare() -> None:
    # what is left is only ever of the greater: the order's 5 refunded less its 40 total is no fact
    facts = left_facts(refunded(30.0, 40.0, 5.0), 30.0)
    assert [f.path for f in facts] == [("total",)]


def test_runs_on_both_sides_of_what_is_left_are_two_decisions() -> None:
    # one run refunded within what was left, another (a refund of all that was left) equal to it:
    # the fact took two values, each kept as the runs showed it, never a third
    spec, source = learn_runs([refunded(30.0, 40.0, 5.0), refunded(35.0, 40.0, 5.0)], "refund_order")
    assert source is not None, spec
    assert "(order['total'] - order['refunded'])" in source
