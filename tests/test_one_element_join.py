"""The only element of a list, quoted in an answer, is the whole list listed (issue #10).

"ali.khan is in: github-org." from a user with one group is ``join(user['groups'], ...)``, the
program runs of users with several groups ("bo.chen is in: staff, vpn-users, wiki.") have, not
``user['groups'][0]``: so the runs are one program and merge. One element does not show how two
or more are separated: alone, such a run serves one-element lists only (a longer one is a miss,
never a guess at the separator); with a run that listed more, it serves what that run showed.
"""

from __future__ import annotations

from typing import Any

from skillforge._codegen import render_skill
from skillforge._compile import prove_all
from skillforge._learning import same_program, spec_from_runs
from skillforge._lifting import Rejected, discover_template, lift
from skillforge._spec import Join
from skillforge._template import TaskTemplate
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from skillforge._values import walk_exprs
from skillforge.runtime import join

TOOLS = {"get_user": ToolRef(module="desk", qualname="get_user", read=True, params=("username",))}
ASKED = "Which groups is {} in?"
SAID_OTHERWISE = "{} needs a laptop. Actually, never mind, just tell me which groups he is in."


def groups_run(username: str, groups: list[str], said: str = ASKED, sep: str = ", ") -> Trajectory:
    """The agent reads the user and lists the groups as they are, joined by ``sep``."""
    user = {"username": username, "groups": groups, "status": "active"}
    return Trajectory(task=said.format(username), calls=[Call(tool="get_user", args={"username": username}, result=user)],
                      outcome=Outcome(ok=True, output=f"{username} is in: {sep.join(groups)}."), tools=TOOLS)


def learned(runs: list[Trajectory]) -> Any:
    template = discover_template(runs[0])
    assert isinstance(template, TaskTemplate)
    return spec_from_runs(runs, name="skill", template=template)


def served(spec: Any, n: int, sep: str = ", ") -> str | None:
    """None if the skill gives the agent's answer for a user with ``n`` groups; else why not."""
    why = prove_all(render_skill(spec), spec, [groups_run("eve.gray", ["kilo", "lima", "mike", "oscar"][:n], sep=sep)])
    return None if why is None else why.reason


def joins(spec: Any) -> list[Join]:
    return [e for e in walk_exprs(spec.output) if isinstance(e, Join)]


def test_the_only_element_quoted_is_the_list_joined_and_serves_one_element_lists_only() -> None:
    spec = learned([groups_run("ali.khan", ["github-org"])])
    assert not isinstance(spec, Rejected), spec
    [listed] = joins(spec)
    assert listed.sep is None  # the run showed no separator
    source = render_skill(spec)
    assert "join(user['groups'], None)" in source and "user['groups'][0]" not in source
    assert "require(len(user['groups']) == 1," in source
    assert served(spec, 1) is None
    for n in (2, 3):  # a longer list is a miss (a guard), never an answer with a guessed separator
        why = served(spec, n)
        assert why is not None and "a guard fails" in why, why


def test_one_element_and_three_elements_are_one_program_that_serves_any_length() -> None:
    one, three = groups_run("ali.khan", ["github-org"]), groups_run("bo.chen", ["staff", "vpn-users", "wiki"])
    for runs in ([one, three], [three, one]):
        spec = learned(runs)
        assert not isinstance(spec, Rejected), spec
        assert spec.early == () and len(spec.runs) == 2  # merged, not two branches
        source = render_skill(spec)
        assert source.count("return ") == 1 and "join(user['groups'], ', ')" in source and "None" not in source.split("def skill")[1]
        assert prove_all(source, spec, runs) is None
        for n in (1, 2, 3, 4):
            assert served(spec, n) is None, (n, served(spec, n))
        why = served(spec, 3, sep="; ")  # another separator than the run showed: the agent's answer differs
        assert why is not None


def test_one_element_and_two_elements_serve_one_or_two_only() -> None:
    # two elements do not say how three are listed ("a, b and c"?): issue #9's rule stays
    spec = learned([groups_run("ali.khan", ["github-org"]), groups_run("bo.chen", ["staff", "vpn-users"])])
    assert not isinstance(spec, Rejected), spec
    assert spec.early == ()
    assert served(spec, 1) is None and served(spec, 2) is None
    for n in (3, 4):
        why = served(spec, n)
        assert why is not None and "a guard fails" in why, why


def flagged_run(username: str, groups: list[str], locked: bool) -> Trajectory:
    """A groups listing of a user whose account's ``locked`` flag the answer does not depend on."""
    run = groups_run(username, sorted(groups))
    user = {**run.calls[0].result, "locked": locked}
    return run.model_copy(update={"calls": [run.calls[0].model_copy(update={"result": user})]})


