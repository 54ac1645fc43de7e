"""Engine hooks recurring goals need: rest, notes, provider wake-ups, lifting a no-reset limit."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from core.clock import FakeClock
from core.commands import Start
from core.models import GoalState, Outcome, PauseReason, QuotaKind
from core.providers.base import LimitHit
from tests.support.engine import EngineFactory
from tests.support.fakes import FakeProvider, reading, until

pytestmark = pytest.mark.asyncio


async def started(make_engine: EngineFactory, fake: FakeProvider, **kw: object) -> object:
    fake.observe("fake:g", GoalState.IDLE, auto_resume=True, **kw)  # type: ignore[arg-type]
    engine = await make_engine(fake)
    await engine.perform(Start("fake:g"))
    return engine


async def test_a_rested_goal_is_idle_again_and_can_start_anew(make_engine: EngineFactory,
                                                              fake: FakeProvider) -> None:
    engine = await started(make_engine, fake)
    goal = engine.goals["fake:g"]  # type: ignore[attr-defined]
    fake.sink.goal_rested("fake:g", goal.fence, "round 1 done")
    await engine.drain()  # type: ignore[attr-defined]
    rested = engine.goals["fake:g"]  # type: ignore[attr-defined]
    assert rested.state is GoalState.IDLE and not rested.hosted
    rows = await engine.reads.history("fake:g")  # type: ignore[attr-defined]
    assert rows[0].event == "rested" and rows[0].reason == "round 1 done"
    assert (await engine.perform(Start("fake:g"))).carried_out  # type: ignore[attr-defined]


async def test_a_stale_rest_is_ignored(make_engine: EngineFactory, fake: FakeProvider) -> None:
    engine = await started(make_engine, fake)
    fake.sink.goal_rested("fake:g", 0)
    await engine.drain()  # type: ignore[attr-defined]
    assert engine.goals["fake:g"].state is GoalState.RUNNING  # type: ignore[attr-defined]


async def test_notes_go_to_the_history(make_engine: EngineFactory, fake: FakeProvider) -> None:
    engine = await started(make_engine, fake)
    fake.sink.goal_noted("fake:g", "step_retry", "github: timeout", {"attempt": 1})
    await engine.drain()  # type: ignore[attr-defined]
    row = (await engine.reads.history("fake:g"))[0]  # type: ignore[attr-defined]
    assert (row.event, row.reason, row.detail) == ("step_retry", "github: timeout",
                                                   {"attempt": 1})


class WakingProvider(FakeProvider):
    def __init__(self, clock: FakeClock, at: datetime) -> None:
        super().__init__(clock)
        self.at: datetime | None = at
        self.woken: list[datetime] = []

    def next_wake(self, now: datetime) -> datetime | None:
        return self.at

    async def wake(self, now: datetime) -> None:
        self.woken.append(now)
        self.at = None


async def test_the_scheduler_wakes_a_provider_at_its_instant(make_engine: EngineFactory,
                                                             clock: FakeClock) -> None:
    provider = WakingProvider(clock, clock.now() + timedelta(minutes=10))
    await make_engine(provider)
    await clock.run_for(9 * 60, step=30)
    assert provider.woken == []
    await clock.run_for(90, step=30)
    assert len(provider.woken) == 1
    assert provider.woken[0] >= clock.now() - timedelta(seconds=90)


async def test_a_refill_lifts_a_no_reset_limit_and_resumes(make_engine: EngineFactory,
                                                           fake: FakeProvider,
                                                           clock: FakeClock) -> None:
    engine = await started(make_engine, fake, windows=("cap:credits",))
    goal = engine.goals["fake:g"]  # type: ignore[attr-defined]
    empty = reading("cap:credits", 100.0, clock.now(), None, window_seconds=None,
                    kind=QuotaKind.CAPACITY, limit_reached=True, no_timed_reset=True)
    fake.sink.goal_limited(goal.id, goal.fence, LimitHit(
        ("cap:credits",), None, detail="credits used up", no_timed_reset=True,
        readings=(empty,)))
    await engine.drain()  # type: ignore[attr-defined]
    paused = engine.goals["fake:g"]  # type: ignore[attr-defined]
    assert paused.pause_reason is PauseReason.QUOTA and paused.next_resume_at is None
    await clock.run_for(600, step=60)
    assert engine.goals["fake:g"].state is GoalState.PAUSED  # type: ignore[attr-defined]
    refilled = reading("cap:credits", 10.0, clock.now(), None, window_seconds=None,
                       kind=QuotaKind.CAPACITY, no_timed_reset=True)
    fake.readings = [refilled]
    await engine.quota_intake.record_reading(refilled)  # type: ignore[attr-defined]
    await clock.run_for(120, step=5)
    await until(lambda: engine.goals["fake:g"].state is GoalState.RUNNING)  # type: ignore
    assert len(fake.starts) == 2


async def test_a_no_reset_window_recovers_when_its_authority_says_so(clock: FakeClock) -> None:
    from core.quota.machine import HysteresisPolicy, QuotaManager

    manager = QuotaManager(HysteresisPolicy(stable_seconds=30))
    kw = {"window_seconds": None, "kind": QuotaKind.CAPACITY, "no_timed_reset": True}
    manager.observe(reading("cap:c", 100.0, clock.now(), limit_reached=True, **kw), clock.now())
    assert not manager.is_recovered("cap:c")
    clock.advance(1)
    manager.observe(reading("cap:c", 99.5, clock.now(), limit_reached=False, **kw), clock.now())
    clock.advance(31)
    edges = manager.evaluate(clock.now())
    assert [type(e).__name__ for e in edges] == ["QuotaRecovered"]
    # without the authority's word (limit_reached unknown), the band still applies
    manager.observe(reading("cap:d", 100.0, clock.now(), limit_reached=True, **kw), clock.now())
    clock.advance(1)
    manager.observe(reading("cap:d", 99.5, clock.now(), **kw), clock.now())
    clock.advance(31)
    assert manager.evaluate(clock.now()) == []


async def test_starting_a_goal_of_a_disabled_provider_is_refused_and_moves_nothing(
        make_engine: EngineFactory, fake: FakeProvider, clock: FakeClock) -> None:
    fake.observe("fake:g", GoalState.IDLE)
    engine = await make_engine(fake)
    await engine.stop()  # type: ignore[attr-defined]
    again = await make_engine(FakeProvider(clock, name="other"))  # the fake provider is off
    result = await again.perform(Start("fake:g"))  # type: ignore[attr-defined]
    assert result.outcome is Outcome.REFUSED and "not enabled" in result.reason
    goal = again.goals["fake:g"]  # type: ignore[attr-defined]
    assert goal.state is GoalState.IDLE and not goal.hosted


async def test_a_refill_never_schedules_a_goal_the_user_paused_meanwhile(
        make_engine: EngineFactory, fake: FakeProvider, clock: FakeClock) -> None:
    from core.goals.decisions import decide_pause

    engine = await started(make_engine, fake, windows=("cap:credits",))
    goal = engine.goals["fake:g"]  # type: ignore[attr-defined]
    fake.sink.goal_limited(goal.id, goal.fence, LimitHit(
        ("cap:credits",), None, detail="credits used up", no_timed_reset=True, readings=(
            reading("cap:credits", 100.0, clock.now(), None, window_seconds=None,
                    kind=QuotaKind.CAPACITY, limit_reached=True, no_timed_reset=True),)))
    await engine.drain()  # type: ignore[attr-defined]
    # the user pauses it while the refill is being handled: the engine's copy is still the
    # quota pause, the store already has the user's
    store = engine.store  # type: ignore[attr-defined]
    await store.run(lambda s: s.transact("fake:g", decide_pause("fake:g", clock.now(), "gui")))
    clock.advance(60)
    await engine.quota_intake.record_reading(reading(  # type: ignore[attr-defined]
        "cap:credits", 10.0, clock.now(), None, window_seconds=None, kind=QuotaKind.CAPACITY,
        no_timed_reset=True))
    clock.advance(31)
    await engine.scheduler.tick()  # type: ignore[attr-defined]
    stored = await store.run(lambda s: s.get_goal("fake:g"))
    assert stored.pause_reason is PauseReason.USER and stored.next_resume_at is None
    rows = await engine.reads.history("fake:g", limit=5)  # type: ignore[attr-defined]
    assert "resume_scheduled" not in [r.event for r in rows]


async def test_providers_start_at_once(make_engine: EngineFactory, clock: FakeClock) -> None:
    # a provider reading a large history on start must not hold the others' gauges back
    import asyncio

    first, second = FakeProvider(clock), FakeProvider(clock)
    second.name = "fake2"
    second_started = asyncio.Event()
    finished: list[str] = []

    async def slow_start() -> None:
        await asyncio.wait_for(second_started.wait(), 2)  # only if the second runs meanwhile
        finished.append("fake")

    async def quick_start() -> None:
        second_started.set()
        finished.append("fake2")

    first.start = slow_start  # type: ignore[method-assign]
    second.start = quick_start  # type: ignore[method-assign]
    await make_engine(first, second)
    assert finished == ["fake2", "fake"]
