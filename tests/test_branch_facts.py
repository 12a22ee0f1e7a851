"""Which facts a branch is taken on, and which facts each branch checks.

A payment moved to another card says where the old charge goes back ("your PayPal account", "your
gift card"): the record the order's payment names decides it, not the state the customer lives
in. Runs that made the same calls and answered two ways branch on that record's kind, and each
branch checks what its own runs read before the write: a world neither group showed is handed
over, never answered as the other group's.

A request for the card an order was paid with already ("already paid with your mastercard")
stops after the reads; the runs that paid read the order's payment and the record it names. The
branch that stopped is checked on those facts too (they are facts of its runs' worlds as well):
a customer whose order was paid otherwise is never told it already was.
"""

from __future__ import annotations

from typing import Any

from skillforge._antiunify import generalize
from skillforge._codegen import render_skill
from skillforge._compile import prove_all
from skillforge._learning import spec_from_runs
from skillforge._lifting import Rejected, discover_template
from skillforge._template import TaskTemplate
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory

TOOLS = {
    "find_user": ToolRef(module="shop", qualname="find_user", read=True, params=("name",)),
    "get_user": ToolRef(module="shop", qualname="get_user", read=True, params=("user_id",)),
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
    "pay_with": ToolRef(module="shop", qualname="pay_with", params=("order_id", "method_id")),
}
KINDS = {"paypal": "your PayPal account", "gift_card": "your gift card"}


def user(name: str, state: str, methods: list[dict[str, Any]]) -> dict[str, Any]:
    return {"user_id": f"{name}_1", "address": {"city": "Springfield", "state": state},
            "methods": {m["id"]: m for m in methods}}


def card(brand: str, n: int) -> dict[str, Any]:
    return {"id": f"card_{7340000 + n}", "source": "credit_card", "brand": brand, "last_four": f"{n:04d}"}


def other(source: str, n: int) -> dict[str, Any]:
    return {"id": f"{source}_{7340000 + n}", "source": source}


def order(order_id: str, state: str, paid_with: str, amount: float) -> dict[str, Any]:
    return {"order_id": order_id, "status": "pending", "address": {"city": "Springfield", "state": state},
            "payments": [{"kind": "payment", "amount": amount, "method_id": paid_with}]}


def pay_run(name: str, order_id: str, last_four: str, customer: dict[str, Any], placed: dict[str, Any]) -> Trajectory:
    """The agent moves the order's payment onto the card asked for, and says where the old charge goes."""
    new = next(m for m in customer["methods"].values() if m.get("last_four") == last_four)
    paid = placed["payments"][0]
    old = customer["methods"][paid["method_id"]]
    moved = {**placed, "payments": [*placed["payments"], {"kind": "payment", "amount": paid["amount"], "method_id": new["id"]},
                                    {"kind": "refund", "amount": paid["amount"], "method_id": old["id"]}]}
    calls = [
        Call(tool="find_user", args={"name": name}, result=customer["user_id"]),
        Call(tool="get_user", args={"user_id": customer["user_id"]}, result=customer),
        Call(tool="get_order", args={"order_id": order_id}, result=placed),
        Call(tool="pay_with", args={"order_id": order_id, "method_id": new["id"]}, result=moved),
    ]
    output = (f"Order {order_id} is now paid with your card ending in {last_four}; the ${paid['amount']:.2f} charged to "
              f"{KINDS[old['source']]} will be refunded.")
    return Trajectory(task=f"I'm {name}. Pay order {order_id} with my card ending in {last_four} instead.", calls=calls,
                      outcome=Outcome(ok=True, output=output), tools=TOOLS)


def moved(name: str, n: int, state: str, old: str, amount: float = 40.0) -> Trajectory:
    """``name`` (of ``state``) moves order W<n>, paid with their ``old`` method, onto their card."""
    methods = [card("visa", n), other(old, n)]
    return pay_run(name, f"W{n}", f"{n:04d}", user(name, state, methods), order(f"W{n}", state, f"{old}_{7340000 + n}", amount))


