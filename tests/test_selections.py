"""Selections by predicate and dicts the task writes out, on runs alone: what an exchange learns.

A task that says "exchange Kettle {'color': 'red', 'size': 'S'} to {'color': 'blue'}" names the
old item by its name and options, and the new one by a change to those options. The skill must
pick both by what the task says, never by where they happened to sit in the learned run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillforge._codegen import render_skill
from skillforge._compile import prove_all
from skillforge._exceptions import GuardFailed
from skillforge._antiunify import widened
from skillforge._lifting import Rejected, discover_template, lift
from skillforge._spans import TaskSpans
from skillforge._template import Slot, TaskTemplate, parse_mapping, slot_kind
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from skillforge.runtime import pick, updated
from tests.test_learning import learn as learn_runs

TOOLS = {
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
    "get_product": ToolRef(module="shop", qualname="get_product", read=True, params=("product_id",)),
    "exchange": ToolRef(module="shop", qualname="exchange", params=("order_id", "item_id", "new_item_id")),
}


def variants(product: str, *options: dict[str, str]) -> dict[str, Any]:
    return {f"{product}{i}": {"item_id": f"{product}{i}", "options": o, "available": True} for i, o in enumerate(options, 1)}


KETTLE = variants("k", {"color": "red", "size": "S"}, {"color": "blue", "size": "S"}, {"color": "blue", "size": "L"})
LAMP = variants("l", {"color": "red", "size": "S"}, {"color": "white", "size": "S"})
SHELVES = variants("b", {"height": "3 ft"}, {"height": "5 ft"}, {"height": "6 ft"})
OPTIONS = {k: v["options"] for k, v in {**KETTLE, **LAMP, **SHELVES}.items()}


def exchange_run(order_id: str, items: list[tuple[str, str]], which: int, change: dict[str, str], new: str,
                 catalogue: dict[str, Any], name_in_task: str | None = None) -> Trajectory:
    """An agent's run of "For #order, exchange NAME {options} to {change}." (the items: (name, variant id))."""
    order = {"id": order_id, "items": [{"name": n, "item_id": v, "options": OPTIONS[v]} for n, v in items]}
    name, old = items[which]
    said = name_in_task or name
    return Trajectory(
        task=f"For #{order_id}, exchange {said} {order['items'][which]['options']!r} to {change!r}.",
        calls=[
            Call(tool="get_order", args={"order_id": order_id}, result=order),
            Call(tool="get_product", args={"product_id": "p"}, result={"variants": catalogue}),
            Call(tool="exchange", args={"order_id": order_id, "item_id": old, "new_item_id": new}, result={"ok": True}),
        ],
        outcome=Outcome(ok=True, output="Done."),
        tools=TOOLS,
    )


def learn(runs: list[Trajectory]) -> tuple[Any, str]:
    """``(spec, source)`` of the exchange skill learned from ``runs`` (proven on each)."""
    spec, source = learn_runs(runs, "exchange_item")
    assert source is not None, spec
    return spec, source


def test_a_dict_the_task_writes_out_is_a_slot_of_its_own() -> None:
    assert slot_kind({"color": "blue"}) == "mapping"
    assert parse_mapping("{'color': 'blue', 'size': 'M'}") == {"color": "blue", "size": "M"}
    assert parse_mapping("{}") == {}
    for bad in ("{'a': [1]}", "{1: 'a'}", "{'a': ", "{'a': __import__('os')}", "['a']"):
        assert parse_mapping(bad) is None
    spans = TaskSpans("Swap Lamp {'color': 'red'} to {'color': 'blue'}.")
    assert spans.find({"color": "blue"})[2:] == ("mapping", "literal")
    t = TaskTemplate("Swap {name} {old} to {new}.", [
        Slot("name", "word", "str", None, "Aa"), Slot("old", "mapping", "dict", "literal", "mapping"),
        Slot("new", "mapping", "dict", "literal", "mapping"),
    ])
    assert t.bind("Swap Lamp {'color': 'red'} to {}.") == {"name": "Lamp", "old": {"color": "red"}, "new": {}}
    assert t.bind("Swap Lamp {'color': ['red']} to {}.") is None  # not a flat dict: no binding


