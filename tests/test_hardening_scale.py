"""Hardening (issue #14): binding is bounded, learning rejects what it cannot bind, the library scales.

Crafted inputs that used to stall binding for tens of seconds (or minutes) are run in a
subprocess with a generous timeout: the new code binds them in milliseconds, so a loaded
machine cannot make these tests flaky, and the old code fails them instead of hanging the suite.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from skillforge import Forge, UserError
from skillforge._runlog import DEFAULT_KEEP, RunLog
from skillforge._template import MAX_TASK_CHARS, Slot, TaskTemplate

REPO = Path(__file__).resolve().parent.parent


def _run(code: str, timeout: float = 20.0) -> str:
    """Run ``code`` in a fresh interpreter; its stdout (the test fails if it takes longer than ``timeout``)."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout, cwd=REPO
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"did not finish within {timeout} s: binding is not bounded")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


# -- binding is bounded ---------------------------------------------------------------------------


def test_two_unshaped_word_slots_and_a_crafted_30k_ticket_miss_at_once() -> None:
    # the old code: ~13 s on 30k characters (quadratic: the word slots and the \W+ between them
    # both take "'"); 17-31 s through solve()
    out = _run(
        """
        import time
        from skillforge._template import Slot, TaskTemplate
        W = lambda n: Slot(n, "word", "str")
        t = TaskTemplate("Change the name to {first} {last} now", [W("first"), W("last")])
        assert t.bind("Change the name to Ann O'Hara now") == {"first": "Ann", "last": "O'Hara"}
        t0 = time.perf_counter()
        for task in ("Change the name to a" + "'" * 30_000 + "a x",
                     "Change the name to a" + "'" * 3_900 + "a x"):   # under the task cap too
            assert t.bind(task) is None
        print(round(time.perf_counter() - t0, 3))
        """
    )
    assert float(out) < 5.0


def test_four_free_text_slots_on_a_short_crafted_task_finish_at_once() -> None:
    # the old code: 150 s on these 81 characters (", " fits each slot and each separator)
    out = _run(
        """
        import time
        from skillforge._template import Slot, TaskTemplate
        T = lambda n: Slot(n, "text", "str")
        t = TaskTemplate("{a}, {b}, {c} and {d}", [T("a"), T("b"), T("c"), T("d")])
        assert t.bind("apples, pears, plums and figs") == {"a": "apples", "b": "pears", "c": "plums", "d": "figs"}
        t0 = time.perf_counter()
        assert t.bind(", " * 40 + "x") is None
        assert t.bind(", " * 1_900 + "x") is None
        n = TaskTemplate("Note {a} for {b} for {c} for {d} now", [T("a"), T("b"), T("c"), T("d")])
        assert n.bind("Note " + "for " * 900 + "x") is None
        print(round(time.perf_counter() - t0, 3))
        """
    )
    assert float(out) < 5.0


def test_a_free_text_slot_ends_where_the_text_after_it_is_first_said() -> None:
    t = TaskTemplate("Note {what} for {who} now", [Slot("what", "text", "str"), Slot("who", "text", "str")])
    assert t.bind("Note pay rent for Bob Lee now") == {"what": "pay rent", "who": "Bob Lee"}
    assert t.bind("Note pay for rent for Bob now") == {"what": "pay", "who": "rent for Bob"}
    assert t.bind("Note pay rent now") is None


def test_tasks_longer_than_the_cap_never_bind() -> None:
    t = TaskTemplate("Refund order #{order_id} {note}", [Slot("order_id", "digits", "str"), Slot("note", "text", "str")])
    fits = "Refund order #1042 " + "x" * (MAX_TASK_CHARS - 30)
    assert t.bind(fits) == {"order_id": "1042", "note": "x" * (MAX_TASK_CHARS - 30)}
    assert t.bind("Refund order #1042 " + "x" * MAX_TASK_CHARS) is None
    # the same for a template of typed slots only: the cap is checked before any regex
    typed = TaskTemplate("Refund order #{order_id}", [Slot("order_id", "digits", "str")])
    assert typed.bind("Refund order #" + "1" * (MAX_TASK_CHARS + 1)) is None


