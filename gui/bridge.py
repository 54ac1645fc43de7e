"""The one crossing between the core and the widgets.

:class:`Bridge` subscribes to ``engine.bus`` and re-emits every core event as a Qt signal; it is
also the only way widgets read core state (snapshots of goals and readings, pages of history,
stored series) and the only way they act (every action goes through the engine's entry points and
comes back as the typed :class:`~core.goals.results.ActionResult`). No widget imports the engine.

The bus publishes on the event-loop thread, which under qasync is the GUI thread, so signals are
emitted directly — no queued hop, no copies. Goal changes are the exception: a provider burst can
change a thousand goals in one go, so they are collected and announced once per turn of the event
loop as one ``goals_changed`` list (the latest version of each goal), and every view does its work
once per burst.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from core.engine import Engine
from core.events import (
    Event,
    GoalChanged,
    GoalRemoved,
    HistoryRecorded,
    HostChanged,
    Notice,
    NotificationIssued,
    NotifyChannelChanged,
    ProvidersRefreshed,
    QuotaExhausted,
    QuotaObserved,
    QuotaRecovered,
    SchedulerWoke,
)
from core.goals.results import ActionResult
from core.hosts.health import HealthChanged, HostHealth
from core.hosts.listing import HostLine, host_lines
from core.i18n import N_, localized
from core.models import Goal, HistoryEvent, HistoryRow, Outcome, QuotaReading
from core.notify.health import ChannelHealth, ChannelState
from core.notify.service import send_test_now
from core.policies.forecast import Forecast
from core.providers.registry import looked_for
from core.quota.machine import effective
from core.settings import Settings
from core.store import Store
from core.store import StoreError as StoreError  # what a read may fail with: for the widgets
from gui.goal_rules import can_pause
from gui.tasks import TaskKeeper

log = logging.getLogger("gui")

#: history scanned at most this far back for chart markers
MARKER_SCAN_LIMIT = 20_000


@dataclass(frozen=True)
class Marker:
    """A pause or resume on the chart's time axis."""

    at: datetime
    kind: str  # "paused" | "resumed"
    goal: str


