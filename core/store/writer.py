"""The write path: every change a host makes goes to the store through here.

One role: *write now, or queue until the store is back*. A write's failure or success also tells
the store's health (:class:`~core.store.inbox.ReportQueue` keeps it); ``SQLITE_BUSY`` past the
busy timeout runs the whole transaction again, up to :data:`BUSY_RETRIES` times
(``retry-table.md``); a report that cannot be stored now waits in the queue, in order, and is
never lost. Per goal, a lock is held from a resume's claim to its settling, so a runner's reports
wait for it.

Handed: the store thread, the report queue, and three callbacks — what a committed change does
(the goal book announces it), a write that says the file is damaged (safe mode checks it), a
fence refusal (the lease was lost).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections import defaultdict
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

from core.store.base import Committed, LeaseLost, Mutation, NotOwner, Store
from core.store.inbox import ReportQueue, store_unavailable
from core.store.thread import StoreThread

log = logging.getLogger("goalkeeper")

T = TypeVar("T")
Job = Callable[[], Awaitable[None]]
Decide = Callable[[Any], Mutation[Any]]
#: whole-transaction retries after SQLITE_BUSY (then the error surfaces)
BUSY_RETRIES = 3


class StoreWriter:
    """Writes to the store or queues until it can. Owns the per-goal locks.

    Attributes:
        store: the store thread every write runs on.
        queue: the reports waiting for the store (and the store's health).
        accepting: whether reports are taken (the host has started and not yet stopped).
    """

    def __init__(self, store: StoreThread, queue: ReportQueue,
                 on_committed: Callable[[Committed[Any]], None],
                 on_damage: Callable[[BaseException], None],
                 on_lease_lost: Callable[[LeaseLost], None]) -> None:
        self.store = store
        self.queue = queue
        self.accepting = False
        self._on_committed = on_committed
        self._on_damage = on_damage
        self._on_lease_lost = on_lease_lost
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    @property
    def available(self) -> bool:
        """Whether a write could be committed now (the store is open and takes writes)."""
        return self.queue.health.available and self.store.is_open

    def lock_for(self, goal_id: str) -> asyncio.Lock:
        """Held from a resume's claim to its settling: a runner's reports wait for it."""
        return self._locks[goal_id]

    async def written(self, fn: Callable[[Store], T]) -> T:
        """A store write: its failure or success also tells the store's health."""
        try:
            value = await self._busy_retried(fn)
        except Exception as exc:
            reason = store_unavailable(exc)
            if reason is not None:
                self.queue.failed(reason)
                self._on_damage(exc)
            elif isinstance(exc, LeaseLost):
                self._on_lease_lost(exc)
            raise
        self.queue.succeeded()
        return value

    async def _busy_retried(self, fn: Callable[[Store], T]) -> T:
        for _ in range(BUSY_RETRIES):
            try:
                return await self.store.run(fn)
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorname", "") not in ("SQLITE_BUSY", "SQLITE_LOCKED"):
                    raise
                log.warning("the store was locked past its busy timeout; trying again")
        return await self.store.run(fn)

    async def transact(self, goal_id: str, decide: Callable[[Any], Mutation[T]]
                       ) -> Committed[T]:
        """Run ``decide`` on the goal in one store transaction; announce what it committed."""
        committed: Committed[T] = await self.written(lambda s: s.transact(goal_id, decide))
        self._on_committed(committed)
        return committed

    async def report(self, goal_id: str, decide: Callable[[Any], Mutation[T]]
                     ) -> Committed[T]:
        """:meth:`transact`, never between a resume's claim and its settling."""
        async with self.lock_for(goal_id):
            return await self.transact(goal_id, decide)

    async def record_or_queue(self, goal_id: str, decide: Decide) -> None:
        """A change that must be stored because a runner already moved (its start failed, or
        it was stopped): stored now, or — while the store is unavailable — queued like a
        provider report, so the goal never stays ``running`` without a runner."""
        try:
            await self.transact(goal_id, decide)
        except Exception as exc:
            if store_unavailable(exc) is None:
                raise
            log.warning("%s: the change waits for the store (%s)", goal_id, exc)

            async def again() -> None:
                try:
                    await self.report(goal_id, decide)
                except NotOwner as exc:  # another host took the goal meanwhile: its to record
                    log.warning("%s; the change is not stored here", exc)

            self.enqueue(again)

    def enqueue(self, job: Job, key: Hashable | None = None) -> None:
        """Queue ``job`` behind the reports already waiting (a fence refusal ends it quietly:
        another host owns the goals now, so it is not ours to store)."""
        if not self.accepting:
            raise RuntimeError("the engine is not started")

        async def fenced() -> None:
            try:
                await job()
            except LeaseLost as exc:
                self._on_lease_lost(exc)

        self.queue.put(fenced, key)

    async def apply_or_queue(self, job: Job, key: Hashable) -> None:
        """Apply now — or, while reports wait for the store, after them, in order."""
        if len(self.queue) or not self.queue.health.available:
            self.enqueue(job, key)
            return
        try:
            await job()
        except Exception as exc:
            if store_unavailable(exc) is None:
                raise
            self.enqueue(job, key)

    async def drain(self) -> None:
        """Wait until every queued report has been applied."""
        await self.queue.join()

    async def drain_for_stop(self, seconds: float) -> None:
        """Apply what waits; with the store still refusing, say how much is not stored (the
        providers find it again in their own files when the next host starts)."""
        if self.queue.health.available:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(seconds):
                    await self.drain()
        if len(self.queue):
            log.error("stopping with %d provider reports not stored (%s); the next host reads "
                      "them again from the providers' files", len(self.queue),
                      self.queue.health.describe())
