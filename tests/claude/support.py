"""A sink that records what a provider reports, for tests that run a provider on its own."""

from __future__ import annotations

from typing import Any

from core.models import PauseReason, QuotaReading
from core.providers.base import GoalObservation, LimitHit


class RecordingSink:
    def __init__(self) -> None:
        self.observed: list[GoalObservation] = []
        self.readings: list[QuotaReading] = []
        self.reports: list[tuple[Any, ...]] = []
        self.released: list[tuple[str, str]] = []

    def goal_observed(self, provider: str, observation: GoalObservation) -> None:
        self.observed.append(observation)

    def quota_observed(self, reading: QuotaReading) -> None:
        self.readings.append(reading)

    def goal_progress(self, goal_id: str, fence: int, detail: str, data: dict[str, Any]) -> None:
        self.reports.append(("progress", goal_id, fence, detail))

    def goal_limited(self, goal_id: str, fence: int, hit: LimitHit) -> None:
        self.reports.append(("limited", goal_id, fence, hit))

    def goal_finished(self, goal_id: str, fence: int, detail: str | None = None) -> None:
        self.reports.append(("finished", goal_id, fence, detail))

    def goal_failed(self, goal_id: str, fence: int, detail: str) -> None:
        self.reports.append(("failed", goal_id, fence, detail))

    def goal_paused(self, goal_id: str, fence: int, reason: PauseReason, detail: str) -> None:
        self.reports.append(("paused", goal_id, fence, detail))

    def goal_released(self, provider: str, goal_id: str, reason: str) -> None:
        self.released.append((goal_id, reason))
