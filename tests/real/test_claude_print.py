"""Contract tests on the real ``claude`` 2.1.328 in print mode, offline against the mock API:
what it writes (transcripts, stream-json, hook payloads) is what the provider reads."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from core.clock import FakeClock, SystemClock
from core.models import Exactness, GoalState, PauseReason
from core.paths import Paths, resolve_paths
from core.providers.claude.events import event_from_json
from core.providers.claude.follow import TranscriptWatcher
from core.providers.claude.provider import ClaudeProvider
from core.providers.claude.records import RecordKind, classify
from core.providers.claude.runner import HeadlessRun, RunSpec, command
from core.providers.claude.sessions import read_meta
from core.providers.claude.state import HookSpool, TrackingFile
from core.providers.claude.stream import StreamState, interpret
from core.settings import Settings
from tests.real.claude_mock import USAGE, Answer, ClaudeApi
from tests.real.claude_world import ClaudeWorld, PrintRun
from tests.real.mockhttp import MockServer
from tests.support.claude import RecordingSink, started_provider

ROOT = Path(__file__).resolve().parents[2]
WINDOWS = {"five_hour": "claude:5h", "seven_day": "claude:7d", "seven_day_opus": "claude:7d-opus",
           "seven_day_sonnet": "claude:7d-sonnet", "seven_day_overage_included": "claude:7d-fable",
           "overage": "claude:overage"}


def stream_of(run: PrintRun, now: datetime) -> StreamState:
    state = StreamState()
    for event in run.events:
        state.feed(json.dumps(event).encode(), now)
    return state


@pytest.fixture
def gk_paths(tmp_path: Path) -> Paths:
    return resolve_paths({"GOALKEEPER_HOME": str(tmp_path / "gk")})


@pytest_asyncio.fixture
async def provider_of(gk_paths: Paths) -> AsyncIterator[Any]:
    started: list[ClaudeProvider] = []

    async def make(world: ClaudeWorld, **settings: Any) -> ClaudeProvider:
        provider = await started_provider(Settings(**settings), gk_paths,
                                          FakeClock(datetime.now(UTC)), world.env)
        started.append(provider)
        return provider

    yield make
    for provider in started:
        await provider.stop()


def test_a_transcript_gives_usage_title_cwd_and_branch(claude_world: ClaudeWorld) -> None:
    run = claude_world.print_mode("Make the integration tests pass")
    assert run.code == 0 and run.result["subtype"] == "success"
    watcher = TranscriptWatcher([claude_world.config])
    watcher.full_scan(time.time())
    totals = watcher.ledger.totals()
    inp, creation, read, out = USAGE
    assert (totals["input_tokens"], totals["cache_creation_input_tokens"],
            totals["cache_read_input_tokens"], totals["output_tokens"]) == (
        inp, creation, read, out)
    assert totals["responses"] == 1
    state = watcher.session(run.session_id)
    assert state is not None
    meta = read_meta(state)
    assert meta.title == "Make the integration tests pass"
    assert meta.cwd == str(claude_world.project)
    assert meta.branch == "feature/goals"


@pytest.mark.asyncio
@pytest.mark.parametrize("kind", sorted(WINDOWS))
async def test_every_limit_kind_has_its_window_and_the_exact_reset(
        claude_world: ClaudeWorld, claude_api: tuple[ClaudeApi, MockServer], provider_of: Any,
        kind: str) -> None:
    api, _ = claude_api
    now = int(time.time())
    resets = now + (3 * 86400 if kind.startswith("seven_day") else 2 * 3600) + 17
    api.then(Answer.limit(kind, resets))
    run = claude_world.print_mode("Port the parser")
    assert run.code == 1 and run.result["api_error"] == "usage_limit_reached"
    exact = datetime.fromtimestamp(resets, UTC)
    # the stream: the limit, its window and its exact reset
    ended = interpret(stream_of(run, datetime.now(UTC)), datetime.now(UTC), UTC, run.code, "")
    assert ended.kind == "limited" and ended.hit is not None
    assert ended.hit.windows == (WINDOWS[kind],) and ended.hit.resets_at == exact
    # the transcript: a goal paused for quota until the exact reset (minutes in the text only)
    provider = await provider_of(claude_world)
    (obs,) = [o for o in await provider.discover() if o.id == f"claude:{run.session_id}"]
    assert obs.state is GoalState.PAUSED and obs.pause_reason is PauseReason.QUOTA
    assert obs.resets_at == exact
    assert WINDOWS[kind] in obs.windows and obs.data["reset_exactness"] == "exact"
    assert obs.auto_resume_block is None  # print mode never continues by itself
    readings = {r.window_id: r for r in await provider.read_quotas()}
    assert readings[WINDOWS[kind]].resets_at == exact
    assert readings[WINDOWS[kind]].limit_reached is True
    assert readings[WINDOWS[kind]].exactness is Exactness.EXACT


def test_a_weekly_only_account_reads_without_a_five_hour_window(
        claude_world: ClaudeWorld, claude_api: tuple[ClaudeApi, MockServer]) -> None:
    api, _ = claude_api
    resets = int(time.time()) + 2 * 86400 + 5
    api.then(Answer.limit("seven_day", resets, weekly_only=True))
    run = claude_world.print_mode("Port the parser")
    state = stream_of(run, datetime.now(UTC))
    assert {r.window_id for r in state.readings} == {"claude:7d"}
    (weekly,) = state.readings
    assert weekly.limit_reached is True and weekly.used_percent == 100.0
    assert weekly.resets_at == datetime.fromtimestamp(resets, UTC)
    ended = interpret(state, datetime.now(UTC), UTC, run.code, "")
    assert ended.hit is not None and ended.hit.windows == ("claude:7d",)


def test_every_rate_limit_event_is_an_exact_reading(claude_world: ClaudeWorld) -> None:
    run = claude_world.print_mode("Say hello")
    (event,) = run.of_type("rate_limit_event")
    assert "unifiedWindows" in event["rate_limit_info"]
    readings = {r.window_id: r for r in stream_of(run, datetime.now(UTC)).readings}
    assert readings["claude:5h"].used_percent == 42.0
    assert readings["claude:7d"].used_percent == 17.0
    assert all(r.exactness is Exactness.EXACT and r.resets_at is not None
               for r in readings.values())


@pytest.mark.asyncio
@pytest.mark.parametrize("auth", ["oauth", "api_key"])
async def test_transient_429s_are_no_quota_pause_and_lose_no_reading(
        claude_world: ClaudeWorld, claude_api: tuple[ClaudeApi, MockServer], provider_of: Any,
        auth: str) -> None:
    api, _ = claude_api
    resets = int(time.time()) + 2 * 3600 + 17
    api.then(Answer.limit("five_hour", resets))
    stopped = claude_world.print_mode("Port the parser")
    provider = await provider_of(claude_world)  # the stop makes the session a goal
    goal = f"claude:{stopped.session_id}"
    assert goal in {o.id for o in await provider.discover()}
    claude_world.auth = auth
    api.then(Answer.server_busy())
    again = claude_world.print_mode("continue", resume=stopped.session_id)
    words = ("Server is temporarily limiting requests" if auth == "oauth"
             else "Request rejected (429)")
    assert words in again.result["result"] and "api_error" not in again.result
    # the stream: transient, and no reading at all (an untyped rejected event names no window)
    state = stream_of(again, datetime.now(UTC))
    assert state.readings == []
    ended = interpret(state, datetime.now(UTC), UTC, again.code, "")
    assert ended.kind == "transient" and words in ended.detail
    # the transcript: a transient record, never a limit stop
    (error,) = [r for r in claude_world.records(stopped.session_id)
                if r.get("isApiErrorMessage") and words in json.dumps(r)]
    assert classify(error).kind is RecordKind.TRANSIENT
    assert error.get("apiErrorIsTransient") is (auth == "oauth")
    provider.poll()
    (obs,) = [o for o in await provider.discover() if o.id == goal]
    assert obs.state is GoalState.RUNNING  # went on after the stop: not paused with no reset
    five = {r.window_id: r for r in await provider.read_quotas()}["claude:5h"]
    assert five.resets_at == datetime.fromtimestamp(resets, UTC)  # the stop's reading stays


@pytest.mark.asyncio
async def test_an_unknown_resume_id_fails_with_claudes_own_words(
        claude_world: ClaudeWorld) -> None:
    sink = RecordingSink()
    argv = command(str(claude_world.binary), "00000000-0000-4000-8000-000000000000",
                   "continue")
    run = HeadlessRun(RunSpec("claude:x", 1, argv, str(claude_world.project), claude_world.env,
                              False, UTC), sink, SystemClock(), lambda *_: None)  # type: ignore
    await run.start()
    for _ in range(300):
        if sink.reports:
            break
        await asyncio.sleep(0.05)
    await run.stop()
    (report,) = sink.reports
    assert report[0] == "failed"
    assert "No conversation found with session ID: 00000000-0000-4000-8000-000000000000" in (
        report[3])


def goalkeeper(gk_paths: Paths, *args: str,
               env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=False,
                          env={**os.environ, **env, "GOALKEEPER_HOME": str(gk_paths.data_dir)})


def test_the_stop_failure_hook_records_in_print_mode(
        claude_world: ClaudeWorld, claude_api: tuple[ClaudeApi, MockServer],
        gk_paths: Paths) -> None:
    api, _ = claude_api
    installed = goalkeeper(gk_paths, "hooks", "install", "claude", "--config-dir",
                           str(claude_world.config), env=claude_world.env)
    assert installed.returncode == 0, installed.stderr
    settings = json.loads((claude_world.config / "settings.json").read_text())
    (group,) = settings["hooks"]["StopFailure"]
    assert group["hooks"][0]["command"].startswith("trap '' TERM; exec ")
    api.then(Answer.limit("five_hour", int(time.time()) + 3600))
    run = claude_world.print_mode("Port the parser")
    assert run.code == 1
    # the CLI sends SIGTERM ~25 ms after starting the hook; the spool line is there regardless
    lines = HookSpool(gk_paths.data_dir).read_new()
    events = [e for e in map(event_from_json, lines) if e is not None]
    assert [(e.session_id, e.kind) for e in events] == [(run.session_id, "stop_failure")]
    assert events[0].text.startswith("You've hit your 5-hour limit · resets ")
    assert lines[0]["payload"]["hook_event_name"] == "StopFailure"
    TrackingFile(gk_paths.data_dir)  # nothing else was needed: no host, no socket


@pytest.mark.asyncio
async def test_a_print_run_with_the_retry_watchdog_waits_and_goalkeeper_stands_aside(
        claude_world: ClaudeWorld, claude_api: tuple[ClaudeApi, MockServer],
        provider_of: Any) -> None:
    """B0.1: ``CLAUDE_CODE_RETRY_WATCHDOG`` makes print mode wait out a usage limit in its
    process. It writes a ``system`` ``api_error`` record with the limit's ``rateLimits`` per
    retry (no limit stop), keeps ``sessions/<pid>.json``, and has the variable in its
    ``/proc/<pid>/environ``: Goalkeeper shows Claude continuing, then the session going on."""
    api, _ = claude_api
    resets = int(time.time()) + 12
    api.then(Answer.limit("five_hour", resets))
    env = {**claude_world.env, "CLAUDE_CODE_RETRY_WATCHDOG": "1"}
    env.pop("CLAUDE_CODE_MAX_RETRIES")
    argv = [str(claude_world.binary), "-p", "Port the parser", "--output-format", "stream-json",
            "--verbose"]
    with subprocess.Popen(argv, cwd=claude_world.project, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as run:
        try:
            waits = await _retry_wait_records(claude_world, 30)
            (process,) = claude_world.live_processes()
            assert process["pid"] == run.pid and process["entrypoint"] == "sdk-cli"
            session = str(process["sessionId"])
            assert waits[0]["error"]["rateLimits"] == {"rateLimitType": "five_hour",
                                                       "resetsAt": resets}
            assert classify(waits[0]).kind is RecordKind.RETRY_WAIT
            provider = await provider_of(claude_world)
            (obs,) = [o for o in await provider.discover() if o.id == f"claude:{session}"]
            assert obs.state is GoalState.PAUSED
            assert obs.resets_at == datetime.fromtimestamp(resets, UTC)
            assert "CLAUDE_CODE_RETRY_WATCHDOG" in (obs.auto_resume_block or "")
            assert run.wait(timeout=60) == 0  # it went on by itself after the reset
        finally:
            if run.poll() is None:
                run.kill()
    provider.poll()
    (obs,) = [o for o in await provider.discover() if o.id == f"claude:{session}"]
    assert obs.state is GoalState.RUNNING and obs.auto_resume_block is None
    assert [s.status for s in api.requests_of(session, "sdk-cli")] == [429, 200]


async def _retry_wait_records(world: ClaudeWorld, timeout: float) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in (world.config / "projects").glob("*/*.jsonl"):
            found = [r for r in map(json.loads, path.read_text().splitlines())
                     if r.get("subtype") == "api_error"]
            if found:
                return found
        await asyncio.sleep(0.2)
    raise AssertionError("no retry record in the transcript")
