"""Codex rate-limit snapshots → Goalkeeper quota readings, and when a limit in force lifts."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from core.i18n import N_
from core.models import Exactness, QuotaKind, QuotaReading
from core.providers.codex.limits import (
    ACCESS,
    CREDITS,
    LABELS,
    PROVIDER,
    TIMED_REACHED,
    Credits,
    RateSnapshot,
    Window,
)


def to_readings(snapshot: RateSnapshot, now: datetime, stale_after: float) -> list[QuotaReading]:
    """The Goalkeeper readings a snapshot gives: one per known window, plus credits.

    A snapshot older than ``stale_after`` seconds is marked ``stale``; a reset that has passed is
    left for the quota manager to infer (it knows when the reading is looked at).
    """
    age = (now - snapshot.observed_at).total_seconds()
    exactness = Exactness.STALE if age > stale_after else Exactness.EXACT
    windows = snapshot.windows
    reached = _reached_windows(snapshot, windows)
    readings = [
        QuotaReading(
            window_id=wid, provider=PROVIDER, label=LABELS[wid], kind=QuotaKind.PERIODIC,
            used_percent=window.used_percent, resets_at=window.resets_at,
            window_seconds=window.window_minutes * 60 if window.window_minutes else None,
            limit_reached=True if wid in reached else None,
            exactness=exactness, observed_at=snapshot.observed_at,
            note=None if window.resets_at or window.window_minutes else N_(
                "old Codex shape: no reset"),
        )
        for wid, window in sorted(windows.items())
    ]
    credits = _credits_reading(snapshot, exactness)
    if credits is not None:
        readings.append(credits)
    if snapshot.access is not None:
        readings.append(_access_reading(snapshot, now, stale_after))
    return readings


def _access_reading(snapshot: RateSnapshot, now: datetime, stale_after: float) -> QuotaReading:
    """Codex's own yes/no on using it now: blocked outranks every percentage; unknown blocks
    nothing (the windows decide). Banked resets are shown here and never spent. Dated by the
    read that said it, not by later sparse updates."""
    access = snapshot.access
    assert access is not None
    observed = access.observed_at or snapshot.observed_at
    age = (now - observed).total_seconds()
    exactness = Exactness.STALE if age > stale_after else Exactness.EXACT
    why = access.blocked
    if why is not None:
        note = why
    elif access.ordinary_allowed:
        note = N_("Codex says ordinary usage is allowed")
    else:
        note = N_("Codex did not say whether usage is allowed: the windows decide")
    if access.reset_credits:
        banked = (N_("{count} banked resets (Goalkeeper never spends one)")
                  if access.reset_credits != 1
                  else N_("{count} banked reset (Goalkeeper never spends one)"))
        note += "; " + banked.format(count=access.reset_credits)
    return QuotaReading(
        window_id=ACCESS, provider=PROVIDER, label=LABELS[ACCESS], kind=QuotaKind.CAPACITY,
        used_percent=100.0 if why else 0.0, limit_reached=why is not None,
        no_timed_reset=True, exactness=exactness, observed_at=observed, note=note,
    )


def _reached_windows(snapshot: RateSnapshot, windows: Mapping[str, Window]) -> set[str]:
    """Windows Codex says are used up: those at 100 %, or the fullest when it says a limit hit."""
    full = {wid for wid, w in windows.items() if (w.used_percent or 0.0) >= 99.5}
    if full or snapshot.reached_type != TIMED_REACHED or not windows:
        return full
    fullest = max(windows.items(), key=lambda item: item[1].used_percent or 0.0)
    return {fullest[0]}


def _credits_reading(snapshot: RateSnapshot, exactness: Exactness) -> QuotaReading | None:
    why = snapshot.no_timed_reset
    if snapshot.credits is None and why is None:
        return None
    credits = snapshot.credits or Credits()
    if why is not None:
        note = why
    elif credits.unlimited:
        note = N_("unlimited credits")
    else:
        note = N_("credit balance {balance}").format(balance=credits.balance or "0")
    return QuotaReading(
        window_id=CREDITS, provider=PROVIDER, label=LABELS[CREDITS], kind=QuotaKind.CAPACITY,
        used_percent=100.0 if why else 0.0, limit_reached=why is not None,
        no_timed_reset=why is not None, exactness=exactness,
        observed_at=snapshot.observed_at, note=note,
    )


def limit_lifts_at(snapshot: RateSnapshot | None) -> datetime | None:
    """When the limit in force lifts: the latest reset among the windows that are used up.

    With no window used up (Codex stopped a goal before a gauge showed 100 %), the earliest reset
    — the first moment anything can change; the fresh read before resuming decides then.
    """
    if snapshot is None or snapshot.no_timed_reset:
        return None
    windows = snapshot.windows
    reached = _reached_windows(snapshot, windows)
    resets = [w.resets_at for wid, w in windows.items() if wid in reached and w.resets_at]
    if resets:
        return max(resets)
    others = [w.resets_at for w in windows.values() if w.resets_at]
    return min(others, default=None)
