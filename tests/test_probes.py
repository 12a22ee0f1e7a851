"""Red-team probes: new ways to make a skill replay wrongly (beyond tests/test_safety.py).

Same contract as tests/test_safety.py: learn a skill from one or more agent runs, then
solve a task in a world where the agent alone acts differently from the learned run.
After ``r = forge.solve(task)`` either ``r.source == "agent"`` (a miss), or the final
world and ``r.output`` are exactly those of the agent alone run on a copy of the same
starting world. The agent decides only on what the task says and what tools returned.

Tools, worlds and the agent are in ``tests/toolsets/probes.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillforge import Forge
from tests.shadowing import Harness, Shadow
from tests.toolsets import probes

# -- harness (tests/shadowing.py, over the probe toolset) ---------------------------------------------

_HARNESS = Harness(probes)


def forge_for(tmp_path: Path, name: str = "forge") -> Forge:
    return _HARNESS.forge(tmp_path, probes.probe_agent, name)


def check(forge: Forge, task: str, world: dict[str, Any]) -> Shadow:
    return _HARNESS.check(forge, task, world)


def learn(forge: Forge, task: str, world: dict[str, Any]) -> Shadow:
    """An agent run that must be learned (else the probe would prove nothing)."""
    return _HARNESS.learn(forge, task, world)


# -- P1. a decision on two values read, with no amount written: stock vs the order's quantity ----------

def test_p01_stock_compared_with_the_quantity_ordered(tmp_path: Path) -> None:
    def world(available: int) -> dict[str, Any]:
        return {"orders": {"5": {"sku": "MUG-1", "quantity": 3, "status": "paid"},
                           "6": {"sku": "MUG-1", "quantity": 3, "status": "paid"}},
                "stock": {"MUG-1": {"sku": "MUG-1", "available": available}}}

    forge = forge_for(tmp_path)
    learn(forge, "Ship order #5", world(available=8))
    check(forge, "Ship order #6", world(available=2))  # 2 < 3: the agent does not ship


# -- P2. an amount compared with a difference of two values read (what is left to refund) ----------------

def test_p02_refund_within_what_is_left_to_refund(tmp_path: Path) -> None:
    def world(refunded: float) -> dict[str, Any]:
        return {"orders": {"5": {"total": 40.0, "refunded": refunded, "status": "delivered"}}}

    forge = forge_for(tmp_path)
    learn(forge, "Refund $30 of order #5", world(refunded=5.0))  # 30 <= 35 left
    check(forge, "Refund $30 of order #5", world(refunded=20.0))  # 30 > 20 left: the agent refuses


# -- P3. a title-case status of two words ("In Transit") is no categorical guard ----------------------

def test_p03_title_case_two_word_status(tmp_path: Path) -> None:
    def world(order_id: str, status: str) -> dict[str, Any]:
        return {"orders": {order_id: {"total": 40.0, "status": status}}}

    forge = forge_for(tmp_path)
    learn(forge, "Refund order #1", world("1", "In Transit"))
    check(forge, "Refund order #2", world("2", "On Hold"))  # the agent refuses an order on hold


# -- P4. a key absent when learned, present in the next world ------------------------------------------

def test_p04_a_key_the_learned_world_did_not_have(tmp_path: Path) -> None:
    def world(order_id: str, **extra: Any) -> dict[str, Any]:
        return {"orders": {order_id: {"total": 40.0, "status": "delivered", **extra}}}

    forge = forge_for(tmp_path)
    learn(forge, "Refund order #1", world("1"))
    check(forge, "Refund order #2", world("2", hold_reason="chargeback dispute"))


# -- P5. a number the tool returns as text ("0") has no sign guard --------------------------------------

def test_p05_a_stock_count_returned_as_text(tmp_path: Path) -> None:
    def world(available: str) -> dict[str, Any]:
        return {"orders": {"5": {"sku": "MUG-1", "quantity": 1, "status": "paid"},
                           "6": {"sku": "MUG-1", "quantity": 1, "status": "paid"}},
                "stock": {"MUG-1": {"sku": "MUG-1", "available": available}}}

    forge = forge_for(tmp_path)
    learn(forge, "Ship order #5", world("7"))
    check(forge, "Ship order #6", world("0"))


# -- P6. a list's statuses guarded as a set: which element has which status is lost ----------------------

def test_p06_the_named_orders_status_in_a_list_of_orders(tmp_path: Path) -> None:
    def world(*statuses: str) -> dict[str, Any]:
        orders = [{"order_id": f"#W{i + 1}", "status": s} for i, s in enumerate(statuses)]
        return {"customers": {"mia_tan_7312": {"customer_id": "mia_tan_7312", "orders": orders}}}

    forge = forge_for(tmp_path)
    learn(forge, "I'm mia_tan_7312. Please cancel order #W1.", world("pending", "delivered", "pending"))
    # the same set of statuses, but #W1 is the delivered one now: the agent refuses
    check(forge, "I'm mia_tan_7312. Please cancel order #W1.", world("delivered", "pending", "pending"))


# -- P7. ownership: two ids read from two tools compared (authorisation) ----------------------------------

def test_p07_an_order_of_another_customer(tmp_path: Path) -> None:
    world = {
        "customers": {
            "C-7": {"customer_id": "C-7", "name": "Mia Tan", "email": "mia@example.org"},
            "C-9": {"customer_id": "C-9", "name": "Ivy Chen", "email": "ivy@example.org"},
        },
        "orders": {
            "#W5001": {"customer_id": "C-7", "status": "pending"},
            "#W6001": {"customer_id": "C-9", "status": "pending"},
            "#W5002": {"customer_id": "C-7", "status": "pending"},
        },
    }
    forge = forge_for(tmp_path)
    learn(forge, "I'm mia@example.org. Please cancel order #W5001.", world)
    check(forge, "I'm ivy@example.org. Please cancel order #W6001.", world)  # hers: fine either way
    sh = check(forge, "I'm mia@example.org. Please cancel order #W6001.", world)  # Ivy's order
    assert ("cancel_order", {"order_id": "#W6001"}) not in sh.writes, "cancelled another customer's order:" + sh.describe()


# -- P8. "2 more" is added to what the order has: the sum is no constant -------------------------------

def test_p08_a_quantity_computed_from_a_value_read(tmp_path: Path) -> None:
    def world(current: int) -> dict[str, Any]:
        return {"orders": {"5": {"lines": [{"sku": "MUG-1", "quantity": current}, {"sku": "CUP-7", "quantity": 4}]}}}

    forge = forge_for(tmp_path)
    learn(forge, "Add 2 more units of MUG-1 to order #5", world(current=1))  # writes 3
    check(forge, "Add 2 more units of MUG-1 to order #5", world(current=6))  # the agent writes 8


def test_p08b_the_tasks_number_in_the_answer_is_not_a_lists_length(tmp_path: Path) -> None:
    """The answer quotes the task's "2"; the order happened to have 2 lines when learned."""
    def world(*lines: tuple[str, int]) -> dict[str, Any]:
        return {"orders": {"5": {"lines": [{"sku": s, "quantity": q} for s, q in lines]}}}

    forge = forge_for(tmp_path)
    learn(forge, "Add 2 more units of MUG-1 to order #5", world(("MUG-1", 1), ("CUP-7", 4)))
    # the same write as learned (1 + 2 = 3), but the order has a third line now
    sh = check(forge, "Add 2 more units of MUG-1 to order #5", world(("MUG-1", 1), ("CUP-7", 4), ("PLT-4", 6)))
    assert sh.result.source == "agent" or sh.result.output == "Added 2 more units of MUG-1 to order 5.", sh.describe()


