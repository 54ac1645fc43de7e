"""What the window says: goals, action results, quota readings and history rows as text.

Pure functions over core values and an explicit ``now`` / ``zone``, so every wording is tested
without a widget. ``zone=None`` means the system's local zone.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from core.models import Exactness, Goal, GoalState, HistoryRow, Outcome, QuotaReading, Trigger
from core.policies import budget
from core.policies.marks import last_run_seconds
from core.results import ActionResult
from core.textfmt import age, countdown, duration, long_time, short_time

VERB_LABELS = {
    "resume": "Resume",
    "start": "Start",
    "pause": "Pause",
    "cancel": "Cancel",
    "auto_resume": "Auto-resume",
    "goal_set": "Resume policy",
    "refresh": "Refresh",
}


# -- goals -------------------------------------------------------------------------------------


def state_text(goal: Goal) -> str:
    """The state badge: ``running``, ``paused``, ... (the reason has its own column)."""
    return goal.state.value


def reason_text(goal: Goal) -> str:
    if goal.state not in (GoalState.PAUSED, GoalState.RESUMING) or goal.pause_reason is None:
        return ""
    if goal.pause_detail:
        return f"{goal.pause_reason.value}: {goal.pause_detail}"
    return goal.pause_reason.value


def next_resume_text(goal: Goal, now: datetime, zone: tzinfo | None = None) -> str:
    """``in 0:42``, ``due now``, ``at 18:00 (allowed hours)`` when a resume policy moved it, or
    why no automatic resume is scheduled."""
    if goal.next_resume_at is not None and goal.state is GoalState.PAUSED:
        if goal.next_resume_at <= now:
            return "due now"
        if goal.deferred_by:
            return f"at {short_time(goal.next_resume_at, now, zone)} ({goal.deferred_by})"
        return countdown(goal.next_resume_at, now)
    if goal.state is GoalState.PAUSED:
        return goal.auto_resume_note or ("auto-resume off" if not goal.auto_resume else "")
    if goal.state is GoalState.RESUMING:
        return "resuming…"
    return ""


def next_resume_tooltip(goal: Goal, now: datetime, zone: tzinfo | None = None) -> str:
    if goal.next_resume_at is not None and goal.state is GoalState.PAUSED:
        text = f"Automatic resume not before {long_time(goal.next_resume_at, zone)}"
        if goal.deferred_by:
            text += f" ({goal.deferred_by})"
        if goal.resets_at is not None:
            text += f"\nQuota resets {long_time(goal.resets_at, zone)}"
        return text
    return next_resume_text(goal, now, zone)


def budget_text(goal: Goal, now: datetime) -> str:
    """``12 % of fake:5h this period (budget 20 %)`` — what the goal spent of its budget."""
    if goal.policy.budget_percent is None:
        return ""
    spent = budget.spent(goal, now)
    limit = f"budget {goal.policy.budget_percent:g} %"
    if not spent:
        return f"nothing this period ({limit})"
    parts = [f"{s.percent:.0f} % of {s.window_id}" for s in spent]
    return f"{', '.join(parts)} this period ({limit})"


def last_run_text(goal: Goal) -> str:
    """``ran 1:30:00 on the last window`` — for a goal that paused for quota after a run."""
    seconds = last_run_seconds(goal)
    if seconds is None:
        return ""
    return f"ran {duration(seconds)} on the last window"


def attempts_text(goal: Goal, cap: int) -> str:
    return f"{goal.attempts}/{cap}"


def last_change_instant(goal: Goal) -> datetime:
    return goal.state_since or goal.updated_at


def last_change_text(goal: Goal, now: datetime, zone: tzinfo | None = None) -> str:
    return short_time(last_change_instant(goal), now, zone)


# -- action results ----------------------------------------------------------------------------


def result_text(verb: str, result: ActionResult, zone: tzinfo | None = None,
                now: datetime | None = None) -> str:
    """``Already running``, ``Deferred until 18:40``, ``Refused: cancelled`` — from the result."""
    reason = result.reason.strip()
    outcome = result.outcome
    if outcome is Outcome.DEFERRED:
        when = (short_time(result.not_before, now or result.not_before, zone)
                if result.not_before else "later")
        return f"Deferred until {when}" + (f" ({reason})" if reason else "")
    if outcome is Outcome.REFUSED:
        return f"Refused: {_strip_prefix(reason, 'refused:') or 'not allowed'}"
    if outcome is Outcome.FAILED:
        return f"Failed: {reason or 'the agent could not be started'}"
    if outcome is Outcome.RESUMED:
        return _resumed_text(verb, reason)
    if outcome is Outcome.UPDATED and verb in ("auto_resume", "goal_set"):
        return _capitalised(reason)
    if outcome is Outcome.UNCHANGED:
        return _capitalised(reason) if reason else "Unchanged"
    return _FIXED.get(outcome, _capitalised(outcome.value.replace("_", " ")))


_FIXED = {
    Outcome.ALREADY_RUNNING: "Already running",
    Outcome.ALREADY_RESUMING: "Already resuming",
    Outcome.ALREADY_PAUSED: "Already paused",
    Outcome.PAUSED: "Paused",
    Outcome.CANCELLED: "Cancelled",
    Outcome.UNKNOWN_GOAL: "Unknown goal",
    Outcome.UPDATED: "Updated",
}


def _resumed_text(verb: str, reason: str) -> str:
    if verb == "start":
        return "Started"
    if reason == "already done":
        return "Already done (the agent had finished it)"
    if reason and reason != "resumed":
        return f"Resumed ({reason})"
    return "Resumed"


def _strip_prefix(text: str, prefix: str) -> str:
    return text[len(prefix):].strip() if text.lower().startswith(prefix) else text


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def result_is_success(result: ActionResult) -> bool:
    return result.outcome.carried_out


# -- quota -------------------------------------------------------------------------------------


def used_text(reading: QuotaReading) -> str:
    if reading.used_percent is not None:
        return f"{reading.used_percent:.0f} % used"
    if reading.used is not None and reading.limit:
        return f"{reading.used:g} of {reading.limit:g} used"
    return "usage unknown"


def level(reading: QuotaReading, exhausted: bool, high_percent: float) -> str:
    """``ok`` / ``warn`` / ``high`` / ``exhausted`` — the gauge's colour."""
    used = reading.used_percent
    if exhausted or reading.limit_reached:
        return "exhausted"
    if used is None:
        return "ok"
    if used >= high_percent:
        return "high"
    if used >= 0.75 * high_percent:
        return "warn"
    return "ok"


