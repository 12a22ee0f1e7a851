"""Phrasings that take more parameters: the same request said with more in it (``_variants``).

"Please add ivy.chen to payroll-admins." and "Hi, this is maria.lopez. Please add ivy.chen to
payroll-admins, thanks!" are one request; the second names who asks, and on a restricted group the
agent reads that account and grants the group if the requester is the user's manager or the group's
owner. One file serves both: the skill's function, and a second function for tasks said with the
requester, learned from those runs alone and called when the task gave one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillforge._codegen import render_skill
from skillforge._compile import prove_all
from skillforge._learning import spec_from_runs
from skillforge._library import Library
from skillforge._policy import check_policy
from skillforge._lifting import Rejected, discover_template
from skillforge._template import TaskTemplate
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from tests.shadowing import Harness
from tests.toolsets import access

TOOLS = {
    "get_user": ToolRef(module="desk", qualname="get_user", read=True, params=("username",)),
    "get_group": ToolRef(module="desk", qualname="get_group", read=True, params=("group",)),
    "add_to_group": ToolRef(module="desk", qualname="add_to_group", params=("username", "group")),
}
PLAIN = "Please add {user} to {group}."
ASKED = "Hi, this is {requester}. Please add {user} to {group}, thanks!"


def add_run(user: str, group: str, *, manager: str, owner: str, restricted: bool = True, member: bool = False,
            requester: str | None = None) -> Trajectory:
    """The run the access agent makes (``tests.toolsets.access``), built by hand."""
    u = {"username": user, "department": "finance", "manager": manager, "groups": [group if member else "all-staff"]}
    task = (PLAIN if requester is None else ASKED).format(user=user, group=group, requester=requester)
    calls = [Call(tool="get_user", args={"username": user}, result=u)]
    if member:
        answer = f"{user} is already in {group}; no change made."
    else:
        calls.append(Call(tool="get_group", args={"group": group}, result={"name": group, "owner": owner, "restricted": restricted}))
        granted = not restricted
        if restricted and requester is not None:
            calls.append(Call(tool="get_user", args={"username": requester},
                              result={"username": requester, "department": "finance", "manager": "ceo", "groups": ["all-staff"]}))
            granted = requester in (manager, owner)
        if granted:
            calls.append(Call(tool="add_to_group", args={"username": user, "group": group},
                              result={"username": user, "group": group, "member": True}))
            answer = f"Added {user} to {group}." if not restricted else f"Added {user} to {group} (restricted; requested by {requester})."
        else:
            answer = (f"{group} is restricted: the request has to come from {user}'s manager ({manager}) "
                      f"or the group owner ({owner}). I haven't added {user}.")
    return Trajectory(task=task, calls=calls, outcome=Outcome(ok=True, output=answer), tools=TOOLS)


def template(run: Trajectory) -> TaskTemplate:
    t = discover_template(run)
    assert isinstance(t, TaskTemplate), t
    return t


PLAIN_RUNS = [
    add_run("ivy.chen", "wiki-editors", manager="maria.lopez", owner="ann.lee", restricted=False),
    add_run("raj.patel", "jira-users", manager="david.kim", owner="ann.lee", member=True),
    add_run("omar.haddad", "payroll-admins", manager="nora.quinn", owner="sec.team"),
]
ASKED_RUNS = [  # the manager asks (granted); a colleague asks (refused, after reading the colleague's account)
    add_run("kate.oneil", "payroll-admins", manager="ben.okafor", owner="sec.team", requester="ben.okafor"),
    add_run("leo.rossi", "payroll-admins", manager="emma.berg", owner="sec.team", requester="sam.lee"),
]


def learned() -> Any:
    plain, asked = template(PLAIN_RUNS[0]), template(ASKED_RUNS[0])
    return spec_from_runs([*PLAIN_RUNS, *ASKED_RUNS], name="add", template=plain, phrasings=(asked,)), plain, asked


def test_a_phrasing_of_more_parameters_is_a_variant_learned_from_its_own_runs() -> None:
    spec, plain, asked = learned()
    assert not isinstance(spec, Rejected), spec
    assert asked.text == "Hi, this is {username_2}. Please add {username} to {group}, thanks!"
    assert [v.name for v in spec.variants] == ["add_given_username_2"]
    assert set(spec.runs) == {r.hash for r in PLAIN_RUNS}  # each program rests on its own runs only
    assert set(spec.variants[0].runs) == {r.hash for r in ASKED_RUNS}
    source = render_skill(spec)
    assert "def add(username: str, group: str, phrasing: int = 0, username_2: str | None = None):" in source
    head = source.split("def add(", 1)[1]
    assert head.index("if username_2 is not None:") < head.index("get_user(")  # said with who asks: the variant
    assert "return add_given_username_2(username_2=username_2, username=username, group=group)" in source
    variant = source.split("def add_given_username_2(", 1)[1]
    assert "get_user(username=username_2)" in variant and "requested by" in variant
    assert "get_user(username=username_2)" not in head.split("def add_given_username_2(")[0]
    assert prove_all(source, spec, [*PLAIN_RUNS, *ASKED_RUNS]) is None  # every run replays, by whichever function


def test_the_variant_serves_only_worlds_its_own_runs_showed() -> None:
    spec, _plain, _asked = learned()
    source = render_skill(spec)
    again = [add_run("ali.khan", "payroll-admins", manager="yuki.tanaka", owner="sec.team", requester="yuki.tanaka"),
             add_run("sam.ortiz", "payroll-admins", manager="paul.novak", owner="sec.team")]
    assert prove_all(source, spec, again) is None
    # the owner asks: no run of the variant saw the requester own the group
    owner_asks = add_run("zoe.fischer", "payroll-admins", manager="jon.silva", owner="mia.wong", requester="mia.wong")
    assert prove_all(source, spec, [owner_asks]) is not None
    # said without a requester, a restricted group is refused as the plain runs showed, never granted
    assert prove_all(source, spec, [add_run("lena.schmidt", "payroll-admins", manager="grace.ito", owner="sec.team")]) is None


def test_a_skill_file_with_a_variant_reads_back_and_binds_each_phrasing(tmp_path: Path) -> None:
    spec, _plain, _asked = learned()
    (tmp_path / "add.py").write_text(render_skill(spec))
    good, bad = Library(tmp_path).scan()
    assert not bad and [s.name for s in good] == ["add"]
    skill = good[0]
    assert len(skill.phrasings) == 2 and set(skill.runs) == {r.hash for r in [*PLAIN_RUNS, *ASKED_RUNS]}
    bound = skill.bind("Hi, this is bo.ng. Please add cy.ito to hr-files, thanks!")
    assert bound is not None and bound[1] == {"username_2": "bo.ng", "username": "cy.ito", "group": "hr-files", "phrasing": 1}
    assert skill.bind("Please add cy.ito to hr-files.")[1] == {"username": "cy.ito", "group": "hr-files", "phrasing": 0}
    # a function that does not take what the variant's phrasing binds is refused, with how to fix it
    source = render_skill(spec).replace(", username_2: str | None = None):", "):")
    (tmp_path / "add.py").write_text(source)
    good, bad = Library(tmp_path).scan()
    assert not good and "does not take username_2" in str(bad[0])


def test_a_phrasing_of_more_parameters_without_runs_of_its_own_is_no_skill() -> None:
    plain, asked = template(PLAIN_RUNS[0]), template(ASKED_RUNS[0])
    found = spec_from_runs(PLAIN_RUNS, name="add", template=plain, phrasings=(asked,))
    assert isinstance(found, Rejected) and "runs of its own" in found.reason


def test_a_phrasing_of_fewer_parameters_is_not_a_variant() -> None:
    plain, asked = template(PLAIN_RUNS[0]), template(ASKED_RUNS[0])
    found = spec_from_runs([*ASKED_RUNS, *PLAIN_RUNS], name="add", template=asked, phrasings=(plain,))
    assert isinstance(found, Rejected) and "other parameters" in found.reason


@pytest.mark.parametrize("bad", ["a variant's runs that make no one program"])
def test_a_variant_whose_runs_make_no_skill_rejects_the_whole(bad: str) -> None:
    plain, asked = template(PLAIN_RUNS[0]), template(ASKED_RUNS[0])
    odd = add_run("kate.oneil", "payroll-admins", manager="ben.okafor", owner="sec.team", requester="ben.okafor")
    odd = Trajectory(task=odd.task, calls=odd.calls, outcome=Outcome(ok=True, output="Done, I think."), tools=TOOLS)
    found = spec_from_runs([*PLAIN_RUNS, ASKED_RUNS[0], odd], name="add", template=plain, phrasings=(asked,))
    assert isinstance(found, Rejected), bad


H = Harness(access)


def test_a_forge_learns_a_request_said_with_who_asks_into_the_skill_of_the_request(tmp_path: Path) -> None:
    """One file: the plain request's runs and the ones that name who asks; each served from its own runs."""
    forge = H.forge(tmp_path, access.agent_factory)
    w = access.world
    H.learn(forge, "Please add ivy.chen to wiki-editors.", w("ivy.chen", "maria.lopez", "wiki-editors", "ann.lee", restricted=False))
    H.learn(forge, "Please add omar.haddad to payroll-admins.", w("omar.haddad", "nora.quinn", "payroll-admins", "sec.team"),
            after_handover=True)
    asked = H.learn(forge, "Hi, this is ben.okafor. Please add kate.oneil to payroll-admins, thanks!",
                    w("kate.oneil", "ben.okafor", "payroll-admins", "sec.team", requester="ben.okafor"))
    assert asked.result.learned == "add", asked.describe()
    assert sorted(p.name for p in forge.skills_dir.glob("*.py") if p.name != "__init__.py") == ["add.py"]
    source = (forge.skills_dir / "add.py").read_text()
    assert "def add_given_username_2(username_2: str, username: str, group: str):" in source
    # the manager asks again: the variant serves it, reading who asks, as the agent would
    again = H.check(forge, "Hi, this is paul.novak. Please add sam.ortiz to payroll-admins, thanks!",
                    w("sam.ortiz", "paul.novak", "payroll-admins", "sec.team", requester="paul.novak"))
    assert again.result.source == "skill" and "requested by paul.novak" in again.result.output, again.describe()
    assert ("get_user", {"username": "paul.novak"}) in [(c.tool, c.args) for c in again.result.calls]
    # a colleague asks: no run showed that, so the agent answers (and refuses), never a replayed grant
    peer = H.check(forge, "Hi, this is ali.khan. Please add zoe.fischer to payroll-admins, thanks!",
                   w("zoe.fischer", "jon.silva", "payroll-admins", "sec.team", requester="ali.khan"))
    assert peer.result.source != "skill" and "I haven't added" in peer.result.output, peer.describe()
    # said without who asks, a restricted group is still refused by the skill's own program
    plain = H.check(forge, "Please add lena.schmidt to payroll-admins.", w("lena.schmidt", "grace.ito", "payroll-admins", "sec.team"))
    assert plain.result.source == "skill" and "I haven't added" in plain.result.output, plain.describe()
    assert sorted(p.name for p in forge.skills_dir.glob("*.py") if p.name != "__init__.py") == ["add.py"]


