"""The engine's ear on the shared store: what other hosts did, applied here within moments.

:class:`SharedSync` listens (:class:`~core.store.listen.Listener`, ``LISTEN/NOTIFY``) and, on the
event loop:

* **goals of other hosts** — kept in :attr:`SharedSync.others` (the engine's own stay in
  ``engine.goals``: only those are ever run, resumed or paused here) and announced as
  :class:`~core.events.GoalChanged` / :class:`~core.events.GoalRemoved`, so the window shows
  every goal of every host;
* **readings of this host's accounts** stored by another host — fed to the quota manager as if
  this host had read them (gauges, rising edges, the scheduler: a reset seen on one machine
  wakes the others' resumes), without being stored again;
* **requests** for this host — carried out (:mod:`core.hosts.remote`), and **answers** to this
  host's own asks;
* after every (re)connection of the listener, a catch-up: notifications sent while it was away
  are lost, so the others' goals, the readings and the pending requests are read again.

Nothing here writes a goal: what is heard is shown and fed to the scheduler, and only the owner
of a goal changes it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.clock import Clock
from core.events import EventBus, GoalChanged, GoalRemoved, HostChanged
from core.goals.quota_intake import QuotaIntake
from core.goals.scheduler import waiting_for_quota
from core.hosts.remote import RemoteActions
from core.i18n import N_
from core.models import Exactness, Goal, QuotaReading
from core.quota.machine import HysteresisPolicy, QuotaManager, is_exhausted, is_recovered_level
from core.store import StoreError
from core.store.inbox import ReportQueue
from core.store.listen import Listener
from core.store.thread import StoreThread

log = logging.getLogger("goalkeeper")


Spawn = Callable[[Awaitable[Any], str], "asyncio.Task[Any]"]


@dataclass(frozen=True)
class SyncParts:
    """What the shared-store sync is handed: the store and its report queue, this host's id,
    goals and accounts, the quota machine and intake (what is heard counts as read here), the
    remote actions (requests and answers), and the host's ``spawn``, scheduler ``poke`` and
    ``start`` (run once an unreachable store is back)."""

    store: StoreThread
    queue: ReportQueue
    clock: Clock
    bus: EventBus
    host_id: str | None
    own: Mapping[str, Goal]
    others: dict[str, Goal]  # filled here: every other host's goal, as last heard
    account_for: Callable[[str], str]
    accounts: Callable[[], list[str]]
    quotas: QuotaManager
    intake: QuotaIntake
    remote: RemoteActions
    hysteresis: HysteresisPolicy
    spawn: Spawn
    poke: Callable[[], None]
    start: Callable[[datetime], Awaitable[None]]


class SharedSync:
    """Owns the listener and the copy of other hosts' goals. Attributes: ``others`` (id →
    Goal), ``heard`` (notifications applied, for tests and benchmarks)."""

    def __init__(self, parts: SyncParts) -> None:
        self._parts = parts
        self.others = parts.others
        self.heard = 0
        self._listener: Listener | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._probe: asyncio.Task[None] | None = None

    @property
    def me(self) -> str:
        return self._parts.host_id or ""

    def split(self, goals: list[Goal]) -> dict[str, Goal]:
        """This host's goals out of every goal in the store; the others are kept here."""
        self.others.clear()
        self.others.update((g.id, g) for g in goals if g.host and g.host != self.me)
        return {g.id: g for g in goals if g.id not in self.others}

    async def own_readings(self) -> list[QuotaReading]:
        """The latest readings of this host's accounts (every reading, on a one-machine store)."""
        readings = await self._parts.store.run(lambda s: s.latest_readings())
        return [r for r in readings if self._parts.account_for(r.provider) == r.account]

    # -- an unreachable shared store --------------------------------------------------------------

    async def open_later(self) -> None:
        """The shared store could not be reached at start: keep trying, then start as usual
        (the providers start then: they read their own files, so nothing is missed)."""
        failures = 0
        while True:
            failures += 1
            await self._parts.clock.sleep(self._delay(failures))
            try:
                await self._parts.store.open(self._parts.clock.now())
            except StoreError as exc:
                self._parts.queue.failed(str(exc))
                continue
            self._parts.queue.succeeded()
            log.warning("the shared store is reachable: starting")
            await self._parts.start(self._parts.clock.now())
            return

    def health_changed(self, available: bool) -> None:
        """While the store refuses, something must notice when it is back — even with no
        report waiting (the scheduler sleeps meanwhile): a probe, with the report queue's
        backoff."""
        if available:
            self._parts.poke()
        elif self._parts.store.is_open and (self._probe is None or self._probe.done()):
            self._probe = self._parts.spawn(self._probing(), "store-probe")

    async def _probing(self) -> None:
        failures = 0
        while not self._parts.queue.health.available:
            failures += 1
            await self._parts.clock.sleep(self._delay(failures))
            if self._parts.queue.health.available:
                return
            try:
                await self._parts.store.run(lambda s: s.ping())
            except StoreError as exc:
                self._parts.queue.failed(str(exc))
                continue
            self._parts.queue.succeeded()

    def _delay(self, failures: int) -> float:
        return self._parts.queue.policy.delay(failures, self._parts.queue.health.reason or "")

    # -- listening ------------------------------------------------------------------------------

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._listener = self._parts.store.listener(self._deliver)
        if self._listener is not None:
            self._listener.start()

    async def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            await asyncio.to_thread(listener.stop)

    @property
    def listening(self) -> bool:
        return self._listener is not None and self._listener.connected

    def _deliver(self, payload: dict[str, Any]) -> None:
        """From the listener's thread: onto the loop."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._on_note, payload)

    def _on_note(self, payload: dict[str, Any]) -> None:
        kind = payload.get("k")
        if kind == "lost":  # the server went away (or the network): say so, probe for it
            self._parts.queue.failed(N_("the shared store is unavailable: {error}").format(
                error=payload.get("why")))
            return
        if kind == "answer":
            self._parts.remote.answered(_int(payload.get("id")))
            return
        if kind == "host":  # came online, stopped: the views of the hosts say so
            self._parts.bus.publish(HostChanged(str(payload.get("id"))))
            return
        if kind == "request" and payload.get("to") != self.me:
            return
        if kind in ("goal", "reading") and payload.get("h") == self.me:
            return  # our own change: applied when it was committed
        if kind in ("goal", "reading", "request", "listening"):
            self._parts.spawn(self._apply(payload), f"heard:{kind}")

    async def _apply(self, payload: dict[str, Any]) -> None:
        kind = payload.get("k")
        try:
            if kind == "goal":
                await self._goal(str(payload.get("id")))
            elif kind == "reading":
                await self._reading(str(payload.get("a")), str(payload.get("w")),
                                    str(payload.get("h") or ""))
            elif kind == "request":
                await self._parts.remote.serve()
            elif kind == "listening":
                await self.catch_up()
            self.heard += 1
        except Exception as exc:  # the store went away meanwhile: the catch-up brings it back
            log.warning("applying a change of another host failed: %s", exc)

    async def _goal(self, goal_id: str) -> None:
        goal = await self._parts.store.run(lambda s: s.get_goal(goal_id))
        if goal is not None and goal.host == self.me:
            return
        before = self.others.pop(goal_id, None)
        if goal is None:
            if before is not None:
                self._parts.bus.publish(GoalRemoved(goal_id))
            return
        self.others[goal_id] = goal
        if goal != before:
            self._parts.bus.publish(GoalChanged(goal, before))

    async def _reading(self, account: str, window_id: str, by: str = "") -> None:
        reading = await self._parts.store.run(lambda s: s.latest_reading(account, window_id))
        if reading is None or self._parts.account_for(reading.provider) != account:
            return
        await self._heard(reading, by)

    async def _heard(self, reading: QuotaReading, by: str) -> None:
        previous = self._parts.quotas.tracker(reading.window_id).reading
        if previous is not None and reading.observed_at <= previous.observed_at:
            return
        await self._parts.intake.reading_heard(reading)
        if early_reset(previous, reading, self._parts.hysteresis):
            await self._wake_waiting(reading, by)

    async def _wake_waiting(self, reading: QuotaReading, by: str) -> None:
        """Another host read, exactly, that a window this host's goals wait on is back before
        its planned reset: their not-before becomes now (the claim's checks still decide) —
        what a provider's own early-reset read does on one machine."""
        now = self._parts.clock.now()
        for goal in list(self._parts.own.values()):
            if (waiting_for_quota(goal) and reading.window_id in goal.windows
                    and goal.next_resume_at is not None and goal.next_resume_at > now):
                why = (N_("quota recovered (read by host {host})").format(host=by) if by
                       else N_("quota recovered (read by another host)"))
                log.info("%s: waking %s for %s", why, goal.id, reading.window_id)
                await self._parts.intake.release(goal.id, [reading.window_id], why)

    async def catch_up(self) -> None:
        """Read again what notifications may have said while nobody listened."""
        goals = await self._parts.store.run(lambda s: s.list_goals())
        seen = {g.id for g in goals if g.host and g.host != self.me}
        for goal_id in set(self.others) - seen:
            del self.others[goal_id]
            self._parts.bus.publish(GoalRemoved(goal_id))
        for goal in goals:
            if goal.id in seen and self.others.get(goal.id) != goal:
                before = self.others.get(goal.id)
                self.others[goal.id] = goal
                self._parts.bus.publish(GoalChanged(goal, before))
        accounts = self._parts.accounts()
        for reading in await self._parts.store.run(lambda s: s.latest_readings(accounts)):
            if self._parts.account_for(reading.provider) == reading.account:
                await self._heard(reading, "")
        await self._parts.remote.serve()
        self._parts.remote.answered()


def early_reset(previous: QuotaReading | None, reading: QuotaReading,
                policy: HysteresisPolicy) -> bool:
    """An exact reading that finds an exhausted window back (before its reset was due)."""
    return (previous is not None and reading.exactness is Exactness.EXACT
            and is_exhausted(previous, policy) and not reading.limit_reached
            and is_recovered_level(reading, policy))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) else None