def serves(spec: Any, n: int, locked: bool) -> bool:
    groups = ["kilo", "lima", "mike", "oscar", "papa"][:n]
    return prove_all(render_skill(spec), spec, [flagged_run("eve.gray", groups, locked)]) is None


def test_runs_that_listed_three_or_more_leave_no_length_in_a_combination() -> None:
    # two listed ("a, b") guard their length until a run of the same program lists three; then any length of
    # two or more is listed alike, and a flag that varied combines with one element or several, never the length
    runs = [flagged_run("bo.chen", ["staff", "vpn-users", "wiki"], False), flagged_run("cy.diaz", ["jira", "staff"], True),
            flagged_run("dd.eng", ["jira", "staff", "wiki", "zoom"], True), flagged_run("ed.fox", ["jira", "wiki"], False)]
    spec = learned(runs)
    assert not isinstance(spec, Rejected), spec
    source = render_skill(spec)
    assert "len(user['groups']))" not in source and "== 2" not in source, source
    for n, locked in ((2, False), (3, False), (5, False), (2, True), (3, True), (5, True)):
        assert serves(spec, n, locked), (n, locked)
    assert not serves(spec, 1, False)  # one element was never listed by these runs: it may be said otherwise


def test_runs_that_listed_two_keep_the_length_in_a_combination() -> None:
    runs = [flagged_run("cy.diaz", ["jira", "staff"], True), flagged_run("ed.fox", ["jira", "wiki"], False)]
    spec = learned(runs)
    assert not isinstance(spec, Rejected), spec
    assert serves(spec, 2, True) and serves(spec, 2, False)
    assert not serves(spec, 3, True) and not serves(spec, 3, False)


def test_one_element_runs_alone_stay_one_element_lists() -> None:
    spec = learned([groups_run("ali.khan", ["github-org"]), groups_run("bo.chen", ["staff"])])
    assert not isinstance(spec, Rejected), spec
    assert [j.sep for j in joins(spec)] == [None]
    assert served(spec, 1) is None
    why = served(spec, 2)
    assert why is not None and "a guard fails" in why, why


def test_a_one_element_run_said_otherwise_is_the_same_program_as_a_listing_of_several() -> None:
    # what lets the run become one more phrasing of the skill that lists groups (one file per intent)
    one = lift(groups_run("ali.khan", ["github-org"], said=SAID_OTHERWISE))
    three = lift(groups_run("bo.chen", ["staff", "vpn-users", "wiki"]))
    assert not isinstance(one, Rejected) and not isinstance(three, Rejected)
    assert same_program(one, three) == {"username": "username"}
    assert same_program(three, one) == {"username": "username"}
    # listings of two separators are two programs; a listing of another list is another program
    semicolons = lift(groups_run("cy.diaz", ["jira", "staff", "wiki"], sep="; "))
    assert not isinstance(semicolons, Rejected) and same_program(three, semicolons) is None
    assert same_program(one, semicolons) == {"username": "username"}  # one element fits either
    roles = lift(groups_run("ali.khan", ["github-org"]).model_copy(update={"calls": [Call(
        tool="get_user", args={"username": "ali.khan"}, result={"username": "ali.khan", "roles": ["github-org"], "status": "active"})]}))
    assert not isinstance(roles, Rejected)
    assert same_program(roles, three) is None


def test_a_one_element_run_merges_as_a_phrasing_of_the_listing_skill() -> None:
    runs = [groups_run("bo.chen", ["staff", "vpn-users", "wiki"]), groups_run("cy.diaz", ["jira", "staff"]),
            groups_run("ali.khan", ["github-org"], said=SAID_OTHERWISE)]
    first, other = discover_template(runs[0]), discover_template(runs[2])
    assert isinstance(first, TaskTemplate) and isinstance(other, TaskTemplate)
    spec = spec_from_runs(runs, name="groups", template=first, phrasings=(other,))
    assert not isinstance(spec, Rejected), spec
    source = render_skill(spec)
    assert prove_all(source, spec, runs) is None
    assert "join(user['groups'], ', ')" in source and "None)" not in source


ORDER_TOOLS = {
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
    "get_stock": ToolRef(module="shop", qualname="get_stock", read=True, params=("sku",)),
    "send_replacement": ToolRef(module="shop", qualname="send_replacement", params=("order_id", "sku")),
}


