"""The demo on a fake clock: real timings (6 units per 60 s, a unit every 2 s) in no time."""

from __future__ import annotations

import asyncio

import pytest

from core.commands import Resume
from core.demo import DEMO_SETTINGS, DemoSession
from core.models import GoalState, PauseReason
from core.settings import Settings
from tests.support.fakes import settled, until

pytestmark = pytest.mark.asyncio


async def test_demo_pauses_for_quota_and_resumes_automatically(paths, clock) -> None:
    lines: list[str] = []
    session = DemoSession(paths, Settings(**DEMO_SETTINGS), clock, lines.append)
    host = session.make_host()
    run = asyncio.ensure_future(session.run(host, timeout=3600))
    await until(lambda: "demo:docs" in host.engine.goals
                and host.engine.goals["demo:docs"].state is GoalState.RUNNING)
    start = clock.now()

    def auto_goals_done() -> bool:
        goals = host.engine.goals
        return all(goals[g].state is GoalState.DONE for g in ("demo:refactor", "demo:tests"))

    while not auto_goals_done() and (clock.now() - start).total_seconds() < 180:
        await settled(host.engine)
        clock.advance(1)
    elapsed = (clock.now() - start).total_seconds()
    assert await run == 0
    assert 60 < elapsed < 90  # "within about a minute"
    text = "\n".join(lines)
    assert "paused — quota: demo quota used up (6/6)" in text
    assert "demo:refactor  resumed (auto, scheduler)" in text
    assert "demo:docs      not scheduled — auto-resume is off" in text, text
    docs = [line for line in lines if "demo:docs" in line]
    assert not any("resumed" in line for line in docs)


async def test_demo_goal_with_auto_resume_off_waits_for_a_manual_resume(paths, clock) -> None:
    session = DemoSession(paths, Settings(**DEMO_SETTINGS), clock, lambda _: None)
    host = session.make_host()
    await host.start()
    try:
        engine = host.engine
        await session.restart_goals(host)
        for _ in range(200):
            await settled(engine)
            clock.advance(1)
        docs = engine.goals["demo:docs"]
        assert (docs.state, docs.pause_reason) == (GoalState.PAUSED, PauseReason.QUOTA)
        result = await engine.perform(Resume("demo:docs"), "cli")
        assert result.outcome.value == "resumed"
        for _ in range(10):
            await settled(engine)
            clock.advance(1)
        await settled(engine)
        assert engine.goals["demo:docs"].state is GoalState.DONE
    finally:
        await host.stop()
