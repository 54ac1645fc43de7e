"""What providers report, turned into goal changes.

Two sources: *observations* (what the agent shows of a goal, found by discovery or by following
its files) and *runner reports* (what a runner Goalkeeper started says: limit hit, finished,
failed). Reports carry the fencing token of the claim that started the runner; a report with an
old token is ignored. Observations carry the agent's own timestamp; one older than the goal's
last change is ignored, and a goal Goalkeeper is hosting listens to its runner, not to files.

Every builder here is pure and runs inside the store transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from core.goals.auto_resume import (
    NOTE_CAP_REACHED,
    WAITS_FOR_RESET,
    AutoResumePolicy,
    plan_resume,
)
from core.goals.changes import note_row, transition
from core.goals.machine import GoalEvent, allowed
from core.goals.marks import policy_paused, sticks_against, with_last_run
from core.i18n import N_
from core.models import (
    Deferral,
    Goal,
    GoalState,
    HistoryEvent,
    HistoryRow,
    PauseReason,
    Steering,
    Trigger,
)
from core.providers.base import GoalObservation, LimitHit
from core.store import Mutation

#: returns a jitter value in [0, 1)
Jitter = Callable[[], float]
#: a scheduled resume's history reason, by the policy that paused the goal (none: the quota):
#: alone, with the rule that deferred it, and with that rule's allowed hours (stored English)
SCHEDULED = {
    "": (N_("quota exhausted"), N_("quota exhausted; {rule}"),
         N_("quota exhausted; {rule}: {hours}")),
    "reserve": (N_("reserve reached"), N_("reserve reached; {rule}"),
                N_("reserve reached; {rule}: {hours}")),
    "budget": (N_("budget spent"), N_("budget spent; {rule}"),
               N_("budget spent; {rule}: {hours}")),
}


@dataclass(frozen=True)
class IntakeContext:
    now: datetime
    policy: AutoResumePolicy
    jitter: Jitter
    auto_resume_default: bool
    #: the per-provider defaults (``codex_auto_resume``…), where they differ from the above
    auto_resume_by_provider: Mapping[str, bool] = field(default_factory=dict)


def schedule(goal: Goal, reset: datetime | None, ctx: IntakeContext) -> tuple[Goal, HistoryRow]:
    """Plan a quota-paused goal's automatic resume; the row says when, or why not."""
    plan = plan_resume(goal, reset, ctx.now, ctx.policy, ctx.jitter())
    deferral = Deferral(rule=plan.deferred_by, until=plan.next_resume_at) if (
        plan.deferred_by and plan.next_resume_at) else None
    new = goal.model_copy(
        update={"next_resume_at": plan.next_resume_at, "auto_resume_note": plan.note,
                "resets_at": reset, "deferral": deferral}
    )
    if plan.next_resume_at is not None:
        why, with_rule, with_hours = SCHEDULED.get(policy_paused(goal) or "", SCHEDULED[""])
        detail: dict[str, Any] = {"not_before": plan.next_resume_at.isoformat(),
                                  "resets_at": reset.isoformat() if reset else None}
        if deferral is not None:
            hours = ctx.policy.rules.hours_for(goal)
            why = (with_hours if hours else with_rule).format(
                rule=deferral.rule, hours=hours.describe() if hours else "")
            detail["rule"] = deferral.rule
        row = note_row(goal.id, HistoryEvent.RESUME_SCHEDULED, ctx.now, reason=why, detail=detail)
    else:
        event = HistoryEvent.GAVE_UP if (plan.note or "").startswith(NOTE_CAP_REACHED) else (
            HistoryEvent.RESUME_NOT_SCHEDULED)
        row = note_row(goal.id, event, ctx.now, reason=plan.note)
    return new, row


def unschedule(goal: Goal, note: str | None) -> Goal:
    return goal.model_copy(update={"next_resume_at": None, "auto_resume_note": note})


# -- observations ------------------------------------------------------------------------------


def decide_observation(
    current: Goal | None, provider: str, obs: GoalObservation, ctx: IntakeContext
) -> Mutation[str]:
    if current is None:
        return _discovered(provider, obs, ctx)
    refreshed = _refresh_metadata(current, obs, ctx)
    if current.state.terminal or (current.hosted and current.state is GoalState.RUNNING):
        return _metadata_only(current, refreshed, "metadata")
    if current.state is GoalState.RESUMING:
        return _metadata_only(current, refreshed, "resuming: the runner decides")
    if obs.observed_at < (current.state_since or current.created_at) and (
        obs.state is not current.state
    ):
        older = _metadata_only(current, refreshed, "older than the last change")
        return _replan_on_block_change(current, older, ctx)
    return _replan_on_block_change(current, _apply_observed_state(refreshed, obs, ctx), ctx)


