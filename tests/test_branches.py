"""Branches on runs alone: runs of one template that acted in two ways make one skill.

"Add ana to vpn-users" read the user and added her; "Add bo to vpn-users", where bo was in the
group already, read him and answered. The second run's calls are the first one's reads: one
skill reads, then ``if`` the fact that told the runs apart, checks what the early runs showed
and answers; otherwise it checks what the other runs showed and writes. Each branch keeps its
own runs' guards, so no world that neither group showed replays.
"""

from __future__ import annotations

from typing import Any

from skillforge._codegen import render_skill
from skillforge._compile import prove_all
from skillforge._learning import spec_from_runs
from skillforge._lifting import Rejected, discover_template
from skillforge._policy import check_policy
from skillforge._template import TaskTemplate
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory

TOOLS = {
    "get_user": ToolRef(module="desk", qualname="get_user", read=True, params=("username",)),
    "add_to_group": ToolRef(module="desk", qualname="add_to_group", params=("username", "group")),
}


def add_run(username: str, group: str, groups: list[str], locked: bool = False, task: str = "Add {} to {}.") -> Trajectory:
    """The agent: a member already is told so; anyone else is added."""
    user = {"username": username, "groups": groups, "locked": locked}
    calls = [Call(tool="get_user", args={"username": username}, result=user)]
    if group in groups:
        output = f"{username} is already in {group}."
    else:
        calls.append(Call(tool="add_to_group", args={"username": username, "group": group}, result={"added": True}))
        output = f"Added {username} to {group}."
    return Trajectory(task=task.format(username, group), calls=calls, outcome=Outcome(ok=True, output=output), tools=TOOLS)


def learned(runs: list[Trajectory]) -> Any:
    template = discover_template(runs[0])
    assert isinstance(template, TaskTemplate)
    return spec_from_runs(runs, name="add_to", template=template)


def test_a_member_already_and_a_new_member_are_one_skill_with_a_branch() -> None:
    runs = [add_run("ana.ruiz", "vpn-users", ["staff"]), add_run("bo.chen", "vpn-users", ["staff", "vpn-users"])]
    spec = learned(runs)
    assert not isinstance(spec, Rejected) and len(spec.early) == 1 and len(spec.runs) == 2
    source = render_skill(spec)
    body = source.split("def add_to", 1)[1]
    assert "    if group in user['groups']:  # as the runs that stopped here saw it\n" in body
    assert "        return f\"{username} is already in {group}.\"" in body
    assert body.index("return f\"{username} is already in {group}.\"") < body.index("add_to_group(")
    assert check_policy(source, "add_to", {"desk": {"get_user", "add_to_group"}}) == []
    assert prove_all(source, spec, runs) is None
    # either way again, in worlds like the runs'
    assert prove_all(source, spec, [add_run("cy.diaz", "vpn-users", ["staff"]), add_run("dee.fox", "vpn-users", ["vpn-users"])]) is None


def test_each_branch_keeps_its_own_guards() -> None:
    runs = [add_run("ana.ruiz", "vpn-users", ["staff"]), add_run("bo.chen", "vpn-users", ["staff", "vpn-users"], locked=True)]
    spec = learned(runs)
    assert not isinstance(spec, Rejected) and spec.early
    source = render_skill(spec)
    # the runs differ in the lock too; the branch is on the relation of the task's values
    assert "    if group in user['groups']:  # as the runs that stopped here saw it\n" in source
    # a member whose account is not locked: only a locked member was seen answered; a new member unlocked: seen
    assert prove_all(source, spec, [add_run("cy.diaz", "vpn-users", ["vpn-users"], locked=False)]) is not None
    assert prove_all(source, spec, [add_run("dee.fox", "vpn-users", ["staff"], locked=False)]) is None
    # not a member, locked: the runs that wrote never saw a locked account
    assert prove_all(source, spec, [add_run("eve.gray", "vpn-users", ["staff"], locked=True)]) is not None


