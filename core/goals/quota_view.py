"""The quota view decisions are based on: what blocks a goal's windows, and what was read.

The resume coordinator asks it which of a goal's windows are not recovered and when to look
again (:meth:`QuotaView.blockers`), and for the readings to record with the decision
(:meth:`QuotaView.snapshot`) and how full they are (:meth:`QuotaView.levels`);
the engine asks it when a goal paused for quota can go on
(:meth:`QuotaView.latest_reset`). Owns nothing: it reads the engine's quota manager.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from core.goals.auto_resume import AutoResumePolicy
from core.goals.rules import WindowLevel
from core.models import QuotaReading
from core.quota.machine import QuotaManager, recovery_instant, used_percent


class QuotaView:
    def __init__(self, quotas: QuotaManager, policy: AutoResumePolicy) -> None:
        self.quotas = quotas
        self.policy = policy

    def latest_reset(self, windows: Sequence[str], reported: datetime | None,
                     now: datetime) -> datetime | None:
        """The latest instant at which an exhausted window among ``windows`` lifts."""
        instants = [reported] if reported is not None else []
        for window_id in windows:
            reading = self.quotas.effective(window_id, now)
            if reading is not None and not self.quotas.is_recovered(window_id):
                instant = recovery_instant(reading, now, self.quotas.policy)
                if instant is not None:
                    instants.append(instant)
        return max(instants, default=None)

    def blockers(self, windows: tuple[str, ...], now: datetime) -> dict[str, datetime | None]:
        result: dict[str, datetime | None] = {}
        for window_id in windows:
            if self.quotas.is_recovered(window_id):
                continue
            tracker = self.quotas.tracker(window_id)
            if tracker.recovered_since is not None:
                result[window_id] = tracker.recovered_since + timedelta(
                    seconds=self.quotas.policy.stable_seconds)
                continue
            reading = self.quotas.effective(window_id, now)
            instant = recovery_instant(reading, now, self.quotas.policy) if reading else None
            result[window_id] = (
                instant + timedelta(seconds=self.policy.margin_seconds) if instant else None
            )
        return result

    def snapshot(self, windows: tuple[str, ...], now: datetime) -> tuple[dict[str, Any], ...]:
        readings = (self.quotas.effective(w, now) for w in windows)
        return tuple(reading_summary(r) for r in readings if r is not None)

    def levels(self, windows: tuple[str, ...], now: datetime) -> tuple[WindowLevel, ...]:
        """How full each window is now, for the reserve and budget rules."""
        readings = (self.quotas.effective(w, now) for w in windows)
        return tuple(WindowLevel(r.window_id, used_percent(r), r.resets_at, r.window_seconds)
                     for r in readings if r is not None)


def reading_summary(reading: QuotaReading) -> dict[str, Any]:
    return {
        "window": reading.window_id,
        "used_percent": reading.used_percent,
        "resets_at": reading.resets_at.isoformat() if reading.resets_at else None,
        "exactness": reading.exactness.value,
        "observed_at": reading.observed_at.isoformat(),
    }
