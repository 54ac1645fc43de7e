"""The demo provider: a simulated agent with a one-minute quota, to watch auto-resume happen.

A periodic window ``demo:1m`` allows ``units`` units per ``period`` seconds (6 per 60 s by default).
Each demo goal needs a number of units and consumes one every ``step_seconds`` while it runs;
when the window is empty its runner reports a limit hit with the window's exact reset instant.
Two goals have auto-resume on, one off — that one stays paused until someone resumes it by hand.

Everything runs in-process on the engine's clock, so tests drive the demo with a fake clock.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.clock import Clock
from core.i18n import N_, _
from core.models import Exactness, Goal, GoalState, QuotaKind, QuotaReading
from core.providers.base import GoalObservation, LimitHit, Provider, StartOutcome

WINDOW_ID = "demo:1m"


@dataclass(frozen=True)
class DemoGoal:
    id: str
    title: str
    units: int
    auto_resume: bool


DEMO_GOALS = (
    DemoGoal("demo:refactor", N_("Refactor the parser module"), 6, True),
    DemoGoal("demo:tests", N_("Raise test coverage to 90 %"), 3, True),
    DemoGoal("demo:docs", N_("Write the user guide (auto-resume off)"), 3, False),
)


class DemoQuota:
    """A periodic window of ``limit`` units per ``period`` seconds, anchored at ``origin``."""

    def __init__(self, origin: datetime, limit: int = 6, period: float = 60.0) -> None:
        self.origin = origin
        self.limit = limit
        self.period = period
        self._window_start = origin
        self.used = 0

    def _roll(self, now: datetime) -> None:
        elapsed = (now - self.origin).total_seconds()
        start = self.origin + timedelta(seconds=math.floor(elapsed / self.period) * self.period)
        if start != self._window_start:
            self._window_start = start
            self.used = 0

    def take(self, now: datetime) -> bool:
        self._roll(now)
        if self.used >= self.limit:
            return False
        self.used += 1
        return True

    def resets_at(self, now: datetime) -> datetime:
        self._roll(now)
        return self._window_start + timedelta(seconds=self.period)

    def reading(self, now: datetime) -> QuotaReading:
        self._roll(now)
        return QuotaReading(
            window_id=WINDOW_ID, provider="demo", label=N_("Demo · 1 min"), kind=QuotaKind.PERIODIC,
            used=float(self.used), limit=float(self.limit),
            used_percent=100.0 * self.used / self.limit, resets_at=self.resets_at(now),
            window_seconds=self.period, limit_reached=self.used >= self.limit,
            exactness=Exactness.EXACT, observed_at=now,
        )


class DemoProvider(Provider):
    """Simulated goals and quota. Owns one worker task per running goal."""

    name = "demo"
    description = N_("built-in demo goals with a 6-units-per-minute quota")

    def __init__(self, clock: Clock, step_seconds: float = 2.0, units: int = 6,
                 period: float = 60.0, goals: tuple[DemoGoal, ...] = DEMO_GOALS) -> None:
        super().__init__()
        self.clock = clock
        self.step_seconds = step_seconds
        self.quota = DemoQuota(clock.now(), units, period)
        self.goals = {g.id: g for g in goals}
        self._workers: dict[str, asyncio.Task[None]] = {}
        self.starts: list[tuple[str, int]] = []  # (goal, fence) of every runner start

    async def discover(self) -> list[GoalObservation]:
        now = self.clock.now()
        return [
            # the demo's titles in the host's language (throw-away data made to be looked at)
            GoalObservation(id=g.id, title=_(g.title), state=GoalState.IDLE, observed_at=now,
                            windows=(WINDOW_ID,), auto_resume=g.auto_resume,
                            data={"units": g.units})
            for g in self.goals.values()
        ]

    async def read_quotas(self, fresh: bool = False) -> list[QuotaReading]:
        return [self.quota.reading(self.clock.now())]

    async def start_goal(self, goal: Goal, fence: int) -> StartOutcome:
        return self._launch(goal, fence)

    async def resume_goal(self, goal: Goal, fence: int) -> StartOutcome:
        return self._launch(goal, fence)

    def _launch(self, goal: Goal, fence: int) -> StartOutcome:
        spec = self.goals.get(goal.id)
        if spec is None:
            raise LookupError(f"{goal.id} is not a demo goal")
        done = int(goal.data.get("done_units", 0))
        if done >= spec.units:
            return StartOutcome.ALREADY_DONE
        self._stop_worker(goal.id)
        self.starts.append((goal.id, fence))
        task = asyncio.ensure_future(self._work(goal.id, fence, done, spec.units))
        task.set_name(f"demo:{goal.id}")
        self._workers[goal.id] = task
        return StartOutcome.STARTED

    async def pause_goal(self, goal: Goal) -> None:
        self._stop_worker(goal.id)

    async def cancel_goal(self, goal: Goal) -> None:
        self._stop_worker(goal.id)

    async def stop(self) -> None:
        for goal_id in list(self._workers):
            self._stop_worker(goal_id)
        await asyncio.sleep(0)

    def _stop_worker(self, goal_id: str) -> None:
        task = self._workers.pop(goal_id, None)
        if task is not None and not task.done():
            task.cancel()

    async def _work(self, goal_id: str, fence: int, done: int, units: int) -> None:
        while done < units:
            await self.clock.sleep(self.step_seconds)
            now = self.clock.now()
            if not self.quota.take(now):
                self._limit(goal_id, fence, now)
                return
            done += 1
            self.sink.quota_observed(self.quota.reading(now))
            self.sink.goal_progress(goal_id, fence, N_("{done}/{units} units").format(
                done=done, units=units),
                                    {"done_units": done})
        self.sink.goal_finished(goal_id, fence, N_("all {units} units done").format(units=units))
        self._workers.pop(goal_id, None)

    def _limit(self, goal_id: str, fence: int, now: datetime) -> None:
        reading = self.quota.reading(now)
        self.sink.quota_observed(reading)
        self.sink.goal_limited(goal_id, fence, LimitHit(
            windows=(WINDOW_ID,), resets_at=reading.resets_at, exactness=Exactness.EXACT,
            detail=N_("demo quota used up ({used}/{limit})").format(used=self.quota.used,
                                                                    limit=self.quota.limit),
            readings=(reading,),
        ))
        self._workers.pop(goal_id, None)
