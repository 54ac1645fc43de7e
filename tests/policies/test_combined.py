"""Reserve, priorities and quiet hours together on one window, on a fake clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.commands import SetGoalPolicy
from core.models import GoalState, PauseReason
from tests.policies.support import WINDOW, policy_settings, report, rows, started, waiting
from tests.support.fakes import advance

pytestmark = pytest.mark.asyncio
EVENING = datetime(2026, 7, 7, 17, 0, tzinfo=UTC)  # Tuesday 19:00 in Berlin


async def until_(engine, clock, instant: datetime) -> None:  # type: ignore[no-untyped-def]
    await advance(engine, clock, (instant - clock.now()).total_seconds())


async def test_reserve_priorities_and_quiet_hours_on_one_window(make_engine, fake,
                                                                clock) -> None:
    waiting(fake, clock, goals=("fake:a", "fake:b", "fake:c"), fresh_used=5)
    window_reset = fake.level["reset"]  # type: ignore[attr-defined]  # 18:00 UTC, 20:00 Berlin
    engine = await make_engine(fake, settings=policy_settings(
        resume_reserve_percent=30, max_concurrent_resumes=1, resume_settle_seconds=300,
        auto_resume_hours="Mon-Fri 19:00-08:00"))
    await engine.perform(SetGoalPolicy("fake:b", "priority", "5"))
    # the reset is at 15:00 Berlin time: every goal waits for 19:00, the start of its hours
    assert {engine.goals[g].next_resume_at for g in ("fake:a", "fake:b", "fake:c")} == {EVENING}
    assert {engine.goals[g].deferred_by for g in ("fake:a", "fake:b", "fake:c")} == {
        "allowed hours"}
    await until_(engine, clock, EVENING - timedelta(seconds=1))
    assert started(fake) == []
    # 19:00: the highest priority first, the others wait for a slot
    await until_(engine, clock, EVENING + timedelta(seconds=1))
    assert started(fake) == ["fake:b"]
    await report(engine, fake, clock, 40, window_reset)
    # after the settle time the next one: a, the older pause
    await until_(engine, clock, EVENING + timedelta(seconds=301))
    assert started(fake) == ["fake:b", "fake:a"]
    # the window reaches 100 − 30 %: both goals Goalkeeper resumed are paused; c never starts
    await report(engine, fake, clock, 70, window_reset)
    for goal in ("fake:a", "fake:b"):
        g = engine.goals[goal]
        assert g.state is GoalState.PAUSED and g.pause_reason is PauseReason.QUOTA
        assert (g.pause_detail or "").startswith("reserve: ")
        assert g.next_resume_at == window_reset + timedelta(seconds=45)
    await advance(engine, clock, 1)
    c = engine.goals["fake:c"]
    assert c.deferred_by == "reserve" and c.next_resume_at == window_reset + timedelta(seconds=45)
    held = [r.detail.get("rule") for r in await rows(engine, "fake:c")]
    assert held[:2] == ["reserve", "waiting for a slot"]
    # the window resets inside the allowed hours: b first again, then c (its pause is older
    # than a's reserve pause), one settle time apart
    fake.level["used"] = 0  # type: ignore[attr-defined]
    await until_(engine, clock, window_reset + timedelta(seconds=46))
    assert started(fake) == ["fake:b", "fake:a", "fake:b"]
    await advance(engine, clock, 300)
    assert started(fake) == ["fake:b", "fake:a", "fake:b", "fake:c"]
    await advance(engine, clock, 300)
    assert started(fake) == ["fake:b", "fake:a", "fake:b", "fake:c", "fake:a"]
    assert WINDOW in engine.goals["fake:a"].windows
