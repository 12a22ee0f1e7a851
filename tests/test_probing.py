"""Probes: the agent asked, in a recorded world with one fact changed, whether that fact decides.

The lending desk (``tests.toolsets.lending``): books are lent to members whose fines are at most
$10.00, orders refunded when they total at most $500.00. A skill learned from one run guards what
that run showed; probes replace a number's sign and scale by the range the agent acted alike over,
drop what it ignores, and keep what decides or what they could not settle.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skillforge import Forge, UserError
from skillforge._codegen import render_skill
from skillforge._config import load_settings
from skillforge._learning import spec_from_runs
from skillforge._lifting import Rejected
from skillforge._probes import SLOT, Known, changed_world, changes, rungs
from skillforge._spec import Guard
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from tests.toolsets import lending


def _forge(tmp_path: Path, agent=lending.agent, probes: int = 12) -> Forge:
    lending.make_world(tmp_path / "world.sqlite3")
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", agent=agent, run_log=False, probes=probes,
                  background_probes=False)
    for f in lending.TOOLS:
        lending.TOOLBOX[f.__name__] = forge.tool(read=f.__name__ in lending.READS)(f)
    return forge


@pytest.fixture
def desk(tmp_path: Path):
    forge = _forge(tmp_path)
    yield forge
    forge.close()
    lending.TOOLBOX.clear()


def _source(forge: Forge, name: str) -> str:
    return (forge.skills_dir / f"{name}.py").read_text()


def test_a_probe_never_runs_a_tool_least_of_all_a_write(desk: Forge) -> None:
    first = desk.solve("Please lend book B-7 to member M-1001")
    assert first.source == "agent" and first.learned
    ran = list(lending.CALLED)
    written = lending.writes()
    assert desk.probe() == [first.learned]
    assert desk.prober.made >= 3  # a control run and a number's search at least
    assert lending.CALLED == ran  # no tool's code ran while probing, reads included
    assert lending.writes() == written


def test_a_threshold_on_a_number_only_read_is_guarded(desk: Forge) -> None:
    """Learned from a member owing $4.75 (lent), the skill must not lend to one owing $14.25 (the agent
    refuses: over $10.00). Without probes the fines' sign and digits were all that was guarded."""
    name = desk.solve("Please lend book B-7 to member M-1001").learned
    desk.probe()
    source = _source(desk, name)
    assert "<= member['fines'] <=" in source and "member['fines'] > 0" not in source
    over = desk.solve("Please lend book B-9 to member M-1003")  # $14.25
    assert over.source == "skill+agent" and "owe $14.25" in over.output
    assert ("M-1003", "B-9") not in lending.writes()
    just_over = desk.solve("Please lend book B-9 to member M-1004")  # $10.50
    assert just_over.source != "skill" and "owe $10.50" in just_over.output
    under = desk.solve("Please lend book B-8 to member M-1002")  # $2.00, another member: served as code
    assert under.source == "skill" and under.llm_calls == 0 and ("M-1002", "B-8") in lending.writes()


def test_one_run_and_its_probes_serve_another_amount(tmp_path: Path) -> None:
    """A refund learned on a $30.00 order guarded '2 digits before the point': a $5.00 order was not
    served. With probes it is, and an order over the $500 limit still goes to the agent."""
    plain = _forge(tmp_path / "plain", probes=0)
    plain.solve("Please refund order W-301")
    assert plain.solve("Please refund order W-302").source != "skill"
    plain.close()

    forge = _forge(tmp_path / "probed")
    name = forge.solve("Please refund order W-301").learned
    assert forge.probe() == [name]
    five = forge.solve("Please refund order W-302")
    assert five.source == "skill" and five.output == "Refunded $5.00 for order W-302."
    assert forge.solve("Please refund order W-303").source == "skill"  # $75.25
    over = forge.solve("Please refund order W-304")  # $820.00: over the limit
    assert over.source == "skill+agent" and "refund limit" in over.output
    assert ("W-304", 820.0) not in lending.writes()
    forge.close()


