"""Goalkeeper's Codex provider against the pinned real ``codex`` (both ends of its range), offline.

One mock (Responses API + usage endpoint) serves the whole module; each test gets its own
``CODEX_HOME``, makes its own usage-limited goal with the real CLI (about a second) and drives
Goalkeeper's engine on it. The engine runs on a fake clock started at the real time, so
schedules can be moved on while the real Codex works in real time. No codex process may outlive
a test.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from core.clock import FakeClock
from core.commands import Cancel, Pause, Resume
from core.models import GoalState, Outcome, PauseReason
from core.providers.base import RunnerError
from core.providers.codex.rollout import RateLine, TurnLimited, is_candidate, parse_line
from core.providers.codex.rpc import AppServer
from tests.real.codex_mock import (
    FINAL_TEXT,
    CodexMock,
    World,
    gid,
    running_mock,
    settle,
)
from tests.real.terminal import Terminal, need_tmux
from tests.support.fakes import until


@pytest.fixture(scope="module")
def mock() -> Iterator[CodexMock]:
    with running_mock() as server:
        yield server


@pytest.fixture
def world(codex_bin: Path, mock: CodexMock, tmp_path: Path) -> World:
    """A fresh Codex home per test (goals of another test must not be resumed here), on the
    module's one mock server."""
    mock.set(delay=0.0, reset_credits=None, spend_control=None, allowed=True, usage5=3,
             usage7=41)
    return World(codex_bin, mock, tmp_path)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime.now(UTC))


@pytest.fixture(autouse=True)
def _no_codex_left_behind(world: World) -> Iterator[None]:
    yield
    deadline = asyncio.run(settle(world.home))
    assert deadline == [], f"codex processes left behind: {deadline}"


async def requests(engine: Any, goal_id: str) -> list[Any]:
    return [r for r in await engine.reads.history(goal_id, limit=500)
            if r.event == "resume_requested"]


# -- reading what the real CLI wrote ------------------------------------------------------------


@pytest.mark.asyncio
async def test_quotas_and_a_limit_stop_from_rollouts_the_real_cli_wrote(world, make_engine,
                                                                        clock):
    thread = await world.limited_goal()
    events = [parse_line(line.encode()) for line in
              (json.dumps(r) for r in world.rollout(thread)) if is_candidate(line.encode())]
    [rates] = [e for e in events if isinstance(e, RateLine)]
    assert rates.snapshot.windows["codex:5h"].used_percent == 100.0
    assert rates.snapshot.windows["codex:weekly"].used_percent == 40.0
    assert [e for e in events if isinstance(e, TurnLimited)]
    # the real usage-limited goal is discovered (from the goals database) with its reset
    settings = world.settings()
    engine = await make_engine(world.provider(settings, clock), settings=settings)
    g = engine.goals[gid(thread)]
    assert (g.state, g.pause_reason) == (GoalState.PAUSED, PauseReason.QUOTA)
    assert g.data["cwd"] == str(world.repo) and g.title == f"Write report {world.count}"
    assert g.resets_at == rates.snapshot.windows["codex:5h"].resets_at
    five = engine.quotas.effective("codex:5h", clock.now())
    assert five is not None and five.used_percent == 100.0


# -- resuming through the real app-server --------------------------------------------------------


@pytest.mark.asyncio
async def test_manual_resume_runs_to_complete_and_the_final_turn_is_not_aborted(
        world, make_engine, clock):
    thread = await world.limited_goal()
    engine = await world.resumed_to_complete(make_engine, clock, thread)  # and Codex agrees
    lines = world.rollout(thread)
    kinds = [line["payload"].get("type") for line in lines if line["type"] == "event_msg"]
    assert "turn_aborted" not in kinds
    finals = [line["payload"] for line in lines if line["payload"].get("type") == "task_complete"]
    assert finals[-1].get("last_agent_message") == FINAL_TEXT
    # Goalkeeper never reported the stale replay as a new limit
    assert not [r for r in await engine.reads.history(gid(thread))
                if r.state_to is GoalState.PAUSED and r.at > result_time(engine, thread)]


def result_time(engine: Any, thread: str) -> datetime:
    return engine.goals[gid(thread)].resumed_at or datetime.min.replace(tzinfo=UTC)


