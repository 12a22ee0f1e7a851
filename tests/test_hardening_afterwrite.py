"""After a write, solve() returns: what went wrong is in the result and in the run log, never raised.

Once a tool that writes may have run, the task's effects are in the world: raising would hide them
from the caller, and a caller that retries would repeat them. Each case below makes one step after
the first write fail for real (a hostile tool value, a skills directory that cannot be written, an
agent or a tool that misbehaves, a skill's guard raised through the agent) and checks that
``solve()`` returns, that the result says what went wrong, that the run log has the solve, and that
no write was made twice. Misuse found before anything ran (an empty task, no agent) still raises.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from skillforge import Check, Forge, InvalidTaskError, ToolDefinitionError
from tests.toolsets import hostile, shop

SURROGATE = json.loads('"\\ud800"')  # a lone surrogate, as json.loads makes from a broken "\ud800" escape


@pytest.fixture(autouse=True)
def _clean_world() -> Iterator[None]:
    hostile.reset()
    yield
    hostile.reset()


def make_forge(tmp_path: Path, name: str = "f", *, skills_dir: Path | None = None, learn: bool = True,
               guard: Check | None = None, post_guard: Check | None = None, importable: bool = True) -> Forge:
    forge = Forge(
        skills_dir=skills_dir or tmp_path / f"{name}-skills", state_dir=tmp_path / f"{name}-state",
        agent=hostile.agent, learn=learn, importable_skills=importable,
    )
    hostile.TOOLBOX["get_thing"] = forge.tool(read=True)(hostile.get_thing)
    hostile.TOOLBOX["close_thing"] = forge.tool(guard=guard, post_guard=post_guard)(hostile.close_thing)
    hostile.TOOLBOX["close_via_skill"] = forge.tool(hostile.close_via_skill)
    hostile.FORGE["forge"] = forge
    return forge


def unwritable_skills_dir(tmp_path: Path) -> Path:
    """A skills directory nothing can be written to: read-only (chmod 0o500), or, where that does not
    stop writes (root, with CAP_DAC_OVERRIDE), a regular file where the directory should be."""
    path = tmp_path / "locked-skills"
    path.mkdir()
    path.chmod(0o500)
    try:
        (path / "probe").write_text("")
    except PermissionError:
        return path  # read-only for us
    (path / "probe").unlink()
    path.chmod(0o700)
    path.rmdir()
    path.write_text("not a directory\n")
    return path


def log_rows(forge: Forge) -> list[tuple[Any, ...]]:
    """The run log's rows (task, source, ok, error, learned), read back from its SQLite file."""
    assert forge.runlog is not None
    forge.runlog.flush()
    with sqlite3.connect(forge.state_dir / "runs.sqlite3") as db:
        return db.execute("SELECT task, source, ok, error, learned FROM log ORDER BY at").fetchall()


def skill_function(forge: Forge, name: str) -> Callable[..., Any]:
    """The learned skill imported from its file as a plain function (no forge in the loop)."""
    spec = importlib.util.spec_from_file_location(f"hostile_skill_{name}", forge.skills_dir / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)  # type: ignore[no-any-return]


def self_referring() -> dict[str, Any]:
    loop: dict[str, Any] = {"kind": "receipt"}
    loop["again"] = loop
    return loop


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