def reset_text(reading: QuotaReading, now: datetime) -> str:
    """``resets in 1:47:22`` or why the window has no timed reset."""
    if reading.resets_at is not None:
        return f"resets {countdown(reading.resets_at, now)}"
    if reading.note:
        return reading.note
    return "no timed reset" if reading.no_timed_reset or reading.kind.value == "capacity" else (
        "reset time unknown")


def reset_tooltip(reading: QuotaReading, now: datetime, zone: tzinfo | None = None) -> str:
    lines = [reading.label]
    if reading.resets_at is not None:
        lines.append(f"Resets {long_time(reading.resets_at, zone)}")
    lines.append(f"Read {long_time(reading.observed_at, zone)} "
                 f"({age((now - reading.observed_at).total_seconds())} ago)")
    if reading.note:
        lines.append(reading.note)
    return "\n".join(lines)


def exactness_text(reading: QuotaReading, now: datetime) -> str:
    """The badge: ``exact``, ``inferred``, ``estimated``, or ``stale · 12 min``."""
    if reading.exactness is Exactness.STALE:
        return f"stale · {age((now - reading.observed_at).total_seconds())}"
    return reading.exactness.value


# -- history -----------------------------------------------------------------------------------

EVENT_LABELS = {
    "started": "started",
    "paused": "paused",
    "resuming": "resume claimed",
    "resumed": "resumed",
    "resume_failed": "back to paused",
    "done": "done",
    "cancelled": "cancelled",
    "failed": "failed",
    "running_externally": "running (outside Goalkeeper)",
    "resume_requested": "resume requested",
    "pause_requested": "pause requested",
    "cancel_requested": "cancel requested",
    "resume_scheduled": "auto-resume scheduled",
    "resume_not_scheduled": "not scheduled",
    "gave_up": "gave up",
    "quota_exhausted": "quota exhausted",
    "quota_recovered": "quota recovered",
    "discovered": "discovered",
    "removed": "removed",
    "auto_resume_changed": "auto-resume changed",
    "goal_policy_changed": "resume policy changed",
}

TRIGGER_LABELS = {
    Trigger.MANUAL: "manual",
    Trigger.AUTO: "auto",
    Trigger.STARTUP: "start-up",
    Trigger.WAKE: "wake",
}

ORIGIN_LABELS = {"gui": "window", "cli": "CLI", "scheduler": "scheduler", "tray": "tray",
                 "policy": "resume policy"}


def event_text(row: HistoryRow) -> str:
    return EVENT_LABELS.get(row.event, row.event.replace("_", " "))


def trigger_text(row: HistoryRow) -> str:
    """``manual (window)``, ``manual (CLI)``, ``auto (scheduler)``, ``start-up``, ``wake``."""
    if row.trigger is None:
        return ""
    label = TRIGGER_LABELS.get(row.trigger, row.trigger.value)
    origin = ORIGIN_LABELS.get(row.origin or "", row.origin or "")
    return f"{label} ({origin})" if origin else label


def outcome_text(row: HistoryRow) -> str:
    if row.outcome is not None:
        return row.outcome.value.replace("_", " ")
    if row.state_from is not None and row.state_to is not None:
        return f"{row.state_from.value} → {row.state_to.value}"
    return ""


def quota_text(row: HistoryRow) -> str:
    """The readings the decision was based on: ``demo:1m 100 % (exact)``."""
    parts = []
    for quota in row.quotas:
        used = quota.get("used_percent")
        used_part = f"{used:.0f} %" if isinstance(used, int | float) else "?"
        parts.append(f"{quota.get('window', '?')} {used_part} ({quota.get('exactness', '?')})")
    return "; ".join(parts)
