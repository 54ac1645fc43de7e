"""What the window says: goals, action results, quota readings and history rows as text.

Pure functions over core values and an explicit ``now`` / ``zone``, so every wording is tested
without a widget. ``zone=None`` means the system's local zone.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from core.commands import ActionResult, Command, SetAutoResume, SetGoalPolicy, Start
from core.goals import budget
from core.goals.marks import last_run_seconds
from core.i18n import localized
from core.i18n.textfmt import age, countdown, duration, long_time, short_time
from core.i18n.words import word
from core.models import (
    Exactness,
    Goal,
    GoalState,
    HistoryEvent,
    HistoryRow,
    Outcome,
    QuotaReading,
    Trigger,
)
from gui.i18n import QT_TR_NOOP, tr

VERB_LABELS = {
    "resume": QT_TR_NOOP("Resume"),
    "start": QT_TR_NOOP("Start"),
    "pause": QT_TR_NOOP("Pause"),
    "cancel": QT_TR_NOOP("Cancel"),
    "auto_resume": QT_TR_NOOP("Auto-resume"),
    "goal_set": QT_TR_NOOP("Resume policy"),
    "refresh": QT_TR_NOOP("Refresh"),
}


# -- goals -------------------------------------------------------------------------------------


def state_text(goal: Goal) -> str:
    """The state badge: ``running``, ``paused``, ... (the reason has its own column)."""
    return word(goal.state)


def reason_text(goal: Goal) -> str:
    if goal.state not in (GoalState.PAUSED, GoalState.RESUMING) or goal.pause_reason is None:
        return ""
    if goal.pause_detail:
        return tr("{reason}: {detail}").format(reason=word(goal.pause_reason),
                                               detail=localized(goal.pause_detail))
    return word(goal.pause_reason)


def next_resume_text(goal: Goal, now: datetime, zone: tzinfo | None = None) -> str:
    """``in 0:42``, ``due now``, ``at 18:00 (allowed hours)`` when a resume policy moved it, or
    why no automatic resume is scheduled."""
    if goal.next_resume_at is not None and goal.state is GoalState.PAUSED:
        if goal.next_resume_at <= now:
            return tr("due now")
        if goal.deferred_by:
            return tr("at {time} ({rule})").format(time=short_time(goal.next_resume_at, now, zone),
                                                   rule=localized(goal.deferred_by))
        return countdown(goal.next_resume_at, now)
    if goal.state is GoalState.PAUSED:
        if goal.auto_resume_note:
            return localized(goal.auto_resume_note)
        return tr("auto-resume off") if not goal.auto_resume else ""
    if goal.state is GoalState.RESUMING:
        return tr("resuming…")
    return ""


def next_resume_tooltip(goal: Goal, now: datetime, zone: tzinfo | None = None) -> str:
    if goal.next_resume_at is not None and goal.state is GoalState.PAUSED:
        text = tr("Automatic resume not before {when}").format(
            when=long_time(goal.next_resume_at, zone))
        if goal.deferred_by:
            text += tr(" ({rule})").format(rule=localized(goal.deferred_by))
        if goal.resets_at is not None:
            text += "\n" + tr("Quota resets {when}").format(when=long_time(goal.resets_at, zone))
        return text
    return next_resume_text(goal, now, zone)


def budget_text(goal: Goal, now: datetime) -> str:
    """``12 % of fake:5h this period (budget 20 %)`` — what the goal spent of its budget."""
    if goal.policy.budget_percent is None:
        return ""
    spent = budget.spent(goal, now)
    limit = tr("budget {percent} %").format(percent=f"{goal.policy.budget_percent:g}")
    if not spent:
        return tr("nothing this period ({budget})").format(budget=limit)
    parts = [tr("{percent} % of {window}").format(percent=f"{s.percent:.0f}", window=s.window_id)
             for s in spent]
    return tr("{spent} this period ({budget})").format(spent=tr(", ").join(parts), budget=limit)


def last_run_text(goal: Goal) -> str:
    """``ran 1:30:00 on the last window`` — for a goal that paused for quota after a run."""
    seconds = last_run_seconds(goal)
    if seconds is None:
        return ""
    return tr("ran {duration} on the last window").format(duration=duration(seconds))


def attempts_text(goal: Goal, cap: int) -> str:
    return f"{goal.attempts}/{cap}"


def last_change_instant(goal: Goal) -> datetime:
    return goal.state_since or goal.updated_at


def last_change_text(goal: Goal, now: datetime, zone: tzinfo | None = None) -> str:
    return short_time(last_change_instant(goal), now, zone)


# -- action results ----------------------------------------------------------------------------


def result_text(command: Command, result: ActionResult, zone: tzinfo | None = None,
                now: datetime | None = None) -> str:
    """``Already running``, ``Deferred until 18:40``, ``Refused: cancelled`` — from the result."""
    reason = result.reason.strip()
    outcome = result.outcome
    if outcome is Outcome.DEFERRED:
        when = (short_time(result.not_before, now or result.not_before, zone)
                if result.not_before else tr("later"))
        if reason:
            return tr("Deferred until {when} ({reason})").format(when=when,
                                                                 reason=localized(reason))
        return tr("Deferred until {when}").format(when=when)
    if outcome is Outcome.QUEUED and result.not_before:
        when = short_time(result.not_before, now or result.not_before, zone)
        return tr("Queued: starts at {when}").format(when=when)
    if outcome is Outcome.REFUSED:
        refused = _strip_prefix(reason, "refused:")
        return tr("Refused: {reason}").format(
            reason=localized(refused) if refused else tr("not allowed"))
    if outcome is Outcome.FAILED:
        return tr("Failed: {reason}").format(
            reason=localized(reason) if reason else tr("the agent could not be started"))
    if outcome is Outcome.RESUMED:
        return _resumed_text(command, reason)
    if outcome is Outcome.UPDATED and isinstance(command, SetAutoResume | SetGoalPolicy):
        return _capitalised(localized(reason))
    if outcome is Outcome.UNCHANGED:
        return _capitalised(localized(reason)) if reason else tr("Unchanged")
    if outcome in _FIXED:
        return tr(_FIXED[outcome])
    return _capitalised(word(outcome))


_FIXED = {
    Outcome.ALREADY_RUNNING: QT_TR_NOOP("Already running"),
    Outcome.ALREADY_RESUMING: QT_TR_NOOP("Already resuming"),
    Outcome.ALREADY_PAUSED: QT_TR_NOOP("Already paused"),
    Outcome.PAUSED: QT_TR_NOOP("Paused"),
    Outcome.CANCELLED: QT_TR_NOOP("Cancelled"),
    Outcome.UNKNOWN_GOAL: QT_TR_NOOP("Unknown goal"),
    Outcome.UPDATED: QT_TR_NOOP("Updated"),
}


def _resumed_text(command: Command, reason: str) -> str:
    if isinstance(command, Start):
        return tr("Started")
    if reason == "already done":
        return tr("Already done (the agent had finished it)")
    if reason and reason != "resumed":
        return tr("Resumed ({reason})").format(reason=localized(reason))
    return tr("Resumed")


def _strip_prefix(text: str, prefix: str) -> str:
    return text[len(prefix):].strip() if text.lower().startswith(prefix) else text


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def result_is_success(result: ActionResult) -> bool:
    return result.outcome.carried_out


# -- quota -------------------------------------------------------------------------------------


def used_text(reading: QuotaReading) -> str:
    if reading.used_percent is not None:
        return tr("{percent} % used").format(percent=f"{reading.used_percent:.0f}")
    if reading.used is not None and reading.limit:
        return tr("{used} of {limit} used").format(used=f"{reading.used:g}",
                                                   limit=f"{reading.limit:g}")
    return tr("usage unknown")


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
        return tr("resets {countdown}").format(countdown=countdown(reading.resets_at, now))
    if reading.note:
        return localized(reading.note)
    return tr("no timed reset") if reading.no_timed_reset or reading.kind.value == "capacity" \
        else tr("reset time unknown")


def reset_tooltip(reading: QuotaReading, now: datetime, zone: tzinfo | None = None) -> str:
    lines = [localized(reading.label)]
    if reading.resets_at is not None:
        lines.append(tr("Resets {when}").format(when=long_time(reading.resets_at, zone)))
    lines.append(tr("Read {when} ({age} ago)").format(
        when=long_time(reading.observed_at, zone),
        age=age((now - reading.observed_at).total_seconds())))
    if reading.note:
        lines.append(localized(reading.note))
    return "\n".join(lines)


def exactness_text(reading: QuotaReading, now: datetime) -> str:
    """The badge: ``exact``, ``inferred``, ``estimated``, or ``stale · 12 min``."""
    if reading.exactness is Exactness.STALE:
        return tr("stale · {age}").format(age=age((now - reading.observed_at).total_seconds()))
    return word(reading.exactness)


# -- history -----------------------------------------------------------------------------------

EVENT_LABELS: dict[str, str] = {  # by HistoryEvent; an unknown name just misses
    HistoryEvent.STARTED: QT_TR_NOOP("started"),
    HistoryEvent.PAUSED: QT_TR_NOOP("paused"),
    HistoryEvent.RESUMING: QT_TR_NOOP("resume claimed"),
    HistoryEvent.RESUMED: QT_TR_NOOP("resumed"),
    HistoryEvent.RESUME_FAILED: QT_TR_NOOP("back to paused"),
    HistoryEvent.DONE: QT_TR_NOOP("done"),
    HistoryEvent.CANCELLED: QT_TR_NOOP("cancelled"),
    HistoryEvent.FAILED: QT_TR_NOOP("failed"),
    HistoryEvent.RUNNING_EXTERNALLY: QT_TR_NOOP("running (outside Goalkeeper)"),
    HistoryEvent.RESET: QT_TR_NOOP("reset to idle"),
    HistoryEvent.RESTED: QT_TR_NOOP("run finished"),
    HistoryEvent.RESUME_REQUESTED: QT_TR_NOOP("resume requested"),
    HistoryEvent.PAUSE_REQUESTED: QT_TR_NOOP("pause requested"),
    HistoryEvent.CANCEL_REQUESTED: QT_TR_NOOP("cancel requested"),
    HistoryEvent.RESUME_SCHEDULED: QT_TR_NOOP("auto-resume scheduled"),
    HistoryEvent.RESUME_NOT_SCHEDULED: QT_TR_NOOP("not scheduled"),
    HistoryEvent.GAVE_UP: QT_TR_NOOP("gave up"),
    HistoryEvent.QUOTA_EXHAUSTED: QT_TR_NOOP("quota exhausted"),
    HistoryEvent.QUOTA_RECOVERED: QT_TR_NOOP("quota recovered"),
    HistoryEvent.DISCOVERED: QT_TR_NOOP("discovered"),
    HistoryEvent.REMOVED: QT_TR_NOOP("removed"),
    HistoryEvent.AUTO_RESUME_CHANGED: QT_TR_NOOP("auto-resume changed"),
    HistoryEvent.GOAL_POLICY_CHANGED: QT_TR_NOOP("resume policy changed"),
    HistoryEvent.PHONE_REFUSED: QT_TR_NOOP("phone command refused"),
}

TRIGGER_LABELS = {
    Trigger.MANUAL: QT_TR_NOOP("manual"),
    Trigger.AUTO: QT_TR_NOOP("auto"),
    Trigger.STARTUP: QT_TR_NOOP("start-up"),
    Trigger.WAKE: QT_TR_NOOP("wake"),
}

ORIGIN_LABELS = {"gui": QT_TR_NOOP("window"), "cli": QT_TR_NOOP("CLI"),
                 "scheduler": QT_TR_NOOP("scheduler"), "tray": QT_TR_NOOP("tray"),
                 "policy": QT_TR_NOOP("resume policy"), "phone": QT_TR_NOOP("phone")}


def event_text(row: HistoryRow) -> str:
    label = EVENT_LABELS.get(row.event)
    return tr(label) if label else row.event.replace("_", " ")


def trigger_text(row: HistoryRow) -> str:
    """``manual (window)``, ``manual (CLI)``, ``auto (scheduler)``, ``start-up``, ``wake``."""
    if row.trigger is None:
        return ""
    label = tr(TRIGGER_LABELS[row.trigger]) if row.trigger in TRIGGER_LABELS else word(
        row.trigger)
    origin = row.origin or ""
    origin = tr(ORIGIN_LABELS[origin]) if origin in ORIGIN_LABELS else origin
    return tr("{trigger} ({origin})").format(trigger=label, origin=origin) if origin else label


def outcome_text(row: HistoryRow) -> str:
    if row.outcome is not None:
        return word(row.outcome)
    if row.state_from is not None and row.state_to is not None:
        return f"{word(row.state_from)} → {word(row.state_to)}"
    return ""


def quota_text(row: HistoryRow) -> str:
    """The readings the decision was based on: ``demo:1m 100 % (exact)``."""
    parts = []
    for quota in row.quotas:
        used = quota.get("used_percent")
        used_part = f"{used:.0f} %" if isinstance(used, int | float) else "?"
        parts.append(tr("{window} {used} ({exactness})").format(
            window=quota.get("window", "?"), used=used_part,
            exactness=word(str(quota.get("exactness", "?")))))
    return tr("; ").join(parts)