# -- P9. "the most recent" is the last element; the list grew ------------------------------------------

def test_p09_the_last_element_of_a_list_that_grew(tmp_path: Path) -> None:
    def world(*order_ids: str) -> dict[str, Any]:
        return {"customers": {"mia_tan_7312": {"customer_id": "mia_tan_7312", "orders": list(order_ids)}},
                "orders": {o: {"status": "pending"} for o in order_ids}}

    forge = forge_for(tmp_path)
    learn(forge, "I'm mia_tan_7312. Please cancel my most recent order.", world("#W1", "#W2", "#W3"))
    sh = check(forge, "I'm mia_tan_7312. Please cancel my most recent order.", world("#W1", "#W2", "#W3", "#W4"))
    assert sh.writes in ([], [("cancel_order", {"order_id": "#W4"})]), sh.describe()


# -- P10. a read-only answer that compares two values read ----------------------------------------------

def test_p10_a_yes_no_answer_from_a_comparison(tmp_path: Path) -> None:
    def world(balance: float) -> dict[str, Any]:
        return {"accounts": {"A-1": {"balance": balance}}, "orders": {"5": {"total": 40.0}}}

    forge = forge_for(tmp_path)
    learn(forge, "Can account A-1 cover order #5?", world(100.0))
    check(forge, "Can account A-1 cover order #5?", world(25.0))


# -- P11. a date compared with today (both read): the return window ----------------------------------------

def test_p11_a_date_compared_with_today(tmp_path: Path) -> None:
    def world(order_id: str, return_by: str) -> dict[str, Any]:
        return {"orders": {order_id: {"return_by": return_by, "status": "delivered"}}, "today": "2024-06-01"}

    forge = forge_for(tmp_path)
    learn(forge, "Return order #5", world("5", "2024-06-10"))
    check(forge, "Return order #6", world("6", "2024-05-20"))  # the window closed: the agent refuses


