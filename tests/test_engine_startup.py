"""The engine's start: each provider's goals are stored as soon as it has started (not after the
slowest one), its start-up recovery runs after its own start, and a discovery is one commit."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from core.clock import FakeClock
from core.commands import Resume
from core.engine import Engine
from core.models import GoalState, Outcome, PauseReason, Trigger
from core.paths import Paths
from core.settings import Settings
from core.store.base import NotOwner
from core.store.sqlite import SqliteStore
from tests.support.fakes import FakeProvider, crash, reading, settled, until

pytestmark = pytest.mark.asyncio


class Told(FakeProvider):
    """Counts the engine's word that the host has started."""

    def __init__(self, clock: FakeClock, name: str) -> None:
        super().__init__(clock, name)
        self.told = 0

    def host_started(self) -> None:
        self.told += 1


class GatedProvider(Told):
    """A provider whose start takes as long as the test says (a large history)."""

    def __init__(self, clock: FakeClock, name: str) -> None:
        super().__init__(clock, name)
        self.opened = asyncio.Event()
        self.started = False

    async def start(self) -> None:
        await self.opened.wait()
        self.started = True


def engine_on(paths: Paths, clock: FakeClock, *providers: Any) -> Engine:
    return Engine(paths, Settings(resume_jitter_seconds=0), list(providers), clock)


async def left_running(paths: Paths, clock: FakeClock) -> None:
    """A previous host that was running ``slow:g`` (hosted) when it was killed."""
    slow = FakeProvider(clock, "slow")
    slow.observe("slow:g", GoalState.PAUSED, reason=PauseReason.USER, windows=("slow:5h",))
    engine = engine_on(paths, clock, slow)
    await engine.start()
    await settled(engine)
    assert (await engine.perform(Resume("slow:g"))).outcome is Outcome.RESUMED
    assert engine.goals["slow:g"].state is GoalState.RUNNING and engine.goals["slow:g"].hosted
    await crash(engine)


async def test_a_started_provider_s_goals_are_stored_while_a_slow_one_starts(
        paths: Paths, clock: FakeClock) -> None:
    await left_running(paths, clock)
    fast, slow = Told(clock, "fast"), GatedProvider(clock, "slow")
    fast.readings = [reading("fast:5h", 40, clock.now(), provider="fast")]
    fast.observe("fast:a", GoalState.RUNNING, windows=("fast:5h",))
    fast.observe("fast:b", GoalState.RUNNING, windows=("fast:5h",))
    slow.observe("slow:g", GoalState.RUNNING, windows=("slow:5h",))
    engine = engine_on(paths, clock, fast, slow)
    starting = asyncio.create_task(engine.start())
    try:
        await until(lambda: {"fast:a", "fast:b"} <= set(engine.goals))
        stored = await engine.store.run(lambda s: {g.id: g for g in s.list_goals()})
        assert {"fast:a", "fast:b"} <= set(stored)
        assert [r.window_id for r in await engine.store.run(lambda s: s.latest_readings())
                ] == ["fast:5h"]
        # the slow provider's goal is neither recovered nor resumed before it has started
        assert stored["slow:g"].state is GoalState.RUNNING and slow.resume_calls == []
        assert not engine.scheduler.running and not starting.done()
        assert fast.told == 0  # its held-back work (a history scan) waits for the slow start
        slow.opened.set()
        await starting
    finally:
        slow.opened.set()
        await asyncio.gather(starting, return_exceptions=True)
    await settled(engine)
    goal = engine.goals["slow:g"]
    assert slow.started and slow.resume_calls == [("slow:g", goal.fence)]
    assert (fast.told, slow.told) == (1, 1)
    assert goal.state is GoalState.RUNNING and goal.hosted
    rows = [r for r in await engine.reads.history("slow:g") if r.event == "resume_requested"]
    assert [(r.trigger, r.origin) for r in rows] == [(Trigger.STARTUP, "startup"),
                                                      (Trigger.MANUAL, "gui")]
    await engine.stop()


async def test_a_discovery_is_stored_in_one_transaction(
        paths: Paths, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeProvider(clock)
    for i in range(5):
        fake.observe(f"fake:{i}", GoalState.PAUSED, reason=PauseReason.USER)
    calls: list[str] = []
    many, one = SqliteStore.transact_many, SqliteStore.transact
    monkeypatch.setattr(SqliteStore, "transact_many",
                        lambda s, changes: calls.append(f"many {len(changes)}") or many(s, changes))
    monkeypatch.setattr(SqliteStore, "transact",
                        lambda s, goal_id, decide: calls.append(goal_id) or one(s, goal_id, decide))
    engine = engine_on(paths, clock, fake)
    await engine.start()
    await settled(engine)
    assert calls == ["many 5"]
    assert sorted(engine.goals) == [f"fake:{i}" for i in range(5)]
    assert all(g.state is GoalState.PAUSED for g in engine.goals.values())
    assert [r.event for r in await engine.reads.history("fake:3")] == ["discovered"]
    await engine.stop()


async def test_a_refused_batch_is_stored_goal_by_goal(
        paths: Paths, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeProvider(clock)
    for i in range(3):
        fake.observe(f"fake:{i}", GoalState.PAUSED, reason=PauseReason.USER)

    def refused(store: SqliteStore, changes: Any) -> Any:
        raise NotOwner("fake:1", "desk")  # one goal of the batch is another host's

    monkeypatch.setattr(SqliteStore, "transact_many", refused)
    engine = engine_on(paths, clock, fake)
    await engine.start()
    await settled(engine)
    stored = await engine.store.run(lambda s: [g.id for g in s.list_goals()])
    assert stored == ["fake:0", "fake:1", "fake:2"]
    assert [r.event for r in await engine.reads.history("fake:1")] == ["discovered"]
    await engine.stop()
