"""Which history rows are notifications, of which kind, and what they say. Qt-free.

The one classification the tray and every remote channel share. A goal was **resumed**
automatically (scheduler, wake, start-up), was **relimited** soon after an automatic resume,
Goalkeeper **gave up** at the attempt cap, a resume was **scheduled** (with the time), a goal is
**done**, **failed**, or **could not be resumed**; a run Goalkeeper started stopped paused for
``auth`` or ``error`` and **needs attention** (a blocked pipeline run: nothing resumes it until the
user does); a pipeline goal **rested** after a finished run. Manual actions are not announced —
the user just did them.

Titles and messages are in the host's language (:mod:`core.i18n`), for the tray, ntfy and the
webhook alike; the webhook's ``kind``, ``goal`` and the other keys never change.
"""

from __future__ import annotations

import unicodedata
from datetime import datetime, tzinfo

from core.i18n import N_, _, localized
from core.i18n.textfmt import short_time
from core.models import Goal, HistoryEvent, HistoryRow, Outcome, PauseReason, Trigger
from core.notices import SPECS, Kind, Notification
from core.settings import Settings

_RESUMED_BODY = {
    Trigger.AUTO: N_("The quota has refreshed; Goalkeeper resumed it at {at}."),
    Trigger.WAKE: N_("Resumed at {at}, after the computer woke up past its resume time."),
    Trigger.STARTUP: N_("Resumed at {at}: it was running when Goalkeeper last stopped."),
}


def enabled(settings: Settings, kind: Kind) -> bool:
    """The kind's switch (``notify_<kind>``); a test message is always on."""
    switch = SPECS[kind].switch
    return switch is None or bool(getattr(settings, switch))


def notification_for(row: HistoryRow, goal: Goal | None, now: datetime,
                     zone: tzinfo | None = None) -> Notification | None:
    """The notification ``row`` calls for, or None. ``goal`` is the goal as it stands after the
    row (its title, provider, next resume); times in the text are local to ``zone``."""
    title = goal.title if goal else (row.goal or _("a goal"))
    found = (_queued(row, goal, title, now, zone) if goal is not None and goal.steering.queued
             else _kind_and_text(row, title, now, zone))
    if found is None:
        return None
    kind, title, message = found
    return Notification(kind, title, message, row.at, row.goal,
                        goal.title if goal else None, goal.provider if goal else None,
                        _next_resume(row, goal), _url(goal))


def _kind_and_text(row: HistoryRow, title: str, now: datetime,
                   zone: tzinfo | None) -> tuple[Kind, str, str] | None:
    reason = localized(row.reason or "")
    if row.event is HistoryEvent.RESUMED and row.trigger in _RESUMED_BODY:
        assert row.trigger is not None
        at = short_time(row.at, now, zone)
        return (Kind.RESUMED, _("Resumed: {title}").format(title=title),
                _(_RESUMED_BODY[row.trigger]).format(at=at))
    if row.event is HistoryEvent.PAUSED and row.detail.get("relimited"):
        return (Kind.RELIMITED, _("Limited again: {title}").format(title=title),
                _("{reason} It ran out of quota again soon after an automatic resume.").format(
                    reason=_sentence(reason)).strip())
    if row.event is HistoryEvent.GAVE_UP:
        return (Kind.GAVE_UP, _("Gave up on: {title}").format(title=title),
                _("{reason} It will not be resumed automatically; resume it by hand when the "
                  "quota allows.").format(reason=_sentence(reason)).strip())
    if row.event is HistoryEvent.RESUME_SCHEDULED:
        return _scheduled(row, title, now, zone)
    if row.event is HistoryEvent.DONE:
        return (Kind.DONE, _("Done: {title}").format(title=title),
                _sentence(reason or _("Completed.")))
    if row.event is HistoryEvent.FAILED:
        return (Kind.FAILED, _("Failed: {title}").format(title=title),
                _sentence(reason or _("The agent reported a failure.")))
    if row.event is HistoryEvent.PAUSED and row.detail.get("pause_reason") in _ATTENTION_BODY:
        return (Kind.NEEDS_ATTENTION, _("Needs attention: {title}").format(title=title),
                _(_ATTENTION_BODY[row.detail["pause_reason"]]).format(
                    reason=_sentence(reason)).strip())
    if row.event is HistoryEvent.RESTED and not row.detail.get("idle_again"):
        return (Kind.RESTED, _("Run finished: {title}").format(title=title),
                _("{reason} It waits for its next run.").format(
                    reason=_sentence(reason)).strip())
    if row.event is HistoryEvent.RESUME_REQUESTED and row.outcome is Outcome.FAILED:
        return (Kind.COULD_NOT_RESUME, _("Could not resume: {title}").format(title=title),
                _("{reason} It is paused again and will be retried automatically if auto-resume "
                  "is on.").format(reason=_sentence(reason)).strip())
    return None


