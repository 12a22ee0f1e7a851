"""Hardening the sandbox (issue #14): instance names, time and memory budgets, generated names.

Every test goes through a real ``Forge``: a skill is learned from a real agent run over
the tools below, then code is planted in the learned file (as a person editing it
might) and the next task of that shape is solved. A skill that would loop or allocate
without bound must stop with ``BudgetExceeded`` and hand over to the agent, fast and
without allocating much; a generated name must never break the policy.
"""

from __future__ import annotations

import re
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from skillforge import Forge
from skillforge._policy import check_policy

ROWS = 40


def list_rows(table: str) -> dict:
    """The rows of a table.

    Args:
        table: the table's name.
    """
    return {"table": table, "label": "ten chars.", "count": 3, "rows": [{"n": i, "name": f"r{i}"} for i in range(ROWS)]}


def _agent(rows: Callable[..., dict], seen: list[str]) -> Callable[[str], str]:
    def agent(task: str) -> str:
        seen.append(task)
        return f"The table holds {rows(table=task.split()[-1])['table']}."

    return agent


@pytest.fixture(scope="module")
def learned_rows(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The source of a skill learned from one run of ``list_rows`` (read-only)."""
    tmp = tmp_path_factory.mktemp("rows")
    forge = Forge(skills_dir=tmp / "skills", state_dir=tmp / "state")
    rows = forge.tool(read=True)(list_rows)
    forge.agent = _agent(rows, [])
    result = forge.solve("Show table alpha")
    assert result.learned, result.not_learned
    return (forge.skills_dir / f"{result.learned}.py").read_text()


def _planted(source: str, code: str) -> str:
    m = re.search(r"^    (\w+) = list_rows\(table=table\)\n", source, re.M)
    assert m is not None, source
    body = "".join(f"    {line}\n" for line in code.replace("R[", f"{m[1]}[").splitlines())
    if "join(" in code:
        source = source.replace("from skillforge.runtime import ", "from skillforge.runtime import join, ", 1)
        m = re.search(r"^    (\w+) = list_rows\(table=table\)\n", source, re.M)
    return source[: m.end()] + body + source[m.end() :]


class Planted:
    """A forge whose one skill is the learned ``list_rows`` skill with ``code`` planted after its call."""

    def __init__(self, tmp: Path, source: str, code: str, **limits: float) -> None:
        (tmp / "skills").mkdir()
        name = re.search(r"^def (\w+)\(", source, re.M)[1]  # type: ignore[index]
        (tmp / "skills" / f"{name}.py").write_text(_planted(source, code))
        self.asked: list[str] = []
        # the planted file no longer reproduces its run: run it anyway (edited="run"), the sandbox is under test
        self.forge = Forge(skills_dir=tmp / "skills", state_dir=tmp / "state", learn=False, edited="run", **limits)  # type: ignore[arg-type]
        self.forge.agent = _agent(self.forge.tool(read=True)(list_rows), self.asked)

    def solve(self) -> tuple[object, float, int]:
        """The result of the next task, the seconds it took and the peak traced memory (bytes)."""
        assert self.forge.problems == [], self.forge.problems
        tracemalloc.start()
        start = time.perf_counter()
        try:
            result = self.forge.solve("Show table beta")
        finally:
            elapsed = time.perf_counter() - start
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        return result, elapsed, peak


def test_the_learned_skill_replays_unchanged(learned_rows: str, tmp_path: Path) -> None:
    result, _elapsed, _peak = Planted(tmp_path, learned_rows, "").solve()
    assert result.source == "skill" and result.output == "The table holds beta.", result.handover


# -- item 6: time -------------------------------------------------------------------------

NESTED = (
    "for a in R['rows']:\n"
    "    for b in R['rows']:\n"
    "        for c in R['rows']:\n"
    "            for d in R['rows']:\n"
    "                x = a\n"
)
SQUARING = "n = R['count']\n" + "n = n * n\n" * 40
TIME_ATTACKS = [
    ("nested-loops-without-calls", NESTED, "time budget"),  # 40**4 iterations, no tool call among them
    ("round-to-huge-negative-digits", "x = round(R['count'], -1000000000000000)", "round"),
    ("repeated-squaring", SQUARING, "integer"),
    ("nested-comprehensions", "x = [[[[a for a in R['rows']] for b in R['rows']] for c in R['rows']] for d in R['rows']]", "time budget"),
]


@pytest.mark.parametrize(("name", "code", "why"), TIME_ATTACKS, ids=[a[0] for a in TIME_ATTACKS])
def test_a_skill_that_runs_long_without_tool_calls_stops_within_its_time_budget(
    name: str, code: str, why: str, learned_rows: str, tmp_path: Path
) -> None:
    planted = Planted(tmp_path, learned_rows, code, max_skill_seconds=0.1)
    result, elapsed, _peak = planted.solve()
    assert result.source == "agent" or result.source == "skill+agent", result.source
    assert result.handover is not None and why in result.handover and "stopped" in result.handover, result.handover
    assert planted.asked == ["Show table beta"]  # the agent took over
    assert result.output == "The table holds beta."
    assert elapsed < 5.0, f"{name}: {elapsed:.2f} s against a 0.1 s budget"  # unbudgeted: forever (loose: shared cores)


def test_iterations_have_a_budget_of_their_own(learned_rows: str, tmp_path: Path) -> None:
    """Within its time, a skill still may not iterate more than its iteration budget."""
    from skillforge._sandbox import MAX_ITERATIONS

    planted = Planted(tmp_path, learned_rows, NESTED, max_skill_seconds=60)
    result, elapsed, _peak = planted.solve()
    assert result.handover is not None and f"budget of {MAX_ITERATIONS:,} loop iterations" in result.handover
    assert ROWS**4 > MAX_ITERATIONS and elapsed < 10


# -- item 7: memory -----------------------------------------------------------------------

MEMORY_ATTACKS = [
    ("repetition-by-a-variable", "n = R['count'] * 40000000\ns = R['label'] * n"),  # 10 chars * 120 M
    ("repetition-int-first", "n = R['count'] * 40000000\ns = n * R['label']"),
    ("doubling", "s = R['label']\n" + "s = s + s\n" * 27),  # 10 chars * 2**27
    ("doubling-a-list", "s = R['rows']\n" + "s = s + s\n" * 25),  # 40 items * 2**25
    ("format-width-builtin", "s = format(R['label'], '>1300000000')"),
    ("format-precision-builtin", "s = format(1.5, '.1300000000f')"),
    ("format-width-variable", "w = '>' + str(R['count'] * 400000000)\ns = format(R['label'], w)"),
    ("percent-width", "s = '%1300000000s' % R['label']"),
    ("percent-width-from-data", "f = '%' + str(R['count'] * 400000000) + 's'\ns = f % R['label']"),
    ("fstrings-in-a-loop", "s = R['label'] * 100000\nx = [f'{s}{s}{s}' for a in R['rows']]\ny = [[f'{s}' for b in R['rows']] for a in R['rows']]"),
    ("sum-of-lists", "x = [R['rows'] for a in R['rows']]\ny = sum([x for a in R['rows']], [])\nz = [sum(y, []) for a in R['rows']]"),
    ("join-of-copies", "s = R['label'] * 100000\ny = [join([s for a in R['rows']], '') for b in R['rows']]"),
    ("sorted-copies-in-a-loop", "x = [R['rows'] for a in R['rows']]\ny = sum([x for a in R['rows']], [])\nz = [[[sorted(y) for a in R['rows']] for b in R['rows']] for c in R['rows']]"),
    ("list-copies-in-a-loop", "x = [R['rows'] for a in R['rows']]\ny = sum([x for a in R['rows']], [])\nz = [[[list(y) for a in R['rows']] for b in R['rows']] for c in R['rows']]"),
    ("str-of-a-large-list", "x = [R['rows'] for a in R['rows']]\ny = [[str(x) for a in R['rows']] for b in R['rows']]"),
]


@pytest.mark.parametrize(("name", "code"), MEMORY_ATTACKS, ids=[a[0] for a in MEMORY_ATTACKS])
def test_a_skill_that_builds_huge_values_stops_before_allocating_them(
    name: str, code: str, learned_rows: str, tmp_path: Path
) -> None:
    planted = Planted(tmp_path, learned_rows, code)
    result, elapsed, peak = planted.solve()
    assert result.handover is not None and "budget" in result.handover and "stopped" in result.handover, (name, result.handover)
    assert planted.asked == ["Show table beta"] and result.output == "The table holds beta."
    assert peak < 256 * 2**20, f"{name}: {peak / 2**20:.0f} MiB traced"
    # stopped, not run out: unbudgeted, these take minutes or exhaust memory (a loose bound: the suite
    # shares 2 cores with whatever else runs, and took 6 s here once under load)
    assert elapsed < 30, f"{name}: {elapsed:.1f} s"


def test_an_fstring_with_a_wide_format_spec_is_refused_by_the_policy() -> None:
    def violations(line: str) -> list[str]:
        source = f"def f(x: str):\n    return {line}\n"
        return [v.rule for v in check_policy(source, "f", {})]

    assert violations("f'{x:>3000000000}'") == ["format spec"]
    assert violations("f'{x:.3000000000f}'") == ["format spec"]
    assert violations("f'{x:{x}}'") == ["format spec"]  # a spec computed at run time
    assert violations("f'{x:,.2f} {x:.15g} {x:>12} {x:,}'") == []  # what codegen writes, and modest widths


# -- item 5: a method call goes to the instance parameter only ------------------------------


class Board:
    """A message board whose tool methods share their names with list and dict methods."""

    def __init__(self) -> None:
        self.posts: dict[str, list[str]] = {"news": ["hello"], "sales": ["mugs"]}

    def get(self, topic: str) -> dict:
        """The posts of a topic.

        Args:
            topic: the topic.
        """
        return {"topic": topic, "posts": self.posts.setdefault(topic, [])}  # the board's own list, not a copy

    def append(self, topic: str, text: str) -> dict:
        """Post to a topic.

        Args:
            topic: the topic.
            text: what to post.
        """
        self.posts.setdefault(topic, []).append(text)
        return {"topic": topic, "count": len(self.posts[topic])}


@pytest.fixture
def board_forge(tmp_path: Path) -> tuple[Forge, Board, list[str]]:
    board = Board()
    asked: list[str] = []
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state")
    get, append = forge.tool(read=True)(Board.get), forge.tool(Board.append)
    forge.provide(board)

    def agent(task: str) -> str:
        asked.append(task)
        topic = task.split()[-1]
        first = get(board, topic=topic)["posts"][0]
        append(board, topic=topic, text="seen")
        return f"{topic} starts with {first}"

    forge.agent = agent
    learned = forge.solve("Mark the board news")
    assert learned.learned, learned.not_learned
    return forge, board, asked


REBINDINGS = [
    ("assigned-a-result", "board = get_result\nx = board.get('posts')"),
    ("assigned-a-list", "board = get_result['posts']\nfor x in board:\n    board.append(x)"),
    ("loop-target", "for board in [get_result['posts']]:\n    board.append('x')"),
    ("comprehension-target", "x = [board.append('x') for board in [get_result['posts']]]"),
    ("rebound-after-use", "x = board.get(topic='news')\nboard = get_result"),
]


@pytest.mark.parametrize(("name", "code"), REBINDINGS, ids=[r[0] for r in REBINDINGS])
def test_a_method_call_on_a_rebound_instance_name_is_refused(
    name: str, code: str, board_forge: tuple[Forge, Board, list[str]]
) -> None:
    forge, board, asked = board_forge
    path = next(p for p in forge.skills_dir.glob("*.py") if p.name != "__init__.py")
    source = path.read_text()
    m = re.search(r"^    (\w+) = (\w+)\.get\(topic=topic\)\n", source, re.M)
    assert m is not None, source
    planted = code.replace("get_result", m[1]).replace("board", m[2])
    path.write_text(source[: m.end()] + "".join(f"    {line}\n" for line in planted.splitlines()) + source[m.end() :])
    forge.reload()
    refused = [v for p in forge.problems for v in p.violations]
    assert any(v[1] == "attribute" and "rebound" in v[2] for v in refused), refused
    result = forge.solve("Mark the board sales")
    assert result.source == "agent" and asked[-1] == "Mark the board sales"
    assert board.posts["sales"] == ["mugs", "seen"]  # the agent's one recorded post; nothing else reached the list


def test_a_verdict_cached_by_an_earlier_policy_is_not_trusted(board_forge: tuple[Forge, Board, list[str]]) -> None:
    """A state dir written before the policy tightened holds "no violations" for files it now refuses."""
    import hashlib

    from skillforge._library import MetaCache

    forge, _board, _asked = board_forge
    path = next(p for p in forge.skills_dir.glob("*.py") if p.name != "__init__.py")
    source = path.read_text()
    m = re.search(r"^    (\w+) = (\w+)\.get\(topic=topic\)\n", source, re.M)
    planted = source[: m.end()] + f"    {m[2]} = {m[1]}['posts']\n    {m[2]}.append('x')\n" + source[m.end() :]  # type: ignore[index]
    path.write_text(planted)
    old_tools_key = hashlib.sha256(  # how earlier versions keyed a verdict: by the tools alone
        repr(sorted((t.name, t.module, t.qualname, t.is_method) for t in forge.registry.tools.values())).encode()
    ).hexdigest()[:16]
    cache = MetaCache(forge.state_dir / "library.sqlite3")
    cache.put_policy(hashlib.sha256(planted.encode()).hexdigest(), old_tools_key, [])
    cache.save()
    forge.reload()
    assert {v[1] for p in forge.problems for v in p.violations} == {"attribute"}


def test_the_instance_parameter_itself_still_calls_its_methods(board_forge: tuple[Forge, Board, list[str]]) -> None:
    forge, board, asked = board_forge
    result = forge.solve("Mark the board sales")
    assert result.source == "skill" and result.output == "sales starts with mugs", result.handover
    assert board.posts["sales"] == ["mugs", "seen"] and asked == ["Mark the board news"]


# -- item 14: generated names never shadow builtins, helpers or tools ------------------------


def fetch_all(kind: str) -> list:
    """Every record of a kind.

    Args:
        kind: the kind of record.
    """
    return [{"kind": kind, "name": "the first"}]


def fetch_values(kind: str) -> dict:
    """The values of a kind.

    Args:
        kind: the kind of record.
    """
    return {"kind": kind, "name": "some values"}


def top_items(category: str, max: int, sorted: str) -> dict:  # noqa: A002 - parameter names like builtins, on purpose
    """The top items of a category.

    Args:
        category: which items.
        max: how many at most.
        sorted: the order.
    """
    return {"category": category, "best": "deluxe", "count": max, "order": sorted}


NAMING = [
    ("result-named-all", fetch_all, lambda t, tool: (lambda r: f"The first of {r[0]['kind']} is {r[0]['name']}.")(tool(kind=t.split()[-1])),
     "Show records of widgets", "Show records of gadgets", "The first of gadgets is the first."),
    ("result-named-values", fetch_values, lambda t, tool: (lambda r: f"Found {r['name']} of {r['kind']}.")(tool(kind=t.split()[-1])),
     "Show values of widgets", "Show values of gadgets", "Found some values of gadgets."),
    ("parameters-named-max-and-sorted",
     top_items, lambda t, tool: (lambda r: f"Best {r['category']}: {r['best']}")(tool(category=t.split()[3], max=int(t.split()[2]), sorted=t.split()[-1])),
     "Show the 3 lamps by price", "Show the 4 mugs by rating", "Best mugs: deluxe"),
]


@pytest.mark.parametrize(("name", "func", "agent", "first", "second", "output"), NAMING, ids=[n[0] for n in NAMING])
def test_runs_whose_names_clash_with_builtins_are_learned_and_replayed(
    name: str, func: Callable[..., object], agent: Callable[..., str], first: str, second: str, output: str, tmp_path: Path
) -> None:
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state")
    tool = forge.tool(read=True)(func)
    asked: list[str] = []
    forge.agent = lambda task: asked.append(task) or agent(task, tool)
    learned = forge.solve(first)
    assert learned.learned, learned.not_learned
    source = (forge.skills_dir / f"{learned.learned}.py").read_text()
    assert forge.policy_violations(source, learned.learned) == []
    hit = forge.solve(second)
    assert hit.source == "skill" and hit.output == output, hit.handover
    assert asked == [first]
    again = Forge(skills_dir=tmp_path / "again", state_dir=tmp_path / "state2")  # the same run gives the same bytes
    again.agent = lambda task, tool=again.tool(read=True)(func): agent(task, tool)
    assert again.solve(first).learned == learned.learned
    assert (again.skills_dir / f"{learned.learned}.py").read_text() == source


def test_restrictedpython_still_sees_inside_format_specs_under_the_budget_rewrite() -> None:
    """The budget rewrite leaves a spec unwrapped, but RestrictedPython's own checks still reach into it."""
    from skillforge import SandboxError
    from skillforge._sandbox import compile_skill, load_function

    with pytest.raises(SandboxError, match="_y"):
        compile_skill("def f(x):\n    return f'{x:{_y}}'\n", "<t>")
    f = load_function(compile_skill("def f(x):\n    return f'{x:>6} {x:,.2f}' + str(x)\n", "<t>"), "f", {}, "t")
    assert f(1234.5) == "1234.5 1,234.50" + "1234.5"  # guarded f-strings, + and str() give what Python gives


def lookup(code: str) -> dict:
    """Look a code up.

    Args:
        code: the code.
    """
    return {"code": code, "name": "widget"}


def label_for(lookup: str, name: str) -> dict:
    """A label for a looked-up code.

    Args:
        lookup: the code looked up.
        name: its name.
    """
    return {"text": f"{name} {lookup}"}


def test_a_parameter_never_takes_the_name_a_renamed_tool_is_imported_by(tmp_path: Path) -> None:
    """A tool registered as ``find_code`` is imported by its function's name, ``lookup``: no parameter may be called that."""
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state")
    find, label = forge.tool(read=True, name="find_code")(lookup), forge.tool(read=True)(label_for)

    def agent(task: str) -> str:
        code = task.split()[-1]
        text = label(lookup=code, name="plain")["text"]  # the code's first use names the parameter: lookup
        return f"{text}, a {find(code=code)['name']}"

    forge.agent = agent
    learned = forge.solve("Label code K-17")
    assert learned.learned, learned.not_learned
    source = (forge.skills_dir / f"{learned.learned}.py").read_text()
    assert "import label_for, lookup" in source and forge.policy_violations(source, learned.learned) == []
    hit = forge.solve("Label code K-42")
    assert hit.source == "skill" and hit.output == "plain K-42, a widget", hit.handover


def test_a_list_growing_under_its_own_loop_stops_at_the_iteration_budget_even_past_the_policy() -> None:
    """Beneath the policy (which refuses ``lst.append``), the iteration budget still ends ``for x in lst: lst.append(x)``."""
    from skillforge import BudgetExceeded
    from skillforge._sandbox import MAX_ITERATIONS, compile_skill, load_function
    from skillforge._tools import Run, activate, deactivate

    source = "def f(lst):\n    for x in lst:\n        lst.append(x)\n"
    assert check_policy(source, "f", {}) != []
    f = load_function(compile_skill(source, "<t>"), "f", {}, "t")
    grown = [1]
    token = activate(Run(snapshot=False, instances={}, seconds=30.0))
    try:
        with pytest.raises(BudgetExceeded, match="loop iterations"):
            f(grown)
    finally:
        deactivate(token)
    assert MAX_ITERATIONS <= len(grown) <= MAX_ITERATIONS + 32


def test_admission_of_a_runaway_file_stops_within_its_budget(tmp_path: Path) -> None:
    """``skillforge check`` replays each file against its recorded runs with no skill run active:
    a hand-planted loop must stop there too, as a rejection, not stall CI or raise."""
    from skillforge._compile import Rejected, admit_file
    from skillforge._library import read_skill_file

    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state")
    forge.agent = _agent(forge.tool(read=True)(list_rows), [])
    learned = forge.solve("Show table alpha").learned
    assert learned
    path = forge.skills_dir / f"{learned}.py"
    path.write_text(_planted(path.read_text(), NESTED))
    skill = read_skill_file(path)
    start = time.perf_counter()
    verdict = admit_file(skill, forge.library.load_run(skill.runs[0]))
    elapsed = time.perf_counter() - start
    assert isinstance(verdict, Rejected), verdict
    assert "loop iterations" in verdict.reason or "time budget" in verdict.reason, verdict.reason
    assert elapsed < 15, f"admission ran {elapsed:.1f} s"
