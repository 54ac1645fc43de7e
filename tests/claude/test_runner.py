"""The headless runner against a fake ``claude``: limits, normal ends, failures, clean stops."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from core.clock import FakeClock
from core.models import Exactness
from core.providers.base import RunnerError
from core.providers.claude.runner import HeadlessRun, RunSpec, child_env, command
from tests.claude.conftest import FakeClaude
from tests.claude.plays import RESET_EPOCH, allowed, hanging, init, limited, rate_limit, result
from tests.claude.support import RecordingSink
from tests.support.fakes import until

SESSION = "3b9e2f4a-1c2d-4e5f-8a6b-7c8d9e0f1a2b"


def make_run(fake: FakeClaude, tmp_path: Path, *, keep: bool = False, grace: float = 5.0,
             sink: RecordingSink | None = None) -> tuple[HeadlessRun, RecordingSink]:
    cwd = tmp_path / "repo"
    cwd.mkdir(exist_ok=True)
    env = {**fake.env, "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config")}
    argv = command(str(fake.bin_dir / "claude"), SESSION, "Continue, please.")
    spec = RunSpec("claude:" + SESSION, 7, argv, str(cwd), env, keep, UTC)
    sink = sink or RecordingSink()
    limited_calls: list[Any] = []
    run = HeadlessRun(spec, sink, FakeClock(datetime(2026, 7, 7, 14, tzinfo=UTC)),  # type: ignore[arg-type]
                      lambda goal, ended: limited_calls.append(ended), grace)
    return run, sink


@pytest.mark.asyncio
async def test_a_limit_reported_as_success_with_exit_0_is_a_limit(fake_claude: FakeClaude,
                                                                  tmp_path: Path) -> None:
    fake_claude.play(limited())
    run, sink = make_run(fake_claude, tmp_path)
    await run.start()
    await until(lambda: bool(sink.reports))
    kind, goal, fence, hit = sink.reports[0]
    assert (kind, goal, fence) == ("limited", "claude:" + SESSION, 7)
    assert hit.resets_at == datetime.fromtimestamp(RESET_EPOCH, UTC)
    assert hit.exactness is Exactness.EXACT
    assert hit.windows == ("claude:5h",)
    assert [r.limit_reached for r in sink.readings] == [True]
    [call] = fake_claude.invocations()
    assert call["argv"] == ["-p", "--resume", SESSION, "Continue, please.", "--output-format",
                            "stream-json", "--verbose"]
    assert call["cwd"] == str(tmp_path / "repo")


@pytest.mark.asyncio
async def test_a_normal_result_ends_the_turn(fake_claude: FakeClaude, tmp_path: Path) -> None:
    fake_claude.play(allowed("Done: 42 tests pass."))
    run, sink = make_run(fake_claude, tmp_path)
    await run.start()
    await until(lambda: bool(sink.reports))
    assert sink.reports == [("finished", "claude:" + SESSION, 7,
                             "the turn ended: Done: 42 tests pass.")]
    assert sink.readings[0].limit_reached is False


@pytest.mark.asyncio
async def test_keep_prompting_runs_turns_until_the_limit(fake_claude: FakeClaude,
                                                         tmp_path: Path) -> None:
    fake_claude.play(allowed(), allowed(), limited())
    run, sink = make_run(fake_claude, tmp_path, keep=True)
    await run.start()
    for _ in range(2):  # the pause between turns sleeps on the (fake) clock
        await until(lambda: run._proc is not None and run._proc.returncode is not None
                    and run.turns < 3, timeout=5)
        await until(lambda: run.clock.sleepers > 0 or bool(sink.reports), timeout=5)  # type: ignore[attr-defined]
        run.clock.advance(1.0)  # type: ignore[attr-defined]
    await until(lambda: bool(sink.reports))
    assert [r[0] for r in sink.reports] == ["limited"]
    assert len(fake_claude.invocations()) == 3


@pytest.mark.asyncio
async def test_an_error_result_fails_the_goal(fake_claude: FakeClaude, tmp_path: Path) -> None:
    fake_claude.play({"events": [init(), result("Prompt is too long", is_error=True)],
                      "exit": 1})
    run, sink = make_run(fake_claude, tmp_path)
    await run.start()
    await until(lambda: bool(sink.reports))
    assert sink.reports == [("failed", "claude:" + SESSION, 7, "Prompt is too long")]


@pytest.mark.asyncio
async def test_no_result_at_all_fails_with_stderr(fake_claude: FakeClaude,
                                                  tmp_path: Path) -> None:
    fake_claude.play({"events": [init()], "stderr": "boom: socket closed", "exit": 1})
    run, sink = make_run(fake_claude, tmp_path)
    await run.start()
    await until(lambda: bool(sink.reports))
    kind, _, _, detail = sink.reports[0]
    assert kind == "failed" and "code 1" in detail and "boom: socket closed" in detail


@pytest.mark.asyncio
async def test_exiting_before_starting_is_a_runner_error(fake_claude: FakeClaude,
                                                         tmp_path: Path) -> None:
    fake_claude.play({"events": [], "stderr": f"No conversation found with session ID: "
                                              f"{SESSION}", "exit": 1})
    run, sink = make_run(fake_claude, tmp_path)
    with pytest.raises(RunnerError, match="No conversation found"):
        await run.start()
    assert sink.reports == []


@pytest.mark.asyncio
async def test_an_immediate_limit_without_init_still_counts_as_started(
        fake_claude: FakeClaude, tmp_path: Path) -> None:
    fake_claude.play({"events": [rate_limit("rejected"),
                                 result(f"Claude AI usage limit reached|{RESET_EPOCH}",
                                        is_error=True)]})
    run, sink = make_run(fake_claude, tmp_path)
    await run.start()
    await until(lambda: bool(sink.reports))
    assert sink.reports[0][0] == "limited"


@pytest.mark.asyncio
async def test_stop_sends_sigint_and_reports_nothing(fake_claude: FakeClaude,
                                                     tmp_path: Path) -> None:
    fake_claude.play(hanging())
    run, sink = make_run(fake_claude, tmp_path)
    await run.start()
    await until(lambda: bool(sink.readings))
    await run.stop()
    assert fake_claude.signals() == ["SIGINT"]
    assert sink.reports == []


@pytest.mark.asyncio
async def test_sigterm_follows_when_sigint_is_ignored(fake_claude: FakeClaude,
                                                      tmp_path: Path) -> None:
    fake_claude.play(hanging(ignore_sigint=True))
    run, sink = make_run(fake_claude, tmp_path, grace=0.3)
    await run.start()
    await until(lambda: bool(sink.readings))
    await run.stop()
    assert fake_claude.signals() == ["SIGINT", "SIGTERM"]
    assert sink.reports == []


def test_the_command_never_bypasses_permissions() -> None:
    argv = command("/usr/bin/claude", SESSION, "go on")
    assert argv == ["/usr/bin/claude", "-p", "--resume", SESSION, "go on", "--output-format",
                    "stream-json", "--verbose"]
    with pytest.raises(RunnerError, match="option"):
        command("claude", SESSION, "--dangerously-skip-permissions")
    with pytest.raises(RunnerError, match="bypass"):
        command("claude", SESSION, "use bypassPermissions please")


def test_the_child_points_claude_at_the_sessions_config_dir() -> None:
    base = {"PATH": "/bin", "CLAUDE_CONFIG_DIR": "/a,/b"}
    assert child_env(base, "/b", default_dir=False)["CLAUDE_CONFIG_DIR"] == "/b"
    assert "CLAUDE_CONFIG_DIR" not in child_env(base, "/home/u/.claude", default_dir=True)
    assert child_env({"CLAUDE_CONFIG_DIR": "/x"}, "/home/u/.claude", True)[
        "CLAUDE_CONFIG_DIR"] == "/x"
