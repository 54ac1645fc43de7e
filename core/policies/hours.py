"""Allowed hours: weekly time ranges, in a named zone, in which automatic resumes may start.

The syntax (``auto_resume_hours``, globally and per goal), case-insensitive::

    Mon-Fri 19:00-08:00, Sat-Sun 00:00-24:00   # weeknights, and the whole weekend
    22:00-06:00                                 # every night (no days: every day)
    Sat-Sun                                     # whole days (no times: 00:00-24:00)
    Mon/Wed/Fri 12:00-14:00                     # several days
    except Mon-Fri 09:00-18:00                  # quiet hours: any time but these

Items are separated by commas; an item is ``[DAYS] [HH:MM-HH:MM]``. Days are ``Mon`` … ``Sun``
(or full names), a single day, a range (``Fri-Mon`` wraps over the weekend) or several of those
separated by ``/`` or spaces. A range *belongs to the day it starts on*: when its end is not after
its start it runs past midnight into the next day (``Fri 19:00-08:00`` ends Saturday 08:00).
``24:00`` is the end of a day. A leading ``except`` turns the ranges into quiet hours.

What "allowed" means across DST: an instant is allowed when the zone's wall clock shows a time
inside a range. Wall times the spring-forward gap skips never show (a range starting in the gap
begins at the gap's end); the hour that falls back shows twice and counts twice. Every instant
handed in or out is an aware datetime; results are UTC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from core.i18n import N_

DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_FULL_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MINUTES_PER_DAY = 1440
_TIME_RANGE = re.compile(r"^(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})$")
_HORIZON_DAYS = 9  # a week, plus a day either side for ranges crossing midnight


class HoursError(ValueError):
    """The text is not a valid allowed-hours specification; the message says what is wrong."""


@dataclass(frozen=True)
class HourRange:
    """One range: starts on each of ``days`` (0 = Monday) at ``start`` minutes past midnight
    and ends at ``end`` — on the same day when ``end > start``, else on the next day."""

    days: frozenset[int]
    start: int
    end: int

    def contains(self, weekday: int, minute: int) -> bool:
        if self.start < self.end:
            return weekday in self.days and self.start <= minute < self.end
        return (weekday in self.days and minute >= self.start) or (
            (weekday - 1) % 7 in self.days and minute < self.end)


@dataclass(frozen=True)
class WeeklyHours:
    """A parsed specification, independent of any zone."""

    ranges: tuple[HourRange, ...]
    inverted: bool
    text: str

    def allows_wall(self, weekday: int, minute: int) -> bool:
        inside = any(r.contains(weekday, minute) for r in self.ranges)
        return inside != self.inverted

    def boundaries(self) -> frozenset[int]:
        """Minutes of the day at which being allowed can change."""
        return frozenset(m for r in self.ranges for m in (r.start, r.end))

    def in_zone(self, zone: tzinfo) -> AllowedHours:
        return AllowedHours(self, zone)


def parse_hours(text: str) -> WeeklyHours | None:
    """Parse ``text``; None when it is empty (always allowed). Raises :class:`HoursError`."""
    spec = " ".join(text.split())
    if not spec:
        return None
    inverted = False
    lowered = spec.lower()
    if lowered == "except" or lowered.startswith("except "):
        inverted = True
        spec = spec[len("except"):].strip()
        if not spec:
            raise HoursError(N_("'except' needs the ranges to leave out, e.g. "
                                "'except Mon-Fri 09:00-18:00'"))
    ranges = tuple(_parse_item(item.strip()) for item in spec.split(","))
    weekly = WeeklyHours(ranges, inverted, " ".join(text.split()))
    if not any(weekly.allows_wall(day, minute) for day in range(7)
               for minute in weekly.boundaries() | {0} if minute < MINUTES_PER_DAY):
        raise HoursError(N_("{hours!r} allows no time at all").format(hours=weekly.text))
    return weekly


def _parse_item(item: str) -> HourRange:
    if not item:
        raise HoursError(N_("an empty item (two commas in a row, or a comma at the end)"))
    tokens = item.replace("/", " ").split()
    start, end = 0, MINUTES_PER_DAY
    if _TIME_RANGE.match(tokens[-1]):
        start, end = _parse_times(tokens.pop())
    elif any(char.isdigit() for char in tokens[-1]):
        raise HoursError(N_("{token!r} is not a time range: write HH:MM-HH:MM, e.g. "
                            "19:00-08:00").format(token=tokens[-1]))
    days = frozenset(range(7))
    if tokens:
        days = frozenset(day for token in tokens for day in _parse_days(token))
    return HourRange(days, start, end)


def _parse_times(token: str) -> tuple[int, int]:
    match = _TIME_RANGE.match(token)
    assert match is not None
    h1, m1, h2, m2 = (int(part) for part in match.groups())
    start, end = _minute(h1, m1, token, allow_end=False), _minute(h2, m2, token, allow_end=True)
    if start == end:
        raise HoursError(N_("{token!r} starts and ends at the same time: for a whole day "
                            "write 00:00-24:00").format(token=token))
    return start, end


def _minute(hour: int, minute: int, token: str, allow_end: bool) -> int:
    if minute > 59 or hour > 24 or (hour == 24 and (minute or not allow_end)):
        template = (N_("{token!r}: {time} is not an end time (00:00-23:59, and 24:00 only as "
                       "an end)") if allow_end
                    else N_("{token!r}: {time} is not a start time (00:00-23:59, and 24:00 "
                            "only as an end)"))
        raise HoursError(template.format(token=token, time=f"{hour:02d}:{minute:02d}"))
    return hour * 60 + minute


def _parse_days(token: str) -> list[int]:
    if "-" in token:
        first, _, last = token.partition("-")
        a, b = _day(first, token), _day(last, token)
        return [(a + i) % 7 for i in range((b - a) % 7 + 1)]
    return [_day(token, token)]


def _day(name: str, token: str) -> int:
    key = name.lower()
    if key in DAY_NAMES:
        return DAY_NAMES.index(key)
    if key in _FULL_NAMES:
        return _FULL_NAMES.index(key)
    raise HoursError(N_("{token!r}: unknown day {name!r} (use Mon, Tue, Wed, Thu, Fri, Sat, "
                        "Sun)").format(token=token, name=name))


@dataclass(frozen=True)
class AllowedHours:
    """Weekly hours placed in a zone: answers "allowed now?" and "when next?"."""

    weekly: WeeklyHours
    zone: tzinfo

    def allows(self, instant: datetime) -> bool:
        local = instant.astimezone(self.zone)
        return self.weekly.allows_wall(local.weekday(), local.hour * 60 + local.minute)

    def next_allowed(self, instant: datetime) -> datetime | None:
        """The first allowed instant at or after ``instant`` (UTC); None if none within a week."""
        start = instant.astimezone(UTC)
        if self.allows(start):
            return start
        for candidate in sorted(self._candidates(start)):
            if candidate >= start and self.allows(candidate):
                return candidate
        return None

    def describe(self) -> str:
        """``Mon-Fri 19:00-08:00 (Europe/Berlin)``."""
        return f"{self.weekly.text} ({zone_label(self.zone)})"

    def _candidates(self, start: datetime) -> set[datetime]:
        """Every instant where being allowed can start: range boundaries (both readings of a
        repeated wall time) and the zone's offset changes."""
        found = set(_transitions(self.zone, start, start + timedelta(days=_HORIZON_DAYS)))
        first = start.astimezone(self.zone).date() - timedelta(days=1)
        for offset in range(_HORIZON_DAYS + 1):
            day = first + timedelta(days=offset)
            for minute in self.weekly.boundaries():
                for fold in (0, 1):
                    found.add(_wall_instant(day, minute, self.zone, fold))
        return found


