"""A Hypothesis state machine over the goal machine and the entry points of a live engine.

Random interleavings of clicks, automatic triggers, runner reports, the passing of time, wall-clock
jumps (a suspend, an NTP step, backwards too) and host crashes with a restart (what SIGKILL leaves:
nothing recorded on the way out) must keep these true: a goal the user paused is never resumed
automatically; every runner start is a `resumed` result (never two starts for one claim); the
stored goal always equals the engine's copy; every call is answered with a result whose state is
the goal's state. ``CI=true`` runs more examples than a local run: as many as fit its time
budget on a loaded machine (tests/support/examples.py).
"""

from __future__ import annotations

import asyncio
import random
import tempfile
from datetime import timedelta

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    rule,
    run_state_machine_as_test,
)

from core.clock import FakeClock
from core.commands import Cancel, Pause, Resume, SetAutoResume
from core.engine import Engine
from core.models import GoalState, Outcome, PauseReason, Trigger
from core.paths import resolve_paths
from core.settings import Settings
from core.store import SqliteStore
from tests.support.examples import budgeted, examples
from tests.support.fakes import FakeProvider, crash, reading, settled

GOAL = "fake:g"


class EngineMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.clock = FakeClock()
        self.fake = FakeProvider(self.clock)
        reset = self.clock.now() + timedelta(minutes=10)
        self.fake.readings = [reading("fake:5h", 100, self.clock.now(), reset,
                                      limit_reached=True)]
        self.fake.fresh_readings = lambda: [reading("fake:5h", 5, self.clock.now(),
                                                    self.clock.now() + timedelta(hours=5))]
        self.fake.observe(GOAL, GoalState.PAUSED, reason=PauseReason.QUOTA, resets_at=reset,
                          auto_resume=True)
        home = tempfile.mkdtemp(prefix="gk-hyp-")
        self.paths = resolve_paths({"GOALKEEPER_HOME": home})
        self.engine = self._new_engine(0)
        self.run(self.engine.start())
        self.resumed = 0
        self.crashes = 0

    def _new_engine(self, seed: int) -> Engine:
        return Engine(self.paths, Settings(resume_jitter_seconds=0, stable_seconds=0),
                      [self.fake], self.clock, random.Random(seed))

    def run(self, coro):  # type: ignore[no-untyped-def]
        return self.loop.run_until_complete(coro)

    def teardown(self) -> None:
        self.run(self.engine.stop())
        self.loop.close()

    @property
    def goal(self):  # type: ignore[no-untyped-def]
        return self.engine.goals[GOAL]

    def check(self, result) -> None:  # type: ignore[no-untyped-def]
        assert result.state is self.goal.state
        if result.outcome is Outcome.RESUMED:
            self.resumed += 1

    @rule()
    def manual_resume(self) -> None:
        self.check(self.run(self.engine.perform(Resume(GOAL), "gui")))

    @rule(trigger=st.sampled_from([Trigger.AUTO, Trigger.WAKE, Trigger.STARTUP]))
    def automatic_resume(self, trigger: Trigger) -> None:
        user_paused = self.goal.pause_reason is PauseReason.USER
        result = self.run(self.engine.perform(Resume(GOAL, trigger), "hypothesis"))
        if user_paused:
            assert result.outcome is Outcome.REFUSED
        self.check(result)

    @rule()
    def pause(self) -> None:
        self.check(self.run(self.engine.perform(Pause(GOAL))))

    @rule(enabled=st.booleans())
    def toggle_auto_resume(self, enabled: bool) -> None:
        self.check(self.run(self.engine.perform(SetAutoResume(GOAL, enabled))))

    @rule(resets_in=st.integers(min_value=1, max_value=7200))
    def limit_hit(self, resets_in: int) -> None:
        self.fake.hit_limit(self.goal, self.clock.now() + timedelta(seconds=resets_in))
        self.run(settled(self.engine))

    @rule(seconds=st.integers(min_value=1, max_value=4000))
    def time_passes(self, seconds: int) -> None:
        user_paused = self.goal.pause_reason is PauseReason.USER
        starts = len(self.fake.starts)
        self.run(settled(self.engine))
        self.clock.advance(seconds)
        self.run(settled(self.engine))
        if user_paused:
            assert len(self.fake.starts) == starts  # the scheduler never revives it

    @rule(seconds=st.integers(min_value=-7200, max_value=20000))
    def wall_clock_jumps(self, seconds: int) -> None:
        """A suspend (forward) or an NTP step (either way): only the wall clock moves."""
        user_paused = self.goal.pause_reason is PauseReason.USER
        starts = len(self.fake.starts)
        self.run(settled(self.engine))
        self.clock.jump(seconds)
        self.engine.scheduler.poke()
        self.run(settled(self.engine))
        if user_paused:
            assert len(self.fake.starts) == starts

    @rule()
    def host_crashes_and_restarts(self) -> None:
        """SIGKILL: the tasks die, nothing is recorded on the way out; a new host starts on the
        same data directory (and recovers what the old one left running)."""
        user_paused = self.goal.pause_reason is PauseReason.USER
        starts = len(self.fake.starts)
        self.run(crash(self.engine))
        self.crashes += 1
        self.engine = self._new_engine(self.crashes)
        self.run(self.engine.start())
        self.run(settled(self.engine))
        if user_paused:
            assert len(self.fake.starts) == starts  # start-up recovery never revives it

    @rule()
    def cancel_rarely(self) -> None:
        if random.Random(len(self.fake.starts)).random() < 0.1:
            self.check(self.run(self.engine.perform(Cancel(GOAL))))

    @invariant()
    def one_start_per_resume(self) -> None:
        # the loop only runs inside `run`: let the scheduler finish what it started first
        self.run(settled(self.engine))
        # every start is exactly one resumed claim (ours, or the scheduler's from history)
        assert len(self.fake.starts) == self.resumed + self._scheduler_resumes()

    def _scheduler_resumes(self) -> int:
        """Resumes nobody asked for through a call here: the scheduler's and start-up's."""
        rows = self.run(self.engine.reads.history(GOAL, limit=10_000))
        return sum(1 for r in rows if r.event == "resume_requested"
                   and r.origin in ("scheduler", "startup")
                   and r.outcome is Outcome.RESUMED and r.trigger is not None)

    @invariant()
    def store_matches_memory(self) -> None:
        self.run(settled(self.engine))
        store = SqliteStore(self.engine.paths.database)
        try:
            assert store.get_goal(GOAL) == self.goal
        finally:
            store.close()


#: one Hypothesis run; under CI=true they repeat for 45 s (at most 15 runs: 300 examples) —
#: the machine bounds its work by time on a loaded machine (tests/support/examples.py)
ONE_RUN = settings(max_examples=examples(25, 20), stateful_step_count=examples(15, 40),
                   deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_engine_machine() -> None:
    budgeted(lambda: run_state_machine_as_test(EngineMachine, settings=ONE_RUN),
             seconds=examples(0, 45), most=examples(1, 15))
