"""A change of the local zone on a real daemon (issue 21), not only on a fake clock.

The daemon's local zone is a temporary symlink (``GOALKEEPER_LOCALTIME``; the machine's
``/etc/localtime`` is never touched) that the test points at another zone while the daemon
runs, as ``timedatectl set-timezone`` does. Allowed hours cover the next two hours in UTC; the
first zone (UTC−12) is outside them. A pipeline step reports a rate limit: the goal pauses with
its reset R a few seconds away, its resume deferred to the first zone's allowed start. Switched
to UTC, the daemon plans it again — at R, not before, and not later — and resumes it exactly
once; switching back and forth afterwards resumes nothing more. The CLI runs in this process
with the same variable, so ``status`` names the new zone too.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.cli import main
from tests.pipeline.support import step, write_goal
from tests.support.daemon import ask, effects, running_daemon, wait_for

pytestmark = pytest.mark.slow

RETRY_AFTER = 15
#: the scheduler's longest sleep while anything is pending: the bound after a change
MAX_SLEEP = 1.0
#: how long after the bound a loaded 2-core machine may take to run the step and record it
SLACK = 8.0
GOAL = "pipeline:zone"
ZONEINFO = Path("/usr/share/zoneinfo")
OUTSIDE = "Etc/GMT+12"  # UTC−12: twelve hours away from the allowed ones
INSIDE = "Etc/UTC"


def point(link: Path, zone: str) -> None:
    tmp = link.with_name(link.name + ".new")
    tmp.symlink_to(ZONEINFO / zone)
    os.replace(tmp, link)


@pytest.fixture
def daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
           ) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    link = tmp_path / "localtime"
    point(link, OUTSIDE)
    monkeypatch.delenv("TZ", raising=False)  # $TZ would win over the file
    monkeypatch.setenv("GOALKEEPER_LOCALTIME", str(link))
    hour = datetime.now(UTC).hour
    hours = f"{hour:02d}:00-{(hour + 2) % 24:02d}:00"
    env = {"GOALKEEPER_AUTO_RESUME_HOURS": hours, "GOALKEEPER_AUTO_RESUME_TIMEZONE": "",
           "GOALKEEPER_RESUME_MARGIN_SECONDS": "0", "GOALKEEPER_RESUME_JITTER_SECONDS": "0",
           "GOALKEEPER_STABLE_SECONDS": "0", "GOALKEEPER_MAX_SLEEP_SECONDS": str(MAX_SLEEP),
           "GOALKEEPER_PIPELINE_MAX_INLINE_WAIT_SECONDS": "0",
           "GOALKEEPER_AUTO_RESUME_DEFAULT": "true",
           "GOALKEEPER_CODEX_ENABLED": "false", "GOALKEEPER_CLAUDE_ENABLED": "false"}
    monkeypatch.setenv("GOALKEEPER_AUTO_RESUME_HOURS", hours)  # the CLI's status, alike
    monkeypatch.setenv("GOALKEEPER_AUTO_RESUME_TIMEZONE", "")
    with running_daemon(tmp_path, env) as proc:
        yield proc, link


def goal(capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    return next(g for g in ask(capsys, "status")["goals"] if g["id"] == GOAL)


def when(value: object) -> datetime:
    return datetime.fromisoformat(str(value))


def resumes(capsys: pytest.CaptureFixture[str]) -> list[datetime]:
    rows = ask(capsys, "history", GOAL, "--limit", "200")
    return [when(r["at"]) for r in rows if r["event"] == "resumed"]


def test_a_zone_change_judges_the_hours_in_the_new_zone_and_resumes_once_at_the_reset(
        daemon: tuple[subprocess.Popen[bytes], Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, link = daemon
    limited = {"report": {"status": "rate_limited", "retry_after": RETRY_AFTER}}
    deliver = step("deliver", limited, {"effect": str(tmp_path / "effects.log")})
    path = write_goal(tmp_path / "g", {"name": "zone"}, [], [deliver])
    assert main(["add", str(path), "--yes"]) == 0
    assert main(["run", "zone"]) == 0
    wait_for(lambda: goal(capsys)["state"] == "paused"
             and goal(capsys)["next_resume_at"] is not None, 20)
    paused = goal(capsys)
    reset = when(paused["resets_at"])
    assert when(paused["next_resume_at"]) > reset + timedelta(hours=1)  # the first zone's hours
    assert ask(capsys, "status")["policies"]["auto_resume_timezone"] == OUTSIDE
    point(link, INSIDE)
    took = wait_for(lambda: when(goal(capsys)["next_resume_at"]) == reset, 2 * MAX_SLEEP + SLACK)
    assert ask(capsys, "status")["policies"]["auto_resume_timezone"] == INSIDE
    assert datetime.now(UTC) < reset and effects(tmp_path) == []  # planned at R, not now
    wait_for(lambda: effects(tmp_path) == ["deliver"], RETRY_AFTER + MAX_SLEEP + SLACK)
    [resumed] = resumes(capsys)
    assert resumed >= reset, (resumed, reset)
    point(link, OUTSIDE)
    time.sleep(3 * MAX_SLEEP)
    point(link, INSIDE)
    time.sleep(3 * MAX_SLEEP)
    assert effects(tmp_path) == ["deliver"] and len(resumes(capsys)) == 1
    print(f"planned again {took:.1f} s after the zone changed")
