"""Runs of the same request by another identification route as evidence for a skill's facts.

A customer may say who they are by email or by phone: two skills, whose calls after the first are
the same. What the other route's runs saw (the customer's city, the order's flags) widens the values
a skill's facts may take, exactly as its own runs would: an attribute seen with many values is not
guarded, a switch-like fact takes the values and combinations some run of either route showed, and
a combination no run showed is still a miss. Shadowed by the agent alone on a real SQLite shop.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillforge import Forge
from skillforge._codegen import render_skill
from skillforge._learning import computes, lends_evidence, route_key, spec_from_runs
from skillforge._library import Library
from skillforge._lifting import Rejected, discover_template
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from tests.toolsets import routes
from tests.toolsets._shadowing import open_world
from tests.toolsets._shadowing import shadowed as shadowed_in

M = "tests.toolsets.routes"
TOOLS = {
    "find_by_email": ToolRef(module=M, qualname="find_by_email", read=True, params=("email",)),
    "find_by_phone": ToolRef(module=M, qualname="find_by_phone", read=True, params=("phone",)),
    "get_customer": ToolRef(module=M, qualname="get_customer", read=True, params=("customer_id",)),
    "get_order": ToolRef(module=M, qualname="get_order", read=True, params=("order_id",)),
    "cancel": ToolRef(module=M, qualname="cancel", params=("order_id",)),
}


def run(
    k: int, city: str, express: bool, prepaid: bool, *, by: str = "email", card: str | None = None, tier: str = "gold",
    refused: bool = False,
) -> Trajectory:
    """A run that cancelled order #W<k>1 of customer c<k>, found by ``by``."""
    order_id = f"#W{k}1"
    if by == "email":
        task, first = f"I'm u{k}@example.com. Please cancel order {order_id}.", ("find_by_email", {"email": f"u{k}@example.com"})
    else:
        task, first = f"My phone is 555-01{k:02d}. Please cancel order {order_id}.", ("find_by_phone", {"phone": f"555-01{k:02d}"})
    calls = [
        Call(tool=first[0], args=first[1], result=f"cust_{1000 + k}"),
        Call(tool="get_customer", args={"customer_id": f"cust_{1000 + k}"},
             result={"id": f"cust_{1000 + k}", "city": city, "tier": tier, **({"card": card} if card else {})}),
        Call(tool="get_order", args={"order_id": order_id},
             result={"id": order_id, "customer": f"cust_{1000 + k}", "status": "pending", "express": express, "prepaid": prepaid}),
        Call(tool="cancel", args={"order_id": order_id}, result={"order_id": order_id, "status": "cancelled"}),
    ]
    if refused:
        return Trajectory(task=task, calls=calls[:3], outcome=Outcome(ok=True, output=f"Order {order_id} cannot be cancelled now."), tools=TOOLS)
    return Trajectory(task=task, calls=calls, outcome=Outcome(ok=True, output=f"Cancelled order {order_id}."), tools=TOOLS)


PHONE_RUNS = [run(2, "Boston", True, False, by="phone"), run(3, "Chicago", False, True, by="phone"),
              run(4, "Denver", False, False, by="phone")]


def learned(runs: list[Trajectory], evidence: tuple[Trajectory, ...] = ()) -> tuple[Any, str]:
    template = discover_template(runs[0])
    assert not isinstance(template, Rejected)
    spec = spec_from_runs(runs, name="cancel_order", template=template, evidence=evidence)
    assert not isinstance(spec, Rejected), spec
    return spec, render_skill(spec).split("def cancel_order", 1)[1]


# -- on runs alone -----------------------------------------------------------------


def test_the_other_routes_runs_widen_the_values_a_skills_facts_take() -> None:
    alone, body = learned([run(1, "Austin", False, False)])
    assert "== 'Austin'" in body and "order['express'] is False" in body  # one run: every fact as it saw it

    spec, body = learned([run(1, "Austin", False, False)], evidence=tuple(PHONE_RUNS))
    assert spec.evidence == tuple(r.hash for r in PHONE_RUNS) and spec.runs == alone.runs
    # the city took four values in four runs that acted alike: an attribute, not guarded
    assert "'Austin'" not in body and "# not guarded: customer['city'] took 4 different values in 4 runs" in body
    # the flags keep the combinations some run of either route showed: express and prepaid together is none
    assert "(order['express'], order['prepaid']) in ((False, False), (False, True), (True, False))" in body


def test_a_field_only_some_records_have_takes_the_values_either_route_showed_whole() -> None:
    own = [run(1, "Austin", False, False, card="visa"), run(5, "Austin", False, False)]
    _spec, body = learned(own, evidence=(run(2, "Boston", False, False, by="phone", card="mastercard"),))
    assert "values(customer, 'card') in (['mastercard'], ['visa'], [])" in body, body


