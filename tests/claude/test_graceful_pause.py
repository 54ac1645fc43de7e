"""The policy pause of a headless run is graceful: the ``claude -p`` turn in progress ends by
itself (no SIGINT) and no other turn starts; a turn outlasting the timeout is stopped like a
pause (fake ``claude``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.clock import FakeClock
from core.commands import SetAutoResume
from core.models import GoalState, PauseReason
from core.paths import Paths
from tests.claude.plays import allowed, slow
from tests.support.claude import GOAL, FakeClaude, World, make_run, run_until, start
from tests.support.engine import EngineFactory
from tests.support.fakes import reading, until

pytestmark = pytest.mark.asyncio


def turn_ends(fake: FakeClaude) -> list[object]:
    return [e for e in fake.entries() if e.get("turn_ended")]


async def test_the_turn_in_progress_ends_by_itself_and_no_other_starts(
        fake_claude: FakeClaude, tmp_path: Path) -> None:
    fake_claude.play(slow(0.8), allowed())
    run, sink = make_run(fake_claude, tmp_path, keep=True)  # it would prompt again
    await run.start()
    await run.finish_turn(30)
    assert fake_claude.signals() == []
    assert len(turn_ends(fake_claude)) == 1  # the turn ran to its end
    assert len(fake_claude.invocations()) == 1  # no continuation
    assert sink.reports == [] and not run.running  # the goal is paused already


async def test_a_turn_outlasting_the_timeout_is_stopped_like_a_pause(
        fake_claude: FakeClaude, tmp_path: Path) -> None:
    fake_claude.play(slow(30))
    run, sink = make_run(fake_claude, tmp_path)
    await run.start()
    await run.finish_turn(0.3)
    assert fake_claude.signals() == ["SIGINT"]
    assert turn_ends(fake_claude) == [] and sink.reports == []


async def test_the_reserve_pauses_an_automatic_resume_after_its_turn(
        make_engine: EngineFactory, paths: Paths, clock: FakeClock, world: World) -> None:
    world.session()
    world.fake.play(slow(1.0))
    engine, provider = await start(make_engine, paths, clock, world, resume_reserve_percent=30)
    await engine.perform(SetAutoResume(GOAL, True), "test")
    await run_until(clock, datetime(2026, 7, 7, 14, 2, tzinfo=UTC))
    await until(lambda: engine.goals[GOAL].state is GoalState.RUNNING, timeout=10)
    await engine.quota_intake.record_reading(reading("claude:5h", 75.0, clock.now(),
                                        clock.now() + timedelta(hours=4), provider="claude"))
    await until(lambda: engine.goals[GOAL].state is GoalState.PAUSED, timeout=10)
    assert GOAL in provider.runs  # the turn goes on
    await until(lambda: provider.runs == {}, timeout=10)
    assert world.fake.signals() == [] and len(turn_ends(world.fake)) == 1
    await run_until(clock, clock.now() + timedelta(minutes=5))
    await engine.drain()
    assert len(world.fake.invocations()) == 1
    g = engine.goals[GOAL]
    assert (g.state, g.pause_reason) == (GoalState.PAUSED, PauseReason.QUOTA)
    assert (g.pause_detail or "").startswith("reserve: claude:5h 75 % used")
