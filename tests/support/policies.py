"""Resume-policy test helpers: a store seeded with a goal that has a policy and a deferral."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from core.models import Deferral, Goal, GoalState, LastRun, PauseReason, Steering
from core.policies.goal_policy import GoalPolicy
from core.store import Mutation, SqliteStore
from tests.policies.support import WINDOW
from tests.support.fakes import reading


def seed(home: Path, now: datetime) -> None:
    home.mkdir(parents=True, exist_ok=True)
    store = SqliteStore(home / "goalkeeper.db")
    evening = now + timedelta(hours=3)
    goal = Goal(id="fake:g", provider="fake", title="Port the parser", state=GoalState.PAUSED,
                pause_reason=PauseReason.QUOTA, auto_resume=True, windows=(WINDOW,),
                next_resume_at=evening, deferral=Deferral(rule="allowed hours", until=evening),
                policy=GoalPolicy(priority=3, budget_percent=25,
                                  auto_resume_hours="Mon-Fri 19:00-08:00"),
                steering=Steering(last_run=LastRun(seconds=5400.0, ended_at=now)),
                created_at=now, updated_at=now, state_since=now)
    store.transact(goal.id, lambda cur: Mutation(goal, None))
    reset = now + timedelta(hours=4)  # a 5-hour window that began an hour ago
    for minutes, used in ((20, 10.0), (10, 20.0), (0, 30.0)):
        store.save_reading(reading(WINDOW, used, now - timedelta(minutes=minutes), reset))
    store.close()
