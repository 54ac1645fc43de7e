"""The reserve: automatic resumes need more than R % left; a goal Goalkeeper resumed is paused at
100 − R % and waits for the reset; a manual resume ignores it and says so."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from core.commands import Resume
from core.models import GoalState, Outcome, PauseReason, Trigger
from tests.policies.support import WINDOW, H, policy_settings, report, rows, started, waiting
from tests.support.fakes import advance

pytestmark = pytest.mark.asyncio


async def test_an_automatic_resume_waits_while_the_reserve_is_reached(make_engine, fake,
                                                                      clock) -> None:
    reset = waiting(fake, clock, fresh_used=75)  # someone used 75 % of the fresh window
    engine = await make_engine(fake, settings=policy_settings(resume_reserve_percent=30))
    await advance(engine, clock, H + 46)
    assert started(fake) == []
    g = engine.goals["fake:g"]
    assert g.state is GoalState.PAUSED and g.deferred_by == "reserve"
    assert g.next_resume_at == reset + timedelta(hours=5, seconds=45)  # the next reset
    row = (await rows(engine, "fake:g"))[0]
    assert row.outcome is Outcome.DEFERRED and row.detail["rule"] == "reserve"
    assert row.reason == "reserve: fake:5h 75 % used, 30 % kept for you"


async def test_more_than_the_reserve_left_resumes(make_engine, fake, clock) -> None:
    waiting(fake, clock, fresh_used=69)
    engine = await make_engine(fake, settings=policy_settings(resume_reserve_percent=30))
    await advance(engine, clock, H + 46)
    assert started(fake) == ["fake:g"]


async def test_a_window_override_replaces_the_global_reserve(make_engine, fake, clock) -> None:
    waiting(fake, clock, fresh_used=75)
    engine = await make_engine(fake, settings=policy_settings(
        resume_reserve_percent=30, resume_reserve_by_window={WINDOW: 10}))
    await advance(engine, clock, H + 46)
    assert started(fake) == ["fake:g"]


async def test_a_manual_resume_ignores_the_reserve_and_says_so(make_engine, fake, clock) -> None:
    waiting(fake, clock, fresh_used=75)
    engine = await make_engine(fake, settings=policy_settings(resume_reserve_percent=30))
    await advance(engine, clock, H + 46)
    result = await engine.perform(Resume("fake:g"), "cli")
    assert result.outcome is Outcome.RESUMED
    assert result.reason == "ignoring the reserve: fake:5h 75 % used, 30 % kept for you"
    claim = (await rows(engine, "fake:g"))[0]
    assert claim.trigger is Trigger.MANUAL and "ignoring the reserve" in (claim.reason or "")
    # ... and the run it started is the user's: reaching 100 − R does not pause it
    await report(engine, fake, clock, 90, clock.now() + timedelta(hours=4))
    assert engine.goals["fake:g"].state is GoalState.RUNNING and fake.paused == []


async def test_a_goal_goalkeeper_resumed_is_paused_at_the_reserve(make_engine, fake,
                                                                  clock) -> None:
    waiting(fake, clock, fresh_used=3)
    engine = await make_engine(fake, settings=policy_settings(resume_reserve_percent=30))
    await advance(engine, clock, H + 46)
    assert engine.goals["fake:g"].state is GoalState.RUNNING
    next_reset = clock.now() + timedelta(hours=4)
    await report(engine, fake, clock, 69, next_reset)
    assert engine.goals["fake:g"].state is GoalState.RUNNING
    await advance(engine, clock, 600)
    await report(engine, fake, clock, 70, next_reset)
    g = engine.goals["fake:g"]
    assert g.state is GoalState.PAUSED and g.pause_reason is PauseReason.QUOTA
    assert (g.pause_detail or "").startswith("reserve: fake:5h 70 % used, 30 % kept for you")
    assert fake.paused == ["fake:g"]  # the provider was asked to stop it
    # it waits for the next reset like any quota pause
    assert g.next_resume_at == next_reset + timedelta(seconds=45) and g.attempts == 0
    assert g.steering.last_run is not None and g.steering.last_run.seconds == 600
    paused = (await rows(engine, "fake:g", "paused"))[0]
    assert paused.origin == "policy" and paused.detail == {"rule": "reserve"}
    assert (await rows(engine, "fake:g", "resume_scheduled"))[0].reason == "reserve reached"
    # the agent showing the goal paused (by us) does not turn it into an external pause
    fake.observe("fake:g", GoalState.PAUSED, reason=PauseReason.EXTERNAL, windows=(WINDOW,))
    await engine.refresh()
    await advance(engine, clock, 1)
    assert engine.goals["fake:g"].pause_reason is PauseReason.QUOTA
    # after the reset it is resumed again
    fake.level["used"] = 0  # type: ignore[attr-defined]
    await advance(engine, clock, 4 * H - 600 + 46)
    assert started(fake) == ["fake:g", "fake:g"]


async def test_without_a_reserve_nothing_is_paused(make_engine, fake, clock) -> None:
    waiting(fake, clock, fresh_used=3)
    engine = await make_engine(fake, settings=policy_settings())
    await advance(engine, clock, H + 46)
    await report(engine, fake, clock, 99, clock.now() + timedelta(hours=4))
    assert engine.goals["fake:g"].state is GoalState.RUNNING


async def test_a_manual_resume_past_two_reserves_names_both_as_notes() -> None:
    """Each window over its reserve is a note of its own ("; "-joined), so the text can be
    shown translated note by note (core.i18n.catalogue)."""
    from datetime import UTC, datetime

    from core.goals.gate import manual_notes
    from core.goals.rules import ResumeRules, WindowLevel
    from core.i18n import localized, use_language
    from core.models import Goal

    rules = ResumeRules(reserve_percent=30.0, reserve_by_window=(("codex:weekly", 10.0),))
    levels = (WindowLevel("codex:5h", 75.0, None), WindowLevel("codex:weekly", 95.0, None))
    now = datetime(2026, 7, 7, tzinfo=UTC)
    goal = Goal(id="g", provider="fake", title="t", created_at=now, updated_at=now)
    [note] = manual_notes(goal, now, levels, rules)
    assert note == ("ignoring the reserve: codex:5h 75 % used, 30 % kept for you; "
                    "codex:weekly 95 % used, 10 % kept for you")
    use_language("zh_CN")
    assert localized(note) == ("忽略预留：codex:5h 已用 75 %，为你预留 30 %；"
                               "codex:weekly 已用 95 %，为你预留 10 %")



async def test_the_host_logs_once_a_reserve_no_window_has(make_engine, fake, clock,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    waiting(fake, clock, fresh_used=10)
    caplog.set_level(logging.WARNING, logger="goalkeeper")
    engine = await make_engine(fake, settings=policy_settings(resume_reserve_by_window={
        WINDOW: 10, "quota:nightlly": 5, "codex:weekly": 20}))
    await advance(engine, clock, H + 46)
    warned = [r.getMessage() for r in caplog.records
              if r.getMessage().startswith("resume_reserve_by_window: ")]
    assert ("resume_reserve_by_window: no window quota:nightlly is known (no provider has it "
            "and no quota is named so): its reserve applies only if such a window appears"
            ) in warned
    assert sum("quota:nightlly" in w for w in warned) == 1  # once, not per tick or reading
    assert not any("codex:weekly" in w for w in warned)  # a built-in window is known
