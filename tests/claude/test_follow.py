"""Following transcripts: appends, partial lines, malformed lines, new files, cold files."""

from __future__ import annotations

import logging
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.providers.claude.follow import COLD_SLICES, HOT_SECONDS, TranscriptWatcher
from tests.claude.builders import assistant, dumps, limit_stop, user, write_session
from tests.claude.make_fixtures import SESSIONS

T0 = datetime(2026, 7, 7, 9, 0, tzinfo=UTC)


def now() -> float:
    return time.time()


def test_the_first_scan_reads_every_transcript(claude_dir: Path) -> None:
    watcher = TranscriptWatcher([claude_dir])
    watcher.full_scan(now())
    assert len(watcher.files) == len(SESSIONS) - 2 + 1  # 2 in the other dir, + a sub-agent
    assert {s.session_id for s in watcher.sessions()} == set(SESSIONS.values()) - {
        SESSIONS["dst_first"], SESSIONS["dst_second"]}
    totals = watcher.ledger.totals()
    # session_limit and weekly: two responses each (one split over two lines), malformed: one,
    # went_on: one, the sub-agent: one
    assert totals["responses"] == 7
    assert len(watcher.ledger.stops) == 9
    sub = [f for f in watcher.files.values() if f.sidechain]
    assert sub and sub[0].session_id == SESSIONS["session_limit"]


def test_an_append_is_picked_up_by_the_next_poll(claude_dir: Path) -> None:
    path = write_session(claude_dir, [user("start", T0)], session="s-append")
    watcher = TranscriptWatcher([claude_dir])
    watcher.full_scan(now())
    assert watcher.poll(now()) == set()
    write_session(claude_dir, [limit_stop("You've hit your session limit · resets 2pm (UTC)",
                                          T0 + timedelta(hours=1), session="s-append")],
                  session="s-append", append=True)
    assert watcher.poll(now()) == {"s-append"}
    state = watcher.session("s-append")
    assert state is not None and state.facts.stops.stop is not None
    assert state.offset == path.stat().st_size


def test_a_partial_last_line_is_retried_until_complete(claude_dir: Path) -> None:
    path = write_session(claude_dir, [user("start", T0)], session="s-partial")
    watcher = TranscriptWatcher([claude_dir])
    watcher.full_scan(now())
    line = dumps(assistant("msg_p", T0 + timedelta(minutes=1), session="s-partial"))
    with open(path, "a") as handle:
        handle.write(line[:50])
    watcher.poll(now())
    assert not watcher.ledger.seen(b"msg_p:req_01")
    with open(path, "a") as handle:
        handle.write(line[50:])
    assert watcher.poll(now()) == {"s-partial"}
    assert watcher.ledger.seen(b"msg_p:req_01")


