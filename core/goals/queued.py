"""New work queued to start right after a window's reset ("start when Codex's 5-hour window
resets"), with the guarantees of a resume.

A queued start is not a second scheduler: it is a goal in the store, ``paused`` for ``quota``
on the window it waits for, auto-resume on, planned like any goal paused for quota
(:func:`core.goals.intake.schedule`: the reset + margin + jitter, moved into the allowed
hours). The scheduler takes it when due, takes a fresh read, and sends it through the door
like any resume; the claim decides under the reserve, the allowed hours, priorities and
slots, exactly once. Its provider's :meth:`~core.providers.base.Provider.resume_goal` is the
start of the new work (idempotent: check, then act). Two things are its own:

* :func:`decide_queue` — the goal, written by the door's ``Queue`` handler once the provider
  prepared the work (:meth:`~core.providers.base.Provider.prepare_start`);
* :func:`hold` — in the claim: an automatic start needs a reading of the window taken at or
  after the reset it waits for, not one the clock implies (the window may never have been
  exhausted, so "not blocked" alone says nothing about the reset).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from core.clock import parse_iso
from core.commands import ActionResult
from core.goals.auto_resume import AutoResumePolicy, Decision
from core.goals.changes import note_row
from core.goals.intake import IntakeContext, schedule
from core.i18n import N_
from core.models import (
    Exactness,
    Goal,
    GoalState,
    HistoryEvent,
    Outcome,
    PauseReason,
    QueuedStart,
    Steering,
    Trigger,
)
from core.policies.goal_policy import GoalPolicy
from core.providers.base import PreparedStart
from core.store import Mutation

#: the rule a queued start waits on (a Deferral's rule, the history's "rule")
RULE_RESET = "waiting for the reset"


def decide_queue(current: Goal | None, prepared: PreparedStart, provider: str, window: str,
                 after: datetime, origin: str, ctx: IntakeContext) -> Mutation[ActionResult]:
    """The queued goal: paused for quota on ``window`` until its reset at ``after``.

    A goal of that id that exists already is refused — unless it is over (done, cancelled: a
    new objective on its thread; its history stays) or the one the provider just made and
    discovered before this write (paused, not queued, never run by Goalkeeper)."""
    goal_id = prepared.goal_id
    if current is not None and not (current.state.terminal or _fresh_discovery(current)):
        return Mutation(None, ActionResult(
            goal_id, Outcome.REFUSED, N_("{goal} is already a goal ({state}): resume it "
                                         "instead").format(goal=goal_id,
                                                           state=current.state.value),
            None, current.state))
    goal = Goal(
        id=goal_id, provider=provider, title=prepared.title, state=GoalState.PAUSED,
        pause_reason=PauseReason.QUOTA,
        pause_detail=N_("queued: starts after {window} resets").format(window=window),
        windows=(window,), auto_resume=True, data=dict(prepared.data),
        steering=Steering(queued=QueuedStart(window=window, after=after)),
        created_at=current.created_at if current else ctx.now, updated_at=ctx.now,
        state_since=ctx.now, fence=current.fence if current else 0,
        policy=current.policy if current else GoalPolicy(),
    )
    queued_row = note_row(goal_id, HistoryEvent.QUEUED, ctx.now, origin=origin,
                          outcome=Outcome.QUEUED,
                          reason=N_("queued to start after {window} resets").format(
                              window=window),
                          detail={"window": window, "after": after.isoformat(),
                                  "cwd": prepared.data.get("cwd")})
    goal, planned = schedule(goal, after, ctx)
    if goal.next_resume_at is None:
        reason = N_("queued, but no start is planned: {why}").format(why=planned.reason or "")
    else:
        reason = N_("starts after {window} resets").format(window=window)
        if goal.deferred_by:
            reason = N_("{reason}; {rule}").format(reason=reason, rule=goal.deferred_by)
        planned = planned.model_copy(update={"reason": reason})
    result = ActionResult(goal_id, Outcome.QUEUED, reason, goal.next_resume_at, goal.state)
    return Mutation(goal, result, [queued_row, planned])


def _fresh_discovery(goal: Goal) -> bool:
    return (goal.state is GoalState.PAUSED and goal.steering.queued is None
            and goal.resumed_at is None and not goal.hosted)


def hold(decision: Decision, goal: Goal | None, trigger: Trigger, now: datetime,
         quotas: Sequence[Mapping[str, Any]], policy: AutoResumePolicy) -> Decision:
    """Hold back an automatic start of a queued goal until a reading of its window, taken at or
    after the reset it waits for, shows the new period; a manual start is the user's own."""
    if not decision.allowed or goal is None or trigger is Trigger.MANUAL or (
            goal.pause_reason is PauseReason.INTERRUPTED):  # its claim passed this check once
        return decision
    queued = goal.steering.queued
    if queued is None:
        return decision
    if now < queued.after:
        return Decision(Outcome.DEFERRED, N_("{rule}: {window} resets at {time}").format(
            rule=RULE_RESET, window=queued.window, time=queued.after.isoformat()),
            queued.after, RULE_RESET)
    if refreshed(queued, quotas):
        return replace(decision, reason=N_("{window} was reset: starting the queued work")
                       .format(window=queued.window))
    return Decision(Outcome.DEFERRED, N_(
        "{rule}: no reading of {window} since its reset at {time} shows the new period yet"
    ).format(rule=RULE_RESET, window=queued.window, time=queued.after.isoformat()),
        now + policy.failure_backoff, RULE_RESET)


def refreshed(queued: QueuedStart, quotas: Sequence[Mapping[str, Any]]) -> bool:
    """Some reading of the window was taken at or after the reset (read, not inferred from
    the clock) and is not exhausted."""
    for summary in quotas:
        if summary.get("window") != queued.window:
            continue
        observed = parse_iso(summary.get("observed_at"))
        used = summary.get("used_percent")
        if (observed is not None and observed >= queued.after
                and summary.get("exactness") != Exactness.INFERRED.value
                and not (isinstance(used, int | float) and used >= 100)):
            return True
    return False


def queue_problem(provider: str, cwd: str, text: str, window: str,
                  windows: Mapping[str, Sequence[str]]) -> str | None:
    """What is wrong with a queue request, in words (None: nothing). ``windows``: the known
    windows by provider (:data:`core.policies.reserve_table.BUILT_IN_WINDOWS`)."""
    if provider not in QUEUE_PROVIDERS:
        return N_("cannot queue work for {provider!r}: only codex and claude").format(
            provider=provider)
    if not text.strip():
        return N_("the objective is empty") if provider == "codex" else N_("the prompt is empty")
    if not cwd or not os.path.isabs(cwd):
        return N_("the directory must be an absolute path: {path!r}").format(path=cwd)
    if not os.path.isdir(cwd):
        return N_("no such directory: {path}").format(path=cwd)
    known = tuple(windows.get(provider, ()))
    if window not in known:
        return N_("unknown window {window!r} for {provider}: one of {known}").format(
            window=window, provider=provider, known=", ".join(known))
    return None


#: the providers that can start new work, with the window a queued start waits for by default
QUEUE_PROVIDERS = {"codex": "codex:5h", "claude": "claude:5h"}
