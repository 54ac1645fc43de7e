"""The Claude commands as Claude Code and the user run them: hooks (with and without a host),
``hooks install|uninstall``, ``track`` / ``untrack``."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import pytest_asyncio

from core.clock import FakeClock
from core.host import Host
from core.models import Exactness, GoalState
from core.paths import Paths
from core.providers.claude.events import event_from_json
from core.providers.claude.provider import ClaudeProvider
from core.providers.claude.state import HookSpool, TrackingFile
from core.settings import Settings
from core.store import open_store
from tests.claude.make_fixtures import SESSIONS
from tests.support.claude import started_provider
from tests.support.fakes import until

ROOT = Path(__file__).resolve().parents[2]
PAYLOADS = Path(__file__).parent / "fixtures" / "payloads"


@pytest.fixture
def cli_env(paths: Paths, environ: dict[str, str]) -> dict[str, str]:
    return {**environ, "GOALKEEPER_HOME": str(paths.data_dir), "PATH": os.environ["PATH"],
            "PYTHONPATH": str(ROOT)}


def run(env: dict[str, str], *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "core", *args], input=stdin,
                          capture_output=True, env=env, cwd=ROOT, timeout=60, check=False)


async def arun(env: dict[str, str], *args: str, stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "core", *args, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env, cwd=ROOT)
    out, err = await asyncio.wait_for(proc.communicate(stdin), 60)
    return proc.returncode or 0, out, err


def user_statusline(tmp_path: Path) -> str:
    script = tmp_path / "my statusline.sh"
    script.write_bytes(b"#!/bin/sh\ninput=$(cat)\n"
                       b"printf '\\033[1;32m%s\\033[0m \\342\\234\\223 \\377 no newline' "
                       b"\"$(printf %s \"$input\" | head -c 14)\"\nexit 3\n")
    script.chmod(0o755)
    return f"'{script}'"


def test_statusline_passes_the_users_output_through_byte_for_byte(
        tmp_path: Path, cli_env: dict[str, str], paths: Paths) -> None:
    command = user_statusline(tmp_path)
    payload = (PAYLOADS / "statusline.json").read_bytes()
    direct = subprocess.run(command, shell=True, input=payload, capture_output=True, check=False)
    ours = run(cli_env, "hook", "claude-statusline", "--chain", command, stdin=payload)
    assert ours.stdout == direct.stdout
    assert b"\xff" in ours.stdout and ours.stdout.startswith(b"\x1b[1;32m{\"session_id\"")
    assert ours.returncode == direct.returncode == 3
    store, _ = open_store(paths.database, datetime.now(UTC))
    try:
        readings = {r.window_id: r for r in store.latest_readings()}
        assert readings["claude:5h"].used_percent == 87.5
        assert readings["claude:5h"].resets_at == datetime.fromtimestamp(1783440000, UTC)
        assert readings["claude:5h"].exactness is Exactness.EXACT
        assert readings["claude:7d"].used_percent == 41.0
        points = len(store.series("claude:5h"))
    finally:
        store.close()
    run(cli_env, "hook", "claude-statusline", "--chain", command, stdin=payload)
    store, _ = open_store(paths.database, datetime.now(UTC))
    try:
        assert len(store.series("claude:5h")) == points  # a repeat within a minute: not stored
    finally:
        store.close()


def test_statusline_without_a_chain_or_with_garbage_stays_quiet(cli_env: dict[str, str],
                                                               paths: Paths) -> None:
    done = run(cli_env, "hook", "claude-statusline", stdin=b"not json")
    assert (done.returncode, done.stdout) == (0, b"")
    assert not paths.database.exists() or _readings(paths) == {}


def _readings(paths: Paths) -> dict[str, object]:
    store, _ = open_store(paths.database, datetime.now(UTC))
    try:
        return {r.window_id: r for r in store.latest_readings()}
    finally:
        store.close()


def test_stop_failure_without_a_host_is_spooled_for_the_next_one(
        cli_env: dict[str, str], paths: Paths) -> None:
    for name in ("stop_failure.json", "stop_failure_fork.json", "notification_fired.json"):
        done = run(cli_env, "hook", "claude-stop-failure", stdin=(PAYLOADS / name).read_bytes())
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    spool = HookSpool(paths.data_dir)
    lines = spool.read_new()
    assert [line["payload"]["session_id"] for line in lines] == [
        SESSIONS["session_limit"], SESSIONS["weekly"], SESSIONS["session_limit"]]
    events = [event_from_json(line) for line in lines]  # the host's reading of the spool
    assert [(e.session_id, e.kind) for e in events if e is not None] == [
        (SESSIONS["session_limit"], "stop_failure"), (SESSIONS["weekly"], "stop_failure"),
        (SESSIONS["session_limit"], "quota_auto_resume_fired")]
    assert events[0] is not None and "resets 6:40pm" in events[0].text
    assert run(cli_env, "hook", "claude-stop-failure", stdin=b"{broken").returncode == 0
    assert spool.read_new() == []
    # a transient 429 says error "rate_limit" too, but is no limit stop
    transient = run(cli_env, "hook", "claude-stop-failure",
                    stdin=(PAYLOADS / "stop_failure_transient.json").read_bytes())
    assert transient.returncode == 0
    (line,) = spool.read_new()
    assert event_from_json(line) is None


@pytest.mark.asyncio
async def test_a_spooled_stop_failure_pauses_a_session_whose_transcript_lacks_the_stop(
        paths: Paths, environ: dict[str, str]) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    HookSpool(paths.data_dir).append({"session_id": SESSIONS["malformed"],
                                      "at": now.isoformat(), "kind": "stop_failure",
                                      "text": "429 Too Many Requests"})
    provider = await started_provider(Settings(), paths, FakeClock(now), environ)
    try:
        found = {o.id: o for o in await provider.discover()}
        obs = found[f"claude:{SESSIONS['malformed']}"]
        assert obs.state is GoalState.PAUSED and obs.resets_at is None
        assert "429 Too Many Requests" in (obs.pause_detail or "")
    finally:
        await provider.stop()


@pytest_asyncio.fixture
async def host(paths: Paths, environ: dict[str, str]) -> AsyncIterator[Host]:
    clock = FakeClock(datetime(2026, 7, 7, 22, 0, tzinfo=UTC))
    settings = Settings(resume_jitter_seconds=0)
    provider = ClaudeProvider(settings, paths, clock, environ)
    running = Host(paths, settings, [provider], "test", clock)
    await running.start()
    yield running
    await running.stop()


@pytest.mark.asyncio
async def test_with_a_host_the_hooks_report_to_it(host: Host, cli_env: dict[str, str],
                                                  tmp_path: Path) -> None:
    engine = host.engine
    code, out, _ = await arun(cli_env, "hook", "claude-statusline", "--chain",
                              user_statusline(tmp_path),
                              stdin=(PAYLOADS / "statusline.json").read_bytes())
    assert code == 3 and out.endswith(b"no newline")
    await until(lambda: (r := engine.quotas.tracker("claude:5h").reading) is not None
                and r.used_percent == 87.5 and r.exactness is Exactness.EXACT)
    goal = f"claude:{SESSIONS['malformed']}"
    payload = json.dumps({"session_id": SESSIONS["malformed"], "hook_event_name": "StopFailure",
                          "error": "rate_limit",
                          "last_assistant_message": "You've hit your 5-hour limit · resets "
                                                    "11pm (UTC)"})
    code, out, _ = await arun(cli_env, "hook", "claude-stop-failure", stdin=payload.encode())
    assert (code, out) == (0, b"")
    clock = host.engine.clock
    assert isinstance(clock, FakeClock)
    for _ in range(20):  # the host reads the spool on its next poll
        if goal in engine.goals:
            break
        await clock.run_for(1.0)
        await engine.drain()
    assert engine.goals[goal].state is GoalState.PAUSED


@pytest.mark.asyncio
async def test_track_and_untrack_through_the_host(host: Host, cli_env: dict[str, str]) -> None:
    engine = host.engine
    goal = f"claude:{SESSIONS['went_on']}"
    assert goal not in engine.goals
    code, out, err = await arun(cli_env, "track", goal, "--keep-prompting")
    assert code == 0, err
    assert out.decode().startswith(f"{goal}: tracked — Add type hints")
    await until(lambda: goal in engine.goals)
    assert engine.goals[goal].data["keep_prompting"] is True
    assert engine.goals[goal].state is GoalState.RUNNING  # it went on after its stop
    code, out, err = await arun(cli_env, "untrack", goal)
    assert code == 0, err
    await until(lambda: goal not in engine.goals)
    assert SESSIONS["went_on"] in TrackingFile(host.paths.data_dir).load().untracked
    code, _, err = await arun(cli_env, "track", "claude:no-such-session")
    assert code == 1 and b"no transcript of session no-such-session" in err


def test_track_and_untrack_without_a_host(cli_env: dict[str, str], paths: Paths) -> None:
    goal = f"claude:{SESSIONS['session_limit']}"
    done = run(cli_env, "track", goal, "--json")
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["goal"] == goal and reply["state"] == "paused" and reply["offline"] is True
    store, _ = open_store(paths.database, datetime.now(UTC))
    try:
        stored = store.get_goal(goal)
        assert stored is not None and stored.state is GoalState.PAUSED
        assert stored.title == "Migrate the test suite to pytest and get CI green"
    finally:
        store.close()
    assert SESSIONS["session_limit"] in TrackingFile(paths.data_dir).load().tracked
    done = run(cli_env, "untrack", goal)
    assert done.returncode == 0 and b"untracked" in done.stdout
    store, _ = open_store(paths.database, datetime.now(UTC))
    try:
        assert store.get_goal(goal) is None
        assert store.history(goal, 5)[0].reason == "untracked by the user"
    finally:
        store.close()


def test_track_refuses_bad_ids_and_unknown_sessions(cli_env: dict[str, str]) -> None:
    assert run(cli_env, "track", "claude:../etc").returncode == 2
    unknown = run(cli_env, "track", "claude:0000")
    assert unknown.returncode == 3 and b"no transcript of session 0000" in unknown.stderr


def test_hooks_install_and_uninstall_from_the_command_line(cli_env: dict[str, str],
                                                           claude_dir: Path) -> None:
    settings = claude_dir / "settings.json"
    original = settings.read_bytes()
    done = run(cli_env, "hooks", "install", "claude")
    assert done.returncode == 0, done.stderr
    assert b"statusLine: chained through Goalkeeper" in done.stdout
    assert b"backup of the previous file" in done.stdout
    command = json.loads(settings.read_bytes())["statusLine"]["command"]
    assert "hook claude-statusline --chain" in command
    assert f"GOALKEEPER_HOME={cli_env['GOALKEEPER_HOME']}" in command
    done = run(cli_env, "hooks", "uninstall", "claude", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)[0]["changes"]
    assert settings.read_bytes() == original
    # in Chinese: the same changes, shown translated; --json keeps them in English
    zh = {**cli_env, "LANG": "zh_CN.UTF-8"}
    done = run(zh, "hooks", "install", "claude")
    assert "statusLine：已串接到 Goalkeeper" in done.stdout.decode(), done.stdout.decode()
    done = run(zh, "hooks", "uninstall", "claude", "--json")
    assert "statusLine: restored" in json.loads(done.stdout)[0]["changes"]
    assert settings.read_bytes() == original
    nowhere = {**cli_env, "CLAUDE_CONFIG_DIR": str(claude_dir / "missing")}
    done = run(nowhere, "hooks", "install", "claude")
    assert done.returncode == 2 and b"no Claude config directory found" in done.stderr


def test_a_large_spool_keeps_only_recent_events(paths: Paths) -> None:
    from core.providers.claude.events import HookEvents

    now = datetime(2026, 7, 7, 12, tzinfo=UTC)
    spool = HookSpool(paths.data_dir)
    old = {"session_id": "s-old", "at": "2026-06-01T00:00:00+00:00", "kind": "stop_failure",
           "text": "x" * 2000}
    for _ in range(600):
        spool.append(old)
    spool.append({"session_id": "s-new", "at": now.isoformat(), "kind": "stop_failure",
                  "text": "429"})
    events = HookEvents(paths.data_dir, FakeClock(now))
    events.compact_spool()
    assert spool.path.stat().st_size < 1000
    assert events.read_spool()
    assert [e.session_id for e in events.take_new()] == ["s-new"]


def test_an_event_appended_while_the_spool_is_compacted_is_kept(
        paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    # the hook opened the spool, then waited for the lock while the host compacted it: its
    # line must land in the compacted file, not in the replaced one nobody reads any more
    from core.providers.claude import state

    spool = HookSpool(paths.data_dir)
    spool.append({"session_id": "s-before", "at": "2026-07-07T12:00:00+00:00",
                  "kind": "stop_failure", "text": "429"})
    real_flock = state.fcntl.flock
    compacted = []

    def flock(fd: int, op: int) -> None:
        if not compacted:
            compacted.append(True)
            HookSpool(paths.data_dir).compact(lambda _event: True, above=0)
        real_flock(fd, op)

    monkeypatch.setattr(state.fcntl, "flock", flock)
    spool.append({"session_id": "s-during", "at": "2026-07-07T12:00:01+00:00",
                  "kind": "stop_failure", "text": "429"})
    monkeypatch.setattr(state.fcntl, "flock", real_flock)
    read = [e["session_id"] for e in HookSpool(paths.data_dir).read_new()]
    assert read == ["s-before", "s-during"]