def learned(runs: list[Trajectory]) -> Any:
    """The skill of ``runs`` under the template their tasks have in common."""
    found = [discover_template(run) for run in runs]
    assert all(isinstance(t, TaskTemplate) for t in found)
    template = max(found, key=lambda t: len(t.slots))  # the one that names the most, widened by the others
    for one in found:
        template = generalize(template, one) or template
    return spec_from_runs(runs, name="pay_order", template=template)


def served_or_handed_over(source: str, spec: Any, world: Trajectory) -> bool:
    """True where the skill answers ``world`` as the agent did, False where it stops and hands it over (a
    guard fails, or a field a guard reads is not there: the Forge hands over on either); a skill that
    answers otherwise or makes other calls fails the test (a wrong replay)."""
    why = prove_all(source, spec, [world])
    assert why is None or "a guard fails" in str(why) or "the skill raised KeyError" in str(why), why
    return why is None


def test_two_answers_after_a_write_branch_on_the_record_the_payment_names_not_on_a_state() -> None:
    # the gift card's customer lives in TX, the PayPal customer in CA: the state tells the runs apart
    # too, but the old payment's kind is what the answers follow
    runs = [moved("ana", 11, "TX", "gift_card"), moved("bo", 12, "CA", "paypal")]
    spec = learned(runs)
    assert not isinstance(spec, Rejected) and len(spec.early) == 1
    source = render_skill(spec)
    body = source.split("def pay_order", 1)[1]
    branch = body.split("pay_with_result = pay_with(", 1)[1].split("\n    if ", 1)[1].split("\n", 1)[0]
    assert branch.startswith("(method['source']) in ("), branch  # the method the order was paid with, picked once before
    assert "    method = pick(user_2['methods'], 'id', order['payments'][0]['method_id'])\n" in body
    assert prove_all(source, spec, runs) is None
    # worlds like each group's runs': answered as the agent answers them
    assert served_or_handed_over(source, spec, moved("cy", 13, "TX", "gift_card", amount=55.0))
    assert served_or_handed_over(source, spec, moved("dee", 14, "CA", "paypal", amount=70.0))


def test_each_branch_after_a_write_checks_what_its_own_runs_read_before_it() -> None:
    runs = [moved("ana", 11, "TX", "gift_card"), moved("bo", 12, "CA", "paypal")]
    spec = learned(runs)
    source = render_skill(spec)
    # each state and each kind of old payment was seen, but never together: before the write the skill
    # checks what the runs showed as a whole (either state, either kind), after it the branch taken
    # checks what its own runs read, and hands over: never the other group's answer
    for world in (moved("cy", 13, "CA", "gift_card"), moved("dee", 14, "TX", "paypal")):
        assert not served_or_handed_over(source, spec, world)
    body = source.split("def pay_order", 1)[1]
    after = body.split("pay_with_result = pay_with(", 1)[1]
    assert "require(user_2['address']['state'] == 'TX'" in after.split("return ", 1)[0]  # the gift card runs' state
    assert "require(user_2['address']['state'] == 'CA'" in after.split("return ", 1)[1]  # the PayPal runs'


# -- a request that stopped after the reads, beside runs that read the order's payment and paid --


def label(m: dict[str, Any]) -> str:
    return f"your {m['brand']} ending in {m['last_four']}" if m["source"] == "credit_card" else KINDS[m["source"]]


