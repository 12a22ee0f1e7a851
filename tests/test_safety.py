"""Wrong replays (issue #9): a skill must never serve a task differently from the agent.

Each test learns a skill from one or two agent runs, then solves a task in a world
where the agent alone acts differently from the learned run. The assertion is
implementation-independent: after ``r = forge.solve(task)`` either ``r.source ==
"agent"`` (a miss), or the final world and ``r.output`` are those of the agent alone
run on a copy of the same starting world (``shadow``). Where a skill *should* still
serve, a served result must be the agent's. Nothing here looks at generated code.

The tools, worlds and agents are in ``tests/toolsets/safety.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from skillforge import Forge
from tests.shadowing import Harness, Shadow
from tests.toolsets import safety


# -- harness (tests/shadowing.py, over the safety toolset) --------------------------------------------

_HARNESS = Harness(safety)


def make_forge(tmp_path: Path, agent_factory: Callable[[dict[str, Any]], Callable[..., Any]], name: str = "forge") -> Forge:
    """A Forge over every tool of the safety toolset, its agent built from the registered tools."""
    return _HARNESS.forge(tmp_path, agent_factory, name)


def shadow(forge: Forge, agent: Callable[..., Any], task: str, world: dict[str, Any]) -> Shadow:
    """Solve ``task`` with ``forge`` in a copy of ``world``, and with ``agent`` alone in another copy."""
    return _HARNESS.shadow(forge, agent, task, world)


def check(forge: Forge, task: str, world: dict[str, Any]) -> Shadow:
    """``shadow`` with the forge's own agent, asserting the result is what the agent alone does."""
    return _HARNESS.check(forge, task, world)


def twice(writes: list) -> list:
    """Writes made more than once."""
    return [w for i, w in enumerate(writes) if w in writes[:i]]


def readded(start: dict[str, Any], writes: list) -> list:
    """Group additions of a user who was already a member in the starting world (a member added twice)."""
    return [
        w for w in writes
        if w[0] == "add_to_group" and safety.is_member(start["users"][w[1]["username"]], w[1]["group"])
    ]


# -- worlds ------------------------------------------------------------------------------------------

def user(i: int, username: str, groups: Any, **extra: Any) -> dict[str, Any]:
    first = username.split(".")[0]
    return {
        "id": f"U-{i}", "username": username, "name": username.replace(".", " ").title(),
        "email": f"{first}@example.org", "office": "Berlin", "status": "active", "groups": groups, **extra,
    }


def order(order_id: str, **fields: Any) -> dict[str, Any]:
    return {"order_id": order_id, "status": "delivered", "total": 40.0, "payment_id": f"P-{order_id}", **fields}


def shop(*orders: dict[str, Any], **rest: Any) -> dict[str, Any]:
    return {"orders": {o["order_id"]: o for o in orders}, **rest}


# -- 1. the decision depended on a relation the guards do not see -------------------------------------

MEMBERSHIP_SHAPES = {
    "list": lambda *groups: list(groups),
    "dict-keys": lambda *groups: {g: {"since": f"2023-0{i + 1}-01"} for i, g in enumerate(groups)},
    "list-of-dicts": lambda *groups: [{"name": g, "role": "member"} for g in groups],
}


@pytest.mark.parametrize("shape", MEMBERSHIP_SHAPES)
@pytest.mark.parametrize("learned_as", ["member", "not-member"])
def test_1_membership_decides_and_the_skill_must_see_it(shape: str, learned_as: str, tmp_path: Path) -> None:
    groups = MEMBERSHIP_SHAPES[shape]
    member = {"erin.wu": groups("vpn-users", "staff", "sales-crm"), "frank.li": groups("vpn-users", "staff")}
    not_member = {"erin.wu": groups("staff", "wiki"), "frank.li": groups("staff", "wiki")}
    learn_world = member if learned_as == "member" else not_member
    serve_world = not_member if learned_as == "member" else member

    def world(groups_of: dict[str, Any]) -> dict[str, Any]:
        return {"users": {u: user(i, u, g) for i, (u, g) in enumerate(groups_of.items())}}

    forge = make_forge(tmp_path, safety.group_agent)
    check(forge, "Add erin.wu to the vpn-users group", world(learn_world))
    # another user for the same group, then the task (another group): the agent alone
    # adds where the learned run answered "already in", and answers "already in" where it added
    for task in ["Add frank.li to the vpn-users group", "Add erin.wu to the sales-crm group"]:
        sh = shadow(forge, forge.agent, task, world(serve_world))
        assert not twice(sh.writes), "the same write was made twice:" + sh.describe()
        assert not readded(world(serve_world), sh.writes), "a member was added again:" + sh.describe()
        sh.assert_as_agent()