def test_runs_that_wrote_differently_or_cannot_be_told_apart_stay_apart() -> None:
    # the same world, acted on two ways: no fact tells them apart
    a = add_run("ana.ruiz", "vpn-users", ["staff"])
    stopped = Trajectory(task="Add bo.chen to vpn-users.", calls=a.calls[:1], outcome=Outcome(ok=True, output="Not today."), tools=TOOLS)
    stopped = stopped.model_copy(update={"calls": [Call(tool="get_user", args={"username": "bo.chen"},
                                                         result={"username": "bo.chen", "groups": ["staff"], "locked": False})]})
    assert isinstance(learned([a, stopped]), Rejected)
    # two writes that differ (not a prefix): variants, as before
    other = add_run("cy.diaz", "vpn-users", ["staff"])
    other = other.model_copy(update={"calls": [*other.calls, Call(tool="add_to_group", args={"username": "cy.diaz", "group": "staff"}, result={})]})
    assert isinstance(learned([a, other]), Rejected)


def test_a_run_that_said_one_value_in_two_slots_is_still_a_branch_and_checks_they_agree() -> None:
    # "Add cy to cy.": the answer's second name could be either slot; the runs of either way settle
    # where their values come from on their own (their calls differ), and the branch requires the two equal
    runs = [add_run("bo", "wiki", ["staff"]), add_run("cy", "cy", ["cy"])]
    spec = learned(runs)
    assert not isinstance(spec, Rejected) and len(spec.early) == 1
    source = render_skill(spec)
    branch = source.split("    if group in user['groups']:", 1)[1].split("        return ", 1)[0]
    assert "require(username == group" in branch
    assert prove_all(source, spec, runs) is None
    assert prove_all(source, spec, [add_run("dee", "dee", ["dee"])]) is None
    assert prove_all(source, spec, [add_run("dee", "ops", ["ops"])]) is not None  # which name the answer says: not known


def manager_run(username: str, manager: str | None, department: str) -> Trajectory:
    """The agent: the same read, and an answer that says the manager, or that there is none."""
    user = {"username": username, "manager": manager, "department": department}
    output = f"{username} reports to {manager}." if manager else f"{username} has no manager on record."
    return Trajectory(task=f"Who is {username}'s manager?", calls=[Call(tool="get_user", args={"username": username}, result=user)],
                      outcome=Outcome(ok=True, output=output), tools=TOOLS)


def test_the_same_reads_with_two_answers_are_one_skill_branching_on_the_value_that_is_none() -> None:
    # the department tells these runs apart too; a value there or none is the branch a reviewer expects
    runs = [manager_run("ana.ruiz", "Bo Chen", "sales"), manager_run("cy.diaz", None, "hr"), manager_run("dee.fox", "Eve Gray", "sales")]
    spec = learned(runs)
    assert not isinstance(spec, Rejected) and len(spec.early) == 1
    source = render_skill(spec)
    assert "    if user['manager'] is None:  # as the runs that stopped here saw it\n" in source
    assert prove_all(source, spec, runs) is None
    assert prove_all(source, spec, [manager_run("fay.lin", "Gus Hale", "sales"), manager_run("hal.ng", None, "hr")]) is None
    # each branch keeps its runs' facts: no manager in sales was never seen
    assert prove_all(source, spec, [manager_run("ivy.roe", None, "sales")]) is not None
    # the same reads and two answers with nothing to tell them apart stay apart
    twin = manager_run("jo.kim", "Bo Chen", "sales")
    twin = twin.model_copy(update={"outcome": Outcome(ok=True, output="Ask HR.")})
    assert isinstance(learned([runs[0], twin]), Rejected)


def groups_run(username: str, groups: list[str]) -> Trajectory:
    """The agent answers which groups a user is in: several, one, or none."""
    user = {"username": username, "groups": groups, "locked": False}
    if len(groups) > 1:
        output = f"{username} is in: {', '.join(groups)}."
    elif groups:
        output = f"{username} is in {groups[0]} only."
    else:
        output = f"{username} isn't in any groups."
    return Trajectory(task=f"Which groups is {username} in?", calls=[Call(tool="get_user", args={"username": username}, result=user)],
                      outcome=Outcome(ok=True, output=output), tools=TOOLS)