def switch_run(name: str, n: int, asked: str, methods: list[dict[str, Any]], paid_with: int) -> Trajectory:
    """The agent pays order W<n> with the method ``asked`` names (a brand, or "paypal"), or says it is paid so already."""
    customer = user(name, "TX", methods)
    placed = order(f"W{n}", "TX", methods[paid_with]["id"], 40.0)
    new = next(m for m in methods if asked in (m["source"], m.get("brand")))
    old = methods[paid_with]
    calls = [
        Call(tool="find_user", args={"name": name}, result=customer["user_id"]),
        Call(tool="get_user", args={"user_id": customer["user_id"]}, result=customer),
        Call(tool="get_order", args={"order_id": f"W{n}"}, result=placed),
    ]
    if new["id"] == old["id"]:
        output = f"Order W{n} is already paid with {label(new)}; nothing to change."
    else:
        calls.append(Call(tool="pay_with", args={"order_id": f"W{n}", "method_id": new["id"]}, result={**placed, "status": "pending"}))
        output = f"Order W{n} is now paid with {label(new)}; the $40.00 charged to {label(old)} will be refunded."
    return Trajectory(task=f"I'm {name}. Pay order W{n} with my {asked} instead.", calls=calls,
                      outcome=Outcome(ok=True, output=output), tools=TOOLS)


def test_a_branch_that_stopped_checks_the_facts_the_other_branch_read_of_its_runs_worlds() -> None:
    # ana asked for the card her order was paid with; bo and cy for another method: they paid
    runs = [
        switch_run("ana", 21, "mastercard", [card("mastercard", 21), other("paypal", 21)], paid_with=0),
        switch_run("bo", 22, "paypal", [card("mastercard", 22), other("paypal", 22)], paid_with=0),
        switch_run("cy", 23, "paypal", [card("visa", 23), other("paypal", 23)], paid_with=0),
    ]
    spec = learned(runs)
    assert not isinstance(spec, Rejected) and len(spec.early) == 1
    source = render_skill(spec)
    assert prove_all(source, spec, runs) is None
    early = source.split("def pay_order", 1)[1].split("\n    if ", 1)[1].split("\n        return ", 1)[0]
    # the record the order's payment names, which the paying runs read, is a fact of ana's world too
    assert "pick(user_2['methods'], 'id', order['payments'][0]['method_id'])" in early
    # the card asked for, where the order was paid with PayPal: the agent pays; the skill never says "already paid"
    paid_otherwise = switch_run("dee", 24, "mastercard", [card("mastercard", 24), other("paypal", 24)], paid_with=1)
    assert not served_or_handed_over(source, spec, paid_otherwise)
    # the card the order was paid with, asked for again: "already paid", as the agent says
    assert served_or_handed_over(source, spec, switch_run("eve", 25, "mastercard", [card("mastercard", 25), other("paypal", 25)], paid_with=0))



def branded(name: str, n: int, brand: str, state: str = "TX") -> Trajectory:
    """``moved``, where the task names the card by its brand too, and the answer says the brand as the card's record has it."""
    run = moved(name, n, state, "gift_card")
    methods = run.calls[1].result["methods"]
    for m in methods.values():
        if m["source"] == "credit_card":
            m["brand"] = brand
    said = brand.title()
    return run.model_copy(update={
        "task": run.task.replace("my card ending", f"my {said} card ending"),
        "outcome": Outcome(ok=True, output=run.outcome.output.replace("your card ending", f"your {said} card ending")),
    })


def test_a_task_value_the_answers_own_text_repeats_is_pinned() -> None:
    # "with my Mastercard card" answered "paid with your Mastercard card": the answer's text says the brand
    # (as the record has it, title-cased), not the task's value; a task that names a Visa card is answered
    # otherwise, so the skill takes Mastercard only
    runs = [branded("ana", 11, "mastercard"), branded("bo", 12, "mastercard", "CA")]
    spec = learned(runs)
    assert not isinstance(spec, Rejected)
    source = render_skill(spec)
    assert prove_all(source, spec, runs) is None
    assert "require(method_brand == 'mastercard'" in source
    assert served_or_handed_over(source, spec, branded("cy", 13, "mastercard"))
    assert not served_or_handed_over(source, spec, branded("dee", 14, "visa"))



