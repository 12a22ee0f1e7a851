"""Learning from several runs, on runs alone: merged facts, attributes, and templates widened by evidence."""

from __future__ import annotations

from typing import Any

from skillforge._codegen import render_skill
from skillforge._compile import prove_all
from skillforge._antiunify import generalize
from skillforge._learning import ATTRIBUTE_RUNS, CONTEXT_RUNS, named, spec_from_runs
from skillforge._lifting import Rejected, discover_template
from skillforge._template import Slot, TaskTemplate
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory

TOOLS = {
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
    "refund": ToolRef(module="shop", qualname="refund", params=("order_id", "amount")),
}


def run(order_id: str, order: dict[str, Any], task: str | None = None) -> Trajectory:
    full = {"id": order_id, "total": 40.0, **order}
    return Trajectory(
        task=task or f"Refund order #{order_id}",
        calls=[
            Call(tool="get_order", args={"order_id": order_id}, result=full),
            Call(tool="refund", args={"order_id": order_id, "amount": 40.0}, result={"ok": True}),
        ],
        outcome=Outcome(ok=True, output=f"Refunded order {order_id}."),
        tools=TOOLS,
    )


def with_customer(order_id: str, customer: dict[str, Any], order: dict[str, Any]) -> Trajectory:
    """A refund that reads the order's customer too (a record the refund does not act on)."""
    tools = {**TOOLS, "get_customer": ToolRef(module="shop", qualname="get_customer", read=True, params=("customer_id",))}
    return Trajectory(
        task=f"Refund order #{order_id}",
        calls=[
            Call(tool="get_order", args={"order_id": order_id}, result={"id": order_id, "total": 40.0, "customer_id": f"C{order_id}", **order}),
            Call(tool="get_customer", args={"customer_id": f"C{order_id}"}, result={"id": f"C{order_id}", **customer}),
            Call(tool="refund", args={"order_id": order_id, "amount": 40.0}, result={"ok": True}),
        ],
        outcome=Outcome(ok=True, output=f"Refunded order {order_id}."),
        tools=tools,
    )


def learn(runs: list[Trajectory], name: str = "refund_order") -> Any:
    """``(spec, source)`` of the skill learned from ``runs`` under the first run's template, proven on
    every run; ``(Rejected, None)`` if the runs make no one skill."""
    template = discover_template(runs[0])
    assert not isinstance(template, Rejected)
    spec = spec_from_runs(runs, name=name, template=template)
    if isinstance(spec, Rejected):
        return spec, None
    source = render_skill(spec)
    assert prove_all(source, spec, runs) is None  # the merged skill still reproduces every run
    return spec, source


def test_two_flags_keep_only_the_combinations_runs_showed() -> None:
    _spec, source = learn([run("1", {"fraud_hold": False, "approved": False}), run("2", {"fraud_hold": True, "approved": True})])
    assert "(order['approved'], order['fraud_hold']) in ((False, False), (True, True))" in source


def test_a_flag_seen_both_ways_with_nothing_else_varying_guards_nothing() -> None:
    _spec, source = learn([run("1", {"gift": False}), run("2", {"gift": True})])
    assert "order['gift']" not in source.split("def refund_order", 1)[1]  # its value is no guard (its field is)


def test_a_list_empty_in_one_run_and_not_in_another_merges_as_a_switch() -> None:
    _spec, source = learn([run("1", {"notes": []}), run("2", {"notes": [{"flag": True}]})])
    body = source.split("def refund_order", 1)[1]
    assert "len(order['notes']) > 0" in body and "values(order, 'notes', '*', 'flag')" in body


def test_a_status_keeps_its_values_and_a_name_new_in_every_run_is_an_attribute() -> None:
    statuses = ["shipped", "delivered", "shipped", "delivered", "shipped"]
    names = ["Berlin", "Paris", "Lima", "Oslo", "Quito"]
    runs = [run(str(i), {"status": s, "city": c}) for i, (s, c) in enumerate(zip(statuses, names, strict=True), 1)]
    _spec, source = learn(runs)
    body = source.split("def refund_order", 1)[1]
    assert "order['status'] in ('delivered', 'shipped')" in body
    assert f"# not guarded: order['city'] took {ATTRIBUTE_RUNS} different values in {ATTRIBUTE_RUNS} runs" in body


def test_a_name_seen_in_fewer_runs_stays_guarded() -> None:
    runs = [run(str(i), {"status": s}) for i, s in enumerate(["Shipped", "Packed", "Late", "Lost"], 1)][: ATTRIBUTE_RUNS - 1]
    _spec, source = learn(runs)
    assert "order['status'] in (" in source  # four values, each new: not yet evidence of an attribute


def test_a_name_about_what_the_runs_do_not_act_on_is_an_attribute_after_fewer_runs() -> None:
    # the customer's city (a record the refund does not use) after three cities; the order's own
    # city, which the refund acts on, still needs five
    cities = ["Berlin", "Paris", "Lima"][:CONTEXT_RUNS]
    runs = [with_customer(str(i), {"city": c}, {"city": c}) for i, c in enumerate(cities, 1)]
    _spec, source = learn(runs)
    body = source.split("def refund_order", 1)[1]
    assert f"# not guarded: customer['city'] took {CONTEXT_RUNS} different values in {CONTEXT_RUNS} runs" in body
    assert "# not guarded: order['city']" not in body and "(order['city'], " in body  # still its values as seen
    _spec, source = learn(runs[:-1])  # two cities: not yet evidence
    assert "customer['city'] in ('Berlin', 'Paris')" in source.split("def refund_order", 1)[1]


