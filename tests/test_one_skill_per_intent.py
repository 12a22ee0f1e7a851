"""One skill per intent, on runs alone: runs of one template that a skill must hold together.

Each case here was a second file for one intent on a helpdesk-like stream: a value that
happened to equal another source in one run of a branched skill, a refusal beside another
early answer after the same reads, a branch told apart only by two facts together, and a
request the agent did in more or fewer writes depending on the world (a fork).
"""

from __future__ import annotations

from typing import Any

from skillforge._codegen import render_skill
from skillforge._compile import prove_all
from skillforge._learning import spec_from_runs
from skillforge._lifting import Rejected, discover_template
from skillforge._template import Slot, TaskTemplate
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory

TOOLS = {
    "get_user": ToolRef(module="desk", qualname="get_user", read=True, params=("username",)),
    "get_group": ToolRef(module="desk", qualname="get_group", read=True, params=("group",)),
    "add_to_group": ToolRef(module="desk", qualname="add_to_group", params=("username", "group")),
}


def learned(runs: list[Trajectory], name: str = "skill") -> Any:
    template = discover_template(runs[0])
    assert isinstance(template, TaskTemplate)
    return spec_from_runs(runs, name=name, template=template)


def add_run(username: str, group: str, groups: list[str], owner: str = "hal.ng") -> Trajectory:
    """Add a user to a group: a member already is told so after one read; anyone else is added."""
    user = {"username": username, "groups": groups, "status": "active"}
    calls = [Call(tool="get_user", args={"username": username}, result=user)]
    if group in groups:
        output = f"{username} is already in {group}."
    else:
        calls.append(Call(tool="get_group", args={"group": group}, result={"name": group, "owner": owner}))
        calls.append(Call(tool="add_to_group", args={"username": username, "group": group}, result={"member": True}))
        output = f"Added {username} to {group}."
    return Trajectory(task=f"Add {username} to {group}", calls=calls, outcome=Outcome(ok=True, output=output), tools=TOOLS)


def test_a_value_that_equalled_another_source_in_one_run_settles_where_the_other_runs_made_that_call() -> None:
    # the owner of the group asks to be added: the write's username is the task's and the group's owner alike;
    # the runs that wrote say it is the task's. The member already (one read) has no such call: it has no say
    runs = [add_run("ana.ruiz", "vpn-users", ["staff"]), add_run("bo.chen", "vpn-users", ["vpn-users"]),
            add_run("hal.ng", "jira-users", ["staff"], owner="hal.ng")]
    spec = learned(runs)
    assert not isinstance(spec, Rejected), spec
    assert len(spec.early) == 1 and len(spec.runs) == 3
    source = render_skill(spec)
    assert "add_to_group(username=username, group=group)" in source
    assert prove_all(source, spec, runs) is None
    assert prove_all(source, spec, [add_run("cy.diaz", "wiki-editors", ["staff"], owner="eve.gray")]) is None


UNLOCK_TOOLS = {
    "get_user": TOOLS["get_user"],
    "unlock_account": ToolRef(module="desk", qualname="unlock_account", params=("username",)),
}


def unlock_run(username: str, locked: bool, status: str = "active") -> Trajectory:
    """Unlock an account: a disabled one is refused, one not locked is told so, after the same read."""
    user = {"username": username, "locked": locked, "status": status}
    calls = [Call(tool="get_user", args={"username": username}, result=user)]
    if status != "active":
        output = f"{username}'s account is {status}, so I haven't changed it."
    elif not locked:
        output = f"{username}'s account isn't locked."
    else:
        calls.append(Call(tool="unlock_account", args={"username": username}, result={"locked": False}))
        output = f"Unlocked {username}'s account."
    return Trajectory(task=f"unlock {username} pls", calls=calls, outcome=Outcome(ok=True, output=output), tools=UNLOCK_TOOLS)