def test_a_fact_lent_by_the_other_branch_takes_the_values_the_borrowing_runs_showed() -> None:
    # the customers who paid hold two gift cards, so the kinds of their methods repeat and are a fact of
    # their runs ("credit_card", "gift_card"); ana's do not repeat, and her branch borrows the fact as her
    # run shows it, not as theirs did (else the skill fails on her own run and is not learned)
    def second(kind: str, n: int, **more: str) -> dict[str, Any]:
        return {**other(kind, n), "id": f"{kind}_{7350000 + n}", **more}

    runs = [
        switch_run("ana", 21, "mastercard", [card("mastercard", 21), other("paypal", 21)], paid_with=0),
        *(switch_run(name, n, "visa", [card("mastercard", n), second("card", n, source="credit_card", brand="visa", last_four=f"{n + 50:04d}"),
                                       other("gift_card", n), second("gift_card", n)], paid_with=0) for name, n in (("bo", 22), ("cy", 23))),
    ]
    spec = learned(runs)
    assert not isinstance(spec, Rejected)
    source = render_skill(spec)
    assert prove_all(source, spec, runs) is None
    early = source.split("def pay_order", 1)[1].split("\n    if ", 1)[1].split("\n        return ", 1)[0]
    # the borrowed fact, as ana's run shows it, is what tells her branch apart (its condition, not restated inside)
    assert early.startswith("(values(user_2, 'methods', '*', 'source')) in (['credit_card', 'paypal'],):"), early
    assert "require(values(user_2, 'methods', '*', 'source') ==" not in early


# -- the same at the Forge: real tools over a shop the tests change between tasks --

SHOP: dict[str, dict[str, Any]] = {"users": {}, "orders": {}}


def get_user(name: str) -> dict:
    """A customer: address and payment methods by id."""
    return SHOP["users"][name]


def get_order(order_id: str) -> dict:
    """An order: status, address and payments."""
    return SHOP["orders"][order_id]


def pay_with(order_id: str, method_id: str) -> dict:
    """Pay a pending order with another method; the old payment is refunded. Returns the order."""
    placed = SHOP["orders"][order_id]
    paid = placed["payments"][0]
    placed["payments"] += [{"kind": "payment", "amount": paid["amount"], "method_id": method_id},
                           {"kind": "refund", "amount": paid["amount"], "method_id": paid["method_id"]}]
    return placed


def shop_agent(tools: dict[str, Any]) -> Any:
    import re

    from tests.toolsets.safety import Tools

    def agent(task: str, transcript: list | None = None) -> str:
        t = Tools(tools, transcript)
        m = re.fullmatch(r"I'm (\w+)\. Pay order (\S+) with my card ending in (\d{4}) instead\.", task)
        if m is None:
            raise ValueError(task)
        name, order_id, last_four = m.groups()
        customer, placed = t.get_user(name=name), t.get_order(order_id=order_id)
        new = next(pm for pm in customer["methods"].values() if pm.get("last_four") == last_four)
        old = customer["methods"][placed["payments"][0]["method_id"]]
        amount = placed["payments"][0]["amount"]
        t.pay_with(order_id=order_id, method_id=new["id"])
        return (f"Order {order_id} is now paid with your card ending in {last_four}; the ${amount:.2f} charged to "
                f"{KINDS[old['source']]} will be refunded.")

    return agent