def test_a_field_only_some_records_have_and_whose_sign_varied_is_a_switch_with_its_absence() -> None:
    # a gift card's balance, positive in one run and zero in another, and a card with no balance at
    # all: one skill, and a balance no run showed (negative) or a world of an unseen combination misses
    runs = [run("1", {"kind": "gift", "balance": 5.0}), run("2", {"kind": "gift", "balance": 0.0}), run("3", {"kind": "card"})]
    spec, source = learn(runs)
    assert not isinstance(spec, Rejected)
    body = source.split("def refund_order", 1)[1]
    assert "if 'balance' in order else None)" in body
    assert prove_all(source, spec, [run("4", {"kind": "gift", "balance": 12.0})]) is None
    assert prove_all(source, spec, [run("5", {"kind": "gift", "balance": -3.0})]) is not None
    assert prove_all(source, spec, [run("6", {"kind": "card", "balance": 3.0})]) is not None  # a card with a balance: unseen


def test_runs_whose_calls_differ_are_not_merged() -> None:
    refused = Trajectory(
        task="Refund order #3", calls=[Call(tool="get_order", args={"order_id": "3"}, result={"id": "3", "total": 40.0})],
        outcome=Outcome(ok=True, output="Refunded order 3."), tools=TOOLS,
    )
    spec, _ = learn([run("1", {}), refused])
    assert isinstance(spec, Rejected)


def test_a_path_one_run_lacks_keeps_the_runs_apart() -> None:
    spec, _ = learn([run("1", {"hold": {"on": False}}), run("2", {"hold": "none"})])
    assert isinstance(spec, Rejected)


U = Slot("username", "id", "str", None, "a.a")
G = Slot("group", "id", "str", None, "a-a")


def test_one_differing_region_becomes_a_choice_of_exactly_the_texts_seen() -> None:
    he = TaskTemplate("Remove {username} from the {group} group, he moved teams.", [U, G])
    she = TaskTemplate("Remove {username} from the {group} group, she moved teams.", [U, G])
    both = generalize(he, she)
    assert both is not None and both.text == "Remove {username} from the {group} group, {_1} moved teams."
    assert both.bind("Remove ann.li from the vpn-users group, she moved teams.") == {"username": "ann.li", "group": "vpn-users"}
    assert both.bind("Remove ann.li from the vpn-users group, it moved teams.") is None
    assert both.bind("Remove ann.li from the vpn-users group, never moved teams.") is None


def test_a_list_of_lowercase_words_is_ignored_whole_whatever_words_it_shares() -> None:
    # "impatient, busy" / "impatient, sad": the shared "impatient" is an item of the list, not common text
    def pair(a: str, b: str) -> TaskTemplate | None:
        return generalize(TaskTemplate(f"Hi, I am {a}. Reset {{username}} now.", [U]), TaskTemplate(f"Hi, I am {b}. Reset {{username}} now.", [U]))

    for a, b, shape in (("impatient, busy", "impatient, sad", "a, a"), ("calm, happy, busy", "happy, busy", "words:2-3:,"),
                        ("happy, busy, calm", "happy, busy", "words:2-3:,"), ("calm", "happy, busy", "words:1-2:,"),
                        ("happy", "happy, busy", "words:1-2:,")):
        both = pair(a, b)
        assert both is not None and both.text == "Hi, I am {_2}. Reset {username} now.", (a, b)
        assert [(s.kind, s.shape) for s in both.slots if s.name == "_2"] == [("ignored", shape)]
        assert both.bind(f"Hi, I am {a}. Reset ann.li now.") == both.bind(f"Hi, I am {b}. Reset ann.li now.") == {"username": "ann.li"}
    assert pair("calm", "happy, busy").bind("Hi, I am never, busy. Reset ann.li now.") is None  # ignored text never says "not"
    # one word against one word stays a choice of exactly those words, and so does a clause after a comma
    assert [s.kind for s in pair("calm", "busy").slots] == ["id", "choice"]
    assert [s.kind for s in pair("calm, he said", "calm, she said").slots] == ["id", "choice"]
    assert [s.kind for s in pair("calm", "not, busy").slots] == ["id", "choice"]  # a list saying "not": exactly those texts


def test_a_trailing_thanks_is_optional_text_and_nothing_else_is() -> None:
    plain = TaskTemplate("Please reset the password for {username}.", [U])
    thanks = TaskTemplate("Please reset the password for {username}. Thanks!", [U])
    both = generalize(plain, thanks)
    assert both is not None
    assert both.bind("please reset the password for a.b") == {"username": "a.b"}
    assert both.bind("please reset the password for a.b, thanks") == {"username": "a.b"}
    assert both.bind("please reset the password for a.b. Actually, don't.") is None


def test_regions_that_would_combine_unseen_texts_or_carry_meaning_keep_templates_apart() -> None:
    a = TaskTemplate("Hi, please reset {username} now, he asked.", [U])
    b = TaskTemplate("Hello, please reset {username} now, she asked.", [U])
    assert generalize(a, b) is None  # two regions: "Hello ... he" was never seen
    amount = Slot("amount", "int", "int", None, "9")
    dollars = TaskTemplate("Refund ${amount} on the order please", [amount])
    percent = TaskTemplate("Refund {amount}% on the order please", [amount])
    assert generalize(dollars, percent) is None
    other = TaskTemplate("Add {username} to the wiki group", [U])
    assert generalize(a, other) is None  # no common text to speak of


E = Slot("email", "email", "str", None, "email")


