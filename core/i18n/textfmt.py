"""Human renderings of instants and durations, shared by the CLI and the desktop app.

In the current language (:mod:`core.i18n`): the patterns and the names of days and months are
in the catalogue — ``tomorrow 03:30`` is ``明天 03:30``, ``Mon 30 Mar 03:30`` is
``3月30日（周一）03:30`` — and never come from the C library's locale, so they are the same
whatever locales the machine has installed.
"""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime, tzinfo

from core.i18n import N_
from core.i18n import _ as _translated

WEEKDAYS = (N_("Mon"), N_("Tue"), N_("Wed"), N_("Thu"), N_("Fri"), N_("Sat"), N_("Sun"))
MONTHS = (N_("Jan"), N_("Feb"), N_("Mar"), N_("Apr"), N_("May"), N_("Jun"), N_("Jul"),
          N_("Aug"), N_("Sep"), N_("Oct"), N_("Nov"), N_("Dec"))


def _(message: str, english: bool = False) -> str:
    return message if english else _translated(message)


def duration(seconds: float, *, english: bool = False) -> str:
    """``1:47:22``, ``2d 03:04:05``, ``0:42``. ``english``: for text that is stored (a reason,
    a note): data stays English whatever the language."""
    total = max(0, round(seconds))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        # translators: a duration of days and a clock, "2d 03:04:05"
        return _("{days}d {clock}", english).format(days=days,
                                           clock=f"{hours:02d}:{minutes:02d}:{secs:02d}")
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def countdown(target: datetime, now: datetime) -> str:
    """``in 1:47:22`` until ``target``; ``now`` once it has passed (overdue by …).

    Both are converted to UTC first: Python subtracts two datetimes of the *same* zone as wall
    times, which is off by an hour across a DST change.
    """
    seconds = (target.astimezone(UTC) - now.astimezone(UTC)).total_seconds()
    if seconds <= 0:
        if seconds < -1:
            return _("now (due {duration} ago)").format(duration=duration(-seconds))
        return _("now")
    return _("in {duration}").format(duration=duration(seconds))


def local_time(instant: datetime, zone: tzinfo | None = None) -> str:
    """An instant in the local zone (or ``zone``), ``YYYY-MM-DD HH:MM:SS``."""
    return instant.astimezone(zone).strftime("%Y-%m-%d %H:%M:%S")


def weekday(local: datetime, english: bool = False) -> str:
    return _(WEEKDAYS[local.weekday()], english)


def weekday_day(local: datetime) -> str:
    """``Mon 30`` (the usage chart's day ticks)."""
    return _("{weekday} {day}").format(weekday=weekday(local), day=f"{local.day:02d}")


def short_time(instant: datetime, now: datetime, zone: tzinfo | None = None, *,
               english: bool = False) -> str:
    """A deadline as people read it, in the local zone (or ``zone``).

    ``18:40`` on the same local day, ``tomorrow 03:30`` / ``yesterday 23:10``, ``Mon 30 Mar 03:30``
    within the coming week, ``2027-01-05 03:30`` otherwise. Days are compared as local calendar
    dates, so a deadline across a DST change or midnight is named by the day it falls on.
    """
    local = instant.astimezone(zone)
    days = (local.date() - now.astimezone(zone).date()).days
    clock = local.strftime("%H:%M")
    if days == 0:
        return clock
    if days == 1:
        return _("tomorrow {clock}", english).format(clock=clock)
    if days == -1:
        return _("yesterday {clock}", english).format(clock=clock)
    if 1 < days < 7:
        # translators: "Mon 30 Mar 03:30"
        return _("{weekday} {day} {month} {clock}", english).format(
            weekday=weekday(local, english), day=f"{local.day:02d}",
            month=_(MONTHS[local.month - 1], english), clock=clock)
    return local.strftime("%Y-%m-%d %H:%M")


def long_time(instant: datetime, zone: tzinfo | None = None) -> str:
    """``Tue 2026-07-07 18:40:00 CEST``: local date, time and the zone's abbreviation."""
    local = instant.astimezone(zone)
    # translators: "Tue 2026-07-07 18:40:00 CEST"
    return _("{weekday} {date} {time} {zone}").format(
        weekday=weekday(local), date=local.strftime("%Y-%m-%d"),
        time=local.strftime("%H:%M:%S"), zone=local.strftime("%Z"))


def age(seconds: float) -> str:
    """How old something is, coarsely: ``12 s``, ``4 min``, ``2 h 05 min``, ``3 d 4 h``."""
    total = max(0, int(seconds))
    if total < 60:
        return _("{n} s").format(n=total)
    if total < 3600:
        return _("{n} min").format(n=total // 60)
    if total < 86400:
        return _("{hours} h {minutes} min").format(hours=total // 3600,
                                                   minutes=f"{total % 3600 // 60:02d}")
    return _("{days} d {hours} h").format(days=total // 86400, hours=total % 86400 // 3600)


def width(text: str) -> int:
    """Terminal columns ``text`` takes: wide (CJK) characters count two."""
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def pad(text: str, columns: int) -> str:
    """``text`` padded with spaces to ``columns`` terminal columns (``f"{text:<20}"`` counts a
    Chinese character as one column and misaligns the table)."""
    return text + " " * max(0, columns - width(text))


def rpad(text: str, columns: int) -> str:
    """``text`` right-aligned in ``columns`` terminal columns."""
    return " " * max(0, columns - width(text)) + text
