"""The scheduler on a fake clock: sleeps, deadlines, wake from sleep, start-up re-arm, polling."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.commands import Resume
from core.models import GoalState, Outcome, PauseReason, Trigger
from core.settings import Settings
from tests.support.engine import H, quota_paused
from tests.support.fakes import advance, reading, settled

pytestmark = pytest.mark.asyncio


async def test_an_idle_host_never_wakes(make_engine, fake, clock) -> None:
    fake.observe("fake:g", GoalState.RUNNING)
    engine = await make_engine(fake)
    await settled(engine)
    # nothing sleeps on the clock but the store keeper, whose daily backup wakes it hourly at most
    wake = clock.next_wakeup()
    assert engine.scheduler.next_wake is None and (wake is None or wake >= 3600)
    before = engine.scheduler.wakeups
    for _ in range(24):
        await advance(engine, clock, H)
    assert engine.scheduler.wakeups == before


async def test_pending_deadlines_cap_every_sleep_at_60_s(make_engine, fake, clock) -> None:
    quota_paused(fake, clock, resets_in=5 * H)
    engine = await make_engine(fake)
    before = engine.scheduler.wakeups
    for _ in range(60):
        await settled(engine)
        assert clock.next_wakeup() is not None and clock.next_wakeup() <= 60
        await advance(engine, clock, 60)
    assert engine.scheduler.wakeups - before <= 61
    assert fake.starts == []


async def test_a_suspend_through_the_reset_resumes_within_a_minute_of_waking(make_engine, fake,
                                                                            clock) -> None:
    quota_paused(fake, clock, resets_in=2 * H)
    engine = await make_engine(fake)
    await settled(engine)
    clock.jump(3 * H)  # the laptop slept; the monotonic clock did not move
    await advance(engine, clock, 60)
    assert fake.starts == [("fake:g", 1)]
    row = next(r for r in await engine.reads.history("fake:g") if r.event == "resume_requested")
    assert row.trigger is Trigger.WAKE and row.outcome is Outcome.RESUMED


async def test_an_overdue_deadline_at_startup_is_rechecked_then_resumed_once(make_engine, fake,
                                                                            clock) -> None:
    quota_paused(fake, clock)
    first = await make_engine(fake)
    await first.stop()
    clock.advance(3 * H)  # the host was down through the reset and the deadline
    engine = await make_engine(fake)
    await settled(engine)
    assert fake.fresh_reads == 1
    assert fake.starts == [("fake:g", 1)]
    row = next(r for r in await engine.reads.history("fake:g") if r.event == "resume_requested")
    assert row.trigger is Trigger.STARTUP and row.origin == "scheduler"
    await advance(engine, clock, H)
    assert len(fake.starts) == 1


async def test_an_overdue_deadline_into_a_still_empty_quota_is_deferred(make_engine, fake,
                                                                       clock) -> None:
    quota_paused(fake, clock)
    first = await make_engine(fake)
    await first.stop()
    clock.advance(2 * H)
    fake.fresh_readings = lambda: [reading("fake:5h", 100, clock.now(),
                                           clock.now() + timedelta(hours=1), limit_reached=True)]
    engine = await make_engine(fake)
    await settled(engine)
    assert fake.starts == []
    assert engine.goals["fake:g"].next_resume_at == clock.now() + timedelta(hours=1, seconds=45)


async def test_a_rising_edge_releases_a_goal_waiting_for_stability(make_engine, fake,
                                                                   clock) -> None:
    quota_paused(fake, clock, resets_in=600)
    # at the deadline the fresh read says 95 %: inside the hysteresis band, not recovered
    fake.fresh_readings = lambda: [reading("fake:5h", 95, clock.now(), clock.now() + timedelta(
        hours=4))]
    engine = await make_engine(fake, settings=Settings(resume_jitter_seconds=0,
                                                       stable_seconds=30))
    await advance(engine, clock, 645)
    assert fake.starts == []
    # deferred to that window's next reset (+ margin)
    assert engine.goals["fake:g"].next_resume_at == clock.now() + timedelta(hours=4, seconds=45)
    # a reading at 40 % arrives; 30 s later the window is stably recovered
    fake.fresh_readings = lambda: [reading("fake:5h", 40, clock.now(), clock.now() + timedelta(
        hours=4))]
    await engine.quota_intake.record_reading(reading("fake:5h", 40, clock.now(),
                                        clock.now() + timedelta(hours=4)))
    await advance(engine, clock, 29)
    assert fake.starts == []
    await advance(engine, clock, 2)
    assert [r.event for r in await engine.reads.history(limit=50)].count("quota_recovered") == 1
    assert fake.starts == [("fake:g", 1)]  # released by the rising edge, hours early
    row = next(r for r in await engine.reads.history("fake:g") if r.event == "resume_requested")
    assert row.detail["rising_edge"] == ["fake:5h"]


async def test_fallback_poll_scales_with_the_window_and_stays_in_bounds(make_engine, fake,
                                                                         clock) -> None:
    quota_paused(fake, clock, resets_in=5 * H)
    engine = await make_engine(fake)
    intervals = [engine.scheduler._poll_interval().total_seconds() for _ in range(200)]
    # a 5-hour window: a tenth is 30 min, capped at 15 min, with ±10 % jitter — never above
    assert 810 <= min(intervals) < 900 == max(intervals)
    fake.readings = [reading("fake:5h", 100, clock.now(), clock.now() + timedelta(seconds=50),
                             window_seconds=60, limit_reached=True)]
    await engine.refresh()
    intervals = [engine.scheduler._poll_interval().total_seconds() for _ in range(200)]
    # bounded below by 30 s, jitter included (it was 27 s apart)
    assert min(intervals) == 30 and 30 < max(intervals) <= 33


async def test_fallback_poll_reads_quotas_while_goals_wait(make_engine, fake, clock) -> None:
    quota_paused(fake, clock, resets_in=5 * H)
    engine = await make_engine(fake)
    reads = []
    original = fake.read_quotas

    async def counting(fresh: bool = False):  # type: ignore[no-untyped-def]
        reads.append(fresh)
        return await original(fresh)

    fake.read_quotas = counting  # type: ignore[method-assign]
    for _ in range(60):
        await advance(engine, clock, 60)
    assert 3 <= reads.count(False) <= 5  # one hour at ~15 min per poll


async def test_a_crash_while_resuming_is_reconciled_once(make_engine, fake, clock) -> None:
    quota_paused(fake, clock)
    first = await make_engine(fake)
    # simulate a host that died between the claim and the runner's start
    from core.goals.changes import transition
    from core.goals.machine import GoalEvent
    from core.store import Mutation

    def claim(g):  # type: ignore[no-untyped-def]
        new, row = transition(g, GoalEvent.CLAIM_RESUME, clock.now(), fence=g.fence + 1)
        return Mutation(new, None, [row])

    await first.store.run(lambda s: s.transact("fake:g", claim))
    first.goals.clear()  # the crashed host's memory is gone; stop() must not tidy up
    await first.stop()
    engine = await make_engine(fake)
    await settled(engine)
    g = engine.goals["fake:g"]
    assert g.state is GoalState.RUNNING and fake.starts == [("fake:g", 3)]
    events = [(r.event, r.trigger) for r in reversed(await engine.reads.history("fake:g"))]
    assert ("paused", None) in events
    assert ("resume_requested", Trigger.STARTUP) in events


async def test_a_clean_shutdown_leaves_running_goals_recoverable(make_engine, fake,
                                                                 clock) -> None:
    quota_paused(fake, clock)
    first = await make_engine(fake)
    await first.perform(Resume("fake:g"))
    await first.stop()
    g = await _stored(first, "fake:g")
    assert g.state is GoalState.PAUSED and g.pause_reason is PauseReason.INTERRUPTED
    engine = await make_engine(fake)
    await settled(engine)
    assert engine.goals["fake:g"].state is GoalState.RUNNING
    assert fake.starts == [("fake:g", 1), ("fake:g", 3)]


async def _stored(engine, goal_id):  # type: ignore[no-untyped-def]
    from core.store import SqliteStore

    store = SqliteStore(engine.paths.database)
    try:
        return store.get_goal(goal_id)
    finally:
        store.close()


async def test_a_rising_edge_from_a_provider_reading_releases_at_once(make_engine, fake,
                                                                      clock) -> None:
    quota_paused(fake, clock, resets_in=600)
    fake.fresh_readings = lambda: [reading("fake:5h", 95, clock.now(), clock.now() + timedelta(
        hours=4))]
    engine = await make_engine(fake, settings=Settings(resume_jitter_seconds=0,
                                                       stable_seconds=0))
    await advance(engine, clock, 645)
    assert fake.starts == [] and engine.goals["fake:g"].next_resume_at is not None
    # a provider's watcher reports the window recovered: the edge comes from record_reading,
    # not from the scheduler's own evaluation, and still releases the goal without a clock tick
    fake.fresh_readings = lambda: [reading("fake:5h", 10, clock.now(), clock.now() + timedelta(
        hours=4))]
    await engine.quota_intake.record_reading(reading("fake:5h", 10, clock.now(),
                                        clock.now() + timedelta(hours=4)))
    await settled(engine)
    assert fake.starts == [("fake:g", 1)]


async def test_a_rising_edge_during_a_pass_is_not_lost(make_engine, fake, clock) -> None:
    import asyncio

    from tests.support.fakes import FakeProvider, until

    other = FakeProvider(clock, name="other")
    quota_paused(fake, clock, resets_in=600, goal="fake:a")
    reset_b = clock.now() + timedelta(seconds=300)
    other.readings = [reading("other:5h", 100, clock.now(), reset_b, limit_reached=True,
                              provider="other")]
    other.observe("other:b", GoalState.PAUSED, reason=PauseReason.QUOTA, resets_at=reset_b,
                  auto_resume=True, windows=("other:5h",))
    # at its deadline B's fresh read shows the band: deferred for hours
    other.fresh_readings = lambda: [reading("other:5h", 95, clock.now(),
                                            clock.now() + timedelta(hours=4), provider="other")]
    engine = await make_engine(fake, other, settings=Settings(resume_jitter_seconds=0,
                                                              stable_seconds=0))
    await advance(engine, clock, 400)
    assert engine.goals["other:b"].next_resume_at is not None and other.starts == []
    fake.gate = asyncio.Event()
    clock.advance(250)  # A is due: the scheduler's pass blocks in A's runner start
    await until(lambda: fake.resume_calls != [])
    # meanwhile B's window recovers, reported by its provider's watcher
    other.fresh_readings = lambda: [reading("other:5h", 5, clock.now(),
                                            clock.now() + timedelta(hours=4), provider="other")]
    await engine.quota_intake.record_reading(reading("other:5h", 5, clock.now(),
                                        clock.now() + timedelta(hours=4), provider="other"))
    fake.gate.set()
    await settled(engine)  # no clock movement: the edge is handled by an immediate next pass
    assert fake.starts == [("fake:a", 1)] and other.starts == [("other:b", 1)]