def test_regions_of_several_words_of_one_shape_become_ignored_slots() -> None:
    a = TaskTemplate("I am Mia Jackson, email {email}. You are patient, shy. Reset my password please.", [E])
    b = TaskTemplate("I am Evelyn Ahmed, email {email}. You are creative, sad, patient, polite, organized. Reset my password please.", [E])
    both = generalize(a, b)
    assert both is not None and both.text == "I am {_2}, email {email}. You are {_3}. Reset my password please."
    assert [s.kind for s in both.slots if s.name.startswith("_")] == ["ignored", "ignored"]
    assert [s.name for s in both.params] == ["email"]  # ignored text is passed to nothing
    assert both.bind("I am Raj Li, email r@x.io. You are messy, happy, polite. Reset my password please.") == {"email": "r@x.io"}
    assert both.bind("I am Raj Li, email r@x.io. You are not happy. Reset my password please.") is None  # a negation
    assert both.bind("I am Raj Li, email r@x.io. You are busy. Then delete my account. Reset my password please.") is None
    assert both.bind("I am raj li, email r@x.io. You are messy, happy. Reset my password please.") is None  # not two capitalised words


def test_regions_with_digits_or_negations_are_not_ignored() -> None:
    a = TaskTemplate("Reset the password for {email} quickly, fast please, thanks a lot.", [E])
    b = TaskTemplate("Reset the password for {email} quickly, no rush, thanks a lot.", [E])
    exact = generalize(a, b)  # "no": a negation is never text to ignore, only one of the texts runs showed
    assert exact is not None and [s.kind for s in exact.slots if s.name.startswith("_")] == ["choice"]
    assert exact.bind("Reset the password for r@x.io quickly, no hurry, thanks a lot.") is None
    c = TaskTemplate("Reset the password for {email} quickly, right now, thanks a lot.", [E])
    both = generalize(a, c)
    assert both is not None and both.bind("Reset the password for r@x.io quickly, this week, thanks a lot.") == {"email": "r@x.io"}
    assert both.bind("Reset the password for r@x.io quickly, not now, thanks a lot.") is None  # nor binds it
    e = TaskTemplate("Reset the password for {email}, ticket opened two days ago, thanks a lot.", [E])
    f = TaskTemplate("Reset the password for {email}, ticket opened 3 days ago, thanks a lot.", [E])
    digits = generalize(e, f)  # a digit may be a value: only the texts runs showed
    assert digits is not None and [s.kind for s in digits.slots if s.name.startswith("_")] == ["choice"]
    assert digits.bind("Reset the password for r@x.io, ticket opened 9 days ago, thanks a lot.") is None


def test_slot_shapes_widen_to_fit_both_texts() -> None:
    dotted = TaskTemplate("Please reset the password for {username}.", [U])
    hyphen = TaskTemplate("Please reset the password for {username}.", [Slot("username", "id", "str", None, "a.a-a")])
    both = generalize(dotted, hyphen)
    assert both is not None
    assert both.bind("Please reset the password for ana.garcia-lopez.") == {"username": "ana.garcia-lopez"}
    assert both.bind("Please reset the password for sam.lee.") == {"username": "sam.lee"}
    assert both.bind("Please reset the password for Sam Lee.") is None
    assert generalize(dotted, dotted) is None  # nothing to widen


def remover(t: dict[str, Any]):
    """Removes a user from a group; whatever follows the request ("he moved teams") changes nothing."""
    import re

    from tests.toolsets.safety import Tools

    def agent(task: str, transcript: list | None = None) -> str:
        tools = Tools(t, transcript)
        m = re.match(r"Remove ([\w.]+) from the ([\w-]+) group\b", task)
        if m is None:
            raise ValueError(task)
        username, group = m.groups()
        user = tools.get_user(username=username)
        if group not in user["groups"]:
            return f"{username} is not in {group}."
        tools.remove_from_group(username=username, group=group)
        return f"Removed {username} from {group}."

    return agent


def test_a_forge_widens_a_template_by_one_region_and_serves_the_texts_seen(tmp_path) -> None:  # noqa: ANN001
    from tests.test_safety import check, make_forge, user

    world = {"users": {u: user(i, u, ["staff", "wiki"]) for i, u in enumerate(["ann.li", "bo.chen", "cy.diaz", "di.eng"])}}
    forge = make_forge(tmp_path, remover)
    assert check(forge, "Remove ann.li from the wiki group — he moved teams.", world).result.source == "agent"
    second = check(forge, "Remove bo.chen from the wiki group — she moved teams.", world).result
    assert second.source == "agent" and second.learned == "remove_group_he_moved"  # one skill, widened
    assert [p.stem for p in forge.skills_dir.glob("*.py") if p.stem != "__init__"] == ["remove_group_he_moved"]
    assert check(forge, "Remove cy.diaz from the staff group — she moved teams.", world).result.source == "skill"
    unseen = check(forge, "Remove di.eng from the wiki group — they moved teams.", world).result
    assert unseen.source == "agent"  # a text no run showed there is a miss


def withdrawer(t: dict[str, Any]):
    """Debits an account only if the balance covers the amount."""
    import re

    from tests.toolsets.safety import Tools

    def agent(task: str, transcript: list | None = None) -> str:
        tools = Tools(t, transcript)
        m = re.match(r"Withdraw (\d+) from ([\w-]+)$", task)
        if m is None:
            raise ValueError(task)
        amount, account_id = float(m.group(1)), m.group(2)
        account = tools.get_account(account_id=account_id)
        if account["balance"] < amount:
            return f"{account_id} cannot cover {amount:g}."
        tools.adjust_balance(account_id=account_id, amount=-amount)
        return f"Withdrew {amount:g} from {account_id}."

    return agent


