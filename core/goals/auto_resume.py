"""The auto-resume policy: when a goal paused for quota may come back, and whether it may now.

Pure functions over frozen values; the coordinator and the scheduler apply them. Two questions:

* :func:`plan_resume` — a goal just paused for quota: when is its not-before time (the latest
  reset among its exhausted windows + margin + jitter), or why is none scheduled?
* :func:`decide_resume` — ``resume(goal, trigger)`` was called: resume, defer, or refuse — and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo

from core.goals.rules import RULE_BUDGET, RULE_HOURS, ResumeRules
from core.i18n import N_
from core.models import Goal, GoalState, Outcome, PauseReason, Trigger
from core.settings import Settings

NOTE_AUTO_OFF = N_("auto-resume is off")
NOTE_NO_RESET = N_("no reset time known")
NOTE_BEYOND_MAX_WAIT = N_("beyond max wait")
NOTE_CAP_REACHED = N_("attempt cap reached")
NOTE_NO_ALLOWED_HOURS = N_("no allowed hours within a week")

#: pause reasons that end with a window's reset, and are then resumed automatically
WAITS_FOR_RESET = frozenset({PauseReason.QUOTA, PauseReason.BUDGET})


@dataclass(frozen=True)
class AutoResumePolicy:
    """Margins, jitter and limits of automatic resumes (validated on construction).

    Attributes:
        margin_seconds: added to the reset instant (resets are approximate and clocks differ).
        jitter_seconds: a random 0..jitter added on top, so many goals do not stampede.
        max_wait: resets further away than this are shown but not scheduled.
        max_attempts: automatic resumes per quota episode before giving up.
        relimit_window: a new limit this soon after an automatic resume keeps the episode (and
            its attempt count); later, a new episode starts at zero.
        failure_backoff: the wait before retrying when a runner failed to start.
        rules: the resume policies — reserve, allowed hours, slots (:mod:`core.policies`).
    """

    margin_seconds: float = 45.0
    jitter_seconds: float = 15.0
    max_wait: timedelta = timedelta(hours=169)
    max_attempts: int = 3
    relimit_window: timedelta = timedelta(minutes=30)
    failure_backoff: timedelta = timedelta(minutes=5)
    rules: ResumeRules = field(default_factory=ResumeRules)

    def __post_init__(self) -> None:
        if self.margin_seconds < 0 or self.jitter_seconds < 0:
            raise ValueError("margin and jitter must not be negative")
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.max_wait <= timedelta(0):
            raise ValueError("max_wait must be positive")

    @classmethod
    def from_settings(cls, settings: Settings, local: tzinfo | None = None) -> AutoResumePolicy:
        return cls(
            margin_seconds=settings.resume_margin_seconds,
            jitter_seconds=settings.resume_jitter_seconds,
            max_wait=timedelta(hours=settings.max_wait_hours),
            max_attempts=settings.max_auto_attempts,
            relimit_window=timedelta(seconds=settings.relimit_window_seconds),
            failure_backoff=timedelta(seconds=settings.resume_failure_backoff_seconds),
            rules=ResumeRules.from_settings(settings, local),
        )


@dataclass(frozen=True)
class Plan:
    """The outcome of planning: a not-before time, or the note saying why there is none;
    ``deferred_by`` names the policy rule that moved the time (allowed hours)."""

    next_resume_at: datetime | None
    note: str | None
    deferred_by: str | None = None


def plan_resume(
    goal: Goal, reset: datetime | None, now: datetime, policy: AutoResumePolicy, jitter: float
) -> Plan:
    """Plan the automatic resume of ``goal`` (paused for quota) whose limit lifts at ``reset``.

    ``jitter`` is a value in ``[0, 1)`` scaled by the policy's jitter (injected for tests).
    """
    if block := goal.steering.auto_resume_block:
        return Plan(None, block)
    if no_reset := goal.steering.no_reset_note:
        return Plan(None, no_reset)  # e.g. credits depleted: turning auto-resume on won't help
    if not goal.auto_resume:
        return Plan(None, NOTE_AUTO_OFF)
    if goal.attempts >= policy.max_attempts:
        return Plan(None, N_("attempt cap reached ({attempts}/{cap})").format(
            attempts=goal.attempts, cap=policy.max_attempts))
    if reset is None:
        return Plan(None, NOTE_NO_RESET)
    if reset - now > policy.max_wait:
        return Plan(None, NOTE_BEYOND_MAX_WAIT)
    # jitter is applied before clamping to "now", so an overdue reset resumes without delay
    not_before = reset + timedelta(seconds=policy.margin_seconds + jitter * policy.jitter_seconds)
    return _within_hours(goal, max(not_before, now), policy)


def _within_hours(goal: Goal, not_before: datetime, policy: AutoResumePolicy) -> Plan:
    """Move a planned resume that falls outside the goal's allowed hours to their next start."""
    hours = policy.rules.hours_for(goal)
    if hours is None or hours.allows(not_before):
        return Plan(not_before, None)
    allowed = hours.next_allowed(not_before)
    if allowed is None:
        return Plan(None, NOTE_NO_ALLOWED_HOURS)
    return Plan(allowed, None, RULE_HOURS)