def test_a_forge_never_answers_where_the_old_payment_went_as_another_customers_runs_did(tmp_path: Any) -> None:
    from skillforge import Forge

    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", run_log=False)
    tools = {"get_user": forge.tool(read=True)(get_user), "get_order": forge.tool(read=True)(get_order), "pay_with": forge.tool(pay_with)}
    forge.agent = shop_agent(tools)

    def ask(name: str, n: int, state: str, old: str) -> Any:
        methods = [card("visa", n), other(old, n)]
        SHOP["users"] = {name: user(name, state, methods)}
        SHOP["orders"] = {f"W{n}": order(f"W{n}", state, methods[1]["id"], 30.0 + n)}
        done = forge.solve(f"I'm {name}. Pay order W{n} with my card ending in {n:04d} instead.")
        refunded = [p for p in SHOP["orders"][f"W{n}"]["payments"] if p["kind"] == "refund"]
        assert len(refunded) == 1, SHOP["orders"][f"W{n}"]  # paid once, as the agent pays
        assert done.output.endswith(f"charged to {KINDS[old]} will be refunded."), done.output
        return done

    try:
        assert ask("ana", 11, "TX", "gift_card").source == "agent"
        assert ask("bo", 12, "CA", "paypal").source in ("agent", "skill+agent")  # another state: learned as a branch
        assert len(forge.skills()) == 1
        assert ask("cy", 13, "TX", "gift_card").source == "skill"
        assert ask("dee", 14, "CA", "paypal").source == "skill"
        # a CA customer whose order was paid by gift card: no run showed that world; the skill pays (every
        # run did, in worlds of each state and kind) and hands the answer over, never says "PayPal"
        assert ask("eve", 15, "CA", "gift_card").source == "skill+agent"
    finally:
        forge.close()


def test_a_forge_never_says_an_order_is_paid_so_already_where_it_was_paid_otherwise(tmp_path: Any) -> None:
    import re

    from skillforge import Forge
    from tests.toolsets.safety import Tools

    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", run_log=False)
    tools = {"get_user": forge.tool(read=True)(get_user), "get_order": forge.tool(read=True)(get_order), "pay_with": forge.tool(pay_with)}

    def agent(task: str, transcript: list | None = None) -> str:
        t = Tools(tools, transcript)
        m = re.fullmatch(r"I'm (\w+)\. Pay order (\S+) with my (\w+) instead\.", task)
        if m is None:
            raise ValueError(task)
        name, order_id, asked = m.groups()
        customer, placed = t.get_user(name=name), t.get_order(order_id=order_id)
        new = next(pm for pm in customer["methods"].values() if asked in (pm["source"], pm.get("brand")))
        old = customer["methods"][placed["payments"][0]["method_id"]]
        if new["id"] == old["id"]:
            return f"Order {order_id} is already paid with {label(new)}; nothing to change."
        t.pay_with(order_id=order_id, method_id=new["id"])
        return f"Order {order_id} is now paid with {label(new)}; the $40.00 charged to {label(old)} will be refunded."

    forge.agent = agent

    def ask(name: str, n: int, asked: str, brand: str, paid_with: int) -> Any:
        methods = [card(brand, n), other("paypal", n)]
        SHOP["users"] = {name: user(name, "TX", methods)}
        SHOP["orders"] = {f"W{n}": order(f"W{n}", "TX", methods[paid_with]["id"], 40.0)}
        done = forge.solve(f"I'm {name}. Pay order W{n} with my {asked} instead.")
        moved = len(SHOP["orders"][f"W{n}"]["payments"]) > 1
        paid_as = (brand, "paypal")[paid_with]
        assert moved == (asked != paid_as) and ("already paid" in done.output) == (not moved), (done.source, done.output)
        return done

    try:
        # the card an order was paid with, asked for: "already paid"; PayPal asked for: paid with it
        for k, (asked, brand) in enumerate([("mastercard", "mastercard"), ("paypal", "mastercard"), ("paypal", "visa"),
                                            ("visa", "visa"), ("paypal", "visa"), ("mastercard", "mastercard")]):
            ask(f"u{k}", 31 + k, asked, brand, paid_with=0)
        assert any(done.source == "skill" for done in [ask("u6", 37, "paypal", "visa", paid_with=0),
                                                       ask("u7", 38, "visa", "visa", paid_with=0)])
        # the card asked for, where the order was paid with PayPal: the agent pays, and so does the skill or it hands over
        for k, brand in enumerate(["mastercard", "visa"]):
            assert ask(f"v{k}", 41 + k, brand, brand, paid_with=1).source in ("agent", "skill+agent")
    finally:
        forge.close()
