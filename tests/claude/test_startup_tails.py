"""The first pass reads the older files' tails: a days-old stop whose reset is still ahead is a
goal at once, not only once the whole history is scanned."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from core.clock import FakeClock
from core.models import GoalState, PauseReason
from core.paths import Paths
from core.providers.base import GoalObservation
from core.providers.claude import startup
from core.providers.claude.follow import TranscriptWatcher
from core.providers.claude.provider import ClaudeProvider
from core.settings import Settings
from tests.claude.builders import assistant, limit_stop, usage_limit, user, write_session
from tests.support.claude import RecordingSink, started_provider

NOW = datetime(2026, 12, 1, 22, 0, tzinfo=UTC)  # a Tuesday
#: a Saturday: "resets Saturday" then means the end of the next one, Dec 5 (2026-12-06 00:00)
WEEKLY_AT = datetime(2026, 11, 28, 2, 54, 52, 839000, tzinfo=UTC)
#: a tail far smaller than each fixture's history, so a tail read is seen to be one
SMALL = startup.TailBudget(per_file=4 << 10, files=16, total=64 << 10)


def history(name: str, start: datetime, count: int = 30) -> list[dict[str, Any]]:
    """A session's earlier work: its first prompt, then responses (about 12 KiB in all)."""
    records = [user(f"refactor the {name} parser", start, session=name)]
    records += [assistant(f"msg_{name}_{i}", start + timedelta(minutes=i), session=name,
                          request=f"req_{name}_{i}", text="Reading the module. " * 12)
                for i in range(count)]
    return records


def transcript(config: Path, name: str, records: list[dict[str, Any]]) -> Path:
    path = write_session(config, records, session=name)
    at = datetime.fromisoformat(records[-1]["timestamp"].replace("Z", "+00:00")).timestamp()
    os.utime(path, (at, at))
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    config = tmp_path / "claude"
    hour = timedelta(hours=1)
    # the newest stops of both core windows are recent: the first pass reads no older file whole
    transcript(config, "s-5h", [*history("s-5h", NOW - 3 * hour, 3), usage_limit(
        "You've hit your session limit · resets 1am (UTC)", NOW - hour, kind="five_hour",
        resets=int((NOW + 3 * hour).timestamp()), session="s-5h")])
    transcript(config, "s-week", [*history("s-week", NOW - 4 * hour, 3), usage_limit(
        "You've hit your weekly limit · resets Dec 5, 9am (UTC)", NOW - 2 * hour,
        kind="seven_day", resets=int((NOW + 80 * hour).timestamp()), session="s-week")])
    # older than the first pass reads whole, in its last records: a weekly stop as 2.1.158 wrote
    # it (text only, no time: the end of that day), its reset still ahead ...
    transcript(config, "s-weekly-old", [
        *history("s-weekly-old", WEEKLY_AT - 2 * hour),
        limit_stop("You've hit your weekly limit · resets Saturday", WEEKLY_AT,
                   session="s-weekly-old", version="2.1.158")])
    # ... a 5-hour stop whose reset has passed ...
    passed_at = NOW - timedelta(days=3)
    transcript(config, "s-passed", [*history("s-passed", passed_at - 2 * hour), usage_limit(
        "You've hit your session limit · resets 2am (UTC)", passed_at, kind="five_hour",
        resets=int((passed_at + 2 * hour).timestamp()), session="s-passed")])
    # ... and a weekly stop the user went on after (a prompt, a response)
    went_on_at = NOW - timedelta(days=2)
    transcript(config, "s-went-on", [
        *history("s-went-on", went_on_at - 2 * hour),
        limit_stop("You've hit your weekly limit · resets Saturday", went_on_at,
                   session="s-went-on"),
        user("go on with the smaller model", went_on_at + hour, session="s-went-on"),
        assistant("msg_s-went-on_after", went_on_at + hour + timedelta(minutes=1),
                  session="s-went-on", request="req_s-went-on_after")])
    return config


async def started(tree: Path, paths: Paths) -> ClaudeProvider:
    return await started_provider(Settings(), paths, FakeClock(NOW),
                                  {"HOME": str(tree.parent / "home"),
                                   "CLAUDE_CONFIG_DIR": str(tree), "TZ": "UTC"})


def goals(observations: list[GoalObservation]) -> dict[str, GoalObservation]:
    return {o.id: o for o in observations}


@pytest.fixture
def small_tails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(startup, "TAIL_BUDGET", SMALL)