def test_the_new_item_is_the_variant_with_the_old_options_changed_as_the_task_says() -> None:
    a = exchange_run("1", [("Lamp", "l1"), ("Kettle", "k1")], 1, {"color": "blue"}, "k2", KETTLE)
    _spec, source = learn([a])
    assert "pick(order['items'], 'name', item_name, 'options', item_options)['item_id']" in source
    assert "pick(product['variants'], 'options', updated(pick(order['items'], 'name', item_name, 'options', item_options)['options'], " in source
    call = source.split("exchange_result = exchange(", 1)[1].split("\n    )", 1)[0]
    assert "k1" not in call and "k2" not in call  # neither id, nor a position, is written into the call


def test_runs_with_other_changes_and_an_empty_change_are_one_skill() -> None:
    a = exchange_run("1", [("Lamp", "l1"), ("Kettle", "k1")], 1, {"color": "blue"}, "k2", KETTLE)
    b = exchange_run("2", [("Kettle", "k2")], 0, {"size": "L"}, "k3", KETTLE)
    c = exchange_run("3", [("Kettle", "k3"), ("Lamp", "l2")], 0, {}, "k3", KETTLE)  # the same item: "to {}"
    spec, source = learn([a, b, c])
    # another order, the item elsewhere in it: the same program picks the right variants
    d = exchange_run("4", [("Lamp", "l2"), ("Lamp", "l1"), ("Kettle", "k1")], 2, {"color": "blue"}, "k2", KETTLE)
    assert prove_all(source, spec, [d]) is None
    # an item like none of the runs' (three runs are no evidence that any item goes): the skill stops
    e = exchange_run("5", [("Lamp", "l1")], 0, {"color": "white"}, "l2", LAMP)
    assert prove_all(source, spec, [e]) is not None


def test_a_change_no_variant_has_stops_the_skill() -> None:
    a = exchange_run("1", [("Kettle", "k1")], 0, {"color": "blue"}, "k2", KETTLE)
    b = exchange_run("2", [("Kettle", "k2")], 0, {"size": "L"}, "k3", KETTLE)
    spec, source = learn([a, b])
    green = exchange_run("5", [("Kettle", "k1")], 0, {"color": "green"}, "k2", KETTLE)  # the agent's call, for the world
    assert prove_all(source, spec, [green]) is not None


def test_two_items_of_one_name_are_told_apart_by_their_options() -> None:
    a = exchange_run("1", [("Shelf", "b1"), ("Shelf", "b2")], 1, {"height": "6 ft"}, "b3", SHELVES)
    _spec, source = learn([a])
    # the name says neither on its own: the name and the options the task gives pick it together
    assert "pick(order['items'], 'name', item_name, 'options', item_options)['item_id']" in source


def test_two_identical_items_are_one_item_and_two_that_differ_are_not() -> None:
    # an order that lists the same item twice (every field equal): whichever is taken is the same
    a = exchange_run("1", [("Kettle", "k1"), ("Kettle", "k1")], 1, {"color": "blue"}, "k2", KETTLE)
    spec, source = learn([a])
    call = source.split("exchange_result = exchange(", 1)[1]
    assert "item = pick(order['items'], 'name', item_name, 'options', item_options)" in source and "item_id=item['item_id']" in call
    assert "by position" not in source
    b = exchange_run("2", [("Kettle", "k1")], 0, {"color": "blue"}, "k2", KETTLE)
    assert prove_all(source, spec, [b]) is None  # one copy: the same decision
    with pytest.raises(GuardFailed, match="2 elements have name == 'Kettle'"):  # copies that differ: which one is not known
        pick([{"name": "Kettle", "item_id": "k1"}, {"name": "Kettle", "item_id": "k9"}], "name", "Kettle")
    assert pick([{"name": "Kettle", "item_id": "k1"}, {"name": "Kettle", "item_id": "k1"}], "name", "Kettle") == {"name": "Kettle", "item_id": "k1"}


