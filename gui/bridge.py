"""The one crossing between the core and the widgets.

:class:`Bridge` subscribes to the host's bus and re-emits every core event as a Qt signal; it is
also the only way widgets read core state — through the read model (:mod:`core.reads`: goals,
readings, pages of history, stored series, hosts) — and the only way they act: a
:mod:`core.commands` value through the one door (``perform``), answered by the typed
:class:`~core.commands.ActionResult`. Neither the bridge nor any widget imports the engine.

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
import sys
from collections.abc import Callable
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, QTimer, Signal

from core.clock import Clock, LiveZone
from core.commands import ActionResult, Command, Pause
from core.events import (
    Event,
    EventBus,
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
from core.health import HealthChanged, HostHealth
from core.hosts.listing import HostLine
from core.i18n import N_, localized
from core.models import Goal, HistoryRow, Outcome, QuotaReading
from core.notices import ChannelHealth, ChannelState
from core.notify.service import send_test_now
from core.paths import Paths
from core.providers.registry import looked_for
from core.quota.forecast import Forecast
from core.reads import LiveReads
from core.reads import Marker as Marker  # the chart's markers: for the widgets
from core.reads import marker_for as marker_for
from core.settings import Settings
from core.setup.assistant import Applied, Choices, Findings, SetupContext, default_context
from core.setup.assistant import apply as apply_setup
from core.setup.assistant import find as find_setup
from core.setup.assistant import mark_done as mark_setup_done
from core.store import StoreError as StoreError  # what a read may fail with: for the widgets
from gui.goal_rules import can_pause
from gui.tasks import TaskKeeper

log = logging.getLogger("gui")

class HostCore(Protocol):
    """What the bridge is handed of a host's core (the engine has these): its bus, read model,
    one door, refresh, settings, paths and clock."""

    bus: EventBus
    reads: LiveReads
    settings: Settings
    paths: Paths
    clock: Clock

    async def perform(self, command: Command, origin: str = ...) -> ActionResult: ...

    async def refresh(self) -> None: ...


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
        action_finished(Command, ActionResult): a requested command came back.
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
    action_finished = Signal(object, object)
    host_state_changed = Signal(str)
    health_changed = Signal(object)
    host_changed = Signal(str)

    def __init__(self, core: HostCore, host_text: str = "", parent: QObject | None = None
                 ) -> None:
        super().__init__(parent)
        self._core = core
        self._reads = core.reads
        self._zone: tzinfo | None = None
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
        self._unsubscribe: Callable[[], None] | None = core.bus.subscribe(self._on_event)

    # -- lifecycle -----------------------------------------------------------------------------

    def sync(self) -> None:
        """Announce the engine's current goals and readings (it loads them without events)."""
        for reading in self._reads.raw_readings():
            self._readings[reading.window_id] = reading
        self.goals_reset.emit(self.goals())
        for reading in list(self._readings.values()):
            self.quota_observed.emit(reading)
        self.scheduler_woke.emit(self._reads.next_wake)
        for health in list(self._channels.values()):
            self.notify_channel_changed.emit(health)
        if self._reads.last_refresh is not None:
            self.providers_refreshed.emit(self._reads.last_refresh)
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
        await self._tasks.close()

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

    # -- snapshots (the read model's) -------------------------------------------------------------

    def now(self) -> datetime:
        return self._reads.now()

    @property
    def zone(self) -> tzinfo:
        """The local zone the views render times in: the host clock's, followed when it
        changes while the app runs (:class:`~core.clock.LiveZone`)."""
        if self._zone is None:
            self._zone = LiveZone(self._core.clock.local_zone)
        return self._zone

    @property
    def settings(self) -> Settings:
        return self._core.settings

    @property
    def max_attempts(self) -> int:
        return self._core.settings.max_auto_attempts

    @property
    def data_dir(self) -> str:
        return str(self._core.paths.data_dir)

    @property
    def config_file(self) -> Path:
        return self._core.paths.config_file

    @property
    def health(self) -> HostHealth:
        return self._reads.health()

    @property
    def next_wake(self) -> datetime | None:
        return self._reads.next_wake

    @property
    def last_refresh(self) -> datetime | None:
        return self._reads.last_refresh

    @property
    def host_id(self) -> str:
        """This host's id in the store ('' for a bare engine)."""
        return self._reads.host_id

    def goals(self) -> list[Goal]:
        """Every goal: this host's and, on a shared store, every other host's."""
        return self._reads.goals()

    def goal(self, goal_id: str) -> Goal | None:
        return self._reads.goal(goal_id)

    def readings(self) -> list[QuotaReading]:
        """The latest reading of every window as it stands now (resets passed, age marked)."""
        return [self._reads.effective(r) for _, r in sorted(self._readings.items())]

    def reading(self, window_id: str) -> QuotaReading | None:
        raw = self._readings.get(window_id)
        return self._reads.effective(raw) if raw else None

    def known_resets(self, window_id: str, start: datetime, end: datetime) -> list[datetime]:
        """The resets of ``window_id`` between ``start`` and ``end`` that the latest reading
        tells: its ``resets_at`` and, for a periodic window, every period after it — the same
        resets the gauge rolls its reading across (``effective``)."""
        raw = self._readings.get(window_id)
        if raw is None or raw.resets_at is None or raw.no_timed_reset:
            return []
        period = timedelta(seconds=raw.window_seconds) if raw.window_seconds else None
        found: list[datetime] = []
        at = raw.resets_at
        if period is not None and at < start:
            at += period * -(-(start - at) // period)  # the first reset at or after start
        while at <= end and len(found) < 1000:
            if at >= start:
                found.append(at)
            if period is None:
                break
            at += period
        return found

    def is_exhausted(self, window_id: str) -> bool:
        return self._reads.is_exhausted(window_id)

    def reserve_percent(self, window_id: str) -> float:
        """The share of the window kept for the user (the gauge's reserve line); 0: none."""
        return self._reads.reserve_percent(window_id)

    def forecast(self, window_id: str) -> Forecast | None:
        """The window's forecast at the recent pace (None: no reading)."""
        reading = self.reading(window_id)
        return self._reads.forecast(reading) if reading is not None else None

    def forecast_text(self, window_id: str) -> str:
        """``runs out ≈ 14:20`` / ``lasts until reset`` / nothing, at the recent pace."""
        found = self.forecast(window_id)
        return found.text(self.now()) if found is not None else ""

    def open_command(self, goal: Goal) -> list[str] | None:
        return self._reads.open_command(goal)

    def provider_names(self) -> list[str]:
        return self._reads.provider_names()

    def notify_channels(self) -> list[ChannelHealth]:
        """The remote notification channels' records, as last announced."""
        return [self._channels[name] for name in sorted(self._channels)]

    async def send_test_notification(self, settings: Settings) -> list[tuple[str, bool, str]]:
        """A test message through the channels ``settings`` configure (saved or not):
        (channel, delivered, why not) for each."""
        reports = await send_test_now(settings, self._core.clock)
        return [(r.channel, r.delivered, r.reason or "") for r in reports]

    # -- the set-up assistant (core/setup/assistant.py) ------------------------------------------

    def setup_context(self) -> SetupContext:
        """What the assistant works on: this host's paths, the environment, the real hooks
        installer and service manager (tests replace this method)."""
        return default_context(self._core.paths, os.environ, self._core.clock.now,
                               sys.argv[0], sys.executable)

    def setup_findings(self) -> Findings:
        """What the assistant found (reads a few files: quick)."""
        return find_setup(self._core.settings, self.setup_context())

    async def apply_setup(self, choices: Choices) -> list[Applied]:
        """Carry out every yes in ``choices`` (off the GUI thread: it writes files and may ask
        the service manager) and record that the assistant ran."""
        return await asyncio.to_thread(apply_setup, choices, self.setup_context())

    async def skip_setup(self) -> str | None:
        """Record that the assistant ran, changing nothing else; a problem or None."""
        return await asyncio.to_thread(mark_setup_done, self._core.paths.config_file)

    def looked_for(self) -> list[tuple[str, str]]:
        """(provider, what it looked for and where) for every known provider, on or off."""
        return looked_for(self._core.settings, os.environ)

    # -- stored data (read on the store's thread) -----------------------------------------------

    async def history_page(self, goal: str | None, limit: int, offset: int
                           ) -> tuple[list[HistoryRow], int]:
        return await self._reads.history_page(goal, limit, offset)

    @property
    def store_text(self) -> str:
        """The store, in words: ``the shared store db/goals`` / ``the database /…/goalkeeper.db``
        (stored English, shown through ``localized()``)."""
        return self._reads.store_text

    async def hosts(self) -> list[HostLine]:
        """The store's hosts as ``goalkeeper hosts`` lists them, judged now."""
        return await self._reads.hosts()

    async def series(self, window_id: str, since: datetime | None
                     ) -> list[tuple[datetime, float]]:
        reading = self.reading(window_id)
        account = reading.account if reading is not None else ""
        return await self._reads.series(window_id, since, account)

    async def markers(self, window_id: str, since: datetime) -> list[Marker]:
        """Pauses for quota and resumes of the goals that draw on ``window_id`` since ``since``."""
        return await self._reads.markers(window_id, since)

    # -- actions: commands through the one door -------------------------------------------------

    def request(self, command: Command, origin: str = "gui") -> asyncio.Task[ActionResult]:
        """Carry out ``command``; ``action_finished`` reports the result."""
        return self._tasks.spawn(self._run(command, origin), f"{command.wire}:{command.goal}")

    async def _run(self, command: Command, origin: str) -> ActionResult:
        result = await self.perform_rendered(command, origin)
        self.action_finished.emit(command, result)
        return result

    async def perform_rendered(self, command: Command, origin: str = "gui") -> ActionResult:
        """:meth:`perform`, with an engine failure turned into a ``failed`` result."""
        try:
            return await self.perform(command, origin)
        except Exception as exc:  # an engine failure is rendered, never taken for success
            log.exception("%s %s failed", command.wire, command.goal)
            return ActionResult(command.goal, Outcome.FAILED,
                                N_("internal error: {error}").format(error=exc))

    async def perform(self, command: Command, origin: str = "gui") -> ActionResult:
        return await self._core.perform(command, origin)

    def pause_all(self, origin: str = "tray") -> list[asyncio.Task[ActionResult]]:
        """Pause every goal that can be paused (each result is reported on its own)."""
        return [self.request(Pause(g.id), origin) for g in self.goals() if can_pause(g)]

    def refresh(self) -> asyncio.Task[None]:
        return self._tasks.spawn(self._core.refresh(), "refresh")
