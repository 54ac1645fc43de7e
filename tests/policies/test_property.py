"""A property over random schedules: no automatic resume ever starts outside the allowed hours or
with no more than the reserve left, and no goal Goalkeeper resumed keeps running at the reserve —
whatever the zone (DST edges included), the hours, the reserve, the slots and the usage do."""

from __future__ import annotations

import asyncio
import random
import shutil
import tempfile
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.clock import FakeClock
from core.commands import Resume, SetGoalPolicy
from core.engine import Engine
from core.goals.marks import ran_automatically
from core.goals.rules import ResumeRules
from core.models import GoalState, Outcome, PauseReason, Trigger
from core.paths import resolve_paths
from core.settings import Settings
from tests.support.fakes import FakeProvider, reading, settled

WINDOW = "fake:5h"
GOALS = ("fake:a", "fake:b", "fake:c")
SPECS = ["", "Mon-Fri 19:00-08:00, Sat-Sun 00:00-24:00", "22:00-06:00", "Sun 02:30-04:00",
         "except Mon-Fri 09:00-18:00", "Tue/Thu 12:00-12:30"]
# some starts right before DST changes in both zones, and ordinary days
STARTS = [datetime(2026, 3, 28, 20, 0, tzinfo=UTC), datetime(2026, 10, 24, 22, 0, tzinfo=UTC),
          datetime(2026, 3, 7, 23, 0, tzinfo=UTC), datetime(2026, 10, 31, 23, 0, tzinfo=UTC),
          datetime(2026, 7, 7, 12, 0, tzinfo=UTC), datetime(2026, 1, 2, 5, 30, tzinfo=UTC)]

# (what happens, its value, then how long nothing happens)
step = st.tuples(
    st.sampled_from(["wait", "level", "next", "next", "limit", "manual", "priority"]),
    st.sampled_from([0, 1, 2, 20, 45, 65, 72, 85, 95, 100]),
    st.sampled_from([0, 30, 300, 700, 3600, 3700, 4 * 3600, 9 * 3600]))


class World:
    """One engine on a fake clock with three goals waiting on one window."""

    def __init__(self, start: datetime, options: dict[str, Any]) -> None:
        self.clock = FakeClock(start)
        self.fake = FakeProvider(self.clock)
        self.level = {"used": 0.0, "reset": start + timedelta(hours=1)}
        self.next_period_used = 0.0  # what the user uses of the next window before we look
        self.fake.readings = [reading(WINDOW, 100, start, self.level["reset"],  # type: ignore[arg-type]
                                      limit_reached=True)]
        for goal in GOALS:
            self.fake.observe(goal, GoalState.PAUSED, reason=PauseReason.QUOTA,
                              resets_at=self.level["reset"], auto_resume=True,  # type: ignore[arg-type]
                              windows=(WINDOW,))
        self.fake.fresh_readings = lambda: [self._reading()]
        self.home = tempfile.mkdtemp(prefix="gk-policy-")
        self.settings = Settings(resume_jitter_seconds=0, stable_seconds=0, **options)
        self.rules = ResumeRules.from_settings(self.settings)
        self.engine = Engine(resolve_paths({"GOALKEEPER_HOME": self.home}), self.settings,
                             [self.fake], self.clock, random.Random(0))

    def _reading(self) -> Any:
        if self.level["reset"] <= self.clock.now():  # type: ignore[operator]
            self.level = {"used": self.next_period_used,
                          "reset": self.clock.now() + timedelta(hours=5)}
        return reading(WINDOW, self.level["used"], self.clock.now(), self.level["reset"],  # type: ignore[arg-type]
                       limit_reached=self.level["used"] >= 100)  # type: ignore[operator]

    async def apply(self, kind: str, value: int, then: int) -> None:
        engine, clock = self.engine, self.clock
        goal = GOALS[value % len(GOALS)]
        if kind == "level":
            self.level["used"] = float(value)
            self.fake.sink.quota_observed(self._reading())
        elif kind == "next":
            self.next_period_used = float(min(value, 95))
        elif kind == "limit" and engine.goals[goal].state is GoalState.RUNNING:
            self.level = {"used": 100.0, "reset": clock.now() + timedelta(hours=2)}
            self.fake.hit_limit(engine.goals[goal], self.level["reset"],  # type: ignore[arg-type]
                                readings=(self._reading(),))
        elif kind == "manual":
            await engine.perform(Resume(goal), "cli")
        elif kind == "priority":
            await engine.perform(SetGoalPolicy(goal, "priority", str(value % 7 - 3)))
        await settled(engine)
        self.check_running()
        if then:
            clock.advance(then)
            await settled(engine)

    def check_running(self) -> None:
        reading_now = self.engine.quotas.effective(WINDOW, self.clock.now())
        keep = self.rules.reserve_for(WINDOW)
        if keep <= 0 or reading_now is None or reading_now.used_percent is None:
            return
        for goal in self.engine.goals.values():
            if ran_automatically(goal):
                assert reading_now.used_percent < 100 - keep, goal

    async def check_history(self) -> int:
        automatic = 0
        hours = self.rules.hours
        keep = self.rules.reserve_for(WINDOW)
        for goal in GOALS:
            for row in await self.engine.reads.history(goal, limit=10_000):
                if row.event != "resume_requested" or row.outcome is not Outcome.RESUMED or (
                        row.trigger is Trigger.MANUAL):
                    continue
                automatic += 1
                if hours is not None:
                    assert hours.in_zone(self.rules.zone).allows(row.at), row
                for quota in row.quotas:
                    used = quota.get("used_percent")
                    assert keep <= 0 or used is None or used < 100 - keep, row
        return automatic


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=st.sampled_from(STARTS), spec=st.sampled_from(SPECS),
       zone=st.sampled_from(["Europe/Berlin", "America/New_York"]),
       reserve=st.sampled_from([0, 10, 30, 60]), k=st.integers(min_value=0, max_value=2),
       steps=st.lists(step, min_size=1, max_size=10))
def test_no_automatic_resume_outside_the_hours_or_into_the_reserve(
        start: datetime, spec: str, zone: str, reserve: int, k: int,
        steps: list[tuple[str, int, int]]) -> None:
    world = World(start, {"auto_resume_hours": spec, "auto_resume_timezone": zone,
                          "resume_reserve_percent": reserve, "max_concurrent_resumes": k,
                          "resume_settle_seconds": 600})

    async def scenario() -> None:
        await world.engine.start()
        try:
            await settled(world.engine)
            for kind, value, then in steps:
                await world.apply(kind, value, then)
                world.check_running()
            await world.check_history()
        finally:
            await world.engine.stop()

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(scenario())
    finally:
        loop.close()
        shutil.rmtree(world.home, ignore_errors=True)
