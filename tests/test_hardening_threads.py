"""One Forge shared by threads; the state directory deleted under a running process (issue #14: 11, 12, 16).

The tools are a small bank on SQLite: every thread opens its own connection to one database file,
so the tools are as thread-safe as a real app's; the agent is a deterministic function of the task.
"""

from __future__ import annotations

import logging
import os
import random
import re
import shutil
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

import skillforge
from skillforge import Compiled, Forge
from skillforge._compile import admit_file
from skillforge._library import Library
from skillforge.demo import desk

REPO = Path(__file__).resolve().parent.parent

# -- the bank: tools over one SQLite file, a connection per thread ---------------------------------

_tools_forge = skillforge.Forge(skills_dir="unused-skills", state_dir="unused-state", run_log=False)
_bank = threading.local()
_bank_path: list[Path] = []  # the database of the running test

ACCOUNTS = [str(n) for n in range(101, 113)]
FROZEN = {"104", "109"}
WORDS = [
    "rent", "groceries", "salary", "bonus", "refunds", "savings", "travel", "tuition", "gifts", "repairs", "taxes", "dues",
    "fuel", "books", "music", "garden", "insurance", "pension", "tips", "charity", "clothing", "furniture", "parking", "lunch",
]
CODES = {w: f"K-{i:02d}" for i, w in enumerate(WORDS)}
TASK = re.compile(r"Deposit (\d+) into account (\d+) for (\w+)\.")


def _db() -> sqlite3.Connection:
    path = _bank_path[-1]
    conn = getattr(_bank, "conn", None)
    if conn is None or _bank.path != path:
        conn = sqlite3.connect(str(path), timeout=30.0)
        _bank.conn, _bank.path = conn, path
    return conn


def _close_db() -> None:
    conn = getattr(_bank, "conn", None)
    if conn is not None:
        conn.close()
        _bank.conn = None


@_tools_forge.tool(read=True)
def get_account(account_id: str) -> dict:
    """Look up an account: its id and status."""
    row = _db().execute("SELECT id, status FROM accounts WHERE id = ?", (account_id,)).fetchone()
    return {"id": row[0], "status": row[1]}


@_tools_forge.tool
def deposit(account_id: str, amount: int, code: str) -> dict:
    """Deposit an amount into an account, booked under a category code."""
    conn = _db()
    with conn:
        conn.execute("INSERT INTO deposits (account_id, amount, code) VALUES (?, ?, ?)", (account_id, amount, code))
    return {"ok": True}


BANK_TOOLS = [get_account, deposit]


def open_bank(path: Path) -> None:
    conn = sqlite3.connect(str(path))
    with conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE accounts (id TEXT PRIMARY KEY, status TEXT NOT NULL)")
        conn.execute("CREATE TABLE deposits (account_id TEXT NOT NULL, amount INTEGER NOT NULL, code TEXT NOT NULL)")
        conn.executemany(
            "INSERT INTO accounts VALUES (?, ?)", [(a, "frozen" if a in FROZEN else "open") for a in ACCOUNTS]
        )
    conn.close()
    _bank_path.append(path)


def bank_agent(task: str) -> str:
    """Deterministic: look the account up, deposit if it is open, say what was done."""
    m = TASK.fullmatch(task)
    if m is None:
        raise ValueError(f"not a bank task: {task!r}")
    amount, account, word = int(m[1]), m[2], m[3]
    info = get_account(account_id=account)
    if info["status"] != "open":
        return f"Account {account} is {info['status']}; nothing was deposited."
    deposit(account_id=account, amount=amount, code=CODES[word])
    return f"Deposited {amount} into account {account}."


def expected(task: str) -> tuple[str, tuple[str, int, str] | None]:
    """What the agent would answer, and the deposit it would make."""
    m = TASK.fullmatch(task)
    assert m is not None
    amount, account, word = int(m[1]), m[2], m[3]
    if account in FROZEN:
        return f"Account {account} is frozen; nothing was deposited.", None
    return f"Deposited {amount} into account {account}.", (account, amount, CODES[word])