def test_a_branch_is_not_told_apart_by_a_fact_the_other_routes_runs_showed_on_the_main_way() -> None:
    # by email: a gold customer's order cancelled, a basic customer's express prepaid order in El Paso refused
    own = [run(1, "Austin", False, False), run(5, "El Paso", True, True, tier="basic", refused=True)]
    _spec, alone = learned(own)
    # a flag of the order the runs act on tells the two runs apart, before the city and tier of the
    # customer (context: the runs act on the order) that happened to differ too
    assert "if order['express']:" in alone
    # by phone, basic customers' orders were cancelled, one express, one prepaid: neither flag alone
    # (nor the city, nor the tier) tells the ways apart; the order's flags together do
    phone = (run(2, "El Paso", True, False, by="phone", tier="basic"), run(3, "Chicago", False, True, by="phone", tier="basic"))
    _spec, body = learned(own, evidence=phone)
    branch = [line.strip() for line in body.splitlines() if line.strip().startswith("if ")]
    assert branch == ["if (order['express'], order['prepaid']) in ((True, True),):  # as the runs that stopped here saw it"], body


def test_runs_that_made_other_calls_after_the_first_are_no_evidence() -> None:
    other = run(5, "El Paso", True, True, by="phone")
    other = Trajectory(task=other.task, calls=[*other.calls[:2], other.calls[3]], outcome=other.outcome, tools=TOOLS)
    spec, body = learned([run(1, "Austin", False, False)], evidence=(other,))
    assert "== 'Austin'" in body and "order['express'] is False" in body


def test_runs_of_the_same_program_in_other_skills_lend_evidence_and_the_skills_own_runs_do_not() -> None:
    own = [run(1, "Austin", False, False)]
    by_email, _ = learned(own)

    def said(k: int, old: str, new: str) -> Trajectory:
        r = run(k, "Fresno", True, False)
        return r.model_copy(update={"task": r.task.replace(old, new)})

    # by phone; by email in another phrasing, which a file of its own holds: the same calls after the first
    for lender in (PHONE_RUNS[0], said(6, "Please cancel", "Kindly cancel")):
        theirs, _ = learned([lender])
        assert lends_evidence(by_email, theirs, lender, own)
    # words that may set a condition, or name what the runs read, lend nothing: "even if it ships express"
    # may be what let the agent cancel, and "cancel my express order" says which world it was
    for lender in (said(7, "order #W71.", "order #W71 even if it ships express."), said(8, "cancel order", "cancel my express order")):
        theirs, _ = learned([lender])
        assert route_key(theirs) == route_key(by_email)
        assert not lends_evidence(by_email, theirs, lender, own), lender.task
    # a run of the skill's own is evidence once: as its own run
    assert not lends_evidence(by_email, by_email, own[0], own)
    # another program (refused: no cancel) lends nothing
    refused, _ = learned([run(5, "El Paso", True, True, refused=True)])
    assert not lends_evidence(by_email, refused, run(5, "El Paso", True, True, refused=True), own)


def order_run(k: int, express: bool, prepaid: bool, verb: str = "Please cancel") -> Trajectory:
    """A run that cancelled order #W<k>1, whose first call reads the order the task names."""
    order_id = f"#W{k}1"
    calls = [
        Call(tool="get_order", args={"order_id": order_id},
             result={"id": order_id, "customer": f"cust_{1000 + k}", "status": "pending", "express": express, "prepaid": prepaid}),
        Call(tool="cancel", args={"order_id": order_id}, result={"order_id": order_id, "status": "cancelled"}),
    ]
    return Trajectory(task=f"{verb} order {order_id}.", calls=calls, outcome=Outcome(ok=True, output=f"Cancelled order {order_id}."), tools=TOOLS)


def test_a_phrasing_learned_on_its_own_lends_what_its_first_call_read() -> None:
    """Runs said in another phrasing whose first call is the skill's own (the same read of the same task
    value) saw the record acted on there: its flags take the combinations those runs showed too, and a
    combination no run showed is still a miss."""
    own = [order_run(1, False, False)]
    _spec, alone = learned(own)
    assert "order['express'] is False" in alone and "order['prepaid'] is False" in alone
    kindly = (order_run(2, True, False, "Kindly cancel"), order_run(3, False, True, "Kindly cancel"))
    spec, body = learned(own, evidence=kindly)
    assert spec.evidence == tuple(r.hash for r in kindly)
    assert "(order['express'], order['prepaid']) in ((False, False), (False, True), (True, False))" in body, body
    assert "order['express'] is False" not in body


def test_skills_of_one_request_by_two_routes_share_a_route_key() -> None:
    by_email, _ = learned([run(1, "Austin", False, False)])
    by_phone, _ = learned([PHONE_RUNS[0]])
    assert route_key(by_email) == route_key(by_phone) is not None
    assert by_email.steps[0].tool != by_phone.steps[0].tool