def test_malformed_lines_are_skipped_with_one_message_per_file_and_reason(
        claude_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = write_session(claude_dir, [user("start", T0)], session="s-bad")
    watcher = TranscriptWatcher([claude_dir])
    watcher.full_scan(now())
    caplog.set_level(logging.WARNING, logger="core.providers.claude.follow")
    for _ in range(3):
        with open(path, "a") as handle:
            handle.write("{oops\n[]\n")
        watcher.poll(now())
    messages = [r.getMessage() for r in caplog.records if "s-bad" in r.getMessage()]
    assert len(messages) == 2
    assert any("invalid JSON" in m for m in messages)
    assert any("not a JSON object" in m for m in messages)
    state = watcher.session("s-bad")
    assert state is not None and state.facts.malformed.counts["invalid JSON"] == 3


def test_a_new_session_in_a_new_project_is_found(claude_dir: Path) -> None:
    watcher = TranscriptWatcher([claude_dir])
    watcher.full_scan(now())
    write_session(claude_dir, [user("new project", T0)], cwd="/srv/other", session="s-new")
    assert watcher.poll(now()) == {"s-new"}
    state = watcher.session("s-new")
    assert state is not None and state.facts.first_prompt == "new project"


def test_a_config_dir_without_projects_starts_being_followed_when_it_appears(
        tmp_path: Path) -> None:
    root = tmp_path / "empty-claude"
    root.mkdir()
    watcher = TranscriptWatcher([root])
    watcher.full_scan(now())
    assert watcher.poll(now()) == set()
    write_session(root, [user("first ever", T0)], session="s-first")
    assert watcher.poll(now()) == {"s-first"}


def test_a_truncated_file_is_read_again(claude_dir: Path) -> None:
    path = write_session(claude_dir, [user("a", T0), assistant("msg_t1", T0)], session="s-trunc")
    watcher = TranscriptWatcher([claude_dir])
    watcher.full_scan(now())
    write_session(claude_dir, [user("b", T0)], session="s-trunc")  # rewritten, shorter
    assert path.stat().st_size < watcher.files[str(path)].offset
    assert watcher.poll(now()) == {"s-trunc"}
    assert watcher.files[str(path)].offset == path.stat().st_size


def test_cold_files_are_checked_in_turn_hot_ones_every_time(claude_dir: Path) -> None:
    hot = write_session(claude_dir, [user("hot", T0)], session="s-hot")
    cold = write_session(claude_dir, [user("cold", T0)], session="s-cold")
    old = now() - 3 * HOT_SECONDS
    for path in claude_dir.rglob("*.jsonl"):
        if path != hot:
            os.utime(path, (old, old))
    watcher = TranscriptWatcher([claude_dir])
    watcher.full_scan(now())
    write_session(claude_dir, [user("again", T0)], session="s-cold", append=True)
    os.utime(cold, (old, old))
    seen_after = None
    for poll in range(1, COLD_SLICES + 1):
        if "s-cold" in watcher.poll(now()):
            seen_after = poll
            break
    assert seen_after is not None  # within COLD_SLICES polls
    write_session(claude_dir, [user("again", T0)], session="s-hot", append=True)
    assert "s-hot" in watcher.poll(now())


def test_a_pinned_session_is_always_hot(claude_dir: Path) -> None:
    path = write_session(claude_dir, [user("pinned", T0)], session="s-pin")
    old = now() - 3 * HOT_SECONDS
    os.utime(path, (old, old))
    watcher = TranscriptWatcher([claude_dir])
    watcher.full_scan(now())
    watcher.pinned.add("s-pin")
    write_session(claude_dir, [user("more", T0)], session="s-pin", append=True)
    os.utime(path, (old, old))
    assert watcher.poll(now()) == {"s-pin"}


def test_the_first_scan_reads_big_files_to_the_end_in_chunks(
        claude_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from core.providers import lines

    records = [assistant(f"msg_big{i}", T0 + timedelta(seconds=i), request=f"r{i}",
                         session="s-big") for i in range(50)]
    path = write_session(claude_dir, records, session="s-big")
    monkeypatch.setattr(lines, "READ_LIMIT", 1000)  # each line is longer than that
    watcher = TranscriptWatcher([claude_dir])
    watcher.full_scan(now())
    assert all(watcher.ledger.seen(f"msg_big{i}:r{i}".encode()) for i in range(50))
    assert watcher.files[str(path)].offset == path.stat().st_size


def test_a_parallel_first_scan_finds_exactly_what_one_process_finds(
        claude_dir: Path, claude_dir_2: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from core.providers.claude import follow

    write_session(claude_dir, [assistant("msg_1111a", T0, request="req_1111a",
                                         session="s-copy")], session="s-copy")  # a duplicate
    alone = TranscriptWatcher([claude_dir, claude_dir_2])
    alone.full_scan(now())
    monkeypatch.setattr(follow, "PARALLEL_BYTES", 0)
    shared = TranscriptWatcher([claude_dir, claude_dir_2])
    shared.full_scan(now(), workers=2)
    assert shared.ledger.totals() == alone.ledger.totals()
    assert set(shared.ledger.stops) == set(alone.ledger.stops)
    assert [b.total_tokens for b in shared.ledger.blocks()] == [
        b.total_tokens for b in alone.ledger.blocks()]
    assert {p: s.offset for p, s in shared.files.items()} == {
        p: s.offset for p, s in alone.files.items()}
    stops = {s.session_id: s.facts.stops.stop for s in shared.sessions()}
    assert stops == {s.session_id: s.facts.stops.stop for s in alone.sessions()}


def test_a_cold_file_that_changed_is_checked_every_poll_afterwards(claude_dir: Path) -> None:
    path = write_session(claude_dir, [user("old", T0)], session="s-wakes")
    old = now() - 3 * HOT_SECONDS
    for p in claude_dir.rglob("*.jsonl"):
        os.utime(p, (old, old))
    watcher = TranscriptWatcher([claude_dir])
    watcher.full_scan(now())
    write_session(claude_dir, [user("again", T0)], session="s-wakes", append=True)
    os.utime(path, (old, old))
    assert any("s-wakes" in watcher.poll(now()) for _ in range(COLD_SLICES))
    for _ in range(3):
        write_session(claude_dir, [user("and again", T0)], session="s-wakes", append=True)
        os.utime(path, (old, old))
        assert watcher.poll(now()) == {"s-wakes"}


def _small_limits(monkeypatch: pytest.MonkeyPatch) -> int:
    from core.providers import lines

    monkeypatch.setattr(lines, "READ_LIMIT", 64 << 10)
    monkeypatch.setattr(lines, "LINE_LIMIT", 256 << 10)
    return 256 << 10


def test_a_line_over_the_limit_is_passed_unread_with_one_note(
        claude_dir: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Issue 21: a 256 MiB line took the host to 700 MB; memory now stays a few chunks
    whatever the line (here 4 MiB against a 256 KiB limit: the bound scales with the limit)."""
    import tracemalloc

    limit = _small_limits(monkeypatch)
    path = write_session(claude_dir, [user("start", T0)], session="s-huge")
    huge = 4 << 20
    with open(path, "a") as handle:
        handle.write('{"type":"user","pad":"' + "x" * huge + '"}\n')
    write_session(claude_dir, [assistant("msg_after", T0 + timedelta(minutes=1),
                                         session="s-huge")], session="s-huge", append=True)
    watcher = TranscriptWatcher([claude_dir])
    tracemalloc.start()
    try:
        with caplog.at_level(logging.WARNING):
            watcher.full_scan(now())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * limit < huge, peak
    assert watcher.ledger.seen(b"msg_after:req_01")
    assert watcher.files[str(path)].offset == path.stat().st_size
    notes = [r.getMessage() for r in caplog.records if "over the" in r.getMessage()]
    assert len(notes) == 1 and str(path) in notes[0] and str(huge + 25) in notes[0], notes


def test_a_long_line_still_being_written_is_passed_across_polls(
        claude_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limit = _small_limits(monkeypatch)
    path = write_session(claude_dir, [user("start", T0)], session="s-grow")
    watcher = TranscriptWatcher([claude_dir])
    watcher.full_scan(now())
    with open(path, "a") as handle:
        handle.write('{"type":"user","pad":"' + "x" * (2 * limit))
    watcher.poll(now())
    state = watcher.session("s-grow")
    assert state is not None and state.skipping > limit
    with open(path, "a") as handle:
        handle.write('"}\n')
    write_session(claude_dir, [assistant("msg_grow", T0 + timedelta(minutes=1),
                                         session="s-grow")], session="s-grow", append=True)
    for _ in range(3):
        watcher.poll(now())
    assert state.skipping == 0 and watcher.ledger.seen(b"msg_grow:req_01")


def test_a_transcript_line_too_deep_to_parse_is_skipped_as_malformed(claude_dir: Path) -> None:
    path = write_session(claude_dir, [user("start", T0)], session="s-deep")
    watcher = TranscriptWatcher([claude_dir])
    watcher.full_scan(now())
    with open(path, "a") as handle:
        handle.write('{"type":"user","x":' + "[" * 50_000 + "]" * 50_000 + "}\n")
    watcher.poll(now())
    state = watcher.session("s-deep")
    assert state is not None and state.offset == path.stat().st_size
    assert state.facts.malformed.counts == {"invalid JSON": 1}