def test_facts_that_decide_only_together_are_both_kept(tmp_path: Path) -> None:
    """The local agent lends to members who live in Springfield or hold a card of its branch. Either
    fact changed alone, it lends all the same; both together (as a pool of facts is changed), it refuses.
    Probed one at a time, both would be dropped and a member of neither be lent to."""
    forge = _forge(tmp_path, agent=lending.local_agent, probes=40)
    refused = forge.solve("Could you lend B-1 to M-1006?")  # Shelbyville both: a value the fields are known to take
    assert "live in Springfield" in refused.output
    name = forge.solve("Please lend book B-7 to member M-1001").learned
    forge.probe()
    records = [p for h in forge._index().by_name[name].runs for p in forge.library.load_probes(h)]
    for field in ("city", "branch"):
        mine = [p for p in records if p.said.startswith(f"member[{field!r}]")]
        assert mine and any(p.verdict == "different" and "all at once not" in p.why for p in mine), field
    assert any(p.verdict == "same" and "changed at once" in p.change for p in records)  # the rest of the pool dropped
    source = _source(forge, name)
    assert "member['city'] == 'Springfield'" in source and "member['branch'] == 'Springfield'" in source
    away = forge.solve("Please lend book B-2 to member M-1007")  # lives elsewhere, card from elsewhere
    assert away.source != "skill" and "live in Springfield" in away.output
    assert ("M-1007", "B-2") not in lending.writes()
    forge.close()


@pytest.mark.parametrize(("learned", "other", "written"), [
    ("Please lend book B-7 to member M-1001", "Please lend book B-8 to member M-1002", ("M-1002", "B-8")),  # an id
    ("Please lend book B-7 to Ann Lee", "Please lend book B-8 to Bo Ng", ("M-1002", "B-8")),  # a name
    ("Please lend book B-7 to ann.lee@example.com", "Please lend book B-8 to cy.old@example.com", ("M-1005", "B-8")),  # an email
    ("Please refund order W-301", "Please refund order W-303", ("W-303", 75.25)),  # an amount the write takes
])
def test_one_run_and_its_probes_serve_a_task_of_the_same_shape(tmp_path: Path, learned: str, other: str, written: tuple) -> None:
    """Learned from one run, probed, a task of the same shape with other values is served as code."""
    forge = _forge(tmp_path)
    name = forge.solve(learned).learned
    assert name and forge.probe() == [name]
    again = forge.solve(other)
    assert again.source == "skill" and again.llm_calls == 0, again.handover
    assert written in lending.writes()
    forge.close()


def test_a_name_written_otherwise_is_served_where_the_agent_passes_it_on_as_written(tmp_path: Path) -> None:
    """Slot shapes and coinciding sources: learned from "Ann Lee", probed with "ann lee" and "ANN LEE".
    The agent passes the name on as written, as the skill does, so the skill takes names in any case;
    its answer writes the member's name as the record does, where the task's and the record's coincided
    when learned, so the skill's answer quotes the record: "BO NG" is served, and answered "Bo Ng"."""
    forge = _forge(tmp_path)
    name = forge.solve("Please lend book B-7 to Ann Lee").learned
    forge.probe()
    records = [p for h in forge._index().by_name[name].runs for p in forge.library.load_probes(h) if p.step == SLOT]
    assert {(p.fact, p.to, p.verdict) for p in records} == {
        ("slot name", "ann lee", "same"), ("slot name", "ANN LEE", "same"),
        ("source name", "ann lee", "different"), ("source name", "ANN LEE", "different")}
    source = _source(forge, name)
    assert "{member_2['name']}" in source and "member_2['name'] == name" not in source
    loud = forge.solve("Please lend book B-8 to BO NG")
    assert loud.source == "skill" and loud.llm_calls == 0 and ("M-1002", "B-8") in lending.writes()
    assert loud.output == "Lent B-8 to Bo Ng; it is due 2026-12-15."  # as the agent alone answers it
    forge.close()

    titled = _forge(tmp_path / "titled", agent=lending.titled_agent)
    name = titled.solve("Please lend book B-7 to Ann Lee").learned
    titled.probe()
    records = [p for h in titled._index().by_name[name].runs for p in titled.library.load_probes(h) if p.step == SLOT]
    assert records and all(p.verdict == "inconclusive" for p in records)  # it looked up "Ann Lee", which the world was not asked
    assert titled.solve("Please lend book B-8 to BO NG").source == "agent"  # the skill would look up "BO NG": not served
    titled.close()


