"""The read model: one read-only query interface for every view of a host.

The desktop app's bridge, the tray, the control socket's ``ping`` and ``goalkeeper status`` ask
the same questions — the goals, one goal, the latest readings, whether a window is exhausted,
the reserve kept on it, its forecast, the scheduler's next wake, pages of history, the usage
series and its markers, the store's hosts — and get them here, never from engine attributes.

Two implementations answer them: :class:`LiveReads` in a running host (the goal book, the quota
machine, the scheduler; stored data read on the store's thread), and :class:`StoredReads` over a
store opened read-only by a command with no host (``status``). The questions about stored data
are the same functions for both.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from core.clock import Clock
from core.goals.rules import ResumeRules
from core.identity import account_of
from core.models import HistoryEvent
from core.quota.forecast import Forecast, ForecastBook
from core.quota.machine import QuotaManager, effective
from core.store import Store, StoreThread

if TYPE_CHECKING:  # a read of the store (``status``) loads no provider (issue 24)
    from core.health import HostHealth
    from core.hosts.listing import HostLine
    from core.models import Goal, HistoryRow, QuotaReading
    from core.providers.base import Provider
    from core.settings import Settings

T = TypeVar("T")
#: history scanned at most this far back for chart markers
MARKER_SCAN_LIMIT = 20_000


@dataclass(frozen=True)
class Marker:
    """A pause or resume on the chart's time axis."""

    at: datetime
    kind: str  # "paused" | "resumed"
    goal: str


class ReadModel(Protocol):
    """What every view of a host may ask (nothing here changes anything)."""

    def now(self) -> datetime: ...

    def goals(self) -> list[Goal]:
        """Every goal: this host's and, on a shared store, every other host's."""
        ...

    def goal(self, goal_id: str) -> Goal | None: ...

    def readings(self) -> list[QuotaReading]:
        """The latest reading of every window as it stands now (resets passed, age marked)."""
        ...

    def reserve_percent(self, window_id: str) -> float:
        """The share of the window kept for the user; 0: none."""
        ...

    def forecast(self, reading: QuotaReading) -> Forecast | None:
        """The window's forecast at the recent pace (None: not known here)."""
        ...


# -- questions about stored data (both implementations) --------------------------------------------

def history_page(store: Store, goal: str | None, limit: int, offset: int
                 ) -> tuple[list[HistoryRow], int]:
    return store.history(goal, limit, offset), store.count_history(goal)


def hosts_of(store: Store, now: datetime, lease_seconds: float, me: str) -> list[HostLine]:
    """The store's hosts as ``goalkeeper hosts`` lists them, judged at ``now``."""
    from core.hosts.listing import host_lines  # the hosts' lines: not loaded by ``status``

    return host_lines(store.list_hosts(), (g.host for g in store.list_goals()), now,
                      lease_seconds, me)


def scan_markers(store: Store, goals: set[str], since: datetime) -> list[Marker]:
    """Pauses for quota and resumes of ``goals`` since ``since``, newest first."""
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


def own_readings(store: Store, settings: Settings, host_id: str, shared: bool
                 ) -> list[QuotaReading]:
    """The stored readings of this machine's accounts (on a shared store, as its host
    registered them — Codex may have said which account it is — else as the settings name
    them)."""
    readings = store.latest_readings()
    if not shared:
        return readings
    record = store.get_host(host_id)
    known = record.accounts if record is not None else None
    return [r for r in readings
            if r.account == account_of(r.provider, settings, host_id, known)]


# -- a running host -------------------------------------------------------------------------------

@dataclass(frozen=True)
class LiveParts:
    """What the live read model is handed: the clock and settings, this host's goals and the
    others', the quota machine and the forecasts, the scheduler's next wake, when providers
    were last read, the host's health and listener, the providers, and the store's thread."""

    clock: Clock
    settings: Settings
    host_id: str | None
    own: Mapping[str, Goal]
    others: Mapping[str, Goal]
    quotas: QuotaManager
    rules: ResumeRules
    forecasts: ForecastBook
    next_wake: Callable[[], datetime | None]
    last_refresh: Callable[[], datetime | None]
    health: Callable[[], HostHealth]
    listening: Callable[[], bool]
    providers: Mapping[str, Provider]
    store: StoreThread
    damaged: Callable[[BaseException], None]  # a read found the file damaged: safe mode checks


