"""Goals and readings built directly, for model and formatting tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from core.models import Goal, GoalState, PauseReason

T0 = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)


def goal(goal_id: str = "p:1", state: GoalState = GoalState.RUNNING, **kw: Any) -> Goal:
    values: dict[str, Any] = {
        "id": goal_id, "provider": goal_id.split(":")[0], "title": kw.pop("title", goal_id),
        "state": state, "created_at": T0, "updated_at": T0, "state_since": T0,
    }
    values.update(kw)
    return Goal(**values)


def quota_paused(goal_id: str = "p:1", in_seconds: float | None = 600, **kw: Any) -> Goal:
    due = T0 + timedelta(seconds=in_seconds) if in_seconds is not None else None
    return goal(goal_id, GoalState.PAUSED, pause_reason=PauseReason.QUOTA, next_resume_at=due,
                auto_resume=True, **kw)