def test_one_run_and_its_probes_serve_a_name_of_more_words(tmp_path: Path) -> None:
    """Slot shapes by length: learned from "Ann Lee" (two words), probed with a name of three words the
    library's runs show a member's name to take ("Mary Ann Lee"), put everywhere the world held "Ann
    Lee". The agent acts alike, so the slot takes names of two to four words: "Lu Mei Chen" is served.
    Without the probe the template takes two words only."""
    forge = _forge(tmp_path)
    assert forge.solve("Please lend book B-3 to member M-1009").source == "agent"  # the library now knows a longer name
    name = forge.solve("Please lend book B-7 to Ann Lee").learned
    assert forge.explain("Please lend book B-8 to Lu Mei Chen").outcome == "agent"  # two words, as learned
    forge.probe()
    records = [p for h in forge._index().by_name[name].runs for p in forge.library.load_probes(h) if p.step == SLOT]
    assert ("slot name", "Mary Ann Lee", "same") in {(p.fact, p.to, p.verdict) for p in records}
    three = forge.solve("Please lend book B-8 to Lu Mei Chen")
    assert three.source == "skill" and three.llm_calls == 0, three.handover
    assert ("M-1010", "B-8") in lending.writes() and three.output.startswith("Lent B-8 to Lu Mei Chen;")
    forge.close()


def test_a_call_the_record_cannot_answer_keeps_the_guard(tmp_path: Path) -> None:
    """An agent that reads the ledger of a member owing over $5.00: probing fines above that asks for a
    call no record holds, so the probe is inconclusive and the fines keep their guards."""
    forge = _forge(tmp_path, agent=lending.ledger_agent)
    name = forge.solve("Please lend book B-7 to member M-1005").learned  # $0.00: no ledger read
    forge.probe()
    records = [p for h in forge._index().by_name[name].runs for p in forge.library.load_probes(h)]
    assert any(p.verdict == "inconclusive" and "get_ledger" in p.why for p in records)
    assert "<= member['fines'] <=" not in _source(forge, name)
    assert forge.solve("Please lend book B-9 to member M-1003").source != "skill"
    forge.close()


def test_an_agent_that_answers_otherwise_unchanged_drops_nothing(tmp_path: Path) -> None:
    """The noisy agent names a value of the world in one run and not in the next: its unchanged control
    run already differs from the record, so every probe of the run would be noise."""
    forge = _forge(tmp_path, agent=lending.noisy_agent)
    name = forge.solve("Please lend book B-7 to member M-1001").learned
    before = _source(forge, name)
    assert forge.probe() == []
    records = forge.library.load_probes(forge._index().by_name[name].runs[0])
    assert [p.fact for p in records] == ["control"] and records[0].verdict == "inconclusive"
    assert _source(forge, name) == before
    forge.close()


def test_wording_alone_is_not_a_difference(tmp_path: Path) -> None:
    """Answers compared on the values they carry: 'Thanks!' or not, the same member, book and date."""
    from skillforge._probes import Behaviour, verdict

    world = [("get_member", {"member_id": "M-1"}, {"name": "Ann Lee", "city": "Springfield"}, None)]
    a = Behaviour(writes=[], answer="Lent B-7 to Ann Lee; it is due 2026-12-15. Thanks!")
    b = Behaviour(writes=[], answer="Done: B-7 is with Ann Lee until 2026-12-15.")
    c = Behaviour(writes=[], answer="Lent B-7 to Ann Lee; it is due 2026-12-15, from our Springfield branch.")
    d = Behaviour(writes=[], answer="Lent B-7 to Ann Lee; it is due 2026-12-16.")
    assert verdict(a, b, world, {})[0] == "same"
    assert verdict(a, c, world, {})[0] == "different"
    assert verdict(a, d, world, {})[0] == "different"
    w1 = Behaviour(writes=[("refund", '{"amount":5.0}')], answer="x")
    w2 = Behaviour(writes=[("refund", '{"amount":50.0}')], answer="x")
    assert verdict(w1, w2, world, {})[0] == "different"
    assert verdict(Behaviour(writes=[], failed="KeyError: 'x'"), w1, world, {})[0] == "inconclusive"


