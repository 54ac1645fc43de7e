"""Values the contract tests store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from core.models import Goal, GoalState, HistoryRow, Outcome
from core.store.base import Mutation

T0 = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)


def goal(goal_id: str = "fake:a", **kw: Any) -> Goal:
    return Goal.model_validate({"id": goal_id, "provider": "fake", "title": goal_id,
                                "created_at": T0, "updated_at": T0, **kw})


def row(goal_id: str | None = "fake:a", event: str = "noted", at: datetime = T0,
        **kw: Any) -> HistoryRow:
    return HistoryRow(at=at, goal=goal_id, event=event, **kw)


def put(store: Any, g: Goal, *rows: HistoryRow) -> None:
    store.transact(g.id, lambda _: Mutation(g, None, list(rows)))


def claim(current: Goal | None, now: datetime = T0) -> Mutation[str]:
    """The resume claim's shape: paused → resuming with the fence bumped, once."""
    if current is None or current.state is not GoalState.PAUSED:
        return Mutation(None, "lost", [row(current.id if current else None, "resume_requested",
                                           outcome=Outcome.ALREADY_RESUMING)])
    won = current.model_copy(update={"state": GoalState.RESUMING, "fence": current.fence + 1,
                                     "updated_at": now + timedelta(seconds=1)})
    return Mutation(won, "won", [row(current.id, "resuming", outcome=Outcome.RESUMED)])


def set_heartbeat(store: Any, host_id: str, at: datetime) -> None:
    """A shared store writes heartbeats with its own clock: a test that needs a host silent
    since ``at`` (killed then) sets the row itself."""
    store.con.execute("UPDATE hosts SET heartbeat = %s WHERE host_id = %s", (at, host_id))
