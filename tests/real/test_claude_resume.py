"""Contract tests: Goalkeeper's engine resumes sessions the real ``claude`` 2.1.328 stopped, with
the real ``claude -p --resume`` — to the end of a turn, into a new limit, through a transient
429 — once each, on the real clock (resets a few seconds ahead)."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from core.models import GoalState, PauseReason
from tests.real.claude_mock import Answer, ClaudeApi
from tests.real.claude_world import ClaudeWorld
from tests.real.mockhttp import MockServer
from tests.real.terminal import eventually

Api = tuple[ClaudeApi, MockServer]


def stop_soon(world: ClaudeWorld, api: ClaudeApi, kind: str = "five_hour",
              after: int = 3) -> tuple[str, int]:
    """A print-mode session stopped by a limit that resets ``after`` seconds from now."""
    resets = int(time.time()) + after
    api.then(Answer.limit(kind, resets))
    run = world.print_mode("Make the integration tests pass")
    assert run.code == 1 and run.result["api_error"] == "usage_limit_reached"
    return run.session_id, resets


@pytest.mark.asyncio
async def test_a_print_mode_stop_is_resumed_headless_to_the_end_of_its_turn(
        claude_world: ClaudeWorld, claude_api: Api, engine_of: Any) -> None:
    api, _ = claude_api
    session, resets = stop_soon(claude_world, api)
    engine, _ = await engine_of(claude_world)
    goal_id = f"claude:{session}"
    goal = engine.goals[goal_id]
    assert goal.state is GoalState.PAUSED and goal.pause_reason is PauseReason.QUOTA
    assert goal.resets_at == datetime.fromtimestamp(resets, UTC)  # exact, never the minute
    assert goal.auto_resume_note is None and goal.next_resume_at is not None
    assert goal.next_resume_at >= datetime.fromtimestamp(resets, UTC)  # never before the reset
    await eventually(lambda: engine.goals[goal_id].state is GoalState.DONE, 40, "done")
    resumed = api.requests_of(session, "sdk-cli")[1:]
    assert len(resumed) == 1  # once
    assert "automatic resume" in resumed[0].prompt and "usage limit" in resumed[0].prompt
    assert "Carry on with the task" in resumed[0].prompt
    rows = await engine.reads.history(goal_id)
    assert [r.trigger.value for r in rows if r.event == "resumed" and r.trigger] == ["auto"]
    assert "the turn ended" in (engine.goals[goal_id].pause_detail or "") or any(
        "the turn ended" in (r.reason or "") for r in rows)


@pytest.mark.asyncio
async def test_a_headless_resume_into_a_new_limit_pauses_until_its_exact_reset(
        claude_world: ClaudeWorld, claude_api: Api, engine_of: Any) -> None:
    api, _ = claude_api
    session, _ = stop_soon(claude_world, api)
    later = int(time.time()) + 4 * 3600 + 17
    api.then(Answer.limit("seven_day_opus", later, now=time.time()))
    engine, _ = await engine_of(claude_world)
    goal_id = f"claude:{session}"
    await eventually(lambda: engine.goals[goal_id].resumed_at is not None
                     and engine.goals[goal_id].state is GoalState.PAUSED, 40, "paused again")
    await engine.drain()
    goal = engine.goals[goal_id]
    assert goal.pause_reason is PauseReason.QUOTA
    assert goal.resets_at == datetime.fromtimestamp(later, UTC)
    assert "claude:7d-opus" in goal.windows
    assert goal.next_resume_at is not None and goal.next_resume_at >= goal.resets_at
    await asyncio.sleep(2)  # the transcript's own copy of the new stop is followed too
    assert len(api.requests_of(session, "sdk-cli")) == 2  # the stop, one resume
    assert engine.goals[goal_id].resets_at == datetime.fromtimestamp(later, UTC)


@pytest.mark.asyncio
async def test_a_transient_429_in_a_headless_resume_is_retried_never_a_quota_pause(
        claude_world: ClaudeWorld, claude_api: Api, engine_of: Any) -> None:
    api, _ = claude_api
    session, _ = stop_soon(claude_world, api)
    api.then(Answer.server_busy())  # the first resume meets a busy server; the retry works
    engine, _ = await engine_of(claude_world)
    goal_id = f"claude:{session}"
    await eventually(lambda: engine.goals[goal_id].state is GoalState.DONE, 40, "done")
    rows = await engine.reads.history(goal_id)
    assert any(r.event == "retry_scheduled" and "transient 429" in (r.reason or "") for r in rows)
    paused = [r for r in rows if r.state_to is GoalState.PAUSED]
    assert len(paused) <= 1  # only the original stop; the transient never paused it
    assert len(api.requests_of(session, "sdk-cli")) == 3  # the stop, the 429, the retry
    five = engine.quotas.tracker("claude:5h").reading
    assert five is not None and five.used_percent == 42.0  # the last answer's exact reading


@pytest.mark.asyncio
async def test_the_reserve_lets_the_real_headless_turn_finish_then_pauses(
        claude_world: ClaudeWorld, claude_api: Api, engine_of: Any) -> None:
    """The reserve is reached while the real ``claude -p`` resume waits for its (slow) reply:
    no SIGINT — the turn writes its answer and ends — no other turn, the goal stays paused."""
    import dataclasses

    from tests.support.fakes import reading

    api, _ = claude_api
    session, _ = stop_soon(claude_world, api)
    api.then(dataclasses.replace(Answer.ok("Half of the tests pass now."), delay=3.0))
    engine, provider = await engine_of(claude_world, resume_reserve_percent=30)
    goal_id = f"claude:{session}"
    await eventually(lambda: len(api.requests_of(session, "sdk-cli")) == 2, 40, "asked")
    # running while its reply is slow (3 s): on a loaded machine the engine may mark it so a
    # moment after the API has seen the request
    await eventually(lambda: engine.goals[goal_id].state is GoalState.RUNNING, 2.5, "running",
                     lambda: engine.goals[goal_id].state)
    now = datetime.now(UTC)
    await engine.quota_intake.record_reading(reading("claude:5h", 75.0, now,
                                                     now.replace(year=now.year + 1),
                                        provider="claude"))
    await eventually(lambda: engine.goals[goal_id].state is GoalState.PAUSED, 10, "paused")
    assert goal_id in provider.runs  # the turn goes on
    await eventually(lambda: provider.runs == {}, 30, "the turn ended")
    texts = [json.dumps(r) for r in claude_world.records(session)]
    assert any("Half of the tests pass now." in t for t in texts)  # its answer was written
    assert not any("[Request interrupted by user]" in t for t in texts)
    await asyncio.sleep(1.5)
    assert len(api.requests_of(session, "sdk-cli")) == 2  # no further turn
    goal = engine.goals[goal_id]
    assert (goal.state, goal.pause_reason) == (GoalState.PAUSED, PauseReason.QUOTA)
    assert (goal.pause_detail or "").startswith("reserve: claude:5h 75 % used")
