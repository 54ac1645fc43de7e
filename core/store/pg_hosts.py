"""The shared store's hosts registry and action requests (see :class:`core.store.base.Store`).

A host's row holds its fencing epoch — bumped by every start under that host id, checked by
every write (:meth:`PostgresStore._check_epoch`) — and its heartbeat lease. Requests move
``pending → taken → answered`` or ``pending → expired`` by conditional updates, so a request is
carried out at most once even when its asker gives up at the very moment the owner takes it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg.types.json import Jsonb

from core.store.base import ActionRequest, HostRecord
from core.store.pg_rows import HOST_COLUMNS, REQUEST_COLUMNS, host_from_row, request_from_row

T = TypeVar("T")
Connection = psycopg.Connection[tuple[Any, ...]]
_HOST_UPDATES = ", ".join(f"{c.strip()} = excluded.{c.strip()}"
                          for c in HOST_COLUMNS.split(",")[1:])


class PgHosts:
    """Mixed into :class:`~core.store.postgres.PostgresStore` (which owns the connection)."""

    def _read(self, fn: Callable[[Connection], T]) -> T:
        raise NotImplementedError

    def _write(self, fn: Callable[[Connection], T], fenced: bool = True) -> T:
        raise NotImplementedError

    @staticmethod
    def notify(con: Connection, payload: dict[str, Any]) -> None:
        raise NotImplementedError

    @staticmethod
    def host_epoch(con: Connection, host_id: str) -> int:
        row = con.execute("SELECT epoch FROM hosts WHERE host_id = %s", (host_id,)).fetchone()
        return int(row[0]) if row else 0

    def take_epoch(self, host_id: str, floor: int = 0) -> int:
        def body(con: Connection) -> int:
            row = con.execute(
                "INSERT INTO hosts (host_id, kind, machine, pid, since, heartbeat, epoch, state) "
                "VALUES (%s, '', '', 0, now(), now(), %s, 'starting') ON CONFLICT (host_id) DO "
                "UPDATE SET epoch = greatest(hosts.epoch, %s) + 1 RETURNING epoch",
                (host_id, floor + 1, floor)).fetchone()
            assert row is not None
            return int(row[0])

        return self._write(body, fenced=False)

    def beat_host(self, record: HostRecord) -> bool:
        """Register or renew ``record``; the heartbeat is the database's clock, not the host's
        (hosts on several machines are judged online against one clock)."""
        def body(con: Connection) -> bool:
            found = con.execute("SELECT epoch, state FROM hosts WHERE host_id = %s FOR UPDATE",
                                (record.host_id,)).fetchone()
            if found is not None and int(found[0]) > record.epoch:
                return False
            con.execute(
                f"INSERT INTO hosts ({HOST_COLUMNS}) VALUES (%s, %s, %s, %s, %s, now(), %s, %s, "
                f"%s, %s, %s) ON CONFLICT (host_id) DO UPDATE SET {_HOST_UPDATES}",
                (record.host_id, record.kind, record.machine, record.pid, record.since,
                 record.epoch, record.state, record.stopped_at, Jsonb(record.accounts),
                 record.version))
            # the host's clock (``record.heartbeat``, read just before this transaction began)
            # against the database's: a host whose clock is off is shown (core.health)
            con.execute("UPDATE hosts SET clock_offset = extract(epoch FROM %s::timestamptz "
                        "- now()) WHERE host_id = %s", (record.heartbeat, record.host_id))
            if found is None or found[1] != record.state:  # came online, went away: say so
                self.notify(con, {"k": "host", "id": record.host_id})
            return True

        return self._write(body, fenced=False)

    def stop_host(self, host_id: str, epoch: int, now: datetime) -> None:
        def body(con: Connection) -> None:
            # when it stopped by the database's clock, like its heartbeats (``now`` unused)
            cur = con.execute("UPDATE hosts SET state = 'stopped', stopped_at = now() WHERE "
                              "host_id = %s AND epoch = %s", (host_id, epoch))
            if cur.rowcount:
                self.notify(con, {"k": "host", "id": host_id})

        self._write(body, fenced=False)

    def list_hosts(self) -> list[HostRecord]:
        rows = self._read(lambda con: con.execute(
            f"SELECT {HOST_COLUMNS}, now(), clock_offset FROM hosts WHERE state <> 'starting' "
            "ORDER BY host_id"
        ).fetchall())
        return [host_from_row(r) for r in rows]

    def get_host(self, host_id: str) -> HostRecord | None:
        row = self._read(lambda con: con.execute(
            f"SELECT {HOST_COLUMNS}, now(), clock_offset FROM hosts WHERE host_id = %s AND "
            "state <> "
            "'starting'",
            (host_id,)).fetchone())
        return host_from_row(row) if row else None

    # -- action requests ------------------------------------------------------------------------

    def post_request(self, to_host: str, request: dict[str, Any], by: str, now: datetime,
                     expires_at: datetime) -> int:
        def body(con: Connection) -> int:
            row = con.execute(
                "INSERT INTO requests (to_host, by_host, request, requested_at, expires_at) "
                "VALUES (%s, %s, %s, %s, %s) RETURNING id",
                (to_host, by, Jsonb(request), now, expires_at)).fetchone()
            assert row is not None
            self.notify(con, {"k": "request", "to": to_host, "id": int(row[0])})
            return int(row[0])

        return self._write(body, fenced=False)

    def take_requests(self, host_id: str, now: datetime) -> list[ActionRequest]:
        def body(con: Connection) -> list[ActionRequest]:
            rows = con.execute(
                f"UPDATE requests SET state = 'taken' WHERE to_host = %s AND state = 'pending' "
                f"AND expires_at > %s RETURNING {REQUEST_COLUMNS}", (host_id, now)).fetchall()
            return sorted((request_from_row(r) for r in rows), key=lambda r: r.id)

        return self._write(body, fenced=False)

    def answer_request(self, request_id: int, answer: dict[str, Any], now: datetime) -> bool:
        def body(con: Connection) -> bool:
            cur = con.execute("UPDATE requests SET state = 'answered', answer = %s, "
                              "answered_at = %s WHERE id = %s AND state = 'taken'",
                              (Jsonb(answer), now, request_id))
            if cur.rowcount:
                self.notify(con, {"k": "answer", "id": request_id})
            return cur.rowcount == 1

        return self._write(body, fenced=False)

    def expire_request(self, request_id: int, now: datetime) -> bool:
        def body(con: Connection) -> bool:
            cur = con.execute("UPDATE requests SET state = 'expired', answered_at = %s "
                              "WHERE id = %s AND state = 'pending'", (now, request_id))
            return cur.rowcount == 1

        return self._write(body, fenced=False)

    def get_request(self, request_id: int) -> ActionRequest | None:
        row = self._read(lambda con: con.execute(
            f"SELECT {REQUEST_COLUMNS} FROM requests WHERE id = %s", (request_id,)).fetchone())
        return request_from_row(row) if row else None

    def prune_requests(self, before: datetime) -> int:
        def body(con: Connection) -> int:
            return con.execute("DELETE FROM requests WHERE state IN ('answered', 'expired') "
                               "AND requested_at < %s", (before,)).rowcount

        return self._write(body, fenced=False)