@pytest.mark.asyncio
async def test_automatic_resume_after_the_reset_runs_to_complete(world, make_engine, clock):
    thread = await world.limited_goal()
    settings = world.settings(auto_resume_default=True)
    engine = await make_engine(world.provider(settings, clock), settings=settings)
    g = engine.goals[gid(thread)]
    assert g.next_resume_at is not None
    world.mock.set(mode="complete", usage5=3, allowed=True)
    clock.advance((g.next_resume_at - clock.now()).total_seconds() + 1)
    await until(lambda: engine.goals[gid(thread)].state is GoalState.DONE, 60)
    [resumed] = [r for r in await requests(engine, gid(thread)) if r.outcome is Outcome.RESUMED]
    assert resumed.trigger.value in ("auto", "startup")
    assert world.db_goal(thread)[0] == "complete"
    await until(lambda: engine.providers["codex"].runner.runs == {}, 60)


@pytest.mark.asyncio
async def test_limited_again_in_the_first_turn_keeps_the_episode_and_says_so(
        world, make_engine, clock):
    """The usage endpoint says recovered, but the first turn hits the limit again: the resume
    did not really run — the attempt stays counted and the history says why."""
    thread = await world.limited_goal()
    settings = world.settings(auto_resume_default=True)
    engine = await make_engine(world.provider(settings, clock), settings=settings)
    g = engine.goals[gid(thread)]
    world.mock.set(mode="limit", usage5=3, allowed=True)
    assert g.next_resume_at is not None
    clock.advance((g.next_resume_at - clock.now()).total_seconds() + 1)
    await until(lambda: engine.goals[gid(thread)].resumed_at is not None
                and engine.goals[gid(thread)].state is GoalState.PAUSED, 60)
    g = engine.goals[gid(thread)]
    assert g.pause_reason is PauseReason.QUOTA and g.attempts == 1
    assert "not really been refreshed" in (g.pause_detail or "")
    assert world.db_goal(thread)[0] == "usage_limited"
    await until(lambda: engine.providers["codex"].runner.runs == {}, 60)


@pytest.mark.asyncio
async def test_an_early_reset_is_caught_by_the_fresh_read_poll(world, make_engine, clock):
    thread = await world.limited_goal()
    settings = world.settings(auto_resume_default=True)
    engine = await make_engine(world.provider(settings, clock), settings=settings)
    provider = engine.providers["codex"]
    scheduled = engine.goals[gid(thread)].next_resume_at
    assert scheduled is not None and scheduled > clock.now() + timedelta(minutes=50)
    world.mock.set(mode="complete", usage5=0, allowed=True, reset_credits=2)
    due = provider.next_wake(clock.now())
    assert due is not None and due < scheduled
    clock.advance((due - clock.now()).total_seconds() + 1)
    await until(lambda: engine.goals[gid(thread)].state is GoalState.DONE, 60)
    assert clock.now() < scheduled and provider.early.reads == 1
    access = engine.quotas.effective("codex:access", clock.now())
    assert access is not None and "2 banked resets" in (access.note or "")
    await until(lambda: provider.runner.runs == {}, 60)


@pytest.mark.asyncio
async def test_ordinary_usage_not_allowed_blocks_a_resume_although_percentages_recovered(
        world, make_engine, clock):
    thread = await world.limited_goal()
    settings = world.settings(auto_resume_default=True)
    engine = await make_engine(world.provider(settings, clock), settings=settings)
    g = engine.goals[gid(thread)]
    world.mock.set(mode="complete", usage5=3, usage7=10, allowed=False)
    assert g.next_resume_at is not None
    clock.advance((g.next_resume_at - clock.now()).total_seconds() + 1)
    deferred = await _deferred(engine, thread)
    assert "codex:access" in (deferred[-1].reason or "")
    assert world.db_goal(thread)[0] == "usage_limited"  # never set active
    assert engine.goals[gid(thread)].state is GoalState.PAUSED


async def _deferred(engine: Any, thread: str, timeout: float = 30.0) -> list[Any]:
    async with asyncio.timeout(timeout):
        while True:
            rows = [r for r in await requests(engine, gid(thread))
                    if r.outcome is Outcome.DEFERRED]
            if rows:
                return rows
            await asyncio.sleep(0.1)