_PLAN_EVENTS = (HistoryEvent.RESUME_SCHEDULED, HistoryEvent.RESUME_NOT_SCHEDULED,
                HistoryEvent.GAVE_UP)


def _replan_on_block_change(current: Goal, mutation: Mutation[str],
                            ctx: IntakeContext) -> Mutation[str]:
    """A goal waiting for quota whose ``auto_resume_block`` appeared, changed or went away is
    planned again — so its schedule and note follow, and the history says why."""
    goal = mutation.goal
    if goal is None or goal.state is not GoalState.PAUSED or (
        goal.pause_reason not in WAITS_FOR_RESET
    ):
        return mutation
    if current.steering.auto_resume_block == goal.steering.auto_resume_block:
        return mutation
    if any(row.event in _PLAN_EVENTS for row in mutation.history):
        return mutation
    new, row = schedule(goal, goal.resets_at, ctx)
    return Mutation(new, mutation.result, [*mutation.history, row])


def _metadata_only(current: Goal, refreshed: Goal, why: str) -> Mutation[str]:
    return Mutation(refreshed if refreshed != current else None, why)


def _discovered(provider: str, obs: GoalObservation, ctx: IntakeContext) -> Mutation[str]:
    auto = (obs.auto_resume if obs.auto_resume is not None
            else ctx.auto_resume_by_provider.get(provider, ctx.auto_resume_default))
    steering = Steering(auto_resume_block=obs.auto_resume_block or None,
                        no_reset_note=obs.no_reset_note or None)
    goal = Goal(
        id=obs.id, provider=provider, title=obs.title, state=obs.state,
        pause_reason=obs.pause_reason if obs.state is GoalState.PAUSED else None,
        pause_detail=obs.pause_detail, windows=obs.windows, auto_resume=auto,
        resets_at=obs.resets_at, data=dict(obs.data), steering=steering, created_at=ctx.now,
        updated_at=ctx.now,
        state_since=obs.observed_at,
    )
    rows = [note_row(goal.id, HistoryEvent.DISCOVERED, ctx.now,
                     reason=N_("found as {state}").format(state=obs.state.value),
                     detail={"provider": provider})]
    if goal.pause_reason is PauseReason.QUOTA:
        goal, row = schedule(goal, obs.resets_at, ctx)
        rows.append(row)
    return Mutation(goal, "discovered", rows)


def _refresh_metadata(current: Goal, obs: GoalObservation, ctx: IntakeContext) -> Goal:
    steering = current.steering.model_copy(
        update={"auto_resume_block": obs.auto_resume_block or None})
    if obs.no_reset_note:  # kept until a limit with a timed reset or a refill lifts it
        steering = steering.model_copy(update={"no_reset_note": obs.no_reset_note})
    update: dict[str, Any] = {"title": obs.title or current.title,
                              "data": current.data | obs.data, "steering": steering}
    if obs.windows:
        update["windows"] = obs.windows
    candidate = current.model_copy(update=update)
    if candidate == current:
        return current
    return candidate.model_copy(update={"updated_at": max(ctx.now, current.updated_at)})


def _apply_observed_state(goal: Goal, obs: GoalObservation, ctx: IntakeContext) -> Mutation[str]:
    if obs.state is GoalState.PAUSED:
        return _observed_pause(goal, obs, ctx)
    event = {
        GoalState.RUNNING: GoalEvent.OBSERVE_RUNNING,
        GoalState.DONE: GoalEvent.COMPLETE,
        GoalState.CANCELLED: GoalEvent.CANCEL,
        GoalState.FAILED: GoalEvent.FAIL,
    }.get(obs.state)
    if event is None or obs.state is goal.state or not allowed(goal.state, event):
        return Mutation(goal, "unchanged")
    new, row = transition(goal, event, ctx.now, origin=f"provider:{goal.provider}",
                          reason=obs.pause_detail or N_("{state} in the agent").format(
                              state=obs.state.value))
    return Mutation(new, obs.state.value, [row])


