"""The shared store: one PostgreSQL database for every host of a user (``store_url``).

The same :class:`~core.store.base.Store` as SQLite's, on PostgreSQL's own guarantees:

* every write is one transaction at ``SERIALIZABLE`` isolation — the equivalent of SQLite's
  ``BEGIN IMMEDIATE``: whatever a transaction read (the goal being claimed, the goals holding a
  window's resume slots) cannot change under it, on any host. :meth:`PostgresStore.transact`
  also locks the goal's row (``SELECT … FOR UPDATE``), so racing claims wait for each other
  instead of all doing the work; a transaction PostgreSQL cannot serialise (40001) or a deadlock
  (40P01) is simply run again, as PostgreSQL's documentation prescribes;
* the fence is a conditional check inside the same transaction: this host's epoch in ``hosts``
  must still be ours (:class:`~core.store.base.LeaseLost`);
* changes are announced with ``NOTIFY goalkeeper`` (sent at commit, never for a rollback) — a
  goal changed, a reading was stored, a request was posted or answered, a host came or went —
  which :mod:`core.store.listen` hears on every other host;
* migrations run under an advisory transaction lock (:mod:`core.store.pg_schema`).

One connection per instance, used by one thread (the store thread), in autocommit mode with
explicit transactions. A lost connection is opened again on the next call; while it cannot be,
every call raises :class:`~core.store.base.StoreUnavailable`, which the engine's report queue
waits out (nothing recorded is lost).
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, TypeVar

import psycopg
from psycopg import errors

from core.i18n import N_
from core.limits import CLOCK_SKEW_LIMIT_SECONDS
from core.models import Exactness, Goal, GoalState, HistoryRow, PauseReason, QuotaReading
from core.store.base import (
    Committed,
    LeaseLost,
    Mutation,
    NoData,
    StoreError,
    StoreUnavailable,
)
from core.store.common import CHANNEL, masked, owned, validated, written_by
from core.store.pg_hosts import PgHosts
from core.store.pg_import import PgImport
from core.store.pg_rows import (
    GOAL_COLUMNS,
    HISTORY_COLUMNS,
    goal_from_row,
    goal_params,
    history_from_row,
    history_params,
)
from core.store.pg_schema import SCHEMA_VERSION, migrate, newer_schema_text, schema_version

log = logging.getLogger("goalkeeper")
T = TypeVar("T")
Connection = psycopg.Connection[tuple[Any, ...]]

CONNECT_TIMEOUT_SECONDS = 5
#: a transaction PostgreSQL could not serialise is run again up to this many times
SERIAL_ATTEMPTS = 50
_RETRIED = (errors.SerializationFailure, errors.DeadlockDetected, errors.UniqueViolation)
#: errors that say "not now" rather than "never": the report queue waits them out
_UNAVAILABLE = (psycopg.OperationalError, psycopg.InterfaceError, errors.ReadOnlySqlTransaction,
                errors.AdminShutdown, errors.CrashShutdown, errors.CannotConnectNow)
_HISTORY_WRITTEN = HISTORY_COLUMNS.removeprefix("id, ")
_GOAL_MARKS = ", ".join(["%s"] * len(GOAL_COLUMNS.split(",")))
_GOAL_UPDATES = ", ".join(f"{c.strip()} = excluded.{c.strip()}"
                          for c in GOAL_COLUMNS.split(",")[1:])


def where_of(conninfo: str) -> str:
    """``host/dbname`` of a connection string, for messages (never a password)."""
    try:
        parts = psycopg.conninfo.conninfo_to_dict(conninfo)
    except psycopg.ProgrammingError:
        return N_("(an unreadable store_url)")
    host = str(parts.get("host") or parts.get("hostaddr") or "localhost")
    port = f":{parts['port']}" if parts.get("port") else ""
    service = N_("service {name}").format(name=parts["service"]) if parts.get("service") else ""
    database = str(parts.get("dbname") or "")
    return service or f"{host}{port}/{database}"


def _wants_password(exc: BaseException) -> bool:
    text = str(exc)
    return "no password supplied" in text or "password authentication failed" in text


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class PostgresStore(PgHosts, PgImport):
    """Persistence in a shared PostgreSQL database (a :class:`~core.store.base.Store`).
    Not thread-safe: one thread per instance. Owns its connection."""

    def __init__(self, conninfo: str, *, read_only: bool = False, migrate: bool = True,
                 password: str | Callable[[], str | None] | None = None,
                 connect_timeout: float = CONNECT_TIMEOUT_SECONDS) -> None:
        """``password``: a value, or where to get one when the server asks for a password
        libpq did not find (``.pgpass``, a service file) — the keyring, by default of
        :func:`core.store.target.open_shared`."""
        self.conninfo = conninfo
        self.read_only = read_only
        self.epoch: int | None = None
        self.host_id: str | None = None
        self.authority_seconds = 600.0
        self.lease_seconds = 30.0
        self.where = where_of(conninfo)
        self._password: str | None = password if isinstance(password, str) else None
        self._ask_password = password if callable(password) else None
        self._timeout = connect_timeout
        self._con: Connection | None = None
        self.pause: Callable[[float], None] = time.sleep  # between serialisation retries
        self.retries = 0  # transactions run again (serialisation failures), for benchmarks
        con = self.con
        try:
            self._check_version(con, migrate)
        except BaseException:
            self.close()
            raise

    # -- the connection -------------------------------------------------------------------------

    @property
    def con(self) -> Connection:
        """The connection — opened again when it was lost."""
        if self._con is None or self._con.closed or self._con.broken:
            self._con = self._connect()
        return self._con

    def _connect(self) -> Connection:
        try:
            con = self._open_connection()
        except psycopg.OperationalError as exc:
            if self._password is None and self._ask_password is not None and _wants_password(
                    exc):
                self._password = self._ask_password()
                if self._password:
                    return self._connect()
            if _wants_password(exc):
                raise StoreError(N_(
                    "{store} refused the login ({error}): give the password with `goalkeeper "
                    "secret set store-password`, in ~/.pgpass or in a service file — never in "
                    "store_url").format(store=self.describe(), error=first_line(exc))) from None
            raise StoreUnavailable(N_("cannot reach {store}: {error}").format(
                store=self.describe(), error=first_line(exc))) from None
        except psycopg.ProgrammingError as exc:
            raise StoreError(N_("store_url is not a valid connection string: {error}").format(
                error=exc)) from None
        con.execute("SET TIME ZONE 'UTC'")
        if self.read_only:
            con.execute("SET default_transaction_read_only = on")
        con.isolation_level = psycopg.IsolationLevel.SERIALIZABLE
        return con

    def _open_connection(self) -> Connection:
        kwargs: dict[str, Any] = {"autocommit": True, "application_name": "goalkeeper",
                                  "connect_timeout": max(1, round(self._timeout))}
        if self._password:
            kwargs["password"] = self._password
        con: Connection = psycopg.connect(self.conninfo, **kwargs)
        return con

    def _check_version(self, con: Connection, may_migrate: bool) -> None:
        with self._reachable():
            version = schema_version(con)
            if version > SCHEMA_VERSION:
                raise StoreError(newer_schema_text(self.describe(), version))
            if self.read_only or not may_migrate:
                if version == 0:
                    raise NoData(N_("no data yet in {file}").format(file=self.describe()))
                if version < SCHEMA_VERSION:
                    raise StoreError(N_(
                        "{store} has schema version {version}, older than this Goalkeeper's "
                        "({ours}); start a host once to upgrade it").format(
                            store=self.describe(), version=version, ours=SCHEMA_VERSION))
                return
            migrate(con, self.describe())

    @property
    def shared(self) -> bool:
        return True

    @property
    def password(self) -> str | None:
        """The password this store connected with, when it needed one (for a listener)."""
        return self._password

    @property
    def schema_version(self) -> int:
        return self._read(schema_version)

    def describe(self) -> str:
        return N_("the shared store {where}").format(where=self.where)

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None

    def ping(self) -> None:
        self._read(lambda con: con.execute("SELECT 1").fetchone())

    def quick_check(self) -> str | None:
        return None  # PostgreSQL checks its own pages (and a broken one is an error, not data)

    @contextmanager
    def _reachable(self) -> Iterator[None]:
        """Connection-level failures as :class:`StoreUnavailable` (the connection is dropped,
        the next call opens a new one); a transaction to run again passes through."""
        try:
            yield
        except _RETRIED:
            raise
        except psycopg.Error as exc:
            raise self.failure(exc) from None

    def failure(self, exc: psycopg.Error) -> StoreError:
        """What a psycopg error means here. Unavailable — waited out, nothing lost: the
        connection or the server went (class 08, 57P01–57P03: shut down, crashed, starting),
        or the database takes no writes just now (25006: a standby, or
        ``default_transaction_read_only``). Anything else is a :class:`StoreError` that says
        what to do (42501: the privilege to grant)."""
        if self.read_only and isinstance(exc, errors.ReadOnlySqlTransaction):
            return StoreError(N_("{store} was opened for reading only").format(
                store=self.describe()))
        if isinstance(exc, _UNAVAILABLE):
            self.close()
            return StoreUnavailable(N_("{store} is unavailable: {error}").format(
                store=self.describe(), error=first_line(exc)))
        if isinstance(exc, errors.InsufficientPrivilege):
            return self._refused(exc)
        return StoreError(N_("{store} failed: {error}").format(store=self.describe(),
                                                               error=first_line(exc)))

    def _refused(self, exc: psycopg.Error) -> StoreError:
        """42501: which privilege is missing, and the command that grants it. Creating the
        schema on a fresh database needs CREATE on schema public, which PostgreSQL 15 no longer
        gives every role."""
        role, error = self._role(), first_line(exc)
        if "for schema" in error:
            return StoreError(N_(
                "{store} refused to create Goalkeeper's tables ({error}): the role {role} needs "
                "CREATE on the schema; a database owner can run: GRANT CREATE ON SCHEMA public "
                "TO {role}").format(store=self.describe(), error=error, role=role))
        return StoreError(N_(
            "{store} refused ({error}): the role {role} lacks a privilege on Goalkeeper's "
            "tables; a database owner can run: GRANT SELECT, INSERT, UPDATE, DELETE ON ALL "
            "TABLES IN SCHEMA public TO {role}").format(store=self.describe(), error=error,
                                                         role=role))

    def _role(self) -> str:
        con = self._con
        return con.info.user if con is not None and not con.closed else N_("(this role)")

    def _read(self, fn: Callable[[Connection], T]) -> T:
        with self._reachable():
            return fn(self.con)

    def _write(self, fn: Callable[[Connection], T], fenced: bool = True) -> T:
        """``fn`` in one serialisable transaction, run again when PostgreSQL asks for it."""
        for attempt in range(SERIAL_ATTEMPTS):
            try:
                with self._reachable():
                    con = self.con
                    with con.transaction():
                        if fenced and self.epoch is not None:
                            self._check_epoch(con, self.epoch)
                        return fn(con)
            except _RETRIED:
                self.retries += 1
                self.pause(random.uniform(0, 0.002 * min(attempt + 1, 10)))
        raise StoreError(N_("{store}: a transaction could not be serialised after {attempts} "
                            "attempts (too much contention)").format(store=self.describe(),
                                                                     attempts=SERIAL_ATTEMPTS))

    def _check_epoch(self, con: Connection, epoch: int) -> None:
        current = self.host_epoch(con, self.host_id or "")
        if current != epoch:
            raise LeaseLost(N_("another host took over as host {host} (epoch {current}, ours "
                               "{ours}): this host may no longer write").format(
                                   host=self.host_id, current=current, ours=epoch))

    @staticmethod
    def notify(con: Connection, payload: dict[str, Any]) -> None:
        """Announce a change to every listening host (delivered when the transaction commits)."""
        con.execute("SELECT pg_notify(%s, %s)", (CHANNEL, json.dumps(payload)))

    # -- goals ----------------------------------------------------------------------------------

    def get_goal(self, goal_id: str) -> Goal | None:
        row = self._read(lambda con: con.execute(
            f"SELECT {GOAL_COLUMNS} FROM goals WHERE id = %s", (goal_id,)).fetchone())
        return goal_from_row(row) if row else None

    def list_goals(self) -> list[Goal]:
        rows = self._read(lambda con: con.execute(
            f"SELECT {GOAL_COLUMNS} FROM goals ORDER BY id").fetchall())
        return [goal_from_row(row) for row in rows]

    def goals_on_window(self, window_id: str, states: Sequence[GoalState],
                        peers: bool = False) -> list[Goal]:
        """Goals in one of ``states`` that draw on ``window_id`` (counted inside a claim: the
        serialisable transaction makes the count hold across hosts); ``peers``: only those
        :meth:`_peers` counts."""
        where, params = self._peers(window_id, peers)
        rows = self._read(lambda con: con.execute(
            f"SELECT {GOAL_COLUMNS} FROM goals WHERE state = ANY(%s) AND windows @> "
            f"jsonb_build_array(%s::text){where} ORDER BY id",
            ([s.value for s in states], window_id, *params)).fetchall())
        return [goal_from_row(row) for row in rows]

    def goals_due_on_window(self, window_id: str, now: datetime,
                            reasons: Sequence[PauseReason], peers: bool = False) -> list[Goal]:
        where, params = self._peers(window_id, peers)
        rows = self._read(lambda con: con.execute(
            f"SELECT {GOAL_COLUMNS} FROM goals WHERE state = 'paused' AND auto_resume "
            "AND pause_reason = ANY(%s) AND next_resume_at IS NOT NULL AND next_resume_at <= %s "
            f"AND windows @> jsonb_build_array(%s::text){where} ORDER BY id",
            ([r.value for r in reasons], now, window_id, *params)).fetchall())
        return [goal_from_row(row) for row in rows]

    def _peers(self, window_id: str, peers: bool) -> tuple[str, tuple[Any, ...]]:
        """The condition for goals that share this host's resume slots on a window: its own,
        and those of hosts *online* now — heartbeat within :attr:`lease_seconds` by the
        database's clock, so a host killed without a word stops holding slots — that draw on
        the same account for the window's provider (any, while this host's is not known)."""
        if not peers or self.host_id is None:
            return "", ()
        provider = window_id.partition(":")[0]
        return (" AND (goals.host = %s OR EXISTS (SELECT 1 FROM hosts o WHERE o.host_id = "
                "goals.host AND o.state = 'online' AND o.heartbeat >= now() - make_interval("
                "secs => %s) AND coalesce(o.accounts -> %s = (SELECT m.accounts -> %s FROM "
                "hosts m WHERE m.host_id = %s), true)))",
                (self.host_id, self.lease_seconds, provider, provider, self.host_id))

    def transact(self, goal_id: str, decide: Callable[[Goal | None], Mutation[T]]
                 ) -> Committed[T]:
        """Read a goal (its row locked), let ``decide`` compute its new row and history, write
        both — in one serialisable transaction; ``decide`` runs again if it is retried."""
        return self._write(lambda con: self._transact_in(con, goal_id, decide))

    def transact_many(self, changes: Sequence[tuple[str, Callable[[Goal | None], Mutation[T]]]]
                      ) -> list[Committed[T]]:
        """Every change in order, in one transaction. The rows there are are locked first,
        in goal-id order, so that two hosts' batches never wait for each other in a circle."""
        def run(con: Connection) -> list[Committed[T]]:
            con.execute("SELECT id FROM goals WHERE id = ANY(%s) ORDER BY id FOR UPDATE",
                        (sorted({goal_id for goal_id, _ in changes}),))
            return [self._transact_in(con, goal_id, decide) for goal_id, decide in changes]
        return self._write(run)

    def _transact_in(self, con: Connection, goal_id: str,
                     decide: Callable[[Goal | None], Mutation[T]]) -> Committed[T]:
        row = con.execute(f"SELECT {GOAL_COLUMNS} FROM goals WHERE id = %s FOR UPDATE",
                          (goal_id,)).fetchone()
        before = goal_from_row(row) if row else None
        mutation = decide(before)
        new = validated(owned(goal_id, before, mutation.goal, self.host_id))
        if new is not None and new != before:
            self.put_goal(con, new)
        rows = [self._insert_history(con, r) for r in mutation.history]
        after = new if new is not None else before
        return Committed(before, after, mutation.result, rows)

    def put_goal(self, con: Connection, goal: Goal) -> None:
        """Write a goal's row and announce it, inside the caller's transaction."""
        con.execute(f"INSERT INTO goals ({GOAL_COLUMNS}) VALUES ({_GOAL_MARKS}) "
                    f"ON CONFLICT (id) DO UPDATE SET {_GOAL_UPDATES}", goal_params(goal))
        self.notify(con, {"k": "goal", "id": goal.id, "h": goal.host})

    def run_transaction(self, fn: Callable[[Connection], T]) -> T:
        """``fn`` in one serialisable transaction of its own (a bulk copy); not fenced."""
        return self._write(fn, fenced=False)

    def remove_goal(self, goal_id: str, row: HistoryRow | None = None) -> HistoryRow | None:
        def body(con: Connection) -> HistoryRow | None:
            found = con.execute(f"SELECT {GOAL_COLUMNS} FROM goals WHERE id = %s FOR UPDATE",
                                (goal_id,)).fetchone()
            if found is not None:
                owned(goal_id, goal_from_row(found), None, self.host_id)
                con.execute("DELETE FROM goals WHERE id = %s", (goal_id,))
                self.notify(con, {"k": "goal", "id": goal_id, "h": found[-1]})
            return self._insert_history(con, row) if row is not None else None

        return self._write(body)

    def adopt_goals(self) -> int:
        """Nothing on a shared store: every goal keeps the host that owns it."""
        return 0

    # -- history --------------------------------------------------------------------------------

    def _insert_history(self, con: Connection, row: HistoryRow) -> HistoryRow:
        return self.insert_history(con, written_by(row, self.host_id))

    def insert_history(self, con: Connection, row: HistoryRow) -> HistoryRow:
        """Append ``row`` as it is (its writer included), inside the caller's transaction."""
        found = con.execute(
            f"INSERT INTO history ({_HISTORY_WRITTEN}) VALUES "
            "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            history_params(row)).fetchone()
        assert found is not None
        return row.model_copy(update={"id": int(found[0])})

    def append_history(self, row: HistoryRow) -> HistoryRow:
        return self._write(lambda con: self._insert_history(con, row))

    def history(self, goal: str | None = None, limit: int = 100,
                offset: int = 0) -> list[HistoryRow]:
        where, params = ("WHERE goal = %s", [goal]) if goal else ("", [])
        rows = self._read(lambda con: con.execute(
            f"SELECT {HISTORY_COLUMNS} FROM history {where} ORDER BY id DESC LIMIT %s OFFSET %s",
            [*params, limit, offset]).fetchall())
        return [history_from_row(row) for row in rows]

    def count_history(self, goal: str | None = None) -> int:
        where, params = ("WHERE goal = %s", [goal]) if goal else ("", [])
        row = self._read(lambda con: con.execute(f"SELECT count(*) FROM history {where}",
                                                 params).fetchone())
        return int(row[0]) if row else 0

    # -- quota readings -------------------------------------------------------------------------

    def save_reading(self, reading: QuotaReading) -> bool:
        """The window's latest when it wins (a conditional upsert: the freshest wins, and a
        reading that is not exact never hides a fresh exact one of another host), and a point
        of its series; every other host of the account hears of it."""
        return self._write(lambda con: self.put_reading(con, reading))

    def put_reading(self, con: Connection, reading: QuotaReading, series: bool = True) -> bool:
        """:meth:`save_reading` inside the caller's transaction."""
        host = self.host_id or ""
        if self._ahead_of_store(con, reading):
            return False
        horizon = reading.observed_at - timedelta(seconds=self.authority_seconds)
        won = con.execute(
            "INSERT INTO quota_latest AS l (account, window_id, provider, observed_at, "
            "reading, host, exactness) VALUES (%s, %s, %s, %s, %s::jsonb, %s, %s) "
            "ON CONFLICT (account, window_id) DO UPDATE SET provider = excluded.provider, "
            "observed_at = excluded.observed_at, reading = excluded.reading, "
            "host = excluded.host, exactness = excluded.exactness "
            "WHERE l.observed_at > now() + make_interval(secs => %s) OR ("
            "excluded.observed_at >= l.observed_at AND (excluded.exactness = 'exact' "
            "OR l.exactness <> 'exact' OR l.host = excluded.host OR l.observed_at < %s)) "
            "RETURNING 1",
            (reading.account, reading.window_id, reading.provider, reading.observed_at,
             masked(reading.model_dump_json()), host, reading.exactness.value,
             CLOCK_SKEW_LIMIT_SECONDS, horizon)).fetchone()
        if won is None:
            return False
        if series:
            con.execute("INSERT INTO quota_series (account, window_id, observed_at, "
                        "used_percent, exactness) VALUES (%s, %s, %s, %s, %s)",
                        (reading.account, reading.window_id, reading.observed_at,
                         reading.used_percent, reading.exactness.value))
        self.notify(con, {"k": "reading", "a": reading.account, "w": reading.window_id,
                          "h": host, "x": reading.exactness is Exactness.EXACT})
        return True

    @staticmethod
    def _ahead_of_store(con: Connection, reading: QuotaReading) -> bool:
        """A reading stamped further ahead of the database's clock than a clock may drift:
        refused, so a host with a fast clock never wins "freshest" over the others (its
        offset is shown, core.health). Refused rather than restamped with ``now()``: a reading
        queued while the store was away (core.store.writer) keeps the instant it was read."""
        row = con.execute("SELECT %s::timestamptz > now() + make_interval(secs => %s)",
                          (reading.observed_at, CLOCK_SKEW_LIMIT_SECONDS)).fetchone()
        if row is None or not row[0]:
            return False
        log.debug("reading of %s refused: stamped %s, ahead of the store's clock",
                  reading.window_id, reading.observed_at)
        return True

    def latest_readings(self, accounts: Sequence[str] | None = None) -> list[QuotaReading]:
        if accounts is None:
            rows = self._read(lambda con: con.execute(
                "SELECT reading FROM quota_latest ORDER BY window_id, account").fetchall())
        else:
            rows = self._read(lambda con: con.execute(
                "SELECT reading FROM quota_latest WHERE account = ANY(%s) "
                "ORDER BY window_id, account", (list(accounts),)).fetchall())
        return [QuotaReading.model_validate(row[0]) for row in rows]

    def latest_reading(self, account: str, window_id: str) -> QuotaReading | None:
        row = self._read(lambda con: con.execute(
            "SELECT reading FROM quota_latest WHERE account = %s AND window_id = %s",
            (account, window_id)).fetchone())
        return QuotaReading.model_validate(row[0]) if row else None

    def series(self, window_id: str, since: datetime | None = None,
               account: str = "") -> list[tuple[datetime, float]]:
        rows = self._read(lambda con: con.execute(
            "SELECT observed_at, used_percent FROM quota_series WHERE account = %s AND "
            "window_id = %s AND observed_at >= coalesce(%s, '-infinity'::timestamptz) AND "
            "used_percent IS NOT NULL ORDER BY observed_at",
            (account, window_id, since)).fetchall())
        return [(at, float(used)) for at, used in rows]

    def prune_series(self, before: datetime) -> int:
        def body(con: Connection) -> int:
            return con.execute("DELETE FROM quota_series WHERE observed_at < %s",
                               (before,)).rowcount

        return self._write(body)

    # -- meta -----------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self._read(lambda con: con.execute("SELECT value FROM meta WHERE key = %s",
                                                 (key,)).fetchone())
        return str(row[0]) if row else None

    def set_meta(self, key: str, value: str) -> None:
        self._write(lambda con: con.execute(
            "INSERT INTO meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = "
            "excluded.value", (key, value)))