def tasks_of(thread: int, n: int) -> list[str]:
    """Thread ``thread``'s tasks: unique amounts; new category words keep arriving (misses that learn)."""
    rng = random.Random(1000 + thread)
    out = []
    for i in range(n):
        word = WORDS[rng.randrange(min(len(WORDS), 1 + i * len(WORDS) * 6 // (5 * n)))]  # all in use by 5/6 of the way
        out.append(f"Deposit {10000 + thread * 1000 + i} into account {rng.choice(ACCOUNTS)} for {word}.")
    return out


@pytest.fixture
def bank(tmp_path: Path):
    open_bank(tmp_path / "bank.sqlite3")
    yield tmp_path / "bank.sqlite3"
    _close_db()
    _bank_path.pop()


def _bank_forge(tmp_path: Path, **kw) -> Forge:
    return Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", tools=BANK_TOOLS, agent=bank_agent, **kw)


# -- item 11: eight threads, one Forge ---------------------------------------------------------------

THREADS = 8
SOLVES = int(os.environ.get("SKILLFORGE_STRESS_SOLVES", "300"))  # per thread


def test_eight_threads_share_one_forge_solving_and_learning(tmp_path: Path, bank: Path) -> None:
    forge = _bank_forge(tmp_path)
    plans = [tasks_of(t, SOLVES) for t in range(THREADS)]
    results: list[list[object]] = [[] for _ in range(THREADS)]
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def work(t: int) -> None:
        try:
            start.wait()
            for task in plans[t]:
                results[t].append(forge.solve(task))
        except BaseException as e:  # noqa: BLE001 - every escape is the failure this test looks for
            errors.append(e)
        finally:
            _close_db()

    began = time.perf_counter()
    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    took = time.perf_counter() - began
    assert not errors, f"{len(errors)} exceptions escaped solve(); the first: {errors[0]!r}"

    want_deposits: Counter[tuple[str, int, str]] = Counter()
    flat = []
    for t in range(THREADS):
        assert len(results[t]) == SOLVES
        for task, r in zip(plans[t], results[t], strict=True):
            output, dep = expected(task)
            assert r.ok and r.output == output, (task, r.source, r.skill, r.error, r.output)
            if dep is not None:
                want_deposits[dep] += 1
            flat.append(r)
    conn = sqlite3.connect(str(bank))
    got = Counter(tuple(row) for row in conn.execute("SELECT account_id, amount, code FROM deposits"))
    conn.close()
    assert got == want_deposits  # no write lost, none made twice

    hits = sum(1 for r in flat if r.source == "skill")
    learned = {r.learned for r in flat if r.learned}
    assert hits > len(flat) // 2 and len(learned) >= len(WORDS) // 2, (hits, sorted(learned))

    # the run log has a row for every solve
    stats = forge.stats()
    assert stats.overall.solves == THREADS * SOLVES and stats.overall.hits == hits

    # every skill written reads back, runs in a new forge, and reproduces its recorded runs
    fresh = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "fresh-state", tools=BANK_TOOLS)
    assert fresh.problems == []
    assert [s.name for s in fresh.skills()] == [s.name for s in forge.skills()]
    lib = Library(tmp_path / "skills")
    for skill in fresh.skills():
        for run_hash in skill.runs:
            assert isinstance(admit_file(skill, lib.load_run(run_hash)), Compiled), skill.name
    for k, word in enumerate(WORDS):  # no agent: each is served by a skill, or solve() raises
        task = f"Deposit {99000 + k} into account 101 for {word}."
        r = fresh.solve(task)
        assert r.source == "skill" and r.output == expected(task)[0], (task, r.error)
    logging.getLogger(__name__).info("%d threads x %d solves: %.1f s", THREADS, SOLVES, took)


def test_the_library_lock_is_one_lock_for_every_thread(tmp_path: Path) -> None:
    """Threads taking the library lock for the first time at once, then again inside it (as learning does)."""
    for round_ in range(20):
        lib = Library(tmp_path / f"skills{round_}")
        gate = threading.Barrier(8)
        errors: list[BaseException] = []
        inside: list[int] = []

        def work() -> None:
            try:
                gate.wait()
                with lib.lock():
                    inside.append(1)
                    with lib.lock():  # re-entrant within a thread
                        assert len(inside) == 1  # one thread at a time
                    inside.pop()
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert not errors, repr(errors[0])


def test_threads_opening_the_semantic_index_at_once_all_find_the_skill(tmp_path: Path) -> None:
    shutil.copytree(REPO / "skills", tmp_path / "skills")
    for round_ in range(3):
        forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / f"state{round_}", tools=desk.TOOLS)
        forge.skills()  # the hot index is read; the semantic index is not opened yet
        gate = threading.Barrier(8)
        found: list[list[str]] = []
        errors: list[BaseException] = []

        def look() -> None:
            try:
                gate.wait()
                found.append(forge._semantic_candidates("Please ship order #7 to 5 Harbor Road, Riverton tomorrow."))
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=look) for _ in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert not errors, repr(errors[0])
        assert len(found) == 8 and all(names and names[0].startswith("ship_order_instead") for names in found), found
        assert forge.semantic.collection.count() == len(forge.skills())