def _observed_pause(goal: Goal, obs: GoalObservation, ctx: IntakeContext) -> Mutation[str]:
    reason = obs.pause_reason or PauseReason.EXTERNAL
    if goal.state is GoalState.PAUSED and (
        goal.pause_reason is PauseReason.USER
        or (goal.pause_reason is reason and goal.resets_at == obs.resets_at)
        or sticks_against(goal, reason)
    ):
        # a user pause is sticky, and so is a reserve or budget pause against the agent merely
        # showing the goal paused (by us); nothing new otherwise
        return Mutation(goal, "unchanged")
    if not allowed(goal.state, GoalEvent.PAUSE):
        return Mutation(goal, "unchanged")
    changes: dict[str, Any] = {}
    if reason is PauseReason.QUOTA and goal.state is not GoalState.PAUSED:
        # a limit hit seen in the agent's files, not reported by a runner: the same episode
        # rules as decide_limit, or attempts would pile up across episodes to the cap
        changes["attempts"] = goal.attempts if _relimited(goal, ctx) else 0
        changes["steering"] = with_last_run(goal, ctx.now)
    new, row = transition(goal, GoalEvent.PAUSE, ctx.now, origin=f"provider:{goal.provider}",
                          pause_reason=reason, pause_detail=obs.pause_detail, **changes)
    rows = [row]
    if reason is PauseReason.QUOTA:
        new, scheduled = schedule(new, obs.resets_at, ctx)
        rows.append(scheduled)
    else:
        new = unschedule(new, f"paused: {reason.value}")
    return Mutation(new, "paused", rows)


# -- runner reports ----------------------------------------------------------------------------


def _stale(current: Goal | None, fence: int) -> bool:
    return (
        current is None
        or current.fence != fence
        or current.state not in (GoalState.RUNNING, GoalState.RESUMING)
    )


def decide_limit(
    current: Goal | None, fence: int, hit: LimitHit, reset: datetime | None, ctx: IntakeContext
) -> Mutation[str]:
    """A runner hit a quota limit: pause for quota and plan the automatic resume."""
    if _stale(current, fence):
        return Mutation(None, "stale report ignored")
    assert current is not None
    relimited = _relimited(current, ctx)
    no_reset = (hit.detail or N_("no timed reset")) if hit.no_timed_reset else None
    steering = with_last_run(current, ctx.now).model_copy(update={"no_reset_note": no_reset})
    new, row = transition(
        current, GoalEvent.PAUSE, ctx.now, origin=f"runner:{current.provider}",
        pause_reason=PauseReason.QUOTA, pause_detail=hit.detail,
        attempts=current.attempts if relimited else 0, steering=steering,
        windows=tuple(dict.fromkeys(current.windows + hit.windows)),
        detail={"relimited": relimited, "exactness": hit.exactness.value},
    )
    new, scheduled = schedule(new, None if hit.no_timed_reset else reset, ctx)
    return Mutation(new, "paused for quota", [row, scheduled])


def _relimited(goal: Goal, ctx: IntakeContext) -> bool:
    """Hit the limit again soon after an automatic resume: the same episode continues."""
    if goal.resumed_at is None or goal.steering.last_resume_trigger is Trigger.MANUAL:
        return False
    return ctx.now - goal.resumed_at <= ctx.policy.relimit_window


def decide_report(
    current: Goal | None,
    fence: int,
    event: GoalEvent,
    reason: str | None,
    ctx: IntakeContext,
    pause_reason: PauseReason | None = None,
    row_detail: dict[str, Any] | None = None,
) -> Mutation[str]:
    """A runner finished, failed, rested or paused the goal for a reason other than quota.

    The history row's detail says the pause reason (the notifications tell a goal that needs
    the user from one paused on its own) plus ``row_detail``."""
    if _stale(current, fence):
        return Mutation(None, "stale report ignored")
    assert current is not None
    changes: dict[str, Any] = {}
    detail = dict(row_detail or {})
    if pause_reason is not None:
        changes = {"pause_reason": pause_reason, "pause_detail": reason,
                   "auto_resume_note": f"paused: {pause_reason.value}"}
        detail["pause_reason"] = pause_reason.value
    new, row = transition(current, event, ctx.now, origin=f"runner:{current.provider}",
                          reason=reason, detail=detail, **changes)
    return Mutation(new, event.value, [row])


def decide_progress(current: Goal | None, fence: int, data: dict[str, Any],
                    ctx: IntakeContext) -> Mutation[str]:
    if _stale(current, fence):
        return Mutation(None, "stale report ignored")
    assert current is not None
    return Mutation(current.model_copy(update={"data": current.data | data,
                                               "updated_at": ctx.now}), "progress")