def test_an_amount_compared_with_a_balance_read_before_the_write_is_a_guard(tmp_path) -> None:  # noqa: ANN001
    from tests.test_safety import check, make_forge

    world = {"accounts": {"A-1": {"id": "A-1", "balance": 100.0, "status": "open"},
                          "A-2": {"id": "A-2", "balance": 30.0, "status": "open"}}}
    forge = make_forge(tmp_path, withdrawer)
    check(forge, "Withdraw 40 from A-1", world)
    short = check(forge, "Withdraw 40 from A-2", world)  # the balance does not cover it: no debit
    assert short.writes == [] and short.result.source != "skill"
    other = check(forge, "Withdraw 50 from A-1", world)  # the debit is the negative of the task's amount
    assert other.result.source == "skill" and other.writes == [("adjust_balance", {"account_id": "A-1", "amount": -50.0})]


def test_a_constant_evidently_tied_to_a_task_value_is_not_learned() -> None:
    from skillforge._lifting import lift

    cents = Trajectory(
        task="Charge 40 to account A-1",
        calls=[Call(tool="refund", args={"order_id": "A-1", "amount": 4000}, result={"ok": True})],
        outcome=Outcome(ok=True, output="Charged 40 to A-1."),
        tools=TOOLS,
    )
    verdict = lift(cents)
    assert isinstance(verdict, Rejected) and "tied to the task's" in verdict.reason


def test_text_that_names_something_the_agent_read_is_never_ignored() -> None:
    from skillforge._antiunify import ignores_data

    def run(task: str, items: list[str]) -> Trajectory:
        return Trajectory(
            task=task, calls=[Call(tool="get_order", args={"order_id": "1"}, result={"items": [{"name": n} for n in items]})],
            outcome=Outcome(ok=True, output="done"), tools=TOOLS,
        )

    a = TaskTemplate("Return order {order_id} please: the Cycling Helmet, thanks.", [Slot("order_id", "digits", "str", None, "9")])
    b = TaskTemplate("Return order {order_id} please: the Tea Kettle, thanks.", [Slot("order_id", "digits", "str", None, "9")])
    both = generalize(a, b)
    assert both is not None and any(s.kind == "ignored" for s in both.slots)
    assert ignores_data(both, [run("Return order 1 please: the Cycling Helmet, thanks.", ["Cycling Helmet"])])
    assert not ignores_data(both, [run("Return order 1 please: the Cycling Helmet, thanks.", ["Tea Kettle"])])


def test_a_list_of_words_is_ignored_whole_even_where_two_runs_share_a_word() -> None:
    a = TaskTemplate("I am {email}. You are pessimistic, shy. Reset my password please.", [E])
    b = TaskTemplate("I am {email}. You are pessimistic, happy, busy. Reset my password please.", [E])
    both = generalize(a, b)
    assert both is not None and both.text == "I am {email}. You are {_2}. Reset my password please."
    assert both.bind("I am a@b.co. You are calm, happy. Reset my password please.") == {"email": "a@b.co"}
    he = TaskTemplate("Remove {email} from the wiki group, he moved teams.", [E])
    she = TaskTemplate("Remove {email} from the wiki group, she moved teams.", [E])
    assert generalize(he, she).text == "Remove {email} from the wiki group, {_1} moved teams."  # no list: a choice


def test_a_field_some_records_lack_merges_as_its_values_or_none() -> None:
    card = {"payment": {"kind": "card", "brand": "visa"}}
    paypal = {"payment": {"kind": "paypal"}}
    spec, source = learn([run("1", card), run("2", paypal)])
    body = source.split("def refund_order", 1)[1]
    assert "values(order['payment'], 'brand')" in body  # ['visa'] or [] (absent), as the runs showed
    assert prove_all(source, spec, [run("3", {"payment": {"kind": "card", "brand": "visa"}})]) is None
    assert prove_all(source, spec, [run("4", {"payment": {"kind": "paypal"}})]) is None
    amex = run("5", {"payment": {"kind": "card", "brand": "amex"}})
    assert prove_all(source, spec, [amex]) is not None  # a brand no run showed: the skill stops


def test_a_number_only_some_records_have_is_guarded_where_it_is_there() -> None:
    gift = {"payment": {"kind": "gift_card", "balance": 57.0}}
    paypal = {"payment": {"kind": "paypal"}}
    spec, source = learn([run("1", gift), run("2", paypal), run("3", {"payment": {"kind": "gift_card", "balance": 46.0}})])
    assert not isinstance(spec, Rejected)
    body = source.split("def refund_order", 1)[1]
    assert "'balance' not in order['payment'] or" in body
    assert "[57.0]" not in body and "[46.0]" not in body  # an amount is no switch: how it compares is the fact
    assert prove_all(source, spec, [run("4", {"payment": {"kind": "gift_card", "balance": 75.5}})]) is None
    assert prove_all(source, spec, [run("5", {"payment": {"kind": "paypal"}})]) is None
    short = run("6", {"payment": {"kind": "gift_card", "balance": 12.0}})
    assert prove_all(source, spec, [short]) is not None  # a card holding less than the refund: not what the runs saw


def test_a_comparison_that_varied_where_a_field_is_there_keeps_the_runs_apart() -> None:
    runs = [run("1", {"payment": {"balance": 57.0}}), run("2", {"payment": {}}), run("3", {"payment": {"balance": 12.0}})]
    spec, _ = learn(runs)
    assert isinstance(spec, Rejected)