class Unprintable:
    """A value whose repr raises."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def raising_capture(**args: Any) -> Any:
    raise ConnectionError("the audit service is down")


@dataclass
class Case:
    """One failure after the first write: how to make it, and what the result must say."""

    task: str = "Close thing #42"
    hostile: dict[str, Any] = field(default_factory=dict)
    error: str | None = None  # a part of result.error (None: the solve succeeded)
    not_learned: str | None = None  # a part of result.not_learned
    writes: tuple[str, ...] = ("42",)
    source: str = "agent"
    output: str | None = "Closed thing 42."


CASES: dict[str, Case] = {
    "a-result-that-refers-to-itself": Case(hostile={"write_extra": {"receipt": self_referring()}}, not_learned="contains itself"),
    "a-result-nested-deeper-than-python-recurses": Case(hostile={"write_extra": {"trail": nested(3_000)}}, not_learned="nested"),
    "a-lone-surrogate-in-a-result": Case(hostile={"read_extra": {"note": f"caf{SURROGATE}"}}, not_learned="surrogate"),
    "a-lone-surrogate-in-the-task": Case(task=f"Close thing #42 {SURROGATE}", not_learned="surrogate"),
    "an-int-of-5000-digits-in-a-result": Case(hostile={"write_extra": {"receipt": 10**5000}}, not_learned="digits"),
    "non-string-dict-keys-in-a-result": Case(hostile={"write_extra": {"parts": {(1, 2): "x"}}}, not_learned="dict key"),
    "a-pre-check-capture-that-raises": Case(hostile={"pre_check": "raise"}, not_learned="pre-check"),
    "a-post-check-capture-that-raises": Case(hostile={"post_check": "raise"}, not_learned="post-check"),
    "an-unwritable-skills-dir": Case(hostile={"skills": "unwritable"}, not_learned="could not write"),
    "the-agent-raising-after-its-write": Case(hostile={"after_write": "raise"}, error="RuntimeError", output=None),
    "a-misuse-inside-the-agent-after-its-write": Case(hostile={"after_write": "user-error"}, error="InvalidTaskError", output=None),
    "a-guard-of-a-skill-the-agent-calls": Case(hostile={"after_write": "skill"}, error="GuardFailed", output=None),
    "a-guard-of-a-skill-a-tool-calls": Case(hostile={"after_write": "tool-skill"}, error="close_via_skill", output=None),
    "a-handover-after-a-write-that-returned-itself": Case(
        hostile={"learn_first": True, "write_status": "pending", "write_extra": {"receipt": self_referring()}},
        source="skill+agent", not_learned="contains itself",
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_after_a_write_solve_returns_says_what_went_wrong_logs_the_solve_and_repeats_no_write(
    case: Case, tmp_path: Path
) -> None:
    how = dict(case.hostile)
    failing = Check(capture=raising_capture, compare=lambda now, then: True)
    guard = failing if how.pop("pre_check", None) else None
    post_guard = failing if how.pop("post_check", None) else None
    skills = unwritable_skills_dir(tmp_path) if how.pop("skills", None) else None
    learn_first = how.pop("learn_first", False)
    if learn_first or how.get("after_write") in ("skill", "tool-skill"):
        teacher = make_forge(tmp_path, "teacher")  # learns a skill from a clean run
        learned = teacher.solve("Close thing #1").learned
        assert learned is not None
        hostile.SKILL.update(func=skill_function(teacher, learned), other="7")
        hostile.STATUS["7"] = "closed"  # the skill's guard on the thing's status stops it for thing 7
        hostile.WRITES.clear()
    forge = teacher if learn_first else make_forge(tmp_path, skills_dir=skills, guard=guard, post_guard=post_guard)
    hostile.HOSTILE.update(how)

    result = forge.solve(case.task)  # must not raise

    assert result.source == case.source, result
    assert result.output == case.output
    if case.error is None:
        assert result.error is None, result.error
    else:
        assert result.error is not None and case.error in result.error, result.error
    if case.not_learned is not None:
        assert result.learned is None
        assert result.not_learned is not None and case.not_learned in result.not_learned, result.not_learned
    assert tuple(hostile.WRITES) == case.writes  # each write made once
    rows = log_rows(forge)
    mine = [r for r in rows if r[0].startswith("Close thing #42")]
    assert len(mine) == 1, rows
    assert mine[0][1:4] == (result.source, int(result.ok), result.error)
    assert forge.stats().overall.solves == len(rows)


def test_a_message_of_two_requests_whose_skills_cannot_be_written_is_served_and_logged(tmp_path: Path) -> None:
    shop.make_world(tmp_path / "shop.sqlite3")
    forge = Forge(skills_dir=unwritable_skills_dir(tmp_path), state_dir=tmp_path / "state", agent=shop.agent)
    for f in shop.TOOLS:
        shop.TOOLBOX[f.__name__] = forge.tool(read=f.__name__ in shop.READS)(f)
    task = "I'm ana@example.com. Cancel order #W11 because it was a mistake. Ship order #W12 to 5 Oak Lane."
    try:
        result = forge.solve(task)
    finally:
        shop.TOOLBOX.clear()
    assert result.ok and result.output == "Cancelled order #W11. Order #W12 now ships to 5 Oak Lane."
    assert result.learned is None and result.not_learned is not None and "could not write" in result.not_learned
    writes = [c.tool for c in result.calls if c.tool not in shop.READS]
    assert writes == ["cancel_order", "ship_to"]
    assert [r[0] for r in log_rows(forge)] == [task]


def test_a_result_with_non_string_keys_neither_fails_the_later_solve_that_flushes_nor_drops_its_batch(
    tmp_path: Path,
) -> None:
    forge = make_forge(tmp_path)
    assert forge.runlog is not None
    forge.runlog.batch = 3  # the third solve writes the batch
    hostile.HOSTILE["write_extra"] = {"parts": {(1, 2): "x"}}
    first = forge.solve("Close thing #1")
    assert first.ok and "dict key" in (first.not_learned or "")
    hostile.HOSTILE.clear()
    forge.solve("Close thing #2")
    third = forge.solve("Close thing #3")  # flushes the batch: an unrelated solve, which must not raise
    assert third.ok and third.source == "skill"
    assert [r[0] for r in log_rows(forge)] == ["Close thing #1", "Close thing #2", "Close thing #3"]
    with sqlite3.connect(forge.state_dir / "runs.sqlite3") as db:
        (calls,) = db.execute("SELECT calls FROM solves WHERE task = 'Close thing #1'").fetchone()
    assert json.loads(calls)[1][2]["parts"] == {"(1, 2)": "x"}  # the key as its repr: the log is for people


def test_rows_json_or_sqlite_cannot_take_as_they_are_are_written_as_near_as_they_can_be(tmp_path: Path) -> None:
    forge = make_forge(tmp_path)
    assert forge.runlog is not None
    forge.runlog.batch = 4
    hostile.HOSTILE["write_extra"] = {"receipt": self_referring(), "big": 10**5000, "deep": nested(5000)}
    cyclic = forge.solve("Close thing #1")
    hostile.HOSTILE["write_extra"] = {"odd": Unprintable()}
    unprintable = forge.solve("Close thing #2")
    hostile.HOSTILE.clear()
    surrogate = forge.solve(f"Close thing #3 {SURROGATE}")
    last = forge.solve("Close thing #4")
    assert cyclic.ok and unprintable.ok and surrogate.ok and last.ok
    assert [r[0] for r in log_rows(forge)] == ["Close thing #1", "Close thing #2", "Close thing #3 \\ud800", "Close thing #4"]
    assert forge.stats().overall.solves == 4
    with sqlite3.connect(forge.state_dir / "runs.sqlite3") as db:
        written = [json.loads(c)[1][2] for (c,) in db.execute("SELECT calls FROM solves WHERE task < 'Close thing #3'")]
    assert written[0]["receipt"]["again"] == "<a reference cycle>"
    assert written[0]["big"] == "<an int of 16,610 bits>"
    assert "nested deeper than" in json.dumps(written[0]["deep"])
    assert written[1]["odd"] == "<Unprintable>"


@pytest.mark.parametrize(
    ("func", "says"),
    [
        (hostile.Box.stamp, "Box.stamp"),
        (hostile.Box.seal, "Box.seal"),
        (hostile.unnamed, "a lambda"),
    ],
    ids=["staticmethod", "classmethod", "lambda"],
)
def test_a_tool_a_skill_file_cannot_import_is_refused_at_registration_saying_how_to_fix_it(
    func: Callable[..., Any], says: str, tmp_path: Path
) -> None:
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state")
    with pytest.raises(ToolDefinitionError, match="cannot import") as refused:
        forge.tool(name="stamp")(func)
    assert says in str(refused.value) and "module level" in str(refused.value)
    assert "stamp" not in forge.registry


def test_a_staticmethod_tool_of_an_in_process_forge_is_learned_and_replayed_by_its_registry_name(tmp_path: Path) -> None:
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", importable_skills=False)
    stamp = forge.tool(name="stamp")(hostile.Box.stamp)

    def agent(task: str) -> str:
        stamp(thing_id=task.rsplit("#", 1)[1])
        return "Stamped."

    forge.agent = agent
    assert forge.solve("Stamp thing #1").learned == "stamp_thing"
    hit = forge.solve("Stamp thing #2")
    assert hit.source == "skill" and [c.args for c in hit.calls] == [{"thing_id": "2"}]


def test_a_misuse_before_any_write_still_raises(tmp_path: Path) -> None:
    forge = make_forge(tmp_path)
    hostile.STATUS["42"] = "closed"  # the agent reads, writes nothing, then misuses skillforge
    hostile.HOSTILE["after_write"] = "user-error"
    with pytest.raises(InvalidTaskError):
        forge.solve("Close thing #42")
    assert hostile.WRITES == []


def test_an_interrupt_after_a_write_propagates_and_the_solve_is_logged(tmp_path: Path) -> None:
    forge = make_forge(tmp_path)

    def interrupted(task: str) -> str:
        hostile.TOOLBOX["close_thing"](thing_id="42")
        raise KeyboardInterrupt

    forge.agent = interrupted
    with pytest.raises(KeyboardInterrupt):
        forge.solve("Close thing #42")
    assert hostile.WRITES == ["42"]
    assert [(r[0], r[2]) for r in log_rows(forge)] == [("Close thing #42", 0)]


FULL_DISK = """
import json, resource, signal, sys
from pathlib import Path
from skillforge import Forge
from tests.toolsets import hostile