# -- 2. slots swallow text ---------------------------------------------------------------------------

def test_2_a_slot_does_not_swallow_the_rest_of_the_request(tmp_path: Path) -> None:
    world = {"users": {u: user(i, u, ["staff"]) for i, u in enumerate(["carol.diaz", "dan.ito", "erin.wu"])}}
    forge = make_forge(tmp_path, safety.helpdesk_agent)
    check(forge, "Reset the password for carol.diaz", world)
    # the username slot binds the whole tail; what the agent did for it (a group on the side)
    # must not be replayed for a tail that says something else
    check(forge, "Reset the password for dan.ito and add him to the vpn-users group", world)
    sh = check(forge, "Reset the password for erin.wu. Thanks", world)
    assert ("add_to_group", {"username": "erin.wu", "group": "vpn-users"}) not in sh.writes, sh.describe()


def test_2_a_model_named_in_the_task_is_not_a_learned_constant(tmp_path: Path) -> None:
    world = {"users": {u: user(i, u, ["staff"]) for i, u in enumerate(["gina.rossi", "marco.rossi"])}}
    forge = make_forge(tmp_path, safety.helpdesk_agent)
    check(forge, "New laptop for gina.rossi: ThinkPad T14", world)
    sh = check(forge, "New laptop for marco.rossi: MacBook Air 13", world)
    if sh.result.source != "agent":
        assert [w[1]["model"] for w in sh.writes] == ["MacBook Air 13"], sh.describe()


def test_2_a_retraction_after_the_request_is_not_swallowed_by_a_slot(tmp_path: Path) -> None:
    """tau-bench style: the last free-text slot must not take in "Actually, do not ..."."""
    world = shop(
        {"order_id": "#W5001", "status": "pending", "total": 30.0},
        {"order_id": "#W6001", "status": "pending", "total": 55.0},
        customers={
            "mia_tan_7312": {"customer_id": "mia_tan_7312", "name": "Mia Tan", "orders": ["#W5001"]},
            "ivy_chen_1188": {"customer_id": "ivy_chen_1188", "name": "Ivy Chen", "orders": ["#W6001"]},
        },
    )
    forge = make_forge(tmp_path, safety.shop_agent)
    check(forge, "Hi, I'm mia_tan_7312. Please cancel order #W5001 because ordered by mistake.", world)
    sh = check(
        forge,
        "Hi, I'm ivy_chen_1188. Please cancel order #W6001 because ordered by mistake. "
        "Actually, please do not do any of the above; I only wanted to know the status.",
        world,
    )
    assert sh.writes == [], "the customer took the cancellation back:" + sh.describe()


# -- 3. a task value lost to a result value -----------------------------------------------------------

def test_3_the_order_the_task_names_is_the_order_acted_on(tmp_path: Path) -> None:
    """The tool argument is "#W3586556" (with the "#"); the customer's orders list also holds it, at [1]."""
    ids = ["#W1001", "#W3586556", "#W2002", "#W7001", "#W7002", "#W7003"]
    world = shop(
        *({"order_id": o, "status": "pending", "total": 30.0} for o in ids),
        customers={
            "yusuf_rossi_9620": {"customer_id": "yusuf_rossi_9620", "name": "Yusuf Rossi", "orders": ids[:3]},
            "noah_kim_4410": {"customer_id": "noah_kim_4410", "name": "Noah Kim", "orders": ids[3:]},
        },
    )
    forge = make_forge(tmp_path, safety.shop_agent)
    check(forge, "Hi, I'm yusuf_rossi_9620. Please cancel order #W3586556 because ordered by mistake.", world)
    for task, named in [
        ("Hi, I'm noah_kim_4410. Please cancel order #W7003 because ordered by mistake.", "#W7003"),
        ("Hi, I'm yusuf_rossi_9620. Please cancel order #W2002 because ordered by mistake.", "#W2002"),
    ]:
        sh = check(forge, task, world)
        assert [w[1]["order_id"] for w in sh.writes] == [named], sh.describe()


def test_3_the_laptop_model_the_task_names_is_the_one_ordered(tmp_path: Path) -> None:
    """The model is also in the user's list of eligible models, in another place for another user.

    (On the current code this one also goes through cause 2's odd username split; it stays as
    a regression test for the model once that is fixed.)
    """
    world = {"users": {
        "gina.rossi": user(1, "gina.rossi", ["staff"], eligible_models=["MacBook Air 13", "ThinkPad T14", "Dell XPS 13"]),
        "marco.rossi": user(2, "marco.rossi", ["staff"], eligible_models=["ThinkPad T14", "Dell XPS 13", "MacBook Air 13"]),
    }}
    forge = make_forge(tmp_path, safety.helpdesk_agent)
    check(forge, "New laptop for gina.rossi: ThinkPad T14", world)
    sh = check(forge, "New laptop for marco.rossi: ThinkPad T14", world)
    assert [w[1]["model"] for w in sh.writes] == ["ThinkPad T14"], sh.describe()


