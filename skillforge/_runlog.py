"""The run log: every ``solve()`` recorded in SQLite under the state directory.

Recording is a list append on the hot path; rows are written in batches (every
1,024 solves or 5 seconds, and when the process exits or stats are read), in one
transaction, so a skill hit does not pay for a disk write. A clean skill hit is
a small row in ``hits`` (task, skill, number of calls, duration: its calls follow
from its task and its skill); every other solve a full row in ``solves`` (so is a hit
that reported model usage: a tool that calls a model, see ``report_usage``). The
view ``log`` shows both. A message served by composing skills (several requests, see
``_composing``) also has a row per clause in ``clauses``: its text and the skill that served
it (or stopped, when the agent took over). Several processes
may share one log (WAL mode, a busy timeout).

A shadow run (the same task solved by the agent alone from the same starting world, see
``bench/shadow.py``) records its verdict on each task a skill served in ``shadow``
(``record_shadow``): whether the replay was wrong, and how. ``skillforge report`` shows
these counts per skill; a log without shadow rows says no shadow run was recorded.

Retention: the log keeps the newest ``keep`` rows of each table (``DEFAULT_KEEP``, 100,000:
about 11 MB of hits at ~110 bytes each); older rows are deleted when a batch is written, so
``stats()`` covers the retained rows. ``RunLog(path, keep=None)`` (or ``forge.runlog.keep = None``)
keeps everything.
"""

from __future__ import annotations

import atexit
import json
import logging
import sqlite3
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._exceptions import RunLogError, UserError
from ._files import identity
from ._trajectory import shown

__all__ = ["DEFAULT_KEEP", "RunLog", "SkillStats", "Stats", "retain"]

