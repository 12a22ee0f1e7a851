"""What a reviewer reads: a check said once where every way makes it, none that an earlier one makes
sure of, a text's presence and length in one line, spans of a number kept apart, and no relation
between values of different kinds."""

from __future__ import annotations

from skillforge._codegen import _Renderer
from skillforge._spec import Guard, range_guard, spans_of
from skillforge._tidy import once, texts
from skillforge._values import _alike


def _req(cond: str, why: str = "x") -> str:
    return f"require({cond}, {why!r})"


def test_a_check_an_earlier_one_makes_sure_of_is_not_written_again() -> None:
    body = [
        "user = get_user(username=username)",
        _req("has(user, 'groups', kind='list')"),
        _req("group in user['groups']"),
        _req("near(group, user['groups'])"),  # a member of a list is near itself
        _req("len(user['groups']) > 0"),  # and the list holds it
        _req("not near(other, user['groups'])"),
        _req("other not in user['groups']"),  # not even near: not in it
        _req("user['status'] == 'active'"),
        _req("has(user, 'status', kind='str')"),  # a text equal to 'active'
        _req("lines(user['status']) == 1"),  # of one line
        _req("3 <= user['count'] <= 20"),
        _req("user['count'] > 0"),  # from 3 up: positive
        _req("len(user['devices']) == 2"),
        _req("len(user['devices']) > 0"),
        "return 'done'",
    ]
    assert once(body) == [body[0], body[1], body[2], body[5], body[7], body[10], body[12], body[14]]


def test_between_in_and_near_only_over_what_is_sure_to_be_a_list() -> None:
    """Over a text, ``in`` finds a part of it and ``near`` one of its listed items ("wiki" is in
    "staff,wikis" and near none of them): neither says the other there, nor where the field's kind was
    never checked (a field that was a list in every run may be a text in another world)."""
    body = [
        _req("group in user['groups']"),
        _req("near(group, user['groups'])"),
        _req("len(user['groups']) > 0"),
        _req("not near(other, user['groups'])"),
        _req("other not in user['groups']"),
        "return 'done'",
    ]
    assert once(body) == body
    listed = [_req("not near(m, values(user, 'devices', '*', 'model'))"), _req("m not in values(user, 'devices', '*', 'model')")]
    assert once(listed) == listed[:1]  # values(...) is a list


def test_a_check_a_later_one_of_the_same_run_makes_sure_of_is_left_out() -> None:
    body = [
        "user = get_user(username=username)",
        _req("model not in values(user, 'devices', '*', 'model')"),
        "# not guarded: user['title'] took 5 different values in 10 runs that acted alike",
        _req("not near(model, values(user, 'devices', '*', 'model'))"),  # makes sure of the first
        _req("group not in values(user, 'groups')"),
        "assign_device(username=username, model=model)",  # a call between: the check before it stays
        _req("not near(group, values(user, 'groups'))"),
        "return 'done'",
    ]
    assert once(body) == [body[0], body[2], body[3], body[4], body[5], body[6], body[7]]


def test_what_a_check_does_not_make_sure_of_stays() -> None:
    body = [
        _req("0 <= n['count'] <= 20"),
        _req("n['count'] > 0"),  # 0 is in the span: not sure to be positive
        _req("user['status'] in ('open', 'closed')"),
        _req("user['status'] == 'open'"),  # one of two is not this one
        _req("group in values(user, 'groups')"),
        _req("near(group, values(user, 'groups'))"),
        "x = 1",
        _req("near(other, values(user, 'groups'))"),  # up to case, not this text
        _req("other in values(user, 'groups') or other == ''"),
    ]
    assert once(body) == [*body[:5], *body[6:]]  # only the near after its group in ... goes


def test_an_if_makes_sure_of_its_test_inside_its_block_only() -> None:
    body = [
        _req("has(user, 'groups', kind='list')"),
        "if group in user['groups']:  # as the runs that stopped here saw it",
        "    " + _req("near(group, user['groups'])"),
        "    return 'already'",
        _req("near(group, user['groups'])"),
        "return 'added'",
    ]
    assert once(body) == [body[0], body[1], body[3], body[4], body[5]]


def test_a_text_there_and_of_one_line_is_one_check_in_its_block() -> None:
    body = [
        _req("has(ticket, 'status', kind='str')", "ticket['status'] is a str"),
        _req("ticket['id'] == ticket_id"),
        _req("lines(ticket['status']) == 1", "ticket['status'] is one non-empty line, as when learned"),
        _req("has(ticket, 'note', kind='str')", "ticket['note'] is a str"),
        "if ticket['status'] == 'open':",
        "    " + _req("lines(ticket['note']) == 1"),  # in a block the first does not reach to: apart
        "    return 'open'",
        "return 'closed'",
    ]
    out = texts(body)
    assert out[0] == _req("has(ticket, 'status', kind='str') and lines(ticket['status']) == 1",
                          "ticket['status'] is one line of text, as when learned")
    assert out[1:] == [body[1], *body[3:]]
    whole = texts([_req("has(member_id, kind='str')"), _req("lines(member_id) == 1")])  # a read that returns a text
    assert whole == [_req("has(member_id, kind='str') and lines(member_id) == 1", "member_id is one line of text, as when learned")]


def test_a_number_alike_over_spans_apart_keeps_to_each_span() -> None:
    assert range_guard(("fines",), [(4.5, 45.0), (0.0, 0.0)], False).value == (0.0, 45.0, False, ((0.0, 0.0), (4.5, 45.0)))
    joined = range_guard(("fines",), [(1.0, 3.0), (2.0, 9.0), (9.0, 9.0)], False)
    assert joined.value == (1.0, 9.0, False) and spans_of(joined) == ((1.0, 9.0),)  # overlapping and touching: one
    from skillforge._spec import SkillSpec, Step, Const
    spec = SkillSpec(name="s", template="t", slots=(), examples={}, steps=(Step("get_member", (), var="member"),),
                     output=Const(""), tools={})
    line = _Renderer(spec).guard("member", range_guard(("fines",), [(0.0, 0.0), (4.5, 45.0)], False), "")
    assert line.startswith("require(member['fines'] == 0.0 or 4.5 <= member['fines'] <= 45.0, ")
    assert eval(line.split(", \"")[0].removeprefix("require("), {"member": {"fines": 3.2}}) is False  # between: hands over


def test_values_of_different_kinds_are_never_related() -> None:
    assert not _alike("ivy.chen@corp.example", "maria.lopez")  # an email and a username
    assert not _alike("payroll-admins", "maria.lopez")  # a group and a username
    assert _alike("ana.garcia-lopez", "ivy.chen")  # two usernames
    assert _alike("Ann Lee", "Bo Ng")  # two names
    assert not _alike("INC-4807", "cleared cached credentials")
    assert not _alike("2024-05-01", "14C") and _alike("2024-05-01", "2025-01-31")  # a date and a seat; two dates