@pytest.mark.asyncio
async def test_pause_and_cancel_go_through_codex_and_keep_the_objective(world, make_engine,
                                                                       clock):
    first, second = await world.limited_goal(), await world.limited_goal()
    settings = world.settings()
    engine = await make_engine(world.provider(settings, clock), settings=settings)
    world.mock.set(mode="text", delay=1.0, used5=20)
    for thread in (first, second):
        assert (await engine.perform(Resume(gid(thread)), "cli")).outcome is Outcome.RESUMED
        await until(lambda t=thread: engine.providers["codex"].runner.runs[gid(t)].turn_id
                    is not None, 30)
    assert (await engine.perform(Pause(gid(first)), "cli")).outcome is Outcome.PAUSED
    assert (await engine.perform(Cancel(gid(second)), "cli")).outcome is Outcome.CANCELLED
    assert engine.providers["codex"].runner.runs == {}
    for thread in (first, second):
        status, objective = world.db_goal(thread)
        assert status == "paused" and objective.startswith("Write report")
    assert engine.goals[gid(first)].pause_reason is PauseReason.USER
    assert engine.goals[gid(second)].state is GoalState.CANCELLED
    world.mock.set(delay=0.0)


@pytest.mark.asyncio
async def test_the_reserve_pause_lets_the_real_turn_complete_and_no_other_start(
        world, make_engine, clock):
    """A goal Goalkeeper resumed reaches the reserve mid-turn: Codex is told ``paused``, the
    turn in progress runs to its end (never interrupted or aborted), Codex starts no
    continuation turn, and the goal ends paused in the goals database and in Goalkeeper."""
    from tests.support.fakes import reading

    thread = await world.limited_goal()
    settings = world.settings(auto_resume_default=True, resume_reserve_percent=30)
    engine = await make_engine(world.provider(settings, clock), settings=settings)
    runs = engine.providers["codex"].runner.runs
    world.mock.set(mode="text", delay=2.0, used5=20, usage5=3, allowed=True)
    g = engine.goals[gid(thread)]
    assert g.next_resume_at is not None
    before = len(world.mock.requests("/responses"))
    clock.advance((g.next_resume_at - clock.now()).total_seconds() + 1)
    # mid-turn: the turn's model request is in flight (the mock answers it in 2 s)
    await until(lambda: len(world.mock.requests("/responses")) == before + 1, 60)
    assert runs[gid(thread)].turn_id is not None
    await engine.quota_intake.record_reading(reading("codex:5h", 75.0, clock.now(),
                                        clock.now() + timedelta(hours=4), provider="codex"))
    await until(lambda: engine.goals[gid(thread)].state is GoalState.PAUSED, 30)
    await until(lambda: world.db_goal(thread)[0] == "paused", 30)
    assert gid(thread) in runs  # the turn goes on, hosted
    await until(lambda: runs == {}, 60)
    world.mock.set(delay=0.0)
    kinds = [line["payload"].get("type") for line in world.rollout(thread)
             if line["type"] == "event_msg"]
    assert "turn_aborted" not in kinds
    assert kinds.count("task_started") == kinds.count("task_complete")
    assert kinds[-1] == "task_complete"  # the last thing the turn wrote: its own end
    await asyncio.sleep(1.0)  # a continuation would ask the mock again by now
    assert len(world.mock.requests("/responses")) == before + 1
    assert world.db_goal(thread)[0] == "paused"
    g = engine.goals[gid(thread)]
    assert (g.state, g.pause_reason) == (GoalState.PAUSED, PauseReason.QUOTA)
    assert (g.pause_detail or "").startswith("reserve: codex:5h 75 % used")
    [row] = [r for r in await engine.reads.history(gid(thread), limit=500) if r.event == "paused"]
    assert row.origin == "policy"


@pytest.mark.asyncio
async def test_a_thread_held_by_another_real_app_server_is_deferred_naming_it(
        world, make_engine, clock):
    thread = await world.limited_goal()
    holder = AppServer(str(world.codex_bin), world.env, cwd=world.repo)
    await holder.start()
    try:
        await holder.request("thread/resume", {"threadId": thread, "excludeTurns": True}, 30)
        settings = world.settings()
        engine = await make_engine(world.provider(settings, clock), settings=settings)
        result = await engine.perform(Resume(gid(thread)), "cli")
        assert result.outcome is Outcome.DEFERRED
        assert "another Codex process" in result.reason and "pid" in result.reason
        assert world.db_goal(thread)[0] == "usage_limited"
    finally:
        await holder.close()