# -- a Forge on a real SQLite shop, shadowed by its agent ---------------------------


@pytest.fixture
def world(tmp_path: Path) -> Any:
    forge = open_world(routes, tmp_path)
    yield forge, tmp_path
    forge.close()
    routes.TOOLBOX.clear()


def shadowed(forge: Forge, tmp: Path, task: str) -> tuple[Any, bool]:
    return shadowed_in(routes, forge, tmp, task)


def test_a_skill_serves_what_the_other_routes_runs_showed_and_never_a_combination_none_did(world: Any) -> None:
    forge, tmp = world
    for k in (2, 3, 4):  # by phone: express only, prepaid only, neither
        result, same = shadowed(forge, tmp, f"My phone is 555-01{k:02d}. Please cancel order #W{k}1.")
        assert same and result.source in ("agent", "skill+agent", "skill")
    result, same = shadowed(forge, tmp, "I'm ana@example.com. Please cancel order #W11.")  # by email: neither
    assert same and result.source == "agent"

    skills = {s.name: s for s in Library(tmp / "skills").scan()[0]}
    by_email = next(s for s in skills.values() if "find_by_email" in s.tools)
    by_phone = next(s for s in skills.values() if "find_by_phone" in s.tools)
    assert len(skills) == 2 and set(by_email.meta["evidence"]) == set(by_phone.runs)
    assert "also rest on 3 runs of the same request by another route or phrasing" in by_email.source

    # express, not prepaid, in a city no email run saw: a phone run showed it, so the skill serves it
    result, same = shadowed(forge, tmp, "I'm fay@example.com. Please cancel order #W61.")
    assert (result.source, same) == ("skill", True)
    # the file re-renders from its runs and its evidence, byte for byte
    library = Library(tmp / "skills")
    by_email = next(s for s in library.scan()[0] if "find_by_email" in s.tools)
    spec = spec_from_runs(
        [library.load_run(h) for h in by_email.runs], name=by_email.name, template=by_email.template,
        evidence=tuple(library.load_run(h) for h in by_email.meta["evidence"]),
    )
    assert not isinstance(spec, Rejected) and render_skill(spec) == by_email.source


    # express and prepaid: no run of either route showed it, and the agent refuses: not served, nothing cancelled
    result, same = shadowed(forge, tmp, "I'm ed@example.com. Please cancel order #W51.")
    assert same and result.source != "skill"
    assert ("#W51", "cust_1005", "pending", 1, 1) in routes.snapshot()

    # the refusal is a branch of the email skill now; its way of cancelling still rests on the phone runs
    # (learned again when the phone route learns more), and the refusal keeps its own run's facts
    result, same = shadowed(forge, tmp, "My phone is 555-0108. Please cancel order #W81.")  # the phone route refuses too
    assert same
    result, same = shadowed(forge, tmp, "I'm jo@example.com. Please cancel order #W101.")  # express only: a phone run showed it
    assert (result.source, same) == ("skill", True), result.handover
    by_email = next(s for s in Library(tmp / "skills").scan()[0] if "find_by_email" in s.tools)
    assert "if " in by_email.source.split("def ", 1)[1] and by_email.meta.get("evidence"), by_email.source

    # removing the other route's skill keeps the runs this one's guards rest on
    forge.remove(next(s.name for s in library.scan()[0] if "find_by_phone" in s.tools))
    assert all(library.run_path(h).exists() for h in by_email.meta["evidence"])


# -- runs whose own skills chose otherwise where their runs could not tell ----------------


def refunding(r: Trajectory, total: float, prices: list[float], *, said: float | None = None, to: str = "on its way back") -> Trajectory:
    """``r`` with an order of ``total`` (items at ``prices``), whose answer says the refund of ``said`` (the total)."""
    calls = list(r.calls)
    calls[2] = calls[2].model_copy(update={"result": {**calls[2].result, "total": total, "items": [{"price": p} for p in prices]}})
    amount = total if said is None else said
    return Trajectory(task=r.task, calls=calls, outcome=Outcome(ok=True, output=f"{r.outcome.output} ${amount:,.2f} is {to}."), tools=TOOLS)


def test_a_run_whose_skill_wrote_its_amount_another_way_that_wrote_it_alike_lends_evidence() -> None:
    own = [refunding(run(1, "Austin", False, False), 1234.5, [1234.5])]  # "$1,234.50": only ',.2f' writes it so
    mine, alone = learned(own)
    assert "== 'Austin'" in alone
    phone = [refunding(r, 30.0 + k, [10.0, 20.0 + k]) for k, r in enumerate(PHONE_RUNS)]  # "$30.00": '.2f' writes it too
    for lender in phone:
        theirs, _ = learned([lender])
        assert route_key(theirs) != route_key(mine)  # their skill writes its amount by '.2f', this one by ',.2f'
        assert computes(mine, lender) and lends_evidence(mine, theirs, lender, own)
    spec, body = learned(own, evidence=tuple(phone))
    assert spec.evidence == tuple(r.hash for r in phone)
    assert "'Austin'" not in body and "# not guarded: customer['city'] took 4 different values in 4 runs" in body


