"""Desktop notifications: the core decides (core.notify), the tray seam only shows."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
import pytest_asyncio

from core.clock import FakeClock
from core.commands import Resume, SetAutoResume, Start
from core.engine import Engine
from core.models import GoalState, PauseReason
from core.notices import Kind
from core.notify.service import Notifications
from core.settings import Settings
from gui.bridge import Bridge
from gui.notifier import Notifier, Toast
from tests.support.fakes import FakeProvider, until
from tests.support.gui import RecordingBackend


async def _service(engine: Engine, clock: FakeClock, settings: Settings
                   ) -> AsyncIterator[Notifications]:
    service = Notifications(engine.bus, settings, clock, engine.goals.get, host="box")
    await service.start()
    yield service
    await service.stop(0)


@pytest_asyncio.fixture
async def service(engine: Engine, clock: FakeClock) -> AsyncIterator[Notifications]:
    async for s in _service(engine, clock, Settings()):
        yield s


@pytest_asyncio.fixture
async def recorded(bridge: Bridge, service: Notifications) -> tuple[Notifier, RecordingBackend]:
    backend = RecordingBackend()
    return Notifier(bridge, backend), backend


async def quota_pause(engine: Engine, fake: FakeProvider, clock: FakeClock) -> None:
    await engine.perform(SetAutoResume("fake:a", True))
    fake.observe("fake:a", GoalState.PAUSED, reason=PauseReason.QUOTA,
                 resets_at=clock.now() + timedelta(seconds=60), title="Refactor the parser")
    await engine.refresh()


@pytest.mark.asyncio
async def test_auto_resume_is_announced(recorded: tuple[Notifier, RecordingBackend],
                                        engine: Engine, fake: FakeProvider,
                                        clock: FakeClock) -> None:
    notifier, backend = recorded
    await quota_pause(engine, fake, clock)
    assert [n.kind for n in backend.sent] == [Kind.SCHEDULED]
    assert backend.sent[0].title.startswith("Refactor the parser will resume at ")
    await until(lambda: clock.sleepers > 0)  # the scheduler sleeps on the fake clock
    clock.advance(106)  # reset + 45 s margin + a second
    await until(lambda: engine.goals["fake:a"].state is GoalState.RUNNING)
    await until(lambda: len(backend.sent) == 2)
    assert backend.sent[1] == Toast("Resumed: Refactor the parser",
                                    backend.sent[1].body, Kind.RESUMED, "fake:a")
    assert list(notifier.recent) == backend.sent


@pytest.mark.asyncio
async def test_relimited_soon_after_an_auto_resume(recorded: tuple[Notifier, RecordingBackend],
                                                   engine: Engine, fake: FakeProvider,
                                                   clock: FakeClock) -> None:
    _notifier, backend = recorded
    await quota_pause(engine, fake, clock)
    await until(lambda: clock.sleepers > 0)  # the scheduler sleeps on the fake clock
    clock.advance(106)
    await until(lambda: engine.goals["fake:a"].state is GoalState.RUNNING)
    clock.advance(60)
    fake.hit_limit(engine.goals["fake:a"], clock.now() + timedelta(hours=1),
                   detail="5-hour limit")
    await until(lambda: any(n.kind is Kind.RELIMITED for n in backend.sent))
    relimited = next(n for n in backend.sent if n.kind is Kind.RELIMITED)
    assert relimited.body.startswith("Quota: 5-hour limit.")


@pytest.mark.asyncio
async def test_switched_off_kinds_are_not_shown_and_a_change_applies_at_once(
        bridge: Bridge, engine: Engine, fake: FakeProvider, clock: FakeClock,
        service: Notifications) -> None:
    backend = RecordingBackend()
    notifier = Notifier(bridge, backend)
    service.apply(Settings(notify_scheduled=False, notify_resumed=False))
    await quota_pause(engine, fake, clock)
    await until(lambda: clock.sleepers > 0)  # the scheduler sleeps on the fake clock
    clock.advance(106)
    await until(lambda: engine.goals["fake:a"].state is GoalState.RUNNING)
    await asyncio.sleep(0.01)
    assert backend.sent == []
    rows = await engine.reads.history("fake:a", limit=20)
    assert {"resume_scheduled", "resumed"} <= {r.event for r in rows}
    service.apply(Settings())
    await engine.perform(Start("fake:b"))
    fake.sink.goal_finished("fake:b", engine.goals["fake:b"].fence, "all done")
    await until(lambda: bool(backend.sent))
    assert [n.kind for n in notifier.recent] == [Kind.DONE]


@pytest.mark.asyncio
async def test_done_and_failed(recorded: tuple[Notifier, RecordingBackend], engine: Engine,
                               fake: FakeProvider) -> None:
    _notifier, backend = recorded
    await engine.perform(Start("fake:b"))
    goal = engine.goals["fake:b"]
    fake.sink.goal_finished("fake:b", goal.fence, "all done")
    await engine.perform(Start("fake:c"))
    fake.sink.goal_failed("fake:c", engine.goals["fake:c"].fence, "the agent crashed")
    await until(lambda: len(backend.sent) == 2)
    assert [(n.kind, n.title) for n in backend.sent] == [
        (Kind.DONE, "Done: Write the docs"), (Kind.FAILED, "Failed: Port the tests")]


@pytest.mark.asyncio
async def test_a_run_that_needs_attention_and_a_finished_round(
        recorded: tuple[Notifier, RecordingBackend], engine: Engine, fake: FakeProvider,
        service: Notifications) -> None:
    _notifier, backend = recorded
    await engine.perform(Start("fake:b"))
    fake.sink.goal_paused("fake:b", engine.goals["fake:b"].fence, PauseReason.AUTH,
                          "run r1 blocked in delivering: auth failed")
    await until(lambda: len(backend.sent) == 1)
    await engine.perform(Start("fake:c"))
    fake.sink.goal_rested("fake:c", engine.goals["fake:c"].fence, "run r2 completed: 2 items")
    await until(lambda: len(backend.sent) == 2)
    assert [(n.kind, n.title, n.body) for n in backend.sent] == [
        (Kind.NEEDS_ATTENTION, "Needs attention: Write the docs",
         "Run r1 blocked in delivering: auth failed. It is paused until you sign in again and "
         "resume it."),
        (Kind.RESTED, "Run finished: Port the tests",
         "Run r2 completed: 2 items. It waits for its next run.")]
    service.apply(Settings(notify_needs_attention=False, notify_rested=False))  # the switches
    fake.sink.goal_paused("fake:b", engine.goals["fake:b"].fence, PauseReason.EXTERNAL, "x")
    await engine.perform(Resume("fake:b"), "gui")
    fake.sink.goal_paused("fake:b", engine.goals["fake:b"].fence, PauseReason.ERROR, "boom")
    await engine.drain()
    await asyncio.sleep(0.01)
    assert engine.goals["fake:b"].pause_reason is PauseReason.ERROR
    assert len(backend.sent) == 2
