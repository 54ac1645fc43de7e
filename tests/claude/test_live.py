"""Live Claude Code processes: a file counts while its pid runs and is the same process."""

from __future__ import annotations

import json
import os
from pathlib import Path

from core.providers.claude.live import LiveSessions, is_alive, read_process_file
from tests.support.claude import live_session


def test_a_live_tui_is_seen_and_its_exit_noticed(tmp_path: Path) -> None:
    live = LiveSessions([tmp_path])
    assert live.refresh() == set()
    path = live_session(tmp_path, "s-1")
    assert live.refresh() == {"s-1"}
    process = live.live("s-1")
    assert process is not None and process.pid == os.getpid() and process.interactive
    assert live.live("s-1", ignore={os.getpid()}) is None  # Goalkeeper's own run
    path.unlink()
    assert live.refresh() == {"s-1"} and live.live("s-1") is None


def test_print_mode_writes_the_same_kind_but_is_no_tui(tmp_path: Path) -> None:
    path = live_session(tmp_path, "s-print")
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "entrypoint": "sdk-cli"}))
    process = read_process_file(path)
    assert process is not None and process.kind == "interactive" and not process.interactive


def test_a_dead_or_reused_pid_is_not_alive(tmp_path: Path) -> None:
    path = live_session(tmp_path, "s-2")
    process = read_process_file(path)
    assert process is not None and is_alive(process.pid, process.proc_start)
    assert not is_alive(process.pid, "1")  # the pid now belongs to another process
    assert not is_alive(2 ** 22 + 12345, None)  # no such pid
    path.write_text("{not json")
    assert read_process_file(path) is None


def test_a_change_one_refresh_saw_is_still_taken_by_the_poll(tmp_path: Path) -> None:
    live = LiveSessions([tmp_path])
    live_session(tmp_path, "s-3")
    assert live.refresh() == {"s-3"}  # e.g. a resume checking right before it starts
    assert live.refresh() == set()
    assert live.take_changed() == {"s-3"}  # the poll still reports it
    assert live.take_changed() == set()


def test_every_process_of_a_session_counts_a_tui_first(tmp_path: Path) -> None:
    """Goalkeeper's own print-mode run and someone else's on one session: leaving out our pid
    still finds the other (it used to keep one process per session, maybe ours)."""
    ours = live_session(tmp_path, "s-3", pid=os.getppid())
    data = json.loads(ours.read_text())
    ours.write_text(json.dumps({**data, "entrypoint": "sdk-cli"}))
    theirs = live_session(tmp_path, "s-3")
    data = json.loads(theirs.read_text())
    theirs.write_text(json.dumps({**data, "entrypoint": "sdk-cli"}))
    live = LiveSessions([tmp_path])
    live.refresh()
    other = live.live("s-3", ignore={os.getppid()})
    assert other is not None and other.pid == os.getpid()
    assert live.live("s-3", ignore={os.getpid()}) is not None
    assert live.live("s-3", ignore={os.getpid(), os.getppid()}) is None
    theirs.write_text(json.dumps({**data, "entrypoint": "cli"}))  # now a TUI: preferred
    live.refresh()
    first = live.live("s-3")
    assert first is not None and first.interactive and first.pid == os.getpid()
