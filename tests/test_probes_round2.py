"""Red-team probes, round 2: new ways to make a skill replay wrongly (beyond tests/test_safety.py
and the first round in tests/test_probes.py).

Same contract as tests/test_safety.py: learn a skill from one or more agent runs, then solve a
task in a world where the agent alone acts differently from the learned run. After
``r = forge.solve(task)`` either ``r.source == "agent"`` (a miss), or the final world and
``r.output`` are exactly those of the agent alone run on a copy of the same starting world.
The agent decides only on what the task says, what tools returned, and its written policy.

Tools, worlds and the agent are in ``tests/toolsets/probes_round2.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillforge import Forge
from tests.shadowing import Harness, Shadow
from tests.toolsets import probes_round2 as probes

# -- harness (tests/shadowing.py, over this probe toolset) --------------------------------------------

_HARNESS = Harness(probes)


def forge_for(tmp_path: Path, name: str = "forge") -> Forge:
    return _HARNESS.forge(tmp_path, probes.probe_agent, name)


def check(forge: Forge, task: str, world: dict[str, Any]) -> Shadow:
    return _HARNESS.check(forge, task, world)


def learn(forge: Forge, task: str, world: dict[str, Any]) -> Shadow:
    """An agent run (or a skill's handover to it) that must be learned, else the probe proves nothing."""
    return _HARNESS.learn(forge, task, world, after_handover=True)


def orders(**by_id: dict[str, Any]) -> dict[str, Any]:
    return {"orders": dict(by_id)}


# -- R01. a number read compared with a limit of the agent's policy (refunds over $500 need approval) ---

def test_r01_refund_over_the_approval_limit(tmp_path: Path) -> None:
    forge = forge_for(tmp_path)
    learn(forge, "Refund order #5", orders(**{"5": {"total": 40.0, "status": "delivered"}}))
    # the same order shape, a total over the limit: the agent asks a manager, never refunds $900
    check(forge, "Refund order #6", orders(**{"6": {"total": 900.0, "status": "delivered"}}))


# -- R02. five runs, five statuses that all allowed the cancel: the status is then no guard at all ----

def test_r02_five_cancellable_statuses_then_a_shipped_order(tmp_path: Path) -> None:
    forge = forge_for(tmp_path)
    statuses = ["pending", "processing", "confirmed", "awaiting payment", "on hold"]
    for i, status in enumerate(statuses, start=1):
        learn(forge, f"Cancel order #{i}", orders(**{str(i): {"status": status, "total": 20.0}}))
    # "shipped" is a sixth status: the agent refuses
    sh = check(forge, "Cancel order #9", orders(**{"9": {"status": "shipped", "total": 20.0}}))
    assert sh.writes == [], sh.describe()


# -- R03. a withdrawal compared with a balance that sits in a list element (the customer's accounts) --

def test_r03_balance_inside_a_list_of_accounts(tmp_path: Path) -> None:
    def world(balance: float) -> dict[str, Any]:
        return {"customers": {"C-7": {"customer_id": "C-7", "accounts": [
            {"account_id": "A-1", "balance": balance}, {"account_id": "A-2", "balance": 900.0}]}}}

    forge = forge_for(tmp_path)
    learn(forge, "Withdraw $50 from account A-1 of customer C-7", world(120.0))
    check(forge, "Withdraw $50 from account A-1 of customer C-7", world(20.0))  # not covered: refused


# -- R04. money as the bank's API writes it: a decimal string, so no comparison with the amount -------

def test_r04_balance_as_a_decimal_string(tmp_path: Path) -> None:
    def world(balance: str) -> dict[str, Any]:
        return {"accounts": {"A-1": {"account_id": "A-1", "balance": balance, "currency": "USD"}}}

    forge = forge_for(tmp_path)
    learn(forge, "Withdraw $50 from account A-1", world("120.00"))
    check(forge, "Withdraw $50 from account A-1", world("20.00"))


# -- R05. two sub-records of one shape (checking, savings) are taken for an id-keyed collection ---------

def test_r05_twin_sub_records_lose_their_status(tmp_path: Path) -> None:
    def world(checking: str) -> dict[str, Any]:
        return {"customers": {"C-7": {"customer_id": "C-7", "accounts": {
            "checking": {"balance": 300.0, "status": checking}, "savings": {"balance": 900.0, "status": "locked"}}}}}

    forge = forge_for(tmp_path)
    learn(forge, "Withdraw $50 from the checking account of customer C-7", world("open"))
    check(forge, "Withdraw $50 from the checking account of customer C-7", world("frozen"))


# -- R06. a list of tags (codes) is guarded for emptiness only, not for which tags it holds -------------

def test_r06_a_blocking_tag_among_the_orders_tags(tmp_path: Path) -> None:
    def world(order_id: str, *tags: str) -> dict[str, Any]:
        return orders(**{order_id: {"total": 40.0, "status": "delivered", "tags": list(tags)}})

    forge = forge_for(tmp_path)
    learn(forge, "Issue a refund for order #5", world("5", "gift", "web"))
    check(forge, "Issue a refund for order #6", world("6", "gift", "chargeback"))


# -- R07. the cheapest flight: the pin holds the id at the position, the prices moved -----------------

def test_r07_the_cheapest_flight_after_fares_changed(tmp_path: Path) -> None:
    def world(*prices: float) -> dict[str, Any]:
        flights = [{"flight_id": f"UA-{100 + i}", "price": p} for i, p in enumerate(prices)]
        return {"flights": {"JFK-SFO-2024-05-20": flights}}

    forge = forge_for(tmp_path)
    learn(forge, "Book the cheapest flight from JFK to SFO on 2024-05-20 for mia", world(320.0, 210.0, 260.0))
    # the same three flights; UA-102 is now the cheapest
    check(forge, "Book the cheapest flight from JFK to SFO on 2024-05-20 for ivy", world(320.0, 210.0, 150.0))


# -- R08. the answer's boilerplate ("5 business days") coincides with the order number ---------------

def test_r08_boilerplate_number_equal_to_the_order_number(tmp_path: Path) -> None:
    forge = forge_for(tmp_path)
    learn(forge, "Please refund order #5", orders(**{"5": {"total": 40.0}}))
    sh = check(forge, "Please refund order #7", orders(**{"7": {"total": 25.0}}))
    assert sh.result.source == "agent" or "within 5 business days" in sh.result.output, sh.describe()


# -- R09. a list joined as people write it ("a and b"), learned from two elements, served three -------

def test_r09_natural_language_list_of_another_length(tmp_path: Path) -> None:
    world = {"users": {"ivy.chen": {"username": "ivy.chen", "groups": ["staff", "vpn-users"]},
                       "jon.park": {"username": "jon.park", "groups": ["staff", "vpn-users", "wiki"]}}}
    forge = forge_for(tmp_path)
    learn(forge, "Which groups is ivy.chen in?", world)
    check(forge, "Which groups is jon.park in?", world)  # "staff, vpn-users and wiki"


# -- R10. sorted as a person sorts (case aside) is not sorted by code point ----------------------------

def test_r10_case_insensitive_alphabetical_order(tmp_path: Path) -> None:
    world = {"tickets": {"T-1": {"tags": ["wiki", "billing", "staff"]},
                         "T-2": {"tags": ["vpn", "Outage", "access"]}}}
    forge = forge_for(tmp_path)
    learn(forge, "List the tags of ticket T-1", world)
    check(forge, "List the tags of ticket T-2", world)  # "access, Outage, vpn"


# -- R11. an integer that is a category (severity 1..4): only its sign is guarded ---------------------

def test_r11_severity_one_is_another_decision(tmp_path: Path) -> None:
    def world(ticket_id: str, severity: int) -> dict[str, Any]:
        return {"tickets": {ticket_id: {"severity": severity, "state": "new"}}}

    forge = forge_for(tmp_path)
    learn(forge, "Triage incident INC-12", world("INC-12", 3))
    check(forge, "Triage incident INC-13", world("INC-13", 1))  # the agent pages on-call first


# -- R12. the status of the only element of a list (statuses are guarded only where they repeat) ------

def test_r12_the_only_item_was_already_returned(tmp_path: Path) -> None:
    def world(order_id: str, status: str) -> dict[str, Any]:
        return orders(**{order_id: {"total": 40.0, "items": [{"sku": "MUG-1", "status": status}]}})

    forge = forge_for(tmp_path)
    learn(forge, "Refund the items of order #5", world("5", "delivered"))
    check(forge, "Refund the items of order #6", world("6", "returned"))


# -- R13. membership in comma-separated text ("staff,vpn-users"), as legacy directories return it -----

def test_r13_membership_in_a_comma_separated_string(tmp_path: Path) -> None:
    world = {"users": {"erin.wu": {"username": "erin.wu", "groups": "staff,wiki"},
                       "frank.li": {"username": "frank.li", "groups": "staff,vpn-users"}}}
    forge = forge_for(tmp_path)
    learn(forge, "Add erin.wu to the vpn-users group", world)
    check(forge, "Add frank.li to the vpn-users group", world)  # already in, says the agent


# -- R14. a task value absent from a dict's field-like keys (features), present in the next world -----

def test_r14_a_feature_already_on(tmp_path: Path) -> None:
    def world(**features: bool) -> dict[str, Any]:
        return {"accounts": {"A-1": {"account_id": "A-1", "features": {"dark_mode": True, "export": False, **features}}}}

    forge = forge_for(tmp_path)
    learn(forge, "Enable the beta_search feature for account A-1", world())
    check(forge, "Enable the beta_search feature for account A-1", world(beta_search=True))


# -- R15. a search given the very value whose presence in its results decides -------------------------

def test_r15_fuzzy_search_learned_on_a_typo(tmp_path: Path) -> None:
    world = {"users": {u: {"username": u} for u in ["carol.diaz", "dan.ito", "dana.ito"]}}
    forge = forge_for(tmp_path)
    learn(forge, "Reset the password for karol.diaz", world)  # a typo: search finds carol.diaz only
    check(forge, "Reset the password for dan.ito", world)  # dan.ito exists: the agent resets it


# -- R16. the meaning of the customer's own words (a free-text slot) decides a constant argument -------

def test_r16_the_reason_text_decides_the_category(tmp_path: Path) -> None:
    world = orders(**{"5": {"status": "delivered"}, "6": {"status": "delivered"}})
    forge = forge_for(tmp_path)
    learn(forge, "Return order #5 because I changed my mind", world)
    check(forge, "Return order #6 because it arrived cracked", world)  # category "damaged"


# -- R17. an id's prefix names the kind of thing (INC incident, CHG change): the slot shape takes both --

def test_r17_a_change_request_is_not_an_incident(tmp_path: Path) -> None:
    world = {"tickets": {"INC-4820": {"state": "resolved"}, "CHG-4821": {"state": "resolved"}}}
    forge = forge_for(tmp_path)
    learn(forge, "Close ticket INC-4820", world)
    check(forge, "Close ticket CHG-4821", world)


# -- R18. a choice region merged into a refusal variant: the verb is not combined with the status -----

def test_r18_choice_text_and_status_combined_in_a_variant(tmp_path: Path) -> None:
    def world(order_id: str, status: str) -> dict[str, Any]:
        return orders(**{order_id: {"status": status, "total": 40.0}})

    forge = forge_for(tmp_path)
    learn(forge, "Please cancel my order #1 now", world("1", "pending"))  # cancelled
    learn(forge, "Please cancel my order #2 now", world("2", "delivered"))  # refused: a variant
    # a task no template takes, refused like run 2: the template widens to cancel|return, and
    # the refusal variant now takes either verb with either status
    learn(forge, "Please return my order #3 now", world("3", "shipped"))
    # "return" on a delivered order: no run showed it; the agent opens a return
    sh = check(forge, "Please return my order #4 now", world("4", "delivered"))
    assert sh.result.source == "agent" or ("create_return", {"order_id": "4", "category": "changed_mind", "comment": ""}) in sh.writes, sh.describe()


# -- R19. a value read under a dict key the task names (accounts keyed by id) -------------------------

def test_r19_an_account_keyed_by_the_tasks_id(tmp_path: Path) -> None:
    world = {"customers": {"C-7": {"customer_id": "C-7", "accounts": {
        "A-1": {"balance": 100.0, "currency": "USD"}, "A-2": {"balance": 55.5, "currency": "USD"}}}}}
    forge = forge_for(tmp_path)
    learn(forge, "What is the balance of account A-2 of customer C-7?", world)
    check(forge, "What is the balance of account A-1 of customer C-7?", world)  # $100.00, not A-2's


# -- R20. a date the task gives compared with a deadline read -----------------------------------------

def test_r20_a_new_due_date_past_the_latest_allowed(tmp_path: Path) -> None:
    def world(loan_id: str) -> dict[str, Any]:
        return {"loans": {loan_id: {"due": "2024-06-10", "latest_due": "2024-07-01"}}}

    forge = forge_for(tmp_path)
    learn(forge, "Extend loan L-1 to 2024-06-30", world("L-1"))
    check(forge, "Extend loan L-2 to 2024-07-15", world("L-2"))


# -- R21. equality with a task value, where the learned value had other kinds of characters ------------

def test_r21_the_email_already_on_file(tmp_path: Path) -> None:
    world = {"customers": {"C-7": {"customer_id": "C-7", "email": "mia1988@old-mail.org"},
                           "C-8": {"customer_id": "C-8", "email": "ivy@new.org"}}}
    forge = forge_for(tmp_path)
    learn(forge, "Change the email of customer C-7 to mia@new.org", world)
    check(forge, "Change the email of customer C-8 to ivy@new.org", world)  # already on file


# -- R22. an empty dict (no holds) that fills ---------------------------------------------------------

def test_r22_holds_empty_then_not(tmp_path: Path) -> None:
    def world(order_id: str, **holds: str) -> dict[str, Any]:
        return orders(**{order_id: {"total": 40.0, "status": "delivered", "holds": dict(holds)}})

    forge = forge_for(tmp_path)
    learn(forge, "Refund delivered order #5", world("5"))
    check(forge, "Refund delivered order #6", world("6", chargeback="opened 2024-05-02"))


# -- R23. the name the customer gives is not the order's customer's (the agent checks; a name the --
# task says is an attribute after two runs, so the skill does not)

def test_r23_a_name_that_is_not_the_order_owners(tmp_path: Path) -> None:
    def world(order_id: str, customer: str, first: str) -> dict[str, Any]:
        return {"orders": {order_id: {"customer_id": customer, "status": "pending"}},
                "customers": {customer: {"first_name": first, "orders": [order_id]}}}

    forge = forge_for(tmp_path)
    learn(forge, "I am Raj Davis. Cancel order #5.", world("5", "C-1", "Raj"))
    learn(forge, "I am Mia Lopez. Cancel order #6.", world("6", "C-2", "Mia"))
    check(forge, "I am Ola Berg. Cancel order #7.", world("7", "C-3", "Ann"))  # not hers: the agent refuses


# -- R24. the same after five customers: five first names are five values of an attribute ---------

def test_r24_a_name_that_is_not_the_order_owners_after_five_customers(tmp_path: Path) -> None:
    def world(order_id: str, customer: str, first: str) -> dict[str, Any]:
        return {"orders": {order_id: {"customer_id": customer, "status": "pending"}},
                "customers": {customer: {"first_name": first, "orders": [order_id]}}}

    forge = forge_for(tmp_path)
    for i, (first, last) in enumerate([("Raj", "Davis"), ("Mia", "Lopez"), ("Eve", "Stone"), ("Lin", "Park"), ("Tom", "Reyes")]):
        # learned from the first two; the skill may serve the others (the name is the owner's)
        (learn if i < 2 else check)(forge, f"I am {first} {last}. Cancel order #{i + 5}.", world(str(i + 5), f"C-{i}", first))
    check(forge, "I am Ola Berg. Cancel order #20.", world("20", "C-9", "Ann"))  # not hers: the agent refuses


# -- R25. a list of items the task names: one of them was returned already ----------------------------

def test_r25_one_of_the_items_named_was_returned_already(tmp_path: Path) -> None:
    catalog = [("MUG-1", "Mug"), ("LAMP-2", "Desk Lamp"), ("KET-3", "Kettle"), ("BAG-4", "Tote Bag")]

    def world(order_id: str, returned: set[str]) -> dict[str, Any]:
        items = [{"sku": f"{sku}-{order_id}", "name": name, "status": "returned" if name in returned else "delivered"}
                 for sku, name in catalog]
        return orders(**{order_id: {"status": "delivered", "items": items}})

    forge = forge_for(tmp_path)
    # every order holds a returned item the task does not name, so only the named items' facts tell
    learn(forge, "Return from order #5: Mug; Desk Lamp; ", world("5", {"Tote Bag"}))
    served = check(forge, "Return from order #6: Kettle; Mug; Desk Lamp; ", world("6", {"Tote Bag"}))
    assert served.result.source == "skill"  # a list of another length: the same skill
    check(forge, "Return from order #8: Mug; Tote Bag; ", world("8", {"Tote Bag"}))  # returned already: refused


# -- R26. one program asked in two phrasings, the second going ahead where the first would not -------

def test_r26_a_phrasing_that_goes_ahead_for_a_locked_account(tmp_path: Path) -> None:
    def users(name: str, locked: bool) -> dict[str, Any]:
        return {"users": {name: {"username": name, "locked": locked, "department": "sales"}}}

    forge = forge_for(tmp_path)
    learn(forge, "Send ana.ruiz a password reset link.", users("ana.ruiz", False))
    learn(forge, "bo.chen is locked out, please send them a reset link anyway.", users("bo.chen", True))
    (skill,) = forge.library.paths()  # the same calls from the same sources: one skill, two phrasings
    assert "phrasings" in skill.read_text()
    assert check(forge, "Send cy.diaz a password reset link.", users("cy.diaz", False)).result.source == "skill"
    assert check(forge, "dee.fox is locked out, please send them a reset link anyway.", users("dee.fox", True)).result.source == "skill"
    # a locked account asked for in the first phrasing: only the second was ever seen going ahead
    check(forge, "Send eve.gray a password reset link.", users("eve.gray", True))


# -- R27. an exchange of several items, each read from its product: one item's new variant is out of stock -

def test_r27_an_exchange_of_several_items_one_out_of_stock(tmp_path: Path) -> None:
    catalogue = {"Kettle": {"4001": {"color": "red"}, "4002": {"color": "blue"}},
                 "Lamp": {"5001": {"size": "S"}, "5002": {"size": "L"}},
                 "Shelf": {"6001": {"height": "3 ft"}, "6002": {"height": "5 ft"}}}

    def world(order_id: str, held: list[str], out_of_stock: frozenset[str] = frozenset()) -> dict[str, Any]:
        of = {v: name for name, vs in catalogue.items() for v in vs}
        products = {f"P-{name}": {"name": name, "product_id": f"P-{name}", "variants": {
            v: {"item_id": v, "options": o, "in_stock": v not in out_of_stock} for v, o in vs.items()}} for name, vs in catalogue.items()}
        items = [{"item_id": v, "name": of[v], "product_id": f"P-{of[v]}", "options": catalogue[of[v]][v]} for v in held]
        return {"orders": {order_id: {"status": "delivered", "items": items}}, "products": products}

    def task(order_id: str, swaps: list[tuple[str, str, dict[str, str], dict[str, str]]]) -> str:
        return f"Exchange from order #{order_id}: " + "; ".join(f"{n} {o!r} to {c!r}" for n, _v, o, c in swaps) + "; thanks."

    forge = forge_for(tmp_path)
    learn(forge, task("5", [("Kettle", "4001", {"color": "red"}, {"color": "blue"}), ("Lamp", "5001", {"size": "S"}, {"size": "L"})]),
          world("5", ["4001", "5001"]))
    three = [("Kettle", "4002", {"color": "blue"}, {"color": "red"}), ("Shelf", "6001", {"height": "3 ft"}, {"height": "5 ft"}),
             ("Lamp", "5002", {"size": "L"}, {"size": "S"})]
    served = check(forge, task("6", three), world("6", ["4002", "6001", "5002"]))
    assert served.result.source == "skill"  # three items, each read from its product: the same skill
    # the shelf's new variant is out of stock: the agent exchanges nothing
    check(forge, task("7", three[:2]), world("7", ["4002", "6001"], frozenset({"6002"})))


# -- R28. the answer quotes a line of a text, which was one line while learning --------------------------

def tickets(**notes: str) -> dict[str, Any]:
    return {"tickets": {tid: {"id": tid, "state": "closed", "note": note} for tid, note in notes.items()}}


def test_r28_a_note_of_several_lines_where_the_agent_quotes_the_last(tmp_path: Path) -> None:
    forge = forge_for(tmp_path)
    learn(forge, "How was ticket INC-1 resolved?", tickets(**{"INC-1": "Replaced the dock on desk 4B, works again"}))
    served = check(forge, "How was ticket INC-2 resolved?", tickets(**{"INC-2": "User confirmed it works now after the reboot"}))
    assert served.result.source == "skill"
    # closed twice: two notes, and the agent quotes the last one only
    check(forge, "How was ticket INC-4 resolved?", tickets(**{"INC-4": "Duplicate of INC-9, see there\nReinstalled the VPN client"}))


def test_r28_a_note_of_several_lines_quoted_whole_once_runs_showed_it(tmp_path: Path) -> None:
    forge = forge_for(tmp_path)
    learn(forge, "Show the note of ticket INC-1.", tickets(**{"INC-1": "Replaced the dock on desk 4B, works again"}))
    served = check(forge, "Show the note of ticket INC-2.", tickets(**{"INC-2": "Waiting on the vendor for a part\nPart arrived, fan replaced"}))
    assert served.result.source != "skill"  # a shape of text no run showed: the agent answers, and the run is learned
    # runs quoted a text of one line and one of several whole: the number of lines tells nothing apart
    three = "Escalated to the network team\nSwitch port 12 was dead\nMoved to port 14, fixed"
    assert check(forge, "Show the note of ticket INC-4.", tickets(**{"INC-4": three})).result.source == "skill"
    assert check(forge, "Show the note of ticket INC-5.", tickets(**{"INC-5": "Firmware updated to v2.3 on the dock"})).result.source == "skill"


def test_r28_a_line_of_a_note_is_not_a_constant_of_the_answer(tmp_path: Path) -> None:
    # learned where the note had two lines: the line the answer quotes is no constant text of the skill
    forge = forge_for(tmp_path)
    learn(forge, "How was ticket INC-1 resolved?", tickets(**{"INC-1": "Waiting on the vendor for a part\nPart arrived, fan replaced"}))
    check(forge, "How was ticket INC-2 resolved?", tickets(**{"INC-2": "Duplicate of INC-9, see there\nReinstalled the VPN client"}))
    # and where one-line notes came first (the skill then branches on the lines): the same
    forge = forge_for(tmp_path, "second")
    learn(forge, "How was ticket INC-3 resolved?", tickets(**{"INC-3": "Replaced the dock on desk 4B, works again"}))
    learn(forge, "How was ticket INC-4 resolved?", tickets(**{"INC-4": "Waiting on the vendor for a part\nPart arrived, fan replaced"}))
    check(forge, "How was ticket INC-5 resolved?", tickets(**{"INC-5": "Escalated to the network team\nMoved to port 14, fixed"}))


# -- R29. a word of the template (not a parameter) names a kind of record the customer may hold ---------

def test_r29_a_method_the_task_names_by_a_word_of_the_template(tmp_path: Path) -> None:
    def customer(cid: str, *sources: str) -> dict[str, Any]:
        methods = [{"id": f"{s}_{cid[2:]}{k}", "source": s} for k, s in enumerate(sources)]
        return {"customers": {cid: {"customer_id": cid, "methods": methods}}}

    forge = forge_for(tmp_path)
    learn(forge, "Pay order #5 of customer C-7 with PayPal.", customer("C-7", "credit_card", "gift_card"))
    # another customer, who holds a PayPal account: the agent pays, never "I don't see a PayPal account"
    check(forge, "Pay order #6 of customer C-8 with PayPal.", customer("C-8", "credit_card", "paypal"))
    served = check(forge, "Pay order #7 of customer C-9 with PayPal.", customer("C-9", "gift_card", "credit_card"))
    assert served.result.source != "agent"  # the word is a value the skill relates to what was read


# -- open findings ---------------------------------------------------------------------------------
# Probes that still replay wrongly, each with what the learner is missing. Strict: a fix that
# makes one pass fails the suite until its line is removed here, so the list stays true.
OPEN = {
    "test_r12_the_only_item_was_already_returned": "statuses over a list's elements are guarded only where they repeat (a one-element list shows none)",
}
for _name, _why in OPEN.items():
    globals()[_name] = pytest.mark.xfail(strict=True, reason=_why)(globals()[_name])