def test_pick_takes_every_field_the_task_gives_and_dicts_of_records() -> None:
    items = [{"name": "Shelf", "options": {"h": 3}}, {"name": "Shelf", "options": {"h": 5}}]
    assert pick(items, "name", "Shelf", "options", {"h": 5}) is items[1]
    with pytest.raises(GuardFailed, match="2 elements have name == 'Shelf'"):
        pick(items, "name", "Shelf")
    with pytest.raises(GuardFailed, match="no element has"):
        pick({"a": {"o": 1}}, "o", 2)
    assert updated({"color": "red", "size": "S"}, {"color": "blue"}) == {"color": "blue", "size": "S"}
    with pytest.raises(GuardFailed, match="two dicts"):
        updated(["red"], {})


def test_variants_of_one_text_widen_to_fit_each_others_slots() -> None:
    a = TaskTemplate("Return {item}.", [Slot("item", "word", "str", None, "Aa")])
    b = TaskTemplate("Return {item}.", [Slot("item", "text", "str", None, "Aa Aa")])
    both = widened(a, b)
    assert both is not None and both.bind("Return Grill.") and both.bind("Return Water Bottle.")
    assert both.slots[0].shape == "Names:1-3"  # capitalised words seen in two lengths: one word more may come
    assert both.bind("Return Indoor Security Camera.") is not None
    assert both.bind("Return Indoor Outdoor Security Camera.") is None  # four: no evidence for that
    assert both.bind("Return water bottle.") is None  # and case is part of the shape
    c = TaskTemplate("Return {item}.", [Slot("item", "digits", "str", None, "9")])
    assert widened(a, c) is None  # a number is not a name


def test_the_element_a_predicate_picks_must_be_as_the_runs_saw_it() -> None:
    a = exchange_run("1", [("Kettle", "k1")], 0, {"color": "blue"}, "k2", KETTLE)
    spec, source = learn([a])
    assert "['available'] is True" in source
    gone = {**KETTLE, "k2": {**KETTLE["k2"], "available": False}}  # the variant asked for is sold out
    sold_out = exchange_run("2", [("Kettle", "k1")], 0, {"color": "blue"}, "k2", gone)
    assert prove_all(source, spec, [sold_out]) is not None  # an agent may refuse: the skill stops first


def test_a_change_to_one_of_several_items_the_run_did_not_pick_is_not_a_predicate() -> None:
    """The write names only the new item; both shelves fit "the old item's options, height changed",
    and nothing the run did says which one was meant: no base is guessed (by position or otherwise)."""
    tools = {**TOOLS, "swap": ToolRef(module="shop", qualname="swap", params=("order_id", "new_item_id"))}
    catalogue = variants("b", {"height": "3 ft", "color": "white"}, {"height": "5 ft", "color": "white"},
                         {"height": "6 ft", "color": "white"})
    order = {"id": "1", "items": [{"name": "Shelf", "item_id": "b1", "options": catalogue["b1"]["options"]},
                                  {"name": "Shelf", "item_id": "b2", "options": catalogue["b2"]["options"]}]}
    traj = Trajectory(
        task="For #1, swap a shelf to {'height': '6 ft'}.",
        calls=[
            Call(tool="get_order", args={"order_id": "1"}, result=order),
            Call(tool="get_product", args={"product_id": "p"}, result={"variants": catalogue}),
            Call(tool="swap", args={"order_id": "1", "new_item_id": "b3"}, result={"ok": True}),
        ],
        outcome=Outcome(ok=True, output="Done."), tools=tools,
    )
    _spec, source = learn([traj])
    assert "updated(" not in source


def test_a_record_named_in_lowercase_is_picked_by_its_name_in_title_case() -> None:
    # "the desk lamp" names the order's "Desk Lamp": the slot's text, title-cased, is the name it picks by
    traj = Trajectory(
        task="Return the desk lamp from #W7",
        calls=[
            Call(tool="get_order", args={"order_id": "#W7"}, result={"status": "delivered", "items": [
                {"name": "Desk Lamp", "item_id": "41007"}, {"name": "Grill", "item_id": "41147"}]}),
            Call(tool="return_items", args={"order_id": "#W7", "item_ids": ["41007"]}, result={"ok": True}),
        ],
        outcome=Outcome(ok=True, output="Done."),
        tools={"get_order": TOOLS["get_order"],
               "return_items": ToolRef(module="shop", qualname="return_items", params=("order_id", "item_ids"))},
    )
    template = discover_template(traj)
    assert not isinstance(template, Rejected)
    assert template.text == "Return the {item_name} from {order_id}"
    assert [s.transform for s in template.slots if s.name == "item_name"] == ["title"]
    assert template.bind("Return the grill from #W9") == {"item_name": "Grill", "order_id": "#W9"}
    spec = lift(traj, template=template)
    assert not isinstance(spec, Rejected)
    assert "pick(order['items'], 'name', item_name)['item_id']" in render_skill(spec)


