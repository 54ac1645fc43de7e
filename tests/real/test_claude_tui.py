"""Contract tests on the real ``claude`` 2.1.328 TUI under tmux, offline against the mock API:
its statusline and StopFailure hook, its own auto-continue (Goalkeeper stands aside), a wait
cancelled with Esc (nothing behind the open TUI's back, then one resume), a TUI killed during
its wait (Goalkeeper resumes, once)."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from core.clock import FakeClock
from core.models import Exactness, GoalState, QuotaReading
from core.paths import Paths, resolve_paths
from core.providers.claude.events import event_from_json
from core.providers.claude.sessions import LIVE_BLOCK, NATIVE_BLOCK, HookEvent
from core.providers.claude.state import HookSpool
from core.providers.claude.wording import is_armed_notice
from core.settings import Settings
from core.store import open_store
from core.store.sqlite import StoreError
from tests.real.claude_mock import Answer, ClaudeApi
from tests.real.claude_world import ClaudeWorld, Tui
from tests.real.mockhttp import MockServer
from tests.real.terminal import eventually, need_tmux, wait_for
from tests.support.claude import started_provider

ROOT = Path(__file__).resolve().parents[2]
Api = tuple[ClaudeApi, MockServer]
#: the armed notice's words differ by version (B0.1): "… continuing automatically at 9:35pm · esc
#: to cancel" up to 2.1.329, "… set to continue automatically at 9:35pm" from 2.1.330 ("shortly"
#: for a reset already past): the provider's shape decides
ARMED = re.compile(r"(?:continuing|set to continue) automatically (?:at|shortly)")


def armed(text: str) -> bool:
    return is_armed_notice(text) and ARMED.search(text) is not None


def install_hooks(world: ClaudeWorld, paths: Paths) -> None:
    done = subprocess.run([sys.executable, "-m", "core", "hooks", "install", "claude",
                           "--config-dir", str(world.config)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=False,
                          env={**os.environ, **world.env, "GOALKEEPER_HOME": str(paths.data_dir)})
    assert done.returncode == 0, done.stderr


def limit_in_tui(tui: Tui, api: ClaudeApi, resets: int, prompt: str) -> str:
    """Type a prompt that meets a 5-hour limit; returns the session id of the TUI."""
    tui.wait_screen("❯", 30)
    api.then(Answer.limit("five_hour", resets))
    tui.type_line(prompt)
    tui.wait_screen("You've hit your 5-hour limit", 30)
    (process,) = wait_for(tui.world.live_processes, 10, "sessions/<pid>.json")
    assert process["pid"] == tui.pid and process["kind"] == "interactive"
    assert process["entrypoint"] == "cli"
    session = str(process["sessionId"])
    # the TUI writes its transcript a moment after it draws the screen
    wait_for(lambda: any(armed(r.get("content", "")) for r in stop_records(tui.world, session)),
             15, "the armed notice in the transcript")
    return session


def stop_records(world: ClaudeWorld, session: str) -> list[dict[str, Any]]:
    if not world.transcript(session).exists():
        return []
    return [r for r in world.records(session) if r.get("type") == "system"
            and isinstance(r.get("content"), str)]


async def observe(world: ClaudeWorld, paths: Paths, session: str) -> Any:
    provider = await started_provider(Settings(), paths, FakeClock(datetime.now(UTC)),
                                      world.env)
    try:
        (obs,) = [o for o in await provider.discover() if o.id == f"claude:{session}"]
        return obs
    finally:
        await provider.stop()


@dataclass
class ArmedRun:
    """One TUI run serving several tests: a turn, then a 5-hour limit Claude waits out."""

    world: ClaudeWorld
    paths: Paths
    session: str
    resets: int
    readings: dict[str, QuotaReading]
    spooled: list[HookEvent]
    observation: Any


@pytest.fixture(scope="module")
def armed_run(claude_bin: Path, claude_api: Api,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArmedRun]:
    need_tmux()
    api, server = claude_api
    api.reset(Answer.ok())
    root = tmp_path_factory.mktemp("armed")
    world = ClaudeWorld(root / "world", claude_bin, server.url)
    paths = resolve_paths({"GOALKEEPER_HOME": str(root / "gk")})
    install_hooks(world, paths)
    tui = Tui(world)
    try:
        tui.wait_screen("❯", 30)
        tui.type_line("Rewrite the scheduler")
        tui.wait_screen("Done: the tests pass now.", 30)
        readings = wait_for(lambda: _stored(paths), 30, "the statusline's readings in the store")
        resets = int(time.time()) + 2 * 3600 + 17
        session = limit_in_tui(tui, api, resets, "And now the docs")
        spool = HookSpool(paths.data_dir)
        spooled = wait_for(lambda: [e for e in map(event_from_json, spool.read_new())
                                    if e is not None], 15, "the StopFailure hook's spool line")
        observation = asyncio.run(observe(world, paths, session))
        yield ArmedRun(world, paths, session, resets, readings, spooled, observation)
    finally:
        tui.close()


def _stored(paths: Paths) -> dict[str, QuotaReading]:
    if not paths.database.exists():
        return {}
    try:
        store, _ = open_store(paths.database, datetime.now(UTC))
    except StoreError:  # the statusline hook is creating the store right now (see the note)
        return {}
    try:
        return {r.window_id: r for r in store.latest_readings()}
    finally:
        store.close()


def test_the_statusline_rate_limits_are_recorded_exactly(armed_run: ArmedRun) -> None:
    five, week = armed_run.readings["claude:5h"], armed_run.readings["claude:7d"]
    assert (five.used_percent, week.used_percent) == (42.0, 17.0)  # 0.42, 0.17 in the headers
    assert five.exactness is Exactness.EXACT and week.exactness is Exactness.EXACT
    assert five.resets_at is not None and week.resets_at is not None


def test_the_stop_failure_hook_records_in_the_tui(armed_run: ArmedRun) -> None:
    assert [(e.session_id, e.kind) for e in armed_run.spooled] == [
        (armed_run.session, "stop_failure")]
    assert "You've hit your 5-hour limit" in armed_run.spooled[0].text


def test_claudes_own_armed_wait_makes_goalkeeper_stand_aside(armed_run: ArmedRun) -> None:
    texts = [r["content"] for r in stop_records(armed_run.world, armed_run.session)]
    (notice,) = [t for t in texts if armed(t)]
    obs = armed_run.observation
    assert obs.state is GoalState.PAUSED
    assert obs.resets_at == datetime.fromtimestamp(armed_run.resets, UTC)
    assert (obs.auto_resume_block or "").startswith(NATIVE_BLOCK)
    assert " ".join(notice.split()) in obs.auto_resume_block  # shown as "will continue"
    assert "did not arm" not in obs.auto_resume_block


async def armed_goal(world: ClaudeWorld, api: ClaudeApi, engine_of: Any, tuis: list[Tui]
                     ) -> tuple[Tui, Any, str, int]:
    """A TUI a 5-hour limit stopped 4 s before its reset, Claude's own wait armed, and an
    engine that says so (Goalkeeper stands aside). Returns the TUI, the engine, the session and
    the reset."""
    tui = Tui(world)
    tuis.append(tui)
    resets = int(time.time()) + 4
    session = limit_in_tui(tui, api, resets, "Rewrite the scheduler")
    engine, _ = await engine_of(world)
    assert (engine.goals[f"claude:{session}"].auto_resume_note or "").startswith(NATIVE_BLOCK)
    return tui, engine, session, resets


@pytest.mark.asyncio
async def test_a_wait_cancelled_with_esc_waits_for_the_tui_to_exit_then_resumes_once(
        claude_world: ClaudeWorld, claude_api: Api, engine_of: Any, tuis: list[Tui]) -> None:
    api, _ = claude_api
    tui, engine, session, resets = await armed_goal(claude_world, api, engine_of, tuis)
    goal = f"claude:{session}"
    tui.send("Escape")
    tui.wait_screen("Automatic continue cancelled", 15)
    await eventually(lambda: (engine.goals[goal].auto_resume_note or "").startswith(LIVE_BLOCK),
                     10, "Goalkeeper to see the cancel")
    assert "waits for it to exit" in (engine.goals[goal].auto_resume_note or "")
    await asyncio.sleep(max(0.0, resets - time.time()) + 3)  # the reset has passed
    assert api.requests_of(session, "sdk-cli") == []  # nothing behind the open TUI's back
    assert engine.goals[goal].state is GoalState.PAUSED
    tui.close_terminal()  # the user leaves: from now on it is Goalkeeper's
    await eventually(lambda: engine.goals[goal].state is GoalState.DONE, 40, "done")
    await asyncio.sleep(1)
    assert len(api.requests_of(session, "sdk-cli")) == 1  # one headless resume


@pytest.mark.asyncio
async def test_a_tui_killed_during_its_wait_is_resumed_by_goalkeeper_once(
        claude_world: ClaudeWorld, claude_api: Api, engine_of: Any, tuis: list[Tui]) -> None:
    api, _ = claude_api
    tui, engine, session, _ = await armed_goal(claude_world, api, engine_of, tuis)
    goal = f"claude:{session}"
    process_file = tui.session_file()
    tui.kill()
    assert process_file.exists()  # left behind: only its dead pid says the wait is over
    await eventually(lambda: engine.goals[goal].state is GoalState.DONE, 90, "done",
                     lambda: _seen(engine.goals[goal]))
    await asyncio.sleep(1)
    assert len(api.requests_of(session, "sdk-cli")) == 1
    assert api.requests_of(session, "cli")[-1].status == 429  # the TUI never continued it


def _seen(goal: Any) -> tuple[Any, ...]:
    return (goal.state, goal.pause_reason, goal.resets_at, goal.next_resume_at,
            goal.auto_resume_note, goal.attempts)
