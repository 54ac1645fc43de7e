"""Claude quota windows as :class:`~core.models.QuotaReading` values, from every source.

* statusline stdin ``rate_limits.five_hour`` / ``seven_day`` → ``claude:5h``, ``claude:7d``,
  exact;
* every headless ``rate_limit_event``: its ``unifiedWindows`` (five_hour, seven_day,
  seven_day_overage_included: ``utilization`` 0–1 and ``resetsAt``) as exact readings, and a
  rejected or warned ``rateLimitType`` (``claude:7d-opus``, ``claude:7d-sonnet``,
  ``claude:7d-fable``, ``claude:overage`` too) — an event with no type names no window (a
  server-side transient 429 looks like that) and never erases a reading;
* a limit stop in a transcript → the window its ``rateLimitType`` (else its text) names, exact
  with a ``resetsAt``, inferred from text;
* ``~/.claude.json`` ``cachedUsageUtilization`` → the windows it lists, always ``stale``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from core.i18n import N_
from core.i18n.textfmt import duration
from core.models import Exactness, QuotaKind, QuotaReading
from core.providers.claude.resets import ParsedLimit
from core.providers.claude.wording import (
    WINDOW_5H,
    WINDOW_7D,
    WINDOW_7D_FABLE,
    WINDOW_7D_OPUS,
    WINDOW_7D_SONNET,
    WINDOW_BY_TYPE,
    WINDOW_OVERAGE,
    WINDOW_SECONDS,
)
from core.providers.numbers import BadNumber, warn_once
from core.providers.numbers import percent as checked_percent

PROVIDER = "claude"

LABELS = {
    WINDOW_5H: N_("Claude · 5 h"),
    WINDOW_7D: N_("Claude · 7 days"),
    WINDOW_7D_OPUS: N_("Claude · 7 days (Opus)"),
    WINDOW_7D_SONNET: N_("Claude · 7 days (Sonnet)"),
    WINDOW_7D_FABLE: N_("Claude · 7 days (Fable)"),
    WINDOW_OVERAGE: N_("Claude · extra usage"),
}
#: the names Claude's own payloads use for each window
BY_NAME = WINDOW_BY_TYPE
_STATUSES = ("allowed", "allowed_warning", "rejected")


def reading(window: str, observed_at: datetime, *, used: float | None,
            resets_at: datetime | None, exactness: Exactness,
            limit_reached: bool | None = None, note: str | None = None) -> QuotaReading:
    return QuotaReading(
        window_id=window, provider=PROVIDER, label=LABELS.get(window, window),
        kind=QuotaKind.PERIODIC, used_percent=used, resets_at=resets_at,
        window_seconds=WINDOW_SECONDS.get(window), limit_reached=limit_reached, exactness=exactness,
        observed_at=observed_at, note=note,
    )


def epoch(value: Any) -> datetime | None:
    """An epoch (seconds, or milliseconds when it is that large) or ISO string as an instant."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return epoch(float(value)) if value.replace(".", "", 1).isdigit() else None
        return parsed.astimezone(UTC) if parsed.tzinfo else None
    return None


def percent(value: Any, source: str = "a Claude payload") -> float | None:
    """A used percentage, or None — also for a negative, NaN or infinite one: it would read as
    "0 % used" (fully available) when clamped, so it is refused (logged once)."""
    if value is None:
        return None
    try:
        return checked_percent(value)
    except BadNumber as exc:
        warn_once(source, str(exc))
        return None


def statusline_readings(payload: dict[str, Any], now: datetime) -> list[QuotaReading]:
    """``rate_limits`` of a statusline payload (exact: the server sent them just now)."""
    limits = payload.get("rate_limits")
    if not isinstance(limits, dict):
        return []
    result = []
    for name, window in BY_NAME.items():
        entry = limits.get(name)
        if not isinstance(entry, dict):
            continue
        used = percent(entry.get("used_percentage", entry.get("used_percent")))
        if used is None:
            continue
        result.append(reading(window, now, used=used, resets_at=epoch(entry.get("resets_at")),
                              exactness=Exactness.EXACT, limit_reached=used >= 100.0))
    return result