# -- a record an element refers to by id: the card an order was paid with, among a customer's cards --
CANCEL_TOOLS = {
    "get_user": ToolRef(module="shop", qualname="get_user", read=True, params=("user_id",)),
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
    "cancel": ToolRef(module="shop", qualname="cancel", params=("order_id",)),
}
CARDS = {
    "card_7815826": {"id": "card_7815826", "source": "credit_card", "brand": "visa", "last_four": "1234"},
    "card_9022175": {"id": "card_9022175", "source": "credit_card", "brand": "visa", "last_four": "5678"},
    "card_5510264": {"id": "card_5510264", "source": "credit_card", "brand": "mastercard", "last_four": "4321"},
    "paypal_3301782": {"id": "paypal_3301782", "source": "paypal"},
    "paypal_8847120": {"id": "paypal_8847120", "source": "paypal"},
}


def cancel_run(user: str, order_id: str, paid_with: str, owned: list[str], amount: float = 20.0) -> Trajectory:
    """The agent's run of "Cancel order #W.. for USER.": the refund goes back to the card the order
    was paid with, which the answer names the way the agent names cards."""
    card = CARDS[paid_with]
    said = (f"your {card['brand'].title()} card ending in {card['last_four']}" if card["source"] == "credit_card"
            else "your PayPal account")
    return Trajectory(
        task=f"Cancel order #{order_id} for {user}.",
        calls=[
            Call(tool="get_user", args={"user_id": user}, result={"name": user, "cards": {c: CARDS[c] for c in owned}}),
            Call(tool="get_order", args={"order_id": order_id},
                 result={"status": "pending", "payments": [{"card_id": paid_with, "amount": amount}]}),
            Call(tool="cancel", args={"order_id": order_id}, result={"status": "cancelled"}),
        ],
        outcome=Outcome(ok=True, output=f"Cancelled {order_id}: ${amount:.2f} back to {said}."),
        tools=CANCEL_TOOLS,
    )


def test_a_record_under_a_key_no_task_says_is_the_one_the_read_value_names() -> None:
    spec, source = learn_runs([cancel_run("ana", "W1", "card_7815826", ["card_7815826", "paypal_3301782"])], "cancel_order")
    assert source is not None, spec
    # the card is the one the order's payment names, never the key it had in the learned run
    assert "card = pick(user['cards'], 'id', order['payments'][0]['card_id'])" in source and "{card['last_four']}" in source
    assert "'card_7815826'" not in source
    # another customer, another card id, the same kind of card: the same decision, served
    assert prove_all(source, spec, [cancel_run("bo", "W2", "card_9022175", ["paypal_8847120", "card_9022175"], 35.5)]) is None


def test_what_the_answer_says_of_a_record_it_does_not_quote_is_guarded() -> None:
    # "Visa" is the card's brand, said as literal text: a customer who paid by Mastercard must not be told "Visa"
    spec, source = learn_runs([cancel_run("ana", "W1", "card_7815826", ["card_7815826", "paypal_3301782"])], "cancel_order")
    assert "card = pick(user['cards'], 'id', order['payments'][0]['card_id'])" in source and "card['brand'] == 'visa'" in source
    why = prove_all(source, spec, [cancel_run("cy", "W3", "card_5510264", ["card_5510264"])])
    assert why is not None and "['brand'] is 'visa'" in why.reason
    # the answer quotes nothing of a PayPal account: which account paid is still a fact of the run
    spec, source = learn_runs([cancel_run("ana", "W1", "paypal_3301782", ["card_7815826", "paypal_3301782"])], "cancel_order")
    assert "order['payments'][0]['amount']" in source and "'paypal_3301782'" not in source
    why = prove_all(source, spec, [cancel_run("bo", "W2", "card_9022175", ["paypal_8847120", "card_9022175"])])
    assert why is not None and "['source'] is 'paypal'" in why.reason
    assert prove_all(source, spec, [cancel_run("dee", "W4", "paypal_8847120", ["paypal_8847120"], 9.0)]) is None