# -- 4. answers over lists are fixed-length -----------------------------------------------------------

def test_4_an_answer_over_a_list_follows_the_list(tmp_path: Path) -> None:
    world = {"users": {
        "ivy.chen": user(1, "ivy.chen", ["staff", "vpn-users"]),
        "jon.park": user(2, "jon.park", ["staff", "vpn-users", "wiki"]),  # one more group
        "kim.lo": user(3, "kim.lo", ["wiki", "staff"]),  # the tool's order is not sorted; the agent sorts
    }}
    forge = make_forge(tmp_path, safety.group_agent)
    check(forge, "Which groups is ivy.chen in?", world)
    for task in ["Which groups is jon.park in?", "Which groups is kim.lo in?"]:
        check(forge, task, world)  # a skill may well serve these, but then with the agent's answer


# -- 5. a guard after a write re-checks the write's echo of its own argument ------------------------------

def test_5_a_write_echoing_its_argument_does_not_stop_the_skill(tmp_path: Path) -> None:
    world = {"users": {"lea.su": user(1, "lea.su", ["sales-crm", "hr-portal", "staff"])}}
    forge = make_forge(tmp_path, safety.group_agent)
    check(forge, "Remove lea.su from the sales-crm group", world)
    sh = check(forge, "Remove lea.su from the hr-portal group", world)
    assert sh.result.source == "skill", "the same shape with another group should be served by the skill:" + sh.describe()
    assert sh.writes == [("remove_from_group", {"username": "lea.su", "group": "hr-portal"})], sh.describe()


# -- 6. coincident values swap slots ------------------------------------------------------------------

SHOP = shop(*(order(o, lines=[{"sku": s, "quantity": 1} for s in "ABCDEFG"]) for o in ["10", "25", "77", "1004"]))


@pytest.mark.parametrize(
    ("learn", "task", "expected_write"),
    [
        ("Refund $10 of order #10", "Refund $25 of order #1004", ("refund", {"order_id": "1004", "amount": 25.0})),
        (
            "Set line 3 of order #77 to quantity 3",
            "Set line 5 of order #77 to quantity 3",
            ("set_quantity", {"order_id": "77", "line": 5, "quantity": 3}),
        ),
    ],
    ids=["refund-amount-vs-order", "line-vs-quantity"],
)
def test_6_equal_values_when_learned_stay_in_their_own_slots(learn: str, task: str, expected_write: tuple, tmp_path: Path) -> None:
    forge = make_forge(tmp_path, safety.shop_agent)
    check(forge, learn, SHOP)
    sh = check(forge, task, SHOP)
    assert sh.writes == [expected_write], sh.describe()


# -- 7. punctuation that carries meaning ---------------------------------------------------------------

LEDGER = shop(
    order("77"), order("25"),
    accounts={a: {"account_id": a, "balance": 100.0, "status": "open"} for a in ["A-1", "A-2"]},
)


@pytest.mark.parametrize(
    ("learn", "task", "expected_write"),
    [
        ("Adjust the balance of account A-1 by 10", "Adjust the balance of account A-2 by -10",
         ("adjust_balance", {"account_id": "A-2", "amount": -10.0})),
        ("Adjust the balance of account A-1 by -10", "Adjust the balance of account A-2 by 10",
         ("adjust_balance", {"account_id": "A-2", "amount": 10.0})),
        ("Discount 10% on order #77", "Discount $10 on order #77", ("discount", {"order_id": "77", "amount": 10.0, "unit": "usd"})),
        ("Discount $10 on order #77", "Discount 10% on order #77", ("discount", {"order_id": "77", "amount": 10.0, "unit": "percent"})),
        # On the current code the decimal is written right (10.5) and the answer says 10 instead:
        # the test fails on the answer. An integer-typed amount does not bind 10.5 at all (a miss).
        ("Refund 10 on order #77", "Refund 10.5 on order #77", ("refund", {"order_id": "77", "amount": 10.5})),
    ],
    ids=["plus-then-minus", "minus-then-plus", "percent-then-dollar", "dollar-then-percent", "integer-then-decimal"],
)
def test_7_a_sign_a_decimal_point_or_a_unit_is_part_of_the_value(learn: str, task: str, expected_write: tuple, tmp_path: Path) -> None:
    forge = make_forge(tmp_path, safety.shop_agent)
    check(forge, learn, LEDGER)
    sh = shadow(forge, forge.agent, task, LEDGER)
    assert sh.result.source == "agent" or sh.writes == [expected_write], "the write is not what the task says:" + sh.describe()
    sh.assert_as_agent()


