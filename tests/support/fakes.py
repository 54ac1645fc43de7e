"""Test doubles for the core: a scriptable provider and helpers to wait on conditions."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from core.models import Exactness, Goal, GoalState, PauseReason, QuotaKind, QuotaReading
from core.providers.base import (
    GoalObservation,
    LimitHit,
    PreparedStart,
    Provider,
    QueuedWork,
    RunnerDeferred,
    RunnerError,
    StartOutcome,
)


def reading(window: str, used: float, at: datetime, resets_at: datetime | None = None,
            *, window_seconds: float | None = 18000, provider: str = "fake",
            exactness: Exactness = Exactness.EXACT, **extra: Any) -> QuotaReading:
    return QuotaReading(window_id=window, provider=provider, label=window,
                        kind=extra.pop("kind", QuotaKind.PERIODIC), used_percent=used,
                        resets_at=resets_at, window_seconds=window_seconds,
                        exactness=exactness, observed_at=at, **extra)


class FakeProvider(Provider):
    """A provider whose goals, readings and runner behaviour the test scripts.

    ``behaviour`` decides what ``resume_goal`` does: ``start``, ``fail``, ``hang``, ``defer``,
    ``already_running``, ``already_done``. Every runner start is recorded in ``starts``.
    """

    name = "fake"

    def __init__(self, clock: Any, name: str = "fake") -> None:
        super().__init__()
        self.name = name
        self.clock = clock
        self.observations: list[GoalObservation] = []
        self.readings: list[QuotaReading] = []
        self.fresh_readings: Callable[[], list[QuotaReading]] | None = None
        self.fresh_reads = 0
        self.fresh_error: Exception | None = None
        self.behaviour = "start"
        self.starts: list[tuple[str, int]] = []
        self.resume_calls: list[tuple[str, int]] = []
        self.paused: list[str] = []
        self.cancelled: list[str] = []
        self.gate: asyncio.Event | None = None  # when set, resume waits for it
        self.prepared: list[QueuedWork] = []

    def observe(self, goal_id: str, state: GoalState = GoalState.RUNNING, *,
                reason: PauseReason | None = None, resets_at: datetime | None = None,
                windows: tuple[str, ...] = ("fake:5h",), at: datetime | None = None,
                **kw: Any) -> GoalObservation:
        obs = GoalObservation(id=goal_id, title=kw.pop("title", f"goal {goal_id}"), state=state,
                              observed_at=at or self.clock.now(), pause_reason=reason,
                              windows=windows, resets_at=resets_at, **kw)
        self.observations = [o for o in self.observations if o.id != goal_id] + [obs]
        return obs

    async def discover(self) -> list[GoalObservation]:
        return list(self.observations)

    async def read_quotas(self, fresh: bool = False) -> list[QuotaReading]:
        if fresh:
            self.fresh_reads += 1
            if self.fresh_error is not None:
                raise self.fresh_error
            if self.fresh_readings is not None:
                return self.fresh_readings()
        return list(self.readings)

    async def start_goal(self, goal: Goal, fence: int) -> StartOutcome:
        self.starts.append((goal.id, fence))
        return StartOutcome.STARTED

    async def resume_goal(self, goal: Goal, fence: int) -> StartOutcome:
        self.resume_calls.append((goal.id, fence))
        if self.gate is not None:
            await self.gate.wait()
        if self.behaviour == "fail":
            raise RunnerError("the agent refused to start")
        if self.behaviour == "hang":
            await asyncio.sleep(3600)
        if self.behaviour == "defer":
            raise RunnerDeferred("another process holds the thread", 120)
        if self.behaviour == "already_running":
            return StartOutcome.ALREADY_RUNNING
        if self.behaviour == "already_done":
            return StartOutcome.ALREADY_DONE
        self.starts.append((goal.id, fence))
        return StartOutcome.STARTED

    async def prepare_start(self, work: QueuedWork) -> PreparedStart:
        """Queued new work (``Queue``): recorded in ``prepared``; ``fail`` behaviour refuses."""
        if self.behaviour == "fail":
            raise RunnerError("the agent cannot prepare that")
        self.prepared.append(work)
        name = work.thread or f"queued-{len(self.prepared)}"
        return PreparedStart(f"{self.name}:{name}", work.text[:40],
                             {"cwd": work.cwd, "prompt": work.text})

    async def pause_goal(self, goal: Goal) -> None:
        self.paused.append(goal.id)

    async def cancel_goal(self, goal: Goal) -> None:
        self.cancelled.append(goal.id)

    # -- reporting as a runner would ---------------------------------------------------------

    def hit_limit(self, goal: Goal, resets_at: datetime | None,
                  windows: tuple[str, ...] = ("fake:5h",), **kw: Any) -> None:
        self.sink.goal_limited(goal.id, goal.fence, LimitHit(windows=windows,
                                                             resets_at=resets_at, **kw))


async def until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    """Wait (on the real loop) until ``predicate()`` holds; fail after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(0.002)


def later(at: datetime, **kw: float) -> datetime:
    return at + timedelta(**kw)


async def settled(engine: Any) -> None:
    """Wait until the engine has applied every report and its scheduler sleeps again."""
    for _ in range(3):
        for _ in range(10):  # let woken tasks take their first step before looking
            await asyncio.sleep(0)
        await engine.drain()
        await until(lambda: not engine.scheduler.running or (
            engine.scheduler.sleeping and not engine.scheduler._poke.is_set()))
        await asyncio.sleep(0)


async def advance(engine: Any, clock: Any, seconds: float) -> None:
    """Move the fake clock and let the engine react completely."""
    await settled(engine)
    clock.advance(seconds)
    await settled(engine)


async def crash(engine: Any) -> None:
    """What SIGKILL leaves of a host: its tasks end where they are, nothing is recorded on the
    way out (no interruption, no drain); committed transactions stay (synchronous=FULL)."""
    await engine.scheduler.stop()
    await engine.provider_supervisor.stop()
    for task in list(engine._tasks):
        task.cancel()
    await asyncio.gather(*engine._tasks, return_exceptions=True)
    engine._running = False
    await engine.store.close()