def test_every_slot_pattern_is_length_capped() -> None:
    word = TaskTemplate("Greet {name} now", [Slot("name", "word", "str")])
    assert word.bind("Greet " + "A" + "a" * 99 + " now") is not None
    assert word.bind("Greet " + "A" + "a" * 100 + " now") is None  # a word of more than 100 characters is no name
    shaped = TaskTemplate("Greet {name} now", [Slot("name", "word", "str", None, "Aa")])
    assert shaped.bind("Greet Ann now") == {"name": "Ann"}
    assert shaped.bind("Greet A" + "a" * 200 + " now") is None


# -- learning rejects what it could never bind ------------------------------------------------------


def get_ticket(ticket_id: str) -> dict:
    """A ticket."""
    return {"id": ticket_id, "status": "open"}


def close_ticket(ticket_id: str) -> str:
    """Close a ticket."""
    return ticket_id


def _forge(tmp_path: Path) -> Forge:
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", run_log=False)
    forge.tool(read=True)(get_ticket)
    forge.tool(close_ticket)
    wrapped = {t.name: t.wrapper for t in forge.registry}

    def agent(task: str) -> str:
        tid = task.split("#", 1)[1].split()[0]
        wrapped["get_ticket"](ticket_id=tid)
        return wrapped["close_ticket"](ticket_id=tid)

    forge.agent = agent
    return forge


def test_a_4mb_task_is_served_by_the_agent_and_not_learned_at_once(tmp_path: Path) -> None:
    forge = _forge(tmp_path)
    first = forge.solve("Close ticket #1001 please")
    assert first.learned, first.not_learned
    task = "Close ticket #1002 " + "and more words " * 280_000  # 4.2 MB; the old code: ~50 s compiling its template
    t0 = time.perf_counter()
    result = forge.solve(task)
    elapsed = time.perf_counter() - t0
    assert result.source == "agent" and result.output == "1002"
    assert result.learned is None and "longer than" in (result.not_learned or "")
    assert str(MAX_TASK_CHARS) in result.not_learned or f"{MAX_TASK_CHARS:,}" in result.not_learned
    assert elapsed < 5.0  # 0.1 s here: no template lookup, no embedding, no lifting of a task no skill can bind
    assert sorted(p.name for p in forge.skills_dir.glob("*.py")) == ["__init__.py", first.learned + ".py"]
    assert forge.solve("Close ticket #1003 please").source == "skill"


# -- the library at scale ---------------------------------------------------------------------------


def _cached(state: Path, kind: str) -> int:
    import sqlite3

    conn = sqlite3.connect(str(state / "library.sqlite3"))
    try:
        return conn.execute("SELECT count(*) FROM entries WHERE kind = ?", (kind,)).fetchone()[0]
    finally:
        conn.close()


def test_files_a_process_writes_are_in_the_metadata_cache_when_it_ends(tmp_path: Path) -> None:
    from bench.library_scale import forge_on, shapes

    skills, state = tmp_path / "skills", tmp_path / "state"
    forge = forge_on(skills, state)
    for i, shape in enumerate(shapes(5)):
        assert forge.solve(f"{shape} #{100 + i}").learned
    del forge  # no close, no further solve: what it learned is cached already
    assert _cached(state, "meta") == 5
    assert _cached(state, "policy") == 5
    # a new process reads every file from the cache: nothing is parsed
    out = _run(
        f"""
        import skillforge._library as lib
        from pathlib import Path
        from bench.library_scale import forge_on, shapes
        parsed = []
        real = lib._parse_meta
        lib._parse_meta = lambda *a: parsed.append(a[0]) or real(*a)
        forge = forge_on(Path({str(skills)!r}), Path({str(state)!r}))
        hit = forge.solve(shapes(5)[2] + " #7")
        print(hit.source, len(forge.skills()), len(parsed))
        """
    )
    assert out == "skill 5 0"