class Bridge(QObject):
    """Adapter from the core engine to Qt. Owns its bus subscription and its action tasks.

    Signals:
        goals_reset(list[Goal]): the full set of goals (after the host started).
        goals_changed(list[Goal]): goals that changed since the last turn of the loop.
        goal_removed(str): a goal is no longer watched.
        history_recorded(HistoryRow): a history row was appended.
        quota_observed(QuotaReading): a new (raw) reading was stored.
        quota_edge(str, bool): a window became exhausted (True) or recovered (False).
        scheduler_woke(object): the scheduler's next wake instant, or None when idle.
        providers_refreshed(datetime): every provider was asked for goals and quotas.
        notice(str, str): level and text of something the user should be told once.
        notification_issued(Notification): a notification whose kind is switched on (the core
            decided; the tray only shows it).
        notify_channel_changed(ChannelHealth): a remote channel (ntfy, webhook) delivered,
            is retrying, failing, or was switched off.
        action_finished(str, ActionResult): a requested action (verb) came back.
        host_state_changed(str): ``starting`` / ``running`` / ``replaced`` / ``stopping`` /
            ``stopped``.
        health_changed(HostHealth): the store's availability, a provider's start, safe mode.
        host_changed(str): a host of the shared store came online or stopped (its id).
    """

    goals_reset = Signal(list)
    goals_changed = Signal(list)
    goal_removed = Signal(str)
    history_recorded = Signal(object)
    quota_observed = Signal(object)
    quota_edge = Signal(str, bool)
    scheduler_woke = Signal(object)
    providers_refreshed = Signal(object)
    notice = Signal(str, str)
    notification_issued = Signal(object)
    notify_channel_changed = Signal(object)
    action_finished = Signal(str, object)
    host_state_changed = Signal(str)
    health_changed = Signal(object)
    host_changed = Signal(str)

    def __init__(self, engine: Engine, host_text: str = "", parent: QObject | None = None
                 ) -> None:
        super().__init__(parent)
        self._engine = engine
        self._tasks = TaskKeeper()
        self._readings: dict[str, QuotaReading] = {}
        self._channels: dict[str, ChannelHealth] = {}
        self._changed: dict[str, Goal] = {}
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(0)
        self._flush_timer.timeout.connect(self.flush)
        self.host_text = host_text
        self.host_state = "starting"
        self._unsubscribe: Callable[[], None] | None = engine.bus.subscribe(self._on_event)

    # -- lifecycle -----------------------------------------------------------------------------

    def sync(self) -> None:
        """Announce the engine's current goals and readings (it loads them without events)."""
        now = self.now()
        for reading in self._engine.quotas.readings(now):
            raw = self._engine.quotas.tracker(reading.window_id).reading
            self._readings[reading.window_id] = raw or reading
        self.goals_reset.emit(self.goals())
        for reading in list(self._readings.values()):
            self.quota_observed.emit(reading)
        self.scheduler_woke.emit(self._engine.scheduler.next_wake)
        for health in list(self._channels.values()):
            self.notify_channel_changed.emit(health)
        if self._engine.last_refresh is not None:
            self.providers_refreshed.emit(self._engine.last_refresh)
        self.health_changed.emit(self.health)

    def set_host_state(self, state: str) -> None:
        self.host_state = state
        self.host_state_changed.emit(state)

    async def cancel_actions(self) -> None:
        """Cancel the actions still under way, before the host stops: a resume still starting
        its runner would otherwise start it behind the stopped provider, with no host left to
        watch or stop it. A cancelled resume leaves its goal ``resuming``, which start-up
        recovery takes up."""
        await self._tasks.cancel_all()

    async def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        await self._tasks.cancel_all()

    # -- core events -> Qt signals --------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if isinstance(event, GoalChanged):
            self._queue_change(event.goal)
        elif isinstance(event, HistoryRecorded):
            self.history_recorded.emit(event.row)
        elif isinstance(event, QuotaObserved | QuotaExhausted | QuotaRecovered):
            self._on_quota(event)
        elif isinstance(event, SchedulerWoke):
            self.scheduler_woke.emit(event.next_wake)
        elif isinstance(event, GoalRemoved):
            self.flush()  # a change queued before the removal must not resurrect the goal
            self.goal_removed.emit(event.goal_id)
        else:
            self._on_host_event(event)

    def _on_host_event(self, event: Event) -> None:
        if isinstance(event, ProvidersRefreshed):
            self.providers_refreshed.emit(event.at)
        elif isinstance(event, Notice):
            self.notice.emit(event.level, localized(event.text))
        elif isinstance(event, NotificationIssued):
            self.notification_issued.emit(event.notification)
        elif isinstance(event, NotifyChannelChanged):
            self._on_channel(event.health)
        elif isinstance(event, HealthChanged):
            self.health_changed.emit(event.health)
        elif isinstance(event, HostChanged):
            self.host_changed.emit(event.host_id)

    def _queue_change(self, goal: Goal) -> None:
        self._changed[goal.id] = goal
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def _on_quota(self, event: QuotaObserved | QuotaExhausted | QuotaRecovered) -> None:
        if isinstance(event, QuotaObserved):
            self._readings[event.reading.window_id] = event.reading
            self.quota_observed.emit(event.reading)
        else:
            self.quota_edge.emit(event.window_id, isinstance(event, QuotaExhausted))

    def _on_channel(self, health: ChannelHealth) -> None:
        if health.state is ChannelState.OFF:
            self._channels.pop(health.channel, None)
        else:
            self._channels[health.channel] = health
        self.notify_channel_changed.emit(health)

    def flush(self) -> None:
        """Announce the goal changes collected so far (the loop does it on its next turn)."""
        self._flush_timer.stop()
        if self._changed:
            changed, self._changed = list(self._changed.values()), {}
            self.goals_changed.emit(changed)

    # -- snapshots -----------------------------------------------------------------------------

    def now(self) -> datetime:
        return self._engine.clock.now()

    @property
    def settings(self) -> Settings:
        return self._engine.settings

    @property
    def max_attempts(self) -> int:
        return self._engine.settings.max_auto_attempts

    @property
    def data_dir(self) -> str:
        return str(self._engine.paths.data_dir)

    @property
    def config_file(self) -> Any:
        return self._engine.paths.config_file

    @property
    def health(self) -> HostHealth:
        return self._engine.health()

    @property
    def next_wake(self) -> datetime | None:
        return self._engine.scheduler.next_wake

    @property
    def last_refresh(self) -> datetime | None:
        return self._engine.last_refresh

    @property
    def host_id(self) -> str:
        """This host's id in the store ('' for a bare engine)."""
        return self._engine.host_id or ""

    def goals(self) -> list[Goal]:
        """Every goal: this host's and, on a shared store, every other host's."""
        return self._engine.all_goals()

    def goal(self, goal_id: str) -> Goal | None:
        return self._engine.goals.get(goal_id) or self._engine.sync.others.get(goal_id)

    def readings(self) -> list[QuotaReading]:
        """The latest reading of every window as it stands now (resets passed, age marked)."""
        now = self.now()
        policy = self._engine.settings.hysteresis()
        return [effective(r, now, policy) for _, r in sorted(self._readings.items())]

    def reading(self, window_id: str) -> QuotaReading | None:
        raw = self._readings.get(window_id)
        return effective(raw, self.now(), self._engine.settings.hysteresis()) if raw else None

    def is_exhausted(self, window_id: str) -> bool:
        return not self._engine.quotas.is_recovered(window_id)

    def reserve_percent(self, window_id: str) -> float:
        """The share of the window kept for the user (the gauge's reserve line); 0: none."""
        return self._engine.policy.rules.reserve_for(window_id)

    def forecast(self, window_id: str) -> Forecast | None:
        """The window's forecast at the recent pace (None: no reading)."""
        reading = self.reading(window_id)
        if reading is None:
            return None
        return self._engine.forecasts.forecast(reading, self.now())

    def forecast_text(self, window_id: str) -> str:
        """``runs out ≈ 14:20`` / ``lasts until reset`` / nothing, at the recent pace."""
        found = self.forecast(window_id)
        return found.text(self.now()) if found is not None else ""

    def open_command(self, goal: Goal) -> list[str] | None:
        provider = self._engine.providers.get(goal.provider)
        return provider.open_command(goal) if provider is not None else None

    def provider_names(self) -> list[str]:
        return sorted(self._engine.providers)

    def notify_channels(self) -> list[ChannelHealth]:
        """The remote notification channels' records, as last announced."""
        return [self._channels[name] for name in sorted(self._channels)]

    async def send_test_notification(self, settings: Settings) -> list[tuple[str, bool, str]]:
        """A test message through the channels ``settings`` configure (saved or not):
        (channel, delivered, why not) for each."""
        reports = await send_test_now(settings, self._engine.clock)
        return [(r.channel, r.delivered, r.reason or "") for r in reports]

    def looked_for(self) -> list[tuple[str, str]]:
        """(provider, what it looked for and where) for every known provider, on or off."""
        return looked_for(self._engine.settings, os.environ)

    # -- stored data (read on the store's thread) -----------------------------------------------

    async def history_page(self, goal: str | None, limit: int, offset: int
                           ) -> tuple[list[HistoryRow], int]:
        def _read(store: Store) -> tuple[list[HistoryRow], int]:
            return store.history(goal, limit, offset), store.count_history(goal)

        return await self._engine.store.run(_read)

    @property
    def store_text(self) -> str:
        """The store, in words: ``the shared store db/goals`` / ``the database /…/goalkeeper.db``
        (stored English, shown through ``localized()``)."""
        return self._engine.store.target.describe()

    async def hosts(self) -> list[HostLine]:
        """The store's hosts as ``goalkeeper hosts`` lists them, judged now."""
        lease, me, now = self.settings.host_stale_seconds, self.host_id, self.now()

        def _read(store: Store) -> list[HostLine]:
            return host_lines(store.list_hosts(), (g.host for g in store.list_goals()), now,
                              lease, me)

        return await self._engine.store.run(_read)

    async def series(self, window_id: str, since: datetime | None
                     ) -> list[tuple[datetime, float]]:
        reading = self.reading(window_id)
        account = reading.account if reading is not None else ""
        return await self._engine.store.run(lambda s: s.series(window_id, since, account))

    async def markers(self, window_id: str, since: datetime) -> list[Marker]:
        """Pauses for quota and resumes of the goals that draw on ``window_id`` since ``since``."""
        goals = {g.id for g in self._engine.goals.values() if window_id in g.windows}
        return await self._engine.store.run(lambda s: _scan_markers(s, goals, since))

    # -- actions -------------------------------------------------------------------------------

    def request(self, verb: str, goal_id: str, **kw: Any) -> asyncio.Task[ActionResult]:
        """Start ``verb`` on a goal; ``action_finished`` reports the result."""
        return self._tasks.spawn(self._run(verb, goal_id, **kw), f"{verb}:{goal_id}")

    async def _run(self, verb: str, goal_id: str, **kw: Any) -> ActionResult:
        result = await self.perform_rendered(verb, goal_id, **kw)
        self.action_finished.emit(verb, result)
        return result

    async def perform_rendered(self, verb: str, goal_id: str, **kw: Any) -> ActionResult:
        """:meth:`perform`, with an engine failure turned into a ``failed`` result."""
        try:
            return await self.perform(verb, goal_id, **kw)
        except Exception as exc:  # an engine failure is rendered, never taken for success
            log.exception("%s %s failed", verb, goal_id)
            return ActionResult(goal_id, Outcome.FAILED,
                                N_("internal error: {error}").format(error=exc))

    async def perform(self, verb: str, goal_id: str, origin: str = "gui",
                      enabled: bool | None = None, key: str = "", value: str = ""
                      ) -> ActionResult:
        engine = self._engine
        if verb == "goal_set":
            return await engine.set_goal_policy(goal_id, key, value, origin=origin)
        if verb == "resume":
            return await engine.resume(goal_id, origin=origin)
        if verb == "start":
            return await engine.start_goal(goal_id, origin=origin)
        if verb == "pause":
            return await engine.pause(goal_id, origin=origin)
        if verb == "cancel":
            return await engine.cancel(goal_id, origin=origin)
        if verb == "auto_resume":
            if enabled is None:
                raise ValueError("auto_resume needs enabled=True/False")
            return await engine.set_auto_resume(goal_id, enabled, origin=origin)
        raise ValueError(f"unknown action {verb!r}")

    def pause_all(self, origin: str = "tray") -> list[asyncio.Task[ActionResult]]:
        """Pause every goal that can be paused (each result is reported on its own)."""
        return [self.request("pause", g.id, origin=origin) for g in self.goals() if can_pause(g)]

    def refresh(self) -> asyncio.Task[None]:
        return self._tasks.spawn(self._engine.refresh(), "refresh")


def _scan_markers(store: Store, goals: set[str], since: datetime) -> list[Marker]:
    markers: list[Marker] = []
    offset, page = 0, 500
    while offset < MARKER_SCAN_LIMIT:
        rows = store.history(None, page, offset)
        for row in rows:
            if row.at < since:
                return markers
            marker = marker_for(row, goals)
            if marker is not None:
                markers.append(marker)
        if len(rows) < page:
            break
        offset += page
    return markers


def marker_for(row: HistoryRow, goals: set[str]) -> Marker | None:
    """The chart marker a history row makes for one of ``goals``, if any."""
    if row.goal is None or row.goal not in goals:
        return None
    if row.event is HistoryEvent.PAUSED and (row.reason or "").startswith("quota"):
        return Marker(row.at, "paused", row.goal)
    if row.event is HistoryEvent.RESUMED:
        return Marker(row.at, "resumed", row.goal)
    return None