def test_probe_records_live_beside_the_runs_and_the_file_rerenders_from_them(desk: Forge) -> None:
    name = desk.solve("Please lend book B-7 to member M-1001").learned
    desk.probe()
    skill = desk._index().by_name[name]
    assert desk.library.probes_path(skill.runs[0]).is_file()
    runs = [desk.library.load_run(h) for h in skill.runs]
    assert runs[0].probes and runs[0].hash == skill.runs[0]  # records are data beside the run, not its identity
    spec = spec_from_runs(runs, name=name, template=skill.template)
    assert not isinstance(spec, Rejected)
    assert render_skill(spec) == skill.source
    source = skill.source
    assert "Probed and not guarded" in source and "member has the fields it had when learned" in source.split('"""')[1]


def test_the_probe_costs_are_counted(desk: Forge) -> None:
    desk.solve("Please lend book B-7 to Ann Lee")
    desk.probe()
    skill = next(iter(desk._index().by_name.values()))
    records = desk.library.load_probes(skill.runs[0])
    # each world's requests and agent run counted once, on its first record, however many facts it probed
    assert desk.prober.requests == sum(p.requests for p in records) > 0
    assert desk.prober.made == sum(p.runs for p in records) == len({(p.step, p.change) for p in records if p.runs})
    pooled = [p for p in records if "changed at once" in p.change]
    assert pooled and sum(p.runs for p in pooled) < len(pooled)  # facts probed together share one world


def test_the_budget_bounds_the_probes(tmp_path: Path) -> None:
    forge = _forge(tmp_path, probes=1)
    forge.solve("Please lend book B-7 to member M-1001")
    forge.probe()
    assert forge.prober.made == 1  # the control run, and nothing it could afford after
    forge.close()
    off = _forge(tmp_path / "off", probes=0)
    off.solve("Please lend book B-7 to member M-1001")
    assert off.probe() == [] and off.prober.made == 0
    off.close()


def test_probes_can_wait_for_a_shape_to_recur(tmp_path: Path) -> None:
    """``probe_new=False``: a skill written from a first run is not probed (most shapes never recur, and
    probes cost agent runs); once a second run widens it, it is."""
    lending.make_world(tmp_path / "world.sqlite3")
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", agent=lending.agent, run_log=False, probes=12,
                  background_probes=False, probe_new=False)
    for f in lending.TOOLS:
        lending.TOOLBOX[f.__name__] = forge.tool(read=f.__name__ in lending.READS)(f)
    name = forge.solve("Please lend book B-7 to member M-1001").learned
    assert forge.probe() == [] and forge.prober.made == 0
    again = forge.solve("Please lend book B-8 to member M-1005")  # $0.00: the first run's guards stop it
    assert again.source == "skill+agent" and again.learned == name
    assert forge.probe() == [name] and forge.prober.made > 0
    forge.close()


def test_probes_are_configured_and_checked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="probes=-1"):
        Forge(skills_dir=tmp_path / "s", state_dir=tmp_path / "t", probes=-1)
    monkeypatch.setenv("SKILLFORGE_PROBES", "6")
    monkeypatch.setenv("SKILLFORGE_PROBES_PER_HOUR", "30")
    settings = load_settings(cwd=tmp_path)
    assert (settings.probes, settings.probes_per_hour) == (6, 30)
    assert load_settings(cwd=tmp_path, environ={}).probes == 0  # off unless asked for


def _run(result: dict) -> Trajectory:
    return Trajectory(
        task="Check member M-1", outcome=Outcome(ok=True, output="ok"),
        calls=[Call(tool="get_member", args={"member_id": "M-1"}, result=result),
               Call(tool="lend_book", args={"member_id": "M-1", "amount": result.get("fines")}, result={"ok": True})],
        tools={"get_member": ToolRef(module="m", qualname="get_member", read=True), "lend_book": ToolRef(module="m", qualname="lend_book")},
    )


def test_a_change_is_applied_wherever_the_value_is_the_same_thing() -> None:
    run = _run({"id": "M-1", "fines": 4.75, "status": "active"})
    change = changes(Guard("sign", ("fines",), "positive"), 0, run.calls[0].result, "get_member", {}, Known([run]))[0]
    assert change.to == 47.5 == rungs(4.75)[0]
    world = changed_world(run.calls, change)
    assert world[0][2]["fines"] == 47.5 and world[1][1]["amount"] == 47.5  # an amount, where it was passed on too
    flag = changes(Guard("eq", ("status",), "active"), 0, run.calls[0].result, "get_member", {}, Known([run]))
    assert flag is None  # no other status is known: a code word is never made up
    other = _run({"id": "M-2", "fines": 1.0, "status": "suspended"})
    flag = changes(Guard("eq", ("status",), "active"), 0, run.calls[0].result, "get_member", {}, Known([run, other]))
    assert [c.to for c in flag] == ["suspended"]
    world = changed_world(run.calls, flag[0])
    assert world[0][2]["status"] == "suspended" and world[1][2] == {"ok": True}


