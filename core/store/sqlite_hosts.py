"""The SQLite store's hosts registry and action requests (see :class:`core.store.base.Store`).

A SQLite file belongs to one machine, so there is one host in it and requests never need to
travel; the tables are kept all the same, with the same semantics as the shared store, so that
``goalkeeper hosts`` and the contract suite say the same of both.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from core.clock import iso, parse_iso
from core.store.base import ActionRequest, HostRecord

#: the ``meta`` key holding the current host's epoch (see :mod:`core.hosts.lease`)
EPOCH_KEY = "host_epoch"
_HOST_COLUMNS = ("host_id, kind, machine, pid, since, heartbeat, epoch, state, stopped_at, "
                 "accounts, version")
_REQUEST_COLUMNS = ("id, to_host, by_host, request, state, requested_at, expires_at, answer, "
                    "answered_at")


def _instant(text: str | None) -> datetime:
    value = parse_iso(text)
    assert value is not None
    return value


def host_from_row(row: Sequence[Any]) -> HostRecord:
    return HostRecord(str(row[0]), str(row[1]), str(row[2]), int(row[3]), _instant(row[4]),
                      _instant(row[5]), int(row[6]), str(row[7]), parse_iso(row[8]),
                      json.loads(row[9] or "{}"), str(row[10]))


def request_from_row(row: Sequence[Any]) -> ActionRequest:
    return ActionRequest(int(row[0]), str(row[1]), str(row[2]), json.loads(row[3]), str(row[4]),
                         _instant(row[5]), _instant(row[6]),
                         json.loads(row[7]) if row[7] else None, parse_iso(row[8]))


class SqliteHosts:
    """Mixed into :class:`~core.store.sqlite.SqliteStore` (which owns ``_con`` and ``write``)."""

    _con: sqlite3.Connection

    def write(self, fenced: bool = True) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def current_epoch(self) -> int:
        row = self._con.execute("SELECT value FROM meta WHERE key = ?", (EPOCH_KEY,)).fetchone()
        return int(row[0]) if row else 0

    def take_epoch(self, host_id: str, floor: int = 0) -> int:
        """The data directory's next epoch: one host per file, so ``host_id`` does not matter."""
        with self.write(fenced=False) as con:
            epoch = max(self.current_epoch(), floor) + 1
            con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (EPOCH_KEY, str(epoch)))
        return epoch

    def beat_host(self, record: HostRecord) -> bool:
        with self.write(fenced=False) as con:
            row = con.execute("SELECT epoch FROM hosts WHERE host_id = ?",
                              (record.host_id,)).fetchone()
            if row is not None and int(row[0]) > record.epoch:
                return False
            con.execute(
                f"INSERT OR REPLACE INTO hosts ({_HOST_COLUMNS}) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (record.host_id, record.kind, record.machine, record.pid, iso(record.since),
                 iso(record.heartbeat), record.epoch, record.state, iso(record.stopped_at),
                 json.dumps(record.accounts, sort_keys=True), record.version))
        return True

    def stop_host(self, host_id: str, epoch: int, now: datetime) -> None:
        with self.write(fenced=False) as con:
            con.execute("UPDATE hosts SET state = 'stopped', stopped_at = ? WHERE host_id = ? "
                        "AND epoch = ?", (iso(now), host_id, epoch))

    def list_hosts(self) -> list[HostRecord]:
        rows = self._con.execute(f"SELECT {_HOST_COLUMNS} FROM hosts ORDER BY host_id")
        return [host_from_row(r) for r in rows.fetchall()]

    def get_host(self, host_id: str) -> HostRecord | None:
        row = self._con.execute(f"SELECT {_HOST_COLUMNS} FROM hosts WHERE host_id = ?",
                                (host_id,)).fetchone()
        return host_from_row(row) if row else None

    # -- action requests ------------------------------------------------------------------------

    def post_request(self, to_host: str, request: dict[str, Any], by: str, now: datetime,
                     expires_at: datetime) -> int:
        with self.write(fenced=False) as con:
            cur = con.execute(
                "INSERT INTO requests (to_host, by_host, request, requested_at, expires_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (to_host, by, json.dumps(request, sort_keys=True), iso(now), iso(expires_at)))
        assert cur.lastrowid is not None
        return cur.lastrowid

    def take_requests(self, host_id: str, now: datetime) -> list[ActionRequest]:
        with self.write(fenced=False) as con:
            rows = con.execute(
                f"SELECT {_REQUEST_COLUMNS} FROM requests WHERE to_host = ? AND state = "
                "'pending' AND julianday(expires_at) > julianday(?) ORDER BY id",
                (host_id, iso(now))).fetchall()
            con.executemany("UPDATE requests SET state = 'taken' WHERE id = ?",
                            [(r[0],) for r in rows])
        return [request_from_row((*r[:4], "taken", *r[5:])) for r in rows]

    def answer_request(self, request_id: int, answer: dict[str, Any], now: datetime) -> bool:
        with self.write(fenced=False) as con:
            cur = con.execute("UPDATE requests SET state = 'answered', answer = ?, "
                              "answered_at = ? WHERE id = ? AND state = 'taken'",
                              (json.dumps(answer, sort_keys=True), iso(now), request_id))
        return cur.rowcount == 1

    def expire_request(self, request_id: int, now: datetime) -> bool:
        with self.write(fenced=False) as con:
            cur = con.execute("UPDATE requests SET state = 'expired', answered_at = ? "
                              "WHERE id = ? AND state = 'pending'", (iso(now), request_id))
        return cur.rowcount == 1

    def get_request(self, request_id: int) -> ActionRequest | None:
        row = self._con.execute(f"SELECT {_REQUEST_COLUMNS} FROM requests WHERE id = ?",
                                (request_id,)).fetchone()
        return request_from_row(row) if row else None

    def prune_requests(self, before: datetime) -> int:
        with self.write(fenced=False) as con:
            cur = con.execute("DELETE FROM requests WHERE state IN ('answered', 'expired') "
                              "AND julianday(requested_at) < julianday(?)", (iso(before),))
        return cur.rowcount


__all__ = ["EPOCH_KEY", "SqliteHosts", "host_from_row"]
