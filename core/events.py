"""Events the core announces, frozen and named in the past tense, and the bus that carries them.

The bus is Qt-free and synchronous: ``publish`` calls every subscriber on the caller's thread,
which in a host is always the event-loop thread (the engine publishes after awaiting the store).
The GUI's bridge is one subscriber that re-emits Qt signals; the daemon's printer is another.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from core.health import HealthChanged
from core.notices import ChannelHealth, Notification

if TYPE_CHECKING:
    from core.models import Goal, HistoryRow, QuotaReading

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QuotaObserved:
    """A provider reported a reading (already stored)."""

    reading: QuotaReading


@dataclass(frozen=True)
class QuotaExhausted:
    """A window crossed into exhausted (falling edge). Sustained exhaustion emits nothing more."""

    window_id: str
    reading: QuotaReading


@dataclass(frozen=True)
class QuotaRecovered:
    """A window has been recovered for the hysteresis' stable time (rising edge), once."""

    window_id: str
    reading: QuotaReading
    recovered_since: datetime


@dataclass(frozen=True)
class GoalChanged:
    """A goal's stored row changed (state, reason, schedule, toggle, metadata)."""

    goal: Goal
    previous: Goal | None


@dataclass(frozen=True)
class GoalRemoved:
    goal_id: str


@dataclass(frozen=True)
class HistoryRecorded:
    """A history row was appended."""

    row: HistoryRow


@dataclass(frozen=True)
class SchedulerWoke:
    """The scheduler woke; ``next_wake`` is when it will wake next (None: not until poked)."""

    at: datetime
    next_wake: datetime | None
    reason: str


@dataclass(frozen=True)
class ProvidersRefreshed:
    at: datetime


@dataclass(frozen=True)
class Notice:
    """Something the user should be told once (a store moved aside, a provider disabled...)."""

    level: str
    text: str


@dataclass(frozen=True)
class NotificationIssued:
    """A history row is a notification whose kind is switched on (:mod:`core.notify`): the
    desktop shows it, the remote channels whose minimum kind admits it deliver it."""

    notification: Notification


@dataclass(frozen=True)
class NotifyChannelChanged:
    """A remote notification channel's record changed (delivered, retrying, failing, off)."""

    health: ChannelHealth


@dataclass(frozen=True)
class HostChanged:
    """A host of the shared store came online, stopped or registered (heard through the store;
    a host that died just stops beating — views judge its lease against the clock)."""

    host_id: str


Event = (
    QuotaObserved
    | QuotaExhausted
    | QuotaRecovered
    | GoalChanged
    | GoalRemoved
    | HistoryRecorded
    | SchedulerWoke
    | ProvidersRefreshed
    | Notice
    | NotificationIssued
    | NotifyChannelChanged
    | HealthChanged
    | HostChanged
)
Subscriber = Callable[[Event], None]


@dataclass
class EventBus:
    """Fan-out of core events to subscribers; a failing subscriber is logged, never propagated."""

    _subscribers: list[Subscriber] = field(default_factory=list)

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber)

    def publish(self, event: Event) -> None:
        for subscriber in list(self._subscribers):
            try:
                subscriber(event)
            except Exception:
                log.exception("event subscriber %r failed on %s", subscriber, type(event).__name__)
