"""The window's wording: results in the engine's words, countdowns, quota badges, history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from core.commands import COMMANDS, ActionResult, Resume
from core.models import Exactness, GoalState, HistoryRow, Outcome, PauseReason, QuotaKind, Trigger
from gui import format as fmt
from tests.gui.factories import T0, goal, quota_paused
from tests.support.fakes import reading

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.mark.parametrize(("verb", "outcome", "reason", "text"), [
    ("resume", Outcome.RESUMED, "resumed", "Resumed"),
    ("resume", Outcome.RESUMED, "the agent was already working on it",
     "Resumed (the agent was already working on it)"),
    ("resume", Outcome.RESUMED, "already done", "Already done (the agent had finished it)"),
    ("start", Outcome.RESUMED, "started", "Started"),
    ("resume", Outcome.ALREADY_RUNNING, "already running", "Already running"),
    ("resume", Outcome.ALREADY_RESUMING, "a resume is already in progress", "Already resuming"),
    ("pause", Outcome.REFUSED, "refused: cancelled", "Refused: cancelled"),
    ("resume", Outcome.REFUSED, "not paused: done", "Refused: not paused: done"),
    ("resume", Outcome.FAILED, "the agent refused to start",
     "Failed: the agent refused to start"),
    ("pause", Outcome.PAUSED, "paused", "Paused"),
    ("pause", Outcome.ALREADY_PAUSED, "already paused by the user", "Already paused"),
    ("cancel", Outcome.CANCELLED, "cancelled", "Cancelled"),
    ("auto-resume", Outcome.UPDATED, "auto-resume on", "Auto-resume on"),
    ("auto-resume", Outcome.UNCHANGED, "auto-resume already off", "Auto-resume already off"),
    ("resume", Outcome.UNKNOWN_GOAL, "unknown goal", "Unknown goal"),
])
def test_result_text(verb: str, outcome: Outcome, reason: str, text: str) -> None:
    command = COMMANDS[verb](goal="g")
    assert fmt.result_text(command, ActionResult("g", outcome, reason)) == text


def test_deferred_says_until_when_in_local_time() -> None:
    result = ActionResult("g", Outcome.DEFERRED, "quota not recovered: codex:5h",
                          not_before=datetime(2026, 7, 7, 16, 40, tzinfo=UTC))
    text = fmt.result_text(Resume("g"), result, BERLIN, now=T0)
    assert text == "Deferred until 18:40 (quota not recovered: codex:5h)"
    later = fmt.result_text(Resume("g"), result, BERLIN, now=T0 - timedelta(days=1))
    assert later.startswith("Deferred until tomorrow 18:40")


def test_next_resume_column() -> None:
    now = T0
    assert fmt.next_resume_text(quota_paused(in_seconds=6442), now) == "in 1:47:22"
    assert fmt.next_resume_text(quota_paused(in_seconds=2 * 86400 + 5), now) == (
        "in 2d 00:00:05")
    assert fmt.next_resume_text(quota_paused(in_seconds=-3), now) == "due now"
    for note in ("no reset time known", "beyond max wait", "attempt cap reached (3/3)",
                 "Claude will resume itself"):
        assert fmt.next_resume_text(quota_paused(in_seconds=None, auto_resume_note=note),
                                    now) == note
    assert fmt.next_resume_text(goal(state=GoalState.RUNNING), now) == ""
    assert fmt.next_resume_text(goal(state=GoalState.RESUMING), now) == "resuming…"


def test_next_resume_tooltip_gives_local_date_and_time() -> None:
    tip = fmt.next_resume_tooltip(quota_paused(in_seconds=3600, resets_at=T0), T0, BERLIN)
    assert tip == ("Automatic resume not before Tue 2026-07-07 15:00:00 CEST\n"
                   "Quota resets Tue 2026-07-07 14:00:00 CEST")


def test_reason_text() -> None:
    assert fmt.reason_text(goal(state=GoalState.PAUSED, pause_reason=PauseReason.QUOTA,
                                pause_detail="5-hour limit")) == "quota: 5-hour limit"
    assert fmt.reason_text(goal(state=GoalState.RUNNING)) == ""


def test_quota_texts() -> None:
    r = reading("codex:5h", 43.4, T0 - timedelta(minutes=12), T0 + timedelta(seconds=6442))
    assert fmt.used_text(r) == "43 % used"
    assert fmt.reset_text(r, T0) == "resets in 1:47:22"
    assert fmt.exactness_text(r, T0) == "exact"
    stale = r.model_copy(update={"exactness": Exactness.STALE})
    assert fmt.exactness_text(stale, T0) == "stale · 12 min"
    capacity = reading("user:api", 50, T0, None, kind=QuotaKind.CAPACITY)
    assert fmt.reset_text(capacity, T0) == "no timed reset"
    noted = reading("codex:credits", 100, T0, None, note="credits depleted: no timed reset")
    assert fmt.reset_text(noted, T0) == "credits depleted: no timed reset"
    tip = fmt.reset_tooltip(r, T0, BERLIN)
    assert "Resets Tue 2026-07-07 15:47:22 CEST" in tip and "(12 min ago)" in tip


@pytest.mark.parametrize(("used", "exhausted", "level"), [
    (10, False, "ok"), (70, False, "warn"), (90, False, "high"), (95, True, "exhausted"),
])
def test_gauge_level(used: float, exhausted: bool, level: str) -> None:
    assert fmt.level(reading("w", used, T0), exhausted, 90) == level


def test_history_texts() -> None:
    row = HistoryRow(at=T0, goal="g", event="resume_requested", trigger=Trigger.MANUAL,
                     origin="cli", outcome=Outcome.DEFERRED, reason="quota not recovered",
                     quotas=({"window": "codex:5h", "used_percent": 100.0,
                              "exactness": "exact"},))
    assert fmt.event_text(row) == "resume requested"
    assert fmt.trigger_text(row) == "manual (CLI)"
    assert fmt.outcome_text(row) == "deferred"
    assert fmt.quota_text(row) == "codex:5h 100 % (exact)"
    moved = HistoryRow(at=T0, goal="g", event="resumed", trigger=Trigger.AUTO,
                       origin="scheduler", state_from=GoalState.RESUMING,
                       state_to=GoalState.RUNNING)
    assert fmt.trigger_text(moved) == "auto (scheduler)"
    assert fmt.outcome_text(moved) == "resuming → running"
    assert fmt.trigger_text(HistoryRow(at=T0, goal=None, event="quota_recovered")) == ""


def test_every_transition_of_the_goal_machine_has_a_history_label() -> None:
    from core.goals.machine import HISTORY_EVENT
    from gui.format import EVENT_LABELS

    assert set(HISTORY_EVENT.values()) <= set(EVENT_LABELS)