def test_two_answers_after_the_same_reads_beside_a_write_are_two_branches_of_one_skill() -> None:
    runs = [unlock_run("ana.ruiz", True), unlock_run("bo.chen", False), unlock_run("cy.diaz", True, "disabled"),
            unlock_run("dee.fox", True)]
    spec = learned(runs)
    assert not isinstance(spec, Rejected), spec
    assert len(spec.early) == 2 and len(spec.runs) == 4
    source = render_skill(spec)
    assert prove_all(source, spec, runs) is None
    again = [unlock_run("eve.gray", True), unlock_run("fay.hill", False), unlock_run("gus.ito", True, "disabled")]
    assert prove_all(source, spec, again) is None
    # each branch keeps its runs' facts: a disabled account that is not locked was never seen
    assert prove_all(source, spec, [unlock_run("hal.ng", False, "disabled")]) is not None
    # an answer no fact of the reads tells from another stays apart
    twin = unlock_run("ivy.lee", False).model_copy(update={"outcome": Outcome(ok=True, output="Ask HR.")})
    assert isinstance(learned([*runs, twin]), Rejected)


RESET_TOOLS = {
    "get_user": TOOLS["get_user"],
    "reset_password": ToolRef(module="desk", qualname="reset_password", params=("username",)),
    "unlock_account": ToolRef(module="desk", qualname="unlock_account", params=("username",)),
}
RESET_SAID = ["Please reset the password for {}.", "Don't unlock anything, just reset {}'s password."]


def reset_run(username: str, locked: bool, said: int = 0) -> Trajectory:
    """Reset a password; a locked account is unlocked too, unless the task said not to."""
    user = {"username": username, "locked": locked, "manager": "hal.ng"}
    calls = [Call(tool="get_user", args={"username": username}, result=user),
             Call(tool="reset_password", args={"username": username}, result={"sent_to": "hal.ng"})]
    output = f"Reset {username}'s password; it went to hal.ng."
    if locked and said == 0:
        calls.append(Call(tool="unlock_account", args={"username": username}, result={"locked": False}))
        output = f"Reset {username}'s password and unlocked the account; it went to hal.ng."
    return Trajectory(task=RESET_SAID[said].format(username), calls=calls, outcome=Outcome(ok=True, output=output),
                      tools=RESET_TOOLS)


def learned_said(runs: list[Trajectory]) -> Any:
    """Learned under each phrasing the runs' tasks were said in (the first run of each says which)."""
    templates: list[TaskTemplate] = []
    for run in runs:
        template = discover_template(run)
        assert isinstance(template, TaskTemplate)
        if all(t.text != template.text for t in templates):
            templates.append(template)
    return spec_from_runs(runs, name="reset", template=templates[0], phrasings=tuple(templates[1:]))


def test_a_request_done_with_one_more_write_in_some_worlds_is_one_skill_with_a_fork() -> None:
    # reset, and unlock too where the account was locked, unless the words said not to: two facts tell the ways apart
    runs = [reset_run("ana.ruiz", False), reset_run("bo.chen", True), reset_run("cy.diaz", True, said=1),
            reset_run("dee.fox", False)]
    spec = learned_said(runs)
    assert not isinstance(spec, Rejected), spec
    assert len(spec.early) == 1 and spec.early[0].after == 0 and [s.tool for s in spec.early[0].steps] == ["reset_password"]
    source = render_skill(spec)
    body = source.split("def reset", 1)[1]
    # the fork is decided on what was read, before any write; each way writes under its own guards
    assert body.index("if (user['locked'], phrasing) in ((False, 0), (True, 1)):") < body.index("reset_password(")
    assert prove_all(source, spec, runs) is None
    again = [reset_run("eve.gray", True), reset_run("fay.hill", False), reset_run("gus.ito", True, said=1)]
    assert prove_all(source, spec, again) is None
    # a combination no run showed (not locked, said the second way) is a miss, not a guess
    assert prove_all(source, spec, [reset_run("hal.ng", False, said=1)]) is not None


UNLOCK_RESET = "Please unlock {} and reset the password."


