"""End to end through the engine: one resume per limit episode, never against Claude's own
auto-continue, and a clean stop on pause."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from core.clock import FakeClock
from core.commands import Pause, Resume, SetAutoResume
from core.models import GoalState, PauseReason
from core.paths import Paths
from core.providers.claude.provider import BILLING_NOTICE
from core.providers.claude.sessions import LIVE_BLOCK, NATIVE_BLOCK
from tests.claude.builders import assistant, system_notice, user, write_session
from tests.claude.plays import allowed, hanging, limited
from tests.support.claude import GOAL, World, live_session, run_until, start
from tests.support.claude import SCENARIO_SESSION as SESSION
from tests.support.engine import EngineFactory
from tests.support.fakes import until


@pytest.mark.asyncio
async def test_exactly_one_resume_per_limit_episode(make_engine: EngineFactory, paths: Paths,
                                                    clock: FakeClock, world: World) -> None:
    world.session()
    world.fake.play(allowed(cwd=str(world.repo)))
    engine, _ = await start(make_engine, paths, clock, world)
    goal = engine.goals[GOAL]
    assert goal.state is GoalState.PAUSED and goal.pause_reason is PauseReason.QUOTA
    # "resets 2pm" may mean any second of 14:00: the last one, so never before the real reset
    assert goal.resets_at == datetime(2026, 7, 7, 14, 0, 59, tzinfo=UTC)
    assert goal.title == "Make the integration tests pass"
    turned_on = await engine.perform(SetAutoResume(GOAL, True), "test")
    assert turned_on.notice == BILLING_NOTICE  # said once, plainly
    assert engine.goals[GOAL].next_resume_at == datetime(2026, 7, 7, 14, 1, 44, tzinfo=UTC)

    await run_until(clock, datetime(2026, 7, 7, 14, 1, 30, tzinfo=UTC))
    assert world.fake.invocations() == []  # not before the reset + margin
    await run_until(clock, datetime(2026, 7, 7, 14, 2, tzinfo=UTC))
    await until(lambda: engine.goals[GOAL].state is GoalState.DONE, timeout=10)
    await run_until(clock, datetime(2026, 7, 7, 20, 0, tzinfo=UTC), step=60)
    assert len(world.fake.invocations()) == 1
    assert engine.goals[GOAL].state is GoalState.DONE
    rows = await engine.reads.history(GOAL)
    assert [r.trigger.value for r in rows if r.event == "resumed" and r.trigger] == ["auto"]


@pytest.mark.asyncio
async def test_a_new_limit_pauses_with_the_exact_reset_then_resumes_once_more(
        make_engine: EngineFactory, paths: Paths, clock: FakeClock, world: World) -> None:
    world.session()
    world.fake.play(limited(cwd=str(world.repo)),
                    allowed(at="2026-07-07T19:01:00.000Z", cwd=str(world.repo)))
    engine, _ = await start(make_engine, paths, clock, world, auto_resume_default=True)
    await run_until(clock, datetime(2026, 7, 7, 14, 2, tzinfo=UTC))
    await until(lambda: engine.goals[GOAL].state is GoalState.PAUSED
                and engine.goals[GOAL].resumed_at is not None, timeout=10)
    await engine.drain()
    await clock.run_for(5, step=1)  # the transcript's own copy of the stop is followed too
    goal = engine.goals[GOAL]
    assert goal.pause_reason is PauseReason.QUOTA
    assert goal.resets_at == datetime(2026, 7, 7, 19, tzinfo=UTC)  # exact, from the stream
    assert len(world.fake.invocations()) == 1
    await run_until(clock, datetime(2026, 7, 7, 19, 1, tzinfo=UTC), step=60)
    await until(lambda: engine.goals[GOAL].state is GoalState.DONE, timeout=10)
    await run_until(clock, datetime(2026, 7, 8, 2, 0, tzinfo=UTC), step=120)
    assert len(world.fake.invocations()) == 2  # one per episode


@pytest.mark.asyncio
async def test_claudes_own_auto_continue_means_no_resume(make_engine: EngineFactory,
                                                         paths: Paths, clock: FakeClock,
                                                         world: World) -> None:
    path = world.session(version="2.1.328")
    world.armed()
    live_session(world.config, SESSION)  # the TUI is open and waits for the reset
    world.fake.play(allowed(cwd=str(world.repo)))
    engine, _ = await start(make_engine, paths, clock, world, auto_resume_default=True)
    goal = engine.goals[GOAL]
    assert goal.auto_resume_note is not None and goal.auto_resume_note.startswith(NATIVE_BLOCK)
    assert goal.next_resume_at is None
    rows = await engine.reads.history(GOAL)
    assert any(r.event == "resume_not_scheduled" and (r.reason or "").startswith(NATIVE_BLOCK)
               for r in rows)
    await run_until(clock, datetime(2026, 7, 7, 15, 0, tzinfo=UTC), step=60)
    assert world.fake.invocations() == []
    # Claude continues by itself at the reset: the goal just follows
    write_session(world.config, [
        {"type": "system", "subtype": "informational", "sessionId": SESSION,
         "content": "Usage limit reset · Continuing automatically",
         "timestamp": "2026-07-07T15:00:30.000Z"},
        assistant("msg_native", "2026-07-07T15:00:40.000Z", request="req_native",
                  session=SESSION, cwd=str(world.repo))], session=SESSION,
        cwd=str(world.repo), append=True)
    assert path.exists()
    await clock.run_for(5, step=1)
    await until(lambda: engine.goals[GOAL].state is GoalState.RUNNING)
    assert not engine.goals[GOAL].hosted
    assert world.fake.invocations() == []


@pytest.mark.asyncio
@pytest.mark.parametrize("how", ["killed", "cancelled"])
async def test_a_wait_that_will_not_happen_is_goalkeepers_once_the_tui_is_gone(
        make_engine: EngineFactory, paths: Paths, clock: FakeClock, world: World,
        how: str) -> None:
    world.session(version="2.1.328")
    world.armed()
    process = live_session(world.config, SESSION)
    world.fake.play(allowed(cwd=str(world.repo)))
    engine, _ = await start(make_engine, paths, clock, world, auto_resume_default=True)
    assert (engine.goals[GOAL].auto_resume_note or "").startswith(NATIVE_BLOCK)
    if how == "cancelled":  # Esc: the user is at that TUI; nothing behind its back
        write_session(world.config, [system_notice(
            "Automatic continue cancelled · /rate-limit-options to re-arm",
            "2026-07-07T12:00:05.000Z", session=SESSION, cwd=str(world.repo))],
            session=SESSION, cwd=str(world.repo), append=True)
        await clock.run_for(3, step=1)
        await engine.drain()
        note = engine.goals[GOAL].auto_resume_note or ""
        assert note.startswith(LIVE_BLOCK) and "waits for it to exit" in note
        await run_until(clock, datetime(2026, 7, 7, 15, 0, tzinfo=UTC), step=60)
        assert world.fake.invocations() == []  # the reset passed; the TUI is still open
        manual = await engine.perform(Resume(GOAL), "test")  # not even by hand
        assert manual.outcome.value == "deferred" and LIVE_BLOCK in manual.reason
        process.unlink()  # the TUI exits
    else:  # killed during the wait: its file stays behind, its pid is dead
        data = json.loads(process.read_text())
        process.write_text(json.dumps({**data, "procStart": "1"}))
    await clock.run_for(3, step=1)
    await engine.drain()
    await run_until(clock, datetime(2026, 7, 7, 16, 0, tzinfo=UTC), step=30)
    await until(lambda: engine.goals[GOAL].state is GoalState.DONE, timeout=10)
    await run_until(clock, datetime(2026, 7, 7, 20, 0, tzinfo=UTC), step=120)
    assert len(world.fake.invocations()) == 1  # Goalkeeper resumed it, once


@pytest.mark.asyncio
async def test_pause_stops_the_headless_run_with_sigint(make_engine: EngineFactory,
                                                        paths: Paths, clock: FakeClock,
                                                        world: World) -> None:
    world.session()
    world.fake.play(hanging())
    engine, _ = await start(make_engine, paths, clock, world)
    result = await engine.perform(Resume(GOAL), "test")
    assert result.outcome.value == "resumed"
    assert engine.goals[GOAL].state is GoalState.RUNNING and engine.goals[GOAL].hosted
    paused = await engine.perform(Pause(GOAL), "test")
    assert paused.outcome.value == "paused"
    assert world.fake.signals() == ["SIGINT"]
    await engine.drain()
    goal = engine.goals[GOAL]
    assert goal.state is GoalState.PAUSED and goal.pause_reason is PauseReason.USER
    # 2.1.328 records the interrupted turn as a user message: no prompt, no work after the stop
    [transcript] = list(world.config.rglob(f"{SESSION}.jsonl"))
    last = json.loads(transcript.read_text().splitlines()[-1])
    assert last["message"]["content"][0]["text"] == "[Request interrupted by user]"
    await clock.run_for(5, step=1)
    await engine.drain()
    goal = engine.goals[GOAL]
    assert goal.state is GoalState.PAUSED and goal.pause_reason is PauseReason.USER


@pytest.mark.asyncio
async def test_resume_is_a_no_op_when_the_session_went_on_meanwhile(
        make_engine: EngineFactory, paths: Paths, clock: FakeClock, world: World) -> None:
    world.session()
    engine, _ = await start(make_engine, paths, clock, world)
    # the user continued in the terminal a moment ago; the poll has not run yet
    write_session(world.config, [user("continue", "2026-07-07T12:00:00.000Z", session=SESSION,
                                      cwd=str(world.repo))],
                  session=SESSION, cwd=str(world.repo), append=True)
    result = await engine.perform(Resume(GOAL), "test")
    assert result.reason == "the agent was already working on it"
    assert engine.goals[GOAL].state is GoalState.RUNNING and not engine.goals[GOAL].hosted
    assert world.fake.invocations() == []


@pytest.mark.asyncio
async def test_a_missing_binary_or_directory_fails_the_resume_clearly(
        make_engine: EngineFactory, paths: Paths, clock: FakeClock, world: World) -> None:
    world.session()
    world.environ["PATH"] = "/nonexistent"
    engine, _ = await start(make_engine, paths, clock, world)
    result = await engine.perform(Resume(GOAL), "test")
    assert result.outcome.value == "failed" and "not found on PATH" in result.reason
    assert engine.goals[GOAL].state is GoalState.PAUSED
    world.repo.rmdir()
    result = await engine.perform(Resume(GOAL), "test")
    assert "does not exist" in result.reason


@pytest.mark.asyncio
async def test_open_in_terminal(paths: Paths, clock: FakeClock, world: World,
                                make_engine: EngineFactory) -> None:
    world.session()
    engine, provider = await start(make_engine, paths, clock, world)
    command = provider.open_command(engine.goals[GOAL])
    assert command is not None and command[:2] == ["sh", "-c"]
    assert f"cd {world.repo} && exec {world.fake.bin_dir / 'claude'} --resume {SESSION}" == (
        command[2])


@pytest.mark.asyncio
@pytest.mark.parametrize("kind", ["interactive", "print"])
async def test_a_session_opened_elsewhere_during_goalkeepers_run_stops_that_run(
        make_engine: EngineFactory, paths: Paths, clock: FakeClock, world: World,
        kind: str) -> None:
    """Two writers on one transcript: the user's TUI (or another claude -p) opened the session
    while Goalkeeper ran it headless. The next poll sees it; Goalkeeper's run gives way — SIGINT,
    as a pause — and the goal is paused (external) saying so; nothing is resumed behind it."""
    world.session()
    world.fake.play(hanging())
    engine, _ = await start(make_engine, paths, clock, world, auto_resume_default=True)
    assert (await engine.perform(Resume(GOAL), "test")).outcome.value == "resumed"
    assert engine.goals[GOAL].state is GoalState.RUNNING and engine.goals[GOAL].hosted
    await clock.run_for(3, step=1)
    assert world.fake.signals() == []  # its own sessions/<pid>.json is no other writer
    process = live_session(world.config, SESSION)
    if kind == "print":
        data = json.loads(process.read_text())
        process.write_text(json.dumps({**data, "entrypoint": "sdk-cli"}))
    await clock.run_for(3, step=1)
    await until(lambda: engine.goals[GOAL].state is GoalState.PAUSED, timeout=10)
    goal = engine.goals[GOAL]
    assert world.fake.signals() == ["SIGINT"]
    assert goal.pause_reason is PauseReason.EXTERNAL and not goal.hosted
    who = "you opened this session in Claude Code" if kind == "interactive" else (
        "another Claude Code process")
    assert who in (goal.pause_detail or "") and "only one process writes" in (
        goal.pause_detail or "")
    await run_until(clock, datetime(2026, 7, 7, 20, 0, tzinfo=UTC), step=120)
    assert len(world.fake.invocations()) == 1  # never started again behind the other writer
