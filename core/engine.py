"""The composition root: store, quota manager, resume coordinator, scheduler and providers, wired.

The engine is what a *host* runs (``goalkeeper daemon`` or the desktop app). It

* owns the event loop's side of the store and an in-memory copy of every goal;
* is the :class:`~core.providers.base.ProviderSink`: provider reports are queued and applied one by
  one, in order, each in its own store transaction;
* offers the goal actions — :meth:`resume`, :meth:`pause`, :meth:`cancel`,
  :meth:`set_auto_resume`, :meth:`start_goal` — each returning an :class:`ActionResult`;
* publishes every change on :attr:`bus` (see :mod:`core.events`).

Signals (bus events): GoalChanged, HistoryRecorded, QuotaObserved, QuotaExhausted,
QuotaRecovered, SchedulerWoke, ProvidersRefreshed, Notice.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import random
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from core.actions import (
    decide_auto_resume,
    decide_cancel,
    decide_pause,
    decide_start,
    result,
)
from core.clock import Clock, SystemClock
from core.events import (
    EventBus,
    GoalChanged,
    GoalRemoved,
    HistoryRecorded,
    Notice,
    ProvidersRefreshed,
    QuotaExhausted,
    QuotaObserved,
    QuotaRecovered,
)
from core.goal_machine import GoalEvent
from core.goal_ops import note_row, transition
from core.intake import (
    IntakeContext,
    decide_limit,
    decide_observation,
    decide_progress,
    decide_report,
    schedule,
)
from core.models import Goal, GoalState, HistoryRow, Outcome, PauseReason, QuotaReading, Trigger
from core.paths import Paths
from core.policies.forecast import ForecastBook
from core.policies.guard import PolicyGuard
from core.policies.rules import WindowLevel
from core.policies.setting import decide_goal_policy
from core.policy import AutoResumePolicy
from core.providers.base import GoalObservation, LimitHit, Provider
from core.quota import QuotaEdge, QuotaManager, recovery_instant, used_percent
from core.results import ActionResult
from core.resume import ResumeCoordinator
from core.scheduler import Scheduler
from core.settings import Settings
from core.store import Committed, Mutation, StoreThread

log = logging.getLogger("goalkeeper")

Job = Callable[[], Awaitable[None]]
HOST_STOPPING = "the host is stopping"
#: how long the usage chart's readings are kept (a weekly window and then some)
SERIES_RETENTION = timedelta(days=35)


class Engine:
    """One host's core. Attributes: ``bus``, ``goals`` (id → Goal), ``quotas``, ``scheduler``."""

    def __init__(
        self,
        paths: Paths,
        settings: Settings,
        providers: Sequence[Provider],
        clock: Clock | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.paths = paths
        self.settings = settings
        self.clock: Clock = clock or SystemClock()
        self.bus = EventBus()
        self.store = StoreThread(paths.database)
        self.quotas = QuotaManager(settings.hysteresis())
        self.policy = AutoResumePolicy.from_settings(settings)
        self.providers: dict[str, Provider] = {p.name: p for p in providers}
        self.goals: dict[str, Goal] = {}
        self._recovered: set[str] = set()
        self.last_refresh: datetime | None = None
        self._rng = rng or random.Random()
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._inbox: asyncio.Queue[Job] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._actions: set[asyncio.Future[None]] = set()
        self._running = False
        self.coordinator = ResumeCoordinator(
            self.store, self.clock, self.providers, self, self.policy, self._committed,
            settings.runner_start_timeout_seconds, lambda goal_id: self._locks[goal_id],
        )
        self.scheduler = Scheduler(self, self.clock, settings, self._rng)
        self.guard = PolicyGuard(self)
        self.forecasts = ForecastBook()

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        self.paths.ensure()
        now = self.clock.now()
        await self.store.open(now)
        if self.store.notice:
            log.warning("%s", self.store.notice)
            self.bus.publish(Notice("warning", self.store.notice))
        horizon = now - SERIES_RETENTION
        await self.store.run(lambda s: s.prune_series(horizon))
        for reading in await self.store.run(lambda s: s.latest_readings()):
            self.quotas.observe(reading, now)  # rebuild hysteresis state; edges are old news
        since = now - 2 * self.forecasts.lookback  # the level in force at the span's start too
        for window_id in {r.window_id for r in self.quotas.readings(now)}:
            self.forecasts.seed(window_id, await self.store.run(
                lambda s, w=window_id: s.series(w, since)))  # type: ignore[misc]
        self.goals = {g.id: g for g in await self.store.run(lambda s: s.list_goals())}
        self._inbox = asyncio.Queue()
        self._running = True
        self.spawn(self._work_inbox(), "inbox")
        for provider in self.providers.values():
            provider.attach(self)
            await self._guarded(provider.name, "start", provider.start())
        await self._recover_interrupted()
        await self.refresh()
        self.scheduler.start()
        log.info("engine started for %s with providers %s", self.paths.data_dir,
                 ", ".join(self.providers) or "none")

    async def stop(self) -> None:
        if not self._running:
            await self.store.close()  # start() may have failed half-way
            return
        self._running = False  # from here on, new actions are refused
        await self.scheduler.stop()
        await self._settle_actions()
        await self._interrupt_hosted()
        for provider in self.providers.values():
            await self._guarded(provider.name, "stop", provider.stop())
        await self.drain()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.store.close()
        log.info("host stopped")

    async def _settle_actions(self) -> None:
        """Let resumes and starts under way finish before the providers stop: a runner they
        start behind a stopped provider would run unwatched."""
        if self._actions:
            await asyncio.wait(list(self._actions),
                               timeout=self.settings.runner_start_timeout_seconds + 5)

    @contextlib.asynccontextmanager
    async def _action(self) -> AsyncIterator[bool]:
        """Track an action that may start a runner; yields False when the host is stopping."""
        if not self._running:
            yield False
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._actions.add(done)
        try:
            yield True
        finally:
            self._actions.discard(done)
            done.set_result(None)

    def spawn(self, coro: Awaitable[Any], name: str) -> asyncio.Task[Any]:
        """Run ``coro`` as a task we keep a strong reference to; failures are logged."""
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        task.set_name(f"goalkeeper:{name}")
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("task %s failed", task.get_name(), exc_info=task.exception())

    async def _guarded(self, provider: str, what: str, coro: Awaitable[Any]) -> Any:
        try:
            return await coro
        except Exception as exc:
            text = f"provider {provider}: {what} failed: {exc}"
            log.exception("%s", text)
            self.bus.publish(Notice("error", text))
            return None

    async def drain(self) -> None:
        """Wait until every queued provider report has been applied."""
        if self._inbox is not None:
            await self._inbox.join()

    async def _work_inbox(self) -> None:
        assert self._inbox is not None
        while True:
            job = await self._inbox.get()
            try:
                await job()
            except Exception:
                log.exception("applying a provider report failed")
            finally:
                self._inbox.task_done()

    def _enqueue(self, job: Job) -> None:
        if self._inbox is None:
            raise RuntimeError("the engine is not started")
        self._inbox.put_nowait(job)

    # -- start-up recovery and shutdown --------------------------------------------------------

    async def _recover_interrupted(self) -> None:
        """Goals the previous host left running or resuming: back to paused, then resumed."""
        for goal in list(self.goals.values()):
            if goal.state is GoalState.RESUMING or (
                goal.state is GoalState.RUNNING and goal.hosted
            ):
                await self._interrupt(goal.id, "the previous host stopped while it was "
                                      f"{goal.state.value}", "startup")
        for goal in list(self.goals.values()):
            if goal.state is GoalState.PAUSED and goal.pause_reason is PauseReason.INTERRUPTED:
                await self.coordinator.resume(goal.id, Trigger.STARTUP, "startup")

    async def _interrupt_hosted(self) -> None:
        for goal in list(self.goals.values()):
            if goal.hosted and goal.state is GoalState.RUNNING:
                await self._interrupt(goal.id, "the host stopped", "shutdown")

    async def _interrupt(self, goal_id: str, why: str, origin: str) -> None:
        now = self.clock.now()

        def decide(current: Goal | None) -> Mutation[None]:
            if current is None or current.state not in (GoalState.RUNNING, GoalState.RESUMING):
                return Mutation(None, None)
            new, row = transition(current, GoalEvent.PAUSE, now, origin=origin,
                                  pause_reason=PauseReason.INTERRUPTED, pause_detail=why,
                                  fence=current.fence + 1, auto_resume_note=why)
            return Mutation(new, None, [row])

        await self._transact(goal_id, decide)

    # -- store plumbing ------------------------------------------------------------------------

    async def _transact(self, goal_id: str, decide: Callable[[Goal | None], Mutation[Any]]
                        ) -> Committed[Any]:
        committed = await self.store.run(lambda s: s.transact(goal_id, decide))
        self._committed(committed)
        return committed

    def _committed(self, committed: Committed[Any]) -> None:
        after = committed.after
        if after is not None and after != committed.before:
            self.goals[after.id] = after
            self.bus.publish(GoalChanged(after, committed.before))
        for row in committed.history:
            self._announce(row)
        self.scheduler.poke()

    def _announce(self, row: HistoryRow) -> None:
        """Every stored history row: one log line, one event."""
        log.info("%s %s %s%s%s", row.goal or "-", row.event,
                 row.outcome.value if row.outcome else "",
                 f" [{row.trigger.value}/{row.origin}]" if row.trigger else "",
                 f": {row.reason}" if row.reason else "")
        self.bus.publish(HistoryRecorded(row))

    def _ctx(self) -> IntakeContext:
        return IntakeContext(self.clock.now(), self.policy, self._rng.random,
                             self.settings.auto_resume_default)

    # -- the provider sink ---------------------------------------------------------------------

    def goal_observed(self, provider: str, observation: GoalObservation) -> None:
        self._enqueue(lambda: self._apply_observation(provider, observation))

    def quota_observed(self, reading: QuotaReading) -> None:
        self._enqueue(lambda: self.record_reading(reading))

    def goal_progress(self, goal_id: str, fence: int, detail: str, data: dict[str, Any]) -> None:
        self._enqueue(lambda: self._report(goal_id, lambda g: decide_progress(
            g, fence, data, self._ctx())))

    def goal_limited(self, goal_id: str, fence: int, hit: LimitHit) -> None:
        self._enqueue(lambda: self._apply_limit(goal_id, fence, hit))

    def goal_finished(self, goal_id: str, fence: int, detail: str | None = None) -> None:
        self._enqueue(lambda: self._report(goal_id, lambda g: decide_report(
            g, fence, GoalEvent.COMPLETE, detail, self._ctx())))

    def goal_failed(self, goal_id: str, fence: int, detail: str) -> None:
        self._enqueue(lambda: self._report(goal_id, lambda g: decide_report(
            g, fence, GoalEvent.FAIL, detail, self._ctx())))

    def goal_paused(self, goal_id: str, fence: int, reason: PauseReason, detail: str) -> None:
        self._enqueue(lambda: self._report(goal_id, lambda g: decide_report(
            g, fence, GoalEvent.PAUSE, detail, self._ctx(), pause_reason=reason)))

    def goal_rested(self, goal_id: str, fence: int, detail: str | None = None) -> None:
        self._enqueue(lambda: self._report(goal_id, lambda g: decide_report(
            g, fence, GoalEvent.REST, detail, self._ctx())))

    def goal_noted(self, goal_id: str, event: str, reason: str,
                   detail: dict[str, Any] | None = None) -> None:
        row = note_row(goal_id, event, self.clock.now(), reason=reason, detail=detail)

        async def append() -> None:
            self._announce(await self._append(row))

        self._enqueue(append)

    async def _report(self, goal_id: str, decide: Callable[[Goal | None], Mutation[Any]]) -> None:
        await self.report(goal_id, decide)

    # -- the policy guard's host (core.policies.guard.GuardHost) -------------------------------

    async def report(self, goal_id: str, decide: Callable[[Goal | None], Mutation[Any]]
                     ) -> Committed[Any]:
        async with self._locks[goal_id]:  # never between a resume's claim and its settling
            return await self._transact(goal_id, decide)

    def intake_context(self) -> IntakeContext:
        return self._ctx()

    def enqueue(self, job: Job) -> None:
        self._enqueue(job)

    def stop_gracefully(self, goal: Goal) -> None:
        """A policy pause: the provider stops the goal at the end of its turn where it can."""
        provider = self.providers.get(goal.provider)
        if provider is not None:
            self.spawn(self._guarded(provider.name, "pause", provider.pause_goal_gracefully(goal)),
                       f"policy-pause:{goal.id}")

    async def _apply_observation(self, provider: str, obs: GoalObservation) -> None:
        self.last_refresh = self.clock.now()
        if obs.pause_reason is PauseReason.QUOTA:
            # the goal waits for the latest reset among all its exhausted windows
            reset = self.latest_reset(obs.windows, obs.resets_at, self.clock.now())
            obs = dataclasses.replace(obs, resets_at=reset)
        await self._report(obs.id, lambda g: decide_observation(g, provider, obs, self._ctx()))

    async def _apply_limit(self, goal_id: str, fence: int, hit: LimitHit) -> None:
        for reading in hit.readings:
            await self.record_reading(reading)
        reset = self.latest_reset(hit.windows, hit.resets_at, self.clock.now())
        await self._report(goal_id, lambda g: decide_limit(g, fence, hit, reset, self._ctx()))

    def latest_reset(self, windows: Sequence[str], reported: datetime | None,
                     now: datetime) -> datetime | None:
        """The latest instant at which an exhausted window among ``windows`` lifts."""
        instants = [reported] if reported is not None else []
        for window_id in windows:
            reading = self.quotas.effective(window_id, now)
            if reading is not None and not self.quotas.is_recovered(window_id):
                instant = recovery_instant(reading, now, self.quotas.policy)
                if instant is not None:
                    instants.append(instant)
        return max(instants, default=None)

    async def record_reading(self, reading: QuotaReading) -> None:
        """Store a reading, feed the hysteresis and announce what it changed."""
        self.last_refresh = self.clock.now()
        saved = await self.store.run(lambda s: s.save_reading(reading))
        if not saved:
            return
        previous = self.quotas.tracker(reading.window_id).reading
        self.forecasts.add(reading)
        self.bus.publish(QuotaObserved(reading))
        await self.handle_edges(self.quotas.observe(reading, self.clock.now()))
        await self.guard.reading_recorded(
            previous, reading, self.quotas.effective(reading.window_id, self.clock.now()))
        self.scheduler.poke()

    async def handle_edges(self, edges: Sequence[QuotaEdge]) -> None:
        for edge in edges:
            event = "quota_exhausted" if isinstance(edge, QuotaExhausted) else "quota_recovered"
            row = note_row(None, event, self.clock.now(), reason=edge.window_id,
                           quotas=(_reading_summary(edge.reading),))
            self._announce(await self._append(row))
            self.bus.publish(edge)
            if isinstance(edge, QuotaRecovered):
                self._recovered.add(edge.window_id)
                await self._lifted(edge)
                self.scheduler.poke()

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
        for goal in list(self.goals.values()):
            if (goal.state is GoalState.PAUSED and goal.pause_reason is PauseReason.QUOTA
                    and goal.next_resume_at is None and edge.window_id in goal.windows
                    and "no_reset_note" in goal.data):
                await self._transact(goal.id, lambda g: _reschedule_lifted(
                    g, edge.recovered_since, self._ctx()))

    async def _append(self, row: HistoryRow) -> HistoryRow:
        return await self.store.run(lambda s: s.append_history(row))

    async def refresh(self) -> None:
        """Ask every provider for its goals and quotas (the slow path; watchers push changes)."""
        for provider in self.providers.values():
            # quotas first: a goal found paused for quota is planned against its windows
            readings = await self._guarded(provider.name, "quota read", provider.read_quotas())
            for reading in readings or []:
                await self.record_reading(reading)
            observations = await self._guarded(provider.name, "discovery", provider.discover())
            for obs in observations or []:
                await self._apply_observation(provider.name, obs)
        self.last_refresh = self.clock.now()
        self.bus.publish(ProvidersRefreshed(self.last_refresh))

    async def fresh_read(self, provider_name: str, timeout: float | None = None) -> str | None:
        """The authoritative pre-resume read; returns a note when it could not be taken.

        The engine's own time-box is a backstop: providers time-box their reads themselves (and
        say more precisely what went wrong), so it is longer than theirs.
        """
        timeout = timeout or self.settings.fresh_read_timeout_seconds
        provider = self.providers.get(provider_name)
        if provider is None:
            return f"provider {provider_name} is not enabled"
        try:
            # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow a cancellation
            async with asyncio.timeout(timeout):
                readings = await provider.read_quotas(fresh=True)
        except Exception as exc:
            text = str(exc) or type(exc).__name__
            log.warning("fresh quota read from %s failed: %s", provider_name, text)
            return f"fresh read failed ({text}); decided on the last known readings"
        for reading in readings:
            await self.record_reading(reading)
        return None

    async def release(self, goal_id: str, windows: list[str], reason: str = "quota recovered"
                      ) -> None:
        """Bring a quota-paused goal's not-before time forward to now (its windows recovered,
        or a slot on them freed)."""
        now = self.clock.now()

        def decide(current: Goal | None) -> Mutation[None]:
            if current is None or current.next_resume_at is None or current.next_resume_at <= now:
                return Mutation(None, None)
            new = current.model_copy(update={"next_resume_at": now, "updated_at": now})
            key = "rising_edge" if reason == "quota recovered" else "slot_free"
            row = note_row(goal_id, "resume_scheduled", now,
                           reason=f"{reason}: {', '.join(windows)}",
                           detail={"not_before": now.isoformat(), key: windows})
            return Mutation(new, None, [row])

        await self._transact(goal_id, decide)

    # -- the quota view the resume coordinator decides on --------------------------------------

    def blockers(self, windows: tuple[str, ...], now: datetime) -> dict[str, datetime | None]:
        result: dict[str, datetime | None] = {}
        for window_id in windows:
            if self.quotas.is_recovered(window_id):
                continue
            tracker = self.quotas.tracker(window_id)
            if tracker.recovered_since is not None:
                result[window_id] = tracker.recovered_since + timedelta(
                    seconds=self.quotas.policy.stable_seconds)
                continue
            reading = self.quotas.effective(window_id, now)
            instant = recovery_instant(reading, now, self.quotas.policy) if reading else None
            result[window_id] = (
                instant + timedelta(seconds=self.policy.margin_seconds) if instant else None
            )
        return result

    def snapshot(self, windows: tuple[str, ...], now: datetime) -> tuple[dict[str, Any], ...]:
        readings = (self.quotas.effective(w, now) for w in windows)
        return tuple(_reading_summary(r) for r in readings if r is not None)

    def levels(self, windows: tuple[str, ...], now: datetime) -> tuple[WindowLevel, ...]:
        readings = (self.quotas.effective(w, now) for w in windows)
        return tuple(WindowLevel(r.window_id, used_percent(r), r.resets_at)
                     for r in readings if r is not None)

    # -- goal actions (every one returns a typed result) ----------------------------------------

    async def resume(self, goal_id: str, origin: str = "gui",
                     trigger: Trigger = Trigger.MANUAL,
                     context: dict[str, Any] | None = None) -> ActionResult:
        async with self._action() as allowed:
            if not allowed:
                return result(goal_id, Outcome.REFUSED, HOST_STOPPING)
            return await self.coordinator.resume(goal_id, trigger, origin, context)

    async def pause(self, goal_id: str, origin: str = "gui") -> ActionResult:
        committed = await self._transact(goal_id, decide_pause(goal_id, self.clock.now(), origin))
        before = committed.before
        if committed.result.outcome is Outcome.PAUSED and before is not None and (
            before.state in (GoalState.RUNNING, GoalState.RESUMING)
        ):
            await self._stop_runner(before, cancel=False)
        return committed.result  # type: ignore[no-any-return]

    async def cancel(self, goal_id: str, origin: str = "gui") -> ActionResult:
        committed = await self._transact(goal_id, decide_cancel(goal_id, self.clock.now(), origin))
        before = committed.before
        if committed.result.outcome is Outcome.CANCELLED and before is not None and (
            not before.state.terminal
        ):
            await self._stop_runner(before, cancel=True)
        return committed.result  # type: ignore[no-any-return]

    async def _stop_runner(self, goal: Goal, cancel: bool) -> None:
        provider = self.providers.get(goal.provider)
        if provider is None:
            return
        action = provider.cancel_goal(goal) if cancel else provider.pause_goal(goal)
        await self._guarded(provider.name, "cancel" if cancel else "pause", action)

    async def set_auto_resume(self, goal_id: str, enabled: bool,
                              origin: str = "gui") -> ActionResult:
        decide = decide_auto_resume(goal_id, enabled, self._ctx(), origin)
        committed = await self._transact(goal_id, decide)
        reply: ActionResult = committed.result
        if enabled and reply.outcome is Outcome.UPDATED and committed.after is not None:
            reply = await self._first_time_notice(committed.after, reply)
        return reply

    async def _first_time_notice(self, goal: Goal, reply: ActionResult) -> ActionResult:
        """Attach (and announce) the provider's auto-resume notice the first time only."""
        provider = self.providers.get(goal.provider)
        notice = provider.auto_resume_notice(goal) if provider is not None else None
        if notice is None:
            return reply
        key, text = notice
        meta_key = f"notice_shown:{key}"
        if await self.store.run(lambda s: s.get_meta(meta_key)) is not None:
            return reply
        await self.store.run(lambda s: s.set_meta(meta_key, self.clock.now().isoformat()))
        self.bus.publish(Notice("warning", text))
        return dataclasses.replace(reply, notice=text)

    async def set_goal_policy(self, goal_id: str, key: str, value: str,
                              origin: str = "gui") -> ActionResult:
        """Set one of a goal's own resume policies (``goalkeeper goal set``, the details
        dialog); a goal waiting for its reset is planned again under the new value."""
        decide = decide_goal_policy(goal_id, key, value, self._ctx(), origin)
        committed = await self._transact(goal_id, decide)
        return committed.result  # type: ignore[no-any-return]

    async def start_goal(self, goal_id: str, origin: str = "gui") -> ActionResult:
        """Start an idle goal (``idle → running``) through its provider's runner."""
        async with self._action() as allowed:
            if not allowed:
                return result(goal_id, Outcome.REFUSED, HOST_STOPPING)
            return await self._start_goal(goal_id, origin)

    async def _start_goal(self, goal_id: str, origin: str) -> ActionResult:
        known = self.goals.get(goal_id)
        if known is not None and known.provider not in self.providers:
            # checked before the move: a goal running with no runner would be stuck there
            return result(goal_id, Outcome.REFUSED, f"provider {known.provider!r} is not enabled",
                          known.state)
        committed = await self._transact(goal_id, decide_start(goal_id, self.clock.now(), origin))
        goal = committed.after
        if committed.result.outcome is not Outcome.RESUMED or goal is None:
            return committed.result  # type: ignore[no-any-return]
        provider = self.providers[goal.provider]
        async with self._locks[goal_id]:
            try:
                await provider.start_goal(goal, goal.fence)
            except Exception as exc:
                why = f"could not start: {exc}"
                await self._transact(goal_id, lambda g: decide_report(
                    g, goal.fence, GoalEvent.FAIL, why, self._ctx()))
                return result(goal_id, Outcome.FAILED, why, GoalState.FAILED)
        return committed.result  # type: ignore[no-any-return]

    async def forget_goal(self, goal_id: str, origin: str = "gui") -> ActionResult:
        """Stop watching a goal: its runner is stopped and its row removed (history stays)."""
        goal = self.goals.get(goal_id) or await self.store.run(lambda s: s.get_goal(goal_id))
        if goal is None:
            return result(goal_id, Outcome.UNKNOWN_GOAL, "unknown goal")
        if goal.state in (GoalState.RUNNING, GoalState.RESUMING):
            await self._stop_runner(goal, cancel=False)
        row = note_row(goal_id, "removed", self.clock.now(), origin=origin,
                       reason="no longer watched", outcome=Outcome.UPDATED)

        saved = await self.store.run(lambda s: s.remove_goal(goal_id, row))
        self.goals.pop(goal_id, None)
        self.bus.publish(GoalRemoved(goal_id))
        if saved is not None:
            self._announce(saved)
        self.scheduler.poke()
        return result(goal_id, Outcome.UPDATED, "removed")

    async def history(self, goal: str | None = None, limit: int = 100, offset: int = 0) -> list[
            Any]:
        return await self.store.run(lambda s: s.history(goal, limit, offset))


def _reschedule_lifted(goal: Goal | None, since: datetime, ctx: IntakeContext
                       ) -> Mutation[None]:
    # checked again here: the engine's copy that chose this goal may be older than the store
    # (the user may have paused it meanwhile: a user pause is never scheduled)
    if goal is None or goal.state is not GoalState.PAUSED or goal.next_resume_at is not None or (
        goal.pause_reason is not PauseReason.QUOTA or "no_reset_note" not in goal.data
    ):
        return Mutation(None, None)
    data = {k: v for k, v in goal.data.items() if k != "no_reset_note"}
    new, row = schedule(goal.model_copy(update={"data": data, "updated_at": ctx.now}),
                        min(since, ctx.now), ctx)
    return Mutation(new, None, [row])


def _reading_summary(reading: QuotaReading) -> dict[str, Any]:
    return {
        "window": reading.window_id,
        "used_percent": reading.used_percent,
        "resets_at": reading.resets_at.isoformat() if reading.resets_at else None,
        "exactness": reading.exactness.value,
        "observed_at": reading.observed_at.isoformat(),
    }