def unlock_reset_run(username: str, locked: bool) -> Trajectory:
    """Unlock and reset: an account that is not locked is only reset (the calls part ways after the read)."""
    user = {"username": username, "locked": locked, "manager": "hal.ng"}
    calls = [Call(tool="get_user", args={"username": username}, result=user)]
    said = []
    if locked:
        calls.append(Call(tool="unlock_account", args={"username": username}, result={"locked": False}))
        said.append(f"Unlocked {username}'s account.")
    else:
        said.append(f"{username}'s account isn't locked.")
    calls.append(Call(tool="reset_password", args={"username": username}, result={"sent_to": "hal.ng"}))
    said.append(f"Reset {username}'s password.")
    return Trajectory(task=UNLOCK_RESET.format(username), calls=calls, outcome=Outcome(ok=True, output=" ".join(said)),
                      tools=RESET_TOOLS)


def test_calls_that_part_ways_after_the_same_reads_are_one_skill_branching_there() -> None:
    runs = [unlock_reset_run("ana.ruiz", True), unlock_reset_run("bo.chen", False), unlock_reset_run("cy.diaz", True)]
    spec = learned(runs, name="unlock_reset")
    assert not isinstance(spec, Rejected), spec
    assert len(spec.early) == 1 and [s.tool for s in spec.early[0].steps] == ["reset_password"]
    source = render_skill(spec)
    assert prove_all(source, spec, runs) is None
    assert prove_all(source, spec, [unlock_reset_run("dee.fox", False), unlock_reset_run("eve.gray", True)]) is None


def test_ways_no_fact_of_the_first_reads_tells_apart_stay_apart() -> None:
    # the same world (not locked), reset alone once and with an unlock once: no read says which
    runs = [reset_run("ana.ruiz", False), reset_run("bo.chen", True)]
    odd = reset_run("cy.diaz", False).model_copy(update={"calls": [*reset_run("cy.diaz", False).calls,
                                                                   Call(tool="unlock_account", args={"username": "cy.diaz"}, result={})]})
    odd = odd.model_copy(update={"outcome": Outcome(ok=True, output="Reset cy.diaz's password and unlocked the account; it went to hal.ng.")})
    assert isinstance(learned_said([*runs, odd]), Rejected)
    # nor by a fact of many values by nature paired with another: the lock and the title together would
    # tell these apart, each alone would not; a title is no reason to unlock
    def titled(run: Trajectory, title: str, unlock: bool) -> Trajectory:
        first = run.calls[0].model_copy(update={"result": {**run.calls[0].result, "title": title}})
        name = run.calls[0].args["username"]
        extra = [Call(tool="unlock_account", args={"username": name}, result={})] if unlock else []
        output = f"Reset {name}'s password{' and unlocked the account' if unlock else ''}; it went to hal.ng."
        return run.model_copy(update={"calls": [first, run.calls[1], *extra], "outcome": Outcome(ok=True, output=output)})

    crossed = [titled(reset_run("ana.ruiz", False), "Intern", False), titled(reset_run("bo.chen", True), "SRE", False),
               titled(reset_run("cy.diaz", False), "SRE", True), titled(reset_run("dee.fox", True), "Intern", True)]
    assert isinstance(learned_said(crossed), Rejected)


MFA_TOOLS = {
    "get_user": TOOLS["get_user"],
    "enable_mfa": ToolRef(module="desk", qualname="enable_mfa", params=("username",)),
}


def mfa_run(task: str, username: str) -> Trajectory:
    calls = [Call(tool="get_user", args={"username": username}, result={"username": username, "mfa": False}),
             Call(tool="enable_mfa", args={"username": username}, result={"mfa": True})]
    return Trajectory(task=task.format(username), calls=calls, outcome=Outcome(ok=True, output=f"Enabled MFA for {username}."),
                      tools=MFA_TOOLS)