def test_the_policy_admits_a_skill_s_variants_and_nothing_else_beside_it() -> None:
    spec, _plain, _asked = learned()
    source = render_skill(spec)
    tools = {"desk": {"get_user", "get_group", "add_to_group"}}
    assert check_policy(source, "add", tools) == []
    # a variant calling back into the skill (recursion), or a function of another name, is refused
    looped = source.replace("    user_2 = get_user(username=username_2)\n", "    user_2 = add(username=username_2, group=group)\n", 1)
    assert any(v.rule == "call" for v in check_policy(looped, "add", tools))
    renamed = source.replace("def add_given_username_2(", "def helper(").replace("return add_given_username_2(", "return helper(")
    assert any(v.rule == "function" for v in check_policy(renamed, "add", tools))
    # a parameter only some phrasings give may be None; other annotations stay refused
    odd = source.replace("username_2: str | None = None", "username_2: list | None = None")
    assert any(v.rule == "annotation" for v in check_policy(odd, "add", tools))


def test_a_request_whose_more_is_written_is_not_a_variant(tmp_path: Path) -> None:
    """"Please add X to G until D." says more, and the date goes into the write: what it does differs, so
    it is a request of its own (a file of its own), not a variant of "Please add X to G."."""
    forge = H.forge(tmp_path, access.agent_factory)
    w = access.world
    H.learn(forge, "Please add ivy.chen to wiki-editors.", w("ivy.chen", "maria.lopez", "wiki-editors", "ann.lee", restricted=False))
    until = H.learn(forge, "Please add raj.patel to jira-users until 2026-12-31.",
                    w("raj.patel", "david.kim", "jira-users", "ann.lee", restricted=False))
    assert until.result.learned != "add"
    assert sorted(p.name for p in forge.skills_dir.glob("*.py") if p.name != "__init__.py") == ["add.py", f"{until.result.learned}.py"]
    assert "_given_" not in (forge.skills_dir / "add.py").read_text()


