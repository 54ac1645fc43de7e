"""Shared set-up for the resume-policy tests: goals waiting on one window, readings, rows."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from core.clock import FakeClock
from core.engine import Engine
from core.models import GoalState, HistoryRow, PauseReason
from core.settings import Settings
from tests.support.fakes import FakeProvider, reading, settled

H = 3600
WINDOW = "fake:5h"


def policy_settings(**kw: Any) -> Settings:
    base: dict[str, Any] = {"resume_jitter_seconds": 0, "auto_resume_timezone": "Europe/Berlin"}
    return Settings(**(base | kw))


def waiting(fake: FakeProvider, clock: FakeClock, goals: tuple[str, ...] = ("fake:g",),
            resets_in: float = H, fresh_used: float = 3.0) -> datetime:
    """Goals the agent shows stopped by the window, resetting in ``resets_in``; at the reset
    the fresh read says ``fresh_used`` % (set ``fake.level`` to change it later)."""
    reset = clock.now() + timedelta(seconds=resets_in)
    fake.readings = [reading(WINDOW, 100, clock.now(), reset, limit_reached=True)]
    for i, goal in enumerate(goals):
        fake.observe(goal, GoalState.PAUSED, reason=PauseReason.QUOTA, resets_at=reset,
                     auto_resume=True, windows=(WINDOW,),
                     at=clock.now() - timedelta(minutes=len(goals) - i))  # first: oldest pause
    level = {"used": fresh_used, "reset": reset + timedelta(hours=5)}
    fake.level = level  # type: ignore[attr-defined]
    fake.fresh_readings = lambda: [reading(WINDOW, level["used"], clock.now(), level["reset"])]
    return reset


async def report(engine: Engine, fake: FakeProvider, clock: FakeClock, used: float,
                 resets_at: datetime) -> None:
    """The provider reports a reading of the window (as a running agent's turn would)."""
    fake.level["used"] = used  # type: ignore[attr-defined]
    fake.sink.quota_observed(reading(WINDOW, used, clock.now(), resets_at))
    await settled(engine)


async def rows(engine: Engine, goal: str, event: str = "resume_requested") -> list[HistoryRow]:
    return [r for r in await engine.reads.history(goal, limit=500) if r.event == event]


def started(fake: FakeProvider) -> list[str]:
    return [goal for goal, _ in fake.starts]