def test_the_same_reads_with_three_answers_are_one_skill_with_two_branches() -> None:
    runs = [groups_run("ana.ruiz", ["staff", "vpn-users"]), groups_run("bo.chen", ["staff"]), groups_run("cy.diaz", []),
            groups_run("dee.fox", ["jira", "staff", "wiki"])]
    spec = learned(runs)
    assert not isinstance(spec, Rejected) and len(spec.early) == 2 and len(spec.runs) == 4
    source = render_skill(spec)
    assert prove_all(source, spec, runs) is None
    assert source.split("def add_to", 1)[1].count("return ") == 3
    again = [groups_run("eve.gray", ["hr", "staff"]), groups_run("fay.hill", ["hr"]), groups_run("gus.ito", [])]
    assert prove_all(source, spec, again) is None  # each answer again, in worlds like the runs'


PAY_TOOLS = {
    "get_card": ToolRef(module="desk", qualname="get_card", read=True, params=("card",)),
    "pay": ToolRef(module="desk", qualname="pay", params=("order_id", "card")),
}


def pay_run(order_id: str, card: str, *, declined: bool = False, status: str = "active", kind: str = "credit") -> Trajectory:
    """The agent reads the card, pays (the payment service may refuse with a message) and says how it went."""
    paid: Any = f"Error: card {card} was declined" if declined else {"order_id": order_id, "status": "paid", "card": card}
    output = f"I could not pay {order_id} ({paid})." if declined else f"Paid {order_id} with {card}."
    return Trajectory(
        task=f"Pay {order_id} with {card}.",
        calls=[Call(tool="get_card", args={"card": card}, result={"card": card, "status": status, "kind": kind}),
               Call(tool="pay", args={"order_id": order_id, "card": card}, result=paid)],
        outcome=Outcome(ok=True, output=output), tools=PAY_TOOLS,
    )


def test_the_same_write_with_an_error_or_a_result_is_one_skill_branching_after_the_write() -> None:
    # both runs made the same calls; the write refused in one (an error text) and succeeded in the
    # other: one skill whose reads are checked before the write as all runs showed them, then the
    # write, then ``if`` what it returned is of the kind the first run's group saw, their answer
    runs = [pay_run("A-1", "card-11"), pay_run("A-2", "card-12", declined=True), pay_run("A-3", "card-13", kind="debit")]
    spec = learned(runs)
    assert not isinstance(spec, Rejected) and len(spec.early) == 1 and len(spec.runs) == 3
    source = render_skill(spec)
    body = source.split("def add_to", 1)[1]
    assert "    if has(pay_result, kind='dict'):  # as the runs that answered so saw it\n" in body
    assert body.index("require(card_2['status'] == 'active'") < body.index("pay_result = pay(") < body.index("if has(pay_result")
    assert 'return f"I could not pay {order_id} ({pay_result})."' in body and 'return f"Paid {order_id} with {card}."' in body
    assert check_policy(source, "add_to", {"desk": {"get_card", "pay"}}) == []
    assert prove_all(source, spec, runs) is None
    assert prove_all(source, spec, [pay_run("A-4", "card-14", declined=True), pay_run("A-5", "card-15")]) is None
    # a card of a status no run showed stops the skill before it pays
    assert prove_all(source, spec, [pay_run("A-6", "card-16", status="frozen")]) is not None
    # before the write, the reads' facts are those all runs showed together: the runs paid with a credit
    # card and a debit card alike, so both kinds are paid with; after it, the branch taken checks what its
    # own runs read: a refused debit card was never seen, so that answer is the agent's
    refused_debit = prove_all(source, spec, [pay_run("A-7", "card-17", declined=True, kind="debit")])
    assert refused_debit is not None and "a guard fails" in refused_debit.reason and "card_2['kind'] is 'credit'" in refused_debit.reason
    assert body.index("pay_result = pay(") < body.index("require(card_2['kind'] == 'credit'")


def test_two_answers_after_a_write_that_nothing_it_returned_tells_apart_stay_apart() -> None:
    # the same write returned the same kind of result, and the answers differ: no branch after it
    a = pay_run("A-1", "card-11")
    b = pay_run("A-2", "card-12")
    b = b.model_copy(update={"outcome": Outcome(ok=True, output="Ask the bank.")})
    assert isinstance(learned([a, b]), Rejected)
    # two writes, the first refused in one run: the second would be made before what the first
    # returned is checked, so no branch after them
    def twice(run: Trajectory) -> Trajectory:
        return run.model_copy(update={"calls": [*run.calls, Call(tool="pay", args=run.calls[1].args, result={"status": "noted"})]})

    assert isinstance(learned([twice(pay_run("A-3", "card-13")), twice(pay_run("A-4", "card-14", declined=True))]), Rejected)


