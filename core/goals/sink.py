"""The provider sink: what providers report, turned into stored goal changes, in order.

Providers report from anywhere, at any time (:class:`~core.providers.base.ProviderSink`): each
report is queued and applied one by one, in order, each in its own store transaction — a
discovery's observations in one transaction when nothing waits for the store. Quotas come
first: a goal found paused for quota is planned against its windows. A report about a goal
another host owns (the same pipeline name on two machines) is not stored; the clash is a health
problem until the id is free.

Handed: the writer, the quota intake, the decisions' quota view, the providers that have
started, the door (providers whose goals something of theirs triggers act through it, like a
click), the clock, the planning context and the health callback.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
from collections.abc import Callable, Mapping
from typing import Any

from core.clock import Clock
from core.commands import ActionResult, Command, Door
from core.events import EventBus, ProvidersRefreshed
from core.goals.book import GoalBook
from core.goals.changes import note_row
from core.goals.intake import (
    IntakeContext,
    decide_limit,
    decide_observation,
    decide_progress,
    decide_report,
)
from core.goals.machine import GoalEvent
from core.goals.quota_intake import QuotaIntake, ReadMark
from core.goals.quota_view import QuotaView
from core.models import Goal, HistoryEvent, PauseReason, QuotaReading
from core.providers.base import GoalObservation, LimitHit, Provider
from core.providers.calls import ProviderCalls
from core.store.base import Mutation, NotOwner
from core.store.inbox import store_unavailable
from core.store.writer import StoreWriter

log = logging.getLogger("goalkeeper")

Decide = Callable[[Goal | None], Mutation[Any]]


class ProviderIntake:
    """The engine side of :class:`~core.providers.base.ProviderSink`. Owns the goal-id clashes
    (goals of other hosts a provider here reported: id → owner)."""

    def __init__(self, writer: StoreWriter, quota: QuotaIntake, view: QuotaView,
                 book: GoalBook, providers: Mapping[str, Provider], started: Callable[[], set[str]],
                 calls: ProviderCalls, bus: EventBus, clock: Clock,
                 ctx: Callable[[], IntakeContext], mark: ReadMark,
                 on_health: Callable[[], None],
                 read_problems: Callable[[str, tuple[str, ...]], None]) -> None:
        self._writer = writer
        self._quota = quota
        self._view = view
        self._book = book
        self._providers = providers
        self._started = started
        self._calls = calls
        self._bus = bus
        self._clock = clock
        self._ctx = ctx
        self._mark = mark
        self._on_health = on_health
        self._read_problems = read_problems  # a provider's unreadable files, into its health
        self.door: Door | None = None  # set by the engine once the door is built
        self.clashes: dict[str, str] = {}

    # -- ProviderSink ----------------------------------------------------------------------------

    def goal_observed(self, provider: str, observation: GoalObservation) -> None:
        self._writer.enqueue(lambda: self._apply_observation(provider, observation),
                             ("observation", observation.id))

    def quota_observed(self, reading: QuotaReading) -> None:
        self._writer.enqueue(lambda: self._quota.record_reading(reading),
                             ("reading", reading.window_id))

    def goal_progress(self, goal_id: str, fence: int, detail: str, data: dict[str, Any]) -> None:
        self._writer.enqueue(lambda: self._report(goal_id, lambda g: decide_progress(
            g, fence, data, self._ctx())), ("progress", goal_id, fence))

    def goal_limited(self, goal_id: str, fence: int, hit: LimitHit) -> None:
        self._writer.enqueue(lambda: self._apply_limit(goal_id, fence, hit))

    def goal_finished(self, goal_id: str, fence: int, detail: str | None = None) -> None:
        self._writer.enqueue(lambda: self._report(goal_id, lambda g: decide_report(
            g, fence, GoalEvent.COMPLETE, detail, self._ctx())))

    def goal_failed(self, goal_id: str, fence: int, detail: str) -> None:
        self._writer.enqueue(lambda: self._report(goal_id, lambda g: decide_report(
            g, fence, GoalEvent.FAIL, detail, self._ctx())))

    def goal_paused(self, goal_id: str, fence: int, reason: PauseReason, detail: str) -> None:
        self._writer.enqueue(lambda: self._report(goal_id, lambda g: decide_report(
            g, fence, GoalEvent.PAUSE, detail, self._ctx(), pause_reason=reason)))

    def goal_rested(self, goal_id: str, fence: int, detail: str | None = None,
                    idle_again: bool = False) -> None:
        marks = {"idle_again": True} if idle_again else None
        self._writer.enqueue(lambda: self._report(goal_id, lambda g: decide_report(
            g, fence, GoalEvent.REST, detail, self._ctx(), row_detail=marks)))

    def goal_noted(self, goal_id: str, event: HistoryEvent, reason: str,
                   detail: dict[str, Any] | None = None) -> None:
        row = note_row(goal_id, event, self._clock.now(), reason=reason, detail=detail)

        async def append() -> None:
            self._book.announce(await self._writer.written(lambda s: s.append_history(row)))

        self._writer.enqueue(append)

    async def perform(self, command: Command, origin: str = "provider") -> ActionResult:
        """A provider's own trigger (a pipeline's schedule, its ``run`` and ``remove`` ops):
        through the one door, like a click."""
        if self.door is None:
            raise RuntimeError("the engine is not started")
        return await self.door.perform(command, origin)

    async def read_meta(self, key: str) -> str | None:
        return await self._writer.store.run(lambda store: store.get_meta(key))

    async def write_meta(self, key: str, value: str) -> None:
        await self._writer.store.run(lambda store: store.set_meta(key, value))

    async def release(self, goal_id: str, windows: list[str]) -> None:
        await self._quota.release(goal_id, windows)

    # -- applying ---------------------------------------------------------------------------------

    async def _apply_observation(self, provider: str, obs: GoalObservation) -> None:
        self._mark.at = self._clock.now()
        await self._report(obs.id, self._observation_decision(provider, obs))

    def _observation_decision(self, provider: str, obs: GoalObservation) -> Decide:
        if obs.pause_reason is PauseReason.QUOTA:
            # the goal waits for the latest reset among all its exhausted windows
            reset = self._view.latest_reset(obs.windows, obs.resets_at, self._clock.now())
            obs = dataclasses.replace(obs, resets_at=reset)
        return lambda g: decide_observation(g, provider, obs, self._ctx())

    async def _apply_limit(self, goal_id: str, fence: int, hit: LimitHit) -> None:
        for reading in hit.readings:
            await self._quota.record_reading(reading)
        reset = self._view.latest_reset(hit.windows, hit.resets_at, self._clock.now())
        await self._report(goal_id, lambda g: decide_limit(g, fence, hit, reset, self._ctx()))

    async def _report(self, goal_id: str, decide: Decide) -> None:
        try:
            await self._writer.report(goal_id, decide)
        except NotOwner as exc:  # e.g. the same pipeline name on two machines
            if self.clashes.get(goal_id) != exc.owner:
                self.clashes[goal_id] = exc.owner
                log.warning("%s; this host's %s provider sees it too and leaves it alone",
                            exc, goal_id.split(":")[0])
                self._on_health()
            return
        if self.clashes.pop(goal_id, None) is not None:  # the other one is gone: ours now
            self._on_health()

    # -- refreshing -------------------------------------------------------------------------------

    async def refresh(self) -> None:
        """Ask every provider for its goals and quotas (the slow path; watchers push changes)."""
        for name in sorted(self._started()):
            await self.refresh_provider(self._providers[name])
        self._mark.at = self._clock.now()
        self._bus.publish(ProvidersRefreshed(self._mark.at))

    async def refresh_provider(self, provider: Provider) -> None:
        # quotas first: a goal found paused for quota is planned against its windows
        readings = await self._calls.guarded(provider.name, "quota read", provider.read_quotas())
        for reading in readings or []:
            await self._quota.apply_or_queue(reading)
        attention = provider.attention()
        self._read_problems(provider.name, provider.read_problems())
        observations = await self._calls.guarded(provider.name, "discovery", provider.discover())
        if provider.attention() != attention:  # e.g. a goal file now waits for approval
            self._on_health()
        # a goal another host owns goes one by one (its clash is noted, and cleared once the
        # id is free), so that it does not roll the others' batch back at every refresh
        batch = [o for o in observations or [] if o.id not in self.clashes]
        single = [o for o in observations or [] if o.id in self.clashes]
        if not await self._observed_at_once(provider.name, batch):
            single = list(observations or [])
        for obs in single:
            await self._writer.apply_or_queue(
                functools.partial(self._apply_observation, provider.name, obs),
                ("observation", obs.id))

    async def _observed_at_once(self, provider: str, observations: list[GoalObservation]) -> bool:
        """Apply a discovery's observations in one store transaction (one commit, not one per
        goal) when nothing waits for the store; False — and nothing stored — when they must go
        one by one: reports are queued, the store is unavailable, or one goal is another
        host's (:class:`NotOwner` rolls the whole batch back). They are applied in the
        provider's order (the store takes their rows' locks in goal-id order first)."""
        queue = self._writer.queue
        if len(observations) < 2 or len(queue) or not queue.health.available:
            return False
        changes = [(obs.id, self._observation_decision(provider, obs)) for obs in observations]
        async with contextlib.AsyncExitStack() as held:
            for goal_id in sorted({goal_id for goal_id, _ in changes}):  # as report() does
                await held.enter_async_context(self._writer.lock_for(goal_id))
            try:
                batch = await self._writer.written(lambda s: s.transact_many(changes))
            except NotOwner:
                return False
            except Exception as exc:
                if store_unavailable(exc) is None:
                    raise
                return False
        self._mark.at = self._clock.now()
        for committed in batch:
            self._book.committed(committed)
        return True