class LiveReads:
    """The read model of a running host; owns nothing."""

    def __init__(self, parts: LiveParts) -> None:
        self._p = parts

    def now(self) -> datetime:
        return self._p.clock.now()

    # -- goals --------------------------------------------------------------------------------

    def goals(self) -> list[Goal]:
        return [*self._p.own.values(), *self._p.others.values()]

    def goal(self, goal_id: str) -> Goal | None:
        return self._p.own.get(goal_id) or self._p.others.get(goal_id)

    def own_goals(self) -> Iterable[Goal]:
        return self._p.own.values()

    # -- quotas -------------------------------------------------------------------------------

    def raw_readings(self) -> list[QuotaReading]:
        """The last reading of every window as it was read (no reset or age applied)."""
        now = self.now()
        quotas = self._p.quotas
        return [quotas.tracker(r.window_id).reading or r for r in quotas.readings(now)]

    def readings(self) -> list[QuotaReading]:
        return [self.effective(r) for r in sorted(self.raw_readings(), key=_window)]

    def effective(self, raw: QuotaReading) -> QuotaReading:
        """``raw`` as it stands now (a reset passed, its age marked)."""
        return effective(raw, self.now(), self._p.settings.hysteresis())

    def is_exhausted(self, window_id: str) -> bool:
        return not self._p.quotas.is_recovered(window_id)

    def reserve_percent(self, window_id: str) -> float:
        return self._p.rules.reserve_for(window_id)

    def forecast(self, reading: QuotaReading) -> Forecast | None:
        return self._p.forecasts.forecast(reading, self.now())

    # -- the host -----------------------------------------------------------------------------

    @property
    def next_wake(self) -> datetime | None:
        return self._p.next_wake()

    @property
    def last_refresh(self) -> datetime | None:
        return self._p.last_refresh()

    @property
    def host_id(self) -> str:
        """This host's id in the store ('' for a bare engine)."""
        return self._p.host_id or ""

    def health(self) -> HostHealth:
        return self._p.health()

    def ping(self) -> dict[str, Any]:
        """The host's answer to a ``ping`` on the control socket."""
        return {"health": self.health().to_json(), "host_id": self._p.host_id,
                "listening": self._p.listening()}

    def provider_names(self) -> list[str]:
        return sorted(self._p.providers)

    def open_command(self, goal: Goal) -> list[str] | None:
        provider = self._p.providers.get(goal.provider)
        return provider.open_command(goal) if provider is not None else None

    @property
    def store_text(self) -> str:
        """The store, in words (stored English, shown through ``localized()``)."""
        return self._p.store.target.describe()

    # -- stored data (read on the store's thread) ------------------------------------------------

    async def _read(self, fn: Callable[[Store], T]) -> T:
        """A read of stored data; one that finds the file damaged has safe mode check it."""
        try:
            return await self._p.store.run(fn)
        except sqlite3.DatabaseError as exc:
            self._p.damaged(exc)
            raise

    async def history(self, goal: str | None = None, limit: int = 100, offset: int = 0
                      ) -> list[HistoryRow]:
        return await self._read(lambda s: s.history(goal, limit, offset))

    async def history_page(self, goal: str | None, limit: int, offset: int
                           ) -> tuple[list[HistoryRow], int]:
        return await self._read(lambda s: history_page(s, goal, limit, offset))

    async def series(self, window_id: str, since: datetime | None, account: str = ""
                     ) -> list[tuple[datetime, float]]:
        return await self._read(lambda s: s.series(window_id, since, account))

    async def markers(self, window_id: str, since: datetime) -> list[Marker]:
        """Pauses for quota and resumes of this host's goals that draw on ``window_id``."""
        goals = {g.id for g in self._p.own.values() if window_id in g.windows}
        return await self._read(lambda s: scan_markers(s, goals, since))

    async def hosts(self) -> list[HostLine]:
        lease, me, now = self._p.settings.host_stale_seconds, self.host_id, self.now()
        return await self._read(lambda s: hosts_of(s, now, lease, me))


# -- a store with no host --------------------------------------------------------------------------

class StoredReads:
    """The read model over a store a command opened read-only (no host's memory: no forecast,
    no next wake)."""

    def __init__(self, store: Store, settings: Settings, host_id: str, shared: bool,
                 now: datetime) -> None:
        self._store = store
        self._settings = settings
        self._host_id = host_id
        self._shared = shared
        self._now = now
        self._rules = ResumeRules.from_settings(settings)

    def now(self) -> datetime:
        return self._now

    def goals(self) -> list[Goal]:
        return self._store.list_goals()

    def goal(self, goal_id: str) -> Goal | None:
        return self._store.get_goal(goal_id)

    def readings(self) -> list[QuotaReading]:
        policy = self._settings.hysteresis()
        return [effective(r, self._now, policy)
                for r in own_readings(self._store, self._settings, self._host_id, self._shared)]

    def reserve_percent(self, window_id: str) -> float:
        return self._rules.reserve_for(window_id)

    def forecast(self, reading: QuotaReading) -> Forecast | None:
        return None

    def hosts(self) -> list[HostLine]:
        return hosts_of(self._store, self._now, self._settings.host_stale_seconds,
                        self._host_id)


def _window(reading: QuotaReading) -> str:
    return reading.window_id
