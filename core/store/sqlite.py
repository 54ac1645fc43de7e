"""The SQLite store: goals, history, quota readings, meta.

One connection per :class:`SqliteStore`, used by one thread only (see :mod:`core.store.thread`).
WAL mode so that CLI readers never block the host; every write is an explicit ``BEGIN IMMEDIATE``
transaction — Python 3.11's implicit deferred transactions fail at once with "database is locked"
when two writers race (the write lock is not waited for on a read-to-write upgrade).

A file that is not a database, or fails its integrity check, is never overwritten: it is moved
aside with a timestamp and a fresh database is created (:func:`open_store` reports it).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

from core.clock import iso, parse_iso
from core.models import Goal, GoalState, HistoryRow, PauseReason, QuotaReading
from core.store.schema import MIGRATIONS, SCHEMA_VERSION

T = TypeVar("T")

_CORRUPT = {"SQLITE_NOTADB", "SQLITE_CORRUPT"}


class StoreError(Exception):
    """The store cannot be used; the message says why and what to do."""


@dataclass
class Mutation(Generic[T]):
    """What a transaction function decided: the goal's new row, history rows, a result."""

    goal: Goal | None
    result: T
    history: list[HistoryRow] = field(default_factory=list)


@dataclass(frozen=True)
class Committed(Generic[T]):
    before: Goal | None
    after: Goal | None
    result: T
    history: list[HistoryRow]


_GOAL_COLUMNS = (
    "id, provider, title, state, pause_reason, pause_detail, windows, auto_resume, "
    "next_resume_at, auto_resume_note, resets_at, attempts, fence, hosted, resumed_at, data, "
    "created_at, updated_at, state_since, policy, deferral"
)
_HISTORY_COLUMNS = (
    "id, at, goal, event, trigger, origin, outcome, reason, state_from, state_to, fence, quotas, "
    "detail"
)


def _goal_from_row(row: Sequence[Any]) -> Goal:
    names = [c.strip() for c in _GOAL_COLUMNS.split(",")]
    raw = dict(zip(names, row, strict=True))
    raw["windows"] = tuple(json.loads(raw["windows"]))
    raw["data"] = json.loads(raw["data"])
    raw["auto_resume"] = bool(raw["auto_resume"])
    raw["hosted"] = bool(raw["hosted"])
    raw["policy"] = json.loads(raw["policy"])
    raw["deferral"] = json.loads(raw["deferral"]) if raw["deferral"] else None
    return Goal.model_validate(raw)


def _goal_params(goal: Goal) -> tuple[Any, ...]:
    return (
        goal.id,
        goal.provider,
        goal.title,
        goal.state.value,
        goal.pause_reason.value if goal.pause_reason else None,
        goal.pause_detail,
        json.dumps(list(goal.windows)),
        int(goal.auto_resume),
        iso(goal.next_resume_at),
        goal.auto_resume_note,
        iso(goal.resets_at),
        goal.attempts,
        goal.fence,
        int(goal.hosted),
        iso(goal.resumed_at),
        json.dumps(goal.data, sort_keys=True),
        iso(goal.created_at),
        iso(goal.updated_at),
        iso(goal.state_since),
        goal.policy.model_dump_json(),
        goal.deferral.model_dump_json() if goal.deferral else None,
    )


def _history_from_row(row: Sequence[Any]) -> HistoryRow:
    names = [c.strip() for c in _HISTORY_COLUMNS.split(",")]
    raw = dict(zip(names, row, strict=True))
    raw["quotas"] = tuple(json.loads(raw["quotas"]))
    raw["detail"] = json.loads(raw["detail"])
    return HistoryRow.model_validate(raw)


