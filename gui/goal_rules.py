"""Rules the window applies to goals: which actions are legal, filters, the aggregate state.

Pure functions. Legality only decides what is *enabled*; the engine still decides what happens and
the window renders its answer — a goal can change between the click and the call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from core.goals.auto_resume import NOTE_CAP_REACHED, WAITS_FOR_RESET
from core.models import Goal, GoalState, PauseReason
from gui.i18n import QT_TR_NOOP

# -- legality ----------------------------------------------------------------------------------


def can_start(goal: Goal) -> bool:
    return goal.state is GoalState.IDLE


def can_resume(goal: Goal) -> bool:
    return goal.state is GoalState.PAUSED


def can_pause(goal: Goal) -> bool:
    if goal.state is GoalState.PAUSED:
        return goal.pause_reason is not PauseReason.USER  # e.g. stop waiting for quota
    return goal.state in (GoalState.IDLE, GoalState.RUNNING, GoalState.RESUMING)


def can_cancel(goal: Goal) -> bool:
    return not goal.state.terminal


def can_toggle_auto_resume(goal: Goal) -> bool:
    return not goal.state.terminal


# -- classification ----------------------------------------------------------------------------


def waiting_for_quota(goal: Goal) -> bool:
    """Paused until a window resets: for quota, or for its budget of the window."""
    return goal.state is GoalState.PAUSED and goal.pause_reason in WAITS_FOR_RESET


def needs_attention(goal: Goal) -> bool:
    """Failed, stopped for auth or an error, or given up on: the user has to do something."""
    if goal.state is GoalState.FAILED:
        return True
    if goal.state is not GoalState.PAUSED:
        return False
    if goal.pause_reason in (PauseReason.AUTH, PauseReason.ERROR):
        return True
    return waiting_for_quota(goal) and (goal.auto_resume_note or "").startswith(NOTE_CAP_REACHED)


class StateFilter(StrEnum):
    ALL = "all"
    ACTIVE = "active"
    RUNNING = "running"
    WAITING = "waiting"
    PAUSED = "paused"
    ATTENTION = "attention"
    IDLE = "idle"
    FINISHED = "finished"


STATE_FILTER_LABELS = {
    StateFilter.ALL: QT_TR_NOOP("All states"),
    StateFilter.ACTIVE: QT_TR_NOOP("Not finished"),
    StateFilter.RUNNING: QT_TR_NOOP("Running or resuming"),
    StateFilter.WAITING: QT_TR_NOOP("Waiting for quota"),
    StateFilter.PAUSED: QT_TR_NOOP("Paused (any reason)"),
    StateFilter.ATTENTION: QT_TR_NOOP("Needs attention"),
    StateFilter.IDLE: QT_TR_NOOP("Idle"),
    StateFilter.FINISHED: QT_TR_NOOP("Done or cancelled"),
}


def matches_state(goal: Goal, wanted: StateFilter) -> bool:
    checks: dict[StateFilter, Callable[[], bool]] = {
        StateFilter.ALL: lambda: True,
        StateFilter.ACTIVE: lambda: not goal.state.terminal,
        StateFilter.RUNNING: lambda: goal.state in (GoalState.RUNNING, GoalState.RESUMING),
        StateFilter.WAITING: lambda: waiting_for_quota(goal),
        StateFilter.PAUSED: lambda: goal.state is GoalState.PAUSED,
        StateFilter.ATTENTION: lambda: needs_attention(goal),
        StateFilter.IDLE: lambda: goal.state is GoalState.IDLE,
        StateFilter.FINISHED: lambda: goal.state.terminal,
    }
    return checks[wanted]()


def matches_text(goal: Goal, needle: str) -> bool:
    """Case-insensitive match on title, id, provider, state, reason and the auto-resume note."""
    if not needle:
        return True
    haystack = " ".join(filter(None, (
        goal.title, goal.id, goal.provider, goal.state.value,
        goal.pause_reason.value if goal.pause_reason else None, goal.pause_detail,
        goal.auto_resume_note,
    ))).casefold()
    return all(word in haystack for word in needle.casefold().split())


# -- the aggregate state (tray icon) ----------------------------------------------------------


class Aggregate(StrEnum):
    IDLE = "idle"
    RUNNING = "running"
    WAITING = "waiting"
    ATTENTION = "attention"


@dataclass(frozen=True)
class Summary:
    """Counts behind the tray icon and its tooltip."""

    state: Aggregate
    running: int
    waiting: int
    attention: int
    total: int
    next_resume_at: datetime | None


def summarise(goals: Iterable[Goal]) -> Summary:
    """Needs attention > waiting for quota > running > idle: the icon shows the most urgent."""
    running = waiting = attention = total = 0
    next_resume: datetime | None = None
    for goal in goals:
        total += 1
        if needs_attention(goal):
            attention += 1
        elif waiting_for_quota(goal):
            waiting += 1
            if goal.next_resume_at and (next_resume is None or goal.next_resume_at < next_resume):
                next_resume = goal.next_resume_at
        elif goal.state in (GoalState.RUNNING, GoalState.RESUMING):
            running += 1
    state = (Aggregate.ATTENTION if attention else Aggregate.WAITING if waiting
             else Aggregate.RUNNING if running else Aggregate.IDLE)
    return Summary(state, running, waiting, attention, total, next_resume)
