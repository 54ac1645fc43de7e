"""The SQLite store: goals, history, quota readings, meta.

One connection per :class:`SqliteStore`, used by one thread only (see :mod:`core.store.thread`).
WAL mode so that CLI readers never block the host; every write is an explicit ``BEGIN IMMEDIATE``
transaction — Python 3.11's implicit deferred transactions fail at once with "database is locked"
when two writers race (the write lock is not waited for on a read-to-write upgrade).

Three ways in: :func:`open_read_only` for read-only commands (never creates, converts, migrates,
checks or moves anything), :func:`open_store` for the few commands that write without a host, and
the host's own open in :mod:`core.store.guard` — the only one that checks the whole file, and that
never silently replaces a damaged one.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import quote

from core.atomic import private_dir, private_file, tighten
from core.clock import iso, parse_iso
from core.i18n import N_
from core.models import Exactness, GoalState, PauseReason
from core.store.base import (
    Committed,
    LeaseLost,
    Mutation,
    NoData,
    NotOwner,
    StoreError,
    StoreUnavailable,
)
from core.store.common import masked, owned, validated, written_by
from core.store.schema import MIGRATIONS, SCHEMA_VERSION
from core.store.sqlite_hosts import EPOCH_KEY, SqliteHosts
from core.store.sqlite_rows import (
    GOAL_COLUMNS,
    HISTORY_COLUMNS,
    goal_from_row,
    goal_params,
    goal_record_from_row,
    history_from_row,
    history_params,
    reading_from_json,
)

if TYPE_CHECKING:
    from core.models import Goal, HistoryRow, QuotaReading

T = TypeVar("T")

_CORRUPT = {"SQLITE_NOTADB", "SQLITE_CORRUPT"}
BUSY_TIMEOUT_SECONDS = 10.0
WAL_ATTEMPTS = 20

__all__ = ["EPOCH_KEY", "Committed", "LeaseLost", "Mutation", "NoData", "NotOwner",
           "SqliteStore", "StoreError", "StoreUnavailable", "open_read_only", "open_store"]


class SqliteStore(SqliteHosts):
    """Persistence for one data directory (a :class:`~core.store.base.Store`). Not thread-safe:
    one thread per instance."""

    def __init__(self, path: Path | str, *, read_only: bool = False, migrate: bool = True,
                 uri_given: bool = False) -> None:
        """Open ``path`` — for writing (switched to WAL and migrated unless ``migrate`` is
        False), or with ``read_only`` for reading only (nothing is created or changed).
        ``uri_given``: ``path`` already is an SQLite URI."""
        self.path = path
        self.read_only = read_only
        #: the host's fencing epoch; when set, every write first checks it is still current
        self.epoch: int | None = None
        #: the host this store writes for (stamped on new goals and history rows)
        self.host_id: str | None = None
        self.authority_seconds = 600.0
        self.lease_seconds = 30.0
        #: goals and latest readings are read as plain records, without pydantic
        #: (:mod:`core.models.plain`; a command that only shows them, issue 24)
        self.plain_reads = False
        if not (read_only or uri_given or str(path) == ":memory:"):
            _make_private(Path(path))
        if uri_given:
            target = str(path)
        else:
            target = f"file:{quote(str(path))}?mode=ro" if read_only else str(path)
        try:
            self._con = sqlite3.connect(target, timeout=BUSY_TIMEOUT_SECONDS,
                                        isolation_level=None, uri=read_only or uri_given)
        except sqlite3.OperationalError as exc:
            raise StoreError(N_("cannot open the database {file}: {error}").format(
                file=path, error=exc)) from None
        try:
            self._con.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
            self._check_version()  # before anything writes to a file we may not understand
            if read_only:
                self._con.execute("PRAGMA query_only = ON")
            else:
                # FULL: a commit is on disk when it returns, so an acknowledged action survives
                # power loss (NORMAL in WAL mode may lose the last ones: bench/store_sync.py)
                self._con.execute("PRAGMA synchronous = FULL")
                if migrate:
                    self.use_wal()
                    self._migrate()
        except BaseException:
            self._con.close()
            raise

    def use_wal(self) -> None:
        """Switch a new file to WAL. Two processes converting the same new file can get
        SQLITE_BUSY at once (the busy handler is skipped to avoid a deadlock), so the loser
        waits for the write lock — through SQLite's own busy handler — and tries again."""
        for _ in range(WAL_ATTEMPTS):
            try:
                self._con.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorname", "") != "SQLITE_BUSY":
                    raise
            self._con.execute("BEGIN IMMEDIATE")
            self._con.execute("COMMIT")
        self._con.execute("PRAGMA journal_mode = WAL")

    def close(self) -> None:
        self._con.close()

    @property
    def shared(self) -> bool:
        return False

    def describe(self) -> str:
        return N_("the database {file}").format(file=self.path)

    def ping(self) -> None:
        """Whether a write could start now (the write lock, a read-only file)."""
        with self.write(fenced=False):
            pass

    def set_busy_timeout(self, seconds: float) -> None:
        """How long a write waits for another connection's lock before SQLITE_BUSY."""
        self._con.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")

    # -- schema --------------------------------------------------------------------------------

    def quick_check(self) -> str | None:
        """None when SQLite's quick check finds nothing wrong, else its first complaint.

        Reads the whole file (0.5 s for 300 MB): the host runs it at start and after an
        error, under its lease — never a read-only command.
        """
        row = self._con.execute("PRAGMA quick_check").fetchone()
        if row is not None and row[0] == "ok":
            return None
        return str(row[0]) if row else N_("no answer")

    def _check_version(self) -> None:
        version = self.schema_version
        if version > SCHEMA_VERSION:
            raise StoreError(N_(
                "the database {file} has schema version {version}, newer than this "
                "Goalkeeper understands ({ours}); upgrade Goalkeeper to use it").format(
                    file=self.path, version=version, ours=SCHEMA_VERSION))
        if self.read_only and version < SCHEMA_VERSION:
            if version == 0:
                raise NoData(N_("no data yet in {file}").format(file=self.path))
            raise StoreError(N_(
                "the database {file} has schema version {version}, older than this "
                "Goalkeeper's ({ours}); start the host (`goalkeeper daemon` or the desktop app) "
                "once to upgrade it").format(file=self.path, version=version,
                                             ours=SCHEMA_VERSION))

    def _migrate(self) -> None:
        """Bring the schema up to date: the version is read and every step applied inside one
        write transaction, so processes opening a new file together cannot both migrate it
        (the loser waits for the lock and then finds the schema current)."""
        with self.write(fenced=False):
            self.migrate_in_transaction()

    def migrate_in_transaction(self) -> None:
        """The migration steps still missing; the caller holds the write transaction."""
        version = self.schema_version
        if version > SCHEMA_VERSION:  # another process upgraded it meanwhile
            raise StoreError(N_("the database {file} was upgraded to schema version {version} "
                                "by a newer Goalkeeper").format(file=self.path,
                                                                version=version))
        for target in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[target - 1].split(";"):
                if statement.strip():
                    self._con.execute(statement)
            self._con.execute(f"PRAGMA user_version = {target}")

    @property
    def schema_version(self) -> int:
        return int(self._con.execute("PRAGMA user_version").fetchone()[0])

    @contextmanager
    def write(self, fenced: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken with the write lock up front.

        With :attr:`epoch` set (a host's store), the transaction first checks that the host's
        epoch in ``meta`` is still ours: a host that was replaced while it was hung gets
        :class:`LeaseLost` instead of writing over its successor.
        """
        self._con.execute("BEGIN IMMEDIATE")
        try:
            if fenced and self.epoch is not None:
                self._check_epoch(self.epoch)
            yield self._con
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self._con.execute("ROLLBACK")
            raise
        self._con.execute("COMMIT")

    def _check_epoch(self, epoch: int) -> None:
        current = self.current_epoch()
        if current != epoch:
            raise LeaseLost(N_("another host took over this data directory (epoch {current}, "
                               "ours {ours}): this host may no longer write").format(
                                   current=current, ours=epoch))

    # -- goals ---------------------------------------------------------------------------------

    def get_goal(self, goal_id: str) -> Goal | None:
        row = self._con.execute(
            f"SELECT {GOAL_COLUMNS} FROM goals WHERE id = ?", (goal_id,)
        ).fetchone()
        return goal_from_row(row) if row else None

    def list_goals(self) -> list[Goal]:
        rows = self._con.execute(f"SELECT {GOAL_COLUMNS} FROM goals ORDER BY id").fetchall()
        read = goal_record_from_row if self.plain_reads else goal_from_row
        return [read(row) for row in rows]

    def goals_on_window(self, window_id: str, states: Sequence[GoalState],
                        peers: bool = False) -> list[Goal]:
        """Goals in one of ``states`` that draw on ``window_id``.

        The resume slots of a window are counted with this query, inside the claim's
        transaction — so the count holds across processes. ``peers`` changes nothing here:
        a file belongs to one host, whose goals are all its own.
        """
        marks = ", ".join("?" * len(states))
        rows = self._con.execute(
            f"SELECT {GOAL_COLUMNS} FROM goals WHERE state IN ({marks}) AND EXISTS "
            "(SELECT 1 FROM json_each(goals.windows) WHERE json_each.value = ?) "
            "ORDER BY id",
            [*(state.value for state in states), window_id],
        ).fetchall()
        return [goal_from_row(row) for row in rows]

    def goals_due_on_window(self, window_id: str, now: datetime,
                            reasons: Sequence[PauseReason], peers: bool = False) -> list[Goal]:
        """Paused goals with auto-resume on, waiting for one of ``reasons``, that draw on
        ``window_id`` and whose not-before time has come by ``now``.

        Instants are compared with ``julianday`` (the stored text has a varying number of
        fractional digits, so it does not sort as text); callers check again exactly.
        """
        marks = ", ".join("?" * len(reasons))
        rows = self._con.execute(
            f"SELECT {GOAL_COLUMNS} FROM goals WHERE state = 'paused' AND auto_resume = 1 "
            f"AND pause_reason IN ({marks}) AND next_resume_at IS NOT NULL "
            "AND julianday(next_resume_at) <= julianday(?) AND EXISTS "
            "(SELECT 1 FROM json_each(goals.windows) WHERE json_each.value = ?) ORDER BY id",
            [*(reason.value for reason in reasons), iso(now), window_id],
        ).fetchall()
        return [goal_from_row(row) for row in rows]

    def transact(self, goal_id: str, decide: Callable[[Goal | None], Mutation[T]]) -> Committed[T]:
        """Read a goal, let ``decide`` compute its new row and history, write both — atomically.

        ``decide`` runs inside the ``BEGIN IMMEDIATE`` transaction, so what it read cannot change
        under it: this is how the resume claim and every other goal change stay race-free, within
        a process and across processes.
        """
        with self.write():
            return self._transact_in(goal_id, decide)

    def transact_many(self, changes: Sequence[tuple[str, Callable[[Goal | None], Mutation[T]]]]
                      ) -> list[Committed[T]]:
        with self.write():
            return [self._transact_in(goal_id, decide) for goal_id, decide in changes]

    def _transact_in(self, goal_id: str, decide: Callable[[Goal | None], Mutation[T]]
                     ) -> Committed[T]:
        before = self.get_goal(goal_id)
        mutation = decide(before)
        new = validated(owned(goal_id, before, mutation.goal, self.host_id))
        if new is not None and new != before:
            self._write_goal(new)
        rows = [self._insert_history(row) for row in mutation.history]
        after = new if new is not None else before
        return Committed(before, after, mutation.result, rows)

    def _write_goal(self, goal: Goal) -> None:
        placeholders = ", ".join("?" * len(GOAL_COLUMNS.split(",")))
        self._con.execute(
            f"INSERT OR REPLACE INTO goals ({GOAL_COLUMNS}) VALUES ({placeholders})",
            goal_params(goal),
        )

    def remove_goal(self, goal_id: str, row: HistoryRow | None = None) -> HistoryRow | None:
        """Delete a goal's row (its history stays) and append ``row``, atomically."""
        with self.write():
            owned(goal_id, self.get_goal(goal_id), None, self.host_id)
            self._con.execute("DELETE FROM goals WHERE id = ?", (goal_id,))
            return self._insert_history(row) if row is not None else None

    def adopt_goals(self) -> int:
        """One machine's file: its host owns every goal in it (also after a host id change)."""
        if self.host_id is None:
            return 0
        with self.write():
            cur = self._con.execute("UPDATE goals SET host = ? WHERE host <> ?",
                                    (self.host_id, self.host_id))
        return cur.rowcount

    # -- history -------------------------------------------------------------------------------

    def _insert_history(self, row: HistoryRow) -> HistoryRow:
        row = written_by(row, self.host_id)
        cur = self._con.execute(
            f"INSERT INTO history ({HISTORY_COLUMNS}) VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "?, ?, ?, ?)", history_params(row))
        return row.model_copy(update={"id": cur.lastrowid})

    def append_history(self, row: HistoryRow) -> HistoryRow:
        with self.write():
            return self._insert_history(row)

    def history(
        self, goal: str | None = None, limit: int = 100, offset: int = 0
    ) -> list[HistoryRow]:
        where, params = ("WHERE goal = ?", [goal]) if goal else ("", [])
        rows = self._con.execute(
            f"SELECT {HISTORY_COLUMNS} FROM history {where} ORDER BY id DESC LIMIT ? OFFSET ?",
            [*params, limit, offset],
        ).fetchall()
        return [history_from_row(row) for row in rows]

    def count_history(self, goal: str | None = None) -> int:
        where, params = ("WHERE goal = ?", [goal]) if goal else ("", [])
        return int(self._con.execute(f"SELECT COUNT(*) FROM history {where}", params).fetchone()[0])

    # -- quota readings ------------------------------------------------------------------------

    def save_reading(self, reading: QuotaReading) -> bool:
        """Store a reading as its window's latest and in its series; False when it loses to
        the latest (older, or not exact against a fresh exact one another host observed)."""
        host = self.host_id or ""
        with self.write():
            row = self._con.execute(
                "SELECT observed_at, host, exactness FROM quota_latest WHERE account = ? AND "
                "window_id = ?", (reading.account, reading.window_id)).fetchone()
            if row is not None and not _replaces(reading, host, row, self.authority_seconds):
                return False
            self._con.execute(
                "INSERT OR REPLACE INTO quota_latest (account, window_id, provider, observed_at, "
                "reading, host, exactness) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (reading.account, reading.window_id, reading.provider, iso(reading.observed_at),
                 masked(reading.model_dump_json()), host, reading.exactness.value))
            self._con.execute(
                "INSERT INTO quota_series (account, window_id, observed_at, used_percent, "
                "exactness) VALUES (?, ?, ?, ?, ?)",
                (reading.account, reading.window_id, iso(reading.observed_at),
                 reading.used_percent, reading.exactness.value))
        return True

    def latest_readings(self, accounts: Sequence[str] | None = None) -> list[QuotaReading]:
        rows = self._con.execute(
            "SELECT account, reading FROM quota_latest ORDER BY window_id, account").fetchall()
        return [reading_from_json(r[1], self.plain_reads) for r in rows
                if accounts is None or r[0] in accounts]

    def latest_reading(self, account: str, window_id: str) -> QuotaReading | None:
        row = self._con.execute("SELECT reading FROM quota_latest WHERE account = ? AND "
                                "window_id = ?", (account, window_id)).fetchone()
        return reading_from_json(row[0]) if row else None

    def series(self, window_id: str, since: datetime | None = None,
               account: str = "") -> list[tuple[datetime, float]]:
        rows = self._con.execute(
            "SELECT observed_at, used_percent FROM quota_series WHERE account = ? AND "
            "window_id = ? AND observed_at >= ? AND used_percent IS NOT NULL ORDER BY observed_at",
            (account, window_id, iso(since) or ""),
        ).fetchall()
        result = []
        for at, used in rows:
            instant = parse_iso(at)
            assert instant is not None
            result.append((instant, float(used)))
        return result

    def meta_items(self, prefix: str) -> dict[str, str]:
        """The ``meta`` rows whose key starts with ``prefix`` (for ``store migrate``)."""
        rows = self._con.execute("SELECT key, value FROM meta WHERE substr(key, 1, ?) = ?",
                                 (len(prefix), prefix)).fetchall()
        return {str(k): str(v) for k, v in rows}

    def series_rows(self) -> list[tuple[str, str, datetime, float | None, str]]:
        """Every chart point as stored (account, window, instant, used %, exactness), oldest
        first — for copying the store elsewhere (``goalkeeper store migrate``)."""
        rows = self._con.execute("SELECT account, window_id, observed_at, used_percent, "
                                 "exactness FROM quota_series ORDER BY id").fetchall()
        result = []
        for account, window, at, used, exactness in rows:
            instant = parse_iso(at)
            assert instant is not None
            result.append((str(account), str(window), instant,
                           None if used is None else float(used), str(exactness)))
        return result

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: everything read inside sees the same moment (WAL)."""
        self._con.execute("BEGIN")
        try:
            yield
        finally:
            self._con.execute("COMMIT")

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

    # -- upkeep --------------------------------------------------------------------------------

    def vacuum_into(self, target: Path) -> None:
        """A consistent copy of the whole database into the new file ``target``."""
        self._con.execute("VACUUM INTO ?", (str(target),))

    def take_over(self, expected: int) -> int:
        """Bump the host epoch from ``expected`` (compare-and-set): a new host replacing a hung
        one. Raises :class:`LeaseLost` when another host bumped it first."""
        with self.write(fenced=False):
            self._check_epoch(expected)
            self._con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                              (EPOCH_KEY, str(expected + 1)))
        self.epoch = expected + 1
        return expected + 1



def _replaces(reading: QuotaReading, host: str, latest: Sequence[str],
              authority_seconds: float) -> bool:
    """The freshest reading wins — but one that is not exact never hides an exact reading
    another host made within ``authority_seconds`` (the same rule as the shared store's)."""
    at, by, exactness = parse_iso(latest[0]), latest[1], latest[2]
    assert at is not None
    if reading.observed_at < at:
        return False
    if reading.exactness is Exactness.EXACT or exactness != Exactness.EXACT.value or by == host:
        return True
    return reading.observed_at - at > timedelta(seconds=authority_seconds)


def is_corruption(exc: BaseException) -> bool:
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = getattr(exc, "sqlite_errorname", None)
    return name in _CORRUPT or "integrity check failed" in str(exc) or (
        name is None and "not a database" in str(exc)
    )


def _make_private(path: Path) -> None:
    """The database 0600 before SQLite opens it: SQLite gives ``-wal`` and ``-shm`` the main
    file's mode (older, looser companions are tightened too)."""
    private_file(path)
    for suffix in ("-wal", "-shm", "-journal"):
        tighten(Path(f"{path}{suffix}"))


def open_store(path: Path, now: datetime) -> tuple[SqliteStore, str | None]:
    """Open (creating if needed) the database at ``path`` for writing, outside a host.

    For the few commands that write while no host runs (``remove``, ``claude untrack``...). It
    never checks the whole file and never moves it: integrity checks, quarantine and restore
    belong to the host, under its lease (:mod:`core.store.guard`). A damaged file raises
    :class:`StoreError` saying so. The second value is kept for callers that print a notice;
    it is always None now.
    """
    private_dir(path.parent)
    try:
        return SqliteStore(path), None
    except sqlite3.DatabaseError as exc:
        raise StoreError(describe_failure(path, exc)) from None


def open_read_only(path: Path, plain_reads: bool = False) -> SqliteStore:
    """Open the database for reading only: never creates, converts, migrates or checks it.

    :class:`NoData` when there is no database yet; :class:`StoreError` (with the reason) when
    the file cannot be read. ``plain_reads``: see :attr:`SqliteStore.plain_reads`.
    """
    try:
        if not path.exists() or path.stat().st_size == 0:
            raise NoData(N_("no data yet in {file}").format(file=path))
    except OSError as exc:
        raise StoreError(N_("cannot read the database {file}: {error}").format(
            file=path, error=exc.strerror or exc)) from None
    try:
        store = SqliteStore(path, read_only=True)
    except sqlite3.DatabaseError as exc:
        raise StoreError(describe_failure(path, exc)) from None
    store.plain_reads = plain_reads
    return store


def describe_failure(path: Path, exc: sqlite3.Error) -> str:
    """A precise sentence for an error met while opening or using the database."""
    name = getattr(exc, "sqlite_errorname", None) or ""
    if is_corruption(exc):
        return N_("the database {file} is damaged ({error}); the host checks it at start and "
                  "offers a backup to restore (`goalkeeper store`)").format(file=path, error=exc)
    if name.startswith("SQLITE_READONLY"):
        return N_("the database {file} is read-only ({error})").format(file=path, error=exc)
    if name == "SQLITE_FULL":
        return N_("the disk holding {file} is full ({error})").format(file=path, error=exc)
    return N_("cannot use the database {file}: {error}").format(file=path, error=exc)