def test_small_whole_numbers_keep_their_values_when_they_vary() -> None:
    spec, source = learn([run("1", {"qty": 1, "status": "a"}), run("2", {"qty": 3, "status": "b"})])
    body = source.split("def refund_order", 1)[1]
    assert "(order['qty'], order['status']) in ((1, 'a'), (3, 'b'))" in body
    assert prove_all(source, spec, [run("3", {"qty": 3, "status": "a"})]) is not None


def test_a_dict_of_free_form_attributes_is_not_guarded_field_by_field() -> None:
    kettle = {"item": {"options": {"capacity": "1L", "color": "red"}}}
    puzzle = {"item": {"options": {"pieces": "500", "theme": "art"}}}
    spec, source = learn([run("1", kettle), run("2", puzzle)])
    body = source.split("def refund_order", 1)[1]
    assert "# not guarded: order['item']['options'] took 2 different values" in body
    lamp = run("3", {"item": {"options": {"wattage": "40W"}}})
    assert prove_all(source, spec, [lamp]) is None  # what the thing is like says which thing, not what to do


def test_records_of_one_kind_that_share_fields_stay_guarded() -> None:
    card = {"payment": {"kind": "card", "id": "c1"}}
    paypal = {"payment": {"kind": "paypal", "id": "p1", "email": "a@b.io"}}
    spec, source = learn([run("1", card), run("2", paypal)])
    assert "sorted(order['payment'])" in source  # which fields a payment has is a switch: the runs' sets only
    odd = run("3", {"payment": {"kind": "card", "id": "c2", "email": "x@y.io"}})
    assert prove_all(source, spec, [odd]) is not None


def test_a_value_each_task_names_stays_guarded_until_many_runs_show_it_an_attribute() -> None:
    a = run("1", {"customer": "Raj"}, task="I am Raj Davis. Refund order #1")
    b = run("2", {"customer": "Mia"}, task="I am Mia Li. Refund order #2")
    template = TaskTemplate("I am {_2}. Refund order #{order_id}", [Slot("order_id", "digits", "str", None, "9"), Slot("_2", "ignored", "str", None, "Aa Aa")])
    spec = spec_from_runs([a, b], name="refund_order", template=template)
    assert not isinstance(spec, Rejected)
    source = render_skill(spec)
    # the task naming the customer is no evidence the name does not matter: an agent may check it
    assert "order['customer'] in ('Mia', 'Raj')" in source
    c = run("3", {"customer": "Ann"}, task="I am Ola Berg. Refund order #3")
    assert prove_all(source, spec, [c]) is not None


def test_a_list_the_task_names_element_by_element_is_lifted_from_the_task_not_from_a_result() -> None:
    order = {
        "id": "7", "items": [{"name": "Lamp", "item_id": "i1"}, {"name": "Desk", "item_id": "i2"}],
        "shipped": [{"item_ids": ["i1", "i2"]}],
    }
    traj = Trajectory(
        task="Return order #7: Lamp; Desk;",
        calls=[
            Call(tool="get_order", args={"order_id": "7"}, result=order),
            Call(tool="refund", args={"order_id": "7", "amount": ["i1", "i2"]}, result={"ok": True}),
        ],
        outcome=Outcome(ok=True, output="Done."), tools=TOOLS,
    )
    template = discover_template(traj)
    assert not isinstance(template, Rejected)
    assert "Lamp" not in template.text and "Desk" not in template.text  # both names are slots
    spec = spec_from_runs([traj], name="return_order", template=template)
    source = render_skill(spec)
    assert "pick(order['items'], 'name'," in source and "order['shipped'][0]['item_ids']" not in source.split("refund(")[1]


def test_facts_of_the_element_a_task_value_selects_hold_where_that_element_is_there() -> None:
    tools = {**TOOLS, "refund_to": ToolRef(module="shop", qualname="refund_to", params=("order_id", "method"))}

    def paid(order_id: str, method: str, payments: list[dict[str, Any]]) -> Trajectory:
        return Trajectory(
            task=f"Refund order #{order_id} to {method}",
            calls=[
                Call(tool="get_order", args={"order_id": order_id}, result={"id": order_id, "payments": payments}),
                Call(tool="refund_to", args={"order_id": order_id, "method": method}, result={"ok": True}),
            ],
            outcome=Outcome(ok=True, output="Done."), tools=tools,
        )

    runs = [
        paid("1", "card_7", [{"method": "card_7", "kind": "payment"}]),
        paid("2", "gift_3", [{"method": "card_9", "kind": "payment"}]),  # paid another way: no such element
    ]
    template = discover_template(runs[0])
    assert not isinstance(template, Rejected)
    spec = spec_from_runs(runs, name="refund_to", template=template)
    assert not isinstance(spec, Rejected)
    source = render_skill(spec)
    assert "method not in values(order['payments'], '*', 'method') or" in source
    assert prove_all(source, spec, runs) is None
    refunded = paid("3", "card_4", [{"method": "card_4", "kind": "refund"}])  # there, but not what runs saw
    assert prove_all(source, spec, [refunded]) is not None
    assert prove_all(source, spec, [paid("4", "card_5", [{"method": "card_5", "kind": "payment"}])]) is None