def rate_limit_event_readings(info: dict[str, Any], now: datetime) -> list[QuotaReading]:
    """Every exact reading a headless ``rate_limit_event``'s ``rate_limit_info`` carries."""
    readings = {r.window_id: r for r in _unified_readings(info.get("unifiedWindows"), now)}
    typed = _typed_reading(info, now)
    if typed is not None:
        known = readings.get(typed.window_id)
        if known is not None and typed.limit_reached is not True:
            typed = known.model_copy(update={"note": typed.note})  # the fraction says more
        elif known is not None:
            typed = typed.model_copy(update={"resets_at": typed.resets_at or known.resets_at})
        readings[typed.window_id] = typed
    return [readings[w] for w in sorted(readings)]


def _typed_reading(info: dict[str, Any], now: datetime) -> QuotaReading | None:
    """The window ``rateLimitType`` names (none without a type: never guess the 5-hour one)."""
    window = BY_NAME.get(str(info.get("rateLimitType") or ""))
    status = info.get("status")
    if window is None or status not in _STATUSES:
        return None
    rejected = status == "rejected"
    used = _fraction(info.get("utilization"))
    return reading(window, now, used=100.0 if rejected else used,
                   resets_at=epoch(info.get("resetsAt")), exactness=Exactness.EXACT,
                   limit_reached=rejected,
                   note=N_("approaching the limit") if status == "allowed_warning" else None)


def _unified_readings(windows: Any, now: datetime) -> list[QuotaReading]:
    if not isinstance(windows, dict):
        return []
    result = []
    for name, entry in windows.items():
        window = BY_NAME.get(str(name))
        used = _fraction(entry.get("utilization")) if isinstance(entry, dict) else None
        if window is None or used is None:
            continue
        assert isinstance(entry, dict)
        status = entry.get("status")
        rejected = status == "rejected" or used >= 100.0
        result.append(reading(window, now, used=used, resets_at=epoch(entry.get("resetsAt")),
                              exactness=Exactness.EXACT, limit_reached=rejected,
                              note=N_("approaching the limit") if status == "allowed_warning"
                              else None))
    return result


def _fraction(value: Any) -> float | None:
    """``utilization`` is a fraction of the window (0–1, above 1 past the cap) → percent."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return percent(float(value) * 100.0)


def limit_stop_reading(parsed: ParsedLimit, stopped_at: datetime) -> QuotaReading:
    """The window a limit stop names, exhausted at the stop."""
    return reading(parsed.window, stopped_at, used=100.0, resets_at=parsed.resets_at,
                   exactness=parsed.exactness, limit_reached=True, note=parsed.note)


def cached_usage_readings(state: dict[str, Any], now: datetime,
                          source: str) -> list[QuotaReading]:
    """``cachedUsageUtilization`` of ``~/.claude.json``: a last resort, always ``stale``."""
    cached = state.get("cachedUsageUtilization")
    if not isinstance(cached, dict):
        return []
    fetched = epoch(cached.get("fetchedAtMs"))
    utilization = cached.get("utilization")
    if fetched is None or not isinstance(utilization, dict):
        return []
    age = duration(max(0.0, (now - fetched).total_seconds()), english=True)
    note = N_("cached by Claude Code {age} ago ({source})").format(age=age, source=source)
    result = []
    for name, window in BY_NAME.items():
        entry = utilization.get(name)
        if not isinstance(entry, dict) or (used := percent(entry.get("utilization"))) is None:
            continue
        result.append(reading(window, fetched, used=used, resets_at=epoch(entry.get("resets_at")),
                              exactness=Exactness.STALE, limit_reached=used >= 100.0, note=note))
    return result


#: a reading equal to the latest one and younger than this is not stored again
REPEAT_SECONDS = 60.0


def worth_storing(reading: QuotaReading, latest: QuotaReading | None) -> bool:
    """False for an older reading, or a repeat of the latest one (statuslines refresh
    constantly; the series needs a point per change, or per minute)."""
    if latest is None:
        return True
    if latest.observed_at > reading.observed_at:
        return False
    same = (latest.used_percent, latest.resets_at, latest.limit_reached) == (
        reading.used_percent, reading.resets_at, reading.limit_reached)
    age = (reading.observed_at - latest.observed_at).total_seconds()
    return not same or age >= REPEAT_SECONDS
