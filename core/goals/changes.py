"""Building blocks for goal changes: one transition = a new row + the history row announcing it.

These functions are pure; they run inside the store's ``BEGIN IMMEDIATE`` transaction (see
:meth:`core.store.sqlite.SqliteStore.transact`), so they must never block or await.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.goals.machine import HISTORY_EVENT, GoalEvent, next_state
from core.i18n import N_
from core.models import Goal, GoalState, HistoryEvent, HistoryRow, Outcome, Trigger


def transition(
    goal: Goal,
    event: GoalEvent,
    now: datetime,
    *,
    origin: str | None = None,
    trigger: Trigger | None = None,
    reason: str | None = None,
    detail: dict[str, Any] | None = None,
    **changes: Any,
) -> tuple[Goal, HistoryRow]:
    """Apply ``event`` (validated by the goal machine) plus ``changes``; return row + history."""
    target = next_state(goal.id, goal.state, event)
    update: dict[str, Any] = {"state": target, "updated_at": now}
    if target is not goal.state:
        update["state_since"] = now
    if target not in (GoalState.PAUSED, GoalState.RESUMING):
        # a resuming goal keeps the reason it is being resumed from, for the fallback to paused
        update |= {"pause_reason": None, "pause_detail": None, "next_resume_at": None}
    if target is not GoalState.RUNNING and target is not GoalState.RESUMING:
        update["hosted"] = False
    update |= changes
    new = goal.model_copy(update=update)
    row = HistoryRow(
        at=now,
        goal=goal.id,
        event=HISTORY_EVENT[event],
        trigger=trigger,
        origin=origin,
        reason=reason if reason is not None else _pause_reason_text(new),
        state_from=goal.state,
        state_to=target,
        fence=new.fence,
        detail=detail or {},
    )
    return new, row


def _pause_reason_text(goal: Goal) -> str | None:
    if goal.state is not GoalState.PAUSED or goal.pause_reason is None:
        return None
    if goal.pause_detail:
        return N_("{reason}: {detail}").format(reason=goal.pause_reason.value,
                                               detail=goal.pause_detail)
    return goal.pause_reason.value


def note_row(
    goal_id: str | None,
    event: HistoryEvent,
    now: datetime,
    *,
    outcome: Outcome | None = None,
    reason: str | None = None,
    trigger: Trigger | None = None,
    origin: str | None = None,
    fence: int | None = None,
    quotas: tuple[dict[str, Any], ...] = (),
    detail: dict[str, Any] | None = None,
) -> HistoryRow:
    """A history row that records a decision rather than a state change."""
    return HistoryRow(
        at=now,
        goal=goal_id,
        event=event,
        trigger=trigger,
        origin=origin,
        outcome=outcome,
        reason=reason,
        fence=fence,
        quotas=quotas,
        detail=detail or {},
    )
