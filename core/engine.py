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
import functools
import logging
import random
import sqlite3
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

from core.atomic import remove_leftovers
from core.clock import Clock, SystemClock
from core.events import (
    EventBus,
    GoalChanged,
    HistoryRecorded,
    Notice,
    ProvidersRefreshed,
    QuotaExhausted,
    QuotaObserved,
    QuotaRecovered,
)
from core.goals.changes import note_row, transition
from core.goals.coordinator import ResumeCoordinator
from core.goals.door import GoalActions
from core.goals.intake import (
    IntakeContext,
    decide_limit,
    decide_observation,
    decide_progress,
    decide_report,
    schedule,
)
from core.goals.machine import GoalEvent
from core.goals.results import ActionResult
from core.goals.scheduler import Scheduler
from core.hosts.health import HealthChanged, HostHealth, clash_text
from core.hosts.identity import host_id_of
from core.hosts.registry import HostRegistry
from core.hosts.remote import RemoteActions
from core.hosts.safe_mode import SafeMode
from core.hosts.sync import SharedSync
from core.i18n import N_
from core.models import (
    Goal,
    GoalState,
    HistoryEvent,
    HistoryRow,
    PauseReason,
    QuotaReading,
    Trigger,
)
from core.paths import Paths
from core.policies.auto_resume import AutoResumePolicy
from core.policies.forecast import ForecastBook
from core.policies.guard import PolicyGuard
from core.policies.reserve_table import warn_unmatched
from core.providers.base import GoalObservation, LimitHit, Provider
from core.providers.supervisor import ProviderSupervisor
from core.quota.machine import QuotaEdge, QuotaManager
from core.quota.view import QuotaView, reading_summary
from core.settings import Settings
from core.store import (
    Committed,
    LeaseLost,
    Mutation,
    NotOwner,
    Store,
    StoreThread,
    StoreUnavailable,
)
from core.store.inbox import ReportQueue, store_unavailable
from core.store.target import StoreTarget
from core.store.upkeep import StoreKeeper

log = logging.getLogger("goalkeeper")

Job = Callable[[], Awaitable[None]]
T = TypeVar("T")
STOP_DRAIN_SECONDS = 30.0
#: whole-transaction retries after SQLITE_BUSY (then the error surfaces)
BUSY_RETRIES = 3
#: the history reason of a release, by why (stored English, translated when shown)
RELEASED = {"quota recovered": N_("quota recovered: {windows}"),
            "a resume slot is free": N_("a resume slot is free: {windows}")}
#: how long the usage chart's readings are kept (a weekly window and then some)
SERIES_RETENTION = timedelta(days=35)
#: answered and expired action requests of other hosts are kept this long (for a look back)
REQUEST_RETENTION = timedelta(days=2)