def test_golden_a_skill_with_a_variant(request: pytest.FixtureRequest) -> None:
    """The file of a skill and its variant, byte for byte (``pytest tests/test_variants.py --update-golden``)."""
    spec, _plain, _asked = learned()
    source = render_skill(spec)
    path = Path(__file__).parent / "golden" / "variant_phrasing" / "skill.py"  # no run.json: not a one-run case
    if request.config.getoption("--update-golden") or not path.exists():
        path.write_text(source)
        if not request.config.getoption("--update-golden"):
            pytest.fail(f"wrote missing golden {path}; review and commit it")
    assert source == path.read_text(), "generated code of a skill with a variant changed; if intended, run with --update-golden"
    assert render_skill(learned()[0]) == source  # the same runs give the same bytes


def test_explain_names_the_line_of_the_variant_a_guard_stopped_at(tmp_path: Path) -> None:
    forge = H.forge(tmp_path, access.agent_factory)
    w = access.world
    H.learn(forge, "Please add ivy.chen to wiki-editors.", w("ivy.chen", "maria.lopez", "wiki-editors", "ann.lee", restricted=False))
    H.learn(forge, "Hi, this is ben.okafor. Please add kate.oneil to payroll-admins, thanks!",
            w("kate.oneil", "ben.okafor", "payroll-admins", "sec.team", requester="ben.okafor"))
    access.load(w("zoe.fischer", "jon.silva", "payroll-admins", "mia.wong", requester="mia.wong"))  # the owner asks: unseen
    text = str(forge.explain("Hi, this is mia.wong. Please add zoe.fischer to payroll-admins, thanks!", run=True))
    source = (forge.skills_dir / "add.py").read_text().splitlines()
    line = int(text.split("stopped by a guard (line ", 1)[1].split(")", 1)[0])
    start = next(i for i, s in enumerate(source, 1) if s.startswith("def add_given_username_2("))
    assert line > start and source[line - 1].strip().startswith("require("), text