def test_a_fact_settled_in_one_phrasing_is_kept_for_another() -> None:
    """'Reset her password. Don't unlock anything.': the lock does not matter there, and does where the
    task does not say so. A fact is dropped only where runs of every phrasing the skill holds settled it."""
    from skillforge._probes import dropped
    from skillforge._trajectory import Probe

    locked = Probe(step=0, fact="('eq', ('locked',))", verdict="same", why="the same calls and answer")
    told = _run({"id": "M-1", "locked": True}).model_copy(update={"probes": (locked,)})
    plain = _run({"id": "M-2", "locked": True})
    assert dropped([told]) == {(0, locked.fact)}
    assert dropped([told, plain], contexts=[1, 0]) == frozenset()  # the plain phrasing's run was never probed
    assert dropped([told, plain], contexts=[0, 0]) == {(0, locked.fact)}
    # settled in words that set no condition on it, it holds in other such words, and only there
    calm = {1: "Please reset {u}'s password", 0: "reset the password of {u} now"}
    assert dropped([told, plain], contexts=[1, 0], wording=calm) == {(0, locked.fact)}
    for words in ("Reset {u}'s password. Don't unlock anything.", "Reset {u}'s password only", "{u} is locked out: reset it"):
        assert dropped([told, plain], contexts=[1, 0], wording={**calm, 1: words}) == frozenset(), words
        assert dropped([told, plain], contexts=[1, 0], wording={**calm, 0: words}) == frozenset(), words


def test_codes_and_a_task_value_among_every_element_are_probed() -> None:
    """A list of code words is given codes the field is known to hold (all at once); a task value not
    among a field of every element (or of a record keyed by id) is put in the first one."""
    run = _run({"id": "M-1", "groups": ["staff"], "cards": [{"no": "C-11"}, {"no": "C-12"}], "holds": {"H-1": {"no": "H-1"}}})
    other = _run({"id": "M-2", "groups": ["vpn", "admins", "staff"], "cards": [], "holds": {}})
    known = Known([run, other])
    result = run.calls[0].result
    codes = changes(Guard("codes", ("groups",), ("staff",)), 0, result, "get_member", {}, known)
    assert [c.to for c in codes] == [["staff", "admins", "vpn"]]
    card = changes(Guard("near", ("cards", "*", "no"), ("code", False)), 0, result, "get_member", {"code": "C-99"}, known)
    assert [(c.where, c.to) for c in card] == [(("cards", 0, "no"), "C-99")]
    hold = changes(Guard("near", ("holds",), ("code", False)), 0, result, "get_member", {"code": "H-9"}, known)
    assert list(hold[0].to) == ["H-1", "H-9"] and hold[0].to["H-9"] == {"no": "H-1"}
    assert changes(Guard("near", ("cards", "*", "no"), ("code", True)), 0, result, "get_member", {"code": "C-11"}, known) is None


def test_changes_made_at_once_never_collide() -> None:
    """Two ids set to the same task value would be one thing in a world where both change (each is
    changed wherever it appears): such changes are not pooled together, nor two at one place."""
    from skillforge._prober import _compatible, _Group
    from skillforge._probes import Change

    def group(where, old, to):
        return _Group(0, [], [Change(1, where, old, to, "")], pooled=True)

    a, b = group(("user_id",), "U-100", "#W100"), group(("payment", "id"), "P-200", "#W100")
    c, d = group(("city",), "Springfield", "Austin"), group(("state",), "IL", "Austin")
    e = group(("payment",), {"id": "P-200"}, {})
    assert _compatible([a, b, c, d, e]) == [a, c, d, e]  # b: set to the id a is set to (a city is no id)
    assert _compatible([b, e]) == [b]  # e: the place holding b's