class SqliteStore:
    """Persistence for one data directory. Not thread-safe: one thread per instance."""

    def __init__(self, path: Path | str) -> None:
        self.path = path
        try:
            self._con = sqlite3.connect(str(path), timeout=30, isolation_level=None)
        except sqlite3.OperationalError as exc:
            raise StoreError(f"cannot open the database {path}: {exc}") from None
        try:
            self._con.execute("PRAGMA busy_timeout = 30000")
            self._check_integrity()
            self._check_version()  # before anything writes to a file we may not understand
            if str(path) != ":memory:":
                self._con.execute("PRAGMA journal_mode = WAL")
            self._con.execute("PRAGMA synchronous = NORMAL")
            self._migrate()
        except BaseException:
            self._con.close()
            raise

    def close(self) -> None:
        self._con.close()

    # -- schema --------------------------------------------------------------------------------

    def _check_integrity(self) -> None:
        row = self._con.execute("PRAGMA quick_check").fetchone()
        if row is None or row[0] != "ok":
            raise sqlite3.DatabaseError(f"integrity check failed: {row[0] if row else 'no answer'}")

    def _check_version(self) -> None:
        version = self.schema_version
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the database {self.path} has schema version {version}, newer than this "
                f"Goalkeeper understands ({SCHEMA_VERSION}); upgrade Goalkeeper to use it"
            )

    def _migrate(self) -> None:
        version = self.schema_version
        for target in range(version + 1, SCHEMA_VERSION + 1):
            with self.write():
                for statement in MIGRATIONS[target - 1].split(";"):
                    if statement.strip():
                        self._con.execute(statement)
                self._con.execute(f"PRAGMA user_version = {target}")

    @property
    def schema_version(self) -> int:
        return int(self._con.execute("PRAGMA user_version").fetchone()[0])

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken with the write lock up front."""
        self._con.execute("BEGIN IMMEDIATE")
        try:
            yield self._con
        except BaseException:
            self._con.execute("ROLLBACK")
            raise
        self._con.execute("COMMIT")

    # -- goals ---------------------------------------------------------------------------------

    def get_goal(self, goal_id: str) -> Goal | None:
        row = self._con.execute(
            f"SELECT {_GOAL_COLUMNS} FROM goals WHERE id = ?", (goal_id,)
        ).fetchone()
        return _goal_from_row(row) if row else None

    def list_goals(self) -> list[Goal]:
        rows = self._con.execute(f"SELECT {_GOAL_COLUMNS} FROM goals ORDER BY id").fetchall()
        return [_goal_from_row(row) for row in rows]

    def goals_on_window(self, window_id: str, states: Sequence[GoalState]) -> list[Goal]:
        """Goals in one of ``states`` that draw on ``window_id``.

        The resume slots of a window are counted with this query, inside the claim's
        transaction — so the count holds across processes (and hosts sharing a store).
        """
        marks = ", ".join("?" * len(states))
        rows = self._con.execute(
            f"SELECT {_GOAL_COLUMNS} FROM goals WHERE state IN ({marks}) AND EXISTS "
            "(SELECT 1 FROM json_each(goals.windows) WHERE json_each.value = ?) "
            "ORDER BY id",
            [*(state.value for state in states), window_id],
        ).fetchall()
        return [_goal_from_row(row) for row in rows]

    def goals_due_on_window(self, window_id: str, now: datetime,
                            reasons: Sequence[PauseReason]) -> list[Goal]:
        """Paused goals with auto-resume on, waiting for one of ``reasons``, that draw on
        ``window_id`` and whose not-before time has come by ``now``.

        Instants are compared with ``julianday`` (the stored text has a varying number of
        fractional digits, so it does not sort as text); callers check again exactly.
        """
        marks = ", ".join("?" * len(reasons))
        rows = self._con.execute(
            f"SELECT {_GOAL_COLUMNS} FROM goals WHERE state = 'paused' AND auto_resume = 1 "
            f"AND pause_reason IN ({marks}) AND next_resume_at IS NOT NULL "
            "AND julianday(next_resume_at) <= julianday(?) AND EXISTS "
            "(SELECT 1 FROM json_each(goals.windows) WHERE json_each.value = ?) ORDER BY id",
            [*(reason.value for reason in reasons), iso(now), window_id],
        ).fetchall()
        return [_goal_from_row(row) for row in rows]

    def transact(self, goal_id: str, decide: Callable[[Goal | None], Mutation[T]]) -> Committed[T]:
        """Read a goal, let ``decide`` compute its new row and history, write both — atomically.

        ``decide`` runs inside the ``BEGIN IMMEDIATE`` transaction, so what it read cannot change
        under it: this is how the resume claim and every other goal change stay race-free, within
        a process and across processes.
        """
        with self.write():
            before = self.get_goal(goal_id)
            mutation = decide(before)
            if mutation.goal is not None and mutation.goal != before:
                self._write_goal(mutation.goal)
            rows = [self._insert_history(row) for row in mutation.history]
        after = mutation.goal if mutation.goal is not None else before
        return Committed(before, after, mutation.result, rows)

    def _write_goal(self, goal: Goal) -> None:
        placeholders = ", ".join("?" * len(_GOAL_COLUMNS.split(",")))
        self._con.execute(
            f"INSERT OR REPLACE INTO goals ({_GOAL_COLUMNS}) VALUES ({placeholders})",
            _goal_params(goal),
        )

    def remove_goal(self, goal_id: str, row: HistoryRow | None = None) -> HistoryRow | None:
        """Delete a goal's row (its history stays) and append ``row``, atomically."""
        with self.write():
            self._con.execute("DELETE FROM goals WHERE id = ?", (goal_id,))
            return self._insert_history(row) if row is not None else None

    # -- history -------------------------------------------------------------------------------

    def _insert_history(self, row: HistoryRow) -> HistoryRow:
        cur = self._con.execute(
            f"INSERT INTO history ({_HISTORY_COLUMNS}) VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "?, ?, ?)",
            (
                iso(row.at),
                row.goal,
                row.event,
                row.trigger.value if row.trigger else None,
                row.origin,
                row.outcome.value if row.outcome else None,
                row.reason,
                row.state_from.value if row.state_from else None,
                row.state_to.value if row.state_to else None,
                row.fence,
                json.dumps(list(row.quotas), default=str),
                json.dumps(row.detail, default=str, sort_keys=True),
            ),
        )
        return row.model_copy(update={"id": cur.lastrowid})

    def append_history(self, row: HistoryRow) -> HistoryRow:
        with self.write():
            return self._insert_history(row)

    def history(
        self, goal: str | None = None, limit: int = 100, offset: int = 0
    ) -> list[HistoryRow]:
        where, params = ("WHERE goal = ?", [goal]) if goal else ("", [])
        rows = self._con.execute(
            f"SELECT {_HISTORY_COLUMNS} FROM history {where} ORDER BY id DESC LIMIT ? OFFSET ?",
            [*params, limit, offset],
        ).fetchall()
        return [_history_from_row(row) for row in rows]

    def count_history(self, goal: str | None = None) -> int:
        where, params = ("WHERE goal = ?", [goal]) if goal else ("", [])
        return int(self._con.execute(f"SELECT COUNT(*) FROM history {where}", params).fetchone()[0])

    # -- quota readings ------------------------------------------------------------------------

    def save_reading(self, reading: QuotaReading) -> bool:
        """Store a reading as the window's latest and in its series; False if an older one."""
        with self.write():
            row = self._con.execute(
                "SELECT observed_at FROM quota_latest WHERE window_id = ?", (reading.window_id,)
            ).fetchone()
            latest = parse_iso(row[0]) if row else None
            if latest is not None and reading.observed_at < latest:
                return False
            self._con.execute(
                "INSERT OR REPLACE INTO quota_latest VALUES (?, ?, ?, ?)",
                (
                    reading.window_id,
                    reading.provider,
                    iso(reading.observed_at),
                    reading.model_dump_json(),
                ),
            )
            self._con.execute(
                "INSERT INTO quota_series (window_id, observed_at, used_percent, exactness) "
                "VALUES (?, ?, ?, ?)",
                (
                    reading.window_id,
                    iso(reading.observed_at),
                    reading.used_percent,
                    reading.exactness.value,
                ),
            )
        return True

    def latest_readings(self) -> list[QuotaReading]:
        rows = self._con.execute("SELECT reading FROM quota_latest ORDER BY window_id").fetchall()
        return [QuotaReading.model_validate_json(row[0]) for row in rows]

    def series(self, window_id: str, since: datetime | None = None) -> list[tuple[datetime, float]]:
        rows = self._con.execute(
            "SELECT observed_at, used_percent FROM quota_series WHERE window_id = ? "
            "AND observed_at >= ? AND used_percent IS NOT NULL ORDER BY observed_at",
            (window_id, iso(since) or ""),
        ).fetchall()
        result = []
        for at, used in rows:
            instant = parse_iso(at)
            assert instant is not None
            result.append((instant, float(used)))
        return result

    def prune_series(self, before: datetime) -> int:
        """Drop chart points older than ``before`` (the latest reading of a window stays)."""
        with self.write():
            cur = self._con.execute("DELETE FROM quota_series WHERE observed_at < ?",
                                    (iso(before),))
        return cur.rowcount

    # -- meta ----------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self._con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self.write():
            self._con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))


def is_corruption(exc: BaseException) -> bool:
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = getattr(exc, "sqlite_errorname", None)
    return name in _CORRUPT or "integrity check failed" in str(exc) or (
        name is None and "not a database" in str(exc)
    )


def open_store(path: Path, now: datetime) -> tuple[SqliteStore, str | None]:
    """Open (creating if needed) the database at ``path``.

    A corrupt file is moved aside to ``<name>.corrupt-<UTC timestamp>`` (with its ``-wal`` and
    ``-shm`` companions) and a fresh database created; the second value then says so. Any other
    problem raises :class:`StoreError` and leaves the file alone.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return SqliteStore(path), None
    except sqlite3.DatabaseError as exc:
        if not is_corruption(exc):
            raise StoreError(f"cannot use the database {path}: {exc}") from None
        reason = str(exc)
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        source = Path(str(path) + suffix)
        if source.exists():
            source.rename(Path(str(aside) + suffix))
    notice = (
        f"The database {path} was unreadable ({reason}); it was moved aside to {aside} "
        "and a new, empty one was created. Nothing in the old file was deleted."
    )
    return SqliteStore(path), notice