def test_an_answer_that_quotes_a_records_id_takes_it_from_where_no_key_needs_it() -> None:
    # "back to card_7815826": the id is found first under its own key in the customer's cards
    # (user['cards']['card_7815826']['id']), which only that customer has; the order's payment
    # names it too, and that source serves every customer
    def run(user: str, order_id: str, paid_with: str, owned: list[str]) -> Trajectory:
        traj = cancel_run(user, order_id, paid_with, owned)
        return traj.model_copy(update={"outcome": Outcome(ok=True, output=f"Cancelled {order_id}: refund to {paid_with}.")})

    spec, source = learn_runs([run("ana", "W1", "card_7815826", ["card_7815826", "paypal_3301782"])], "cancel_order")
    assert source is not None, spec
    assert "'card_7815826'" not in source
    assert "order['payments'][0]['card_id']" in source
    assert prove_all(source, spec, [run("bo", "W2", "card_9022175", ["paypal_8847120", "card_9022175"])]) is None


def test_what_the_answer_says_of_a_record_whose_id_it_quotes_is_guarded() -> None:
    # the wrong replay this reproduces: "already paid with your PayPal account (credit_card_9784468)".
    # Quoting the id from the order's payment must still check the record it names is a PayPal account
    def run(user: str, order_id: str, paid_with: str, owned: list[str]) -> Trajectory:
        traj = cancel_run(user, order_id, paid_with, owned)
        kind = "PayPal account" if CARDS[paid_with]["source"] == "paypal" else "card"
        return traj.model_copy(update={"outcome": Outcome(ok=True, output=f"Refund to your {kind} ({paid_with}).")})

    spec, source = learn_runs([run("ana", "W1", "paypal_3301782", ["card_7815826", "paypal_3301782"])], "cancel_order")
    assert source is not None, spec
    assert "card = pick(user['cards'], 'id', order['payments'][0]['card_id'])" in source and "card['source'] == 'paypal'" in source
    why = prove_all(source, spec, [run("bo", "W2", "card_9022175", ["paypal_8847120", "card_9022175"])])
    assert why is not None and "['source'] is 'paypal'" in why.reason
    assert prove_all(source, spec, [run("dee", "W4", "paypal_8847120", ["paypal_8847120"])]) is None


# -- a record the task names by a code word it writes as words: "my gift card" for source 'gift_card' --
SWITCH_TOOLS = {
    "get_user": ToolRef(module="shop", qualname="get_user", read=True, params=("user_id",)),
    "pay_with": ToolRef(module="shop", qualname="pay_with", params=("order_id", "method_id")),
}


def switch_run(user: str, order_id: str, said: str, owned: dict[str, dict[str, Any]], to: str) -> Trajectory:
    """The agent's run of "For USER, pay #ORDER with my SAID.": it pays with the method ``to``."""
    return Trajectory(
        task=f"For {user}, pay #{order_id} with my {said}.",
        calls=[
            Call(tool="get_user", args={"user_id": user}, result={"name": user, "methods": owned}),
            Call(tool="pay_with", args={"order_id": f"#{order_id}", "method_id": to}, result={"ok": True}),
        ],
        outcome=Outcome(ok=True, output=f"Paid #{order_id} with {to}."),
        tools=SWITCH_TOOLS,
    )


def _methods(*ids: str) -> dict[str, dict[str, Any]]:
    return {i: {"id": i, "source": i.rsplit("_", 1)[0], "balance": 10.0} for i in ids}


