"""Gauges and goals at once: the newest transcripts first, the rest of the history behind them."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.clock import FakeClock
from core.paths import Paths
from core.providers.claude import startup
from core.providers.claude.provider import ClaudeProvider
from core.providers.claude.state import TrackingFile
from core.settings import Settings
from tests.claude.builders import assistant, usage_limit, user, write_session
from tests.support.claude import RecordingSink, started_provider

NOW = datetime(2026, 12, 1, 22, 0, tzinfo=UTC)


def session(config: Path, name: str, age: timedelta, text: str, kind: str,
            resets: datetime) -> Path:
    at = NOW - age
    path = write_session(config, [
        user(f"work on {name}", at - timedelta(minutes=5), session=name),
        assistant(f"msg_{name}", at - timedelta(minutes=1), request=f"req_{name}", session=name),
        usage_limit(text, at, kind=kind, resets=int(resets.timestamp()), session=name),
    ], session=name)
    os.utime(path, (at.timestamp(), at.timestamp()))
    return path


@pytest.fixture
def history(tmp_path: Path) -> Path:
    config = tmp_path / "claude"
    session(config, "s-new", timedelta(hours=1), "You've hit your 5-hour limit · resets 1am (UTC)",
            "five_hour", NOW + timedelta(hours=3))
    session(config, "s-weekly", timedelta(days=3), "You've hit your weekly limit · resets Dec 5, "
            "9am (UTC)", "seven_day", NOW + timedelta(days=4))
    session(config, "s-old", timedelta(days=10), "You've hit your 5-hour limit · resets 3am (UTC)",
            "five_hour", NOW - timedelta(days=10) + timedelta(hours=2))
    return config


async def started(history: Path, paths: Paths) -> ClaudeProvider:
    return await started_provider(Settings(), paths, FakeClock(NOW),
                                  {"HOME": str(history.parent / "home"),
                                   "CLAUDE_CONFIG_DIR": str(history), "TZ": "UTC"})


@pytest.mark.asyncio
async def test_the_newest_files_give_goals_and_gauges_before_the_history_is_read(
        history: Path, paths: Paths) -> None:
    provider = await started(history, paths)
    try:
        old = next(s for s in provider.watcher.files.values() if s.session_id == "s-old")
        # the history scan waits for the host's start: this is the first pass alone
        assert provider.watcher.is_pending(old)  # no older file can hold a newer stop
        assert provider.watcher.ledger.totals()["responses"] == 2
        before = {r.window_id: (r.resets_at, r.observed_at) for r in await provider.read_quotas()}
        assert before["claude:5h"] == (NOW + timedelta(hours=3), NOW - timedelta(hours=1))
        assert before["claude:7d"][0] == NOW + timedelta(days=4)
        goals = {o.id for o in await provider.discover()}
        assert goals == {"claude:s-new", "claude:s-weekly"}  # the weekly reset is still ahead
        assert not provider._host_up.is_set()  # this discovery alone does not start the scan
        provider.host_started()  # the history scan waits for the host's start
        await provider.history_scanned()
        assert not provider.watcher.is_pending(old)
        assert provider.watcher.ledger.totals()["responses"] == 3  # the whole history counted
        after = {r.window_id: (r.resets_at, r.observed_at) for r in await provider.read_quotas()}
        assert after == before  # what the first pass showed was already right
    finally:
        await provider.stop()


@pytest.mark.asyncio
async def test_a_goal_the_first_pass_could_not_read_is_reported_only_once_it_is_read(
        history: Path, paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(startup, "QUICK_BYTES", 1)  # the budget is spent by the first file
    TrackingFile(paths.data_dir).update(lambda t: t.tracked.update({"s-old": {}}))
    provider = await started(history, paths)
    try:
        sink = provider.sink
        assert isinstance(sink, RecordingSink)
        first = {o.id for o in await provider.discover()}
        assert "claude:s-weekly" in first  # not read whole, but its tail shows its stop
        assert first <= {"claude:s-new", "claude:s-weekly", "claude:s-old"}
        provider.host_started()  # the history scan waits for the host's start
        await provider.history_scanned()
        seen = {o.id: o for o in [*await provider.discover(), *sink.observed]}
        assert {"claude:s-new", "claude:s-weekly", "claude:s-old"} <= set(seen)
        assert seen["claude:s-old"].state.value == "paused"  # never reported as idle meanwhile
        assert all(o.state.value == "paused" for o in sink.observed)
    finally:
        await provider.stop()