root = Path(sys.argv[1])
forge = Forge(skills_dir=root / "skills", state_dir=root / "state", agent=hostile.agent)
hostile.TOOLBOX["get_thing"] = forge.tool(read=True)(hostile.get_thing)
hostile.TOOLBOX["close_thing"] = forge.tool(hostile.close_thing)
forge.skills(); forge.runlog.flush(); forge.runlog._connect()  # the state files exist before the disk "fills"
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing us
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (512, hard))  # no file may grow past 512 bytes: the disk is full
try:
    result = forge.solve("Close thing #42")
finally:
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
print(json.dumps({"ok": result.ok, "output": result.output, "not_learned": result.not_learned, "writes": hostile.WRITES,
                  "rows": forge.stats().overall.solves, "files": sorted(p.name for p in (root / "skills").glob("*.py"))}))
"""


@pytest.mark.skipif(not hasattr(os, "fork") or not Path("/proc").exists(), reason="RLIMIT_FSIZE is a Linux limit")
def test_a_full_disk_under_skills_costs_the_learning_not_the_solve(tmp_path: Path) -> None:
    """A file-size limit (RLIMIT_FSIZE, in a child process) makes every write past 512 bytes fail as a full
    disk does (EFBIG where a full disk says ENOSPC); root cannot write past it either."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", FULL_DISK, str(tmp_path)], cwd=repo, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["ok"] and seen["output"] == "Closed thing 42." and seen["writes"] == ["42"]
    assert "could not write" in seen["not_learned"] and "File too large" in seen["not_learned"]
    assert seen["rows"] == 1 and seen["files"] == []
