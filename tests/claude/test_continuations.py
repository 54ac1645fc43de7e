"""The other ways Claude Code goes on at a limit (B0.1): each is "Claude is continuing", never a
resume Goalkeeper schedules over it — the retry watchdog (any run, print mode included), the
lower-priority continuation, a model switch, a wait that fires early after a free or banked
reset."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from core.clock import FakeClock
from core.models import Exactness, GoalState, PauseReason
from core.paths import Paths
from core.providers.base import GoalObservation
from core.providers.claude.live import read_process_file
from core.providers.claude.provider import ClaudeProvider
from core.providers.claude.records import LimitInfo, RecordKind, classify
from core.providers.claude.sessions import NATIVE_BLOCK
from core.settings import Settings
from tests.claude.builders import (
    assistant,
    retry_wait,
    system_notice,
    usage_limit,
    user,
    write_session,
)
from tests.support.claude import live_session, started_provider

Make = Callable[..., Any]
RESETS = int(datetime(2026, 7, 7, 16, 0, tzinfo=UTC).timestamp())
NOW = datetime(2026, 7, 7, 15, 0, tzinfo=UTC)


@pytest_asyncio.fixture
async def make(paths: Paths, environ: dict[str, str]) -> AsyncIterator[Make]:
    started: list[ClaudeProvider] = []

    async def _make() -> ClaudeProvider:
        provider = await started_provider(Settings(), paths, FakeClock(NOW), environ)
        started.append(provider)
        return provider

    yield _make
    for provider in started:
        await provider.stop()


@pytest.fixture
def claude_run() -> Iterator[Callable[[dict[str, str]], subprocess.Popen[bytes]]]:
    """A stand-in for a running ``claude`` started with the given environment (its
    ``/proc/<pid>/environ`` is what Goalkeeper reads)."""
    children: list[subprocess.Popen[bytes]] = []

    def start(extra: dict[str, str]) -> subprocess.Popen[bytes]:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                 env={"PATH": os.environ.get("PATH", "/usr/bin"), **extra})
        children.append(child)
        return child

    yield start
    for child in children:
        child.kill()
        child.wait()


def observed(found: list[GoalObservation], session: str) -> GoalObservation:
    (obs,) = [o for o in found if o.id == f"claude:{session}"]
    return obs


def test_a_retry_watchdog_wait_is_a_retry_wait_with_the_exact_reset() -> None:
    record = classify(retry_wait("2026-07-07T15:00:00.000Z", RESETS, kind="seven_day"))
    assert record.kind is RecordKind.RETRY_WAIT
    assert record.limit == LimitInfo("seven_day", float(RESETS))
    assert record.entrypoint == "sdk-cli"


def test_other_retried_errors_are_not_a_wait_for_a_reset() -> None:
    overloaded = retry_wait("2026-07-07T15:00:00.000Z", RESETS)
    overloaded["error"] = {"status": 529, "formatted": "529 Overloaded", "rateLimits": None}
    assert classify(overloaded).kind is RecordKind.OTHER
    transient = retry_wait("2026-07-07T15:00:00.000Z", RESETS)
    transient["error"]["rateLimits"] = None  # a 429 that names no usage-limit reset
    assert classify(transient).kind is RecordKind.OTHER


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
def test_the_watchdog_is_read_from_the_process_environment(
        tmp_path: Path, claude_run: Callable[[dict[str, str]], subprocess.Popen[bytes]]) -> None:
    cases = {"1": True, "0": False, None: False}
    for value, expected in cases.items():
        child = claude_run({} if value is None else {"CLAUDE_CODE_RETRY_WATCHDOG": value})
        path = live_session(tmp_path, "s", pid=child.pid, entrypoint="sdk-cli")
        process = read_process_file(path)
        assert process is not None and process.retry_watchdog is expected, value
    scoped = claude_run({"CLAUDE_CODE_RETRY_WATCHDOG": "1",
                         "CLAUDE_CODE_RETRY_WATCHDOG_SCOPE": "capacity"})
    process = read_process_file(live_session(tmp_path, "s", pid=scoped.pid))
    assert process is not None and process.retry_watchdog is False  # capacity only


@pytest.mark.asyncio
async def test_a_print_run_waiting_with_the_watchdog_is_claude_continuing(
        make: Make, claude_dir: Path,
        claude_run: Callable[[dict[str, str]], subprocess.Popen[bytes]]) -> None:
    session = "s-watchdog"
    write_session(claude_dir, [
        user("Port the parser", "2026-07-07T14:59:59.000Z", session=session),
        retry_wait("2026-07-07T15:00:00.000Z", RESETS, session=session),
        retry_wait("2026-07-07T15:10:00.000Z", RESETS, session=session, attempt=2),
    ], session=session)
    run = claude_run({"CLAUDE_CODE_RETRY_WATCHDOG": "1"})
    live_session(claude_dir, session, pid=run.pid, entrypoint="sdk-cli")  # print mode
    provider = await make()
    obs = observed(await provider.discover(), session)
    assert obs.state is GoalState.PAUSED and obs.pause_reason is PauseReason.QUOTA
    assert obs.resets_at == datetime.fromtimestamp(RESETS, UTC)
    assert obs.data["reset_exactness"] == Exactness.EXACT.value
    block = obs.auto_resume_block or ""
    assert block.startswith(NATIVE_BLOCK) and f"pid {run.pid}" in block
    assert "CLAUDE_CODE_RETRY_WATCHDOG" in block
    # killed during its wait: nothing goes on by itself any more, the stop is Goalkeeper's
    run.kill()
    run.wait()
    provider.poll()
    assert observed(await provider.discover(), session).auto_resume_block is None


async def stopped_then(make: Make, claude_dir: Path, session: str, stop: dict[str, Any],
                       after: list[dict[str, Any]]) -> GoalObservation:
    """A session that stopped at a limit is a goal (paused); then ``after`` is written."""
    write_session(claude_dir, [user("Port the parser", "2026-07-07T14:59:00.000Z",
                                    session=session), stop], session=session)
    provider = await make()
    assert observed(await provider.discover(), session).state is GoalState.PAUSED
    write_session(claude_dir, after, session=session, append=True)
    provider.poll()
    return observed(await provider.discover(), session)


@pytest.mark.asyncio
async def test_the_watchdog_wait_is_over_once_the_response_comes(
        make: Make, claude_dir: Path) -> None:
    session = "s-waited"
    obs = await stopped_then(make, claude_dir, session,
                             retry_wait("2026-07-07T15:00:00.000Z", RESETS, session=session),
                             [assistant("msg_after", "2026-07-07T16:00:05.000Z",
                                        session=session)])
    assert obs.state is GoalState.RUNNING


@pytest.mark.asyncio
@pytest.mark.parametrize("going_on", [
    # /low-priority (or the menu's "Continue now at lower priority"): a local command's output
    "<local-command-stdout>Continuing now at lower priority until your limit resets at 4:00pm. "
    "Your weekly limit still applies, and responses may pause while waiting for spare capacity. "
    "Run /low-priority to stop.</local-command-stdout>",
    # Claude's own wait fired before the stated reset: a free or banked reset lifted the limit
    "Usage limit available again · continuing now",
])
async def test_going_on_at_a_limit_makes_the_session_run(
        make: Make, claude_dir: Path, going_on: str) -> None:
    session = "s-going-on"
    live_session(claude_dir, session)
    notice = (user(going_on, "2026-07-07T15:01:00.000Z", session=session)
              if going_on.startswith("<") else
              system_notice(going_on, "2026-07-07T15:01:00.000Z", session=session))
    obs = await stopped_then(
        make, claude_dir, session,
        usage_limit("You've hit your 5-hour limit · resets 4pm (UTC)",
                    "2026-07-07T15:00:00.000Z", resets=RESETS, session=session,
                    entrypoint="cli"),
        [system_notice("Usage limit reached · set to continue automatically at 4pm",
                       "2026-07-07T15:00:01.000Z", session=session), notice])
    assert obs.state is GoalState.RUNNING  # Claude is continuing: nothing to schedule
    assert obs.auto_resume_block is None and obs.resets_at is None


@pytest.mark.asyncio
async def test_a_model_switch_after_a_model_scoped_limit_is_the_session_going_on(
        make: Make, claude_dir: Path) -> None:
    # "Switch to <model> and continue" (2.1.331+) sends the turn again on the other model: the
    # transcript shows only that model's response after the stop
    session = "s-switched"
    live_session(claude_dir, session)
    obs = await stopped_then(
        make, claude_dir, session,
        usage_limit("You've hit your Fable limit · resets Jul 9, 8:17pm (UTC). Switch to "
                    "another model to continue.", "2026-07-07T15:00:00.000Z",
                    kind="seven_day_overage_included", resets=RESETS + 2 * 86400,
                    session=session, entrypoint="cli"),
        [assistant("msg_other_model", "2026-07-07T15:00:30.000Z", model="claude-opus-4-5",
                   session=session)])
    assert obs.state is GoalState.RUNNING