@pytest.mark.asyncio
async def test_the_exec_fallback_reports_a_usage_limit_and_names_an_untrusted_directory(
        world, clock, tmp_path):
    from core.providers.codex.exec_run import ExecRun
    from core.providers.codex.hosted import RunContext

    thread = await world.limited_goal()
    settings = world.settings()
    provider = world.provider(settings, clock)
    reports: list[tuple[str, Any]] = []

    class Sink:
        def goal_limited(self, goal_id: str, fence: int, hit: Any) -> None:
            reports.append(("limited", hit))

        def __getattr__(self, name: str) -> Any:
            return lambda *a, **k: reports.append((name, a))

    ctx = RunContext(config=provider.config, sink=lambda: Sink(),  # type: ignore[arg-type]
                     now=clock.now, snapshot=lambda: None, rate_update=lambda s, p: None,
                     finished=lambda g: None)

    async def no_lines(path: Path) -> list[Any]:
        return []

    run = ExecRun(ctx, gid(thread), 1, thread, world.repo, None, no_lines)
    world.mock.set(mode="limit")
    started = await run.start(str(world.codex_bin))
    assert started.value == "started" and [k for k, _ in reports] == ["limited"]
    assert "not really been refreshed" in reports[0][1].detail
    plain = tmp_path / "not-a-repo"
    plain.mkdir()
    untrusted = ExecRun(ctx, gid(thread), 1, thread, plain, None, no_lines)
    with pytest.raises(RunnerError, match="not a trusted directory"):
        await untrusted.start(str(world.codex_bin))
    assert world.db_goal(thread)[0] == "usage_limited"


def test_the_version_goalkeeper_reads_is_in_the_supported_range(world):
    from core.providers.codex.version import read_version

    check = read_version(str(world.codex_bin), world.env)
    assert check.supported and check.note is None, check.text
    assert os.path.isdir(world.home)


@pytest.mark.asyncio
async def test_a_thread_held_by_the_shared_daemon_is_resumed_through_it(
        world, make_engine, clock):
    """``codex app-server daemon`` holds the thread (a client of it has it open): Goalkeeper
    goes through ``codex app-server proxy`` instead of a second writer, and the daemon runs the
    goal to complete."""
    import subprocess

    from core.providers.codex.liveness import control_socket

    thread = await world.limited_goal()
    daemon = [str(world.codex_bin), "app-server", "daemon"]
    subprocess.run([*daemon, "start"], env=world.env, check=True, capture_output=True,
                   timeout=120, stdin=subprocess.DEVNULL)
    client = AppServer(str(world.codex_bin), world.env, cwd=world.repo, via_proxy=True)
    try:
        assert control_socket(world.home).exists()
        await client.start()
        await client.request("thread/resume", {"threadId": thread, "excludeTurns": True}, 30)
        engine = await world.resumed_to_complete(make_engine, clock, thread)
        # a goal the daemon runs for its client (not Goalkeeper): pausing goes through it too
        other = await world.limited_goal()
        world.mock.set(mode="text", delay=0.5, used5=20)
        await client.request("thread/resume", {"threadId": other, "excludeTurns": True}, 30)
        await client.request("thread/goal/set", {"threadId": other, "status": "active",
                                                 "origin": "user"}, 30)
        await engine.providers["codex"].poll()
        await engine.drain()
        assert engine.goals[gid(other)].state is GoalState.RUNNING
        assert (await engine.perform(Pause(gid(other)), "cli")).outcome is Outcome.PAUSED
        assert world.db_goal(other)[0] == "paused"
    finally:
        world.mock.set(delay=0.0)
        await client.close()
        world.stop_daemon()


@pytest.mark.asyncio
async def test_the_users_tui_still_open_on_the_thread_gets_the_goal_resumed(
        world, make_engine, clock):
    """The most common case: the user's ``codex resume`` TUI stays open after the limit stop.
    In 0.169.0 the TUI runs on the shared app-server daemon (which it starts), and the daemon
    holds the thread: Goalkeeper resumes through it, and the TUI shows the goal run."""

    need_tmux("the Codex TUI test")
    thread = await world.limited_goal()
    with (world.home / "config.toml").open("a") as config:  # the folder is trusted already
        config.write(f'\n[projects."{world.repo}"]\ntrust_level = "trusted"\n')
    tui = Terminal([str(world.codex_bin), "resume", thread], world.env, world.repo)
    try:
        await tui.shows("Resume paused goal?")
        tui.send("2")
        tui.send("Enter")
        await tui.shows("/goal resume")  # idle, the goal left usage-limited
        await world.resumed_to_complete(make_engine, clock, thread)
        await tui.shows(FINAL_TEXT)  # the user sees the goal finish in the TUI
    finally:
        tui.remove()
        world.stop_daemon()