def test_words_only_the_answer_quotes_stay_literal_so_other_wordings_of_the_request_are_one_skill() -> None:
    # "MFA" is in the task and the answer alike: one run cannot say it varies, so it is no parameter
    said = mfa_run("Please enable MFA for {}.", "ana.ruiz")
    other = mfa_run("Turn on two-factor for {}.", "bo.chen")
    first, second = discover_template(said), discover_template(other)
    assert isinstance(first, TaskTemplate) and isinstance(second, TaskTemplate)
    assert first.text == "Please enable MFA for {username}." and [s.name for s in first.params] == ["username"]
    spec = spec_from_runs([said, other], name="enable", template=first, phrasings=(second,))
    assert not isinstance(spec, Rejected), spec
    assert prove_all(render_skill(spec), spec, [mfa_run("Please enable MFA for {}.", "cy.diaz")]) is None
    # the template binds the words it was asked in, not any other factor the answer would then misname
    assert first.bind("Please enable SSO for cy.diaz.") is None
    # a word a record's field holds too: the answer quotes the record, the task's word stays literal
    ticket = Trajectory(task="Is T-12 still open?", calls=[Call(tool="get_user", args={"username": "T-12"}, result={"status": "open"})],
                        outcome=Outcome(ok=True, output="T-12 is open."), tools=MFA_TOOLS)
    template = discover_template(ticket)
    assert isinstance(template, TaskTemplate) and template.text == "Is {username} still open?"
    # a word only an element of a list holds stays a parameter: no one run says which element the answer quoted
    listed = ticket.model_copy(update={"calls": [ticket.calls[0].model_copy(update={"result": {"history": [{"status": "open"}]}})]})
    template = discover_template(listed)
    assert isinstance(template, TaskTemplate) and len(template.params) == 2
    # a word a collection holds as a key stays a parameter: whether it is there was what the run decided on
    member = Trajectory(task="Add ana.ruiz to the vpn-users group",
                        calls=[Call(tool="get_user", args={"username": "ana.ruiz"},
                                    result={"groups": {"staff": {"since": "2023"}, "vpn-users": {"since": "2024"}}})],
                        outcome=Outcome(ok=True, output="ana.ruiz is already in vpn-users."), tools=MFA_TOOLS)
    template = discover_template(member)
    assert isinstance(template, TaskTemplate) and template.text == "Add {username} to the {group} group"
    # a number only the answer quotes stays a parameter (a constant tied to it is what the run checks catch)
    counted = Trajectory(task="Give ana.ruiz 3 seats", calls=[Call(tool="enable_mfa", args={"username": "ana.ruiz"}, result={})],
                         outcome=Outcome(ok=True, output="Gave ana.ruiz 3 seats."), tools=MFA_TOOLS)
    template = discover_template(counted)
    assert isinstance(template, TaskTemplate) and len(template.params) == 2


def test_the_helpdesk_stream_learns_one_file_per_intent_for_its_forks(tmp_path: Any) -> None:
    """Forge-level: the unlock, password and MFA requests of the helpdesk stream, through solve() and
    shadowed by the agent alone: no wrong replay, and one skill file per (kind, identification route)."""
    from types import SimpleNamespace

    from bench import shadow
    from bench.workloads import helpdesk

    kinds = {"unlock", "reset_password", "mfa"}
    stream = [t for t in helpdesk.tasks() if t.kind in kinds]
    workload = SimpleNamespace(**{k: getattr(helpdesk, k) for k in (
        "TOOLS", "READS", "TOOLBOX", "make_world", "use_world", "snapshot", "agent")}, tasks=lambda: stream)
    report = shadow.run(workload, workdir=tmp_path)  # type: ignore[arg-type]
    assert report.wrong_replays == [] and report.crashes == [] and report.agent_mismatches == []
    assert report.served + report.handed_over > 0
    many = {key: names for key, names in report.files_by_route.items() if len(names) > 1}
    assert many == {}, many
    assert {kind for kind, _route in report.files_by_route} == kinds


