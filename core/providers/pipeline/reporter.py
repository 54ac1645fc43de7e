"""Turns what a run reports into fenced sink reports for the engine.

A run waiting for quota becomes ``goal_limited`` (the goal pauses for ``quota`` with the instant the
limit lifts; user-quota readings ride along), a blocked run ``goal_paused`` for ``auth`` or
``error`` (the alert), a completed run ``goal_rested`` (idle until its next trigger), each phase a
``goal_progress`` whose data the views show (run id, state, coverage), and milestones history
notes. Every report carries the fence of the claim that started the run, so a run from an older
claim can never move the goal.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from core.models import Exactness, HistoryEvent, PauseReason, QuotaReading
from core.providers.base import LimitHit, ProviderSink
from core.providers.pipeline.checkpoint import RunRecord
from core.providers.pipeline.coverage import display_state, missing_sources, sources_ok
from core.quota.user import WINDOW_PREFIX


class SinkReporter:
    """One run's reporter. Owns nothing; ``on_completed`` runs before the rest report."""

    def __init__(self, sink: ProviderSink, goal_id: str, fence: int,
                 readings: Callable[[tuple[str, ...]], tuple[QuotaReading, ...]],
                 on_completed: Callable[[], None]) -> None:
        self.sink = sink
        self.goal_id = goal_id
        self.fence = fence
        self.readings = readings
        self.on_completed = on_completed

    def progress(self, record: RunRecord) -> None:
        ok, total = sources_ok(record), len(record.sources)
        data = {"run_id": record.run_id, "run_state": display_state(record),
                "sources_used": f"{ok}/{total}", "degraded": record.degraded,
                "items": record.item_count,
                "missing_sources": [m["name"] for m in missing_sources(record)]}
        self.sink.goal_progress(self.goal_id, self.fence, f"run {display_state(record)}",
                                {"pipeline": data})

    def note(self, event: HistoryEvent, reason: str, detail: dict[str, object]) -> None:
        self.sink.goal_noted(self.goal_id, event, reason, dict(detail))

    def limited(self, windows: tuple[str, ...], until: datetime | None, detail: str) -> None:
        quota_windows = tuple(w for w in windows if w.startswith(WINDOW_PREFIX))
        self.sink.goal_limited(self.goal_id, self.fence, LimitHit(
            windows=windows, resets_at=until, exactness=Exactness.EXACT, detail=detail,
            no_timed_reset=until is None, readings=self.readings(quota_windows)))

    def blocked(self, reason: PauseReason, detail: str) -> None:
        self.sink.goal_paused(self.goal_id, self.fence, reason, detail)

    def completed(self, detail: str) -> None:
        self.on_completed()
        self.sink.goal_rested(self.goal_id, self.fence, detail)