def test_the_run_log_keeps_the_newest_rows_of_each_table(tmp_path: Path) -> None:
    from bench.library_scale import forge_on, shapes

    forge = forge_on(tmp_path / "skills", tmp_path / "state")
    forge.runlog = RunLog(tmp_path / "state" / "runs.sqlite3", keep=50)
    shape = shapes(1)[0]
    assert forge.solve(f"{shape} #1").learned
    for i in range(120):
        assert forge.solve(f"{shape} #{i + 2}").source == "skill"
    stats = forge.stats()  # flushes: the batch is written, then the log is cut to the newest 50 rows
    assert stats.overall.hits == 50 and stats.overall.agent == 1
    conn = sqlite3.connect(str(tmp_path / "state" / "runs.sqlite3"))
    try:
        tasks = [t for (t,) in conn.execute("SELECT task FROM hits ORDER BY rowid")]
    finally:
        conn.close()
    assert tasks == [f"{shape} #{i + 2}" for i in range(70, 120)]  # the newest, in order


def test_the_run_log_keeps_a_default_number_of_rows_and_says_how_to_set_it(tmp_path: Path) -> None:
    log = RunLog(tmp_path / "runs.sqlite3")
    assert log.keep == DEFAULT_KEEP == 100_000
    assert RunLog(tmp_path / "all.sqlite3", keep=None).keep is None
    for bad in (0, -5, 2.5, "10"):
        with pytest.raises(UserError, match="keep must be a number of rows"):
            RunLog(tmp_path / "bad.sqlite3", keep=bad)


def _libcst_meta(source: str) -> object:
    """The SKILL literal as the library read it with libcst before (the reference for ``ast``)."""
    import ast

    import libcst as cst

    module = cst.parse_module(source)
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                    if small.targets[0].target.value == "SKILL":
                        return ast.literal_eval(module.code_for_node(small.value))
    return None


def test_skill_metadata_is_read_with_ast_as_libcst_read_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import libcst

    from skillforge._library import _parse_meta

    files = sorted((REPO / "tests" / "golden").glob("*/skill.py"))
    assert len(files) >= 10
    expected = {f: _libcst_meta(f.read_text(encoding="utf-8")) for f in files}

    def refused(*_a: object, **_k: object) -> None:
        raise AssertionError("libcst parsed a file to read its metadata (~2.5 ms a file; ast takes ~0.15 ms)")

    monkeypatch.setattr(libcst, "parse_module", refused)  # the speed is measured in bench.library_scale
    for f in files:
        assert _parse_meta(f, f.read_text(encoding="utf-8")) == expected[f], f


def test_a_skill_file_that_is_not_python_says_where(tmp_path: Path) -> None:
    from skillforge import SkillFileError
    from skillforge._library import _parse_meta

    with pytest.raises(SkillFileError, match=r"not valid Python \(line 2: "):
        _parse_meta(tmp_path / "x.py", "SKILL = {'name': 'x'}\ndef x(:\n    pass\n")
    with pytest.raises(SkillFileError, match="SKILL must be a literal dict"):
        _parse_meta(tmp_path / "x.py", "SKILL = {'name': f()}\ndef x():\n    pass\n")
    with pytest.raises(SkillFileError, match="which the file does not define"):
        _parse_meta(tmp_path / "x.py", "SKILL = {'name': 'y'}\ndef x():\n    pass\n")