logger = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS solves (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    task TEXT NOT NULL,
    source TEXT NOT NULL,
    skill TEXT,
    learned TEXT,
    ok INTEGER NOT NULL,
    error TEXT,
    handover TEXT,
    n_calls INTEGER NOT NULL,
    calls TEXT,
    llm_calls INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    duration REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS hits (
    at REAL NOT NULL,
    task TEXT NOT NULL,
    skill TEXT NOT NULL,
    n_calls INTEGER NOT NULL,
    duration REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS clauses (
    at REAL NOT NULL,
    task TEXT NOT NULL,
    position INTEGER NOT NULL,
    clause TEXT NOT NULL,
    skill TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS shadow (
    at REAL NOT NULL,
    task TEXT NOT NULL,
    source TEXT NOT NULL,
    skill TEXT NOT NULL,
    wrong INTEGER NOT NULL,
    detail TEXT
);
CREATE VIEW IF NOT EXISTS log AS
    SELECT at, task, source, skill, learned, ok, error, handover, n_calls, calls,
           llm_calls, prompt_tokens, completion_tokens, duration FROM solves
    UNION ALL
    SELECT at, task, 'skill', skill, NULL, 1, NULL, NULL, n_calls, NULL, 0, 0, 0, duration FROM hits;
"""


DEFAULT_KEEP = 100_000  # rows per table: ~11 MB of hits (a hit row is ~110 bytes); a full batch adds 1,024


def retain(conn: sqlite3.Connection, keep: int) -> int:
    """Delete all but the newest ``keep`` rows of each table of the log; the number deleted.

    Rows are appended in time order, so the newest are those of the highest rowid: one indexed
    range delete per table, of only the rows past the limit.
    """
    deleted = 0
    for table in ("solves", "hits", "clauses", "shadow"):
        cur = conn.execute(f"DELETE FROM {table} WHERE rowid <= (SELECT max(rowid) FROM {table}) - ?", (keep,))
        deleted += max(cur.rowcount, 0)
    return deleted


@dataclass(frozen=True)
class SkillStats:
    """How one skill (or, with name None, everything) has served."""

    name: str | None
    solves: int
    hits: int
    agent: int
    handovers: int
    failed: int
    llm_calls: int
    tokens: int
    requests_saved: float
    tokens_saved: float
    median_hit_ms: float | None


@dataclass(frozen=True)
class Stats:
    overall: SkillStats
    skills: list[SkillStats]


class RunLog:
    """Append-only log of solves; ``stats()`` summarises it."""

    def __init__(self, path: Path, *, batch: int = 1024, seconds: float = 5.0, keep: int | None = DEFAULT_KEEP) -> None:
        if keep is not None and (type(keep) is not int or keep < 1):
            raise UserError(f"the run log's keep must be a number of rows >= 1, or None to keep every row (got {keep!r})")
        self.path = path
        self.keep = keep  # rows kept per table (see ``retain``); None keeps every row
        self.batch = batch
        self.seconds = seconds
        self._pending: list[tuple[float, Any]] = []
        self._hits: list[tuple[float, str, str, int, float]] = []
        self._clauses: list[tuple[float, str, int, str, str]] = []  # a message served by composing skills: which served what
        self._last_flush = time.monotonic()
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._file: tuple[int, int] | None = None  # which file ``_conn`` has open (device, inode)
        atexit.register(_flush_at_exit, weakref.ref(self))

    def _connect(self) -> sqlite3.Connection:
        """The open log; made again if its file was deleted or replaced since (a state dir removed).

        Raises ``sqlite3.DatabaseError`` if the file is not a run log (``stats`` says how to fix it).
        """
        if self._conn is not None and identity(self.path) != self._file:
            logger.warning("the run log %s was deleted or replaced; solves are recorded in a new one from now on", self.path)
            self._conn.close()
            self._conn = None
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(self.path), timeout=10.0, check_same_thread=False)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.executescript(_SCHEMA)
            except sqlite3.Error:
                conn.close()
                raise
            self._conn = conn
            self._file = identity(self.path)
        return self._conn

    def record(self, result: Any) -> None:
        """Queue one solve; written with the next batch. Never raises."""
        now = time.time()
        with self._lock:  # flush swaps the queues under it: an append never lands in a queue being written
            self._clauses.extend((now, result.task, i, clause, skill) for i, (clause, skill) in enumerate(result.clauses))
            if result.source == "skill" and result.error is None and not _used_model(result):  # a clean hit: a small row
                self._hits.append((now, result.task, result.skill, len(result._raw_calls), result.duration))
            else:
                self._pending.append((now, result))
            due = len(self._hits) + len(self._pending) >= self.batch or time.monotonic() - self._last_flush > self.seconds
        if due:
            self.flush()

    def flush(self) -> None:
        """Write every queued solve now, in one transaction. Never raises, and a row that cannot be
        written as it is (a task with a lone surrogate, calls JSON cannot carry) is written as near
        as it can be, never at the cost of the other rows of its batch."""
        with self._lock:
            pending, self._pending = self._pending, []
            hits, self._hits = self._hits, []
            clauses, self._clauses = self._clauses, []
            self._last_flush = time.monotonic()
            if not pending and not hits:
                return
            rows = [_solve_row(at, r) for at, r in pending]
            batch = [(_HITS, [_cells(h) for h in hits]), (_CLAUSES, [_cells(c) for c in clauses]), (_SOLVES, rows)]
            try:
                conn = self._connect()
                try:
                    with conn:
                        for sql, these in batch:
                            conn.executemany(sql, these)
                except (sqlite3.InterfaceError, ValueError, OverflowError, TypeError):  # one row's cells: write row by row
                    self._insert_one_by_one(conn, batch)
                if self.keep is not None:
                    with conn:
                        retain(conn, self.keep)
            except Exception as e:  # the log is a record, not the product: never fail a solve over it
                logger.warning("could not write %d solves to the run log %s: %s", len(rows) + len(hits), self.path, e)

    def _insert_one_by_one(self, conn: sqlite3.Connection, batch: list[tuple[str, list[tuple[Any, ...]]]]) -> None:
        """Insert each row on its own, so that one the database refuses costs that row only."""
        for sql, these in batch:
            for row in these:
                try:
                    with conn:
                        conn.execute(sql, row)
                except (sqlite3.InterfaceError, ValueError, OverflowError, TypeError) as e:
                    logger.warning("the run log %s dropped a row it cannot store (%s): %r", self.path, e, row[:3])

    def __del__(self) -> None:
        # a Forge dropped before exit (the exit hook holds the log weakly): its queued solves are written
        try:
            if getattr(self, "_pending", None) or getattr(self, "_hits", None):
                self.flush()
            conn = getattr(self, "_conn", None)
            if conn is not None:
                conn.close()
        except Exception:  # a finalizer (perhaps at interpreter shutdown) has no one to raise to
            pass

    def close(self) -> None:
        self.flush()
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of a query of the log, after writing every queued solve.

        Raises:
            RunLogError: the file is not a run log (it says how to fix it).
        """
        self.flush()
        with self._lock:
            try:
                return self._connect().execute(sql, params).fetchall()
            except sqlite3.DatabaseError as e:
                raise RunLogError(
                    f"the run log {self.path} cannot be read ({e}); it holds statistics only (skills/ is the truth): "
                    "delete it and a new one is started"
                ) from e

    def record_shadow(self, result: Any, *, wrong: bool, detail: str | None = None) -> bool:
        """Record a shadow run's verdict on ``result``: ``wrong`` if the agent alone, from the same
        starting world, wrote or answered otherwise (``detail`` says how). Written at once.

        Only a replay has a verdict: a result the agent served alone (``source == "agent"``) is not
        recorded, and False is returned.

        Example::

            result = forge.solve(task)
            alone = agent(task)  # on a copy of the world made before the solve
            forge.runlog.record_shadow(result, wrong=result.output != alone)

        Raises:
            RunLogError: the log cannot be written.
        """
        if result.source == "agent" or not result.skill:
            return False
        row = _cells((time.time(), result.task, result.source, result.skill, int(bool(wrong)), detail))
        with self._lock:
            try:
                conn = self._connect()
                with conn:
                    conn.execute(_SHADOW, row)
            except sqlite3.Error as e:
                raise RunLogError(f"could not record a shadow verdict in the run log {self.path}: {e}") from e
        return True

    def stats(self) -> Stats:
        """Hits, misses, handovers, model requests and tokens (made and saved), overall and per skill.

        Requests saved by a hit are estimated as the mean requests of the agent runs
        of the same skill's shape (the runs that taught or widened it), or of all agent
        runs when the skill has none in the log. A message served by composing skills is a
        hit of each of them, and a run of several requests taught each skill it wrote.
        """
        rows = self.read("SELECT source, skill, learned, ok, llm_calls, prompt_tokens + completion_tokens, duration FROM log")
        agent_rows = [r for r in rows if r[0] != "skill"]
        mean_req = sum(r[4] for r in agent_rows) / len(agent_rows) if agent_rows else 0.0
        mean_tok = sum(r[5] for r in agent_rows) / len(agent_rows) if agent_rows else 0.0
        taught: dict[str, list[tuple[int, int]]] = {}
        for r in agent_rows:
            if r[2]:
                for learned in r[2].split(", "):  # the requests of one message: a skill each
                    taught.setdefault(learned, []).append((r[4], r[5]))
        names = sorted({n for r in rows if r[1] for n in r[1].split(" + ")} | set(taught))
        per = []
        for name in names:
            mine = [  # a message served by composing skills counts for each of them
                r for r in rows
                if r[1] is not None and name in r[1].split(" + ") or r[1] is None and name in (r[2] or "").split(", ")
            ]
            runs = taught.get(name)
            req = sum(x for x, _ in runs) / len(runs) if runs else mean_req
            tok = sum(y for _, y in runs) / len(runs) if runs else mean_tok
            per.append(_summarise(name, mine, req, tok))
        saved_req = sum(s.requests_saved for s in per)
        saved_tok = sum(s.tokens_saved for s in per)
        overall = _summarise(None, rows, 0.0, 0.0)
        overall = SkillStats(**{**overall.__dict__, "requests_saved": saved_req, "tokens_saved": saved_tok})
        return Stats(overall=overall, skills=per)


_HITS = "INSERT INTO hits (at, task, skill, n_calls, duration) VALUES (?,?,?,?,?)"
_SHADOW = "INSERT INTO shadow (at, task, source, skill, wrong, detail) VALUES (?,?,?,?,?,?)"
_CLAUSES = "INSERT INTO clauses (at, task, position, clause, skill) VALUES (?,?,?,?,?)"
_SOLVES = (
    "INSERT INTO solves (at, task, source, skill, learned, ok, error, handover, n_calls, calls,"
    " llm_calls, prompt_tokens, completion_tokens, duration) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


def _used_model(result: Any) -> bool:
    """Whether a solve reported model usage (a hit may: a tool that calls a model reports it too);
    such a hit is written to ``solves``, whose rows carry usage, instead of ``hits``."""
    return bool(result.llm_calls or result.prompt_tokens or result.completion_tokens)


def _solve_row(at: float, r: Any) -> tuple[Any, ...]:
    """The ``solves`` row of a result; a result that cannot be made one (never expected) still has a row
    that says so, rather than costing its batch."""
    try:
        return _cells((
            at, r.task, r.source, r.skill, r.learned, int(r.ok), r.error, r.handover, len(r._raw_calls), _calls(r),
            r.llm_calls, r.prompt_tokens, r.completion_tokens, r.duration,
        ))
    except Exception as e:
        note = f"the run log could not write this solve as it is: {type(e).__name__}"
        return _cells((at, shown(getattr(r, "task", "")), str(getattr(r, "source", "?")), None, None, 0, note, None, 0,
                       None, 0, 0, 0, 0.0))


def _cells(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """``row`` with each text made UTF-8 (a lone surrogate written as its escape, ``\\ud800``):
    SQLite stores UTF-8 only, and a task or an error may carry a surrogate from broken JSON."""
    for v in row:
        if type(v) is str and not v.isascii():
            return tuple(_utf8(v) if type(v) is str else v for v in row)
    return row


def _utf8(text: str) -> str:
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _calls(result: Any) -> str | None:
    """The calls as JSON (names, arguments, results, errors); None for a clean skill hit, whose
    calls follow from its task and its skill (``n_calls`` says how many it made).

    Calls an agent run could not record as JSON (the run was not learned: ``result.not_learned``
    says why) are written as near as JSON can: keys that are not text as their ``repr``, a
    reference cycle, an int too long for text and a value nested too deep as a short note."""
    if result.source == "skill" and result.error is None:
        return None
    calls = [[t, a, res, e] for t, a, res, e in result._raw_calls]
    try:
        return json.dumps(calls, default=repr)
    except Exception:  # keys that are not text, a cycle, a huge int, deep nesting, a repr that raises
        return json.dumps(_loggable(calls, 0, set()))


_LOG_DEPTH = 64  # levels of a value the run log keeps when it must rebuild the value (JSON nests far less in practice)


def _loggable(value: Any, depth: int, active: set[int]) -> Any:
    """``value`` as plain JSON for the log: whatever JSON cannot carry becomes a short text."""
    kind = type(value)
    if value is None or kind in (bool, float, str):
        return value
    if kind is int:
        return value if value.bit_length() <= 14_000 else f"<an int of {value.bit_length():,} bits>"
    if depth >= _LOG_DEPTH:
        return f"<nested deeper than {_LOG_DEPTH} levels>"
    if isinstance(value, (list, tuple, dict)):
        if id(value) in active:
            return "<a reference cycle>"
        active.add(id(value))
        try:
            if isinstance(value, dict):
                return {k if type(k) is str else shown(k): _loggable(v, depth + 1, active) for k, v in value.items()}
            return [_loggable(v, depth + 1, active) for v in value]
        finally:
            active.discard(id(value))
    return shown(value)


def _summarise(name: str | None, rows: list[tuple[Any, ...]], req: float, tok: float) -> SkillStats:
    hits = [r for r in rows if r[0] == "skill" and r[3]]
    hit_ms = sorted(r[6] * 1000 for r in hits)
    return SkillStats(
        name=name,
        solves=len(rows),
        hits=len(hits),
        agent=sum(1 for r in rows if r[0] == "agent"),
        handovers=sum(1 for r in rows if r[0] == "skill+agent"),
        failed=sum(1 for r in rows if not r[3]),
        llm_calls=sum(r[4] for r in rows),
        tokens=sum(r[5] for r in rows),
        requests_saved=len(hits) * req,
        tokens_saved=len(hits) * tok,
        median_hit_ms=hit_ms[len(hit_ms) // 2] if hit_ms else None,
    )


def _flush_at_exit(ref: weakref.ReferenceType[RunLog]) -> None:
    log = ref()
    if log is not None:
        log.close()
