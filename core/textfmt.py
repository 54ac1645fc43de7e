"""Human renderings of instants and durations, shared by the CLI and the desktop app."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo


def duration(seconds: float) -> str:
    """``1:47:22``, ``2d 03:04:05``, ``0:42``."""
    total = max(0, round(seconds))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}:{minutes:02d}:{secs:02d}"
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
        return f"now (due {duration(-seconds)} ago)" if seconds < -1 else "now"
    return f"in {duration(seconds)}"


def local_time(instant: datetime, zone: tzinfo | None = None) -> str:
    """An instant in the local zone (or ``zone``), ``YYYY-MM-DD HH:MM:SS``."""
    return instant.astimezone(zone).strftime("%Y-%m-%d %H:%M:%S")


def short_time(instant: datetime, now: datetime, zone: tzinfo | None = None) -> str:
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
        return f"tomorrow {clock}"
    if days == -1:
        return f"yesterday {clock}"
    if 1 < days < 7:
        return local.strftime("%a %d %b %H:%M")
    return local.strftime("%Y-%m-%d %H:%M")


def long_time(instant: datetime, zone: tzinfo | None = None) -> str:
    """``Tue 2026-07-07 18:40:00 CEST``: local date, time and the zone's abbreviation."""
    return instant.astimezone(zone).strftime("%a %Y-%m-%d %H:%M:%S %Z")


def age(seconds: float) -> str:
    """How old something is, coarsely: ``12 s``, ``4 min``, ``2 h 05 min``, ``3 d 4 h``."""
    total = max(0, int(seconds))
    if total < 60:
        return f"{total} s"
    if total < 3600:
        return f"{total // 60} min"
    if total < 86400:
        return f"{total // 3600} h {total % 3600 // 60:02d} min"
    return f"{total // 86400} d {total % 86400 // 3600} h"
