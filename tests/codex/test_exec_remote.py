"""The ``exec resume`` fallback for a thread the shared app-server (``codex app-server daemon``)
holds: through that app-server with ``--remote`` on Codex 0.171.0+, refused below.

The daemon is played by a process whose command line is the daemon's and which keeps the
thread's rollout open (what :mod:`core.providers.codex.liveness` looks for), beside a control
socket; the fake ``codex`` plays the proxy that cannot reach it and ``exec resume --remote``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest

from core.commands import Resume
from core.models import GoalState, Outcome
from core.providers.codex.liveness import control_socket, find_holders
from core.providers.codex.version import has_exec_remote
from tests.codex.fakecodex import FakeCodex
from tests.codex.fixtures import T0, THREAD_A, goal, meta
from tests.support.codex import GID, stopped, until

DAEMON_ARGS = ("app-server", "--listen", "unix://", "--managed-daemon")


@pytest.fixture
def daemon(home) -> Iterator[Callable[[], int]]:
    """Start the stand-in daemon on the thread's rollout (after the session is written)."""
    started: list[subprocess.Popen[bytes]] = []

    def start() -> int:
        [rollout] = list(home.root.rglob(f"rollout-*-{THREAD_A}.jsonl"))
        socket = control_socket(home.root)
        socket.parent.mkdir(parents=True, exist_ok=True)
        socket.touch()
        proc = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                                 "f = open(sys.argv[1])\nprint('open', flush=True)\n"
                                 "time.sleep(120)", str(rollout), *DAEMON_ARGS],
                                stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        started.append(proc)
        assert proc.stdout is not None and proc.stdout.readline() == b"open\n"
        return proc.pid

    yield start
    for proc in started:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def execs(fake: FakeCodex) -> list[list[str]]:
    return [e["argv"] for e in fake.invocations() if e["argv"][:1] == ["exec"]]


@pytest.mark.asyncio
async def test_from_0_171_the_fallback_runs_the_turn_in_the_daemon_with_remote(
        home, repo, fake, make_codex, make_engine, daemon):
    engine = await stopped(home, repo, fake, make_codex, make_engine, version="codex-cli 0.171.0",
                           proxy="unreachable")
    [rollout] = list(home.root.rglob(f"rollout-*-{THREAD_A}.jsonl"))
    fake.script(**{**_plan(fake), "exec": {"rollout": str(rollout),
                                           "append": [goal(THREAD_A, "complete", T0)]}})
    daemon()
    result = await engine.perform(Resume(GID), "cli")
    assert result.outcome is Outcome.RESUMED, result.reason
    await until(lambda: engine.goals[GID].state is GoalState.DONE)
    address = f"unix://{control_socket(home.root)}"
    assert execs(fake) == [["exec", "resume", "--remote", address, THREAD_A,
                            "The usage limit has reset; continue working on the active goal."]]
    assert [e["argv"][:2] for e in fake.invocations()][:1] == [["app-server", "proxy"]]
    assert fake.activations() == []  # the app-server Goalkeeper would start is never asked


@pytest.mark.asyncio
async def test_below_0_171_the_fallback_stays_refused_and_no_second_writer_starts(
        home, repo, fake, make_codex, make_engine, daemon):
    engine = await stopped(home, repo, fake, make_codex, make_engine, version="codex-cli 0.169.0",
                           proxy="unreachable")
    daemon()
    result = await engine.perform(Resume(GID), "cli")
    assert result.outcome is Outcome.DEFERRED
    assert "from Codex 0.171.0 on (installed: 0.169.0)" in (result.reason or "")
    assert "second writer is never started" in (result.reason or "")
    assert execs(fake) == []
    assert [e["argv"][:2] for e in fake.invocations()] == [["app-server", "proxy"]]
    assert engine.goals[GID].state is GoalState.PAUSED and engine.goals[GID].attempts == 0


@pytest.mark.asyncio
@pytest.mark.parametrize(("refusal", "said"), [
    ("busy", "remote thread already has an active turn"),
    ("gone", "failed to connect to remote app server"),
])
async def test_a_daemon_busy_on_the_thread_or_gone_defers_the_remote_run(
        home, repo, fake, make_codex, make_engine, daemon, refusal, said):
    engine = await stopped(home, repo, fake, make_codex, make_engine, version="codex-cli 0.171.0",
                           proxy="unreachable", exec={"remote": refusal})
    daemon()
    result = await engine.perform(Resume(GID), "cli")
    assert result.outcome is Outcome.DEFERRED
    assert said in (result.reason or "") and "--remote" in (result.reason or "")
    assert engine.goals[GID].state is GoalState.PAUSED and engine.goals[GID].attempts == 0
    assert len(execs(fake)) == 1


def test_only_a_known_0_171_or_later_reaches_the_daemon() -> None:
    assert has_exec_remote((0, 171, 0)) and has_exec_remote((0, 172, 3))
    assert has_exec_remote((1, 0, 0))
    assert not has_exec_remote((0, 170, 9)) and not has_exec_remote((0, 169, 0))
    assert not has_exec_remote(None)


def _plan(fake: FakeCodex) -> dict:
    plan: dict = json.loads((fake.dir / "script.json").read_text())
    return plan


def test_the_stand_in_daemon_is_taken_for_the_shared_server(home, daemon) -> None:
    home.rollout(THREAD_A, T0, meta(THREAD_A, T0))
    pid = daemon()
    [rollout] = list(home.root.rglob(f"rollout-*-{THREAD_A}.jsonl"))
    deadline = time.monotonic() + 5
    holders = find_holders([rollout], [])
    while not holders and time.monotonic() < deadline:
        time.sleep(0.05)
        holders = find_holders([rollout], [])
    assert holders is not None and [(h.pid, h.shared_server) for h in holders] == [(pid, True)]
    assert os.path.exists(control_socket(home.root))
