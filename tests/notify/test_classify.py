"""Which history rows are notifications, of which kind, with which switch — shared by all."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from core.models import Goal, HistoryRow, Outcome, Trigger
from core.notices import RANKED, SPECS, Kind, at_least, check_minimum
from core.notify.classify import enabled, notification_for
from core.settings import Settings

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 7, 7, 16, 0, tzinfo=UTC)
GOAL = Goal(id="g", provider="codex", title="Refactor", created_at=NOW, updated_at=NOW,
            next_resume_at=NOW + timedelta(hours=1), data={"url": "https://example.org/g"})


def row(event: str, **kw: Any) -> HistoryRow:
    return HistoryRow(at=NOW, goal="g", event=event, **kw)


def note(r: HistoryRow, goal: Goal | None = GOAL) -> tuple[Kind, str, str] | None:
    n = notification_for(r, goal, NOW, BERLIN)
    return (n.kind, n.title, n.message) if n else None


def test_which_rows_notify_and_what_they_say() -> None:
    assert note(row("resumed", trigger=Trigger.AUTO, origin="scheduler")) == (
        Kind.RESUMED, "Resumed: Refactor",
        "The quota has refreshed; Goalkeeper resumed it at 18:00.")
    assert note(row("resumed", trigger=Trigger.WAKE))[2].startswith(  # type: ignore[index]
        "Resumed at 18:00, after the computer woke up")
    assert note(row("resumed", trigger=Trigger.STARTUP))[0] is Kind.RESUMED  # type: ignore[index]
    assert note(row("resumed", trigger=Trigger.MANUAL, origin="gui")) is None
    assert note(row("paused", reason="quota: 5-hour limit", detail={"relimited": True})) == (
        Kind.RELIMITED, "Limited again: Refactor",
        "Quota: 5-hour limit. It ran out of quota again soon after an automatic resume.")
    assert note(row("paused", reason="quota: 5-hour limit", detail={"relimited": False})) is None
    assert note(row("gave_up", reason="attempt cap reached (3/3)"))[:2] == (  # type: ignore[index]
        Kind.GAVE_UP, "Gave up on: Refactor")
    scheduled = row("resume_scheduled", reason="quota exhausted",
                    detail={"not_before": (NOW + timedelta(hours=2, minutes=40)).isoformat()})
    assert note(scheduled)[:2] == (Kind.SCHEDULED,  # type: ignore[index]
                                   "Refactor will resume at 20:40")
    assert note(row("resume_scheduled", detail={"not_before": "soon"})) is None
    assert note(row("done", reason="all 6 units done")) == (
        Kind.DONE, "Done: Refactor", "All 6 units done.")
    assert note(row("failed", reason="agent crashed"))[:2] == (  # type: ignore[index]
        Kind.FAILED, "Failed: Refactor")
    assert note(row("resume_requested", outcome=Outcome.FAILED, trigger=Trigger.AUTO,
                    reason="the agent refused to start"))[:2] == (  # type: ignore[index]
        Kind.COULD_NOT_RESUME, "Could not resume: Refactor")
    assert note(row("resume_requested", outcome=Outcome.DEFERRED, trigger=Trigger.AUTO)) is None
    assert note(row("discovered")) is None



def test_a_run_that_stopped_on_a_problem_needs_attention_and_a_finished_round_rested() -> None:
    blocked = row("paused", origin="runner:pipeline", detail={"pause_reason": "auth"},
                  reason="run digest-1 blocked in delivering: auth failed")
    assert note(blocked) == (
        Kind.NEEDS_ATTENTION, "Needs attention: Refactor",
        "Run digest-1 blocked in delivering: auth failed. It is paused until you sign in again "
        "and resume it.")
    error = row("paused", origin="runner:codex", detail={"pause_reason": "error"},
                reason="error: codex app-server exited (code 1)")
    assert note(error)[2] == (  # type: ignore[index]
        "Error: codex app-server exited (code 1). It is paused and not resumed automatically: "
        "resume it once the problem is fixed.")
    for other in ("quota", "user", "external", "budget", "interrupted"):
        assert note(row("paused", detail={"pause_reason": other})) is None
    assert note(row("paused", reason="error: blocked")) is None  # seen in the agent's files
    assert note(row("rested", reason="run digest-1 completed: 3/3 sources, 12 items")) == (
        Kind.RESTED, "Run finished: Refactor",
        "Run digest-1 completed: 3/3 sources, 12 items. It waits for its next run.")
    assert note(row("rested", reason="no unfinished run to continue",
                    detail={"idle_again": True})) is None  # nothing ran


def test_a_notification_carries_the_goal_it_is_about() -> None:
    scheduled = row("resume_scheduled", detail={"not_before": "2026-07-07T18:40:00+00:00"})
    n = notification_for(scheduled, GOAL, NOW)
    assert n is not None
    assert (n.goal, n.goal_title, n.provider, n.at) == ("g", "Refactor", "codex", NOW)
    assert n.next_resume_at == datetime(2026, 7, 7, 18, 40, tzinfo=UTC)  # the row's, not the goal's
    assert n.url == "https://example.org/g"
    relimited = notification_for(row("paused", detail={"relimited": True}), GOAL, NOW)
    assert relimited is not None and relimited.next_resume_at == GOAL.next_resume_at
    # without the goal (already forgotten): its id stands in for the title, nothing else is known
    gone = notification_for(row("done"), None, NOW)
    assert gone is not None and gone.title == "Done: g" and gone.provider is None
    odd = GOAL.model_copy(update={"data": {"url": "javascript:alert(1)"}})
    assert notification_for(row("done"), odd, NOW).url is None  # type: ignore[union-attr]


def test_each_kind_has_its_switch_and_could_not_resume_shares_failed() -> None:
    for kind in RANKED:
        switch = SPECS[kind].switch
        assert switch is not None
        assert enabled(Settings(), kind)
        assert not enabled(Settings(**{switch: False}), kind)
    assert SPECS[Kind.COULD_NOT_RESUME].switch == "notify_failed"
    assert SPECS[Kind.NEEDS_ATTENTION].switch == "notify_needs_attention"
    assert SPECS[Kind.RESTED].switch == "notify_rested"
    assert enabled(Settings(notify_done=False, notify_failed=False), Kind.TEST)


def test_minimum_kind_admits_that_kind_and_the_more_urgent_ones() -> None:
    assert [k for k in RANKED if at_least(k, Kind.FAILED)] == [
        Kind.FAILED, Kind.NEEDS_ATTENTION, Kind.GAVE_UP]  # what waits for you ranks above
    assert [k for k in RANKED if not at_least(k, Kind.RESUMED)] == [Kind.SCHEDULED, Kind.RESTED]
    assert SPECS[Kind.NEEDS_ATTENTION].priority == 4 and SPECS[Kind.RESTED].priority == 2
    priorities = [SPECS[k].priority for k in RANKED]
    assert priorities == sorted(priorities)  # urgency order and ntfy priority agree
    assert all(at_least(k, Kind.SCHEDULED) for k in Kind)
    assert at_least(Kind.TEST, Kind.GAVE_UP)
    assert SPECS[Kind.GAVE_UP].priority == 4 and SPECS[Kind.SCHEDULED].priority < 3
    with pytest.raises(ValueError, match="cannot be a minimum kind"):
        check_minimum(Kind.TEST)


def test_scheduled_notifications_say_which_rule_planned_the_resume() -> None:
    now = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)

    def note(reason: str, **detail: Any) -> Any:
        row = HistoryRow(at=now, goal="g", event="resume_scheduled", reason=reason,
                         detail={"not_before": (now + timedelta(hours=2)).isoformat(), **detail})
        return notification_for(row, None, now, UTC)

    reserve = note("reserve reached")
    assert reserve.kind is Kind.SCHEDULED and reserve.message.startswith("Paused at your reserve")
    assert note("budget spent").message.startswith("It spent its budget of the window")
    hours = note("quota exhausted; allowed hours: Mon-Fri 19:00-08:00 (UTC)",
                 rule="allowed hours")
    assert hours.message.endswith("That is the start of its allowed hours.")
    assert note("quota exhausted").message.startswith("Out of quota")
    assert note("a resume slot is free: fake:5h", slot_free=["fake:5h"]) is None


def test_a_queued_start_is_announced_as_a_start_not_as_a_resume() -> None:
    """New work queued for a reset (issue 23) ran out of nothing: its scheduled row says when it
    starts and why, and its other rows read as any goal's."""
    from core.models import QueuedStart, Steering

    after = NOW + timedelta(hours=2, minutes=40)
    queued = GOAL.model_copy(update={"steering": Steering(
        queued=QueuedStart(window="codex:5h", after=after))})
    planned = row("resume_scheduled", reason="starts after codex:5h resets",
                  detail={"not_before": after.isoformat()})
    assert note(planned, queued) == (
        Kind.SCHEDULED, "Refactor will start at 20:40",
        "Queued to start right after codex:5h resets, once a fresh reading shows the new "
        "period.")
    assert note(row("done", reason="all 6 units done"), queued) == (
        Kind.DONE, "Done: Refactor", "All 6 units done.")