@dataclass(frozen=True)
class Decision:
    """What ``resume`` should do: ``outcome`` is RESUMED when the claim may be taken."""

    outcome: Outcome
    reason: str
    not_before: datetime | None = None
    rule: str | None = None  # the resume policy that deferred it (core.goals.rules)
    note: str | None = None  # what a manual resume went past (the reserve, allowed hours...)
    takes_slot: bool = False  # an automatic resume that holds a slot on its windows

    @property
    def allowed(self) -> bool:
        return self.outcome is Outcome.RESUMED


def decide_resume(
    goal: Goal | None,
    trigger: Trigger,
    now: datetime,
    blockers: Mapping[str, datetime | None],
    policy: AutoResumePolicy,
) -> Decision:
    """Resume, defer or refuse ``goal`` for ``trigger``.

    ``blockers`` maps each of the goal's windows that is not recovered to when it is worth checking
    again (None: unknown). A manual resume is always allowed from ``paused``; the other triggers
    follow the auto-resume rules.
    """
    if goal is None:
        return Decision(Outcome.UNKNOWN_GOAL, N_("unknown goal"))
    if goal.state is GoalState.RUNNING:
        return Decision(Outcome.ALREADY_RUNNING, N_("already running"))
    if goal.state is GoalState.RESUMING:
        return Decision(Outcome.ALREADY_RESUMING, N_("a resume is already in progress"))
    if goal.state is not GoalState.PAUSED:
        return Decision(Outcome.REFUSED, N_("not paused: {state}").format(state=goal.state.value))
    if trigger is Trigger.MANUAL:
        return Decision(Outcome.RESUMED, N_("manual resume (was paused: {reason})").format(
            reason=_reason(goal)))
    if trigger is Trigger.STARTUP and goal.pause_reason is PauseReason.INTERRUPTED:
        return Decision(Outcome.RESUMED, N_("was running when the previous host stopped"))
    return _decide_auto(goal, now, blockers, policy)


def _decide_auto(
    goal: Goal, now: datetime, blockers: Mapping[str, datetime | None], policy: AutoResumePolicy
) -> Decision:
    if goal.pause_reason not in WAITS_FOR_RESET:
        return Decision(Outcome.REFUSED, N_("paused for {reason}: never auto-resumed").format(
            reason=_reason(goal)))
    plan = plan_resume(goal, goal.resets_at, now, policy, 0.0)
    if plan.next_resume_at is None:
        return Decision(Outcome.REFUSED, plan.note or NOTE_NO_RESET)
    if goal.next_resume_at is not None and now < goal.next_resume_at:
        rule = goal.deferred_by
        why = (N_("{rule}: not before the scheduled time").format(rule=rule) if rule
               else N_("not before the scheduled time"))
        return Decision(Outcome.DEFERRED, why, goal.next_resume_at, rule)
    if goal.pause_reason is PauseReason.BUDGET and goal.resets_at is not None and (
            now < goal.resets_at):
        # never in the episode that spent the budget, whatever moved the time
        return Decision(Outcome.DEFERRED, N_("{rule}: spent for this window period").format(
                            rule=RULE_BUDGET),
                        goal.resets_at + timedelta(seconds=policy.margin_seconds), RULE_BUDGET)
    if blockers:
        return _deferred_by_windows(now, blockers, policy)
    return Decision(Outcome.RESUMED, N_("quota recovered"))


def _deferred_by_windows(
    now: datetime, blockers: Mapping[str, datetime | None], policy: AutoResumePolicy
) -> Decision:
    names = ", ".join(sorted(blockers))
    expected = [when for when in blockers.values() if when is not None]
    if len(expected) < len(blockers) or not expected:
        # no reset known for some window: check again after the failure backoff
        return Decision(
            Outcome.DEFERRED, N_("quota not recovered: {windows}").format(windows=names),
            now + policy.failure_backoff
        )
    not_before = max(max(expected), now + timedelta(seconds=1))
    return Decision(Outcome.DEFERRED, N_("quota not recovered: {windows}").format(windows=names),
                    not_before)


def _reason(goal: Goal) -> str:
    return goal.pause_reason.value if goal.pause_reason else N_("unknown reason")
