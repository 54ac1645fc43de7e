"""Which history rows deserve a desktop notification, and what it says. Qt-free.

Six kinds, each switchable by its ``notify_<kind>`` setting: a goal was **resumed** automatically
(the one that matters most), was **relimited** soon after an automatic resume, Goalkeeper **gave
up** at the attempt cap, a resume was **scheduled** (with the time), a goal is **done**, a goal
**failed** (or could not be resumed). Manual actions are not announced — the user just did them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo
from enum import StrEnum

from core.models import HistoryRow, Outcome, Trigger
from core.settings import Settings
from core.textfmt import short_time


class Kind(StrEnum):
    RESUMED = "resumed"
    RELIMITED = "relimited"
    GAVE_UP = "gave_up"
    SCHEDULED = "scheduled"
    DONE = "done"
    FAILED = "failed"
    HINT = "hint"  # one-off app messages ("still running in the tray"); not switchable


@dataclass(frozen=True)
class Notification:
    kind: Kind
    title: str
    body: str
    goal: str | None = None


def enabled(settings: Settings, kind: Kind) -> bool:
    return kind is Kind.HINT or bool(getattr(settings, f"notify_{kind.value}"))


_RESUMED_BODY = {
    Trigger.AUTO: "The quota has refreshed; Goalkeeper resumed it at {at}.",
    Trigger.WAKE: "Resumed at {at}, after the computer woke up past its resume time.",
    Trigger.STARTUP: "Resumed at {at}: it was running when Goalkeeper last stopped.",
}


def notification_for(row: HistoryRow, title: str, now: datetime,
                     zone: tzinfo | None = None) -> Notification | None:
    """The notification ``row`` calls for (``title`` names its goal), or None."""
    at = short_time(row.at, now, zone)
    reason = row.reason or ""
    if row.event == "resumed" and row.trigger in _RESUMED_BODY:
        assert row.trigger is not None
        return Notification(Kind.RESUMED, f"Resumed: {title}",
                            _RESUMED_BODY[row.trigger].format(at=at), row.goal)
    if row.event == "paused" and row.detail.get("relimited"):
        return Notification(Kind.RELIMITED, f"Limited again: {title}",
                            f"{_sentence(reason)} It ran out of quota again soon after an "
                            "automatic resume.", row.goal)
    if row.event == "gave_up":
        return Notification(Kind.GAVE_UP, f"Gave up on: {title}",
                            f"{_sentence(reason)} It will not be resumed automatically; resume "
                            "it by hand when the quota allows.", row.goal)
    if row.event == "resume_scheduled":
        return _scheduled(row, title, now, zone)
    if row.event == "done":
        return Notification(Kind.DONE, f"Done: {title}", _sentence(reason or "Completed."),
                            row.goal)
    if row.event == "failed":
        return Notification(Kind.FAILED, f"Failed: {title}",
                            _sentence(reason or "The agent reported a failure."), row.goal)
    if row.event == "resume_requested" and row.outcome is Outcome.FAILED:
        return Notification(Kind.FAILED, f"Could not resume: {title}",
                            f"{_sentence(reason)} It is paused again and will be retried "
                            "automatically if auto-resume is on.", row.goal)
    return None


def _scheduled(row: HistoryRow, title: str, now: datetime,
               zone: tzinfo | None) -> Notification | None:
    raw = row.detail.get("not_before")
    if not isinstance(raw, str) or "slot_free" in row.detail:
        return None  # a freed resume slot: the resume itself follows at once, and says so
    when = short_time(datetime.fromisoformat(raw), now, zone)
    reason = row.reason or ""
    body = _SCHEDULED_BODY.get(reason.split(" ", 1)[0], _SCHEDULED_BODY["quota"])
    if row.detail.get("rule") == "allowed hours":
        body += " That is the start of its allowed hours."
    return Notification(Kind.SCHEDULED, f"{title} will resume at {when}", body, row.goal)


_SCHEDULED_BODY = {
    "quota": "Out of quota; Goalkeeper resumes it automatically once the quota has refreshed.",
    "reserve": "Paused at your reserve of the window; Goalkeeper resumes it automatically when "
               "the window resets.",
    "budget": "It spent its budget of the window; Goalkeeper resumes it automatically in the "
              "next window period.",
}


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."
