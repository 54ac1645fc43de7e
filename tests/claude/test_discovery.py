"""Which sessions are goals, what they show, and the quota readings the provider offers."""

from __future__ import annotations

import json
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
from core.providers.claude.sessions import NATIVE_BLOCK, goal_id
from core.providers.claude.state import TrackingFile
from core.providers.registry import SPECS, build_providers, looked_for
from core.settings import Settings
from tests.claude.builders import user, write_session
from tests.claude.make_fixtures import SESSIONS
from tests.claude.support import RecordingSink

Make = Callable[..., Any]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest_asyncio.fixture
async def make(paths: Paths, environ: dict[str, str]) -> AsyncIterator[Make]:
    started: list[ClaudeProvider] = []

    async def _make(clock: FakeClock, env: dict[str, str] | None = None,
                    **settings: Any) -> ClaudeProvider:
        provider = ClaudeProvider(Settings(**settings), paths, clock, env or environ)
        provider.attach(RecordingSink())  # type: ignore[arg-type]
        await provider.start()
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
    assert stopped.resets_at == at("2026-07-07T16:40:00")
    assert stopped.observed_at == at("2026-07-07T13:58:00.120")
    assert stopped.windows == ("claude:5h", "claude:7d")
    assert stopped.title == "Migrate the test suite to pytest and get CI green"
    assert stopped.data["cwd"] == "/home/dev/myrepo" and stopped.data["branch"] == "main"
    assert stopped.pause_detail == "You've hit your session limit · resets 6:40pm (Europe/Berlin)"
    assert stopped.auto_resume_block is None
    assert found[s["weekly"]].resets_at == at("2026-07-10T00:00:00")  # end of Thursday (UTC)
    assert "end of that day" in (found[s["weekly"]].pause_detail or "")
    assert found[s["extra_usage"]].resets_at == at("2026-07-07T06:00:00")
    assert found[s["legacy"]].resets_at == at("2026-07-08T00:00:00")  # TZ=UTC
    assert found[s["epoch"]].resets_at == at("2026-07-07T16:00:00")
    assert found[s["after_midnight"]].resets_at == at("2026-07-08T00:00:00")
    unreadable = found[s["unreadable"]]
    assert unreadable.resets_at is None and "cannot read" in (unreadable.pause_detail or "")


@pytest.mark.asyncio
async def test_claudes_own_auto_continue_blocks_goalkeepers(make: Make,
                                                           late_clock: FakeClock) -> None:
    provider = await make(late_clock)
    waiting = by_session(await provider.discover())[SESSIONS["native_waiting"]]
    assert waiting.auto_resume_block is not None
    assert waiting.auto_resume_block.startswith(NATIVE_BLOCK)
    assert "continuing automatically at 7pm" in waiting.auto_resume_block


@pytest.mark.asyncio
async def test_the_native_setting_or_a_new_enough_version_blocks_too(
        make: Make, late_clock: FakeClock, claude_dir: Path) -> None:
    write_session(claude_dir, [
        user("new version", "2026-07-07T20:00:00.000Z", session="s-new", version="2.1.240"),
        {**json.loads(json.dumps(user("x", "2026-07-07T20:00:00Z"))), "type": "assistant",
         "isApiErrorMessage": True, "error": "rate_limit", "sessionId": "s-new",
         "version": "2.1.240", "timestamp": "2026-07-07T20:30:00.000Z",
         "message": {"role": "assistant", "content": [
             {"type": "text", "text": "You've hit your session limit · resets 11pm (UTC)"}]}},
    ], session="s-new")
    provider = await make(late_clock)
    obs = by_session(await provider.discover())
    assert "continues automatically at usage limits" in (obs["s-new"].auto_resume_block or "")
    assert obs[SESSIONS["session_limit"]].auto_resume_block is None  # 2.1.200: no native
    settings = json.loads((claude_dir / "settings.json").read_text())
    (claude_dir / "settings.json").write_text(json.dumps({**settings,
                                                         "autoContinueAtUsageLimit": False}))
    assert by_session(await provider.discover())["s-new"].auto_resume_block is None
    (claude_dir / "settings.json").write_text(json.dumps({**settings,
                                                         "autoContinueAtUsageLimit": True}))
    block = by_session(await provider.discover())[SESSIONS["session_limit"]].auto_resume_block
    assert block is not None and "is on" in block


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
    assert found[SESSIONS["dst_first"]].resets_at == at("2026-11-01T05:45:00")
    assert found[SESSIONS["dst_second"]].resets_at == at("2026-11-01T10:00:00")
    assert found[SESSIONS["dst_first"]].data["config_dir"] == str(claude_dir_2)


@pytest.mark.asyncio
async def test_quota_readings_from_stops_and_the_cached_usage(
        make: Make, late_clock: FakeClock, tmp_path: Path, environ: dict[str, str]) -> None:
    provider = await make(late_clock)
    readings = {r.window_id: r for r in await provider.read_quotas()}
    five = readings["claude:5h"]
    assert five.limit_reached and five.used_percent == 100.0
    assert five.observed_at == at("2026-07-07T21:15:00")  # the newest 5-hour stop (legacy)
    assert five.resets_at == at("2026-07-08T00:00:00")
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
async def test_quota_auto_resume_notifications_say_whether_claude_continues(
        make: Make, late_clock: FakeClock) -> None:
    from core.providers.claude.sessions import HookEvent

    provider = await make(late_clock)
    waiting, plain = SESSIONS["native_waiting"], SESSIONS["session_limit"]
    provider.events.add(HookEvent(waiting, at("2026-07-07T13:31:00"),
                                  "quota_auto_resume_disabled"))
    provider.events.add(HookEvent(plain, at("2026-07-07T14:00:00"), "quota_auto_resume_fired"))
    found = by_session(await provider.discover())
    assert found[waiting].auto_resume_block is None  # Claude said it will not continue
    assert "reported that it continued" in (found[plain].auto_resume_block or "")
    # a notification from before the stop says nothing about this stop
    provider.events.add(HookEvent(SESSIONS["extra_usage"], at("2026-07-07T03:00:00"),
                                  "quota_auto_resume_fired"))
    assert by_session(await provider.discover())[SESSIONS["extra_usage"]].auto_resume_block is None