# -- the same at the Forge: real tools, whose payment service refuses some cards it was never told about --

CARDS: dict[str, Any] = {}


def get_card(card: str) -> dict:
    """A card as the wallet knows it."""
    return {"card": card, "status": CARDS[card]["status"], "kind": "credit"}


def pay(order_id: str, card: str) -> Any:
    """Pay an order; the payment service answers with an error text where it refuses the card."""
    if CARDS[card].get("declined"):
        return f"Error: card {card} was declined"
    CARDS["paid"].append(order_id)
    return {"order_id": order_id, "status": "paid", "card": card}


def test_a_forge_learns_one_file_for_a_write_that_succeeded_and_one_refused_and_serves_both(tmp_path: Any) -> None:
    import re

    from skillforge import Forge
    from tests.toolsets.safety import Tools

    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", run_log=False)
    tools = {"get_card": forge.tool(read=True)(get_card), "pay": forge.tool(pay)}

    def agent(task: str, transcript: list | None = None) -> str:
        t = Tools(tools, transcript)
        m = re.fullmatch(r"Pay (\S+) with (\S+)\.", task)
        if m is None:
            raise ValueError(task)
        order_id, card = m.groups()
        if t.get_card(card=card)["status"] != "active":
            return f"{card} cannot pay."
        paid = t.pay(order_id=order_id, card=card)
        return f"I could not pay {order_id} ({paid})." if isinstance(paid, str) else f"Paid {order_id} with {card}."

    forge.agent = agent

    def world(**cards: dict[str, Any]) -> None:
        CARDS.clear()
        CARDS.update(cards, paid=[])

    world(**{"card-11": {"status": "active"}})
    assert forge.solve("Pay A-1 with card-11.").source == "agent"
    world(**{"card-12": {"status": "active", "declined": True}})
    refused = forge.solve("Pay A-2 with card-12.")
    assert refused.source == "skill+agent" and refused.learned  # the skill paid, then its answer's guard handed over
    assert CARDS["paid"] == [] and len(forge.skills()) == 1
    for card, declined in (("card-13", True), ("card-14", False)):
        world(**{card: {"status": "active", "declined": declined}})
        served = forge.solve(f"Pay A-3 with {card}.")
        assert served.source == "skill" and served.output == (
            f"I could not pay A-3 (Error: card {card} was declined)." if declined else f"Paid A-3 with {card}.")
        assert CARDS["paid"] == ([] if declined else ["A-3"])  # paid once, as the agent would
    # a card of a status no run showed: the skill stops before it pays, the agent answers
    world(**{"card-15": {"status": "frozen"}})
    frozen = forge.solve("Pay A-5 with card-15.")
    assert frozen.source in ("agent", "skill+agent") and frozen.output == "card-15 cannot pay." and CARDS["paid"] == []


def city_run(order_id: str, card: str, city: str, *, declined: bool = False) -> Trajectory:
    """``pay_run`` where the card's record says its holder's city, and a payment made returns the card's record
    with it, as it was read (paying changed nothing there)."""
    run = pay_run(order_id, card, declined=declined)
    read = {**run.calls[0].result, "city": city}
    paid = run.calls[1].result if declined else {**run.calls[1].result, "city": city}
    calls = [run.calls[0].model_copy(update={"result": read}), run.calls[1].model_copy(update={"result": paid})]
    return run.model_copy(update={"calls": calls})


