"""When a scheduled pipeline fires: ``"HH:MM"`` daily, or a five-field cron expression, in a zone.

Pure functions: the provider asks :func:`next_fire` for the next instant after the last one it
fired (or after the goal was added) and hands that instant to the core scheduler through
:meth:`core.providers.base.Provider.next_wake` — it never keeps a timer loop of its own.

Missed instants (the machine was off or asleep at 09:00) coalesce into one run when the host
notices, never one per missed instant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

from cronsim import CronSim, CronSimError

from core.clock import local_zone
from core.i18n import N_

_DAILY = re.compile(r"^(\d{1,2}):(\d{2})$")


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule: ``daily`` (hour, minute) or a ``cron`` expression."""

    text: str
    daily: tuple[int, int] | None = None
    cron: str | None = None

    def describe(self) -> str:
        if self.daily is not None:
            return f"daily at {self.daily[0]:02d}:{self.daily[1]:02d}"
        return f"cron {self.cron}"


def parse_schedule(text: str) -> Schedule:
    """Parse a schedule; raise ValueError saying what is wrong."""
    value = text.strip()
    if match := _DAILY.match(value):
        hour, minute = int(match.group(1)), int(match.group(2))
        if hour > 23 or minute > 59:
            raise ValueError(N_("{text!r} is not a time of day (HH:MM, 00:00–23:59)").format(
                text=text))
        return Schedule(value, daily=(hour, minute))
    if len(value.split()) != 5:
        raise ValueError(N_("{text!r} is neither \"HH:MM\" nor a five-field cron expression "
                            "(minute hour day-of-month month day-of-week)").format(text=text))
    try:
        CronSim(value, datetime(2026, 1, 1, tzinfo=UTC))
    except CronSimError as exc:
        raise ValueError(N_("bad cron expression {text!r}: {error}").format(
            text=text, error=exc)) from None
    return Schedule(value, cron=value)


def next_fire(schedule: Schedule, after: datetime, zone: tzinfo | None) -> datetime:
    """The first instant strictly after ``after`` (aware) at which ``schedule`` fires, in UTC.

    DST, for every kind (the rules of Debian's cron, which :mod:`cronsim` follows): a time of
    day that occurs twice (the fall-back hour) fires once, at its first occurrence; one that
    does not occur (the spring-forward gap) fires once, at the first valid minute after the
    jump. Expressions with ``*`` in the minute or hour field follow real time instead: every
    instant they name fires once. Instants are compared as instants (UTC), never as wall times:
    in the repeated hour a later wall time can be an earlier instant.
    """
    zone = zone or local_zone()
    after = after.astimezone(UTC)
    local = after.astimezone(zone)
    if schedule.daily is not None:
        return _next_daily(schedule.daily, local, zone, after)
    assert schedule.cron is not None
    start = local.replace(second=0, microsecond=0)
    for candidate in CronSim(schedule.cron, start):
        if candidate.astimezone(UTC) > after:
            return candidate.astimezone(UTC)
    raise ValueError(f"cron expression {schedule.cron!r} never fires")  # pragma: no cover


def _next_daily(hm: tuple[int, int], local: datetime, zone: tzinfo, after: datetime
                ) -> datetime:
    day = local.date()
    for offset in range(-1, 3):
        naive = datetime.combine(day + timedelta(days=offset),
                                 datetime.min.time()).replace(hour=hm[0], minute=hm[1])
        candidate = _localize(naive, zone).astimezone(UTC)
        if candidate > after:
            return candidate
    raise AssertionError("a daily time fires within two days")  # pragma: no cover


def _localize(naive: datetime, zone: tzinfo) -> datetime:
    """Attach ``zone``: the first occurrence of a repeated wall time (``fold=0``); for a wall
    time a DST jump skips, the first valid minute after it."""
    aware = naive.replace(tzinfo=zone, fold=0)
    if not isinstance(zone, ZoneInfo):
        return aware
    while _imaginary(aware):
        aware = (aware.replace(tzinfo=None) + timedelta(minutes=1)).replace(tzinfo=zone, fold=0)
    return aware


def _imaginary(aware: datetime) -> bool:
    """A wall time that does not exist (it does not survive a round trip through UTC)."""
    return aware.astimezone(UTC).astimezone(aware.tzinfo).replace(tzinfo=None) != (
        aware.replace(tzinfo=None))
