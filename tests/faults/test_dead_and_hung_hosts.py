"""Killed and hung hosts: goals shown as such, a quick "host not responding", a fenced takeover."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.clock import FakeClock
from core.commands import Pause, Start
from core.host import Host
from core.hosts.control import send_request
from core.models import GoalState, Outcome
from core.paths import Paths, resolve_paths
from core.settings import Settings
from core.store import LeaseLost, SqliteStore
from tests.support.fakes import FakeProvider, settled
from tests.support.faults import ROOT, daemon, env_for, run, status_json, stop, wait_for

QUICK = {"GOALKEEPER_HOST_HEARTBEAT_SECONDS": "0.2", "GOALKEEPER_HOST_STALE_SECONDS": "1",
         "GOALKEEPER_HOST_PING_TIMEOUT_SECONDS": "0.5"}


@pytest.mark.slow
def test_goals_of_a_killed_host_show_as_such_not_running(tmp_path: Path) -> None:
    """The goal must still be running when the host dies: the demo's longest goal takes 12 s,
    and the kill follows the host's answer at once (a ``goalkeeper start`` and a ``status`` in
    between took longer than the 6 s of demo:tests on a loaded machine, and the goal was done)."""
    home = tmp_path / "home"
    with daemon(home) as proc:
        answer = send_request(resolve_paths({"GOALKEEPER_HOME": str(home)}).socket_path,
                              {"op": "start", "goal": "demo:refactor"})
        proc.send_signal(signal.SIGKILL)
        assert answer["outcome"] == "resumed" and answer["state"] == "running", answer
        proc.wait(timeout=10)
        data = status_json(home)
        assert data["host"]["state"] == "not_running"
        goal = next(g for g in data["goals"] if g["id"] == "demo:refactor")
        assert (goal["state"], goal["shown_state"]) == ("running", "host not running")
        human = run(home, "status").stdout
        assert "Host: not running" in human and "host not running (was running)" in human


@pytest.mark.slow
def test_a_stopped_host_gets_host_not_responding_within_ten_seconds(tmp_path: Path) -> None:
    """With the default ping time-out (5 s, at most 10 by validation) a command answers in
    about 5 s; the quick setting makes the test take less than one."""
    home = tmp_path / "home"
    with daemon(home, **QUICK) as proc:
        proc.send_signal(signal.SIGSTOP)
        try:
            started = time.monotonic()
            out = run(home, "resume", "demo:docs", **QUICK)
            took = time.monotonic() - started
            assert out.returncode == 6 and "host not responding" in out.stderr, out.stderr
            assert took <= 10
            started = time.monotonic()
            data = json.loads(run(home, "status", "--json", **QUICK).stdout)
            assert time.monotonic() - started <= 10
            assert data["host"]["state"] == "not_responding"
            assert {g["shown_state"] for g in data["goals"]} <= {
                "host not responding", "paused", "idle", "done", "cancelled", "failed"}
        finally:
            proc.send_signal(signal.SIGCONT)


@pytest.mark.slow
def test_a_hung_host_is_replaced_and_its_writes_are_fenced_off(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with daemon(home, **QUICK) as old:
        assert run(home, "start", "demo:tests").returncode == 0
        old.send_signal(signal.SIGSTOP)
        time.sleep(1.5)  # silent past host_stale_seconds
        new = subprocess.Popen([sys.executable, "-m", "core", "daemon"], cwd=ROOT,
                               env=env_for(home, GOALKEEPER_DEMO_ENABLED="true", **QUICK),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            wait_for(lambda: status_json(home)["host"]["pid"] == new.pid, new)
            assert status_json(home)["host"]["state"] == "running"
            old.send_signal(signal.SIGCONT)  # the old one wakes up: it must not write
            assert old.wait(timeout=20) == 1
            out = old.stdout.read() if old.stdout else ""
            assert "stopping:" in out and ("took over" in out or "replaced" in out), out
            assert new.poll() is None
            data = status_json(home)
            assert data["host"]["pid"] == new.pid and data["host"]["problems"] == []
            assert run(home, "auto-resume", "demo:docs", "on").returncode == 0  # the new one acts
        finally:
            stop(new)


def test_the_fence_refuses_the_writes_of_a_replaced_epoch(tmp_path: Path) -> None:
    from core.store.guard import open_for_host

    db = tmp_path / "goalkeeper.db"
    first = open_for_host(db, tmp_path / "backups", FakeClock().now()).store
    assert first is not None and first.epoch == 1
    first.set_meta("written", "by the first host")
    second = open_for_host(db, tmp_path / "backups", FakeClock().now()).store
    assert second is not None and second.epoch == 2
    with pytest.raises(LeaseLost):
        first.set_meta("written", "by the first host, after it was replaced")
    second.set_meta("written", "by the second host")
    assert SqliteStore(db, read_only=True).get_meta("written") == "by the second host"
    first.close()
    second.close()


def _quick() -> Settings:
    return Settings(resume_jitter_seconds=0, host_heartbeat_seconds=1, host_stale_seconds=2,
                    host_ping_timeout_seconds=0.2)


@pytest.mark.asyncio
async def test_a_live_host_is_never_replaced(paths: Paths, clock: FakeClock) -> None:
    first = Host(paths, _quick(), [FakeProvider(clock)], "daemon", clock, random.Random(1))
    await first.start()
    try:
        await settled(first.engine)
        for _ in range(10):
            clock.advance(1)  # its heartbeat is written on time
            await asyncio.sleep(0.01)
        second = Host(paths, _quick(), [FakeProvider(clock)], "daemon", clock)
        with pytest.raises(Exception, match="already the host"):
            await second.start()
    finally:
        await first.stop()


@pytest.mark.asyncio
async def test_a_replaced_host_ends_and_writes_nothing(paths: Paths, clock: FakeClock) -> None:
    fake = FakeProvider(clock)
    fake.observe("fake:g", GoalState.IDLE)
    first = Host(paths, _quick(), [fake], "daemon", clock, random.Random(1))
    await first.start()
    await settled(first.engine)
    assert (await first.engine.perform(Start("fake:g"))).outcome is Outcome.RESUMED
    assert first._beat is not None
    first._beat.cancel()  # hung: no more heartbeats, and (below) no answer to a ping
    # nor registry beats: a hung host runs nothing. Left running, its beat raced the late
    # report below to find the newer epoch first — and under load it sometimes won, so the
    # host ended for "a newer epoch holds its registry row" before the fence was ever tried
    lease_beat = next(t for t in first.engine._tasks if t.get_name() == "goalkeeper:host-lease")
    lease_beat.cancel()
    clock.advance(5)
    second = Host(paths, _quick(), [FakeProvider(clock)], "daemon", clock, random.Random(2))
    await second.start()  # its ping blocks this loop: the first cannot answer
    try:
        assert second.lease.replaced is not None
        assert second.lease.replaced.pid == first.info.pid  # type: ignore[union-attr]
        fake.sink.goal_finished("fake:g", first.engine.goals["fake:g"].fence, "late")
        assert first.ended is not None
        await asyncio.wait_for(first.ended, 5)
        assert "took over" in first.ended.result()
        answer = await first.engine.perform(Pause("fake:g"))
        assert answer.outcome is Outcome.REFUSED
        await first.stop()
        goal = await second.engine.store.run(lambda s: s.get_goal("fake:g"))
        assert goal is not None and goal.state is not GoalState.DONE  # the late report lost
        # its race: the replaced host wrote nothing, the new one recovered the goal itself
        info = json.loads(paths.host_file.read_text())
        assert info["pid"] == second.info.pid  # type: ignore[union-attr]
    finally:
        await second.stop()
