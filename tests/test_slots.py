"""Bounded slots: a slot binds only text of the shape it was learned from, and never the rest of a request."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skillforge._library import read_skill_file
from skillforge._template import Slot, TaskTemplate, shape_of, shape_regex


@pytest.mark.parametrize(
    ("raw", "kind", "shape"),
    [
        ("carol.diaz", "id", "a.a"),
        ("W-77", "id", "`W`-9"),  # an id's prefix names a kind of thing: kept
        ("INC-4820", "id", "`INC`-9"),
        ("ab-12", "id", "a-9"),
        ("credit_card_7815826", "id", "a_a_9"),
        ("#W3586556", "text", "#`W`9"),
        ("ThinkPad T14", "text", "AaAa A9"),
        ("Carol Diaz", "text", "Aa Aa"),
        ("ordered by mistake", "text", "words:2-4"),
        ("1 Elm Street, Lakeside", "text", "words:3-5:,"),
        ("-10", "int", "-9"),
        ("0", "int", "0"),
        ("$0.00", "money", "$0"),
        ("$1,200.50", "money", "$9.9"),
        ("a@b.io", "email", "email"),
        ("May 20", "date", "date:words"),  # the way of writing it: 05/06/2024 is no such date
        ("2024-05-20", "date", "date:iso"),
        ("05/20/2024", "date", "date:slash"),
    ],
)
def test_a_slot_takes_the_narrowest_shape_of_its_text(raw: str, kind: str, shape: str) -> None:
    assert shape_of(raw, kind) == shape


def test_zero_is_a_shape_of_its_own() -> None:
    amount = shape_regex(shape_of("3", "int"), "int")
    assert re.fullmatch(amount, "12") and re.fullmatch(amount, "05") and not re.fullmatch(amount, "0")
    money = shape_regex(shape_of("$0.50", "money"), "money")
    assert re.fullmatch(money, "$0.75") and not re.fullmatch(money, "$0.00") and not re.fullmatch(money, "$0")
    zero = shape_regex(shape_of("0", "int"), "int")
    assert re.fullmatch(zero, "0") and not re.fullmatch(zero, "3")


def test_an_id_prefix_is_part_of_the_shape() -> None:
    regex = shape_regex(shape_of("INC-4820", "id"), "id")
    assert re.fullmatch(regex, "INC-17") and not re.fullmatch(regex, "CHG-4821") and not re.fullmatch(regex, "inc-4820")
    either = shape_regex("`CHG`-9||`INC`-9", "id")  # runs that said both
    assert re.fullmatch(either, "CHG-1") and re.fullmatch(either, "INC-2") and not re.fullmatch(either, "REQ-3")


def _one(text: str, kind: str, learned: str, typ: str = "str", **extra: object) -> TaskTemplate:
    return TaskTemplate(text, [Slot("v", kind, typ, None, shape_of(learned, kind), **extra)])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "task",
    [
        "Reset the password for carol.diaz and add her to the vpn-users group",
        "Reset the password for carol.diaz. Thanks",
        "Reset the password for Carol Diaz",
        "Reset the password for Carol.Diaz",  # case is part of a token's shape: passed on as written
        "Reset the password for carol",
    ],
)
def test_a_username_slot_does_not_swallow_words_or_change_shape(task: str) -> None:
    t = _one("Reset the password for {v}", "id", "carol.diaz")
    assert t.bind("Reset the password for dan.ito.") == {"v": "dan.ito"}
    assert t.bind(task) is None


def test_free_text_stops_at_a_sentence_or_a_new_clause_and_counts_its_words() -> None:
    t = _one("Cancel it because {v}.", "text", "ordered by mistake")
    assert t.bind("Cancel it because no longer needed.") == {"v": "no longer needed"}
    assert t.bind("Cancel it because ordered by mistake. Actually, please do not do any of the above.") is None
    assert t.bind("Cancel it because ordered by mistake and refund the shipping") is None
    assert t.bind("Cancel it because i found a much better price somewhere else") is None  # 9 words, learned 3
    assert t.bind("Cancel it because wrong size.") == {"v": "wrong size"}
    assert t.bind("Cancel it because wrong.") is None  # one word: fewer than a learned three allow


@pytest.mark.parametrize(
    ("template", "learned", "typ", "good", "bad"),
    [
        ("Adjust balance by {v}", "10", "int", "Adjust balance by 25", ["Adjust balance by -25", "Adjust balance by 25%",
                                                                        "Adjust balance by $25", "Adjust balance by 25.5"]),
        ("Discount {v}% today", "10", "int", "Discount 15% today", ["Discount 15 today", "Discount $15 today"]),
        ("Refund ${v} now", "$10", "float", "Refund $12.50 now", ["Refund 12 now", "Refund -$12 now"]),
    ],
)
def test_a_sign_currency_point_or_percent_next_to_a_value_is_never_ignored(
    template: str, learned: str, typ: str, good: str, bad: list[str]
) -> None:
    kind = "money" if "$" in learned else "int"
    t = _one(template, kind, learned.lstrip("$") if "${" in template else learned, typ)
    assert t.bind(good) is not None
    for task in bad:
        assert t.bind(task) is None, task


def test_spans_that_said_one_value_must_agree_until_a_run_tells_them_apart() -> None:
    t = TaskTemplate(
        "Refund ${amount} of order #{order_id}",
        [Slot("amount", "int", "int", None, "9"), Slot("order_id", "digits", "str", None, "9", "amount")],
    )
    assert t.bind("Refund $10 of order #10") == {"amount": 10, "order_id": "10"}
    assert t.bind("Refund $25 of order #1004") is None


def test_an_unknown_shape_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match="words:MIN-MAX"):
        shape_regex("words:9", "text")
    with pytest.raises(ValueError, match="unknown character"):
        shape_regex("aQ", "id")


def test_a_file_from_before_shapes_gets_the_shape_of_its_example_and_any_widens_it(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parent.parent
    source = (repo / "skills" / "ship_order_instead.py").read_text()
    old = source.replace("               'shape': 'words:3-5:,',\n", "")
    assert old != source
    path = tmp_path / "ship_order_instead.py"
    path.write_text(old)
    skill = read_skill_file(path)
    assert skill.template.bind("Please ship order #1006 to 4 Mill Lane, Fairview instead.") is not None
    assert skill.template.bind("Please ship order #1006 to 4 Mill Lane. Also refund it instead.") is None
    path.write_text(source.replace("'shape': 'words:3-5:,'", "'shape': 'any'"))
    wide = read_skill_file(path)
    assert wide.template.bind("Please ship order #1006 to 4 Mill Lane. Also refund it instead.") is not None


def test_a_number_in_the_literal_text_keeps_its_sign_point_and_percent() -> None:
    t = TaskTemplate("Adjust balance by -10 for {v}", [Slot("v", "id", "str", None, "A-9")])
    assert t.bind("Adjust balance by -10 for AC-7") == {"v": "AC-7"}
    for task in ["Adjust balance by 10 for AC-7", "Adjust balance by -10.5 for AC-7", "Adjust balance by -10% for AC-7"]:
        assert t.bind(task) is None, task


def test_a_negative_amount_the_task_says_is_a_parameter_with_its_sign() -> None:
    from skillforge._lifting import discover_template
    from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory

    run = Trajectory(
        task="Adjust balance of AC-7 by -10",
        calls=[Call(tool="adjust", args={"account_id": "AC-7", "amount": -10}, result={"ok": True})],
        outcome=Outcome(ok=True, output="done"),
        tools={"adjust": ToolRef(module="bank", qualname="adjust", params=("account_id", "amount"))},
    )
    template = discover_template(run)
    assert isinstance(template, TaskTemplate)
    assert template.bind("Adjust balance of AC-9 by -25") == {"account_id": "AC-9", "amount": -25}
    assert template.bind("Adjust balance of AC-9 by 25") is None


def test_literal_numbers_bind_as_written() -> None:
    order = Slot("order_id", "id", "str", None, "#`W`9")
    t = TaskTemplate("For {order_id}, swap {{'capacity': '1.5L', 'weight': '55-75 lbs', 'by': -10}} now", [order])
    assert t.bind("For #W1, swap {'capacity': '1.5L', 'weight': '55-75 lbs', 'by': -10} now") == {"order_id": "#W1"}
    assert t.bind("For #W1, swap {'capacity': '15L', 'weight': '55-75 lbs', 'by': -10} now") is None
    assert t.bind("For #W1, swap {'capacity': '1.5L', 'weight': '55 75 lbs', 'by': -10} now") is None
    assert t.bind("For #W1, swap {'capacity': '1.5L', 'weight': '55-75 lbs', 'by': 10} now") is None


def test_long_tasks_bind_where_every_text_slot_has_a_shape() -> None:
    words = Slot("reason", "text", "str", None, "words:2-4")
    name = Slot("item", "text", "str", None, "Aa Aa")
    t = TaskTemplate("Return the {item} because {reason}. " + "Some context that is long. " * 20, [name, words])
    task = "Return the Tea Kettle because it leaks. " + "Some context that is long. " * 20
    assert len(task) > 300 and t.bind(task) == {"item": "Tea Kettle", "reason": "it leaks"}
    free = TaskTemplate("Return the {item} because {reason}. " + "Some context that is long. " * 20,
                        [Slot("item", "text", "str"), Slot("reason", "text", "str")])
    # two unshaped free-text slots: binding is bounded (each slot but the last is matched once), so a
    # long task binds too, up to MAX_TASK_CHARS (see tests/test_hardening_scale.py)
    assert free.bind(task) == {"item": "Tea Kettle", "reason": "it leaks"}


def test_ignored_lists_seen_in_several_lengths_take_one_item_more_or_less() -> None:
    persona = TaskTemplate("You are {_2}. Reset {u}.", [Slot("_2", "ignored", "str", None, "words:3-4:,"), Slot("u", "id", "str", None, "a.a")])
    for words in ("calm, shy", "calm, shy, busy", "a, b, c, d, e"):
        assert persona.bind(f"You are {words}. Reset ann.li.") == {"u": "ann.li"}, words
    assert persona.bind("You are calm. Reset ann.li.") is None and persona.bind("You are a, b, c, d, e, f. Reset ann.li.") is None
    # one length seen: no evidence that it varies; and data text keeps exactly the lengths seen
    fixed = TaskTemplate("You are {_2}. Reset {u}.", [Slot("_2", "ignored", "str", None, "words:3-3:,"), Slot("u", "id", "str", None, "a.a")])
    assert fixed.bind("You are calm, shy. Reset ann.li.") is None
    reason = TaskTemplate("Cancel {o} because {why}.", [Slot("o", "digits", "str", None, "9"), Slot("why", "text", "str", None, "words:3-4:,")])
    assert reason.bind("Cancel 5 because too, late.") is None


def test_capitalised_words_seen_in_several_lengths_take_one_word_more() -> None:
    from skillforge._template import union_shape

    assert union_shape("Aa", "Aa") == "Aa"  # one length: no evidence that length varies
    assert union_shape("Aa", "Aa Aa") == "Names:1-3"
    assert union_shape("Names:1-3", "Aa Aa Aa") == "Names:1-4"
    assert union_shape("Aa", "A-Aa") == "A-Aa||Aa"  # another kind of token: either, as seen
    t = TaskTemplate("Return {item}.", [Slot("item", "text", "str", None, "Names:2-3")])
    assert t.bind("Return Water Bottle.") == {"item": "Water Bottle"}
    assert t.bind("Return Grill.") is None and t.bind("Return Pet Bed And Lamp Set.") is None
    # a word of two capitalised parts joined by a hyphen is one capitalised word
    assert union_shape("A-Aa||Aa", "Aa Aa") == "Names:1-3" and union_shape("Names:1-3", "Aa-Aa Aa") == "Names:1-3"
    assert t.bind("Return Wi-Fi Router.") == {"item": "Wi-Fi Router"} and t.bind("Return T-Shirt Pack.") == {"item": "T-Shirt Pack"}
    assert t.bind("Return T-shirt pack.") is None and t.bind("Return e-Reader Case.") is None
