"""Every reader of Codex's files is bounded per line (issue 21): a line over the limit of one
line (:mod:`core.providers.lines`, made small here) is passed — by the follower, the start-up
tail scan and the usage history — without being held whole, with one note naming the file and
its size; JSON nested too deep is refused before it is parsed; a rollout the follower cannot
read is a read problem (the host's health), not only a log line."""

from __future__ import annotations

import json
import logging
import tracemalloc
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from core.providers import lines
from core.providers.codex import history
from core.providers.codex.follow import RolloutIndex
from core.providers.codex.rollout import MalformedLine, RateLine, parse_line
from core.providers.codex.startup import _snapshot_of
from core.providers.codex.tailscan import scan_back
from tests.codex.fixtures import (
    T0,
    THREAD_A,
    CodexHome,
    five_and_week,
    line,
    meta,
    token_count,
)

H = timedelta(hours=1)
M = timedelta(minutes=1)
LIMIT = 256 << 10
HUGE = 4 << 20


@pytest.fixture
def home(tmp_path: Path) -> CodexHome:
    return CodexHome(tmp_path / "codex")


@pytest.fixture(autouse=True)
def small_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines, "READ_LIMIT", 64 << 10)
    monkeypatch.setattr(lines, "LINE_LIMIT", LIMIT)
    monkeypatch.setattr(lines, "_noted", set())


def snap(used: float, at: Any) -> str:
    return token_count(at, five_and_week(used, T0 + H, 10.0, T0 + 90 * H))


def huge_snap(used: float, at: Any) -> str:
    """A token_count line the readers look for, padded far over the limit."""
    usage = {"input_tokens": 1, "cached_input_tokens": 0, "output_tokens": 1,
             "reasoning_output_tokens": 0, "total_tokens": 2}
    return line("event_msg", {"type": "token_count",
                              "info": {"total_token_usage": usage, "last_token_usage": usage,
                                       "model_context_window": 258400},
                              "rate_limits": five_and_week(used, T0 + H, 10.0, T0 + 90 * H),
                              "pad": "x" * HUGE}, at)


def peak_of(work: Callable[[], Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        result = work()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def notes(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "over the" in r.getMessage()]


def used(found: list[Any]) -> list[float]:
    return [f.event.snapshot.slots["primary"].used_percent for f in found
            if isinstance(f.event, RateLine)]


def test_the_follower_passes_a_line_over_the_limit_unread_with_one_note(
        home: CodexHome, caplog: pytest.LogCaptureFixture) -> None:
    path = home.rollout(THREAD_A, T0, meta(THREAD_A, T0))
    index = RolloutIndex(home.sessions)
    index.list_all()
    big = huge_snap(99.0, T0 + 2 * M)
    home.append(path, snap(10.0, T0 + M), big, snap(30.0, T0 + 3 * M))
    with caplog.at_level(logging.WARNING):
        found, peak = peak_of(index.poll)
    assert used(found) == [10.0, 30.0]  # the huge line's 99 % was never read
    assert peak < 3 * LIMIT < HUGE, peak
    assert index.files[path].offset == path.stat().st_size
    [note] = notes(caplog)
    assert str(path) in note and f"{len(big)} bytes" in note


def test_a_long_line_still_being_written_is_passed_across_polls(
        home: CodexHome, caplog: pytest.LogCaptureFixture) -> None:
    path = home.rollout(THREAD_A, T0, meta(THREAD_A, T0))
    index = RolloutIndex(home.sessions)
    index.list_all()
    big = huge_snap(99.0, T0 + M)
    with path.open("a") as handle:
        handle.write(big[:HUGE // 2])
    with caplog.at_level(logging.WARNING):
        assert index.poll() == []
        assert index.files[path].skipping > LIMIT  # passed, not waited for whole
        home.append(path, big[HUGE // 2:], snap(40.0, T0 + 2 * M))
        found, peak = peak_of(index.poll)
    assert used(found) == [40.0] and peak < 3 * LIMIT
    [note] = notes(caplog)
    assert f"{len(big)} bytes" in note


def test_the_tail_scan_passes_over_a_line_over_the_limit_once(
        home: CodexHome, caplog: pytest.LogCaptureFixture) -> None:
    path = home.rollout(THREAD_A, T0, meta(THREAD_A, T0), snap(10.0, T0 + M),
                        huge_snap(99.0, T0 + 2 * M))
    with caplog.at_level(logging.WARNING):
        found, peak = peak_of(lambda: scan_back(path, b'"token_count"', _snapshot_of))
        assert scan_back(path, b'"token_count"', _snapshot_of) is not None  # scanned again
    assert found is not None and found.slots["primary"].used_percent == 10.0
    assert peak < 3 * LIMIT, peak
    [note] = notes(caplog)  # one note, however often the line is met
    assert str(path) in note


def test_the_usage_history_takes_no_quota_point_from_a_line_over_the_limit(
        home: CodexHome, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history, "QUOTA_SAMPLE", 1)
    home.rollout(THREAD_A, T0, meta(THREAD_A, T0), huge_snap(99.0, T0 + M),
                 snap(10.0, T0 + H + M))
    found, peak = peak_of(lambda: history.scan_files(history.rollouts(home.sessions)))
    assert [round(u) for _, u in found.quota["codex:5h"]] == [10]
    assert peak < 3 * LIMIT, peak


def test_deep_json_in_a_candidate_line_is_refused_not_a_recursion_error() -> None:
    deep = ('{"type":"event_msg","payload":{"type":"token_count","x":' + "[" * 50_000
            + "]" * 50_000 + "}}").encode()
    with pytest.raises(MalformedLine, match="not valid JSON"):
        parse_line(deep)
    assert json.loads(snap(1.0, T0))  # an ordinary line is still read
    assert isinstance(parse_line(snap(1.0, T0).encode()), RateLine)


def test_a_rollout_the_follower_cannot_read_is_a_read_problem_until_it_is_gone(
        home: CodexHome) -> None:
    index = RolloutIndex(home.sessions)
    index.list_all()
    day = home.sessions / "2026" / "07" / "07"
    day.mkdir(parents=True)
    broken = day / f"rollout-2026-07-07T12-00-00-{THREAD_A}.jsonl"
    broken.mkdir()  # reading it fails (EISDIR), as an unreadable file would
    assert index.poll() == []
    assert index.unreadable == {str(broken): "Is a directory"}
    broken.rmdir()
    index.poll(full=True)
    assert index.unreadable == {}
