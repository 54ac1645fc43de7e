"""Provider reports waiting for the store: in order, bounded, retried until they are stored.

Providers report through the engine's sink from anywhere, at any time; the store may be unable to
take a write just then (the disk is full, another process holds the write lock past the busy
timeout, the file turned read-only). A report that cannot be stored is never dropped: it stays
at the head of the queue and is tried again with backoff (:class:`StoreRetryPolicy`) until the
store takes it — without a restart — while :class:`StoreHealth` says "store unavailable:
<reason> since T" to the window and to ``goalkeeper status``.

The queue is bounded by merging: a report with a *key* (a window's reading, a goal's
observation, a run's progress) supersedes an older waiting one with the same key while the store
is unavailable, or once more than :data:`SOFT_LIMIT` wait — so at most one per window, goal and
run waits, plus the reports without a key (a limit hit, a finish, a failure), which are never
merged or dropped and of which there are a few per goal. Per goal, order is kept.

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
from core.store.base import StoreUnavailable

log = logging.getLogger("goalkeeper")

Job = Callable[[], Awaitable[None]]
SOFT_LIMIT = 1000

#: SQLite result codes that mean "not now", not "never": the report waits for the store
_TRANSIENT = ("SQLITE_FULL", "SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_IOERR", "SQLITE_READONLY",
              "SQLITE_CANTOPEN", "SQLITE_PROTOCOL")


def store_unavailable(exc: BaseException) -> str | None:
    """Why the store could not take a write, when ``exc`` says it is unavailable; else None."""
    if isinstance(exc, StoreUnavailable):  # the shared store: the server or the network
        return str(exc)
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
        busy = "SQLITE_BUSY" in reason or "SQLITE_LOCKED" in reason or "locked" in reason or (
            "shared store" in reason)  # a server or a network that is back soon
        cap = self.busy_max if busy else self.local_max
        return min(cap, self.busy_initial * self.factor ** min(max(failures - 1, 0), 32))


@dataclass
class _Report:
    job: Job
    key: Hashable | None
    superseded: bool = False


class ReportQueue:
    """The engine's inbox. Owns the waiting reports and the store's health as seen by writes."""

    def __init__(self, clock: Clock, on_health: Callable[[StoreHealth], None],
                 policy: StoreRetryPolicy | None = None) -> None:
        self._clock = clock
        self._on_health = on_health
        self.policy = policy or StoreRetryPolicy()
        self._items: deque[_Report] = deque()
        self._latest: dict[Hashable, _Report] = {}
        self._live = 0
        self._ready = asyncio.Event()
        self._empty = asyncio.Event()
        self._empty.set()
        self._kick = asyncio.Event()
        self.health = StoreHealth()
        self.merged = 0

    def __len__(self) -> int:
        """Reports still to apply (merged ones not counted)."""
        return self._live

    def put(self, job: Job, key: Hashable | None = None) -> None:
        report = _Report(job, key)
        if key is not None:
            older = self._latest.get(key)
            merging = not self.health.available or self._live >= SOFT_LIMIT
            if merging and older is not None and self._items and older is not self._items[0]:
                older.superseded = True  # the newer one says all it said
                self._live -= 1
                self.merged += 1
            self._latest[key] = report
        self._items.append(report)
        self._live += 1
        self._ready.set()
        self._empty.clear()
        if self._live == SOFT_LIMIT + 1:
            self._compact()

    def _compact(self) -> None:
        """Keep only the newest waiting report of each key (never touching the head)."""
        for report in list(self._items)[1:]:
            if report.key is not None and not report.superseded and (
                    self._latest.get(report.key) is not report):
                report.superseded = True
                self._live -= 1
                self.merged += 1
        if self._live > SOFT_LIMIT:
            log.warning("%d provider reports wait and cannot be merged", self._live)

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
            if not head.superseded:
                try:
                    await head.job()
                except Exception as exc:
                    reason = store_unavailable(exc)
                    if reason is None:
                        log.exception("applying a provider report failed")
                    else:
                        failures += 1
                        self.failed(reason)
                        await self._backoff(self.policy.delay(failures, reason))
                        continue
                self._live -= 1
            failures = 0
            self._items.popleft()
            if head.key is not None and self._latest.get(head.key) is head:
                del self._latest[head.key]
            self.succeeded()

    async def _backoff(self, delay: float) -> None:
        """Sleep ``delay`` — or less, when another write meanwhile found the store usable."""
        self._kick.clear()
        kicked = asyncio.ensure_future(self._kick.wait())
        slept = asyncio.ensure_future(self._clock.sleep(delay))
        try:
            await asyncio.wait({kicked, slept}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            kicked.cancel()
            slept.cancel()

    def failed(self, reason: str) -> None:
        """A write was refused (by a report here or by any other write of the engine)."""
        since = self.health.since if not self.health.available else self._clock.now()
        if self.health.available:
            self._compact()
        if self.health.available or reason != self.health.reason:
            log.error("store unavailable: %s (%d provider reports wait)", reason, self._live)
        self._set(StoreHealth(False, reason, since, self._live))

    def succeeded(self) -> None:
        """A write went through: the store is available again."""
        if not self.health.available:
            log.warning("store available again after %s; %d reports still to apply",
                        iso(self.health.since), self._live)
            self._set(StoreHealth(waiting=self._live))
            self._kick.set()

    def _set(self, health: StoreHealth) -> None:
        self.health = health
        self._on_health(health)
