"""Allowed hours in the engine: a resume due outside them waits for their next start (and the goal
says so), a goal's own hours replace the global ones, a manual resume is always allowed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from core.commands import Resume, SetGoalPolicy
from core.models import GoalState, Outcome
from gui import format as fmt
from tests.policies.support import WINDOW, H, policy_settings, rows, started, waiting
from tests.support.fakes import advance, reading

pytestmark = pytest.mark.asyncio
BERLIN = ZoneInfo("Europe/Berlin")
# the fake clock starts on Tuesday 2026-07-07 12:00 UTC = 14:00 in Berlin
EVENING = datetime(2026, 7, 7, 17, 0, tzinfo=UTC)  # 19:00 in Berlin


async def test_a_resume_due_outside_the_hours_is_planned_at_their_start(make_engine, fake,
                                                                       clock) -> None:
    waiting(fake, clock)  # resets at 15:00 Berlin time
    engine = await make_engine(fake, settings=policy_settings(
        auto_resume_hours="Mon-Fri 19:00-08:00, Sat-Sun 00:00-24:00"))
    g = engine.goals["fake:g"]
    assert g.next_resume_at == EVENING and g.deferred_by == "allowed hours"
    assert fmt.next_resume_text(g, clock.now(), BERLIN) == "at 19:00 (allowed hours)"
    planned = (await rows(engine, "fake:g", "resume_scheduled"))[0]
    assert planned.detail["rule"] == "allowed hours"
    assert planned.reason == ("quota exhausted; allowed hours: Mon-Fri 19:00-08:00, "
                              "Sat-Sun 00:00-24:00 (Europe/Berlin)")
    await advance(engine, clock, (EVENING - clock.now()).total_seconds() - 1)
    assert started(fake) == []
    await advance(engine, clock, 2)
    assert started(fake) == ["fake:g"]


async def test_a_resume_deferred_into_the_quiet_hours_waits_for_the_next_allowed_instant(
        make_engine, fake, clock) -> None:
    reset = waiting(fake, clock)  # 15:00 Berlin: inside Tuesday 15:00-15:30
    engine = await make_engine(fake, settings=policy_settings(auto_resume_hours="Tue 15:00-15:30"))
    assert engine.goals["fake:g"].deferred_by is None
    # at the reset the fresh read says: still exhausted, for 40 more minutes
    fake.fresh_readings = lambda: [reading(WINDOW, 100, clock.now(), reset + timedelta(minutes=40),
                                           limit_reached=True)]
    await advance(engine, clock, H + 46)
    fake.fresh_readings = lambda: [reading(WINDOW, 2, clock.now(), reset + timedelta(hours=5))]
    await advance(engine, clock, 40 * 60)
    g = engine.goals["fake:g"]
    assert started(fake) == [] and g.deferred_by == "allowed hours"
    assert g.next_resume_at == datetime(2026, 7, 14, 13, 0, tzinfo=UTC)  # next Tuesday 15:00
    held = (await rows(engine, "fake:g"))[0]
    assert held.outcome is Outcome.DEFERRED and held.detail["rule"] == "allowed hours"
    assert held.reason == "allowed hours: Tue 15:00-15:30 (Europe/Berlin)"


async def test_a_goals_own_hours_replace_the_global_ones_and_replan(make_engine, fake,
                                                                    clock) -> None:
    reset = waiting(fake, clock)
    engine = await make_engine(fake, settings=policy_settings(
        auto_resume_hours="Mon-Fri 19:00-08:00"))
    assert engine.goals["fake:g"].next_resume_at == EVENING
    result = await engine.perform(SetGoalPolicy("fake:g", "auto_resume_hours", "Tue 14:00-16:00"))
    assert result.outcome is Outcome.UPDATED and result.not_before == reset + timedelta(seconds=45)
    assert engine.goals["fake:g"].deferred_by is None
    bad = await engine.perform(SetGoalPolicy("fake:g", "auto_resume_hours", "Tue 14:00-16"))
    assert bad.outcome is Outcome.REFUSED and "'14:00-16' is not a time range" in bad.reason
    assert engine.goals["fake:g"].policy.auto_resume_hours == "Tue 14:00-16:00"
    await advance(engine, clock, H + 46)
    assert started(fake) == ["fake:g"]


async def test_a_manual_resume_outside_the_hours_is_allowed_and_says_so(make_engine, fake,
                                                                        clock) -> None:
    waiting(fake, clock)
    engine = await make_engine(fake, settings=policy_settings(
        auto_resume_hours="Mon-Fri 19:00-08:00"))
    result = await engine.perform(Resume("fake:g"))
    assert result.outcome is Outcome.RESUMED
    assert result.reason == ("outside the allowed hours (Mon-Fri 19:00-08:00 (Europe/Berlin)): "
                             "a manual resume is always allowed")
    assert engine.goals["fake:g"].state is GoalState.RUNNING
