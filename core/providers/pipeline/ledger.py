"""The user-quota ledger: debits before a step runs, refills by hand, readings for the views.

One SQLite file (``<data dir>/pipelines/quotas.db``) with one row per quota. Every debit and refill
is one ``BEGIN IMMEDIATE`` transaction on a connection of its own, so concurrent steps of one host,
and a CLI refill racing them, never over-spend: a debit reads, decides and writes under the
write lock. Debits run off the event loop (:func:`asyncio.to_thread`).

A refused debit remembers what it needed (``need``): the quota's reading says ``limit_reached``
until the window resets, the bucket refills, or a refill covers it — which is what lets the core
scheduler resume the goal waiting on it (capacity quotas: only after a refill).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from core.atomic import private_file
from core.clock import iso, parse_iso
from core.models import Exactness, QuotaKind, QuotaReading
from core.providers.pipeline.attempts import Debit
from core.quota.user import (
    PERIOD_SECONDS,
    CapacityQuota,
    PeriodicQuota,
    TokenBucketQuota,
    largest_debit,
    window_id,
)

Spec = PeriodicQuota | CapacityQuota | TokenBucketQuota

_SCHEMA = """
CREATE TABLE IF NOT EXISTS quota_state (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    used REAL NOT NULL DEFAULT 0,
    window_start TEXT,
    tokens REAL,
    tokens_at TEXT,
    need REAL,
    updated_at TEXT NOT NULL
)
"""


@dataclass
class _Row:
    kind: str
    used: float = 0.0
    window_start: datetime | None = None
    tokens: float | None = None
    tokens_at: datetime | None = None
    need: float | None = None


class QuotaLedgerError(Exception):
    """A refill or debit that cannot be done (unknown quota, wrong kind)."""


class QuotaLedger:
    """Owns the ledger file. Thread-safe: each operation opens its own connection."""

    def __init__(self, path: Path, specs: Mapping[str, Spec]) -> None:
        self.path = path
        self.specs = dict(specs)

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        private_file(self.path)
        con = sqlite3.connect(str(self.path), timeout=30, isolation_level=None)
        try:
            con.execute("PRAGMA busy_timeout = 30000")
            con.execute(_SCHEMA)
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
        finally:
            con.close()

    # -- the gate a run debits through ---------------------------------------------------------

    def known(self, quota: str) -> bool:
        return quota in self.specs

    def problem(self, quota: str, cost: float) -> str | None:
        """Why a step drawing ``cost`` on ``quota`` can never run, or None."""
        spec = self.specs.get(quota)
        if spec is None:
            return (f"quota {quota!r} is not defined in config.toml (add a [quotas.{quota}] "
                    "table)")
        if cost > largest_debit(spec):
            return f"cost {cost:g} exceeds what quota {quota!r} can ever grant " \
                   f"({largest_debit(spec):g})"
        return None

    async def debit(self, quota: str, cost: float, now: datetime) -> Debit:
        return await asyncio.to_thread(self.debit_blocking, quota, cost, now)

    def debit_blocking(self, quota: str, cost: float, now: datetime) -> Debit:
        """Take ``cost`` from ``quota`` atomically, or refuse and say when it fits again."""
        spec = self._spec(quota)
        with self._write() as con:
            row = self._current(con, quota, spec, now)
            left = self._left(spec, row)
            if cost <= left:
                self._take(spec, row, cost)
                row.need = None
                self._store(con, quota, row, now)
                return Debit(True, window_id(quota))
            row.need = cost
            self._store(con, quota, row, now)
        return Debit(False, window_id(quota), self._fits_at(spec, row, cost, now),
                     f"quota {quota}: {left:g} left, {cost:g} needed")

    def refill_blocking(self, quota: str, amount: float, now: datetime) -> float:
        """Add ``amount`` to a capacity quota (up to its limit); returns what is left now."""
        spec = self._spec(quota)
        if not isinstance(spec, CapacityQuota):
            raise QuotaLedgerError(f"quota {quota!r} is a {spec.kind} quota; only capacity "
                                   "quotas are refilled by hand")
        if not (math.isfinite(amount) and amount > 0):  # NaN would refill everything
            raise QuotaLedgerError(f"the refill amount must be a positive number, not {amount:g}")
        with self._write() as con:
            row = self._current(con, quota, spec, now)
            row.used = max(0.0, row.used - amount)
            left = spec.limit - row.used
            if row.need is not None and row.need <= left:
                row.need = None
            self._store(con, quota, row, now)
        return left

    # -- readings ------------------------------------------------------------------------------

    def readings(self, now: datetime) -> list[QuotaReading]:
        return [self.reading(name, now) for name in sorted(self.specs)]

    def reading(self, quota: str, now: datetime) -> QuotaReading:
        spec = self._spec(quota)
        with self._write() as con:
            row = self._current(con, quota, spec, now)
        return _reading(quota, spec, row, now)

    # -- rows ----------------------------------------------------------------------------------

    def _spec(self, quota: str) -> Spec:
        spec = self.specs.get(quota)
        if spec is None:
            raise QuotaLedgerError(f"no quota named {quota!r} in config.toml "
                                   f"(known: {', '.join(sorted(self.specs)) or 'none'})")
        return spec

    def _current(self, con: sqlite3.Connection, quota: str, spec: Spec, now: datetime) -> _Row:
        """The row as of ``now``: a new periodic window starts empty, a bucket has refilled."""
        found = con.execute("SELECT kind, used, window_start, tokens, tokens_at, need FROM "
                            "quota_state WHERE name = ?", (quota,)).fetchone()
        row = _Row(spec.kind)
        if found is not None and found[0] == spec.kind:  # a changed kind starts afresh
            row = _Row(found[0], found[1], parse_iso(found[2]), found[3], parse_iso(found[4]),
                       found[5])
        if isinstance(spec, PeriodicQuota):
            start, _ = spec.window(now)
            if row.window_start != start:
                row.used, row.window_start, row.need = 0.0, start, None
        elif isinstance(spec, TokenBucketQuota):
            tokens = spec.capacity if row.tokens is None or row.tokens_at is None else (
                spec.refilled(row.tokens, row.tokens_at, now))
            row.tokens, row.tokens_at = tokens, now
            if row.need is not None and tokens >= row.need:
                row.need = None
        return row

    @staticmethod
    def _left(spec: Spec, row: _Row) -> float:
        if isinstance(spec, TokenBucketQuota):
            return row.tokens or 0.0
        return spec.limit - row.used

    @staticmethod
    def _take(spec: Spec, row: _Row, cost: float) -> None:
        if isinstance(spec, TokenBucketQuota):
            row.tokens = (row.tokens or 0.0) - cost
        else:
            row.used += cost

    @staticmethod
    def _fits_at(spec: Spec, row: _Row, cost: float, now: datetime) -> datetime | None:
        if isinstance(spec, PeriodicQuota):
            return spec.window(now)[1]
        if isinstance(spec, TokenBucketQuota):
            return now + timedelta(seconds=spec.seconds_until(row.tokens or 0.0, cost))
        return None  # capacity: only a refill

    @staticmethod
    def _store(con: sqlite3.Connection, quota: str, row: _Row, now: datetime) -> None:
        con.execute("INSERT OR REPLACE INTO quota_state VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (quota, row.kind, row.used, iso(row.window_start), row.tokens,
                     iso(row.tokens_at), row.need, iso(now)))


def _reading(quota: str, spec: Spec, row: _Row, now: datetime) -> QuotaReading:
    label = spec.label or quota
    common = {"window_id": window_id(quota), "provider": "pipeline", "label": label,
              "exactness": Exactness.EXACT, "observed_at": now}
    if isinstance(spec, TokenBucketQuota):
        tokens = row.tokens if row.tokens is not None else spec.capacity
        return QuotaReading(kind=QuotaKind.TOKEN_BUCKET, tokens=tokens, burst=spec.capacity,
                            rate_per_second=spec.rate_per_second,
                            used_percent=100.0 * (1.0 - tokens / spec.capacity),
                            limit_reached=tokens < max(1.0, row.need or 0.0), **common)
    left = spec.limit - row.used
    reached = left <= 0 or (row.need is not None and left < row.need)
    if isinstance(spec, PeriodicQuota):
        return QuotaReading(kind=QuotaKind.PERIODIC, used=row.used, limit=spec.limit,
                            used_percent=100.0 * row.used / spec.limit,
                            resets_at=spec.window(now)[1],
                            window_seconds=PERIOD_SECONDS[spec.period], limit_reached=reached,
                            **common)
    return QuotaReading(kind=QuotaKind.CAPACITY, used=row.used, limit=spec.limit,
                        used_percent=100.0 * row.used / spec.limit, limit_reached=reached,
                        no_timed_reset=True,
                        note=f"{left:g} left; refilled by hand: `goalkeeper quota refill "
                             f"{quota} N`", **common)
