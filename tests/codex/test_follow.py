"""Following rollouts: offsets, partial lines, malformed lines, new days, hot files."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import pytest

from core.providers.codex import tailscan
from core.providers.codex.follow import RolloutIndex
from core.providers.codex.rollout import GoalUpdate, RateLine, RolloutSessionMeta
from core.providers.codex.startup import last_goal, latest_snapshot
from tests.codex.fixtures import (
    T0,
    THREAD_A,
    THREAD_B,
    CodexHome,
    chatter,
    five_and_week,
    goal,
    meta,
    token_count,
)

H = timedelta(hours=1)
M = timedelta(minutes=1)


@pytest.fixture
def home(tmp_path: Path) -> CodexHome:
    return CodexHome(tmp_path / "codex")


def snap_line(used: float, at):
    return token_count(at, five_and_week(used, T0 + H, 10.0, T0 + 90 * H))


def test_existing_history_is_not_replayed_only_appends_are_read(home: CodexHome):
    path = home.rollout(THREAD_A, T0, meta(THREAD_A, T0), snap_line(10.0, T0 + M))
    index = RolloutIndex(home.sessions)
    index.list_all()
    assert index.poll() == []
    home.append(path, chatter(T0 + 2 * M), snap_line(20.0, T0 + 3 * M))
    found = index.poll()
    assert len(found) == 1 and isinstance(found[0].event, RateLine)
    assert found[0].thread_id == THREAD_A
    assert found[0].event.snapshot.slots["primary"].used_percent == 20.0
    assert index.poll() == []


def test_a_partial_last_line_is_retried_not_dropped_nor_garbage(home: CodexHome, caplog):
    path = home.rollout(THREAD_A, T0, meta(THREAD_A, T0))
    index = RolloutIndex(home.sessions)
    index.list_all()
    full = snap_line(55.0, T0 + M)
    with path.open("a") as handle:
        handle.write(full[:40])
    with caplog.at_level(logging.WARNING):
        assert index.poll() == []
        with path.open("a") as handle:
            handle.write(full[40:])
        found = index.poll()
    assert [f.event.snapshot.slots["primary"].used_percent for f in found] == [55.0]
    assert "skipping" not in caplog.text


def test_a_file_caught_mid_line_at_start_up_is_read_from_that_line(home: CodexHome):
    full = goal(THREAD_A, "usageLimited", T0 + M)
    path = home.rollout(THREAD_A, T0, meta(THREAD_A, T0), full[:30])
    index = RolloutIndex(home.sessions)
    index.list_all()  # the offset is the size, inside a line
    home.append(path, full[30:])
    found = index.poll()
    assert len(found) == 1 and isinstance(found[0].event, GoalUpdate)
    assert found[0].event.status == "usageLimited"


def test_malformed_lines_are_logged_once_per_file_and_reason(home: CodexHome, caplog):
    path_a = home.rollout(THREAD_A, T0, meta(THREAD_A, T0))
    path_b = home.rollout(THREAD_B, T0 + M, meta(THREAD_B, T0 + M))
    index = RolloutIndex(home.sessions)
    index.list_all()
    garbage = '{"timestamp": "x", "type": "event_msg", "payload": {"type": "token_count"\n'
    with caplog.at_level(logging.WARNING, logger="core.providers.codex.follow"):
        home.append(path_a, garbage, garbage, snap_line(1.0, T0 + 2 * M))
        home.append(path_b, garbage, goal(THREAD_B, "sleeping", T0 + 2 * M))
        found = index.poll()
        home.append(path_a, garbage)
        index.poll()
    assert len(found) == 1  # the good line survives its bad neighbours
    warnings = [r.getMessage() for r in caplog.records]
    assert sum(1 for w in warnings if str(path_a) in w) == 1
    assert sum(1 for w in warnings if str(path_b) in w) == 2  # two different reasons
    assert any("unknown goal status 'sleeping'" in w for w in warnings)


def test_lines_that_are_not_candidates_are_never_decoded(home: CodexHome, caplog):
    path = home.rollout(THREAD_A, T0, meta(THREAD_A, T0))
    index = RolloutIndex(home.sessions)
    index.list_all()
    with caplog.at_level(logging.WARNING):
        home.append(path, "this is not json at all\n", chatter(T0 + M))
        assert index.poll() == []
    assert caplog.text == ""


def test_a_new_day_directory_is_picked_up(home: CodexHome):
    home.rollout(THREAD_A, T0, meta(THREAD_A, T0))
    index = RolloutIndex(home.sessions)
    index.list_all()
    tomorrow = T0 + 24 * H
    home.rollout(THREAD_B, tomorrow, meta(THREAD_B, tomorrow), snap_line(3.0, tomorrow + M))
    found = index.poll()
    kinds = [type(f.event) for f in found]
    assert kinds == [RolloutSessionMeta, RateLine]
    assert found[0].thread_id == THREAD_B
    home.rollout(THREAD_A, tomorrow + H, meta(THREAD_A, tomorrow + H))  # same day, new file
    assert [type(f.event) for f in index.poll()] == [RolloutSessionMeta]


def test_old_files_outside_the_hot_set_are_caught_by_the_full_sweep(home: CodexHome):
    old = home.rollout(THREAD_A, T0 - 240 * H, meta(THREAD_A, T0 - 240 * H))
    for i in range(20):
        thread = f"019f1a2b-3c4d-7e5f-8a9b-{i:012x}"
        home.rollout(thread, T0 + i * M, meta(thread, T0 + i * M))
    index = RolloutIndex(home.sessions, full_every=1000)
    index.list_all()
    home.append(old, snap_line(9.0, T0 + H), mtime=T0 - 239 * H)
    assert index.poll() == []  # not hot: neither new, nor a goal's, nor watched
    assert len(index.poll(goal_threads=[THREAD_A])) == 1  # a goal's file is always hot
    home.append(old, snap_line(8.0, T0 + 2 * H), mtime=T0 - 239 * H)
    assert len(index.poll(full=True)) == 1
    index.watch(old)
    home.append(old, snap_line(7.0, T0 + 3 * H), mtime=T0 - 239 * H)
    assert len(index.poll()) == 1


def test_a_truncated_file_is_read_again(home: CodexHome, caplog):
    path = home.rollout(THREAD_A, T0, meta(THREAD_A, T0), snap_line(1.0, T0 + M))
    index = RolloutIndex(home.sessions)
    index.list_all()
    path.write_text(meta(THREAD_A, T0) + snap_line(2.0, T0 + 2 * M))
    path.write_text(snap_line(4.0, T0 + 4 * M))  # shorter than the offset
    with caplog.at_level(logging.INFO):
        found = index.poll()
    assert [f.event.snapshot.slots["primary"].used_percent for f in found] == [4.0]
    assert "truncated" in caplog.text


def test_deleted_files_are_forgotten(home: CodexHome):
    path = home.rollout(THREAD_A, T0, meta(THREAD_A, T0))
    index = RolloutIndex(home.sessions)
    index.list_all()
    path.unlink()
    assert index.poll(full=True) == []
    assert path not in index.files


def test_missing_sessions_directory_is_fine_and_found_later(tmp_path: Path):
    index = RolloutIndex(tmp_path / "codex" / "sessions")
    assert index.list_all() == []
    home = CodexHome(tmp_path / "codex")
    home.rollout(THREAD_A, T0, meta(THREAD_A, T0))
    assert [type(f.event) for f in index.poll()] == [RolloutSessionMeta]


# -- reading from the end ----------------------------------------------------------------------


def test_latest_snapshot_comes_from_the_newest_file(home: CodexHome):
    home.rollout(THREAD_A, T0 - 5 * H, meta(THREAD_A, T0 - 5 * H), snap_line(90.0, T0 - 4 * H))
    home.rollout(THREAD_B, T0 - 2 * H, meta(THREAD_B, T0 - 2 * H), snap_line(30.0, T0 - H),
                 snap_line(31.0, T0 - 30 * M), chatter(T0 - 20 * M))
    index = RolloutIndex(home.sessions)
    snap = latest_snapshot(index.list_all())
    assert snap is not None and snap.slots["primary"].used_percent == 31.0
    assert snap.observed_at == T0 - 30 * M


@pytest.fixture(params=["memmem", "mmap.find"])
def search(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of searching a mapping: the C library's memmem (GIL released) and, where
    there is none, ``mmap.find``."""
    if request.param == "memmem":
        if tailscan._memmem() is None:
            pytest.skip("no memmem in this C library")
    else:
        monkeypatch.setattr(tailscan, "_memmem", lambda: None)
    return str(request.param)


