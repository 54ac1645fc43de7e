"""Human renderings of instants and durations, shared by the CLI and the desktop app."""

from __future__ import annotations

from datetime import datetime, tzinfo


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
    """``in 1:47:22`` until ``target``; ``now`` once it has passed (overdue by …)."""
    seconds = (target - now).total_seconds()
    if seconds <= 0:
        return f"now (due {duration(-seconds)} ago)" if seconds < -1 else "now"
    return f"in {duration(seconds)}"


def local_time(instant: datetime, zone: tzinfo | None = None) -> str:
    """An instant in the local zone (or ``zone``), ``YYYY-MM-DD HH:MM:SS``."""
    return instant.astimezone(zone).strftime("%Y-%m-%d %H:%M:%S")
