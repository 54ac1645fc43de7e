"""Quota intake: a reading on its way from a provider to a decision.

A reading (from a provider's watcher, a discovery, the scheduler's fresh read, or another host
of the same account) is stored, fed to the quota machine's hysteresis, and what that changes is
announced — :class:`~core.events.QuotaObserved`, the edges :class:`~core.events.QuotaExhausted` /
:class:`~core.events.QuotaRecovered` with a history row each — then the policy guard sees it
(budgets, the reserve) and the scheduler is poked. A window with no timed reset that recovers
(a refill) gives the goals waiting on it without a scheduled resume a plan now. Rising edges are
kept for the scheduler (:meth:`QuotaIntake.take_recovered`), from whichever path they came.

Handed: the writer, the quota machine, the forecasts, the guard, the goal book, the account of
each provider, the providers (for the pre-resume read), the clock and the planning context.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from core.clock import Clock
from core.events import EventBus, QuotaExhausted, QuotaObserved, QuotaRecovered
from core.goals.book import GoalBook
from core.goals.changes import note_row
from core.goals.guard import PolicyGuard
from core.goals.intake import IntakeContext, schedule
from core.goals.quota_view import reading_summary
from core.goals.rules import RULE_HOURS
from core.i18n import N_
from core.models import Goal, GoalState, HistoryEvent, HistoryRow, PauseReason, QuotaReading
from core.providers.base import Provider
from core.quota.forecast import ForecastBook
from core.quota.machine import QuotaEdge, QuotaManager
from core.store.base import Mutation
from core.store.writer import StoreWriter

log = logging.getLogger("goalkeeper")

#: the history reason of a release, by why (stored English, translated when shown)
RELEASED = {"quota recovered": N_("quota recovered: {windows}"),
            "a resume slot is free": N_("a resume slot is free: {windows}")}


class ReadMark:
    """When the providers were last heard from (a reading, a discovery): the status bar's
    "Providers read" time."""

    def __init__(self) -> None:
        self.at: datetime | None = None


class QuotaIntake:
    """Readings → hysteresis → edges → guard and scheduler. Owns the rising edges not yet
    taken by the scheduler."""

    def __init__(self, writer: StoreWriter, quotas: QuotaManager, forecasts: ForecastBook,
                 guard: PolicyGuard, book: GoalBook, bus: EventBus, clock: Clock,
                 ctx: Callable[[], IntakeContext], account_for: Callable[[str], str],
                 providers: Mapping[str, Provider], mark: ReadMark,
                 poke: Callable[[], None], fresh_read_timeout: float) -> None:
        self._writer = writer
        self._quotas = quotas
        self._forecasts = forecasts
        self._guard = guard
        self._book = book
        self._bus = bus
        self._clock = clock
        self._ctx = ctx
        self._account_for = account_for
        self._providers = providers
        self._mark = mark
        self._poke = poke
        self._fresh_read_timeout = fresh_read_timeout
        self._recovered: set[str] = set()

    async def record_reading(self, reading: QuotaReading) -> None:
        """Store a reading, feed the hysteresis and announce what it changed."""
        self._mark.at = self._clock.now()
        if not reading.account and (account := self._account_for(reading.provider)):
            reading = reading.model_copy(update={"account": account})
        saved = await self._writer.written(lambda s: s.save_reading(reading))
        if saved:
            await self._applies(reading)

    async def reading_heard(self, reading: QuotaReading) -> None:
        """Another host of this account stored ``reading``: it counts here as if read here."""
        current = self._quotas.tracker(reading.window_id).reading
        if current is None or reading.observed_at > current.observed_at:
            await self._applies(reading)

    async def _applies(self, reading: QuotaReading) -> None:
        previous = self._quotas.tracker(reading.window_id).reading
        self._forecasts.add(reading)
        self._bus.publish(QuotaObserved(reading))
        await self.handle_edges(self._quotas.observe(reading, self._clock.now()))
        await self._guard.reading_recorded(
            previous, reading, self._quotas.effective(reading.window_id, self._clock.now()))
        self._poke()

    async def handle_edges(self, edges: Sequence[QuotaEdge]) -> None:
        for edge in edges:
            event = (HistoryEvent.QUOTA_EXHAUSTED if isinstance(edge, QuotaExhausted)
                     else HistoryEvent.QUOTA_RECOVERED)
            row = note_row(None, event, self._clock.now(), reason=edge.window_id,
                           quotas=(reading_summary(edge.reading),))
            await self._append(row)
            self._bus.publish(edge)
            if isinstance(edge, QuotaRecovered):
                self._recovered.add(edge.window_id)
                await self._lifted(edge)
                self._poke()

    async def _append(self, row: HistoryRow) -> None:
        self._book.announce(await self._writer.written(lambda s: s.append_history(row)))

    def has_recovered(self) -> bool:
        return bool(self._recovered)

    def take_recovered(self) -> set[str]:
        """Windows that recovered (rising edge) since the scheduler last asked, from any path:
        its own evaluation, a fresh read, a provider's watcher, the fallback poll."""
        recovered, self._recovered = self._recovered, set()
        return recovered

    async def _lifted(self, edge: QuotaRecovered) -> None:
        """A window with no timed reset (a capacity quota, depleted credits) recovered — by a
        refill: the goals that wait on it without a scheduled resume get one now."""
        for goal in list(self._book.goals.values()):
            if (goal.state is GoalState.PAUSED and goal.pause_reason is PauseReason.QUOTA
                    and goal.next_resume_at is None and edge.window_id in goal.windows
                    and goal.steering.no_reset_note is not None):
                await self._writer.transact(goal.id, lambda g: _reschedule_lifted(
                    g, edge.recovered_since, self._ctx()))

    async def fresh_read(self, provider_name: str, timeout: float | None = None) -> str | None:
        """The authoritative pre-resume read; returns a note when it could not be taken.

        This time-box is a backstop: providers time-box their reads themselves (and say more
        precisely what went wrong), so it is longer than theirs.
        """
        timeout = timeout or self._fresh_read_timeout
        provider = self._providers.get(provider_name)
        if provider is None:
            return N_("provider {provider} is not enabled").format(provider=provider_name)
        try:
            # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow a cancellation
            async with asyncio.timeout(timeout):
                readings = await provider.read_quotas(fresh=True)
        except Exception as exc:
            text = str(exc) or type(exc).__name__
            log.warning("fresh quota read from %s failed: %s", provider_name, text)
            return N_("fresh read failed ({error}); decided on the last known readings").format(
                error=text)
        for reading in readings:
            await self.apply_or_queue(reading)
        return None

    async def apply_or_queue(self, reading: QuotaReading) -> None:
        """Record ``reading`` now — or, while reports wait for the store, after them."""
        await self._writer.apply_or_queue(functools.partial(self.record_reading, reading),
                                          ("reading", reading.window_id))

    async def release(self, goal_id: str, windows: list[str], reason: str = "quota recovered"
                      ) -> None:
        """Bring a quota-paused goal's not-before time forward to now (its windows recovered,
        or a slot on them freed)."""
        now = self._clock.now()

        def decide(current: Goal | None) -> Mutation[None]:
            if current is None or current.next_resume_at is None or current.next_resume_at <= now:
                return Mutation(None, None)
            new = current.model_copy(update={"next_resume_at": now, "updated_at": now})
            key = "rising_edge" if reason.startswith("quota recovered") else "slot_free"
            row = note_row(goal_id, HistoryEvent.RESUME_SCHEDULED, now,
                           reason=RELEASED.get(reason, N_("{reason}: {windows}")).format(
                               reason=reason, windows=", ".join(windows)),
                           detail={"not_before": now.isoformat(), key: windows})
            return Mutation(new, None, [row])

        await self._writer.transact(goal_id, decide)

    async def replan_hours(self, goal_id: str, zone: str) -> None:
        """Plan again, from its reset, a goal whose resume the allowed hours deferred: the local
        zone changed to ``zone``, so the hours mean other instants now. Never before the
        reset (and its margin): only where the hours put it moves."""

        def decide(current: Goal | None) -> Mutation[None]:
            if (current is None or current.state is not GoalState.PAUSED
                    or current.deferred_by != RULE_HOURS or current.next_resume_at is None):
                return Mutation(None, None)
            ctx = self._ctx()
            new, row = schedule(current.model_copy(update={"updated_at": ctx.now}),
                                current.resets_at, ctx)
            if new.next_resume_at == current.next_resume_at:
                return Mutation(None, None)
            row = row.model_copy(update={"detail": {**row.detail, "zone": zone}})
            return Mutation(new, None, [row])

        await self._writer.transact(goal_id, decide)


def _reschedule_lifted(goal: Goal | None, since: datetime, ctx: IntakeContext
                       ) -> Mutation[Any]:
    # checked again here: the copy that chose this goal may be older than the store (the user
    # may have paused it meanwhile: a user pause is never scheduled)
    if goal is None or goal.state is not GoalState.PAUSED or goal.next_resume_at is not None or (
        goal.pause_reason is not PauseReason.QUOTA or goal.steering.no_reset_note is None
    ):
        return Mutation(None, None)
    steering = goal.steering.model_copy(update={"no_reset_note": None})
    new, row = schedule(goal.model_copy(update={"steering": steering, "updated_at": ctx.now}),
                        min(since, ctx.now), ctx)
    return Mutation(new, None, [row])
