"""Provider reports waiting for the store: in order, bounded, retried until they are stored.

Providers report through the engine's sink from anywhere, at any time; the store may be unable to
take a write just then (the disk is full, another process holds the write lock past the busy
timeout, the file turned read-only). A report that cannot be stored is never dropped: it stays
at the head of the queue and is tried again with backoff (:class:`StoreRetryPolicy`) until the
store takes it — without a restart — while :class:`StoreHealth` says "store unavailable:
<reason> since T" to the window and to ``goalkeeper status``.

The queue is bounded by merging: a report with a *key* (a window's reading, a goal's
observation, a run's progress) supersedes an older waiting one with the same key once the queue
is longer than :data:`SOFT_LIMIT`. Reports without a key (a limit hit, a finish, a failure) are
never merged or dropped; there are at most a few per goal.

A job that fails for any other reason (a bug) is logged and dropped, as before: retrying a
programming error would only block every report behind it.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass

from core.clock import Clock, iso
from core.health import StoreHealth

log = logging.getLogger("goalkeeper")

Job = Callable[[], Awaitable[None]]
SOFT_LIMIT = 1000

#: SQLite result codes that mean "not now", not "never": the report waits for the store
_TRANSIENT = ("SQLITE_FULL", "SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_IOERR", "SQLITE_READONLY",
              "SQLITE_CANTOPEN", "SQLITE_PROTOCOL")


def store_unavailable(exc: BaseException) -> str | None:
    """Why the store could not take a write, when ``exc`` says it is unavailable; else None."""
    if not isinstance(exc, sqlite3.OperationalError | sqlite3.DatabaseError):
        return None
    name = getattr(exc, "sqlite_errorname", None) or ""
    if name.startswith(_TRANSIENT):
        return f"{exc} ({name})"
    if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
        return f"{exc} ({name})"
    if not name and "locked" in str(exc):
        return str(exc)
    return None


@dataclass(frozen=True)
class StoreRetryPolicy:
    """How a report that the store refused is tried again (retry-table.md, the SQLite rows).

    Attributes:
        busy_initial: first wait after SQLITE_BUSY / LOCKED (the busy timeout already waited).
        busy_max: the cap for lock contention.
        local_max: the cap for a full disk, a read-only or failing file ("re-check on a slow
            poll, 5 min").
        factor: each further failure multiplies the wait by this.
    """

    busy_initial: float = 1.0
    busy_max: float = 30.0
    local_max: float = 300.0
    factor: float = 2.0

    def __post_init__(self) -> None:
        if not (0 < self.busy_initial <= self.busy_max <= self.local_max and self.factor >= 1):
            raise ValueError("need 0 < busy_initial <= busy_max <= local_max and factor >= 1")

    def delay(self, failures: int, reason: str) -> float:
        busy = "SQLITE_BUSY" in reason or "SQLITE_LOCKED" in reason or "locked" in reason
        cap = self.busy_max if busy else self.local_max
        return min(cap, self.busy_initial * self.factor ** min(max(failures - 1, 0), 32))


@dataclass
class _Report:
    job: Job
    key: Hashable | None


class ReportQueue:
    """The engine's inbox. Owns the waiting reports and the store's health as seen by writes."""

    def __init__(self, clock: Clock, on_health: Callable[[StoreHealth], None],
                 policy: StoreRetryPolicy | None = None) -> None:
        self._clock = clock
        self._on_health = on_health
        self.policy = policy or StoreRetryPolicy()
        self._items: deque[_Report] = deque()
        self._ready = asyncio.Event()
        self._empty = asyncio.Event()
        self._empty.set()
        self._limit = SOFT_LIMIT
        self.health = StoreHealth()
        self.merged = 0

    def __len__(self) -> int:
        return len(self._items)

    def put(self, job: Job, key: Hashable | None = None) -> None:
        self._items.append(_Report(job, key))
        self._ready.set()
        self._empty.clear()
        if len(self._items) > self._limit:
            self._merge()

    def _merge(self) -> None:
        """Drop waiting reports that a later one with the same key supersedes (never the
        head, which may be being applied)."""
        seen: set[Hashable] = set()
        kept: list[_Report] = []
        items = list(self._items)
        for report in reversed(items[1:]):
            if report.key is not None and report.key in seen:
                self.merged += 1
                continue
            if report.key is not None:
                seen.add(report.key)
            kept.append(report)
        self._items = deque([items[0], *reversed(kept)])
        if len(self._items) > SOFT_LIMIT:
            self._limit = 2 * len(self._items)  # nothing more to merge: look again later
            log.warning("%d provider reports wait for the store and cannot be merged",
                        len(self._items))
        else:
            self._limit = SOFT_LIMIT

    async def join(self) -> None:
        """Until every waiting report has been applied (or dropped as a bug)."""
        await self._empty.wait()

    async def work(self) -> None:
        """Apply reports one by one, in order, forever (the engine runs this as a task)."""
        failures = 0
        while True:
            if not self._items:
                self._ready.clear()
                self._empty.set()
                await self._ready.wait()
                continue
            head = self._items[0]
            try:
                await head.job()
            except Exception as exc:
                reason = store_unavailable(exc)
                if reason is None:
                    log.exception("applying a provider report failed")
                else:
                    failures += 1
                    self.failed(reason)
                    await self._clock.sleep(self.policy.delay(failures, reason))
                    continue
            failures = 0
            self._items.popleft()
            self.succeeded()

    def failed(self, reason: str) -> None:
        """A write was refused (by a report here or by any other write of the engine)."""
        since = self.health.since if not self.health.available else self._clock.now()
        if self.health.available or reason != self.health.reason:
            log.error("store unavailable: %s (%d provider reports wait)", reason,
                      len(self._items))
        self._set(StoreHealth(False, reason, since, len(self._items)))

    def succeeded(self) -> None:
        """A write went through: the store is available again."""
        if not self.health.available:
            log.warning("store available again after %s; %d reports still to apply",
                        iso(self.health.since), len(self._items))
            self._set(StoreHealth(waiting=len(self._items)))

    def _set(self, health: StoreHealth) -> None:
        self.health = health
        self._on_health(health)
