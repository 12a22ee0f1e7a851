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
from skillforge._template import TaskTemplate
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