@pytest.mark.parametrize("order", ["refused_first", "asked_first"])
def test_one_file_whatever_the_order_the_runs_came_in(tmp_path: Path, order: str) -> None:
    """Asked with who asks before the plain request was ever seen, or refused (no write) the first time:
    the request said with more still ends up the skill's variant, in one file."""
    forge = H.forge(tmp_path, access.agent_factory)
    w = access.world
    plain = ("Please add ivy.chen to wiki-editors.", w("ivy.chen", "maria.lopez", "wiki-editors", "ann.lee", restricted=False))
    refused = ("Hi, this is sam.lee. Please add leo.rossi to payroll-admins, thanks!",
               w("leo.rossi", "emma.berg", "payroll-admins", "sec.team", requester="sam.lee"))
    granted = ("Hi, this is ben.okafor. Please add kate.oneil to payroll-admins, thanks!",
               w("kate.oneil", "ben.okafor", "payroll-admins", "sec.team", requester="ben.okafor"))
    steps = [plain, refused, granted] if order == "refused_first" else [granted, plain]
    for task, world in steps:
        sh = H.check(forge, task, world)
        assert sh.result.learned, sh.describe() + str(sh.result.not_learned)
    files = sorted(p.name for p in forge.skills_dir.glob("*.py") if p.name != "__init__.py")
    assert len(files) == 1, files
    source = (forge.skills_dir / files[0]).read_text()
    assert "_given_username_2(" in source and "Please add {username} to {group}." in source
    again = H.check(forge, "Hi, this is paul.novak. Please add sam.ortiz to payroll-admins, thanks!",
                    w("sam.ortiz", "paul.novak", "payroll-admins", "sec.team", requester="paul.novak"))
    assert again.result.source == "skill", again.describe()


def test_more_to_tell_is_another_request_not_a_variant() -> None:
    """Who asks decides (same_request); an answer that tells what was read with what only the variant
    takes (the requester's department) says more than the request asked: another request."""
    from skillforge._variants import same_request

    spec, plain, asked = learned()
    assert same_request(spec, spec.variants[0])
    told = add_run("kate.oneil", "payroll-admins", manager="ben.okafor", owner="sec.team", requester="ben.okafor")
    calls = [c if c.args != {"username": "ben.okafor"} else Call(tool="get_user", args=c.args, result={**c.result, "department": "legal"})
             for c in told.calls]
    told = Trajectory(task=told.task, calls=calls, tools=TOOLS,
                      outcome=Outcome(ok=True, output="Added kate.oneil to payroll-admins (restricted; requested by legal)."))
    other = spec_from_runs([*PLAIN_RUNS, told], name="add", template=plain, phrasings=(asked,))
    assert not isinstance(other, Rejected) and other.variants
    assert not same_request(other, other.variants[0])


def test_a_value_said_only_to_be_checked_is_not_a_variant() -> None:
    """What only a variant takes must be looked up (who asks is read): a value the runs only saw equal
    to something the skill reads anyway (a customer's name beside their email) is the skill's text, and
    a variant of it would keep templates apart that should be one (tau-bench's personas)."""
    from dataclasses import replace

    from skillforge._spec import Param
    from skillforge._values import walk_exprs
    from skillforge._variants import reads_more, same_request

    spec, _plain, _asked = learned()
    variant = spec.variants[0]
    assert reads_more(variant, ["username_2"]) and same_request(spec, variant)
    unread = replace(variant, early=(), steps=tuple(
        st for st in variant.steps if not any(isinstance(e, Param) and e.name == "username_2" for _k, a in st.args for e in walk_exprs(a))))
    assert [st.tool for st in unread.steps] == ["get_user", "get_group", "add_to_group"]
    assert not reads_more(unread, ["username_2"]) and not same_request(spec, unread)
