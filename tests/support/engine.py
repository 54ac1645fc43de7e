"""Engine test helpers: the factory type the root conftest's ``make_engine`` and ``make_host``
fixtures hand out, and a goal the fake provider shows stopped by its 5-hour limit."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from core.clock import FakeClock
from core.models import GoalState, PauseReason
from tests.support.fakes import FakeProvider, reading

EngineFactory = Callable[..., Any]


H = 3600


def quota_paused(fake: FakeProvider, clock: FakeClock, resets_in: float = H, *,
                 goal: str = "fake:g", auto: bool = True,
                 windows: tuple[str, ...] = ("fake:5h",)) -> None:
    """A goal the agent shows as stopped by the 5-hour limit, resetting in ``resets_in``."""
    reset = clock.now() + timedelta(seconds=resets_in)
    fake.readings = [reading(w, 100, clock.now(), reset, limit_reached=True) for w in windows]
    fake.observe(goal, GoalState.PAUSED, reason=PauseReason.QUOTA, resets_at=reset,
                 auto_resume=auto, windows=windows)
    # at the reset the authority says the window is fresh again
    fake.fresh_readings = lambda: [reading(w, 3, clock.now(), reset + timedelta(hours=5))
                                   for w in windows]