def test_a_number_that_took_a_small_and_a_large_value_is_an_amount_not_a_switch() -> None:
    spec, source = learn([run("1", {"qty": 3}), run("2", {"qty": 46})])
    assert not isinstance(spec, Rejected)
    body = source.split("def refund_order", 1)[1]
    assert "order['qty'] in" not in body and "order['qty'] == 3" not in body  # not pinned to the values seen
    assert "order['qty'] > 0" in body  # its sign still is
    assert prove_all(source, spec, [run("3", {"qty": 12})]) is None
    assert prove_all(source, spec, [run("4", {"qty": -2})]) is not None


def test_cities_that_recur_among_many_runs_are_still_an_attribute() -> None:
    cities = ["Berlin", "Paris", "Lima", "Oslo", "Quito"] * 2 + ["Lima", "Oslo"]  # five values in twelve runs
    _spec, source = learn([run(str(i), {"city": c}) for i, c in enumerate(cities, 1)])
    assert "# not guarded: order['city'] took 5 different values in 12 runs" in source


def test_a_choice_of_names_the_runs_read_becomes_a_slot_checked_against_them() -> None:
    # "Raj Davis" / "Mia Davis": one word differs, so a choice; each is the first name the run read
    a = run("1", {"customer": {"first_name": "Raj"}}, task="I am Raj Davis. Refund order #1")
    b = run("2", {"customer": {"first_name": "Mia"}}, task="I am Mia Davis. Refund order #2")
    both = generalize(discover_template(a), discover_template(b))
    assert both is not None and [s.kind for s in both.slots if s.name == "_1"] == ["choice"]
    wider = named(both, [a, b])
    assert wider.text == "I am {first_name} Davis. Refund order #{order_id}"
    # a choice of words no run read ("cancel" / "return") stays a choice
    c = run("3", {"customer": {"first_name": "Raj"}}, task="Please refund order #3 now")
    d = run("4", {"customer": {"first_name": "Raj"}}, task="Please credit order #4 now")
    choice = generalize(discover_template(c), discover_template(d))
    assert choice is not None and named(choice, [c, d]) is choice


def test_ignored_words_that_say_a_name_the_run_read_become_a_slot_checked_against_it() -> None:
    a = run("1", {"customer": {"first_name": "Raj"}}, task="I am Raj Davis. Refund order #1")
    b = run("2", {"customer": {"first_name": "Mia"}}, task="I am Mia Li. Refund order #2")
    template = TaskTemplate("I am {_2}. Refund order #{order_id}", [Slot("order_id", "digits", "str", None, "9"), Slot("_2", "ignored", "str", None, "Aa Aa")])
    wider = named(template, [a, b])
    assert wider.text == "I am {first_name} {_2}. Refund order #{order_id}"  # the last name is read nowhere: still ignored
    assert [(s.name, s.kind, s.shape) for s in wider.slots][1:] == [("first_name", "word", "Aa"), ("_2", "ignored", "Aa")]
    spec = spec_from_runs([a, b], name="refund_order", template=wider)
    assert not isinstance(spec, Rejected)
    source = render_skill(spec)
    assert "require(order['customer']['first_name'] == first_name" in source
    c = run("3", {"customer": {"first_name": "Ann"}}, task="I am Ola Berg. Refund order #3")  # not the customer's name
    assert prove_all(source, spec, [c]) is not None
    # a later run whose text differs elsewhere still anti-unifies: the name slots are ignored text again, then cut
    d = run("4", {"customer": {"first_name": "Ann"}}, task="Hi, I am Ann Marie Berg. Refund order #4")
    wider_d = generalize(wider, discover_template(d))
    assert wider_d is not None and wider_d.text == "{_1}I am {_2}. Refund order #{order_id}"
    assert named(wider_d, [d]).text == "{_1}I am {first_name} {_2}. Refund order #{order_id}"


def test_ignored_words_that_say_nothing_read_or_cut_differently_stay_ignored() -> None:
    template = TaskTemplate("I am {_2}. Refund order #{order_id}", [Slot("order_id", "digits", "str", None, "9"), Slot("_2", "ignored", "str", None, "Aa Aa")])
    a = run("1", {"customer": {"first_name": "Eve"}}, task="I am Raj Davis. Refund order #1")
    b = run("2", {"customer": {"first_name": "Ann"}}, task="I am Mia Li. Refund order #2")
    assert named(template, [a, b]) is template  # no word is a value read
    c = run("3", {"customer": {"first_name": "Raj"}}, task="I am Raj Davis. Refund order #3")
    d = run("4", {"customer": {"last_name": "Li"}}, task="I am Mia Li. Refund order #4")
    assert named(template, [c, d]) is template  # one run names the first word, the other the second
    e = run("5", {"customer": {"status": "pending"}}, task="I am Pending Davis. Refund order #5")
    assert named(template, [e]) is template  # a status word read is a program's vocabulary, not a name


def test_a_name_read_under_a_field_named_like_a_builtin_or_a_tool_gets_a_name_of_its_own() -> None:
    template = TaskTemplate("I am {_2}. Refund order #{order_id}", [Slot("order_id", "digits", "str", None, "9"), Slot("_2", "ignored", "str", None, "Aa Aa")])
    a = run("1", {"customer": {"format": "Raj", "get_order": "Davis"}}, task="I am Raj Davis. Refund order #1")
    wider = named(template, [a])
    # neither shadows the builtin format() nor the tool get_order the skill imports
    assert wider.text == "I am {format_said} {get_order_2}. Refund order #{order_id}"


