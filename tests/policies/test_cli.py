"""The resume policies in the CLI: `goal set` (checked before the host is asked, then through
the host's control socket) and what `status --json` shows."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.host import control_server
from tests.policies.support import policy_settings, waiting
from tests.support.cli import run
from tests.support.policies import seed


def test_status_json_shows_the_policies_the_goals_and_the_forecast(tmp_path: Path) -> None:
    now = datetime.now(UTC)  # the CLI reads the real clock; the readings are placed around it
    seed(tmp_path, now)
    out = run(tmp_path, "status", "--json", env={
        "GOALKEEPER_RESUME_RESERVE_PERCENT": "20",
        "GOALKEEPER_RESUME_RESERVE_BY_WINDOW": "fake:5h=30, other:7d=5",
        "GOALKEEPER_AUTO_RESUME_HOURS": "Sat-Sun", "GOALKEEPER_AUTO_RESUME_TIMEZONE": "Asia/Tokyo",
        "GOALKEEPER_MAX_CONCURRENT_RESUMES": "2"})
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["policies"] == {
        "resume_reserve_percent": 20.0,
        "resume_reserve_by_window": {"fake:5h": 30.0, "other:7d": 5.0},
        "auto_resume_hours": "Sat-Sun", "auto_resume_timezone": "Asia/Tokyo",
        "max_concurrent_resumes": 2, "resume_settle_seconds": 300.0,
        "unmatched_reserve_windows": ["other:7d"]}  # fake:5h has readings; other:7d has none
    goal = data["goals"][0]
    assert (goal["priority"], goal["budget_percent"], goal["auto_resume_hours"]) == (
        3, 25.0, "Mon-Fri 19:00-08:00")
    assert goal["deferred_by"] == "allowed hours" and goal["last_run_seconds"] == 5400.0
    quota = data["quotas"][0]
    assert quota["reserve_percent"] == 30.0
    forecast = quota["forecast"]
    assert forecast["pace_percent_per_hour"] == pytest.approx(60, rel=0.02)  # 10 -> 30 in 20 min
    runs_out = datetime.fromisoformat(forecast["runs_out_at"].replace("Z", "+00:00"))
    assert abs((runs_out - (now + timedelta(minutes=70))).total_seconds()) < 60
    assert forecast["text"].startswith("runs out ≈ ") and not forecast["lasts_until_reset"]
    human = run(tmp_path, "status").stdout
    assert "auto-resume at " in human and "(allowed hours)" in human
    assert "priority 3, budget 25 %, hours Mon-Fri 19:00-08:00, ran 1:30:00 on the last window" \
        in human
    assert "runs out ≈ " in human
    assert "no such window is known" not in human  # without the variables: no table


def test_status_says_which_reserves_match_no_window(tmp_path: Path) -> None:
    seed(tmp_path, datetime.now(UTC))
    (tmp_path / "config.toml").write_text(
        '[resume_reserve_by_window]\n"fake:5h" = 30\n"quota:nightly" = 5\n"quota:nightlly" = 5\n'
        '"codex:weekly" = 10\n[quotas.nightly]\nkind = "periodic"\nlimit = 10\n')
    out = run(tmp_path, "status", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["policies"]["unmatched_reserve_windows"] == ["quota:nightlly"]
    human = run(tmp_path, "status").stdout
    assert ("Reserve set for quota:nightlly, but no such window is known: it holds nothing back "
            "(a typo in resume_reserve_by_window?)") in human


def test_goal_set_checks_the_value_before_asking_the_host(tmp_path: Path) -> None:
    seed(tmp_path, datetime.now(UTC))
    bad = run(tmp_path, "goal", "set", "fake:g", "budget_percent", "120")
    assert bad.returncode == 2
    assert "budget_percent = '120': Input should be less than or equal to 100" in bad.stderr
    hours = run(tmp_path, "goal", "set", "fake:g", "auto_resume_hours", "Mon-Fry 19:00-08:00")
    assert hours.returncode == 2 and "unknown day 'Fry'" in hours.stderr
    assert run(tmp_path, "goal", "set", "fake:g", "colour", "red").returncode == 2
    assert run(tmp_path, "goal", "set", "nope", "priority", "1").returncode == 3
    assert run(tmp_path, "goal", "set", "fake:g", "priority", "1").returncode == 5  # no host


@pytest.mark.asyncio
async def test_the_control_op_goes_through_the_engine(make_engine, fake, clock, paths) -> None:
    waiting(fake, clock)
    engine = await make_engine(fake, settings=policy_settings())
    server = control_server(engine, paths)
    reply = await server.dispatch(json.dumps({"op": "goal-set", "goal": "fake:g",
                                              "key": "priority", "value": "7",
                                              "origin": "cli"}).encode())
    assert (reply["outcome"], reply["reason"]) == ("updated", "priority = 7")
    assert engine.goals["fake:g"].policy.priority == 7
    again = await server.dispatch(json.dumps({"op": "goal-set", "goal": "fake:g",
                                              "key": "priority", "value": "7"}).encode())
    assert again["outcome"] == "unchanged"
    cleared = await server.dispatch(json.dumps({"op": "goal-set", "goal": "fake:g",
                                                "key": "priority", "value": "none"}).encode())
    assert cleared["reason"] == "priority = 0"
    budget = await server.dispatch(json.dumps({"op": "goal-set", "goal": "fake:g",
                                               "key": "budget_percent", "value": ""}).encode())
    assert budget["outcome"] == "unchanged" and budget["reason"] == (
        "budget_percent is already (not set)")
    row = (await engine.reads.history("fake:g", limit=1))[0]
    assert (row.event, row.origin) == ("goal_policy_changed", "cli")


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOALKEEPER_")}
    env |= {"GOALKEEPER_HOME": str(home), "GOALKEEPER_DEMO_ENABLED": "true"}
    proc = subprocess.Popen([sys.executable, "-m", "core", "daemon"], env=env,
                            cwd=Path(__file__).resolve().parents[2],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not (home / "host.json").exists() or "demo:docs" not in run(home, "status").stdout:
        assert proc.poll() is None and time.monotonic() < deadline, "the daemon did not start"
        time.sleep(0.1)
    yield home
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)


def test_goal_set_through_a_running_daemon(daemon: Path) -> None:
    out = run(daemon, "goal", "set", "demo:docs", "auto_resume_hours",
              "Mon-Fri 19:00-08:00", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["outcome"] == "updated"
    status = json.loads(run(daemon, "status", "--json").stdout)
    docs = next(g for g in status["goals"] if g["id"] == "demo:docs")
    assert docs["auto_resume_hours"] == "Mon-Fri 19:00-08:00"