@pytest.mark.asyncio
@pytest.mark.usefixtures("small_tails")
async def test_an_old_weekly_stop_whose_reset_is_ahead_is_a_goal_after_the_first_pass(
        tree: Path, paths: Paths) -> None:
    provider = await started(tree, paths)
    try:
        state = provider.watcher.session("s-weekly-old")
        assert state is not None and provider.watcher.is_pending(state)  # not read whole
        assert provider.watcher.ledger.totals()["responses"] < 3 * 30  # tails only
        found = goals(await provider.discover())  # the history scan waits for the host's start
        assert set(found) == {"claude:s-5h", "claude:s-week", "claude:s-weekly-old"}
        weekly = found["claude:s-weekly-old"]
        assert (weekly.state, weekly.pause_reason) == (GoalState.PAUSED, PauseReason.QUOTA)
        assert weekly.resets_at == datetime(2026, 12, 6, tzinfo=UTC)
        assert weekly.observed_at == WEEKLY_AT
        assert "claude:7d" in weekly.windows
        assert weekly.title == "refactor the s-weekly-old parser"  # the file's first prompt
        assert weekly.data["cwd"] == "/home/dev/myrepo" and weekly.data["branch"] == "main"
    finally:
        await provider.stop()


@pytest.mark.asyncio
@pytest.mark.usefixtures("small_tails")
async def test_a_tail_whose_stop_has_passed_or_was_gone_on_from_makes_nothing_paused(
        tree: Path, paths: Paths) -> None:
    provider = await started(tree, paths)
    try:
        found = goals(await provider.discover())
        assert "claude:s-passed" not in found and "claude:s-went-on" not in found
        went_on = provider.watcher.session("s-went-on")
        assert went_on is not None and not provider.watcher.reportable(went_on)
        assert went_on.facts.stops.stop is None  # what its tail showed was let go
        provider.host_started()  # the history scan waits for the host's start
        await provider.history_scanned()
        sink = provider.sink
        assert isinstance(sink, RecordingSink)
        assert not {o.id for o in sink.observed} & {"claude:s-passed", "claude:s-went-on"}
    finally:
        await provider.stop()


@pytest.mark.asyncio
@pytest.mark.usefixtures("small_tails")
async def test_the_full_scan_afterwards_shows_the_same_goal(tree: Path, paths: Paths) -> None:
    provider = await started(tree, paths)
    try:
        first = goals(await provider.discover())["claude:s-weekly-old"]
        provider.host_started()  # the history scan waits for the host's start
        await provider.history_scanned()
        state = provider.watcher.session("s-weekly-old")
        assert state is not None and not provider.watcher.is_pending(state)
        assert state.offset == state.size  # the whole file read this time
        assert provider.observation(state) == first
        sink = provider.sink
        assert isinstance(sink, RecordingSink)
        assert [o for o in sink.observed if o.id == "claude:s-weekly-old"] == []  # no flicker
        assert provider.watcher.ledger.totals()["responses"] == 3 * 30 + 2 * 3 + 1
    finally:
        await provider.stop()


def test_the_tail_budget_bounds_the_files_and_the_bytes(tmp_path: Path) -> None:
    for day in range(1, 6):  # five stopped sessions, each longer than the tail read of it
        name = f"s-day{day}"
        at = NOW - timedelta(days=day)
        transcript(tmp_path, name, [*history(name, at - timedelta(hours=2)), limit_stop(
            "You've hit your weekly limit · resets Saturday", at, session=name)])
    old_at = NOW - timedelta(days=9)  # too old to end in a stop whose reset is still ahead
    transcript(tmp_path, "s-old", [*history("s-old", old_at - timedelta(hours=2)), limit_stop(
        "You've hit your weekly limit · resets Saturday", old_at, session="s-old")])

    def tails(budget: startup.TailBudget) -> startup.TailPass:
        watcher = TranscriptWatcher([tmp_path])
        rest = sorted(watcher.discover(NOW.timestamp()), key=lambda s: s.mtime, reverse=True)
        watcher.set_pending(rest)
        return startup.read_tails(watcher, rest, NOW.timestamp(), budget)

    every = tails(startup.TailBudget(per_file=4 << 10, files=99, total=1 << 20))
    assert (every.read, every.left, every.bytes_read) == (5, 0, 5 * (4 << 10))  # not s-old
    assert [s.session_id for s in every.stopped] == [f"s-day{d}" for d in range(1, 6)]
    by_count = tails(startup.TailBudget(per_file=4 << 10, files=2, total=1 << 20))
    assert (by_count.read, by_count.left) == (2, 3)
    by_bytes = tails(startup.TailBudget(per_file=4 << 10, files=99, total=9 << 10))
    assert (by_bytes.read, by_bytes.left, by_bytes.bytes_read) == (2, 3, 8 << 10)
    assert startup.RESET_HORIZON == 8 * 86400  # the 7-day windows, and a day-only reset's day
    with pytest.raises(ValueError):
        startup.TailBudget(files=0)