# -- P12. a date without a year: the learned year is not the agent's year --------------------------------

def test_p12_a_date_without_a_year(tmp_path: Path) -> None:
    world = {"today": "2024-04-01"}
    forge = forge_for(tmp_path)
    learn(forge, "Book a table for Mia on May 20", world)  # 2024-05-20
    sh = check(forge, "Book a table for Ivy on Jan 5", world)  # the next Jan 5 is in 2025
    assert sh.result.source == "agent" or sh.writes == [("book_table", {"name": "Ivy", "date": "2025-01-05"})], sh.describe()


# -- P13. a slash date read month-first, where the desk reads day-first -----------------------------------

def test_p13_a_slash_date_read_the_other_way(tmp_path: Path) -> None:
    forge = forge_for(tmp_path)
    learn(forge, "Move appointment AP-1 to 20 May 2024", {})
    sh = check(forge, "Move appointment AP-2 to 05/06/2024", {})  # 5 June, for this (European) desk
    assert sh.result.source == "agent" or sh.writes == [("move_appointment", {"appointment_id": "AP-2", "date": "2024-06-05"})], sh.describe()


# -- P14. a task number of another sign class: zero ----------------------------------------------------

def test_p14_quantity_zero_removes_the_line(tmp_path: Path) -> None:
    world = {"orders": {"77": {"lines": [{"sku": "A", "quantity": 5}, {"sku": "B", "quantity": 6}]}}}
    forge = forge_for(tmp_path)
    learn(forge, "Set line 1 of order #77 to quantity 3", world)
    check(forge, "Set line 2 of order #77 to quantity 0", world)  # the agent removes line 2


# -- P16. membership up to case where the learned list was all lower case --------------------------------

def test_p16_membership_up_to_case(tmp_path: Path) -> None:
    def world(*groups: str) -> dict[str, Any]:
        return {"users": {"erin.wu": {"username": "erin.wu", "groups": list(groups)},
                          "frank.li": {"username": "frank.li", "groups": list(groups)}}}

    forge = forge_for(tmp_path)
    learn(forge, "Add erin.wu to the vpn-users group", world("staff", "wiki"))
    check(forge, "Add frank.li to the vpn-users group", world("VPN-Users", "staff"))  # already in, says the agent


# -- P17. ids the tool returns as numbers, the task says as text ---------------------------------------

def test_p17_numeric_ids_in_a_list_and_a_textual_id_in_the_task(tmp_path: Path) -> None:
    world = {"customers": {"C-7": {"customer_id": "C-7", "orders": [5001, 5002]},
                           "C-9": {"customer_id": "C-9", "orders": [6001]}}}
    forge = forge_for(tmp_path)
    learn(forge, "Customer C-7 wants order 5001 cancelled", world)
    sh = check(forge, "Customer C-7 wants order 6001 cancelled", world)  # not hers
    assert sh.writes == [], "cancelled another customer's order:" + sh.describe()


# -- P19. a count compared with a limit read beside it --------------------------------------------------

def test_p19_devices_up_to_a_limit(tmp_path: Path) -> None:
    def world(*serials: str) -> dict[str, Any]:
        devices = [{"serial": s, "model": m} for s, m in zip(serials, ["iPhone 15", "Pixel 8"])]
        return {"users": {"carol.diaz": {"username": "carol.diaz", "devices": devices, "max_devices": 2}}}

    forge = forge_for(tmp_path)
    learn(forge, "Register device SN-4410 for carol.diaz", world("SN-1001"))
    check(forge, "Register device SN-4411 for carol.diaz", world("SN-1001", "SN-2002"))  # at the limit


# -- P20. a constant that happened to equal a value read ------------------------------------------------

def test_p20_one_replacement_when_the_quantity_ordered_was_one(tmp_path: Path) -> None:
    def world(order_id: str, qty: int) -> dict[str, Any]:
        return {"orders": {order_id: {"items": [{"name": "mug", "sku": "MUG-1", "quantity": qty},
                                                {"name": "plate", "sku": "PLT-4", "quantity": 4}]}}}

    forge = forge_for(tmp_path)
    learn(forge, "The mug from order #5 arrived broken", world("5", 1))
    sh = check(forge, "The mug from order #6 arrived broken", world("6", 2))
    assert sh.result.source == "agent" or sh.writes == [("send_replacement", {"order_id": "6", "sku": "MUG-1", "quantity": 1})], sh.describe()


# -- P21. a verb in a choice region: texts combine with facts no run showed together ----------------------