class Engine:
    """One host's core. Attributes: ``bus``, ``goals`` (id → Goal), ``quotas``, ``scheduler``."""

    def __init__(
        self,
        paths: Paths,
        settings: Settings,
        providers: Sequence[Provider],
        clock: Clock | None = None,
        rng: random.Random | None = None,
        fenced: bool = False,
    ) -> None:
        self.paths = paths
        self.settings = settings
        self.clock: Clock = clock or SystemClock()
        self.bus = EventBus()
        shared = bool(settings.store_url)
        #: this host's id in the store (None: a bare engine on a one-machine store, in tests)
        self.host_id: str | None = (host_id_of(settings.host_id, paths.data_dir)
                                    if fenced or shared else None)
        self.store = StoreThread(paths.database, paths.data_dir / "backups", fenced,
                                 StoreTarget(paths.database, settings.store_url), self.host_id,
                                 settings.host_stale_seconds)
        self.registry = HostRegistry(self, self.host_id or "")
        self.remote = RemoteActions(self)
        self.sync = SharedSync(self)
        self.quotas = QuotaManager(settings.hysteresis())
        self.policy = AutoResumePolicy.from_settings(settings)
        self.providers: dict[str, Provider] = {p.name: p for p in providers}
        self.goals: dict[str, Goal] = {}
        self._recovered: set[str] = set()
        #: goals of other hosts a provider here reported: id → owner (a health problem)
        self._not_ours: dict[str, str] = {}
        self.last_refresh: datetime | None = None
        self._rng = rng or random.Random()
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self.inbox = ReportQueue(self.clock, lambda _: self.health_changed())
        self._accepting = False  # provider reports are taken (from start() on)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._actions: set[asyncio.Future[None]] = set()
        self._running = False
        self.supervisor = ProviderSupervisor(self.clock, self.spawn, self.health_changed,
                                             self._late_start)
        #: called once when another host took over (the fence refused a write)
        self.on_lease_lost: Callable[[str], None] | None = None
        self.lease_lost: str | None = None
        self.keeper = StoreKeeper(self.store, self.clock)
        self.care = SafeMode(self)
        self.view = QuotaView(self.quotas, self.policy)
        self._keeper_task: asyncio.Task[Any] | None = None
        self.coordinator = ResumeCoordinator(
            self.store, self.clock, self.providers, self.view, self.policy, self._committed,
            settings.runner_start_timeout_seconds, self.lock_for, self.record_or_queue,
            self.written,
        )
        self.actions = GoalActions(self)
        self.scheduler = Scheduler(self, self.clock, settings, self._rng)
        self.guard = PolicyGuard(self)
        self.forecasts = ForecastBook()

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        self.paths.ensure()
        now = self.clock.now()
        for path in remove_leftovers(self.paths.data_dir):
            log.info("removed %s, left over from an interrupted write", path)
        try:
            await self.store.open(now)
        except StoreUnavailable as exc:  # the shared store: watched for, started when it is back
            self.inbox.failed(str(exc))
        self._accepting = True
        self.spawn(self.inbox.work(), "inbox")
        self._running = True
        if self.store.problem is not None:
            await self.care.enter(self.store.problem.message)
            return
        if not self.store.is_open:
            self.spawn(self.sync.open_later(), "store-open")
            return
        await self.start_normally(now)

    async def start_normally(self, now: datetime) -> None:
        horizon = now - SERIES_RETENTION
        await self.store.run(lambda s: s.prune_series(horizon))
        await self.store.run(lambda s: s.prune_requests(now - REQUEST_RETENTION))
        await self.registry.resolve_accounts()
        for reading in await self.sync.own_readings():
            self.quotas.observe(reading, now)  # rebuild hysteresis state; edges are old news
        warn_unmatched(self.settings.resume_reserve_by_window, self.settings.quotas,
                       {r.window_id for r in self.quotas.readings(now)})
        since = now - 2 * self.forecasts.lookback  # the level in force at the span's start too
        for window_id, account in {(r.window_id, r.account) for r in self.quotas.readings(now)}:
            self.forecasts.seed(window_id, await self.store.run(
                lambda s, w=window_id, a=account: s.series(w, since, a)))  # type: ignore[misc]
        self.goals = self.sync.split(await self.store.run(lambda s: s.list_goals()))
        if not self.store.shared and (self._keeper_task is None or self._keeper_task.done()):
            self._keeper_task = self.spawn(self.keeper.run(), "backups")  # a DBA's, when shared
        if self.host_id is not None:
            self.spawn(self.registry.run(), "host-lease")
        await self.sync.start()
        for provider in self.providers.values():
            provider.attach(self)
        # at once: a provider reading a large history (in its worker threads) delays no other,
        # and what one found is stored as soon as it has started, not after the slowest
        await asyncio.gather(*(self._bring_up(p) for p in self.providers.values()))
        await self._recover_interrupted(
            lambda goal: goal.provider not in self.providers)  # a provider no longer enabled
        self.last_refresh = self.clock.now()
        self.bus.publish(ProvidersRefreshed(self.last_refresh))
        for name in sorted(self.supervisor.started):  # one that failed: after its late start
            self.providers[name].host_started()
        self.scheduler.start()
        log.info("engine started for %s with providers %s", self.paths.data_dir,
                 ", ".join(self.providers) or "none")

    def health(self) -> HostHealth:
        store = dataclasses.replace(self.inbox.health, waiting=len(self.inbox))
        clashes = tuple(clash_text(g, owner) for g, owner in sorted(self._not_ours.items()))
        return HostHealth(store, self.supervisor.health, self.safe_mode, clashes)

    def health_changed(self) -> None:
        self.bus.publish(HealthChanged(self.health()))
        self.sync.health_changed(self.inbox.health.available)

    def store_ready(self) -> bool:
        """Whether a claim could be committed now (the scheduler waits while it cannot)."""
        return self.inbox.health.available and self.store.is_open

    async def owner_elsewhere(self, goal_id: str) -> str | None:
        """The host that owns ``goal_id`` when it is not this one (a shared store), else None."""
        if self.host_id is None or not self.store.shared or goal_id in self.goals:
            return None
        goal = self.sync.others.get(goal_id) or await self.store.run(
            lambda s: s.get_goal(goal_id))
        return goal.host if goal is not None and goal.host not in ("", self.host_id) else None

    def all_goals(self) -> list[Goal]:
        """Every goal the views show: this host's and (a shared store) every other host's."""
        return [*self.goals.values(), *self.sync.others.values()]

    async def _late_start(self, provider: Provider) -> None:
        """A provider that failed to start has started: read what it knows now."""
        await self.refresh()
        provider.host_started()

    def lease_was_lost(self, exc: LeaseLost) -> None:
        self._lease_lost(exc)

    def _lease_lost(self, exc: LeaseLost) -> None:
        if self.lease_lost is None:
            self.lease_lost = str(exc)
            log.error("%s", exc)
            self.bus.publish(Notice("error", str(exc)))
            if self.on_lease_lost is not None:
                self.on_lease_lost(str(exc))

    async def stop(self) -> None:
        if not self._running:
            await self.store.close()  # start() may have failed half-way
            return
        self._running = False  # from here on, new actions are refused
        await self.scheduler.stop()
        await self.supervisor.stop()
        await self._settle_actions()
        if self.safe_mode is None and self.lease_lost is None:
            await self._interrupt_hosted()
        for name in sorted(self.supervisor.started):
            provider = self.providers[name]
            await self.guarded_call(provider.name, "stop", provider.stop())
        await self._drain_for_stop()
        await self.sync.stop()
        await self.registry.stopped()
        self._accepting = False
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.store.close()
        log.info("host stopped")

    async def _drain_for_stop(self) -> None:
        """Apply what waits; with the store still refusing, say how much is not stored (the
        providers find it again in their own files when the next host starts)."""
        if self.inbox.health.available:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(STOP_DRAIN_SECONDS):
                    await self.drain()
        if len(self.inbox):
            log.error("stopping with %d provider reports not stored (%s); the next host reads "
                      "them again from the providers' files", len(self.inbox),
                      self.inbox.health.describe())

    async def _settle_actions(self) -> None:
        """Let resumes and starts under way finish before the providers stop: a runner they
        start behind a stopped provider would run unwatched."""
        if self._actions:
            await asyncio.wait(list(self._actions),
                               timeout=self.settings.runner_start_timeout_seconds + 5)

    @contextlib.asynccontextmanager
    async def action(self) -> AsyncIterator[bool]:
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

    async def guarded_call(self, provider: str, what: str, coro: Awaitable[Any]) -> Any:
        try:
            return await coro
        except Exception as exc:
            text = N_("provider {provider}: {what} failed: {error}").format(
                provider=provider, what=what, error=exc)
            log.exception("%s", text)
            self.bus.publish(Notice("error", text))
            return None

    async def drain(self) -> None:
        """Wait until every queued provider report has been applied."""
        await self.inbox.join()

    def _enqueue(self, job: Job, key: Hashable | None = None) -> None:
        if not self._accepting:
            raise RuntimeError("the engine is not started")

        async def fenced() -> None:
            try:
                await job()
            except LeaseLost as exc:  # another host owns the goals now: not ours to store
                self._lease_lost(exc)

        self.inbox.put(fenced, key)

    # -- start-up recovery and shutdown --------------------------------------------------------

    async def _bring_up(self, provider: Provider) -> None:
        """Start one provider, recover its goals, then store what it reads: a provider's
        start-up recovery runs after its own start (as before: after it, not before another's)
        and before its first discovery, and the scheduler starts only after every provider's."""
        started = await self.supervisor.start(provider)
        await self._recover_interrupted(lambda goal: goal.provider == provider.name)
        if started:
            await self._refresh_provider(provider)

    async def _recover_interrupted(self, whose: Callable[[Goal], bool]) -> None:
        """Goals the previous host left running or resuming: back to paused, then resumed.
        ``whose`` picks the goals (one provider's): each goal is recovered once."""
        for goal in [g for g in self.goals.values() if whose(g)]:
            if goal.state is GoalState.RESUMING or (
                goal.state is GoalState.RUNNING and goal.hosted
            ):
                await self._interrupt(goal.id, N_("the previous host stopped while it was "
                                                  "{state}").format(state=goal.state.value),
                                      "startup")
        for goal in [g for g in self.goals.values() if whose(g)]:
            if goal.state is GoalState.PAUSED and goal.pause_reason is PauseReason.INTERRUPTED:
                await self.coordinator.resume(goal.id, Trigger.STARTUP, "startup")

    async def _interrupt_hosted(self) -> None:
        for goal in list(self.goals.values()):
            if goal.hosted and goal.state is GoalState.RUNNING:
                try:
                    await self._interrupt(goal.id, N_("the host stopped"), "shutdown")
                except Exception as exc:  # the next host's start-up recovery catches it
                    if store_unavailable(exc) is None and not isinstance(exc, LeaseLost):
                        raise
                    log.error("%s: could not record the interruption: %s", goal.id, exc)

    async def _interrupt(self, goal_id: str, why: str, origin: str) -> None:
        now = self.clock.now()

        def decide(current: Goal | None) -> Mutation[None]:
            if current is None or current.state not in (GoalState.RUNNING, GoalState.RESUMING):
                return Mutation(None, None)
            new, row = transition(current, GoalEvent.PAUSE, now, origin=origin,
                                  pause_reason=PauseReason.INTERRUPTED, pause_detail=why,
                                  fence=current.fence + 1, auto_resume_note=why)
            return Mutation(new, None, [row])

        await self.transact(goal_id, decide)

    # -- store plumbing ------------------------------------------------------------------------

    async def transact(self, goal_id: str, decide: Callable[[Goal | None], Mutation[T]]
                        ) -> Committed[T]:
        committed = await self.written(lambda s: s.transact(goal_id, decide))
        self._committed(committed)
        return committed

    async def written(self, fn: Callable[[Store], T]) -> T:
        """A store write: its failure or success also tells the store's health. SQLITE_BUSY
        after the busy timeout: the whole transaction again, up to 3 times (retry-table.md)."""
        try:
            value = await self._busy_retried(fn)
        except Exception as exc:
            reason = store_unavailable(exc)
            if reason is not None:
                self.inbox.failed(reason)
                self.care.maybe_damaged(exc)
            elif isinstance(exc, LeaseLost):
                self._lease_lost(exc)
            raise
        self.inbox.succeeded()
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

    def lock_for(self, goal_id: str) -> asyncio.Lock:
        """Held from a resume's claim to its settling: a runner's reports wait for it."""
        return self._locks[goal_id]

    async def record_or_queue(self, goal_id: str,
                              decide: Callable[[Goal | None], Mutation[Any]]) -> None:
        """A change that must be stored because a runner already moved (its start failed, or
        it was stopped): stored now, or — while the store is unavailable — queued like a
        provider report, so the goal never stays ``running`` without a runner."""
        try:
            await self.transact(goal_id, decide)
        except Exception as exc:
            if store_unavailable(exc) is None:
                raise
            log.warning("%s: the change waits for the store (%s)", goal_id, exc)
            self._enqueue(lambda: self._report(goal_id, decide))

    def _committed(self, committed: Committed[T]) -> None:
        after = committed.after
        if after is not None and after != committed.before:
            self.goals[after.id] = after
            self.bus.publish(GoalChanged(after, committed.before))
        for row in committed.history:
            self.announce(row)
        self.scheduler.poke()

    def announce(self, row: HistoryRow) -> None:
        """Every stored history row: one log line, one event."""
        log.info("%s %s %s%s%s", row.goal or "-", row.event,
                 row.outcome.value if row.outcome else "",
                 f" [{row.trigger.value}/{row.origin}]" if row.trigger else "",
                 f": {row.reason}" if row.reason else "")
        self.bus.publish(HistoryRecorded(row))

    def ctx(self) -> IntakeContext:
        return IntakeContext(self.clock.now(), self.policy, self._rng.random,
                             self.settings.auto_resume_default)

    # -- the provider sink ---------------------------------------------------------------------

    def goal_observed(self, provider: str, observation: GoalObservation) -> None:
        self._enqueue(lambda: self._apply_observation(provider, observation),
                      ("observation", observation.id))

    def quota_observed(self, reading: QuotaReading) -> None:
        self._enqueue(lambda: self.record_reading(reading), ("reading", reading.window_id))

    def goal_progress(self, goal_id: str, fence: int, detail: str, data: dict[str, Any]) -> None:
        self._enqueue(lambda: self._report(goal_id, lambda g: decide_progress(
            g, fence, data, self.ctx())), ("progress", goal_id, fence))

    def goal_limited(self, goal_id: str, fence: int, hit: LimitHit) -> None:
        self._enqueue(lambda: self._apply_limit(goal_id, fence, hit))

    def goal_finished(self, goal_id: str, fence: int, detail: str | None = None) -> None:
        self._enqueue(lambda: self._report(goal_id, lambda g: decide_report(
            g, fence, GoalEvent.COMPLETE, detail, self.ctx())))

    def goal_failed(self, goal_id: str, fence: int, detail: str) -> None:
        self._enqueue(lambda: self._report(goal_id, lambda g: decide_report(
            g, fence, GoalEvent.FAIL, detail, self.ctx())))

    def goal_paused(self, goal_id: str, fence: int, reason: PauseReason, detail: str) -> None:
        self._enqueue(lambda: self._report(goal_id, lambda g: decide_report(
            g, fence, GoalEvent.PAUSE, detail, self.ctx(), pause_reason=reason)))

    def goal_rested(self, goal_id: str, fence: int, detail: str | None = None,
                    idle_again: bool = False) -> None:
        marks = {"idle_again": True} if idle_again else None
        self._enqueue(lambda: self._report(goal_id, lambda g: decide_report(
            g, fence, GoalEvent.REST, detail, self.ctx(), row_detail=marks)))

    def goal_noted(self, goal_id: str, event: HistoryEvent, reason: str,
                   detail: dict[str, Any] | None = None) -> None:
        row = note_row(goal_id, event, self.clock.now(), reason=reason, detail=detail)

        async def append() -> None:
            self.announce(await self._append(row))

        self._enqueue(append)

    async def _report(self, goal_id: str, decide: Callable[[Goal | None], Mutation[Any]]) -> None:
        try:
            await self.report(goal_id, decide)
        except NotOwner as exc:  # e.g. the same pipeline name on two machines
            if self._not_ours.get(goal_id) != exc.owner:
                self._not_ours[goal_id] = exc.owner
                log.warning("%s; this host's %s provider sees it too and leaves it alone",
                            exc, goal_id.split(":")[0])
                self.health_changed()
            return
        if self._not_ours.pop(goal_id, None) is not None:  # the other one is gone: ours now
            self.health_changed()

    # -- the policy guard's host (core.policies.guard.GuardHost) -------------------------------

    async def report(self, goal_id: str, decide: Callable[[Goal | None], Mutation[T]]
                     ) -> Committed[T]:
        async with self.lock_for(goal_id):  # never between a resume's claim and its settling
            return await self.transact(goal_id, decide)

    def intake_context(self) -> IntakeContext:
        return self.ctx()

    def enqueue(self, job: Job) -> None:
        self._enqueue(job)

    def stop_gracefully(self, goal: Goal) -> None:
        """A policy pause: the provider stops the goal at the end of its turn where it can."""
        provider = self.providers.get(goal.provider)
        if provider is not None:
            self.spawn(self.guarded_call(provider.name, "pause",
                                         provider.pause_goal_gracefully(goal)),
                       f"policy-pause:{goal.id}")

    async def _apply_observation(self, provider: str, obs: GoalObservation) -> None:
        self.last_refresh = self.clock.now()
        await self._report(obs.id, self._observation_decision(provider, obs))

    def _observation_decision(self, provider: str, obs: GoalObservation
                              ) -> Callable[[Goal | None], Mutation[Any]]:
        if obs.pause_reason is PauseReason.QUOTA:
            # the goal waits for the latest reset among all its exhausted windows
            reset = self.view.latest_reset(obs.windows, obs.resets_at, self.clock.now())
            obs = dataclasses.replace(obs, resets_at=reset)
        return lambda g: decide_observation(g, provider, obs, self.ctx())

    async def _apply_limit(self, goal_id: str, fence: int, hit: LimitHit) -> None:
        for reading in hit.readings:
            await self.record_reading(reading)
        reset = self.view.latest_reset(hit.windows, hit.resets_at, self.clock.now())
        await self._report(goal_id, lambda g: decide_limit(g, fence, hit, reset, self.ctx()))

    async def record_reading(self, reading: QuotaReading) -> None:
        """Store a reading, feed the hysteresis and announce what it changed."""
        self.last_refresh = self.clock.now()
        if not reading.account and (account := self.registry.account_for(reading.provider)):
            reading = reading.model_copy(update={"account": account})
        saved = await self.written(lambda s: s.save_reading(reading))
        if saved:
            await self._reading_applies(reading)

    async def reading_heard(self, reading: QuotaReading) -> None:
        """Another host of this account stored ``reading``: it counts here as if read here."""
        current = self.quotas.tracker(reading.window_id).reading
        if current is None or reading.observed_at > current.observed_at:
            await self._reading_applies(reading)

    async def _reading_applies(self, reading: QuotaReading) -> None:
        previous = self.quotas.tracker(reading.window_id).reading
        self.forecasts.add(reading)
        self.bus.publish(QuotaObserved(reading))
        await self.handle_edges(self.quotas.observe(reading, self.clock.now()))
        await self.guard.reading_recorded(
            previous, reading, self.quotas.effective(reading.window_id, self.clock.now()))
        self.scheduler.poke()

    async def handle_edges(self, edges: Sequence[QuotaEdge]) -> None:
        for edge in edges:
            event = (HistoryEvent.QUOTA_EXHAUSTED if isinstance(edge, QuotaExhausted)
                     else HistoryEvent.QUOTA_RECOVERED)
            row = note_row(None, event, self.clock.now(), reason=edge.window_id,
                           quotas=(reading_summary(edge.reading),))
            self.announce(await self._append(row))
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
                    and goal.steering.no_reset_note is not None):
                await self.transact(goal.id, lambda g: _reschedule_lifted(
                    g, edge.recovered_since, self.ctx()))

    async def _append(self, row: HistoryRow) -> HistoryRow:
        return await self.written(lambda s: s.append_history(row))

    async def refresh(self) -> None:
        """Ask every provider for its goals and quotas (the slow path; watchers push changes)."""
        for name in sorted(self.supervisor.started):
            await self._refresh_provider(self.providers[name])
        self.last_refresh = self.clock.now()
        self.bus.publish(ProvidersRefreshed(self.last_refresh))

    async def _refresh_provider(self, provider: Provider) -> None:
        # quotas first: a goal found paused for quota is planned against its windows
        readings = await self.guarded_call(provider.name, "quota read", provider.read_quotas())
        for reading in readings or []:
            await self._apply_or_queue(functools.partial(self.record_reading, reading),
                                       ("reading", reading.window_id))
        observations = await self.guarded_call(provider.name, "discovery", provider.discover())
        # a goal another host owns goes one by one (its clash is noted, and cleared once the
        # id is free), so that it does not roll the others' batch back at every refresh
        batch = [o for o in observations or [] if o.id not in self._not_ours]
        single = [o for o in observations or [] if o.id in self._not_ours]
        if not await self._observed_at_once(provider.name, batch):
            single = list(observations or [])
        for obs in single:
            await self._apply_or_queue(
                functools.partial(self._apply_observation, provider.name, obs),
                ("observation", obs.id))

    async def _observed_at_once(self, provider: str, observations: list[GoalObservation]) -> bool:
        """Apply a discovery's observations in one store transaction (one commit, not one per
        goal) when nothing waits for the store; False — and nothing stored — when they must go
        one by one: reports are queued, the store is unavailable, or one goal is another
        host's (:class:`NotOwner` rolls the whole batch back). They are applied in the
        provider's order (the store takes their rows' locks in goal-id order first)."""
        if len(observations) < 2 or len(self.inbox) or not self.inbox.health.available:
            return False
        changes = [(obs.id, self._observation_decision(provider, obs)) for obs in observations]
        async with contextlib.AsyncExitStack() as held:
            for goal_id in sorted({goal_id for goal_id, _ in changes}):  # as report() does
                await held.enter_async_context(self.lock_for(goal_id))
            try:
                batch = await self.written(lambda s: s.transact_many(changes))
            except NotOwner:
                return False
            except Exception as exc:
                if store_unavailable(exc) is None:
                    raise
                return False
        self.last_refresh = self.clock.now()
        for committed in batch:
            self._committed(committed)
        return True

    async def _apply_or_queue(self, job: Job, key: Hashable) -> None:
        """Apply now — or, while reports wait for the store, after them, in order."""
        if len(self.inbox) or not self.inbox.health.available:
            self._enqueue(job, key)
            return
        try:
            await job()
        except Exception as exc:
            if store_unavailable(exc) is None:
                raise
            self._enqueue(job, key)

    async def fresh_read(self, provider_name: str, timeout: float | None = None) -> str | None:
        """The authoritative pre-resume read; returns a note when it could not be taken.

        The engine's own time-box is a backstop: providers time-box their reads themselves (and
        say more precisely what went wrong), so it is longer than theirs.
        """
        timeout = timeout or self.settings.fresh_read_timeout_seconds
        provider = self.providers.get(provider_name)
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
            await self._apply_or_queue(functools.partial(self.record_reading, reading),
                                       ("reading", reading.window_id))
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
            key = "rising_edge" if reason.startswith("quota recovered") else "slot_free"
            row = note_row(goal_id, HistoryEvent.RESUME_SCHEDULED, now,
                           reason=RELEASED.get(reason, N_("{reason}: {windows}")).format(
                               reason=reason, windows=", ".join(windows)),
                           detail={"not_before": now.isoformat(), key: windows})
            return Mutation(new, None, [row])

        await self.transact(goal_id, decide)

    # -- goal actions (every one returns a typed result; see core.goals.door) -------------------

    async def resume(self, goal_id: str, origin: str = "gui",
                     trigger: Trigger = Trigger.MANUAL,
                     context: dict[str, Any] | None = None) -> ActionResult:
        return await self.actions.resume(goal_id, origin, trigger, context)

    async def pause(self, goal_id: str, origin: str = "gui") -> ActionResult:
        return await self.actions.pause(goal_id, origin)

    async def cancel(self, goal_id: str, origin: str = "gui") -> ActionResult:
        return await self.actions.cancel(goal_id, origin)

    async def set_auto_resume(self, goal_id: str, enabled: bool,
                              origin: str = "gui") -> ActionResult:
        return await self.actions.set_auto_resume(goal_id, enabled, origin)

    async def set_goal_policy(self, goal_id: str, key: str, value: str,
                              origin: str = "gui") -> ActionResult:
        """Set one of a goal's own resume policies (``goalkeeper goal set``, the details
        dialog); a goal waiting for its reset is planned again under the new value."""
        return await self.actions.set_goal_policy(goal_id, key, value, origin)

    async def start_goal(self, goal_id: str, origin: str = "gui") -> ActionResult:
        """Start an idle goal (``idle → running``) through its provider's runner."""
        return await self.actions.start_goal(goal_id, origin)

    async def forget_goal(self, goal_id: str, origin: str = "gui") -> ActionResult:
        """Stop watching a goal: its runner is stopped and its row removed (history stays)."""
        return await self.actions.forget_goal(goal_id, origin)

    async def restore_store(self, backup: str | None, empty: bool) -> dict[str, Any]:
        """Put a verified backup (or, with ``empty``, nothing) in place of a store safe mode
        cannot use, then start as usual (see :mod:`core.hosts.safe_mode`)."""
        return await self.care.restore(backup, empty)

    async def leave_safe_mode(self) -> None:
        await self.care.leave()

    @property
    def safe_mode(self) -> str | None:
        """Why the store cannot be written (the engine runs nothing), or None."""
        return self.care.problem

    async def history(self, goal: str | None = None, limit: int = 100, offset: int = 0) -> list[
            Any]:
        try:
            return await self.store.run(lambda s: s.history(goal, limit, offset))
        except sqlite3.DatabaseError as exc:
            self.care.maybe_damaged(exc)
            raise


def _reschedule_lifted(goal: Goal | None, since: datetime, ctx: IntakeContext
                       ) -> Mutation[None]:
    # checked again here: the engine's copy that chose this goal may be older than the store
    # (the user may have paused it meanwhile: a user pause is never scheduled)
    if goal is None or goal.state is not GoalState.PAUSED or goal.next_resume_at is not None or (
        goal.pause_reason is not PauseReason.QUOTA or goal.steering.no_reset_note is None
    ):
        return Mutation(None, None)
    steering = goal.steering.model_copy(update={"no_reset_note": None})
    new, row = schedule(goal.model_copy(update={"steering": steering, "updated_at": ctx.now}),
                        min(since, ctx.now), ctx)
    return Mutation(new, None, [row])
