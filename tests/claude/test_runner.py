"""The headless runner against a fake ``claude``: limits, normal ends, failures, clean stops."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.clock import FakeClock
from core.models import Exactness
from core.providers.base import RunnerError
from core.providers.claude.runner import child_env, command
from core.retry.policy import RetryPolicy
from tests.claude.plays import (
    RESET_EPOCH,
    allowed,
    hanging,
    init,
    legacy_limited,
    limited,
    rate_limit,
    result,
    transient,
    unknown_session,
)
from tests.support.claude import HEADLESS_SESSION as SESSION
from tests.support.claude import FakeClaude, make_run
from tests.support.fakes import until


@pytest.mark.asyncio
async def test_a_2_1_328_usage_limit_pauses_with_the_exact_reset(fake_claude: FakeClaude,
                                                                tmp_path: Path) -> None:
    fake_claude.play(limited(kind="seven_day_opus"))
    run, sink = make_run(fake_claude, tmp_path)
    await run.start()
    await until(lambda: bool(sink.reports))
    kind, _, _, hit = sink.reports[0]
    assert kind == "limited"
    assert hit.resets_at == datetime.fromtimestamp(RESET_EPOCH, UTC)
    assert hit.windows == ("claude:7d-opus",) and hit.exactness is Exactness.EXACT
    by_window = {r.window_id: r for r in sink.readings}
    assert by_window["claude:7d-opus"].limit_reached is True
    assert by_window["claude:5h"].used_percent == 30.0  # unifiedWindows: exact fractions


@pytest.mark.asyncio
async def test_a_limit_reported_as_success_with_exit_0_is_a_limit(fake_claude: FakeClaude,
                                                                  tmp_path: Path) -> None:
    fake_claude.play(legacy_limited())
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
    fake_claude.play(allowed(), allowed(), legacy_limited())
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
async def test_an_unknown_session_fails_with_claudes_own_words(fake_claude: FakeClaude,
                                                              tmp_path: Path) -> None:
    fake_claude.play(unknown_session())
    run, sink = make_run(fake_claude, tmp_path)
    await run.start()
    await until(lambda: bool(sink.reports))
    assert sink.reports == [("failed", "claude:" + SESSION, 7,
                             f"No conversation found with session ID: {SESSION}")]


@pytest.mark.asyncio
@pytest.mark.parametrize("text", [
    "API Error: Server is temporarily limiting requests (not your usage limit) · Rate limit "
    "exceeded",
    "API Error: Request rejected (429) · Rate limit exceeded"])
async def test_a_transient_429_is_retried_with_backoff_never_a_quota_pause(
        fake_claude: FakeClaude, tmp_path: Path, text: str) -> None:
    fake_claude.play(transient(text=text), allowed("Back at it."))
    run, sink = make_run(fake_claude, tmp_path)
    await run.start()
    clock = run.clock
    assert isinstance(clock, FakeClock)
    await until(lambda: bool(sink.notes))
    (_goal, event, reason) = sink.notes[0]
    assert event == "retry_scheduled" and "transient 429" in reason and "1/2" in reason
    assert "in 15 s" in reason  # full jitter of the first 30 s cap (the fixed jitter is 0.5)
    assert len(fake_claude.invocations()) == 1
    await until(lambda: clock.sleepers > 0)
    clock.advance(15.0)
    await until(lambda: bool(sink.reports))
    assert sink.reports == [("finished", "claude:" + SESSION, 7, "the turn ended: Back at it.")]
    assert len(fake_claude.invocations()) == 2
    # the transient turn's untyped rejected event named no window: only the good turn's readings
    assert [(r.window_id, r.used_percent) for r in sink.readings] == [
        ("claude:5h", 42.0), ("claude:7d", 50.0)]


@pytest.mark.asyncio
async def test_transient_429s_until_no_attempt_is_left_pause_for_an_error(
        fake_claude: FakeClaude, tmp_path: Path) -> None:
    fake_claude.play(transient())
    run, sink = make_run(fake_claude, tmp_path,
                         retry=RetryPolicy(retries=2, backoff_initial=1, backoff_max=900))
    await run.start()
    clock = run.clock
    assert isinstance(clock, FakeClock)
    for _ in range(2):
        await until(lambda: clock.sleepers > 0 or bool(sink.reports))
        clock.advance(5.0)
    await until(lambda: bool(sink.reports))
    (kind, _, fence, detail) = sink.reports[0]
    assert (kind, fence) == ("paused", 7)
    assert "gave up after 3 attempts" in detail and "not a usage limit" in detail
    assert len(fake_claude.invocations()) == 3
    assert [n[1] for n in sink.notes] == ["retry_scheduled", "retry_scheduled"]


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
