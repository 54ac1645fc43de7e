"""The composition root: one host's rooms, wired, started and stopped.

The engine is what a *host* runs (``goalkeeper daemon`` or the desktop app). It builds each room
and hands it its collaborators — never itself — and owns the lifecycle:

* :class:`~core.store.writer.StoreWriter` — the write path: write now, or queue until the store
  is back; the store's health;
* :class:`~core.goals.book.GoalBook` — this host's goals and the announcement of every change;
* :class:`~core.goals.door.GoalDoor` — the one door every command goes through
  (:attr:`Engine.perform`);
* :class:`~core.goals.sink.ProviderIntake` — the provider sink: reports → decisions;
* :class:`~core.goals.quota_intake.QuotaIntake` — readings → hysteresis → edges → scheduler;
* :class:`~core.goals.recovery.Recovery` — start-up recovery through the door;
* :class:`~core.goals.scheduler.Scheduler`, :class:`~core.goals.guard.PolicyGuard`;
* :class:`~core.hosts.registry.HostRegistry`, :class:`~core.hosts.sync.SharedSync`,
  :class:`~core.hosts.remote.RemoteActions`, :class:`~core.hosts.safe_mode.SafeMode`;
* :class:`~core.hosts.awake.KeepAwake` — the sleep inhibitor while a resume is due;
* :class:`~core.reads.LiveReads` — the read model the views and ``status`` read.

Signals (bus events): GoalChanged, GoalRemoved, HistoryRecorded, QuotaObserved, QuotaExhausted,
QuotaRecovered, SchedulerWoke, ProvidersRefreshed, Notice, HealthChanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from core.atomic import remove_leftovers
from core.clock import Clock, LiveZone, SystemClock
from core.events import EventBus, Notice, ProvidersRefreshed
from core.goals.auto_resume import AutoResumePolicy
from core.goals.book import GoalBook
from core.goals.door import GoalDoor, ResumeParts
from core.goals.guard import PolicyGuard
from core.goals.intake import IntakeContext
from core.goals.quota_intake import QuotaIntake, ReadMark
from core.goals.quota_view import QuotaView
from core.goals.recovery import Recovery
from core.goals.scheduler import Scheduler, SchedulerParts
from core.goals.sink import ProviderIntake
from core.health import HealthChanged, HostHealth, clash_text
from core.hosts.awake import AwakeParts, KeepAwake, SleepInhibitor
from core.hosts.registry import HostRegistry
from core.hosts.remote import HostsView, RemoteActions
from core.hosts.safe_mode import SafeMode, SafeModeParts
from core.hosts.sync import SharedSync, SyncParts
from core.identity import host_id_of
from core.integration.inhibit import battery_percent, default_inhibitor
from core.models import Goal
from core.paths import Paths
from core.policies.reserve_table import warn_unmatched
from core.providers.base import Provider
from core.providers.calls import ProviderCalls
from core.providers.supervisor import ProviderSupervisor
from core.quota.forecast import ForecastBook
from core.quota.machine import QuotaManager
from core.reads import LiveParts, LiveReads
from core.settings import Settings
from core.store import LeaseLost, StoreThread, StoreUnavailable
from core.store.inbox import ReportQueue
from core.store.target import StoreTarget
from core.store.upkeep import StoreKeeper
from core.store.writer import StoreWriter

log = logging.getLogger("goalkeeper")

STOP_DRAIN_SECONDS = 30.0
#: how long the usage chart's readings are kept (a weekly window and then some)
SERIES_RETENTION = timedelta(days=35)
#: answered and expired action requests of other hosts are kept this long (for a look back)
REQUEST_RETENTION = timedelta(days=2)


class Engine:
    """One host's core, wired. Attributes: ``bus``, ``goals`` (id → Goal), ``perform`` (the
    one door), ``reads`` (the read model), and each room by its class's name."""

    def __init__(
        self,
        paths: Paths,
        settings: Settings,
        providers: Sequence[Provider],
        clock: Clock | None = None,
        rng: random.Random | None = None,
        fenced: bool = False,
        inhibitor: SleepInhibitor | None = None,
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
        self.providers: dict[str, Provider] = {p.name: p for p in providers}
        self.quotas = QuotaManager(settings.hysteresis())
        #: the local zone of the moment: a change while the host runs is followed (core.clock)
        self.zone = LiveZone(self.clock.local_zone)
        self.policy = AutoResumePolicy.from_settings(settings, self.zone)
        self.forecasts = ForecastBook()
        self._rng = rng or random.Random()
        #: called once when another host took over (the fence refused a write)
        self.on_lease_lost: Callable[[str], None] | None = None
        self.lease_lost: str | None = None
        self._running = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._actions: set[asyncio.Future[None]] = set()
        self._keeper_task: asyncio.Task[Any] | None = None
        self._wire_write_path()
        self._wire_hosts()
        self._wire_goals()
        self.keep_awake = KeepAwake(AwakeParts(self.goals, self.clock, settings,
                                               inhibitor or default_inhibitor(), battery_percent,
                                               self.health_changed, zone=self.zone,
                                               spawn=self.spawn))

    def _wire_write_path(self) -> None:
        self.goal_book = GoalBook(self.bus, self._poke)
        self.goals: dict[str, Goal] = self.goal_book.goals
        self.others: dict[str, Goal] = {}  # other hosts' goals (SharedSync keeps them)
        self.report_queue = ReportQueue(self.clock, lambda _: self.health_changed())
        self.store_writer = StoreWriter(self.store, self.report_queue, self.goal_book.committed,
                                        self._maybe_damaged, self._lease_was_lost)
        self.provider_calls = ProviderCalls(self.providers, self.bus, self.spawn)
        self.provider_supervisor = ProviderSupervisor(self.clock, self.spawn,
                                                      self.health_changed, self._late_start)
        self.store_keeper = StoreKeeper(self.store, self.clock)
        self.quota_view = QuotaView(self.quotas, self.policy)
        self.policy_guard = PolicyGuard(self.goals, self.ctx, self.store_writer,
                                        self.provider_calls.stop_gracefully)
        self.read_mark = ReadMark()
        self.quota_intake = QuotaIntake(
            self.store_writer, self.quotas, self.forecasts, self.policy_guard, self.goal_book,
            self.bus, self.clock, self.ctx, self._account_for, self.providers, self.read_mark,
            self._poke, self.settings.fresh_read_timeout_seconds)

    def _wire_hosts(self) -> None:
        s = self.settings
        self.host_registry = HostRegistry(self.store, self.store_writer, self.clock, s,
                                          self.providers, self.host_id or "",
                                          self._lease_was_lost, lambda: self.lease_lost,
                                          health_changed=self.health_changed)
        hosts = HostsView(self.host_id, lambda: self.store.shared, self.goals, self.others,
                          s.host_stale_seconds, s.runner_start_timeout_seconds)
        self.remote_actions = RemoteActions(self.store, self.store_writer, hosts, self.clock,
                                            self._perform, self.spawn,
                                            lambda: self.safe_mode.problem)
        self.shared_sync = SharedSync(SyncParts(
            self.store, self.report_queue, self.clock, self.bus, self.host_id, self.goals,
            self.others, self._account_for,
            lambda: sorted(set(self.host_registry.accounts.values())), self.quotas,
            self.quota_intake, self.remote_actions, s.hysteresis(), self.spawn, self._poke,
            self.start_normally))
        self.safe_mode = SafeMode(SafeModeParts(
            self.store, self.store_keeper, self.goals, self.clock, self.bus, self.paths.database,
            self.spawn, self.health_changed, self._halt, self.start_normally))

    def _wire_goals(self) -> None:
        self.provider_intake = ProviderIntake(
            self.store_writer, self.quota_intake, self.quota_view, self.goal_book,
            self.providers, lambda: self.provider_supervisor.started, self.provider_calls,
            self.bus, self.clock, self.ctx, self.read_mark, self.health_changed,
            lambda name, problems: self.provider_supervisor.mark(name, unreadable=problems))
        self.goal_door = GoalDoor(
            self.goal_book, self.store_writer, self.providers, self.provider_calls, self,
            self.remote_actions, self.bus, self.clock, self.ctx,
            ResumeParts(self.policy, self.quota_view,
                        self.settings.runner_start_timeout_seconds))
        self.perform = self.goal_door.perform
        self.provider_intake.door = self.goal_door
        self.recovery = Recovery(self.goals, self.store_writer, self.goal_door, self.clock)
        self.scheduler = Scheduler(SchedulerParts(
            self.goals, self.quotas, self.providers, self.bus, self.quota_intake,
            lambda: self.store_writer.available, self._perform), self.clock, self.settings,
            self._rng)
        self.reads = LiveReads(LiveParts(
            self.clock, self.settings, self.host_id, self.goals, self.others, self.quotas,
            self.policy.rules, self.forecasts, lambda: self.scheduler.next_wake,
            lambda: self.read_mark.at, self.health, lambda: self.shared_sync.listening,
            self.providers, self.store, self._maybe_damaged))
        #: ask every provider for its goals and quotas; wait for every queued report
        self.refresh = self.provider_intake.refresh
        self.drain = self.store_writer.drain

    # -- what the rooms are handed ---------------------------------------------------------------

    def ctx(self) -> IntakeContext:
        return IntakeContext(self.clock.now(), self.policy, self._rng.random,
                             self.settings.auto_resume_default,
                             {p: self.settings.auto_resume_for(p) for p in ("codex", "claude")})

    def _poke(self) -> None:
        self.scheduler.poke()
        self.keep_awake.poke()

    def _perform(self, command: Any, origin: str) -> Awaitable[Any]:
        return self.goal_door.perform(command, origin)

    def _account_for(self, provider: str) -> str:
        return self.host_registry.account_for(provider)

    def _maybe_damaged(self, exc: BaseException) -> None:
        self.safe_mode.maybe_damaged(exc)

    @property
    def safe_mode_problem(self) -> str | None:
        """Why the store cannot be written (the engine runs nothing), or None."""
        return self.safe_mode.problem

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        self.paths.ensure()
        now = self.clock.now()
        for path in remove_leftovers(self.paths.data_dir):
            log.info("removed %s, left over from an interrupted write", path)
        try:
            await self.store.open(now)
        except StoreUnavailable as exc:  # the shared store: watched for, started when it is back
            self.report_queue.failed(str(exc))
        self.store_writer.accepting = True
        self.spawn(self.report_queue.work(), "inbox")
        self._running = True
        if self.store.problem is not None:
            await self.safe_mode.enter(self.store.problem.message)
            return
        if not self.store.is_open:
            self.spawn(self.shared_sync.open_later(), "store-open")
            return
        await self.start_normally(now)

    async def start_normally(self, now: datetime) -> None:
        horizon = now - SERIES_RETENTION
        await self.store.run(lambda s: s.prune_series(horizon))
        await self.store.run(lambda s: s.prune_requests(now - REQUEST_RETENTION))
        await self.host_registry.resolve_accounts()
        for reading in await self.shared_sync.own_readings():
            self.quotas.observe(reading, now)  # rebuild hysteresis state; edges are old news
        warn_unmatched(self.settings.resume_reserve_by_window, self.settings.quotas,
                       {r.window_id for r in self.quotas.readings(now)})
        since = now - 2 * self.forecasts.lookback  # the level in force at the span's start too
        for window_id, account in {(r.window_id, r.account) for r in self.quotas.readings(now)}:
            self.forecasts.seed(window_id, await self.store.run(
                lambda s, w=window_id, a=account: s.series(w, since, a)))  # type: ignore[misc]
        self.goal_book.load(self.shared_sync.split(
            await self.store.run(lambda s: s.list_goals())).values())
        if not self.store.shared and (self._keeper_task is None or self._keeper_task.done()):
            self._keeper_task = self.spawn(self.store_keeper.run(), "backups")  # a DBA's, shared
        if self.host_id is not None:
            self.spawn(self.host_registry.run(), "host-lease")
        await self.shared_sync.start()
        for provider in self.providers.values():
            provider.attach(self.provider_intake)
        # at once: a provider reading a large history (in its worker threads) delays no other,
        # and what one found is stored as soon as it has started, not after the slowest
        await asyncio.gather(*(self._bring_up(p) for p in self.providers.values()))
        await self.recovery.recover(
            lambda goal: goal.provider not in self.providers)  # a provider no longer enabled
        self.read_mark.at = self.clock.now()
        self.bus.publish(ProvidersRefreshed(self.read_mark.at))
        for name in sorted(self.provider_supervisor.started):  # a failed one: after its late start
            self.providers[name].host_started()
        self.scheduler.start()
        self.keep_awake.start()
        log.info("engine started for %s with providers %s", self.paths.data_dir,
                 ", ".join(self.providers) or "none")

    async def _bring_up(self, provider: Provider) -> None:
        """Start one provider, recover its goals, then store what it reads: a provider's
        start-up recovery runs after its own start and before its first discovery, and the
        scheduler starts only after every provider's."""
        started = await self.provider_supervisor.start(provider)
        await self.recovery.recover(lambda goal: goal.provider == provider.name)
        if started:
            await self.provider_intake.refresh_provider(provider)

    async def _late_start(self, provider: Provider) -> None:
        """A provider that failed to start has started: read what it knows now."""
        await self.provider_intake.refresh()
        provider.host_started()

    def health(self) -> HostHealth:
        queue = self.report_queue
        store = dataclasses.replace(queue.health, waiting=len(queue))
        clashes = tuple(clash_text(g, owner)
                        for g, owner in sorted(self.provider_intake.clashes.items()))
        attention = tuple(text for name in sorted(self.provider_supervisor.started)
                          for text in self.providers[name].attention())
        return HostHealth(store, self.provider_supervisor.health, self.safe_mode.problem,
                          clashes, attention, self.host_registry.skewed,
                          self.keep_awake.health)

    def health_changed(self) -> None:
        self.bus.publish(HealthChanged(self.health()))
        self.shared_sync.health_changed(self.report_queue.health.available)

    def _lease_was_lost(self, exc: LeaseLost) -> None:
        if self.lease_lost is None:
            self.lease_lost = str(exc)
            log.error("%s", exc)
            self.bus.publish(Notice("error", str(exc)))
            if self.on_lease_lost is not None:
                self.on_lease_lost(str(exc))

    async def _halt(self) -> None:
        """Stop the scheduler and the providers (safe mode: nothing may run)."""
        await self.scheduler.stop()
        await self.keep_awake.stop()
        await self.provider_supervisor.stop()
        for name in sorted(self.provider_supervisor.started):
            await self.provider_calls.guarded(name, "stop", self.providers[name].stop())
        self.provider_supervisor.started.clear()

    async def stop(self) -> None:
        if not self._running:
            await self.store.close()  # start() may have failed half-way
            return
        self._running = False  # from here on, new actions are refused
        await self.scheduler.stop()
        await self.keep_awake.stop()
        await self.provider_supervisor.stop()
        await self._settle_actions()
        if self.safe_mode.problem is None and self.lease_lost is None:
            await self.recovery.interrupt_hosted()
        for name in sorted(self.provider_supervisor.started):
            await self.provider_calls.guarded(name, "stop", self.providers[name].stop())
        await self.store_writer.drain_for_stop(STOP_DRAIN_SECONDS)
        await self.shared_sync.stop()
        await self.host_registry.stopped()
        self.store_writer.accepting = False
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
