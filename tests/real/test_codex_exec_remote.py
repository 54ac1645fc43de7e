"""The ``exec resume`` fallback against the real ``codex app-server daemon``, offline.

The daemon holds the thread (a client of it has it open) and cannot host Goalkeeper's resume:
here its ``goals`` feature is off, so ``thread/goal/*`` through ``codex app-server proxy`` are
missing — the case the exec fallback exists for. From 0.171.0 Goalkeeper runs the turn in the
daemon with ``codex exec resume --remote unix://<control socket>`` (one writer); 0.169.0 has no
``--remote`` ("unexpected argument", exit 2), so there the resume stays refused and no exec
process is started.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from core.clock import FakeClock
from core.commands import Resume
from core.models import GoalState, Outcome, PauseReason
from core.providers.codex.liveness import control_address, control_socket
from core.providers.codex.rpc import AppServer
from core.providers.codex.version import EXEC_REMOTE_SINCE, parse
from tests.real.codex_mock import CodexMock, World, gid, running_mock, settle
from tests.real.pins import Pin
from tests.support.fakes import until


@pytest.fixture(scope="module")
def mock() -> Iterator[CodexMock]:
    with running_mock() as server:
        yield server


@pytest.fixture
def world(codex_bin: Path, mock: CodexMock, tmp_path: Path) -> Iterator[World]:
    """A fresh Codex home per test on the module's mock; no codex may outlive the test."""
    mock.set(delay=0.0, reset_credits=None, spend_control=None, allowed=True, usage5=3,
             usage7=41)
    made = World(codex_bin, mock, tmp_path)
    yield made
    left = asyncio.run(settle(made.home))
    assert left == [], f"codex processes left behind: {left}"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime.now(UTC))


def _remote(pin: Pin) -> bool:
    version = parse(pin.version_text)
    return version is not None and version >= EXEC_REMOTE_SINCE


@pytest_asyncio.fixture
async def held(world: World) -> AsyncIterator[tuple[str, AppServer]]:
    """A usage-limited goal's thread, held by the real daemon (goals off there) for a client."""
    thread = await world.limited_goal()
    text = (world.home / "config.toml").read_text().replace("goals = true", "goals = false")
    (world.home / "config.toml").write_text(text)
    subprocess.run([str(world.codex_bin), "app-server", "daemon", "start"], env=world.env,
                   check=True, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    client = AppServer(str(world.codex_bin), world.env, cwd=world.repo, via_proxy=True)
    try:
        assert control_socket(world.home).exists()
        await client.start()
        await client.request("thread/resume", {"threadId": thread, "excludeTurns": True}, 30)
        yield thread, client
    finally:
        await client.close()
        world.stop_daemon()


def _exec_lines(world: World, thread: str) -> list[dict[str, Any]]:
    return [line["payload"] for line in world.rollout(thread) if line["type"] == "event_msg"]


@pytest.mark.asyncio
async def test_from_0_171_the_exec_fallback_runs_the_turn_in_the_daemon(
        world, held, make_engine, clock, codex_pin, monkeypatch):
    if not _remote(codex_pin):
        pytest.skip(f"codex {codex_pin.version} has no exec resume --remote")
    import core.providers.codex.exec_run as exec_run

    argvs: list[tuple[str, ...]] = []
    spawn = exec_run.asyncio.create_subprocess_exec

    async def recorded(*argv: str, **kw: Any) -> Any:  # every codex started: keep the execs
        if argv[1:2] == ("exec",):
            argvs.append(argv)
        return await spawn(*argv, **kw)

    monkeypatch.setattr(exec_run.asyncio, "create_subprocess_exec", recorded)
    thread, _ = held
    settings = world.settings()
    engine = await make_engine(world.provider(settings, clock), settings=settings)
    world.mock.set(mode="text", used5=20)
    before = len(world.mock.requests("/responses"))
    result = await engine.perform(Resume(gid(thread)), "cli")
    assert result.outcome is Outcome.RESUMED, result.reason
    [argv] = argvs
    assert argv[1:6] == ("exec", "resume", "--remote", control_address(world.home), thread)
    assert not [a for a in argv if a.startswith("--dangerously") or a == "--yolo"]
    # one turn, run and written by the daemon; the goal (goals off there) is left as it was
    await until(lambda: engine.goals[gid(thread)].state is GoalState.PAUSED, 60)
    g = engine.goals[gid(thread)]
    assert g.pause_reason is PauseReason.EXTERNAL, g.pause_detail
    assert "finished its turn" in (g.pause_detail or "")
    assert len(world.mock.requests("/responses")) > before
    kinds = [p.get("type") for p in _exec_lines(world, thread)]
    assert kinds[-1] == "task_complete" and "turn_aborted" not in kinds
    assert world.db_goal(thread)[0] == "usage_limited"
    await until(lambda: engine.providers["codex"].runner.runs == {}, 60)


@pytest.mark.asyncio
async def test_before_0_171_the_exec_fallback_stays_refused(world, held, make_engine, clock,
                                                          codex_pin):
    if _remote(codex_pin):
        pytest.skip(f"codex {codex_pin.version} has exec resume --remote")
    thread, _ = held
    settings = world.settings()
    engine = await make_engine(world.provider(settings, clock), settings=settings)
    world.mock.set(mode="text", used5=20)
    before = len(world.mock.requests("/responses"))
    result = await engine.perform(Resume(gid(thread)), "cli")
    assert result.outcome is Outcome.DEFERRED
    assert f"installed: {codex_pin.version}" in (result.reason or "")
    assert "thread/goal/get" in (result.reason or "")  # why the daemon could not host it
    assert "second writer is never started" in (result.reason or "")
    assert engine.goals[gid(thread)].attempts == 0
    assert len(world.mock.requests("/responses")) == before  # no turn ran anywhere
    assert world.db_goal(thread)[0] == "usage_limited"
    assert engine.providers["codex"].runner.runs == {}


def test_0_169_really_has_no_exec_remote(world, codex_pin):
    """What the version gate stands on: the real CLI's own answer to ``--remote``."""
    done = subprocess.run([str(world.codex_bin), "exec", "resume", "--remote",
                           control_address(world.home), "--help"], env=world.env,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                          cwd=world.repo, check=False)
    if _remote(codex_pin):
        assert done.returncode == 0 and "--remote <ADDR>" in done.stdout
    else:
        assert done.returncode == 2 and "unexpected argument '--remote'" in done.stderr