def test_a_fact_of_the_element_a_task_value_picks_is_dropped_where_it_picked_several() -> None:
    # the card's one payment in one run; its payment and its refund in another: "the entry of the
    # card" is not one element there, so no fact of it is a guard, and the runs make one skill
    tools = {**TOOLS, "refund_to": ToolRef(module="shop", qualname="refund_to", params=("order_id", "card"))}

    def card_run(order_id: str, card: str, history: list[str]) -> Trajectory:
        order = {"id": order_id, "payments": [{"card": card, "kind": k} for k in history]}
        return Trajectory(
            task=f"Refund order #{order_id} to card {card}",
            calls=[Call(tool="get_order", args={"order_id": order_id}, result=order),
                   Call(tool="refund_to", args={"order_id": order_id, "card": card}, result={"ok": True})],
            outcome=Outcome(ok=True, output="Refunded."), tools=tools,
        )

    one_entry, two = card_run("1", "c-100", ["payment"]), card_run("2", "c-200", ["payment", "refund"])
    spec, source = learn([one_entry, two])
    assert not isinstance(spec, Rejected) and len(spec.runs) == 2
    assert "pick(order['payments'], 'card', card)" not in source
    assert prove_all(source, spec, [card_run("3", "c-300", ["payment", "refund", "refund"])]) is None


TICKETS = {
    "get_ticket": ToolRef(module="desk", qualname="get_ticket", read=True, params=("ticket_id",)),
}


def ticket_run(said: str, ticket_id: str, subject: str) -> Trajectory:
    ticket = {"id": ticket_id, "status": "open", "subject": subject}
    return Trajectory(
        task=f"Is {said} still open?",
        calls=[Call(tool="get_ticket", args={"ticket_id": ticket_id}, result=ticket)],
        outcome=Outcome(ok=True, output=f"{ticket_id} ({subject}) is open."),
        tools=TICKETS,
    )


def test_an_id_written_as_the_tool_takes_it_and_one_upper_cased_make_one_skill_that_upper_cases() -> None:
    from skillforge._antiunify import widened

    as_written, lowered = ticket_run("INC-4817", "INC-4817", "VPN down"), ticket_run("inc-4815", "INC-4815", "Lost key")
    a, b = discover_template(as_written), discover_template(lowered)
    assert not isinstance(a, Rejected) and not isinstance(b, Rejected)
    assert (a.slots[0].transform, b.slots[0].transform) == (None, "upper")  # each run alone: its narrowest reading
    both = widened(a, b)
    assert both is not None and both.slots[0].transform == "upper"  # upper-casing explains both runs
    spec = spec_from_runs([as_written, lowered], name="still_open", template=both)
    assert not isinstance(spec, Rejected), spec
    assert prove_all(render_skill(spec), spec, [as_written, lowered]) is None
    assert both.bind("Is inc-4999 still open?")["ticket_id"] == "INC-4999"
    assert both.bind("Is INC-4999 still open?")["ticket_id"] == "INC-4999"
    assert both.bind("Is Inc-4999 still open?") is None  # a shape no run showed
    # a slot taken as written and one normalised otherwise (spaces squashed) stay apart
    squashed = TaskTemplate(b.text, [Slot("ticket_id", b.slots[0].kind, "str", "squash", b.slots[0].shape), *b.slots[1:]])
    assert widened(a, squashed) is None


def _refund_run(order_id: str, order: dict[str, Any], refund: dict[str, Any], output: str | None = None) -> Trajectory:
    full = {"id": order_id, "total": 40.0, **order}
    return Trajectory(
        task=f"Refund order #{order_id}",
        calls=[
            Call(tool="get_order", args={"order_id": order_id}, result=full),
            Call(tool="refund", args={"order_id": order_id, "amount": 40.0}, result={"order_id": order_id, **refund}),
        ],
        outcome=Outcome(ok=True, output=output or f"Refunded order {order_id}."),
        tools=TOOLS,
    )


def test_facts_of_the_last_writes_result_are_not_combined_with_those_checked_before_it() -> None:
    # the agent answered alike whatever the refund said: its facts decide only an answer that quotes none of them
    runs = [
        _refund_run("1", {"fraud_hold": False, "approved": False}, {"queued": False}),
        _refund_run("2", {"fraud_hold": True, "approved": True}, {"queued": True}),
    ]
    _spec, source = learn(runs)
    body = source.split("def refund_order", 1)[1]
    before, after = body.split("refund(", 1)
    # before the write, the pair no run showed together is still a miss
    assert "(order['approved'], order['fraud_hold']) in ((False, False), (True, True))" in before
    # after it, the refund's flag took both values: no guard ties it to the order's flags
    assert "queued" not in after.split("return", 1)[0].replace("has(", "")


def test_an_answer_quoting_the_writes_result_keeps_its_facts_combined_with_the_earlier_ones() -> None:
    # "Refund queued" may be worded otherwise for an order on hold: the agent's wording could hinge on both
    runs = [
        _refund_run("1", {"fraud_hold": False}, {"state": "queued"}, "Refund of order 1: queued."),
        _refund_run("2", {"fraud_hold": True}, {"state": "sent"}, "Refund of order 2: sent."),
    ]
    _spec, source = learn(runs)
    after = source.split("def refund_order", 1)[1].split("refund(", 1)[1]
    assert "(order['fraud_hold'], refund_result['state']) in ((False, 'queued'), (True, 'sent'))" in after


SHIP = {
    "get_user": ToolRef(module="desk", qualname="get_user", read=True, params=("username",)),
    "order_laptop": ToolRef(module="desk", qualname="order_laptop", params=("username", "model", "office")),
}