def _queued(row: HistoryRow, goal: Goal, title: str, now: datetime,
            zone: tzinfo | None) -> tuple[Kind, str, str] | None:
    """New work queued for a window's reset (``goalkeeper queue``): it *starts* then; nothing
    ran out of quota. Its other rows read as any goal's."""
    queued = goal.steering.queued
    when = _not_before(row)
    if row.event is not HistoryEvent.RESUME_SCHEDULED or queued is None or when is None:
        return _kind_and_text(row, title, now, zone)
    return (Kind.SCHEDULED, _("{title} will start at {time}").format(
                title=title, time=short_time(when, now, zone)),
            _("Queued to start right after {window} resets, once a fresh reading shows the new "
              "period.").format(window=queued.window))


def _scheduled(row: HistoryRow, title: str, now: datetime,
               zone: tzinfo | None) -> tuple[Kind, str, str] | None:
    when = _not_before(row)
    if when is None or "slot_free" in row.detail:
        return None  # a freed resume slot: the resume itself follows at once, and says so
    reason = row.reason or ""
    body = _(_SCHEDULED_BODY.get(reason.split(" ", 1)[0], _SCHEDULED_BODY["quota"]))
    if row.detail.get("rule") == "allowed hours":
        body += _(" That is the start of its allowed hours.")
    return (Kind.SCHEDULED, _("{title} will resume at {time}").format(
                title=title, time=short_time(when, now, zone)), body)


#: a runner's pause (the row's ``detail.pause_reason``, see ``core.goals.intake.decide_report``)
#: that
#: waits for the user: never resumed automatically
_ATTENTION_BODY = {
    PauseReason.AUTH.value: N_("{reason} It is paused until you sign in again and resume it."),
    PauseReason.ERROR.value: N_("{reason} It is paused and not resumed automatically: resume it "
                                "once the problem is fixed."),
}

_SCHEDULED_BODY = {
    "quota": N_("Out of quota; Goalkeeper resumes it automatically once the quota has refreshed."),
    "reserve": N_("Paused at your reserve of the window; Goalkeeper resumes it automatically "
                  "when the window resets."),
    "budget": N_("It spent its budget of the window; Goalkeeper resumes it automatically in the "
                 "next window period."),
}


def _not_before(row: HistoryRow) -> datetime | None:
    raw = row.detail.get("not_before")
    if not isinstance(raw, str):
        return None
    try:
        return datetime.fromisoformat(raw)
    except ValueError:
        return None


def _next_resume(row: HistoryRow, goal: Goal | None) -> datetime | None:
    if row.event is HistoryEvent.RESUME_SCHEDULED:
        return _not_before(row)
    return goal.next_resume_at if goal is not None else None


def _url(goal: Goal | None) -> str | None:
    url = goal.data.get("url") if goal is not None else None
    if isinstance(url, str) and url.startswith(("https://", "http://")):
        return url
    return None


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    if text.endswith((".", "!", "?", "。", "！", "？")):
        return text
    return text + ("。" if _wide(text[-1]) else ".")


def _wide(char: str) -> bool:
    """A CJK character: a Chinese sentence ends with "。"."""
    return unicodedata.east_asian_width(char) in ("W", "F")
