"""Wall-clock jumps and a suspend on a real daemon (issue 21), not on a fake clock.

The host runs under libfaketime (Debian's ``faketime`` package, in ``.ci/run``'s apt list) with
``FAKETIME_TIMESTAMP_FILE`` and ``FAKETIME_NO_CACHE=1``: the test moves the host's wall clock
while it runs by rewriting that file. The monotonic clock is left alone
(``FAKETIME_DONT_FAKE_MONOTONIC=1``), as a real clock step (NTP, the user) or a suspend leaves
it. A pipeline step reports a rate limit with a 30-minute ``retry_after``: the goal pauses for
quota with its resume due at the reset R (margin and jitter 0), and its second invocation —
the resume — records an effect. Each resume must happen exactly once, never before R on the
host's clock, and within the scheduler's bound (``max_sleep_seconds``) after the clock passes R
or the host wakes. The CLI runs in this process, on the real clock.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime
from glob import glob
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from tests.pipeline.support import step, write_goal
from tests.support.daemon import ask, effects, running_daemon, wait_for

pytestmark = pytest.mark.slow

LIBFAKETIME = next(iter(sorted(glob("/usr/lib/*/faketime/libfaketime.so.1"))), None)
RETRY_AFTER = 1800
#: the scheduler's longest sleep while anything is pending: the bound after a jump or a wake
MAX_SLEEP = 1.0
#: how long after the bound a loaded 2-core machine may take to run the step and record it
SLACK = 8.0
GOAL = "pipeline:jump"


def set_offset(clock_file: Path, seconds: int) -> None:
    """Move the host's wall clock to real time + ``seconds`` (read at its next call)."""
    tmp = clock_file.with_suffix(".tmp")
    tmp.write_text(f"{seconds:+d}\n")
    os.replace(tmp, clock_file)


@pytest.fixture
def faked(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    if LIBFAKETIME is None:
        why = "libfaketime is not installed (apt-get install faketime)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    clock_file = tmp_path / "faketime.rc"
    set_offset(clock_file, 0)
    env = {"LD_PRELOAD": LIBFAKETIME, "FAKETIME_TIMESTAMP_FILE": str(clock_file),
           "FAKETIME_NO_CACHE": "1", "FAKETIME_DONT_FAKE_MONOTONIC": "1",
           "GOALKEEPER_RESUME_MARGIN_SECONDS": "0", "GOALKEEPER_RESUME_JITTER_SECONDS": "0",
           "GOALKEEPER_STABLE_SECONDS": "0", "GOALKEEPER_MAX_SLEEP_SECONDS": str(MAX_SLEEP),
           "GOALKEEPER_PIPELINE_MAX_INLINE_WAIT_SECONDS": "0",
           "GOALKEEPER_AUTO_RESUME_DEFAULT": "true",
           "GOALKEEPER_CODEX_ENABLED": "false", "GOALKEEPER_CLAUDE_ENABLED": "false"}
    with running_daemon(tmp_path, env) as proc:
        yield proc, clock_file


def goal_json(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    return next(g for g in ask(capsys, "status")["goals"] if g["id"] == GOAL)


def resumes(capsys: pytest.CaptureFixture[str]) -> list[datetime]:
    rows = ask(capsys, "history", GOAL, "--limit", "200")
    return [datetime.fromisoformat(r["at"]) for r in rows if r["event"] == "resumed"]


def paused_until_reset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> datetime:
    """Add and run the goal; it pauses for quota: its resume is due at the reset R."""
    limited = {"report": {"status": "rate_limited", "retry_after": RETRY_AFTER}}
    deliver = step("deliver", limited, {"effect": str(tmp_path / "effects.log")})
    # the step itself runs on the real clock: under libfaketime 0.9.10 with the monotonic clock
    # not faked, Python's time.sleep fails with EINVAL (clock_nanosleep TIMER_ABSTIME)
    deliver["command"] = ["env", "-u", "LD_PRELOAD", *deliver["command"]]
    path = write_goal(tmp_path / "g", {"name": "jump"}, [], [deliver])
    assert main(["add", str(path), "--yes"]) == 0
    assert main(["run", "jump"]) == 0
    wait_for(lambda: goal_json(capsys)["state"] == "paused"
             and goal_json(capsys)["next_resume_at"] is not None, 20)
    return datetime.fromisoformat(goal_json(capsys)["next_resume_at"])


def settle(seconds: float = 3 * MAX_SLEEP) -> None:
    """Several scheduler passes."""
    time.sleep(seconds)


def test_wall_clock_jumps_back_and_forward_resume_once_at_the_reset(
        faked: tuple[subprocess.Popen[bytes], Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, clock_file = faked
    reset = paused_until_reset(tmp_path, capsys)
    set_offset(clock_file, -3600)  # back by an hour: the reset is now 1 h 30 min away
    settle()
    assert resumes(capsys) == [] and effects(tmp_path) == []
    set_offset(clock_file, RETRY_AFTER + 60)  # forward, past the reset
    took = wait_for(lambda: effects(tmp_path) == ["deliver"], MAX_SLEEP + SLACK)
    [resumed] = resumes(capsys)
    assert resumed >= reset, (resumed, reset)
    set_offset(clock_file, RETRY_AFTER + 60 - 3600)  # back by an hour again, after the resume
    settle()
    assert effects(tmp_path) == ["deliver"] and len(resumes(capsys)) == 1
    assert goal_json(capsys)["state"] == "idle"
    print(f"resumed {took:.1f} s after the forward jump")


def test_a_suspend_across_the_reset_resumes_once_after_wake_up(
        faked: tuple[subprocess.Popen[bytes], Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    proc, clock_file = faked
    reset = paused_until_reset(tmp_path, capsys)
    proc.send_signal(signal.SIGSTOP)  # suspended: no pass runs, no timer fires
    try:
        set_offset(clock_file, RETRY_AFTER + 60)  # the wall clock moves on meanwhile, past R
        time.sleep(3 * MAX_SLEEP)  # longer than any of the host's own sleeps
        assert effects(tmp_path) == []
    finally:
        proc.send_signal(signal.SIGCONT)
    took = wait_for(lambda: effects(tmp_path) == ["deliver"], MAX_SLEEP + SLACK)
    [resumed] = resumes(capsys)
    assert resumed >= reset
    settle()
    assert effects(tmp_path) == ["deliver"] and len(resumes(capsys)) == 1
    print(f"resumed {took:.1f} s after the wake-up")