def test_a_learn_visits_only_the_skills_that_could_take_its_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What made learning slow down as the library grew: every learn anti-unified its template with
    every template, relearned every family that generalized, and compared programs with every skill."""
    import skillforge._learner as learner
    from bench.library_scale import forge_on, shapes

    forge = forge_on(tmp_path / "skills", tmp_path / "state")
    every = shapes(41)
    for i, shape in enumerate(every[:40]):
        assert forge.solve(f"{shape} #{i + 10}").learned
    calls = {"generalize": 0, "same_program": 0, "_relearned": 0}
    for name in ("generalize", "same_program"):
        real = getattr(learner, name)
        monkeypatch.setattr(learner, name, lambda *a, _real=real, _name=name: calls.__setitem__(_name, calls[_name] + 1) or _real(*a))
    relearned = learner.Learning._relearned
    monkeypatch.setattr(learner.Learning, "_relearned", lambda *a: calls.__setitem__("_relearned", calls["_relearned"] + 1) or relearned(*a))
    last = forge.solve(f"{every[40]} #99")
    assert last.learned == every[40].replace(" ", "_")
    near = sum(1 for s in every[:40] if len(set(s.split()) & set(every[40].split())) >= 2)
    assert calls["generalize"] <= near < 40  # the old code: 40, one per template
    assert calls["same_program"] == 0  # no skill makes this run's calls (each has its own constant)
    assert calls["_relearned"] == 0


def test_the_listing_of_names_follows_hand_edits_between_its_own_writes(tmp_path: Path) -> None:
    """The library keeps its listing across its own writes (a learn does not list 10k files), yet a
    file added or deleted by anyone else is in the next listing and in the next ``__init__.py``."""
    from skillforge._library import Library

    library = Library(tmp_path / "skills")
    library.write("alpha", "x = 1\n", [])
    assert library.names() == ["alpha"]
    (library.dir / "beta.py").write_text("x = 2\n")  # by hand, not through the library
    library.write("gamma", "x = 3\n", [])
    assert library.names() == ["alpha", "beta", "gamma"]
    assert "'beta'" in (library.dir / "__init__.py").read_text()
    (library.dir / "alpha.py").unlink()
    assert library.names() == ["beta", "gamma"]
    library.write("delta", "x = 4\n", [])
    init = (library.dir / "__init__.py").read_text()
    assert "'alpha'" not in init and "'delta'" in init and "'gamma'" in init


def test_a_template_read_lazily_that_cannot_be_built_binds_nothing_instead_of_raising() -> None:
    """A template from the metadata cache makes its pattern when first bound; one whose pattern cannot
    be made (a shape no reader would have passed) binds no task, rather than fail the solve."""
    slots = [Slot("ref", "id", "str", None, "no such shape")]
    with pytest.raises(ValueError, match="shape"):
        TaskTemplate("Refund {ref}", slots)  # built at once: the reader reports the file
    lazy = TaskTemplate("Refund {ref}", slots, lazy=True)
    assert lazy.bind("Refund A-12") is None
    assert TaskTemplate("Refund {ref}", [Slot("ref", "id", "str")], lazy=True).bind("Refund A-12") == {"ref": "A-12"}


def test_a_warm_open_of_many_files_reads_the_cache_at_once_and_still_sees_an_edit(tmp_path: Path) -> None:
    """Past PRELOAD_FILES changed files a scan reads the metadata cache in one query: every skill
    still loads and serves, and a file edited by hand since is parsed again, not taken from the cache."""
    from bench.library_scale import forge_on, shapes
    from skillforge._loading import PRELOAD_FILES

    n = PRELOAD_FILES + 6
    skills, state = tmp_path / "skills", tmp_path / "state"
    learner = forge_on(skills, state)
    tasks = shapes(n)
    for i, shape in enumerate(tasks):
        assert learner.solve(f"{shape} #{100 + i}").learned
    first = sorted(skills.glob("[!_]*.py"))[0]
    first.write_text(first.read_text().replace('"""', '"""Edited by hand. ', 1))

    warm = forge_on(skills, state)
    warm.agent = None  # a miss would raise NoAgentError: every task must be served by its skill
    assert warm.problems == [] and len(warm.skills()) == n
    assert next(s for s in warm.skills() if s.path == first).source.count("Edited by hand.") == 1
    for i in (0, n // 2, n - 1):
        result = warm.solve(f"{tasks[i]} #9{i}")
        assert result.source == "skill", result