def ship_run(username: str, model: str, office: str, greeting: str = "Hi.") -> Trajectory:
    """"Send the 140 model to ann.li at office 205.": model and office as the task says them (one value, at times)."""
    return Trajectory(
        task=f"{greeting} Send the {model} model to {username} at office {office}.",
        calls=[Call(tool="get_user", args={"username": username}, result={"username": username, "status": "active"}),
               Call(tool="order_laptop", args={"username": username, "model": model, "office": office}, result={"ref": "L-1"})],
        outcome=Outcome(ok=True, output=f"Ordered for {username}."), tools=SHIP,
    )


def test_a_value_said_twice_and_two_values_are_one_template_and_one_skill() -> None:
    from skillforge._antiunify import joined, unrepeated

    same, apart = ship_run("ann.li", "300", "300"), ship_run("bo.chen", "140", "205")
    narrow, wide = discover_template(same), discover_template(apart)
    assert isinstance(narrow, TaskTemplate) and isinstance(wide, TaskTemplate)
    assert narrow.text.count("{model}") == 2 and "{office}" not in narrow.text and "{office}" in wide.text
    assert wide.bind(same.task) is not None
    # the one slot said twice, named as the two slots at its places
    said = unrepeated(narrow, wide)
    assert said is not None and said.text == wide.text
    both = joined(wide, narrow)
    assert both is not None and both.bind(same.task) is not None and both.bind(apart.task) is not None
    # with another greeting (text that feeds nothing): their common template
    hello = discover_template(ship_run("cy.diaz", "610", "610", greeting="Hello there."))
    assert isinstance(hello, TaskTemplate)
    common = joined(wide, hello)
    assert common is not None and common.bind(same.task) is not None and "{office}" in common.text
    # a template that says no value twice, one that says it twice as well, or values of another number: not this
    assert unrepeated(wide, wide) is None and unrepeated(wide, narrow) is None and unrepeated(narrow, narrow) is None
    later = TaskTemplate(wide.text[:-1] + " by {day}.", [*wide.slots, Slot("day", "word", "str", None, "Aa")])
    assert joined(later, narrow) is None
    # the runs make one skill: the laptop goes to the office the task says, in either run
    spec = spec_from_runs([apart, same], name="ship", template=wide)
    assert not isinstance(spec, Rejected), spec
    source = render_skill(spec)
    assert "order_laptop(username=username, model=model, office=office)" in source and prove_all(source, spec, [apart, same]) is None
    # learned from the run that said one value twice alone, the skill does not guess which slot fed which
    alone = spec_from_runs([same], name="ship", template=wide)
    assert not isinstance(alone, Rejected)
    assert "require(model == office" in render_skill(alone)
    assert prove_all(render_skill(alone), alone, [apart]) is not None


def laptop_shipper(t: dict[str, Any]):
    import re

    from tests.toolsets.safety import Tools

    def agent(task: str, transcript: list | None = None) -> str:
        tools = Tools(t, transcript)
        m = re.search(r"Send the (\w+) model to ([\w.]+) at office (\w+)\.$", task)
        if m is None:
            raise ValueError(task)
        model, username, office = m.groups()
        tools.get_user(username=username)
        tools.order_laptop(username=username, model=model, office=office)
        return f"Ordered for {username}."

    return agent


def test_a_forge_keeps_one_file_for_a_value_said_twice_and_two_values_in_either_order(tmp_path) -> None:  # noqa: ANN001
    from tests.test_safety import check, make_forge, user

    world = {"users": {u: user(i, u, ["staff"]) for i, u in enumerate(["ann.li", "bo.chen", "cy.diaz", "di.eng"])}}
    for order, tasks in enumerate([
        ["Hi. Send the 300 model to ann.li at office 300.", "Hi. Send the 140 model to bo.chen at office 205."],
        ["Hi. Send the 140 model to bo.chen at office 205.", "Hello there. Send the 300 model to ann.li at office 300."],
    ]):
        forge = make_forge(tmp_path, laptop_shipper, name=f"forge{order}")
        for task in tasks:
            assert check(forge, task, world).result.learned
        assert len(forge.skills()) == 1, [s.name for s in forge.skills()]
        assert check(forge, "Hi. Send the 720 model to cy.diaz at office 410.", world).result.source == "skill"
        assert check(forge, "Hi. Send the 720 model to di.eng at office 720.", world).result.source == "skill"


def test_upper_case_code_words_are_a_vocabulary_and_two_letter_codes_are_names() -> None:
    # five statuses of the order refunded, written as upper-case code words, all acted alike: still
    # only those five (a status new in each of five runs is still a status, in any case); the
    # customer's state (two-letter codes, a record the refund does not use) is an attribute
    def run_in(order_id: str, state: str, status: str) -> Trajectory:
        return with_customer(order_id, {"state": state}, {"status": status})

    states = ["CA", "NY", "TX", "IL", "FL"][:ATTRIBUTE_RUNS]
    statuses = ["PENDING", "PROCESSING", "CONFIRMED", "AWAITING_PAYMENT", "ON HOLD"][:ATTRIBUTE_RUNS]
    spec, source = learn([run_in(str(i), s, t) for i, (s, t) in enumerate(zip(states, statuses, strict=True), 1)])
    body = source.split("def refund_order", 1)[1]
    assert f"# not guarded: customer['state'] took {ATTRIBUTE_RUNS} different values in {ATTRIBUTE_RUNS} runs" in body, body
    assert "order['status'] in (" in body, body
    assert prove_all(source, spec, [run_in("9", "WA", "PROCESSING")]) is None
    assert prove_all(source, spec, [run_in("9", "WA", "SHIPPED")]) is not None
