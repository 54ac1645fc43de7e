"""Which sessions are goals, what they show, and the quota readings the provider offers."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from core.clock import FakeClock
from core.models import Exactness, GoalState, PauseReason
from core.paths import Paths
from core.providers.base import GoalObservation
from core.providers.claude.provider import ClaudeProvider
from core.providers.claude.sessions import LIVE_BLOCK, NATIVE_BLOCK, goal_id
from core.providers.claude.state import TrackingFile
from core.providers.registry import SPECS, build_providers, looked_for
from core.settings import Settings
from tests.claude.builders import limit_stop, system_notice, user, write_session
from tests.claude.make_fixtures import SESSIONS
from tests.support.claude import RecordingSink, live_session, started_provider

Make = Callable[..., Any]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest_asyncio.fixture
async def make(paths: Paths, environ: dict[str, str]) -> AsyncIterator[Make]:
    started: list[ClaudeProvider] = []

    async def _make(clock: FakeClock, env: dict[str, str] | None = None,
                    **settings: Any) -> ClaudeProvider:
        provider = await started_provider(Settings(**settings), paths, clock, env or environ)
        started.append(provider)
        return provider

    yield _make
    for provider in started:
        await provider.stop()


def by_session(observations: list[GoalObservation]) -> dict[str, GoalObservation]:
    return {o.id.split(":", 1)[1]: o for o in observations}


@pytest.mark.asyncio
async def test_limit_stopped_sessions_are_goals_paused_for_quota(
        make: Make, late_clock: FakeClock) -> None:
    provider = await make(late_clock)
    found = by_session(await provider.discover())
    s = SESSIONS
    assert set(found) == {s["session_limit"], s["weekly"], s["extra_usage"], s["legacy"],
                          s["epoch"], s["native_waiting"], s["after_midnight"], s["unreadable"]}
    stopped = found[s["session_limit"]]
    assert stopped.id == f"claude:{s['session_limit']}"
    assert stopped.state is GoalState.PAUSED and stopped.pause_reason is PauseReason.QUOTA
    assert stopped.resets_at == at("2026-07-07T16:40:59")  # the minute's last second
    assert stopped.observed_at == at("2026-07-07T13:58:00.120")
    assert stopped.windows == ("claude:5h", "claude:7d")
    assert stopped.title == "Migrate the test suite to pytest and get CI green"
    assert stopped.data["cwd"] == "/home/dev/myrepo" and stopped.data["branch"] == "main"
    assert stopped.pause_detail == "You've hit your session limit · resets 6:40pm (Europe/Berlin)"
    assert stopped.auto_resume_block is None
    assert found[s["weekly"]].resets_at == at("2026-07-10T00:00:00")  # end of Thursday (UTC)
    assert "end of that day" in (found[s["weekly"]].pause_detail or "")
    assert found[s["extra_usage"]].resets_at == at("2026-07-07T06:00:59")
    assert found[s["extra_usage"]].windows == ("claude:5h", "claude:7d", "claude:overage")
    assert found[s["legacy"]].resets_at == at("2026-07-08T00:00:59")  # TZ=UTC
    assert found[s["epoch"]].resets_at == at("2026-07-07T16:00:00")
    assert found[s["after_midnight"]].resets_at == at("2026-07-08T00:00:59")
    unreadable = found[s["unreadable"]]
    assert unreadable.resets_at is None and "cannot read" in (unreadable.pause_detail or "")


@pytest.mark.asyncio
async def test_claude_resumes_itself_only_from_a_live_tui_that_armed_its_wait(
        make: Make, late_clock: FakeClock, claude_dir: Path) -> None:
    waiting = SESSIONS["native_waiting"]
    # the "continuing automatically" notice, but no process: the TUI is gone, the wait with it
    provider = await make(late_clock)
    assert by_session(await provider.discover())[waiting].auto_resume_block is None
    # a live interactive Claude Code has the session open and armed its wait
    live_session(claude_dir, waiting)
    provider.poll()
    block = by_session(await provider.discover())[waiting].auto_resume_block
    assert block is not None and block.startswith(NATIVE_BLOCK)
    assert "continuing automatically at 7pm" in block and f"pid {os.getpid()}" in block
    # another live TUI with a stop it did not arm for: the user is there, Goalkeeper waits
    # (a child of this test stands in for it: the test's parent may be gone, its pid then 1)
    with subprocess.Popen(["sleep", "60"]) as other_tui:
        try:
            live_session(claude_dir, SESSIONS["session_limit"], pid=other_tui.pid)
            provider.poll()
            found = by_session(await provider.discover())
        finally:
            other_tui.kill()
    other = found[SESSIONS["session_limit"]].auto_resume_block
    assert other is not None and other.startswith(LIVE_BLOCK)
    assert "did not arm its wait" in other and "waits for it to exit" in other


@pytest.mark.asyncio
async def test_a_cancel_record_or_a_dead_pid_ends_claudes_own_wait(
        make: Make, late_clock: FakeClock, claude_dir: Path) -> None:
    waiting = SESSIONS["native_waiting"]
    path = live_session(claude_dir, waiting)
    provider = await make(late_clock)
    write_session(claude_dir, [system_notice(
        "Automatic continue cancelled · /rate-limit-options to re-arm",
        "2026-07-07T13:31:00.000Z", session=waiting)], session=waiting, append=True)
    provider.poll()
    block = by_session(await provider.discover())[waiting].auto_resume_block
    assert block is not None and block.startswith(LIVE_BLOCK)
    assert "Automatic continue cancelled" in block
    # the process is gone but its file stayed behind (killed): Goalkeeper's to resume
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "procStart": "1"}))  # another process's start time
    provider.poll()
    assert by_session(await provider.discover())[waiting].auto_resume_block is None


@pytest.mark.asyncio
async def test_neither_the_setting_nor_the_version_makes_claude_resume_a_closed_session(
        make: Make, late_clock: FakeClock, claude_dir: Path) -> None:
    write_session(claude_dir, [
        user("new version", "2026-07-07T20:00:00.000Z", session="s-new", version="2.1.328"),
        limit_stop("You've hit your 5-hour limit · resets 11pm (UTC)", "2026-07-07T20:30:00Z",
                   session="s-new", version="2.1.328"),
    ], session="s-new")
    settings = json.loads((claude_dir / "settings.json").read_text())
    (claude_dir / "settings.json").write_text(json.dumps({**settings,
                                                         "autoContinueAtUsageLimit": True}))
    provider = await make(late_clock)
    obs = by_session(await provider.discover())
    assert obs["s-new"].auto_resume_block is None
    assert obs[SESSIONS["session_limit"]].auto_resume_block is None


@pytest.mark.asyncio
async def test_a_reset_beyond_24_hours_or_overage_is_not_waited_for_by_claude(
        make: Make, late_clock: FakeClock, claude_dir: Path) -> None:
    info = {"status": "rejected", "resetsAt": int(at("2026-07-09T12:00:00").timestamp()),
            "rateLimitType": "seven_day", "isUsingOverage": False}
    far = limit_stop("You've hit your weekly limit · resets Jul 9, 12pm (UTC)",
                     "2026-07-07T21:00:00.000Z", session="s-far")
    far.update(apiError="usage_limit_reached", apiErrorParams={"rate_limit_info": info})
    write_session(claude_dir, [user("weekly", "2026-07-07T20:00:00.000Z", session="s-far"), far,
                               system_notice("Usage limit reached · continuing automatically at "
                                             "Jul 9, 12pm · esc to cancel",
                                             "2026-07-07T21:00:01.000Z", session="s-far")],
                  session="s-far")
    live_session(claude_dir, "s-far")
    provider = await make(late_clock)
    found = by_session(await provider.discover())["s-far"]
    assert found.resets_at == at("2026-07-09T12:00:00")  # exact, from rate_limit_info
    assert found.data["reset_exactness"] == "exact"
    assert found.windows == ("claude:5h", "claude:7d")
    assert "more than 24 hours away" in (found.auto_resume_block or "")


@pytest.mark.asyncio
async def test_old_stops_are_not_tracked_but_chosen_sessions_are(
        make: Make, paths: Paths) -> None:
    clock = FakeClock(datetime(2026, 7, 20, tzinfo=UTC))
    TrackingFile(paths.data_dir).update(
        lambda t: t.tracked.update({SESSIONS["went_on"]: {}, SESSIONS["malformed"]: {}}))
    provider = await make(clock)
    found = by_session(await provider.discover())
    assert set(found) == {SESSIONS["went_on"], SESSIONS["malformed"]}
    went_on = found[SESSIONS["went_on"]]
    assert went_on.state is GoalState.RUNNING
    assert went_on.observed_at == at("2026-07-07T14:05:00")
    idle = found[SESSIONS["malformed"]]
    assert idle.state is GoalState.IDLE and idle.title == "Clean up the logs"


@pytest.mark.asyncio
async def test_a_future_reset_keeps_an_old_stop_tracked(make: Make) -> None:
    # two days after the weekly stop, its reset (end of Thursday) is still ahead
    provider = await make(FakeClock(datetime(2026, 7, 9, 12, tzinfo=UTC)))
    assert SESSIONS["weekly"] in by_session(await provider.discover())


@pytest.mark.asyncio
async def test_untracked_and_setting_off(make: Make, paths: Paths, late_clock: FakeClock) -> None:
    off = await make(late_clock, claude_track_limit_stopped=False)
    assert await off.discover() == []
    TrackingFile(paths.data_dir).update(lambda t: t.untracked.add(SESSIONS["session_limit"]))
    provider = await make(late_clock)
    found = by_session(await provider.discover())
    assert SESSIONS["session_limit"] not in found and SESSIONS["weekly"] in found
    # once tracked for its stop, a session stays a goal even with the setting turned off
    assert SESSIONS["weekly"] in by_session(await off.discover())


@pytest.mark.asyncio
async def test_several_config_dirs(make: Make, late_clock: FakeClock, claude_dir: Path,
                                   claude_dir_2: Path, environ: dict[str, str]) -> None:
    env = {**environ, "CLAUDE_CONFIG_DIR": f"{claude_dir},{claude_dir_2}"}
    provider = await make(FakeClock(datetime(2026, 11, 1, 7, tzinfo=UTC)), env)
    found = by_session(await provider.discover())
    assert found[SESSIONS["dst_first"]].resets_at == at("2026-11-01T05:45:59")
    assert found[SESSIONS["dst_second"]].resets_at == at("2026-11-01T10:00:59")
    assert found[SESSIONS["dst_first"]].data["config_dir"] == str(claude_dir_2)


@pytest.mark.asyncio
async def test_quota_readings_from_stops_and_the_cached_usage(
        make: Make, late_clock: FakeClock, tmp_path: Path, environ: dict[str, str]) -> None:
    provider = await make(late_clock)
    readings = {r.window_id: r for r in await provider.read_quotas()}
    five = readings["claude:5h"]
    assert five.limit_reached and five.used_percent == 100.0
    assert five.observed_at == at("2026-07-07T21:15:00")  # the newest 5-hour stop (legacy)
    assert five.resets_at == at("2026-07-08T00:00:59")
    assert five.exactness is Exactness.INFERRED
    # the weekly stop (10:00) is older than Claude's cached utilization (13:30): newest wins
    weekly = readings["claude:7d"]
    assert weekly.observed_at == at("2026-07-07T13:30:00")
    assert weekly.exactness is Exactness.STALE and weekly.used_percent == 41.0
    # a config dir with no stops: the cached utilization is all there is, always stale
    bare = tmp_path / "bare-claude"
    bare.mkdir()
    (bare / ".claude.json").write_text(
        (Path(__file__).parent / "fixtures/claude-config/.claude.json").read_text())
    cached = await make(late_clock, {**environ, "CLAUDE_CONFIG_DIR": str(bare)})
    by_window = {r.window_id: r for r in await cached.read_quotas(fresh=True)}
    assert by_window["claude:5h"].exactness is Exactness.STALE
    assert by_window["claude:5h"].observed_at == at("2026-07-07T13:30:00")
    assert by_window["claude:5h"].limit_reached is True
    assert "8:30:00 ago" in (by_window["claude:5h"].note or "")
    assert by_window["claude:7d"].used_percent == 41.0


@pytest.mark.asyncio
async def test_usage_blocks_for_the_chart(make: Make, late_clock: FakeClock) -> None:
    provider = await make(late_clock)
    blocks = provider.usage_blocks()
    assert sum(b.responses for b in blocks) == 7
    assert sum(b.total_tokens for b in blocks) == provider.watcher.ledger.totals()["total_tokens"]


def test_the_registry_turns_claude_on_when_a_config_dir_exists(
        paths: Paths, claude_dir: Path, environ: dict[str, str], tmp_path: Path) -> None:
    assert any(spec.name == "claude" for spec in SPECS)
    clock = FakeClock()
    def names(settings: Settings, env: dict[str, str]) -> list[str]:
        return [p.name for p in build_providers(settings, paths, clock, env)]

    assert "claude" in names(Settings(), environ)
    assert "claude" not in names(Settings(claude_enabled=False), environ)
    missing = {**environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "nothing-here")}
    assert "claude" not in names(Settings(), missing)
    text = dict(looked_for(Settings(), missing))["claude"]
    assert "nothing-here" in text and "off" in text
    assert "on" in dict(looked_for(Settings(), environ))["claude"]
    default = {"HOME": str(tmp_path / "h")}
    assert ".claude" in dict(looked_for(Settings(), default))["claude"]


def test_the_goal_id_is_the_session_id() -> None:
    assert goal_id("abc") == "claude:abc"


@pytest.mark.asyncio
async def test_appends_reach_the_sink_within_a_poll(make: Make, late_clock: FakeClock,
                                                    claude_dir: Path) -> None:
    provider = await make(late_clock)
    sink: RecordingSink = provider.sink  # type: ignore[assignment]
    await provider.discover()
    provider.poll()
    sink.observed.clear()
    write_session(claude_dir, [user("continue", "2026-07-07T21:59:00.000Z",
                                    session=SESSIONS["session_limit"])],
                  session=SESSIONS["session_limit"], append=True)
    late_clock.advance(1.0)
    await provider.clock.sleep(0)  # let the poll task run
    for _ in range(50):
        if sink.observed:
            break
        late_clock.advance(1.0)
        await _settle()
    assert [o.state for o in sink.observed] == [GoalState.RUNNING]
    assert sink.observed[0].observed_at == at("2026-07-07T21:59:00")
    assert late_clock.now() - at("2026-07-07T22:00:00") <= timedelta(seconds=5)


async def _settle() -> None:
    from core.clock import settle

    await settle()


@pytest.mark.asyncio
async def test_claudes_disabled_notification_ends_its_wait(
        make: Make, late_clock: FakeClock, claude_dir: Path) -> None:
    from core.providers.claude.sessions import HookEvent

    waiting = SESSIONS["native_waiting"]
    live_session(claude_dir, waiting)
    provider = await make(late_clock)
    assert (by_session(await provider.discover())[waiting].auto_resume_block or "").startswith(
        NATIVE_BLOCK)
    provider.events.add(HookEvent(waiting, at("2026-07-07T13:31:00"),
                                  "quota_auto_resume_disabled"))
    block = by_session(await provider.discover())[waiting].auto_resume_block or ""
    assert block.startswith(LIVE_BLOCK) and "quota_auto_resume_disabled" in block
    # a notification from before the wait says nothing about it
    provider.events.add(HookEvent(SESSIONS["native_waiting"], at("2026-07-07T13:00:00"),
                                  "quota_auto_resume_fired"))
    assert "quota_auto_resume_disabled" in (
        by_session(await provider.discover())[waiting].auto_resume_block or "")


@pytest.mark.asyncio
async def test_claudes_own_goal_is_shown_and_a_met_goal_is_done(
        make: Make, late_clock: FakeClock, claude_dir: Path, paths: Paths) -> None:
    def goal_status(at_: str, **fields: object) -> dict[str, object]:
        return {"type": "attachment", "timestamp": at_, "sessionId": "s-goal",
                "isSidechain": False, "attachment": {"type": "goal_status",
                                                     "condition": "all tests pass", **fields}}

    write_session(claude_dir, [user("/goal all tests pass", "2026-07-07T20:00:00.000Z",
                                    session="s-goal"),
                               goal_status("2026-07-07T20:00:01.000Z", met=False, sentinel=True)],
                  session="s-goal")
    TrackingFile(paths.data_dir).update(lambda t: t.tracked.update({"s-goal": {}}))
    provider = await make(late_clock)
    found = by_session(await provider.discover())["s-goal"]
    assert found.state is GoalState.IDLE
    assert found.data["claude_goal"] == {"condition": "all tests pass", "met": False,
                                         "failed": False}
    write_session(claude_dir, [goal_status("2026-07-07T21:00:00.000Z", met=True)],
                  session="s-goal", append=True)
    provider.poll()
    done = by_session(await provider.discover())["s-goal"]
    assert done.state is GoalState.DONE and done.observed_at == at("2026-07-07T21:00:00")
    assert done.data["claude_goal"]["met"] is True
    assert "all tests pass" in (done.pause_detail or "")


@pytest.mark.asyncio
async def test_a_failed_goal_of_claudes_own_is_paused_for_an_error_with_its_condition(
        make: Make, late_clock: FakeClock, claude_dir: Path, paths: Paths) -> None:
    """2.1.328: the evaluator judged the condition impossible (``failed: true``, its reason):
    Claude stopped, the goal needs the user — paused (error), never done, never auto-resumed;
    a newer /goal in the session is what counts from then on."""
    def goal_status(at_: str, **fields: object) -> dict[str, object]:
        return {"type": "attachment", "timestamp": at_, "sessionId": "s-goal",
                "isSidechain": False, "attachment": {"type": "goal_status", **fields}}

    write_session(claude_dir, [
        user("/goal the API answers in 1 ms", "2026-07-07T20:00:00.000Z", session="s-goal"),
        goal_status("2026-07-07T20:00:01.000Z", met=False, sentinel=True,
                    condition="the API answers in 1 ms"),
        goal_status("2026-07-07T20:30:00.000Z", met=False, failed=True,
                    condition="the API answers in 1 ms", iterations=3,
                    reason="the database round trip alone takes 4 ms")], session="s-goal")
    TrackingFile(paths.data_dir).update(lambda t: t.tracked.update({"s-goal": {}}))
    provider = await make(late_clock)
    failed = by_session(await provider.discover())["s-goal"]
    assert failed.state is GoalState.PAUSED and failed.pause_reason is PauseReason.ERROR
    assert failed.observed_at == at("2026-07-07T20:30:00")
    assert failed.pause_detail == (
        "Claude's goal failed: “the API answers in 1 ms” cannot be met — the database round "
        "trip alone takes 4 ms; give the session new directions")
    assert failed.data["claude_goal"] == {
        "condition": "the API answers in 1 ms", "met": False, "failed": True,
        "reason": "the database round trip alone takes 4 ms"}
    write_session(claude_dir, [goal_status("2026-07-07T21:00:00.000Z", met=False, sentinel=True,
                                           condition="the API answers in 5 ms")],
                  session="s-goal", append=True)
    provider.poll()
    again = by_session(await provider.discover())["s-goal"]
    assert again.state is GoalState.IDLE and again.pause_reason is None
    assert again.data["claude_goal"]["condition"] == "the API answers in 5 ms"


@pytest.mark.asyncio
async def test_a_claude_json_too_deep_to_read_is_a_health_problem_not_a_traceback(
        make: Make, late_clock: FakeClock, tmp_path: Path, environ: dict[str, str],
        caplog: pytest.LogCaptureFixture) -> None:
    """Issue 21: a 50,000-deep ``.claude.json`` is refused by depth before parsing (no
    RecursionError), and what could not be read is said in the provider's read problems —
    which the engine's health shows in ``status`` and the window."""
    bare = tmp_path / "deep-claude"
    bare.mkdir()
    state = bare / ".claude.json"
    state.write_text('{"a": ' + "[" * 50_000 + "]" * 50_000 + "}")
    provider = await make(late_clock, {**environ, "CLAUDE_CONFIG_DIR": str(bare)})
    assert await provider.read_quotas(fresh=True) == []
    problems = provider.read_problems()
    assert problems == (f"{state} (nested deeper than 128 levels)",)
    assert not any(r.exc_info for r in caplog.records)
    state.write_text('{"a": 1}')
    await provider.read_quotas(fresh=True)
    assert provider.read_problems() == ()
