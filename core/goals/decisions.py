"""The user's goal actions other than resume — pause, cancel, auto-resume, start — as decisions.

Each ``decide_*`` returns the function the store runs inside its ``BEGIN IMMEDIATE`` transaction:
it reads the goal, validates the move against the goal machine, and answers with the new row, the
history rows (the request itself is always recorded, refusals included) and an
:class:`~core.commands.ActionResult`. The engine runs them and then stops runners as needed.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from core.commands import ActionResult
from core.goals.auto_resume import NOTE_AUTO_OFF, WAITS_FOR_RESET
from core.goals.changes import note_row, transition
from core.goals.intake import IntakeContext, schedule, unschedule
from core.goals.machine import GoalEvent
from core.i18n import N_
from core.models import Goal, GoalState, HistoryEvent, HistoryRow, Outcome, PauseReason, Trigger
from core.store import Mutation

Decide = Callable[[Goal | None], Mutation[ActionResult]]
NOTE_USER_PAUSE = N_("paused by the user: never auto-resumed")


def result(goal_id: str, outcome: Outcome, reason: str, state: GoalState | None = None,
           not_before: datetime | None = None) -> ActionResult:
    return ActionResult(goal_id, outcome, reason, not_before, state)


def request_row(goal_id: str, event: HistoryEvent, now: datetime, origin: str, outcome: Outcome,
                reason: str) -> HistoryRow:
    return note_row(goal_id, event, now, outcome=outcome, reason=reason,
                    trigger=Trigger.MANUAL, origin=origin)


def answer(goal_id: str, current: Goal | None, event: HistoryEvent, now: datetime, origin: str,
           outcome: Outcome, reason: str) -> Mutation[ActionResult]:
    """No change to the goal: record the request and answer it."""
    state = current.state if current else None
    return Mutation(None, result(goal_id, outcome, reason, state),
                    [request_row(goal_id, event, now, origin, outcome, reason)])


def decide_pause(goal_id: str, now: datetime, origin: str) -> Decide:
    event = HistoryEvent.PAUSE_REQUESTED

    def decide(current: Goal | None) -> Mutation[ActionResult]:
        if current is None:
            return answer(goal_id, None, event, now, origin, Outcome.UNKNOWN_GOAL,
                          N_("unknown goal"))
        if current.state is GoalState.PAUSED and current.pause_reason is PauseReason.USER:
            return answer(goal_id, current, event, now, origin, Outcome.ALREADY_PAUSED,
                          N_("already paused by the user"))
        if current.state in (GoalState.DONE, GoalState.CANCELLED, GoalState.FAILED):
            return answer(goal_id, current, event, now, origin, Outcome.REFUSED,
                          N_("refused: {state}").format(state=current.state.value))
        new, row = transition(current, GoalEvent.PAUSE, now, origin=origin,
                              trigger=Trigger.MANUAL, pause_reason=PauseReason.USER,
                              pause_detail=None, fence=current.fence + 1, next_resume_at=None,
                              auto_resume_note=NOTE_USER_PAUSE)
        done = answer(goal_id, new, event, now, origin, Outcome.PAUSED, N_("paused"))
        return Mutation(new, done.result, [row, *done.history])

    return decide


def decide_cancel(goal_id: str, now: datetime, origin: str) -> Decide:
    event = HistoryEvent.CANCEL_REQUESTED

    def decide(current: Goal | None) -> Mutation[ActionResult]:
        if current is None:
            return answer(goal_id, None, event, now, origin, Outcome.UNKNOWN_GOAL,
                          N_("unknown goal"))
        if current.state.terminal:
            outcome = Outcome.CANCELLED if current.state is GoalState.CANCELLED else (
                Outcome.REFUSED)
            return answer(goal_id, current, event, now, origin, outcome,
                          N_("already {state}").format(state=current.state.value))
        new, row = transition(current, GoalEvent.CANCEL, now, origin=origin,
                              trigger=Trigger.MANUAL, reason=N_("cancelled by the user"),
                              fence=current.fence + 1, auto_resume_note=None)
        done = answer(goal_id, new, event, now, origin, Outcome.CANCELLED, N_("cancelled"))
        return Mutation(new, done.result, [row, *done.history])

    return decide


def decide_auto_resume(goal_id: str, enabled: bool, ctx: IntakeContext, origin: str) -> Decide:
    switched = N_("auto-resume on") if enabled else N_("auto-resume off")
    already = N_("auto-resume already on") if enabled else N_("auto-resume already off")

    def decide(current: Goal | None) -> Mutation[ActionResult]:
        if current is None:
            return Mutation(None, result(goal_id, Outcome.UNKNOWN_GOAL, N_("unknown goal")))
        if current.auto_resume is enabled:
            return Mutation(None, result(goal_id, Outcome.UNCHANGED, already, current.state))
        new = current.model_copy(update={"auto_resume": enabled, "updated_at": ctx.now})
        rows = [request_row(goal_id, HistoryEvent.AUTO_RESUME_CHANGED, ctx.now, origin,
                            Outcome.UPDATED, switched)]
        if new.state is GoalState.PAUSED and new.pause_reason in WAITS_FOR_RESET:
            if enabled:
                new, row = schedule(new.model_copy(update={"attempts": 0}), new.resets_at, ctx)
                rows.append(row)
            else:
                new = unschedule(new, NOTE_AUTO_OFF)
        return Mutation(new, result(goal_id, Outcome.UPDATED, switched,
                                    new.state, new.next_resume_at), rows)

    return decide


NOTE_SKIPPED = N_("this reset skipped: not resumed automatically until the next limit")


def decide_skip_reset(goal_id: str, following: datetime | None, ctx: IntakeContext,
                      origin: str) -> Decide:
    """Skip the reset a paused goal waits for ("Skip this window"): its automatic resume moves
    to ``following``, the reset after it (the skipped one plus the window's period), planned
    as any quota pause is (margin, allowed hours…); when that is not known, the pending resume
    is dropped. Auto-resume stays on either way."""
    event = HistoryEvent.AUTO_RESUME_CHANGED

    def decide(current: Goal | None) -> Mutation[ActionResult]:
        if current is None:
            return Mutation(None, result(goal_id, Outcome.UNKNOWN_GOAL, N_("unknown goal")))
        if current.state is not GoalState.PAUSED or current.next_resume_at is None:
            return answer(goal_id, current, event, ctx.now, origin, Outcome.UNCHANGED,
                          N_("no automatic resume is scheduled"))
        if following is None:
            new = unschedule(current, NOTE_SKIPPED).model_copy(
                update={"deferral": None, "updated_at": ctx.now})
            done = answer(goal_id, new, event, ctx.now, origin, Outcome.UPDATED, NOTE_SKIPPED)
            return Mutation(new, done.result, done.history)
        new, planned = schedule(current.model_copy(update={"deferral": None,
                                                           "updated_at": ctx.now}),
                                following, ctx)
        why = N_("this reset skipped: resumes after the next one")
        done = answer(goal_id, new, event, ctx.now, origin, Outcome.UPDATED, why)
        return Mutation(new, done.result, [*done.history, planned])

    return decide


def decide_start(goal_id: str, now: datetime, origin: str) -> Decide:
    def decide(current: Goal | None) -> Mutation[ActionResult]:
        if current is None:
            return Mutation(None, result(goal_id, Outcome.UNKNOWN_GOAL, N_("unknown goal")))
        if current.state is not GoalState.IDLE:
            return Mutation(None, result(goal_id, Outcome.REFUSED, N_("not idle: {state}").format(
                state=current.state.value), current.state))
        new, row = transition(current, GoalEvent.START, now, origin=origin,
                              fence=current.fence + 1, hosted=True, resumed_at=None)
        return Mutation(new, result(goal_id, Outcome.RESUMED, N_("started"), new.state), [row])

    return decide