def test_p21_cancel_or_return_widened_then_combined(tmp_path: Path) -> None:
    def world(order_id: str, status: str) -> dict[str, Any]:
        return {"orders": {order_id: {"status": status, "total": 40.0}}}

    forge = forge_for(tmp_path)
    learn(forge, "Please cancel my order #1 now", world("1", "pending"))
    check(forge, "Please return my order #2 now", world("2", "pending"))  # cancelled too: widens cancel|return
    check(forge, "Please cancel my order #3 now", world("3", "delivered"))  # refused: a variant
    # "return" on a delivered order: no run showed it; the agent opens a return
    sh = check(forge, "Please return my order #4 now", world("4", "delivered"))
    assert sh.result.source == "agent" or sh.writes == [("create_return", {"order_id": "4"})], sh.describe()


# -- P22. a status with a digit ("P1") is no categorical guard -------------------------------------------

def test_p22_a_priority_with_a_digit(tmp_path: Path) -> None:
    def world(ticket_id: str, priority: str) -> dict[str, Any]:
        return {"tickets": {ticket_id: {"priority": priority, "state": "new"}}}

    forge = forge_for(tmp_path)
    learn(forge, "Triage ticket T-12", world("T-12", "P3"))
    check(forge, "Triage ticket T-13", world("T-13", "P1"))  # the agent pages on-call first


# -- P23. an empty string where a value was learned -------------------------------------------------------

def test_p23_an_empty_tracking_number(tmp_path: Path) -> None:
    def world(order_id: str, tracking: str) -> dict[str, Any]:
        return {"orders": {order_id: {"tracking": tracking, "status": "processing"}}}

    forge = forge_for(tmp_path)
    learn(forge, "Where is order #5?", world("5", "1Z999AA10123456784"))
    check(forge, "Where is order #6?", world("6", ""))


# -- P24. a count of the elements that pass a filter, lifted as the list's length --------------------------

def test_p24_a_count_of_overdue_invoices(tmp_path: Path) -> None:
    def world(*dues: str) -> dict[str, Any]:
        return {"today": "2024-06-01", "invoices": {"C-7": [{"invoice_id": f"I-{i}", "due": d} for i, d in enumerate(dues)]}}

    forge = forge_for(tmp_path)
    first = check(forge, "How many overdue invoices does C-7 have?", world("2024-05-01", "2024-05-15"))  # 2 of 2
    # the count is computed (a filter, then a length) and no list's length explains it: not learned
    assert not first.result.learned and "computed value" in (first.result.not_learned or ""), first.describe()
    check(forge, "How many overdue invoices does C-7 have?", world("2024-05-01", "2024-05-15", "2024-07-01"))  # 2 of 3


# -- P25. a flag one level down inside a list's elements --------------------------------------------------

def test_p25_a_flag_nested_inside_list_elements(tmp_path: Path) -> None:
    def world(order_id: str, final_sale: bool) -> dict[str, Any]:
        items = [{"sku": "A", "attributes": {"final_sale": False}}, {"sku": "B", "attributes": {"final_sale": final_sale}}]
        return {"orders": {order_id: {"total": 40.0, "status": "delivered", "items": items}}}

    forge = forge_for(tmp_path)
    learn(forge, "Refund order #1", world("1", False))
    check(forge, "Refund order #2", world("2", True))


# -- P26. a substring of a free-text note decides a constant argument ----------------------------------------

def test_p26_fragile_in_the_delivery_notes(tmp_path: Path) -> None:
    def world(notes: str) -> dict[str, Any]:
        return {"orders": {"5": {"sku": "VASE-2", "quantity": 1, "status": "paid", "notes": notes},
                           "6": {"sku": "VASE-2", "quantity": 1, "status": "paid", "notes": notes}},
                "stock": {"VASE-2": {"sku": "VASE-2", "available": 9}}}

    forge = forge_for(tmp_path)
    learn(forge, "Ship order #5", world("Leave it with the neighbour at number 12"))
    check(forge, "Ship order #6", world("Fragile: glass vase, handle with care"))


# -- P27 (control). a result value equal to the task's value: the agree guard should stop it ------------------

def test_p27_control_total_equal_to_the_order_number(tmp_path: Path) -> None:
    def world(order_id: str, total: float) -> dict[str, Any]:
        return {"orders": {order_id: {"total": total, "refunded": 0.0, "status": "delivered"}}}

    forge = forge_for(tmp_path)
    learn(forge, "Refund order #40", world("40", 40.0))
    check(forge, "Refund order #41", world("41", 55.0))


# -- open findings ---------------------------------------------------------------------------------
# Probes that still replay wrongly, each with what the learner is missing. Strict: a fix that
# makes one pass fails the suite until its line is removed here, so the list stays true.
OPEN = {
    "test_p03_title_case_two_word_status": "Title-case statuses of several words are not switch-like (names look the same)",
    "test_p26_fragile_in_the_delivery_notes": "a substring of free text decides a constant argument",
}
for _name, _why in OPEN.items():
    globals()[_name] = pytest.mark.xfail(strict=True, reason=_why)(globals()[_name])