# -- 8. merged guards widen field by field ---------------------------------------------------------------

def test_8_merging_two_runs_does_not_admit_a_combination_no_run_showed(tmp_path: Path) -> None:
    forge = make_forge(tmp_path, safety.returns_agent)
    check(forge, "Refund order #1", shop(order("1", fraud_hold=False, approved=False)))
    check(forge, "Refund order #2", shop(order("2", fraud_hold=True, approved=True)))
    sh = check(forge, "Refund order #3", shop(order("3", fraud_hold=True, approved=False)))  # the agent refuses
    assert sh.writes == [], sh.describe()


# -- 9. guards miss decision fields of common shapes -------------------------------------------------------

FILLER = {  # 16 fields, each of which gets a guard, all sorting before "zz_blocked"
    "carrier": "dhl", "channel": "web", "country": "de", "currency": "eur", "gift_wrap": False, "insured": True,
    "lang": "de", "loyalty_tier": "gold", "packaging": "box", "priority": "normal", "region": "emea",
    "shipping_cost": 4.99, "tax": 7.6, "warehouse": "north", "weight_kg": 1.2, "rating": 5,
}

GUARD_SHAPES = {  # shape: (the order the skill is learned on, the order the agent refuses)
    "title-case-status": ({"status": "Shipped"}, {"status": "Refunded"}),
    "status-with-a-space": ({"status": "in transit"}, {"status": "on hold"}),
    "flag-at-depth-3": (
        {"payment": {"method": "card", "card": {"brand": "visa", "blocked": False}}},
        {"payment": {"method": "card", "card": {"brand": "visa", "blocked": True}}},
    ),
    "flag-on-a-list-element": (
        {"items": [{"sku": "A", "final_sale": False}, {"sku": "B", "final_sale": False}]},
        {"items": [{"sku": "A", "final_sale": False}, {"sku": "B", "final_sale": True}]},
    ),
    "field-after-the-first-12": ({**FILLER, "zz_blocked": False}, {**FILLER, "zz_blocked": True}),
}


@pytest.mark.parametrize("shape", GUARD_SHAPES)
def test_9_a_decision_field_of_a_common_shape_is_guarded(shape: str, tmp_path: Path) -> None:
    learned_on, refused = GUARD_SHAPES[shape]
    forge = make_forge(tmp_path, safety.returns_agent)
    check(forge, "Refund order #1", shop(order("1", **learned_on)))
    sh = check(forge, "Refund order #2", shop(order("2", **refused)))  # the agent refuses to refund
    assert sh.writes == [], sh.describe()


# -- 10. a write that raised counts as no write ------------------------------------------------------------

def test_10_a_write_that_raised_after_committing_is_never_made_again(tmp_path: Path) -> None:
    """The payment provider commits the refund, then times out; the agent takes no transcript."""
    forge = make_forge(tmp_path, safety.goodwill_agent)
    check(forge, "Refund $15 of order #1 for the late delivery", shop(order("1")))
    sh = shadow(forge, forge.agent, "Refund $20 of order #2 for the late delivery", shop(order("2"), timeouts=1))
    refunds = [w for w in sh.writes if w[0] == "refund_payment"]
    assert refunds == [("refund_payment", {"order_id": "2", "amount": 20.0})], "the refund was made twice:" + sh.describe()


# -- 11. tool calls made in threads the agent starts ---------------------------------------------------------

def test_11_calls_made_in_the_agents_threads_are_recorded_or_nothing_is_learned(tmp_path: Path) -> None:
    forge = make_forge(tmp_path, safety.returns_agent)
    items = [{"sku": "A", "price": 10.0}, {"sku": "B", "price": 30.0}]
    first = check(forge, "Refund each item of order #1", shop(order("1", items=items)))
    recorded = [c.tool for c in first.result.calls].count("refund")
    assert first.result.learned is None or recorded == 2, (
        f"a run was learned ({first.result.learned}) without the {2 - recorded} refunds made in the agent's threads:"
        + first.describe()
    )
    sh = check(forge, "Refund each item of order #2", shop(order("2", items=[{"sku": "A", "price": 5.0}, {"sku": "C", "price": 7.0}])))
    assert len([w for w in sh.writes if w[0] == "refund"]) == 2, "an answer of refunds without the refunds:" + sh.describe()