def test_backwards_scan_survives_chunk_cuts_long_lines_and_a_partial_tail(
        home: CodexHome, monkeypatch: pytest.MonkeyPatch, search: str):
    monkeypatch.setattr(tailscan, "CHUNK", 40)
    monkeypatch.setattr(tailscan, "_STEP", 16)
    lines = [meta(THREAD_A, T0)]
    for i in range(30):
        lines.append(chatter(T0 + i * M, "x" * (i * 7)))
        if i in (3, 17):
            lines.append(goal(THREAD_A, "active" if i == 3 else "paused", T0 + i * M))
    path = home.rollout(THREAD_A, T0, *lines)
    with path.open("a") as handle:
        handle.write(goal(THREAD_A, "complete", T0 + H)[:50])  # being written: not looked at
    found = last_goal(path)
    assert found is not None and found.status == "paused"
    assert tailscan.first_line(path) == meta(THREAD_A, T0).rstrip("\n").encode()
    at = tailscan.scan_back_at(path, b'"thread_goal_updated"', lambda line: line)
    assert at is not None and path.read_bytes()[at[1] - 1:at[1]] == b"\n"
    assert path.read_bytes()[:at[1]].endswith(at[0] + b"\n") and b'"paused"' in at[0]


def test_a_needle_cut_by_a_window_edge_or_at_the_very_start_is_found(
        home: CodexHome, monkeypatch: pytest.MonkeyPatch, search: str):
    monkeypatch.setattr(tailscan, "CHUNK", 64)
    path = home.rollout(THREAD_A, T0, goal(THREAD_A, "active", T0),
                        *[chatter(T0 + i * M, "y" * (5 + 13 * i)) for i in range(12)])
    for cut in range(60, 140, 7):  # every alignment of the needle against the windows
        monkeypatch.setattr(tailscan, "CHUNK", cut)
        found = last_goal(path)
        assert found is not None and found.status == "active", cut
    assert tailscan.scan_back(path, b"no such needle", lambda line: line) is None
