"""A queued Claude prompt (issue 23) against a fake ``claude``: a new session with the id
Goalkeeper picked (``claude -p --session-id``), started at the reset, then followed and — once
its transcript exists — resumed like any tracked session."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from core.commands import Queue
from core.models import GoalState
from core.providers.base import RunnerError
from core.providers.claude.runner import new_session_command
from tests.claude.plays import allowed
from tests.support.claude import start
from tests.support.fakes import advance, reading, until

pytestmark = pytest.mark.asyncio


async def test_a_queued_prompt_starts_a_new_session_at_the_reset(make_engine: Any, paths: Any,
                                                                 clock: Any, world: Any) -> None:
    engine, provider = await start(make_engine, paths, clock, world)
    reset = clock.now() + timedelta(hours=1)
    await engine.quota_intake.record_reading(reading("claude:5h", 70, clock.now(), reset,
                                                     provider="claude"))
    world.fake.play(allowed(cwd=str(world.repo)))
    result = await engine.perform(Queue("", provider="claude", cwd=str(world.repo),
                                        text="Write the changelog", window="claude:5h"), "cli")
    assert result.outcome.value == "queued", result.reason
    session = result.goal.split(":", 1)[1]
    assert session in provider.tracking.load().tracked  # followed once Claude writes it
    await advance(engine, clock, 3590)
    assert world.fake.invocations() == []  # not before the reset
    await advance(engine, clock, 11)
    # the statusline after the reset: the new period
    await engine.quota_intake.record_reading(reading("claude:5h", 2, clock.now(),
                                                     reset + timedelta(hours=5),
                                                     provider="claude"))
    await advance(engine, clock, 60)
    await until(lambda: bool(world.fake.invocations()), 10)
    [call] = world.fake.invocations()
    argv = call["argv"]
    assert argv[:4] == ["-p", "--session-id", session, "Write the changelog"]  # type: ignore[index]
    assert call["cwd"] == str(world.repo)
    assert not any("dangerously" in a or "bypass" in a for a in argv)  # type: ignore[union-attr]
    await until(lambda: engine.goals[result.goal].state is GoalState.DONE, 10)
    # its transcript exists now: a later start of this goal would resume the session
    goal = engine.goals[result.goal]
    assert not provider._not_started(goal, session)


async def test_the_new_session_command_refuses_what_the_resume_refuses() -> None:
    session = "5e55e55e-1c2d-4e5f-8a6b-7c8d9e0f1a2b"
    assert new_session_command("/bin/claude", session, "Fix it") == [
        "/bin/claude", "-p", "--session-id", session, "Fix it", "--output-format",
        "stream-json", "--verbose"]
    with pytest.raises(RunnerError, match="option"):
        new_session_command("claude", session, "--dangerously-skip-permissions")
    with pytest.raises(RunnerError, match="bypass"):
        new_session_command("claude", session, "run with bypassPermissions")


async def test_a_cancelled_queued_prompt_drops_its_session_id(make_engine: Any, paths: Any,
                                                              clock: Any, world: Any) -> None:
    from core.commands import Cancel

    engine, provider = await start(make_engine, paths, clock, world)
    await engine.quota_intake.record_reading(reading(
        "claude:5h", 70, clock.now(), clock.now() + timedelta(hours=1), provider="claude"))
    result = await engine.perform(Queue("", provider="claude", cwd=str(world.repo),
                                        text="Write the changelog", window="claude:5h"), "cli")
    session = result.goal.split(":", 1)[1]
    assert session in provider.tracking.load().tracked
    await engine.perform(Cancel(result.goal), "cli")
    assert session not in provider.tracking.load().tracked
    assert world.fake.invocations() == []
