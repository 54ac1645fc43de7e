"""The resume policies at the one resume entry point.

:func:`review` runs inside the claim's ``BEGIN IMMEDIATE`` transaction, after
:func:`core.goals.auto_resume.decide_resume` said a resume may go ahead:

* an **automatic** resume of a goal waiting for a reset is held back — deferred, with the rule
  named in the reason and in :attr:`~core.goals.auto_resume.Decision.rule` — by its **budget**
  (spent in this
  window period), the **reserve** (a window has no more than R % left), the **allowed hours**
  (deferred to their next start), or the **slots** of its windows (K settling already, or
  better-ranked goals due too). The time-based holds are combined: the deferral is to the first
  instant all of them could pass, named after the rule that decided it.
* a **manual** resume is never held back; its reason says which rule it went past.
* restoring a run the previous host was running (``startup`` of an ``interrupted`` goal) is not a
  new resume: nothing holds it back.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

from core.goals import budget
from core.goals.auto_resume import WAITS_FOR_RESET, AutoResumePolicy, Decision
from core.goals.rules import (
    RULE_BUDGET,
    RULE_HOURS,
    RULE_RESERVE,
    Hold,
    ResumeRules,
    WindowLevel,
)
from core.goals.slots import SlotStore, check_slots
from core.i18n import N_
from core.models import Goal, Outcome, Trigger

#: when the next reset of a window over its reserve is unknown, ask again after this
_RESERVE_RECHECK = timedelta(minutes=5)


def review(decision: Decision, goal: Goal | None, trigger: Trigger, now: datetime,
           levels: tuple[WindowLevel, ...], policy: AutoResumePolicy,
           slots: SlotStore) -> Decision:
    if not decision.allowed or goal is None:
        return decision
    if trigger is Trigger.MANUAL:
        notes = manual_notes(goal, now, levels, policy.rules)
        if not notes:
            return decision
        note = "; ".join(notes)
        return dataclasses.replace(decision, reason=f"{decision.reason}; {note}", note=note)
    if goal.pause_reason not in WAITS_FOR_RESET:
        return decision
    hold = hold_back(goal, now, levels, policy, slots)
    if hold is None:
        return dataclasses.replace(decision, takes_slot=policy.rules.max_concurrent > 0)
    return Decision(Outcome.DEFERRED, hold.reason, hold.not_before, hold.rule)


def hold_back(goal: Goal, now: datetime, levels: tuple[WindowLevel, ...],
              policy: AutoResumePolicy, slots: SlotStore) -> Hold | None:
    """The rule that holds this automatic resume back now, if one does."""
    margin = timedelta(seconds=policy.margin_seconds)
    timed = [h for h in (budget_hold(goal, now, margin), *reserve_holds(levels, now, margin,
                                                                        policy.rules))
             if h is not None]
    hold = max(timed, key=lambda h: h.not_before) if timed else None
    hours = policy.rules.hours_for(goal)
    start = hold.not_before if hold is not None else now
    if hours is not None and not hours.allows(start):
        allowed = hours.next_allowed(start)
        later = allowed if allowed is not None else start + timedelta(days=1)
        why = f"{RULE_HOURS}: {hours.describe()}"
        if hold is not None:
            why += f" (and {hold.reason})"
        return Hold(RULE_HOURS, why, later)
    if hold is not None:
        return hold
    return check_slots(goal, now, policy.rules, slots)


def budget_hold(goal: Goal, now: datetime, margin: timedelta) -> Hold | None:
    over = budget.exceeded(goal, now)
    if over is None:
        return None
    why = N_("{rule}: {percent} % of {window} spent this period (budget {budget} %)").format(
        rule=RULE_BUDGET, percent=f"{over.percent:.0f}", window=over.window_id,
        budget=f"{goal.policy.budget_percent:g}")
    return Hold(RULE_BUDGET, why, over.until + margin)


def reserve_holds(levels: tuple[WindowLevel, ...], now: datetime, margin: timedelta,
                  rules: ResumeRules) -> list[Hold]:
    holds = []
    for level in levels:
        keep = rules.reserve_for(level.window_id)
        if keep <= 0 or level.used_percent is None or level.used_percent < 100 - keep:
            continue
        when = (level.resets_at + margin if level.resets_at is not None and level.resets_at > now
                else now + _RESERVE_RECHECK)
        holds.append(Hold(RULE_RESERVE, N_("{rule}: {why}").format(
            rule=RULE_RESERVE, why=_level_text(level, keep)), when))
    return holds


def manual_notes(goal: Goal, now: datetime, levels: tuple[WindowLevel, ...],
                 rules: ResumeRules) -> list[str]:
    """What a manual resume goes past — said in its result and its history row."""
    notes = []
    reached = [(level, keep) for level in levels
               if (keep := rules.reserve_for(level.window_id)) > 0
               and level.used_percent is not None and level.used_percent >= 100 - keep]
    if reached:
        notes.append(N_("ignoring the reserve: {levels}").format(
            levels="; ".join(_level_text(level, keep) for level, keep in reached)))
    elif any(rules.reserve_for(level.window_id) > 0 for level in levels):
        notes.append(N_("the reserve does not apply to a manual resume"))
    hours = rules.hours_for(goal)
    if hours is not None and not hours.allows(now):
        notes.append(N_("outside the allowed hours ({hours}): a manual resume is always "
                        "allowed").format(hours=hours.describe()))
    over = budget.exceeded(goal, now)
    if over is not None:
        notes.append(N_("its budget is spent ({percent} % of {window} this period): it will "
                        "not be paused for it").format(percent=f"{over.percent:.0f}",
                                                       window=over.window_id))
    return notes


def _level_text(level: WindowLevel, keep: float) -> str:
    used = level.used_percent or 0.0
    return N_("{window} {used} % used, {keep} % kept for you").format(
        window=level.window_id, used=f"{used:.0f}", keep=f"{keep:g}")