def replacement_run(order_id: str, items: list[tuple[str, str]], *, send: bool = False) -> Trajectory:
    """The first item of an order is looked up (or sent again), and named: its element by position, not a listing."""
    order = {"id": order_id, "items": [{"sku": sku, "name": name} for sku, name in items]}
    calls = [Call(tool="get_order", args={"order_id": order_id}, result=order),
             Call(tool="send_replacement", args={"order_id": order_id, "sku": items[0][0]}, result={"sent": True}) if send
             else Call(tool="get_stock", args={"sku": items[0][0]}, result={"available": 3})]
    said = f"Sent a replacement {items[0][1]}" if send else f"A replacement {items[0][1]} is in stock"
    return Trajectory(task=f"Send a replacement for order #{order_id}", calls=calls, tools=ORDER_TOOLS,
                      outcome=Outcome(ok=True, output=f"{said} for order {order_id}."))


def test_a_one_element_list_quoted_after_a_write_is_its_element_as_read() -> None:
    # the write may have changed the list (a post added to the one the read returned): no listing of it
    spec = lift(replacement_run("1020", [("MUG-1", "mug")], send=True))
    assert not isinstance(spec, Rejected) and joins(spec) == []
    assert "{order['items'][0]['name']}" in render_skill(spec)


def test_where_the_other_runs_took_the_element_by_position_a_one_element_run_does_too() -> None:
    one = replacement_run("1020", [("MUG-1", "mug")])
    two = replacement_run("1024", [("BAG-3", "backpack"), ("MUG-1", "mug")])
    alone = lift(one)
    assert not isinstance(alone, Rejected) and [j.sep for j in joins(alone)] == [None]  # alone, a listing of one
    for runs in ([one, two], [two, one]):
        spec = learned(runs)
        assert not isinstance(spec, Rejected), spec
        assert joins(spec) == [] and spec.early == ()  # one program: the first item, by position
        source = render_skill(spec)
        assert "{order['items'][0]['name']}" in source
        assert prove_all(source, spec, runs) is None


def items_run(order_id: str, names: list[str]) -> Trajectory:
    """What is in an order: "1 item: mug" or "3 items: a, b, c" (two answers, one listing)."""
    order = {"id": order_id, "items": [{"name": n} for n in names]}
    noun = "item" if len(names) == 1 else "items"
    return Trajectory(task=f"What is in order #{order_id}?", calls=[Call(tool="get_order", args={"order_id": order_id}, result=order)],
                      outcome=Outcome(ok=True, output=f"Order {order_id} has {len(names)} {noun}: {', '.join(names)}."),
                      tools=ORDER_TOOLS)


def test_a_one_element_listing_said_in_other_words_stays_a_listing_a_branch_of_the_longer_ones() -> None:
    # "1 item: mug" is a count and a listing too (before, its "1" was unexplained: the run was not learned)
    runs = [items_run("1020", ["mug"]), items_run("1024", ["backpack", "kettle", "lamp"])]
    spec = learned(runs)
    assert not isinstance(spec, Rejected), spec
    source = render_skill(spec)
    assert "item: {join(order['items'], None, 'name')}" in source and "items: {join(order['items'], ', ', 'name')}" in source
    assert prove_all(source, spec, runs) is None
    assert prove_all(source, spec, [items_run("1030", ["pen"]), items_run("1031", ["cup", "pan"])]) is None


def test_the_runtime_join_without_a_separator_lists_one_element_only() -> None:
    assert join(["github-org"], None) == "github-org"
    import pytest

    from skillforge import GuardFailed

    with pytest.raises(GuardFailed, match="one element"):
        join(["staff", "wiki"], None)


def test_the_helpdesk_change_of_mind_asked_of_a_user_with_one_group_is_a_phrasing_of_the_listing_skill(tmp_path: Any) -> None:
    """Forge-level (issue #10): through solve() on the whole helpdesk stream, shadowed by the agent alone. "ali.khan
    needs a Dell Latitude 5440. Actually, never mind [...] which groups he is in." (one group) is a phrasing of the
    skill that lists the groups of users who changed their mind, not a file of its own; no wrong replay."""
    from bench import shadow
    from bench.workloads import helpdesk

    report = shadow.run(helpdesk, workdir=tmp_path)  # type: ignore[arg-type]
    assert report.wrong_replays == [] and report.crashes == [] and report.agent_mismatches == []
    device, changed = report.files_by_route[("device", "get_user")], report.files_by_route[("changed_mind", "get_user")]
    assert len(changed) == 1 and len(device) == 1 and changed != device, report.files_by_route  # one file each
    listing = (tmp_path / "skills" / f"{changed[0]}.py").read_text()
    assert "needs a Dell Latitude 5440. Actually, never mind" in listing
