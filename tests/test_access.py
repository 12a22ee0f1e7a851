"""Group access, shadowed by the agent alone from the same starting world (``tests/shadowing.py``).

An answer that quotes a value two results held: the skill checks that they still agree. The
agent's refusal names the user's manager and the group's owner. Learned where the two were
the same person, the answer's two mentions are one value, which either result may have given;
a world where they differ must not be served with the manager named twice. And runs that acted in
three ways (already a member; restricted; added) are one skill with two branches.
"""

from __future__ import annotations

from pathlib import Path

from tests.shadowing import Harness
from tests.toolsets import access

H = Harness(access)
PEOPLE = [("ivy.chen", "maria.lopez", "payroll-admins"), ("raj.patel", "david.kim", "prod-db"),
          ("omar.haddad", "nora.quinn", "hr-files"), ("kate.oneil", "ben.okafor", "legal-share"),
          ("leo.rossi", "emma.berg", "audit-logs"), ("sam.lee", "ana.ruiz", "treasury-desk")]


def test_a_refusal_learned_where_manager_and_owner_were_one_person_is_not_replayed_where_they_differ(tmp_path: Path) -> None:
    forge = H.forge(tmp_path, access.agent_factory)
    for user, manager, group in PEOPLE[:5]:  # the manager owns the group in every run seen
        H.check(forge, f"Please add {user} to {group}.", access.world(user, manager, group, manager))
    skills = sorted(p.name for p in forge.skills_dir.glob("*.py") if p.name != "__init__.py")
    assert len(skills) == 1, skills  # learned from the first, served the next four
    source = (forge.skills_dir / skills[0]).read_text()
    assert "user['manager'] == group_2['owner']" in source or "group_2['owner'] == user['manager']" in source, source

    user, manager, group = PEOPLE[5]
    same = H.check(forge, f"Please add {user} to {group}.", access.world(user, manager, group, manager))
    assert same.result.source == "skill"  # where they agree, the skill serves it
    other = H.check(forge, f"Please add {user} to {group}.", access.world(user, manager, group, "tom.baker"))
    assert other.result.source != "skill"  # where they differ, the agent answers (and names the owner)
    assert "group owner (tom.baker)" in other.result.output


def test_runs_that_acted_three_ways_are_one_skill_with_two_branches(tmp_path: Path) -> None:
    """Already a member (read the user, answer), restricted (read the group too, refuse), otherwise
    add: one function whose branches come in the order the runs stopped, not three files."""
    forge = H.forge(tmp_path, access.agent_factory)
    w = access.world
    learned = [
        H.learn(forge, "Please add ivy.chen to wiki-editors.", w("ivy.chen", "maria.lopez", "wiki-editors", "ann.lee", restricted=False)),
        H.learn(forge, "Please add raj.patel to jira-users.", w("raj.patel", "david.kim", "jira-users", "ann.lee", member=True),
                after_handover=True),
        H.learn(forge, "Please add omar.haddad to payroll-admins.", w("omar.haddad", "nora.quinn", "payroll-admins", "nora.quinn"),
                after_handover=True),
    ]
    assert [sh.result.learned for sh in learned] == ["add"] * 3
    assert sorted(p.name for p in forge.skills_dir.glob("*.py") if p.name != "__init__.py") == ["add.py"]
    body = (forge.skills_dir / "add.py").read_text().split("def add(", 1)[1]
    first, second = body.index("if group in user['groups']:"), body.index("if group_2['restricted']:")
    assert first < body.index("get_group(") < second < body.index("add_to_group(")
    for task, world, answer in [
        ("Please add kate.oneil to sales-crm.", w("kate.oneil", "ben.okafor", "sales-crm", "ann.lee", restricted=False), "Added"),
        ("Please add leo.rossi to github-org.", w("leo.rossi", "emma.berg", "github-org", "ann.lee", member=True), "already in"),
        ("Please add sam.lee to audit-logs.", w("sam.lee", "ana.ruiz", "audit-logs", "ana.ruiz"), "is restricted"),
    ]:
        sh = H.check(forge, task, world)
        assert sh.result.source == "skill" and answer in sh.result.output, sh.describe()