def test_a_code_word_the_task_writes_as_words_picks_the_record() -> None:
    # "my gift card" says the method's source 'gift_card': the skill picks the customer's gift card by
    # it, never by the key it had in the learned run (which only that customer has)
    spec, source = learn_runs([switch_run("ana", "W1", "gift card", _methods("gift_card_7", "paypal_3"), "gift_card_7")], "pay_with")
    assert source is not None, spec
    assert "'gift_card_7'" not in source
    assert "pick(user['methods'], 'source', " in source
    assert spec.template == "For {user_id}, pay {order_id} with my {method_source}."
    other = switch_run("bo", "W2", "Gift Card", _methods("paypal_8", "gift_card_9"), "gift_card_9")
    assert prove_all(source, spec, [other]) is None
    # two gift cards: which one is not the learned decision
    two = switch_run("cy", "W3", "gift card", _methods("gift_card_1", "gift_card_2"), "gift_card_1")
    why = prove_all(source, spec, [two])
    assert why is not None and "2 elements have source == 'gift_card'" in why.reason


def test_a_forge_pays_with_the_gift_card_of_each_customer_and_never_past_its_balance(tmp_path: Path) -> None:
    from tests.shadowing import Harness
    from tests.toolsets import wallet as w

    harness = Harness(w)
    world = w.world(
        w.customer("ana_ruiz_1", "ana@x.io", ["W1"], gift_card_7017712=80.0, paypal_3301782=None),
        w.customer("bo_li_2", "bo@x.io", ["W2"], paypal_8847120=None, gift_card_9021175=120.0),
        w.customer("cy_park_3", "cy@x.io", ["W3"], gift_card_4410923=5.0),
        w.order("W1", 50.0, "paypal_3301782"), w.order("W2", 60.0, "paypal_8847120"), w.order("W3", 30.0, "gift_card_4410923"),
    )
    forge = harness.forge(tmp_path, w.agent)
    harness.learn(forge, "Email ana@x.io. Please pay order W1 with my gift card.", world)
    # another customer's gift card, under another id: served, as the agent does
    sh = harness.check(forge, "Email bo@x.io. Please pay order W2 with my Gift Card.", world)
    assert sh.result.source == "skill", sh.describe()
    # a gift card that does not cover the order: never paid with it (the check asserts the agent's answer)
    sh = harness.check(forge, "Email cy@x.io. Please pay order W3 with my gift card.", world)
    assert sh.result.source != "skill" and sh.writes == [], sh.describe()


def test_a_picked_records_numbers_are_compared_with_the_numbers_read_before_the_write() -> None:
    tools = {**SWITCH_TOOLS, "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",))}

    def run(user: str, balance: float, total: float) -> Trajectory:
        owned = {"gift_card_7017712": {"id": "gift_card_7017712", "source": "gift_card", "balance": balance}}
        return Trajectory(
            task=f"For {user}, pay #W1 with my gift card.",
            calls=[
                Call(tool="get_user", args={"user_id": user}, result={"name": user, "methods": owned}),
                Call(tool="get_order", args={"order_id": "#W1"}, result={"status": "pending", "total": total}),
                Call(tool="pay_with", args={"order_id": "#W1", "method_id": "gift_card_7017712"}, result={"ok": True}),
            ],
            outcome=Outcome(ok=True, output="Done."),
            tools=tools,
        )

    spec, source = learn_runs([run("ana_ruiz_1", 80.0, 50.0)], "pay_with")
    assert source is not None, spec
    assert "method = pick(user['methods'], 'source', method_source)" in source
    assert "require(method['balance'] > order['total']" in source
    why = prove_all(source, spec, [run("bo_li_2", 5.0, 30.0)])
    assert why is not None and "is more than order['total']" in why.reason
    assert prove_all(source, spec, [run("bo_li_2", 500.0, 30.0)]) is None


