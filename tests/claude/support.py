"""A sink that records what a provider reports, for tests that run a provider on its own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.clock import Clock
from core.models import PauseReason, QuotaReading
from core.paths import Paths
from core.providers.base import GoalObservation, LimitHit
from core.providers.claude.provider import ClaudeProvider
from core.settings import Settings


class RecordingSink:
    def __init__(self) -> None:
        self.observed: list[GoalObservation] = []
        self.readings: list[QuotaReading] = []
        self.reports: list[tuple[Any, ...]] = []
        self.forgotten: list[tuple[str, str]] = []
        self.notes: list[tuple[str, str, str]] = []

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

    def goal_rested(self, goal_id: str, fence: int, detail: str | None = None) -> None:
        self.reports.append(("rested", goal_id, fence, detail))

    def goal_noted(self, goal_id: str, event: str, reason: str,
                   detail: dict[str, Any] | None = None) -> None:
        self.notes.append((goal_id, event, reason))

    async def forget_goal(self, goal_id: str, origin: str = "test") -> Any:
        self.forgotten.append((goal_id, origin))

    async def start_goal(self, goal_id: str, origin: str = "test") -> Any:
        raise NotImplementedError

    async def resume(self, goal_id: str, origin: str = "test", trigger: Any = None,
                     context: dict[str, Any] | None = None) -> Any:
        raise NotImplementedError


async def started_provider(settings: Settings, paths: Paths, clock: Clock,
                           environ: Mapping[str, str]) -> ClaudeProvider:
    """A Claude provider on its own (its reports go to a :class:`RecordingSink`), started."""
    provider = ClaudeProvider(settings, paths, clock, environ)
    provider.attach(RecordingSink())  # type: ignore[arg-type]
    await provider.start()
    return provider
