"""``goalkeeper queue codex|claude`` (issue 23): checked before anything is sent (exit 2), the
clear message without a host (exit 5), and through a running host's control socket."""

from __future__ import annotations

import asyncio
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.clock import SystemClock
from core.host import Host
from core.models import GoalState, PauseReason
from core.paths import resolve_paths
from core.settings import Settings
from tests.support.cli import run
from tests.support.fakes import FakeProvider, reading


@pytest.mark.parametrize(("args", "says"), [
    (["codex", "--cwd", "/nonexistent/dir", "Write it"], "no such directory: /nonexistent/dir"),
    (["codex", "--cwd", "{tmp}", "   "], "the objective is empty"),
    (["claude", "--cwd", "{tmp}", ""], "the prompt is empty"),
    (["codex", "--cwd", "{tmp}", "--window", "codex:9h", "Write it"],
     "unknown window 'codex:9h' for codex: one of codex:5h, codex:weekly"),
    (["claude", "--cwd", "{tmp}", "--window", "codex:5h", "Fix it"],
     "unknown window 'codex:5h' for claude"),
])
def test_a_bad_request_exits_2_saying_what_is_wrong(tmp_path: Path, args: list[str],
                                                    says: str) -> None:
    out = run(tmp_path / "home", "queue", *[a.format(tmp=tmp_path) for a in args])
    assert out.returncode == 2, out.stderr
    assert says in out.stderr and "Traceback" not in out.stderr


def test_without_a_host_it_says_so(tmp_path: Path) -> None:
    out = run(tmp_path / "home", "queue", "claude", "--cwd", str(tmp_path), "Fix the tests")
    assert out.returncode == 5
    assert "no Goalkeeper host is running" in out.stderr


def test_the_help_names_the_options(tmp_path: Path) -> None:
    out = run(tmp_path / "home", "queue", "codex", "--help")
    assert out.returncode == 0
    for option in ("--cwd", "--thread", "--window", "codex:5h"):
        assert option in out.stdout


@pytest.mark.asyncio
async def test_queued_through_the_running_host_and_it_says_when(tmp_path: Path) -> None:
    home = tmp_path / "home"
    paths = resolve_paths({"GOALKEEPER_HOME": str(home)})
    clock = SystemClock()
    codex = FakeProvider(clock, name="codex")
    reset = (clock.now() + timedelta(hours=2)).replace(microsecond=0)
    codex.readings = [reading("codex:5h", 40, clock.now(), reset, provider="codex")]
    settings = Settings(resume_jitter_seconds=0, codex_enabled=False, claude_enabled=False)
    host = Host(paths, settings, [codex], "daemon", clock, random.Random(1))
    await host.start()
    try:
        out = await asyncio.to_thread(run, home, "queue", "codex", "--cwd", str(tmp_path),
                                      "--json", "Write the report")
        assert out.returncode == 0, out.stderr
        answer = json.loads(out.stdout)
        assert answer["outcome"] == "queued" and answer["state"] == "paused"
        starts = datetime.fromisoformat(answer["not_before"].replace("Z", "+00:00"))
        assert starts == reset.astimezone(UTC) + timedelta(seconds=45)
        goal = host.engine.goals[answer["goal"]]
        assert (goal.state, goal.pause_reason) == (GoalState.PAUSED, PauseReason.QUOTA)
        assert codex.prepared[0].text == "Write the report"
        assert codex.prepared[0].cwd == str(tmp_path)
        # the words: when it starts
        out = await asyncio.to_thread(run, home, "queue", "codex", "--cwd", str(tmp_path),
                                      "Write the second report")
        assert out.returncode == 0, out.stderr
        assert "queued, starts at" in out.stdout and "starts after codex:5h resets" in out.stdout
        rows = await host.engine.reads.history(answer["goal"])
        assert any(r.event == "queued" and r.origin == "cli" for r in rows)
    finally:
        await host.stop()