def test_a_mark_seen_only_inside_a_token_of_free_text_never_ends_a_word_of_it() -> None:
    from skillforge._template import shape_of, union_shape

    shape = shape_of("firmware updated to v2.3", "text")
    assert shape == "words:3-5:~."
    note = TaskTemplate("Please close {ticket_id}, note: {note}",
                        [Slot("ticket_id", "id", "str", shape="`INC`-9"), Slot("note", "text", "str", shape=shape)])
    assert note.bind("Please close INC-4801, note: firmware updated to v3.1") is not None
    # a sentence's full stop after the note is not part of it (the close writes the note without it)
    assert note.bind("Please close INC-4806, note: duplicate of INC-4807.") == {"ticket_id": "INC-4806", "note": "duplicate of INC-4807"}
    assert note.bind("Please close INC-4806, note: see INC-4807. Then reopen it") is None
    # a mark a learned text ended a word with still may; one seen inside a token stays so when merged
    assert union_shape(shape, "words:2-4:,") == "words:2-5:,~." and union_shape("words:2-4:.", shape) == "words:2-5:."


def restricted_run(username: str, group: str, requester: str, manager: str, owner: str, locked: bool = False) -> Trajectory:
    """Add to a restricted group: only the user's manager or the group's owner may ask."""
    calls = [Call(tool="get_user", args={"username": username}, result={"username": username, "manager": manager, "locked": locked}),
             Call(tool="get_group", args={"group": group}, result={"name": group, "owner": owner, "restricted": True}),
             Call(tool="get_user", args={"username": requester}, result={"username": requester, "manager": "zed.boss", "locked": False})]
    if requester in (manager, owner):
        calls.append(Call(tool="add_to_group", args={"username": username, "group": group}, result={"member": True}))
        output = f"Added {username} to {group} (requested by {requester})."
    else:
        output = f"{group} is restricted: ask {manager} or {owner}. I haven't added {username}."
    return Trajectory(task=f"Hi, this is {requester}. Please add {username} to {group}, thanks!", calls=calls,
                      outcome=Outcome(ok=True, output=output), tools=TOOLS)


def test_two_relations_of_the_task_values_are_the_branch_before_a_fact_that_happened_to_differ() -> None:
    # the manager asks, the owner asks, both are one: added. A colleague asks: refused, and that one user was locked
    runs = [restricted_run("ivy.chen", "pay-admins", "mia.lopez", "mia.lopez", "mia.lopez"),
            restricted_run("yuki.ito", "prod-db", "ben.ok", "ben.ok", "dan.kim"),
            restricted_run("raj.patel", "prod-db", "dan.kim", "ben.ok", "dan.kim"),
            restricted_run("pia.nair", "pay-admins", "kat.oneil", "mia.lopez", "mia.lopez", locked=True)]
    spec = learned(runs)
    assert not isinstance(spec, Rejected), spec
    source = render_skill(spec)
    # neither relation alone tells the refusal apart (the manager asked where the owner did not, and so on)
    assert "if (user['manager'] == username_2, group_2['owner'] == username_2) in ((False, False),):" in source
    assert prove_all(source, spec, runs) is None
    again = [restricted_run("ann.lee", "prod-db", "ben.ok", "ben.ok", "dan.kim"),
             restricted_run("bob.ray", "pay-admins", "kat.oneil", "mia.lopez", "mia.lopez", locked=True)]
    assert prove_all(source, spec, again) is None


def test_of_pairs_that_tell_a_fork_apart_the_words_said_come_before_a_flag_that_happened_to_differ() -> None:
    def with_devices(run: Trajectory, devices: bool) -> Trajectory:
        first = run.calls[0].model_copy(update={"result": {**run.calls[0].result, "devices": ["LT-1"] if devices else []}})
        return run.model_copy(update={"calls": [first, *run.calls[1:]]})

    # reset only: not locked, or said not to unlock; reset and unlock: the one locked account had no devices
    runs = [with_devices(reset_run("ana.ruiz", False), False), with_devices(reset_run("bo.chen", False), True),
            with_devices(reset_run("cy.diaz", True, said=1), True), with_devices(reset_run("dee.fox", True), False)]
    spec = learned_said(runs)
    assert not isinstance(spec, Rejected), spec
    source = render_skill(spec)
    assert "if (user['locked'], phrasing) in ((False, 0), (True, 1)):" in source
    assert prove_all(source, spec, runs) is None