def test_a_record_picked_inside_a_picked_record_has_its_numbers_compared() -> None:
    # the item a task names, inside the store the task names (a selection over a selection): found in
    # tau-bench retail's exchanges, where learning failed on it
    from skillforge._guards import derive_guards
    from skillforge._spec import Const, Param, Ref, Select

    stores = {"s_1": {"id": "s_1", "items": {"k_1234567": {"id": "k_1234567", "name": "kettle", "price": 30.0}}}}
    traj = Trajectory(
        task="Buy the kettle at s_1 with 50.",
        calls=[
            Call(tool="get_user", args={"user_id": "u"}, result={"stores": stores, "limit": 40.0}),
            Call(tool="pay_with", args={"order_id": "k_1234567", "method_id": "m"}, result={"ok": True}),
        ],
        outcome=Outcome(ok=True, output="Done."),
        tools=SWITCH_TOOLS,
    )
    store = Select(Ref(0, ("stores",)), "id", Param("store"), ("items",))
    item = Select(store, "name", Param("item"), ("id",))
    guards = derive_guards(traj, [(), (("order_id", item), ("method_id", Const("m")))], Const("Done."), {"store": "s_1", "item": "kettle"})
    price = Select(store, "name", Param("item"), ("price",))
    assert any(g.kind == "cmp" and g.value == (0, price, -1) and g.path == ("limit",) for g in guards[0]), guards[0]


KETTLES = {i: {"item_id": i, "options": o, "available": True, "price": p} for i, o, p in (
    ("4458619711", {"color": "red", "size": "S"}, 31.5), ("9747045638", {"color": "blue", "size": "S"}, 35.25),
    ("2820119811", {"color": "blue", "size": "L"}, 42.0),
)}


def same_one_in(order_id: str, old: str, colour: str, new: str | None) -> Trajectory:
    """An agent's run of "For #order, swap the Kettle for the same one in COLOUR." (no variant: no call)."""
    order = {"id": order_id, "items": [{"name": "Kettle", "item_id": old, "options": KETTLES[old]["options"]}]}
    calls = [
        Call(tool="get_order", args={"order_id": order_id}, result=order),
        Call(tool="get_product", args={"product_id": "p"}, result={"variants": KETTLES}),
    ]
    if new is not None:
        calls.append(Call(tool="exchange", args={"order_id": order_id, "item_id": old, "new_item_id": new}, result={"ok": True}))
    return Trajectory(
        task=f"For #{order_id}, swap the Kettle for the same one in {colour}.",
        calls=calls, outcome=Outcome(ok=True, output="Done." if new else "No such kettle."), tools=TOOLS,
    )


def test_the_same_one_in_a_colour_the_task_says_is_the_variant_with_that_option_changed() -> None:
    # "the same one in blue": the variant whose options are the old item's with the colour the task says,
    # never the id the new variant had in the learned run
    spec, source = learn([same_one_in("1", "4458619711", "blue", "9747045638")])
    assert "item = pick(order['items'], 'name', item_name)" in source
    assert "variant = pick(product['variants'], 'options', updated(item['options'], {'color': color}))" in source
    assert "new_item_id=variant['item_id']" in source
    assert "9747045638" not in source.split("exchange_result = exchange(", 1)[1]
    assert prove_all(source, spec, [same_one_in("2", "4458619711", "blue", "9747045638")]) is None  # another order
    why = prove_all(source, spec, [same_one_in("3", "4458619711", "green", None)])  # no green kettle: the pick stops
    assert why is not None and "no element has options ==" in why.reason, why
    # a kettle of another colour changed to another: after a run showed it, one skill does both
    spec, source = learn([same_one_in("1", "4458619711", "blue", "9747045638"), same_one_in("4", "9747045638", "red", "4458619711")])
    assert prove_all(source, spec, [same_one_in("5", "9747045638", "red", "4458619711")]) is None


def test_what_the_answer_says_of_the_variant_the_task_names_comes_from_that_variant() -> None:
    # "The new one costs $35.25": the price of the variant the task's colour picks, read before the
    # exchange names it, never the price under the variant id of the learned run
    def run(order_id: str, old: str, colour: str, new: str) -> Trajectory:
        traj = same_one_in(order_id, old, colour, new)
        said = f"Done. The new one costs ${KETTLES[new]['price']:.2f}."
        return traj.model_copy(update={"outcome": Outcome(ok=True, output=said)})

    spec, source = learn([run("1", "4458619711", "blue", "9747045638")])
    assert "9747045638" not in source.split("def exchange_item", 1)[1], source
    assert "{'color': color}))['price']" in source
    assert prove_all(source, spec, [run("2", "4458619711", "blue", "9747045638")]) is None
