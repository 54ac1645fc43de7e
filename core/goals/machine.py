"""The goal state machine as data: one table of legal moves.

Every change of a goal's state in the store goes through :func:`next_state`; a move that is not in
:data:`TRANSITIONS` raises :class:`IllegalTransition`. ``done`` and ``cancelled`` are terminal.

Only :data:`GoalEvent.CLAIM_RESUME` (taken by the resume coordinator) and
:data:`GoalEvent.OBSERVE_RUNNING` (a provider reporting that the agent was resumed outside
Goalkeeper, e.g. ``/goal resume`` typed in the Codex TUI) move a goal out of ``paused`` into
work; the second one reflects what already happened and never starts anything.

Recurring goals (a scheduled pipeline) are never ``done``: when a round of work ends, their runner
reports :data:`GoalEvent.REST` and the goal goes back to ``idle`` until its next trigger.
"""

from __future__ import annotations

from enum import StrEnum

from core.models import GoalState, HistoryEvent

S = GoalState


class GoalEvent(StrEnum):
    START = "start"
    PAUSE = "pause"
    CLAIM_RESUME = "claim_resume"
    RESUME_SUCCEEDED = "resume_succeeded"
    RESUME_FAILED = "resume_failed"
    COMPLETE = "complete"
    CANCEL = "cancel"
    FAIL = "fail"
    OBSERVE_RUNNING = "observe_running"
    RESET = "reset"
    REST = "rest"  # a recurring goal finished one round of work and waits for its next trigger


#: The history event name each transition is recorded under.
HISTORY_EVENT: dict[GoalEvent, HistoryEvent] = {
    GoalEvent.START: HistoryEvent.STARTED,
    GoalEvent.PAUSE: HistoryEvent.PAUSED,
    GoalEvent.CLAIM_RESUME: HistoryEvent.RESUMING,
    GoalEvent.RESUME_SUCCEEDED: HistoryEvent.RESUMED,
    GoalEvent.RESUME_FAILED: HistoryEvent.RESUME_FAILED,
    GoalEvent.COMPLETE: HistoryEvent.DONE,
    GoalEvent.CANCEL: HistoryEvent.CANCELLED,
    GoalEvent.FAIL: HistoryEvent.FAILED,
    GoalEvent.OBSERVE_RUNNING: HistoryEvent.RUNNING_EXTERNALLY,
    GoalEvent.RESET: HistoryEvent.RESET,
    GoalEvent.REST: HistoryEvent.RESTED,
}

TRANSITIONS: dict[tuple[GoalState, GoalEvent], GoalState] = {
    (S.IDLE, GoalEvent.START): S.RUNNING,
    (S.IDLE, GoalEvent.PAUSE): S.PAUSED,
    (S.IDLE, GoalEvent.COMPLETE): S.DONE,
    (S.IDLE, GoalEvent.CANCEL): S.CANCELLED,
    (S.IDLE, GoalEvent.FAIL): S.FAILED,
    (S.IDLE, GoalEvent.OBSERVE_RUNNING): S.RUNNING,
    (S.RUNNING, GoalEvent.PAUSE): S.PAUSED,
    (S.RUNNING, GoalEvent.COMPLETE): S.DONE,
    (S.RUNNING, GoalEvent.CANCEL): S.CANCELLED,
    (S.RUNNING, GoalEvent.FAIL): S.FAILED,
    (S.RUNNING, GoalEvent.REST): S.IDLE,
    # a pause may change its reason (the user pausing a goal that waits for quota wins)
    (S.PAUSED, GoalEvent.PAUSE): S.PAUSED,
    (S.PAUSED, GoalEvent.CLAIM_RESUME): S.RESUMING,
    (S.PAUSED, GoalEvent.COMPLETE): S.DONE,
    (S.PAUSED, GoalEvent.CANCEL): S.CANCELLED,
    (S.PAUSED, GoalEvent.FAIL): S.FAILED,
    (S.PAUSED, GoalEvent.OBSERVE_RUNNING): S.RUNNING,
    (S.RESUMING, GoalEvent.RESUME_SUCCEEDED): S.RUNNING,
    (S.RESUMING, GoalEvent.RESUME_FAILED): S.PAUSED,
    (S.RESUMING, GoalEvent.PAUSE): S.PAUSED,
    (S.RESUMING, GoalEvent.COMPLETE): S.DONE,
    (S.RESUMING, GoalEvent.CANCEL): S.CANCELLED,
    (S.RESUMING, GoalEvent.FAIL): S.FAILED,
    (S.FAILED, GoalEvent.CANCEL): S.CANCELLED,
    (S.FAILED, GoalEvent.RESET): S.IDLE,
    (S.FAILED, GoalEvent.OBSERVE_RUNNING): S.RUNNING,
}


class IllegalTransition(Exception):
    """A move that the table does not allow; always a bug or a lost race, never user input."""

    def __init__(self, goal_id: str, state: GoalState, event: GoalEvent) -> None:
        super().__init__(f"goal {goal_id}: {event.value} is not allowed from {state.value}")
        self.goal_id = goal_id
        self.state = state
        self.event = event


def next_state(goal_id: str, state: GoalState, event: GoalEvent) -> GoalState:
    """The state ``event`` moves a goal in ``state`` to, or raise :class:`IllegalTransition`."""
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        raise IllegalTransition(goal_id, state, event) from None


def allowed(state: GoalState, event: GoalEvent) -> bool:
    return (state, event) in TRANSITIONS
