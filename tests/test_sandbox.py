"""The sandbox: escape attempts planted in a skill file are refused by the policy or stopped at run time.

Every attempt is planted in a copy of the committed ``where_order`` skill (a
read-only skill, so nothing legitimate writes). A canary file proves no side
effect: each attempt that could touch the file system tries to create it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillforge import Forge, SandboxError
from skillforge._policy import check_policy
from skillforge._sandbox import compile_skill, load_function
from skillforge.demo import desk

REPO = Path(__file__).resolve().parent.parent
BODY_ANCHOR = "    order = get_order(order_id=order_id)\n"
IMPORT_ANCHOR = "from skillforge.demo.desk import get_order\n"

# (id, where to plant: "body" | "module" | "import" | "signature", code; CANARY is replaced by the canary path)
ATTEMPTS = [
    ("dunder-walk", "body", "x = ().__class__.__bases__[0].__subclasses__()"),
    ("dunder-attr", "body", "x = order.__class__"),
    ("format-attr", "body", "x = '{0.__class__.__init__.__globals__}'.format(order)"),
    ("fstring-attr", "body", "x = f'{order.__class__}'"),
    ("import-os", "module", "import os"),
    ("import-os-in-body", "body", "import os"),
    ("from-os", "import", "from os import system"),
    ("open", "body", "open(CANARY, 'w').write('x')"),
    ("exec", "body", "exec(\"open(CANARY, 'w')\")"),
    ("eval", "body", "eval(\"open(CANARY, 'w')\")"),
    ("compile", "body", "x = compile('1', 'f', 'eval')"),
    ("globals", "body", "x = globals()"),
    ("getattr", "body", "x = getattr(order, '__class__')"),
    ("builtins", "body", "x = __builtins__['open'](CANARY, 'w')"),
    ("type", "body", "x = type(order)"),
    ("vars", "body", "x = vars()"),
    ("while-true", "body", "while True:\n        pass"),
    ("huge-power", "body", "x = 10 ** 10 ** 10"),
    ("huge-string", "body", "x = 'a' * 1000000000"),
    ("huge-string-var", "body", "n = 1000000000000000000\n    x = 'a' * n"),
    ("catch-guard", "body", "try:\n        require(False, 'no')\n    except BaseException:\n        pass"),
    ("shadow-require-param", "signature", "require"),
    ("shadow-require-assign", "body", "require = len"),
    ("non-tool-module", "import", "from skillforge import _forge"),
    ("non-tool-function", "import", "from skillforge.demo.desk import open_desk"),
    ("generator-frame", "body", "x = (y for y in [1]).gi_frame"),
    ("lambda", "body", "f = lambda: open(CANARY, 'w')"),
    ("nested-def", "body", "def f():\n        return 1"),
    ("class", "body", "class K:\n        pass"),
    ("underscore-name", "body", "_x = 1"),
    ("raise", "body", "raise SystemExit(0)"),
    ("assert", "body", "assert order"),
    ("del", "body", "del order"),
    ("global", "body", "global SKILL"),
    ("with", "body", "with open(CANARY, 'w') as f:\n        pass"),
    ("walrus", "body", "x = (y := 1)"),
    ("comprehension", "body", "x = [open(CANARY, 'w') for y in [1]]"),
    ("range-loop", "body", "for i in range(10):\n        pass"),
    ("star-kwargs", "body", "x = get_order(**{'order_id': order_id})"),
    ("print", "body", "print('hello')"),
    ("decorator", "signature-decorator", ""),
    ("module-side-effect", "module", "x = open(CANARY, 'w')"),
    ("method-walk", "body", "x = get_order.__globals__"),
    ("dict-method", "body", "x = order.get('status')"),
    ("shift", "body", "x = 1 << 100000"),
]


def _plant(source: str, where: str, code: str, canary: Path) -> str:
    code = code.replace("CANARY", repr(str(canary)))
    if where == "body":
        return source.replace(BODY_ANCHOR, BODY_ANCHOR + f"    {code}\n")
    if where == "module":
        return source.replace(IMPORT_ANCHOR, IMPORT_ANCHOR + f"{code}\n")
    if where == "import":
        return source.replace(IMPORT_ANCHOR, IMPORT_ANCHOR + f"{code}\n")
    if where == "signature":
        return source.replace("def where_order(order_id: str):", f"def where_order(order_id: str, {code}=None):")
    if where == "signature-decorator":
        return source.replace("def where_order(", "@get_order\ndef where_order(")
    raise ValueError(where)


@pytest.fixture
def library(tmp_path: Path) -> Path:
    target = tmp_path / "skills"
    target.mkdir()
    shutil.copy(REPO / "skills" / "where_order.py", target)
    shutil.copytree(REPO / "skills" / "runs", target / "runs")
    return target


@pytest.mark.parametrize(("name", "where", "code"), ATTEMPTS, ids=[a[0] for a in ATTEMPTS])
def test_escape_attempt_is_refused_and_leaves_no_trace(
    name: str, where: str, code: str, library: Path, tmp_path: Path, desk_db: Path
) -> None:
    canary = tmp_path / "canary"
    path = library / "where_order.py"
    planted = _plant(path.read_text(), where, code, canary)
    assert planted != path.read_text(), "the attempt was not planted"
    path.write_text(planted)
    agent_calls: list[str] = []
    forge = Forge(skills_dir=library, state_dir=tmp_path / "state", tools=desk.TOOLS,
                  agent=lambda task: agent_calls.append(task) or "agent answered")
    result = forge.solve("Where is my order #1002?")
    refused = [p for p in forge.problems if p.path.endswith("where_order.py")]
    assert refused, f"{name}: the policy let it through"
    assert "sandbox policy" in refused[0].reason and "line " in refused[0].reason
    assert result.source == "agent" and agent_calls == ["Where is my order #1002?"]
    assert not canary.exists()


def test_the_policy_names_file_line_and_rule(library: Path, tmp_path: Path, desk_db: Path) -> None:
    path = library / "where_order.py"
    path.write_text(_plant(path.read_text(), "body", "while True:\n        pass", tmp_path / "c"))
    forge = Forge(skills_dir=library, state_dir=tmp_path / "state", tools=desk.TOOLS)
    (problem,) = forge.problems
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "while True" in text)
    assert problem.path == str(path)
    assert (line, "statement", "no 'while' loops (a skill must terminate)") in problem.violations


def test_every_committed_and_golden_skill_passes_the_policy(tmp_path: Path) -> None:
    forge = Forge(skills_dir=REPO / "skills", state_dir=tmp_path / "state", tools=desk.TOOLS)
    assert forge.problems == []
    assert len(forge.skills()) == len([p for p in (REPO / "skills").glob("*.py") if not p.name.startswith("_")])
    golden = REPO / "tests" / "golden" / "refund_reference" / "skill.py"
    assert forge.policy_violations(golden.read_text(), "refund_order") == []


def test_runtime_guards_stop_what_the_policy_cannot_see(tmp_path: Path) -> None:
    """RestrictedPython stays underneath the policy: dunder access fails even if policy were bypassed."""
    source = "def f(x):\n    return x.__class__\n"
    assert check_policy(source, "f", {}) != []
    with pytest.raises(SandboxError, match="__class__"):  # RestrictedPython refuses it at compile time
        load_function(compile_skill(source, "<t>"), "f", {}, "t")(1)


def test_call_budget_stops_a_runaway_loop(desk_db: Path, tmp_path: Path) -> None:
    target = tmp_path / "skills"
    target.mkdir()
    source = (REPO / "skills" / "where_order.py").read_text()
    loop = "    for item in order['items']:\n        get_order(order_id=order_id)\n"
    (target / "where_order.py").write_text(source.replace(BODY_ANCHOR, BODY_ANCHOR + loop))
    calls: list[str] = []
    forge = Forge(skills_dir=target, state_dir=tmp_path / "state", tools=desk.TOOLS,  # the edit is run as it is
                  agent=lambda task: calls.append(task) or "agent", max_skill_calls=2, edited="run")
    assert forge.problems == []  # a loop over a tool result is allowed...
    result = forge.solve("Where is my order #1001?")  # ...but 1 + 2 items exceed a budget of 2 calls
    assert result.source == "skill+agent" and "budget of 2 tool calls" in result.handover
    assert calls == ["Where is my order #1001?"]


@pytest.mark.parametrize(
    ("value", "path", "kind", "expected"),
    [
        ({"a": 1}, ("a",), "number", True),
        ({"a": True}, ("a",), "number", False),  # a bool is not a number
        ({"a": [1, {"b": None}]}, ("a", 1, "b"), "null", True),
        ({"a": [1]}, ("a", 1), "number", False),
        ({"a": [1]}, ("a", -1), "number", True),
        ({"a": "xy"}, ("a", 0), "str", False),  # strings are not walked into
        ({"a": {"1": 2}}, ("a", 1), "number", False),  # dict keys are strings
        ([{"k": "v"}], (0, "k"), "str", True),
    ],
)
def test_has_walks_json_paths_strictly(value, path, kind, expected) -> None:
    from skillforge.runtime import has

    assert has(value, *path, kind=kind) is expected


def test_has_refuses_an_unknown_kind() -> None:
    from skillforge.runtime import has

    with pytest.raises(ValueError, match="unknown kind 'text'"):
        has({"a": 1}, "a", kind="text")


def test_time_budget_stops_a_slow_loop(tmp_path: Path, desk_db: Path) -> None:
    import time as _time

    target = tmp_path / "skills"
    target.mkdir()
    source = (REPO / "skills" / "where_order.py").read_text()
    loop = (
        "    for a in order['items']:\n"
        "        for b in order['items']:\n"
        "            for c in order['items']:\n"
        "                get_order(order_id=order_id)\n"
    )
    (target / "where_order.py").write_text(source.replace(BODY_ANCHOR, BODY_ANCHOR + loop))
    made = {"n": 0}

    def get_order(order_id: str) -> dict:
        made["n"] += 1
        _time.sleep(0.01)
        return desk.get_order.__skillforge_tool__.func(order_id)

    get_order.__module__ = "skillforge.demo.desk"  # the same tool, slower: the skill imports it by this name
    get_order.__qualname__ = "get_order"
    forge = Forge(skills_dir=target, state_dir=tmp_path / "state", agent=lambda task: "agent", max_skill_seconds=0.03)
    forge.tool(read=True)(get_order)
    result = forge.solve("Where is my order #1003?")  # 2 items: 1 + 2*2*2 = 9 calls of 10 ms wanted
    assert result.source == "skill+agent" and "ran out of its time budget" in result.handover
    assert made["n"] == 7  # checked every 8 calls: the 8th was never made


@pytest.mark.parametrize(
    ("seq", "index", "field", "expected"),
    [
        ([{"p": 320}, {"p": 210}, {"p": 260}], 1, "p", "min"),
        ([{"p": 320}, {"p": 210}, {"p": 260}], 0, "p", "max"),
        ([{"p": 320}, {"p": 210}, {"p": 260}], 2, "p", "mid"),
        ([{"p": 210}, {"p": 210}], 0, "p", "mid"),  # a tie: not alone the least
        ([{"p": 1}, {"q": 2}], 0, "p", "mid"),  # not every element has it
        ([{"p": 1}, {"p": True}], 0, "p", "mid"),  # a flag is no number
        ({"p": 1}, 0, "p", "mid"),
        ([{"p": 1}], 5, "p", "mid"),
    ],
)
def test_rank_says_where_an_element_stands(seq, index, field, expected) -> None:
    from skillforge.runtime import rank

    assert rank(seq, index, field) == expected


def test_join_stops_where_case_changes_the_order() -> None:
    from skillforge._exceptions import GuardFailed
    from skillforge.runtime import join

    assert join(["wiki", "billing", "staff"], ", ", sort=True) == "billing, staff, wiki"
    with pytest.raises(GuardFailed, match="alphabetically"):
        join(["vpn", "Outage", "access"], ", ", sort=True)  # "Outage, access" or "access, Outage"?
    assert join(["vpn", "Outage", "access"], ", ") == "vpn, Outage, access"  # in order: no question


def test_near_reads_comma_separated_listings() -> None:
    from skillforge.runtime import near

    assert near("vpn-users", "staff,vpn-users")
    assert near("VPN-Users", "staff; vpn-users")
    assert not near("vpn", "staff,vpn-users")
    assert not near("vpn-users", "staff vpn-users")  # not a listing: the whole text
