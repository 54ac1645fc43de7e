"""The scheduler: wall-clock deadlines, rising edges, an adaptive fallback poll, wake from sleep.

One task. Each time it wakes it

1. re-evaluates the quota windows (stability timers, resets that passed) and handles the edges;
2. takes every goal paused for quota whose not-before time has come, asks its provider for a
   fresh reading, and calls ``resume(goal, auto)`` — or ``wake`` when it just noticed the wall
   clock jumped ahead of the monotonic one (the machine slept), or ``startup`` on its first pass;
3. wakes providers whose own timed work is due (:meth:`~core.providers.base.Provider.next_wake`,
   e.g. a pipeline's schedule);
4. notices that the local zone changed (:meth:`~core.clock.Clock.local_zone`; at most
   ``max_sleep_seconds`` late while anything is pending): goals the allowed hours deferred are
   judged again at once (in the new zone), and providers plan their schedules again; deadlines
   are UTC instants, so a resume due at a reset is neither moved, lost nor doubled;
5. runs the fallback poll when it is due — only while some goal waits for quota, at an interval
   scaled to the window's period (a tenth) with jitter, bounded to [30 s, 15 min] after it.

Then it sleeps until the earliest of: the next deadline, the next quota check, the next provider
wake-up, the next poll —
but never longer than ``max_sleep_seconds`` (60) while anything is pending, because deadlines are
wall-clock instants and a monotonic sleep does not advance while the machine is suspended. With
nothing pending it does not wake at all until poked (a goal or quota changed) — nor while
the store cannot take a write (the shared store is unreachable): no automatic resume is tried
until a claim can be committed again, and the engine pokes it when the store is back.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Any, Protocol

from core.clock import Clock
from core.commands import ActionResult, Command, Resume
from core.events import EventBus, SchedulerWoke
from core.goals.auto_resume import WAITS_FOR_RESET
from core.goals.rules import RULE_HOURS, RULE_SLOT
from core.goals.slots import holds_slot, rank_key
from core.models import Goal, GoalState, QuotaReading, Trigger
from core.policies.hours import zone_label
from core.providers.base import Provider
from core.quota.machine import QuotaEdge, QuotaManager
from core.settings import Settings

log = logging.getLogger(__name__)

#: a wall-clock advance this much larger than the monotonic one means the machine slept
JUMP_THRESHOLD_SECONDS = 10.0
DEFAULT_PERIOD_SECONDS = 3600.0


class Readings(Protocol):
    """The quota intake, as the scheduler uses it (:class:`~core.goals.quota_intake.
    QuotaIntake`)."""

    async def handle_edges(self, edges: Sequence[QuotaEdge]) -> None: ...

    async def fresh_read(self, provider_name: str, timeout: float | None = None) -> str | None:
        ...

    async def record_reading(self, reading: QuotaReading) -> None: ...

    def take_recovered(self) -> set[str]: ...

    def has_recovered(self) -> bool: ...

    async def release(self, goal_id: str, windows: list[str], reason: str = ...) -> None: ...

    async def replan_hours(self, goal_id: str, zone: str) -> None: ...


@dataclass(frozen=True)
class SchedulerParts:
    """What the scheduler is handed: this host's goals, the quota machine, the providers, the
    bus, the quota intake, whether a claim could be committed now, and the one door."""

    goals: Mapping[str, Goal]
    quotas: QuotaManager
    providers: Mapping[str, Provider]
    bus: EventBus
    readings: Readings
    store_ready: Callable[[], bool]
    perform: Callable[[Command, str], Awaitable[ActionResult]]


def waiting_for_quota(goal: Goal) -> bool:
    """Paused until a window resets: for quota, or for a budget spent in its period."""
    return goal.state is GoalState.PAUSED and goal.pause_reason in WAITS_FOR_RESET


class Scheduler:
    """Owns the scheduling task. Attributes: ``wakeups`` (count), ``next_wake`` (instant)."""

    def __init__(self, host: SchedulerParts, clock: Clock, settings: Settings,
                 rng: random.Random) -> None:
        self._host = host
        self._clock = clock
        self._settings = settings
        self._rng = rng
        self._poke = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._next_poll: datetime | None = None
        self._zone: tzinfo | None = None  # the local zone the last pass saw
        self.wakeups = 0
        self.sleeping = False  # True while waiting for the next wake (tests wait on this)
        self.next_wake: datetime | None = None
        #: (goal, deadline, fired at) of recent automatic resumes, for measuring lateness
        self.fired: deque[tuple[str, datetime, datetime]] = deque(maxlen=10_000)

    def start(self) -> None:
        if self._task is None:
            self._zone = self._clock.local_zone()  # what the plans made so far were made in
            self._stopping = False
            self._task = asyncio.ensure_future(self._run())
            self._task.set_name("goalkeeper:scheduler")

    async def stop(self) -> None:
        self._stopping = True
        self.poke()
        task, self._task = self._task, None
        # cancel until it is really done: a cancellation that lands while an inner await
        # completes can be swallowed (asyncio.wait_for on 3.11); the flag ends the loop anyway
        while task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=0.1)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def poke(self) -> None:
        """Something changed: re-plan now (cheap; coalesces)."""
        self._poke.set()

    # -- the loop ------------------------------------------------------------------------------

    async def _run(self) -> None:
        trigger = Trigger.STARTUP
        while not self._stopping:
            wall, mono = self._clock.now(), self._clock.monotonic()
            try:
                await self.tick(trigger)
            except Exception:
                log.exception("scheduler pass failed")
            # changes made during this pass are planned for right now, not by another wake —
            # except a rising edge that arrived meanwhile (e.g. during a slow fresh read)
            if not self._host.readings.has_recovered():
                self._poke.clear()
            delay = self._delay(self._clock.now())
            await self._sleep(delay)
            self.wakeups += 1
            trigger = self._trigger_after(wall, mono)

    def _trigger_after(self, wall: datetime, mono: float) -> Trigger:
        wall_elapsed = (self._clock.now() - wall).total_seconds()
        mono_elapsed = self._clock.monotonic() - mono
        if wall_elapsed - mono_elapsed > JUMP_THRESHOLD_SECONDS:
            log.info("wall clock moved %.0f s more than the monotonic clock: woke from sleep",
                     wall_elapsed - mono_elapsed)
            return Trigger.WAKE
        return Trigger.AUTO

    async def _sleep(self, delay: float | None) -> None:
        if self._poke.is_set():
            return
        waiter = asyncio.ensure_future(self._poke.wait())
        tasks: set[asyncio.Future[Any]] = {waiter}
        if delay is not None:
            tasks.add(asyncio.ensure_future(self._clock.sleep(delay)))
        self.sleeping = True
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.sleeping = False
            for task in tasks:
                task.cancel()

    def _delay(self, now: datetime) -> float | None:
        if not self._host.store_ready():
            self.next_wake = None
            self._publish(now, "store unavailable")
            return None  # poked when the store takes writes again
        candidates = [t for t in (self._next_deadline(), self._host.quotas.next_check(now),
                                  self._provider_wake(now)) if t is not None]
        if self._pending():
            if self._next_poll is None:
                self._next_poll = now + self._poll_interval()
            candidates.append(self._next_poll)
        else:
            self._next_poll = None
        if not candidates:
            self.next_wake = None
            self._publish(now, "idle")
            return None
        delay = (min(candidates) - now).total_seconds()
        delay = min(max(delay, 0.0), self._settings.max_sleep_seconds)
        self.next_wake = now + timedelta(seconds=delay)
        self._publish(now, "pending")
        return delay

    def _publish(self, now: datetime, reason: str) -> None:
        self._host.bus.publish(SchedulerWoke(now, self.next_wake, reason))

    # -- one pass ------------------------------------------------------------------------------

    async def tick(self, trigger: Trigger = Trigger.AUTO) -> None:
        if not self._host.store_ready():
            return  # no automatic resume until a claim can be committed again
        now = self._clock.now()
        await self._notice_zone(now)
        # authoritative readings first: a fresh read outranks what the last reading implies
        notes = await self._fresh_reads(self._due(now), {})
        await self._host.readings.handle_edges(self._host.quotas.evaluate(now))
        recovered = self._host.readings.take_recovered()
        await self._release(now, recovered)
        await self._release_slots(now)
        await self._wake_providers(now)
        due = self._due(now)
        if due:
            notes = await self._fresh_reads(due, notes)
            await self._fire(due, trigger, notes, recovered)
        elif self._next_poll is not None and now >= self._next_poll:
            await self._poll()

    async def _notice_zone(self, now: datetime) -> None:
        """The local zone changed since the last pass: what was planned in it is planned again.
        A goal the allowed hours deferred is planned again from its reset, in the new zone (the
        door judges the hours again when it is due); a goal waiting for its reset keeps its UTC
        deadline."""
        zone, old = self._clock.local_zone(), self._zone
        self._zone = zone
        if old is None or zone is old:
            return
        log.info("the local time zone changed from %s to %s: allowed hours and schedules follow "
                 "it", zone_label(old), zone_label(zone))
        if not self._settings.auto_resume_timezone:  # hours in a named zone: nothing moved
            for goal in list(self._host.goals.values()):
                if (waiting_for_quota(goal) and goal.deferred_by == RULE_HOURS
                        and goal.next_resume_at is not None and goal.next_resume_at > now):
                    await self._host.readings.replan_hours(goal.id, zone_label(zone))
        for provider in list(self._host.providers.values()):
            try:
                await provider.zone_changed()
            except Exception:
                log.exception("provider %s failed to follow the zone change", provider.name)

    async def _release(self, now: datetime, recovered: set[str]) -> None:
        """The rising-edge path: a goal deferred past its planned time, whose windows have all
        recovered, need not wait for its later check — its not-before becomes now."""
        if not recovered:
            return
        margin = timedelta(seconds=self._settings.resume_margin_seconds)
        for goal in list(self._host.goals.values()):
            if (waiting_for_quota(goal) and goal.next_resume_at is not None
                    and goal.next_resume_at > now and goal.resets_at is not None
                    and goal.resets_at + margin <= now and recovered & set(goal.windows)
                    and all(self._host.quotas.is_recovered(w) for w in goal.windows)):
                await self._host.readings.release(goal.id, sorted(recovered & set(goal.windows)))

    async def _release_slots(self, now: datetime) -> None:
        """A goal waiting for a slot need not wait for its settle deadline once a holder stopped:
        its not-before becomes now, and the claim (counting in the store) decides again."""
        limit = self._settings.max_concurrent_resumes
        settle = timedelta(seconds=self._settings.resume_settle_seconds)
        goals = list(self._host.goals.values())
        waiting = [g for g in goals if waiting_for_quota(g) and g.deferred_by == RULE_SLOT
                   and g.next_resume_at is not None and g.next_resume_at > now]
        if not waiting:
            return
        held: dict[str, int] = {}
        for goal in goals:
            if holds_slot(goal, now, settle):
                for window in goal.windows:
                    held[window] = held.get(window, 0) + 1
        for goal in sorted(waiting, key=rank_key):  # as many as there are free slots, best first
            if limit == 0 or all(held.get(w, 0) < limit for w in goal.windows):
                for window in goal.windows:
                    held[window] = held.get(window, 0) + 1
                await self._host.readings.release(goal.id, list(goal.windows),
                                                  "a resume slot is free")

    async def _fresh_reads(self, due: list[Goal],
                           notes: dict[str, str | None]) -> dict[str, str | None]:
        for provider in sorted({g.provider for g in due} - set(notes)):
            notes[provider] = await self._host.readings.fresh_read(provider)
        return notes

    def _due(self, now: datetime) -> list[Goal]:
        """Goals waiting for quota whose not-before time has come (rising edges included), in
        the order they may take resume slots (core.goals.slots)."""
        return sorted((
            goal for goal in self._host.goals.values()
            if waiting_for_quota(goal) and goal.next_resume_at is not None
            and goal.next_resume_at <= now
        ), key=rank_key)

    async def _fire(self, due: list[Goal], trigger: Trigger, notes: dict[str, str | None],
                    recovered: set[str]) -> None:
        for goal in due:
            context: dict[str, Any] = {"deadline": goal.next_resume_at.isoformat()
                                       if goal.next_resume_at else None}
            if note := notes.get(goal.provider):
                context["quota_read"] = note
            if edge := sorted(recovered & set(goal.windows)):
                context["rising_edge"] = edge
            fired_at = self._clock.now()
            if goal.next_resume_at is not None:
                self.fired.append((goal.id, goal.next_resume_at, fired_at))
            await self._host.perform(Resume(goal.id, trigger, context), "scheduler")

    async def _poll(self) -> None:
        self._next_poll = None
        providers = sorted({g.provider for g in self._host.goals.values()
                            if waiting_for_quota(g) and g.auto_resume})
        for name in providers:
            provider = self._host.providers.get(name)
            if provider is None:
                continue
            try:
                readings = await provider.read_quotas(fresh=False)
            except Exception as exc:
                log.warning("fallback poll of %s failed: %s", name, exc)
                continue
            for reading in readings:
                await self._host.readings.record_reading(reading)

    # -- planning ------------------------------------------------------------------------------

    def _next_deadline(self) -> datetime | None:
        deadlines = [g.next_resume_at for g in self._host.goals.values()
                     if waiting_for_quota(g) and g.next_resume_at is not None]
        return min(deadlines, default=None)

    def _provider_wake(self, now: datetime) -> datetime | None:
        wakes = [t for p in self._host.providers.values() if (t := p.next_wake(now)) is not None]
        return min(wakes, default=None)

    async def _wake_providers(self, now: datetime) -> None:
        """Providers whose own timed work is due (a pipeline's schedule)."""
        for provider in list(self._host.providers.values()):
            wake = provider.next_wake(now)
            if wake is not None and wake <= now:
                try:
                    await provider.wake(now)
                except Exception:
                    log.exception("provider %s failed on its wake-up", provider.name)

    def _pending(self) -> bool:
        """Some goal waits for quota and will be resumed automatically."""
        return any(waiting_for_quota(g) and g.next_resume_at is not None
                   for g in self._host.goals.values())

    def _poll_interval(self) -> timedelta:
        periods = []
        for goal in self._host.goals.values():
            if waiting_for_quota(goal) and goal.next_resume_at is not None:
                for window_id in goal.windows:
                    reading = self._host.quotas.tracker(window_id).reading
                    if reading is not None and reading.window_seconds:
                        periods.append(reading.window_seconds)
        period = min(periods, default=DEFAULT_PERIOD_SECONDS)
        base = min(max(period / 10.0, self._settings.fallback_poll_min_seconds),
                   self._settings.fallback_poll_max_seconds)
        spread = self._settings.fallback_poll_jitter
        jittered = base * (1.0 + self._rng.uniform(-spread, spread))
        # the bounds hold after the jitter too: ±10 % of a 30 s floor would poll 27 s apart
        return timedelta(seconds=min(max(jittered, self._settings.fallback_poll_min_seconds),
                                     self._settings.fallback_poll_max_seconds))
