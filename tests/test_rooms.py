"""The resume coordinator and the scheduler on their own, through the seams they are handed —
no engine: a store thread, a fake provider and a fake quota view for the one; fake readings,
goals and a recording door for the other."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from core.clock import FakeClock
from core.commands import ActionResult, Command, Resume
from core.events import EventBus
from core.goals.auto_resume import AutoResumePolicy
from core.goals.coordinator import ResumeCoordinator
from core.goals.rules import WindowLevel
from core.goals.scheduler import Scheduler, SchedulerParts
from core.models import Goal, GoalState, Outcome, PauseReason, QuotaReading, Trigger
from core.quota.machine import QuotaEdge, QuotaManager
from core.settings import Settings
from core.store import Committed, Mutation, StoreThread
from tests.support.fakes import FakeProvider, until

pytestmark = pytest.mark.asyncio


class Levels:
    """A quota view with nothing blocking (or the windows given)."""

    def __init__(self, blocked: dict[str, datetime | None] | None = None) -> None:
        self.blocked = blocked or {}

    def blockers(self, windows: tuple[str, ...], now: datetime) -> dict[str, datetime | None]:
        return {w: t for w, t in self.blocked.items() if w in windows}

    def snapshot(self, windows: tuple[str, ...], now: datetime) -> tuple[dict[str, Any], ...]:
        return ()

    def levels(self, windows: tuple[str, ...], now: datetime) -> tuple[WindowLevel, ...]:
        return ()


def paused_goal(clock: FakeClock, reason: PauseReason = PauseReason.USER) -> Goal:
    now = clock.now()
    return Goal(id="fake:g", provider="fake", title="g", state=GoalState.PAUSED,
                pause_reason=reason, state_since=now, created_at=now, updated_at=now,
                windows=("fake:5h",))


async def coordinator_on(tmp_path: Path, clock: FakeClock, fake: FakeProvider,
                         levels: Levels) -> tuple[ResumeCoordinator, StoreThread,
                                                  list[Committed[Any]]]:
    store = StoreThread(tmp_path / "goalkeeper.db")
    await store.open(clock.now())
    seen: list[Committed[Any]] = []
    coordinator = ResumeCoordinator(store, clock, {"fake": fake}, levels, AutoResumePolicy(),
                                    seen.append)
    return coordinator, store, seen


async def test_the_coordinator_claims_starts_and_settles_on_its_own(tmp_path, clock, fake):
    coordinator, store, seen = await coordinator_on(tmp_path, clock, fake, Levels())
    goal = paused_goal(clock)
    await store.run(lambda s: s.transact(goal.id, lambda _: Mutation(goal, None)))
    try:
        result = await coordinator.resume(goal.id, Trigger.MANUAL, "test")
        assert result.outcome is Outcome.RESUMED
        assert fake.resume_calls == [("fake:g", 1)]  # the claim bumped the fence first
        stored = await store.run(lambda s: s.get_goal("fake:g"))
        assert stored is not None and stored.state is GoalState.RUNNING
        assert [c.after.state for c in seen if c.after] == [GoalState.RESUMING,
                                                            GoalState.RUNNING]
        again = await coordinator.resume(goal.id, Trigger.MANUAL, "test")
        assert again.outcome is Outcome.ALREADY_RUNNING and len(fake.resume_calls) == 1
    finally:
        await store.close()


async def test_the_coordinator_defers_an_automatic_resume_the_view_blocks(tmp_path, clock,
                                                                           fake):
    later = clock.now() + timedelta(hours=1)
    coordinator, store, _ = await coordinator_on(tmp_path, clock, fake,
                                                 Levels({"fake:5h": later}))
    goal = paused_goal(clock, PauseReason.QUOTA).model_copy(
        update={"auto_resume": True, "resets_at": later, "next_resume_at": clock.now()})
    await store.run(lambda s: s.transact(goal.id, lambda _: Mutation(goal, None)))
    try:
        result = await coordinator.resume(goal.id, Trigger.AUTO, "scheduler")
        assert result.outcome is Outcome.DEFERRED and fake.resume_calls == []
    finally:
        await store.close()


class Readings:
    """The quota intake as the scheduler sees it: edges and releases recorded."""

    def __init__(self) -> None:
        self.recovered: set[str] = set()
        self.released: list[tuple[str, list[str]]] = []
        self.recorded: list[QuotaReading] = []

    async def handle_edges(self, edges: Sequence[QuotaEdge]) -> None:
        return None

    async def fresh_read(self, provider_name: str, timeout: float | None = None) -> str | None:
        return None

    async def record_reading(self, reading: QuotaReading) -> None:
        self.recorded.append(reading)

    def take_recovered(self) -> set[str]:
        taken, self.recovered = self.recovered, set()
        return taken

    def has_recovered(self) -> bool:
        return bool(self.recovered)

    async def release(self, goal_id: str, windows: list[str], reason: str = "") -> None:
        self.released.append((goal_id, windows))


async def test_the_scheduler_sends_a_due_goal_through_the_door_on_its_own(clock, fake):
    due = clock.now() + timedelta(minutes=5)
    goal = paused_goal(clock, PauseReason.QUOTA).model_copy(
        update={"auto_resume": True, "next_resume_at": due})
    asked: list[tuple[Command, str]] = []

    async def perform(command: Command, origin: str) -> ActionResult:
        asked.append((command, origin))
        return ActionResult(command.goal, Outcome.RESUMED, "resumed")

    parts = SchedulerParts({goal.id: goal}, QuotaManager(Settings().hysteresis()),
                           {"fake": fake}, EventBus(), Readings(), lambda: True, perform)
    scheduler = Scheduler(parts, clock, Settings(max_sleep_seconds=1), random.Random(1))
    scheduler.start()
    try:
        await until(lambda: scheduler.sleeping)
        assert asked == []  # not before its time
        clock.advance(5 * 60 + 1)
        await until(lambda: bool(asked))
        command, origin = asked[0]
        assert isinstance(command, Resume) and command.goal == goal.id
        assert command.trigger is Trigger.AUTO and origin == "scheduler"
    finally:
        await scheduler.stop()