def _wall_instant(day: date, minute: int, zone: tzinfo, fold: int) -> datetime:
    wall = datetime.combine(day, time(0)) + timedelta(minutes=minute)
    return wall.replace(tzinfo=zone, fold=fold).astimezone(UTC)


def _transitions(zone: tzinfo, start: datetime, end: datetime) -> list[datetime]:
    """Instants in [start, end] at which ``zone``'s UTC offset changes (to the second)."""
    found = []
    step = timedelta(hours=1)
    previous, offset = start, start.astimezone(zone).utcoffset()
    current = start + step
    while current <= end:
        now_offset = current.astimezone(zone).utcoffset()
        if now_offset != offset:
            found.append(_bisect(zone, previous, current, offset))
            offset = now_offset
        previous, current = current, current + step
    return found


def _bisect(zone: tzinfo, low: datetime, high: datetime, offset: timedelta | None) -> datetime:
    """The first instant in (low, high] whose offset differs from ``offset``."""
    while high - low > timedelta(seconds=1):
        middle = low + (high - low) / 2
        if middle.astimezone(zone).utcoffset() == offset:
            low = middle
        else:
            high = middle
    return high.replace(microsecond=0) if high.microsecond else high


def zone_label(zone: tzinfo) -> str:
    """The IANA name of a zone when it has one, else what it calls itself."""
    key = getattr(zone, "key", None)
    return str(key) if key else str(zone)