# -- item 12: the state directory deleted under a running process ----------------------------------


def _deposit_task(word: str, account: str = "101", amount: int = 12345) -> str:
    return f"Deposit {amount} into account {account} for {word}."


def test_deleting_the_state_dir_under_a_running_forge_recreates_it(tmp_path: Path, bank: Path) -> None:
    forge = _bank_forge(tmp_path)
    assert forge.solve(_deposit_task("rent")).learned
    assert forge.solve(_deposit_task("rent", amount=12346)).source == "skill"
    forge.reindex()  # the semantic index is open and in use
    assert forge.find("Deposit 5 into account 101 for rent tomorrow.") is None  # a miss asks Chroma
    forge.stats()  # the run log is open

    shutil.rmtree(tmp_path / "state")  # documented as derived: "deleting it loses nothing"

    learned = forge.solve(_deposit_task("salary"))
    assert learned.learned and learned.ok
    assert forge.solve(_deposit_task("salary", amount=12347)).source == "skill"
    assert forge.reindex() == 0  # no error, and the new skill is in the recreated index
    ids = set(forge.semantic.collection.get()["ids"])
    assert {s.name for s in forge.skills()} == ids
    assert (tmp_path / "state" / "chroma" / "chroma.sqlite3").is_file()
    stats = forge.stats()  # the run log is recreated: the solves since the deletion are in it
    assert stats.overall.solves == 2 and (tmp_path / "state" / "runs.sqlite3").is_file()
    forge.runlog.close()
    forge.cache.save()
    assert (tmp_path / "state" / "library.sqlite3").is_file()


def test_the_semantic_index_finds_skills_learned_after_its_store_was_deleted(tmp_path: Path, bank: Path) -> None:
    forge = _bank_forge(tmp_path)
    forge.solve(_deposit_task("rent"))
    assert forge.semantic.query(_deposit_task("rent"), n=1) == []  # not opened yet: empty (first sync on a miss)
    forge.reindex()
    shutil.rmtree(tmp_path / "state")
    learned = forge.solve(_deposit_task("salary")).learned
    assert learned
    assert learned in forge.semantic.query(_deposit_task("salary", amount=5), n=2)


def _corrupt_log(forge: Forge) -> Path:
    path = forge.state_dir / "runs.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a database" * 200)
    return path


def test_a_corrupt_run_log_is_a_clear_error_and_skills_still_lists(tmp_path: Path, monkeypatch) -> None:
    from skillforge import SkillforgeError
    from skillforge.cli import cli

    shutil.copytree(REPO / "skills", tmp_path / "skills")
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", tools=desk.TOOLS)
    path = _corrupt_log(forge)
    with pytest.raises(SkillforgeError, match="delete it") as info:
        forge.stats()
    assert str(path) in str(info.value)

    import tests.test_hardening_threads as me

    monkeypatch.setattr(me, "cli_forge", forge, raising=False)
    runner = CliRunner()
    listed = runner.invoke(cli, ["skills", "--app", "tests.test_hardening_threads:cli_forge"])
    assert listed.exit_code == 0, listed.output
    assert "refund_order" in listed.stdout and "where_order" in listed.stdout
    assert re.search(r"^refund_order +- +Refund order", listed.stdout, re.M)  # hits unknown, not 0
    assert "run log" in listed.stderr and str(path) in listed.stderr and "delete" in listed.stderr
    shown = runner.invoke(cli, ["stats", "--app", "tests.test_hardening_threads:cli_forge"])
    assert shown.exit_code == 1 and "Traceback" not in shown.output
    assert str(path) in shown.stderr and "delete" in shown.stderr
    path.unlink()  # the fix the message gives
    assert runner.invoke(cli, ["stats", "--app", "tests.test_hardening_threads:cli_forge"]).exit_code == 0


def test_solves_go_on_with_a_corrupt_run_log(tmp_path: Path, bank: Path, caplog) -> None:
    forge = _bank_forge(tmp_path)
    _corrupt_log(forge)
    r = forge.solve(_deposit_task("rent"))
    assert r.ok and r.learned
    forge.runlog.flush()  # the log is statistics: a write that fails is a warning, never a failed solve
    assert "run log" in caplog.text


def test_a_forked_child_takes_the_library_lock_of_its_own(tmp_path: Path) -> None:
    """filelock refuses a FileLock inherited across fork: the child makes its own."""
    lib = Library(tmp_path / "skills")
    with lib.lock():
        pass
    pid = os.fork()
    if pid == 0:  # the child: exit status says whether the lock could be taken
        try:
            with lib.lock():
                pass
        except BaseException:  # noqa: BLE001
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
