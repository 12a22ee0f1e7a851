"""A parameter takes in every phrasing of a skill the shapes its runs passed it in any.

The helpdesk shadow stream learned "{username}: and remove him from {group}." (the second request of
"Add sam.lee2 to github-org and remove him from wiki-editors.") from one run, so its username slot took
``a.a9`` only, while the skill's other phrasings had taken ``a.a`` for the same parameter many times:
"Add diego.ramos to wiki-editors and remove him from vpn-users." then cut into no clauses and went to
the agent. The values a parameter may take are what the skill's runs passed it, whichever words they
were said in; the words around it are each phrasing's own (``_antiunify.shared_shapes``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillforge._antiunify import shared_shapes
from skillforge._learning import spec_from_runs
from skillforge._lifting import discover_template
from skillforge._template import Slot, TaskTemplate
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from tests.test_probes_round2 import check, forge_for, learn

TOOLS = {
    "get_user": ToolRef(module="desk", qualname="get_user", read=True, params=("username",)),
    "reset_password": ToolRef(module="desk", qualname="reset_password", params=("username",)),
}
FIRST = "Send {} a password reset link."
SECOND = "{} is locked out, please send them a reset link anyway."


def reset_run(task: str, username: str) -> Trajectory:
    return Trajectory(
        task=task.format(username),
        calls=[Call(tool="get_user", args={"username": username}, result={"username": username, "locked": False}),
               Call(tool="reset_password", args={"username": username}, result={"sent": True})],
        outcome=Outcome(ok=True, output=f"Sent a password reset link to {username}."),
        tools=TOOLS,
    )


def template(run: Trajectory) -> TaskTemplate:
    t = discover_template(run)
    assert isinstance(t, TaskTemplate)
    return t


def test_each_phrasing_takes_the_shapes_its_parameter_took_in_any_phrasing() -> None:
    first, second = template(reset_run(FIRST, "ana.ruiz")), template(reset_run(SECOND, "bo.chen2"))
    assert second.bind(SECOND.format("cy.diaz")) is None  # learned from "bo.chen2" alone: a.a9 only
    wide_first, wide_second = shared_shapes([first, second])
    for t, text in ((wide_first, FIRST), (wide_second, SECOND)):
        assert t.bind(text.format("cy.diaz")) is not None and t.bind(text.format("dee.fox2")) is not None
        # a shape no run passed the parameter stays a miss, and so does text around it
        assert t.bind(text.format("Cy Diaz")) is None and t.bind(text.format("cy.diaz and bo.chen")) is None
    assert shared_shapes([first]) == [first]


def test_a_value_said_whole_in_one_phrasing_and_bare_in_another_is_taken_either_way_in_both() -> None:
    whole = TaskTemplate("Where is order {order_id}?", [Slot("order_id", "text", "str", None, "#`W`9")])
    bare = TaskTemplate("Cancel {order_id}, I changed my mind.", [Slot("order_id", "id", "str", "affix:#{}", "`W`9")])
    wide_whole, wide_bare = shared_shapes([whole, bare])
    for t, text in ((wide_whole, "Where is order {}?"), (wide_bare, "Cancel {}, I changed my mind.")):
        assert t.bind(text.format("#W12")) == {"order_id": "#W12"} == t.bind(text.format("W12"))
        assert t.bind(text.format("12")) is None and t.bind(text.format("#W12 and #W13")) is None


def test_slots_of_another_parameter_type_or_text_that_feeds_nothing_keep_their_own_shapes() -> None:
    plain = TaskTemplate("Unlock {username} now", [Slot("username", "text", "str", None, "a.a")])
    other = TaskTemplate("Unlock {user} today", [Slot("user", "text", "str", None, "a.a9")])
    number = TaskTemplate("Unlock account {username}", [Slot("username", "int", "int", None, "9")])
    choice = TaskTemplate("Unlock {username} {_1}", [Slot("username", "text", "str", None, "a.a9"),
                                                     Slot("_1", "choice", "str", None, "now|today")])
    out = shared_shapes([plain, other, number, choice])
    assert out[1] is other  # another parameter
    assert out[2] is number  # another type
    assert out[0].bind("Unlock cy.diaz2 now") == {"username": "cy.diaz2"}  # the choice phrasing's username widened it
    assert out[0].bind("Unlock 42 now") is None and out[0].bind("Unlock Cy Diaz now") is None
    assert out[3].bind("Unlock cy.diaz today") is not None and out[3].bind("Unlock cy.diaz soon") is None  # the choice as seen


def test_a_skill_learned_in_two_phrasings_writes_each_with_both_shapes() -> None:
    a, b = reset_run(FIRST, "ana.ruiz"), reset_run(SECOND, "bo.chen2")
    spec = spec_from_runs([a, b], name="send_reset", template=template(a), phrasings=(template(b),))
    assert not hasattr(spec, "reason"), spec
    again = spec_from_runs([a, b], name="send_reset", template=template(a), phrasings=(template(b),))
    assert again == spec  # the same runs give the same skill
    for text, slots in ((spec.template, spec.slots), *spec.phrasings):
        t = TaskTemplate(text, list(slots))
        assert t.bind(text.replace("{username}", "cy.diaz")) is not None
        assert t.bind(text.replace("{username}", "cy.diaz2")) is not None


def users(name: str) -> dict[str, Any]:
    return {"users": {name: {"username": name, "locked": False}}}


def test_a_forge_serves_a_phrasing_learned_once_for_a_value_of_the_shape_another_phrasing_showed(tmp_path: Path) -> None:
    forge = forge_for(tmp_path)
    learn(forge, FIRST.format("ana.ruiz"), users("ana.ruiz"))
    learn(forge, SECOND.format("bo.chen2"), users("bo.chen2"))  # the same program said otherwise: one file
    assert len(forge.library.paths()) == 1
    sh = check(forge, SECOND.format("cy.diaz"), users("cy.diaz"))
    assert sh.result.source == "skill", sh.result.handover
    assert sh.world["writes"] == sh.expected_world["writes"] != []
    # a value of a shape no run passed it is the agent's
    sh = check(forge, SECOND.format("deefox"), users("deefox"))
    assert sh.result.source == "agent"


def test_phrasings_keep_their_own_shapes_where_shared_ones_would_bind_a_run_otherwise() -> None:
    from skillforge._learning import _shared

    # "Reset bo now." was said in the second phrasing; with the third's "a a" shared, the first would take
    # it as "bo now": the runs would no longer be what they were, so each keeps its own shapes
    first = TaskTemplate("Reset {username}.", [Slot("username", "text", "str", None, "9")])
    second = TaskTemplate("Reset {username} now.", [Slot("username", "text", "str", None, "a")])
    third = TaskTemplate("Please reset {username}", [Slot("username", "text", "str", None, "a a")])
    runs = [reset_run("Reset {}.", "42"), reset_run("Reset {} now.", "bo"), reset_run("Please reset {}", "ana li")]
    assert _shared(runs, first, (second, third)) == (first, (second, third))
    shared = _shared([runs[0], runs[2]], first, (second, third))  # without that run they share
    assert shared[0].bind("Reset bo now.") == {"username": "bo now"}
