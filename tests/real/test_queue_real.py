"""Start at the reset (issue 23) on the pinned real CLIs, offline against the mock APIs on
127.0.0.1: a Claude prompt and a Codex goal queued for a window's next reset start once after
it, not before. Each test prints what it measured (delay after the reset, spawns) with ``-s``.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from core.clock import FakeClock
from core.commands import Queue
from core.models import GoalState, Outcome
from tests.real.claude_mock import Answer, ClaudeApi
from tests.real.claude_world import ClaudeWorld
from tests.real.codex_mock import CodexMock, World, running_mock, settle
from tests.real.mockhttp import MockServer
from tests.real.terminal import eventually
from tests.support.fakes import until

Api = tuple[ClaudeApi, MockServer]


async def resumes(engine: Any, goal_id: str) -> list[Any]:
    return [r for r in await engine.reads.history(goal_id, limit=500)
            if r.event == "resume_requested" and r.outcome is Outcome.RESUMED
            and r.state_to is None]


# -- Claude ----------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_queued_claude_prompt_starts_once_after_the_reset(
        claude_world: ClaudeWorld, claude_api: Api, engine_of: Any) -> None:
    api, _ = claude_api
    api.then(Answer.ok("Done: the changelog is written."))
    engine, provider = await engine_of(claude_world, resume_margin_seconds=1,
                                       resume_failure_backoff_seconds=1)
    statusline = provider.control_ops()["claude.statusline"]
    reset = int(time.time()) + 6
    await statusline({"payload": {"rate_limits": {
        "five_hour": {"used_percentage": 61, "resets_at": reset}}}})
    await engine.drain()
    result = await engine.perform(Queue("", provider="claude", cwd=str(claude_world.project),
                                        text="Write the changelog", window="claude:5h"), "cli")
    assert result.outcome is Outcome.QUEUED, result.reason
    goal_id, session = result.goal, result.goal.split(":", 1)[1]
    assert result.not_before == datetime.fromtimestamp(reset, UTC) + timedelta(seconds=1)
    # not before the reset: no claude process, no request, no transcript
    while time.time() < reset - 0.5:
        assert not provider.runs and not api.requests_of(session)
        await asyncio.sleep(0.2)
    assert not claude_world.transcript(session).exists()
    # the statusline after the reset: the new period (what the hook sends on the next refresh)
    while time.time() < reset:
        await asyncio.sleep(0.05)
    await statusline({"payload": {"rate_limits": {
        "five_hour": {"used_percentage": 1, "resets_at": reset + 5 * 3600}}}})
    await eventually(lambda: bool(api.requests_of(session, "sdk-cli")), 40, "started")
    delay = time.time() - reset
    await eventually(lambda: engine.goals[goal_id].state is GoalState.DONE, 40, "done")
    await asyncio.sleep(1.0)  # a second trigger would start it again meanwhile
    requests = api.requests_of(session, "sdk-cli")
    assert len(requests) == 1 and "Write the changelog" in requests[0].prompt
    assert len(await resumes(engine, goal_id)) == 1
    assert claude_world.transcript(session).exists()  # the session Goalkeeper named
    print(f"\nclaude queued start: first request {delay:.2f} s after the reset; "
          f"claude spawns: {len(requests)}; resumes: 1")


# -- Codex -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mock() -> Any:
    with running_mock() as server:
        yield server


@pytest.fixture
def world(codex_bin: Path, mock: CodexMock, tmp_path: Path) -> Any:
    mock.set(mode="complete", delay=0.0, reset_credits=None, spend_control=None, allowed=True,
             usage5=40, usage7=20, used5=40, reset5=0)
    world = World(codex_bin, mock, tmp_path)
    yield world
    assert asyncio.run(settle(world.home)) == [], "codex processes left behind"


@pytest.fixture
def clock() -> FakeClock:
    """The engine's fake clock, started at the real time (the mock's resets are real)."""
    return FakeClock(datetime.now(UTC))


@pytest.mark.asyncio
async def test_a_queued_codex_goal_starts_once_after_the_reset(world: World, make_engine: Any,
                                                               clock: FakeClock) -> None:
    reset = int(clock.now().timestamp()) + 3600
    world.mock.set(reset5=reset)
    settings = world.settings(resume_margin_seconds=5)
    engine = await make_engine(world.provider(settings, clock), settings=settings)

    def responses() -> list[Any]:  # this test's (the module's mock served the other end's)
        return world.mock.requests("/responses")[earlier:]

    earlier = len(world.mock.requests("/responses"))
    assert await engine.quota_intake.fresh_read("codex") is None  # the window's reset, read
    result = await engine.perform(Queue("", provider="codex", cwd=str(world.repo),
                                        text="Write report Q", window="codex:5h"), "cli")
    assert result.outcome is Outcome.QUEUED, result.reason
    thread = result.goal.split(":", 1)[1]
    assert world.db_goal(thread) == ("paused", "Write report Q")  # set in Codex, not run
    assert responses() == []
    # up to the reset: nothing starts (the scheduler's passes, a poll of the goals database)
    for _ in range(59):
        clock.advance(60)
        await asyncio.sleep(0.05)
    await engine.providers["codex"].poll()
    await engine.drain()
    assert responses() == []
    goal = engine.goals[result.goal]
    assert goal.state is GoalState.PAUSED and goal.steering.queued is not None
    # the reset: the usage endpoint now says the new period
    world.mock.set(usage5=1, used5=1, reset5=reset + 5 * 3600)
    clock.advance((datetime.fromtimestamp(reset, UTC) - clock.now()).total_seconds() + 5.5)
    began = time.monotonic()
    try:
        await until(lambda: bool(responses()), 60)
    except AssertionError:
        for r in reversed(await engine.reads.history(result.goal)):
            print(r.at, r.event, r.outcome, r.reason, r.quotas, r.detail)
        print(engine.goals[result.goal])
        raise
    spawn_seconds = time.monotonic() - began
    await until(lambda: engine.goals[result.goal].state is GoalState.DONE, 60)
    assert world.db_goal(thread)[0] == "complete"
    assert len(await resumes(engine, result.goal)) == 1
    fired = [(deadline, at) for gid, deadline, at in engine.scheduler.fired
             if gid == result.goal]
    assert len(fired) == 1
    late = (fired[0][1] - datetime.fromtimestamp(reset, UTC)).total_seconds()
    await until(lambda: engine.providers["codex"].runner.runs == {}, 60)
    statuses = [line["payload"]["goal"]["status"] for line in world.rollout(thread)
                if line["type"] == "event_msg"
                and line["payload"].get("type") == "thread_goal_updated"]
    assert statuses.count("active") == 1, statuses  # set active once: one start
    turns = [line for line in world.rollout(thread) if line["type"] == "event_msg"
             and line["payload"].get("type") == "task_started"]
    print(f"\ncodex rollout: goal statuses {statuses}; turns started: {len(turns)}")
    print(f"\ncodex queued start: fired {late:.1f} s after the reset (fake clock, margin 5 s); "
          f"first API request {spawn_seconds:.2f} s of real time later; "
          f"/responses requests: {len(responses())}; resumes: 1")