def test_a_field_the_write_returned_as_it_was_read_is_judged_by_every_run_that_read_it() -> None:
    # six runs read six cities (an attribute: which holder, not what to do); two of them paid, and the
    # payment returned the city as read: after the write, that field is the read's fact, not a switch of
    # the two cities the paying runs happened to show
    cities = ["Austin", "Boston", "Chicago", "Denver", "El Paso", "Fresno"]
    runs = [city_run(f"A-{k}", f"card-1{k}", c, declined=k > 1) for k, c in enumerate(cities)]
    spec = learned(runs)
    assert not isinstance(spec, Rejected) and len(spec.early) == 1
    source = render_skill(spec)
    assert "pay_result['city'] is one of" not in source and "pay_result['city'] took 6 different values" in source
    assert prove_all(source, spec, [city_run("A-7", "card-17", "Gary")]) is None
    # a field the write returned otherwise than it was read is a fact of the write's own
    changed = [r.model_copy(update={"calls": [r.calls[0], r.calls[1].model_copy(update={"result": {**r.calls[1].result, "city": "Hub"}})]})
               if isinstance(r.calls[1].result, dict) else r for r in runs]
    source = render_skill(learned(changed))
    assert "pay_result['city'] == 'Hub'" in source


# -- a read before the branch point that takes an element by position --------------------
LATEST_TOOLS = {
    "find_user": ToolRef(module="shop", qualname="find_user", read=True, params=("email",)),
    "get_user": ToolRef(module="shop", qualname="get_user", read=True, params=("user_id",)),
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
}


def latest_run(email: str, orders: list[str], status: str) -> Trajectory:
    """"Where's my latest order? Email: ...": the agent reads the customer's last order; a delivered
    one is told with its tracking number, a pending one as not shipped yet."""
    user_id = email.split("@")[0].replace(".", "_") + "_1234"
    order = {"order_id": orders[-1], "status": status, "tracking": ["449182730043"] if status == "delivered" else []}
    said = f"Order {orders[-1]} was delivered; tracking 449182730043." if status == "delivered" else f"Order {orders[-1]} hasn't shipped yet."
    return Trajectory(
        task=f"Where's my latest order? Email: {email}",
        calls=[
            Call(tool="find_user", args={"email": email}, result=user_id),
            Call(tool="get_user", args={"user_id": user_id}, result={"user_id": user_id, "orders": orders}),
            Call(tool="get_order", args={"order_id": orders[-1]}, result=order),
        ],
        outcome=Outcome(ok=True, output=said), tools=LATEST_TOOLS,
    )


def test_a_read_before_the_branch_checks_the_element_it_takes_by_position_is_there() -> None:
    from tests.test_learning import learn

    runs = [latest_run("ana.ruiz@x.io", ["#W1000001", "#W1000002"], "delivered"),
            latest_run("bo.li@x.io", ["#W2000001", "#W2000002"], "pending")]
    spec, source = learn(runs, "latest_order")
    assert source is not None and "if " in source.split("def latest_order", 1)[1], spec
    body = source.split("def latest_order", 1)[1]
    check = "require(has(user_2, 'orders', 1, kind='str')"
    assert check in body and body.index(check) < body.index("order = get_order(order_id=user_2['orders'][1])"), body
    # a customer with one order: stopped by that guard before the read, not by an IndexError in its arguments
    why = prove_all(source, spec, [latest_run("cy.park@x.io", ["#W3000001"], "pending")])
    assert why is not None and any(f"user_2['orders'][1] is {said}" in why.reason for said in ("a str", "one line of text")), why


def test_a_branch_told_apart_by_an_element_taken_by_position_needs_the_element_there() -> None:
    from tests.test_learning import learn

    # the latest of three orders, the latest of four: two ways, told apart by the element at position 2
    runs = [latest_run("ana.ruiz@x.io", ["#W1000001", "#W1000002", "#W1000003"], "delivered"),
            latest_run("bo.li@x.io", ["#W2000001", "#W2000002", "#W2000003", "#W2000004"], "pending")]
    spec, source = learn(runs, "latest_order")
    assert source is not None, spec
    assert "if has(user_2, 'orders', 2) and (user_2['orders'][2]) in ('#W1000003',):" in source, source
    # one order: no element at position 2, so not the first way; the other way's guards stop the skill
    why = prove_all(source, spec, [latest_run("cy.park@x.io", ["#W3000001"], "pending")])
    assert why is not None and "IndexError" not in why.reason and any(
        f"user_2['orders'][3] is {said}" in why.reason for said in ("a str", "one line of text")), why