def test_a_fact_probed_alike_in_one_branch_is_kept_for_another() -> None:
    """The storefront shadow's wrong replay: an order's status, probed alike where the order had not
    shipped (the answer quotes it: "is pending and hasn't shipped yet"), was dropped for the branch
    where it had ("has been delivered (tracking ...)"), and a cancelled order was answered as shipped.
    Runs that acted otherwise are contexts apart, as phrasings are."""
    from skillforge._probes import behaviour, dropped
    from skillforge._trajectory import Probe

    def order(status: str, answer: str, shipped: bool) -> Trajectory:
        result = {"id": "W-1", "status": status, "tracking": ["828595"] if shipped else []}
        return Trajectory(task="Where is order W-1?", outcome=Outcome(ok=True, output=answer),
                          calls=[Call(tool="get_order", args={"order_id": "W-1"}, result=result)],
                          tools={"get_order": ToolRef(module="m", qualname="get_order", read=True)})

    status = Probe(step=0, fact="('eq', ('status',))", verdict="same", why="the same calls and answer")
    waiting = order("pending", "Order W-1 is pending and hasn't shipped yet.", False).model_copy(update={"probes": (status,)})
    shipped = order("delivered", "Order W-1 has been delivered (tracking 828595).", True)
    other = order("processed", "Order W-1 is processed and hasn't shipped yet.", False)
    assert behaviour(waiting) == behaviour(other) != behaviour(shipped)  # values aside, what each did
    words = {0: "Where is order {order_id}?"}
    assert dropped([waiting, shipped], [(0, behaviour(waiting)), (0, behaviour(shipped))], words) == frozenset()
    assert dropped([waiting, other], [(0, behaviour(waiting)), (0, behaviour(other))], words) == {(0, status.fact)}


def test_a_code_word_probed_alike_keeps_to_the_codes_tried() -> None:
    """The storefront shadow's wrong replay: a shipped order's status, probed 'delivered' → 'pending'
    (the only other status then known) alike, was dropped, and a cancelled order, which the agent
    answers otherwise, was served. A code word keeps to the codes the agent was seen to act alike for,
    as a number keeps to its range; a name probed alike is dropped."""
    from skillforge._codegen import _Renderer
    from skillforge._probes import Probed
    from skillforge._trajectory import Probe

    status = Probe(step=0, fact="('eq', ('status',))", verdict="same", was="delivered", to="pending")
    city = Probe(step=0, fact="('eq', ('city',))", verdict="same", was="Phoenix", to="Austin")
    run = _run({"id": "M-1", "status": "delivered", "city": "Phoenix"}).model_copy(update={"probes": (status, city)})
    guards = [[Guard("eq", ("status",), "delivered"), Guard("eq", ("city",), "Phoenix")], []]
    Probed.of([run]).pruned(guards)
    assert guards[0] == [Guard("alike", ("status",), ("delivered", "pending"))]
    line = _Renderer.__new__(_Renderer).guard("order", guards[0][0], "")
    assert line.startswith("require(order['status'] in ('delivered', 'pending'), ")


def test_a_number_runs_acted_alike_over_spans_apart_decides() -> None:
    """The loans shadow's wrong replay: "settle my fines" with $0.00 owed ("nothing to pay") and with
    $4.50 (paid). Each run's probes showed the span it acted alike over, 0 alone and 0.45 to 45; their
    union, 0 to 45, served a member owing $3.20 as owing nothing. Spans apart decide: the number is
    not dropped (its sign and digits stay guards, which the runs' two values make a branch on)."""
    from skillforge._probes import dropped, ranges
    from skillforge._trajectory import Probe

    fact = "('sign', ('fines',))"
    nothing = _run({"id": "M-1", "fines": 0.0}).model_copy(update={"probes": tuple(
        Probe(step=0, fact=fact, verdict="different", was=0.0, to=x) for x in (10.0, 5.0, 2.5, -1.0))})
    paid = _run({"id": "M-2", "fines": 4.5}).model_copy(update={"probes": (
        Probe(step=0, fact=fact, verdict="same", was=4.5, to=45.0), Probe(step=0, fact=fact, verdict="same", was=4.5, to=0.45),
        Probe(step=0, fact=fact, verdict="different", was=4.5, to=0.0))})
    assert dropped([nothing, paid]) == frozenset() and ranges([nothing, paid]) == {}
    assert ranges([paid]) == {(0, fact): (0.45, 45.0)} and ranges([nothing]) == {(0, fact): (0.0, 0.0)}  # each alone