def test_a_run_this_skills_program_would_not_have_made_lends_nothing() -> None:
    own = [refunding(run(1, "Austin", False, False), 1234.5, [1234.5])]
    mine, _ = learned(own)
    others = [
        refunding(PHONE_RUNS[0], 30.0, [10.0, 20.0], said=10.0),  # refunded the first item's price, not the total
        refunding(PHONE_RUNS[1], 30.0, [30.0], to="back on your card"),  # another answer
    ]
    wrote_other = refunding(PHONE_RUNS[2], 30.0, [30.0])
    wrote_other = wrote_other.model_copy(update={"calls": [*wrote_other.calls[:3], wrote_other.calls[3].model_copy(update={"args": {"order_id": "#W99"}})]})
    for lender in (*others, wrote_other):  # cancelled another order than the one it read
        theirs, _ = learned([lender])
        assert not computes(mine, lender) and not lends_evidence(mine, theirs, lender, own), lender.outcome.output


def test_words_that_name_only_what_a_write_returned_say_nothing_of_the_world_it_was_made_in() -> None:
    def reasoned(r: Trajectory, task: str) -> Trajectory:
        calls = [*r.calls[:3], r.calls[3].model_copy(update={"result": {**r.calls[3].result, "note": "changed mind"}})]
        return Trajectory(task=task, calls=calls, outcome=r.outcome, tools=TOOLS)

    own = [reasoned(run(1, "Austin", False, False), "I'm u1@example.com. Please cancel order #W11, I changed my mind.")]
    mine, _ = learned(own)
    lender = PHONE_RUNS[0]
    theirs, _ = learned([lender])
    # "changed" and "mind" are said by one phrasing only, and name a text only the cancel returned (its echo)
    assert lends_evidence(mine, theirs, lender, own)
    # a text a read returned is a world the words may name: "express" said where a read showed a flag so named
    said = reasoned(run(1, "Austin", True, False), "I'm u1@example.com. Please cancel my express order #W11.")
    express, _ = learned([said])
    assert not lends_evidence(express, theirs, lender, [said])


def test_a_clause_of_negation_both_phrasings_say_word_for_word_says_the_same_in_both() -> None:
    def told(r: Trajectory, old: str, new: str) -> Trajectory:
        return r.model_copy(update={"task": r.task.replace(old, new)})

    own = [told(run(1, "Austin", False, False), "order #W11.", "order #W11, we won't need it after all.")]
    mine, _ = learned(own)
    same = told(PHONE_RUNS[0], "order #W21.", "order #W21 \u2014 we won\u2019t need it after all!")
    theirs, _ = learned([same])
    assert lends_evidence(mine, theirs, same, own)  # the same clause of negation, in other punctuation
    spec, body = learned(own, evidence=(same,))
    assert spec.evidence == (same.hash,) and "customer['city'] in ('Austin', 'Boston')" in body
    # a clause of negation one of them says and the other does not, or says otherwise, lends nothing
    for other in ("order #W21.", "order #W21, we don't need it after all.", "order #W21, we won't need it, even if shipped."):
        lender = told(PHONE_RUNS[0], "order #W21.", other)
        theirs, _ = learned([lender])
        assert not lends_evidence(mine, theirs, lender, own), other


def test_what_a_skills_expressions_compute_on_a_run_and_what_they_leave_unjudged() -> None:
    from skillforge._spec import Const, Fmt, Join, Len, ListOf, Neg, Param, Ref
    from skillforge._values import computed

    results = [{"total": 1234.5, "items": [{"name": "a"}, {"name": "b"}]}]
    assert computed(Fmt(("$", (Ref(0, ("total",)), ",.2f"), " for ", (Param("order_id"), ""))), results, {"order_id": "#W1"}) \
        == "$1,234.50 for #W1"
    assert computed(Neg(Ref(0, ("total",))), results, {}) == -1234.5
    assert computed(Len(Ref(0, ("items",))), results, {}) == 2
    assert computed(ListOf((Const("x"), Param("p"))), results, {"p": 1}) == ["x", 1]
    with pytest.raises(ValueError):  # a whole list joined says more than one value shows: never judged
        computed(Join(Ref(0, ("items",)), ", ", ("name",)), results, {})
    with pytest.raises(KeyError):  # a task value the run's calls were not given
        computed(Param("reason"), results, {})
