"""Following ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`` incrementally.

:class:`RolloutIndex` owns one offset per rollout file: the end of the last complete line it has
handed out. A poll reads only the bytes appended since; a last line still being written (no
newline yet) is left for the next poll — never dropped, never parsed as garbage. A candidate line
that cannot be used is skipped with one warning per file and reason.

Polls are cheap by design (the issue asks for changes within 5 s without rescanning): each one
lists only the newest day directories (so files of a new day are found) and ``stat``s the *hot*
files — the newest few, every goal's file, and any file a runner asked to watch. A full sweep
(all files stat'ed, all directories listed) runs every ``full_every`` polls for the rare old
session that is resumed and appended to.

The index is used from worker threads; its lock serialises polls.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from core.providers import lines
from core.providers.codex.rollout import (
    Event,
    MalformedLine,
    is_candidate,
    parse_line,
    thread_id_from_name,
)
from core.providers.codex.tailscan import complete_end

log = logging.getLogger(__name__)

HOT_NEWEST = 16


@dataclass
class RolloutFileState:
    """What the index knows of one rollout. ``offset`` is always at a line boundary once
    ``verified``; before that it is the size seen at start-up, checked on first growth."""

    path: Path
    thread_id: str | None
    size: int
    mtime_ns: int
    ino: int
    offset: int
    verified: bool = False
    #: bytes of a line over the limit of one line (:mod:`core.providers.lines`) passed so far
    #: (its end not yet written): the rest of it is passed too, never read whole
    skipping: int = 0


@dataclass(frozen=True)
class Found:
    """An event read from ``path`` (the rollout of ``thread_id``)."""

    thread_id: str | None
    path: Path
    event: Event


@dataclass
class _Listing:
    files: dict[Path, os.stat_result] = field(default_factory=dict)
    newest_day: tuple[str, ...] = ()


class RolloutIndex:
    """Offsets of every rollout under one ``sessions`` directory; turns appends into events."""

    def __init__(self, sessions: Path, full_every: int = 12) -> None:
        self.sessions = sessions
        self.full_every = full_every
        self.files: dict[Path, RolloutFileState] = {}
        self.by_thread: dict[str, Path] = {}
        self._watched: set[Path] = set()
        self._newest_day: tuple[str, ...] = ()
        self._polls = 0
        self._warned: set[tuple[Path, str]] = set()
        self._lock = threading.Lock()
        #: rollouts that could not be read since the start: path → the system's reason (for
        #: the host's health, beside the start-up read's; a file read again leaves it)
        self.unreadable: dict[str, str] = {}

    # -- listing -------------------------------------------------------------------------------

    def list_all(self) -> list[RolloutFileState]:
        """Find every rollout (start-up); offsets start at the current ends of the files."""
        with self._lock:
            listing = _Listing()
            self._walk(self.sessions, (), None, listing)
            self._newest_day = listing.newest_day
            for path, st in listing.files.items():
                self._add(path, st, from_start=False)
            return list(self.files.values())

    def _add(self, path: Path, st: os.stat_result, from_start: bool) -> RolloutFileState:
        state = RolloutFileState(path, thread_id_from_name(path.name), st.st_size, st.st_mtime_ns,
                                 st.st_ino, 0 if from_start else st.st_size, verified=from_start)
        self.files[path] = state
        if state.thread_id:
            self.by_thread[state.thread_id] = path
        return state

    def _walk(self, directory: Path, day: tuple[str, ...], since: tuple[str, ...] | None,
              listing: _Listing) -> None:
        """Collect rollouts under ``directory``; with ``since``, skip older day directories."""
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) and len(day) < 3 and entry.name.isdigit():
                sub = (*day, entry.name)
                if since is None or sub >= since[: len(sub)]:
                    self._walk(Path(entry.path), sub, since, listing)
            elif entry.name.startswith("rollout-") and entry.name.endswith(".jsonl"):
                try:
                    listing.files[Path(entry.path)] = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                listing.newest_day = max(listing.newest_day, day)

    def watch(self, path: Path) -> None:
        """Keep ``path`` in the hot set (a runner is working on it)."""
        with self._lock:
            self._watched.add(path)

    def path_of(self, thread_id: str) -> Path | None:
        return self.by_thread.get(thread_id)

    # -- polling -------------------------------------------------------------------------------

    def poll(self, goal_threads: Iterable[str] = (), full: bool | None = None) -> list[Found]:
        """Read what was appended since the last poll (and pick up new files)."""
        with self._lock:
            self._polls += 1
            full = self._polls % self.full_every == 0 if full is None else full
            listing = _Listing()
            since = None if full else self._newest_day[:3] or None
            self._walk(self.sessions, (), since, listing)
            self._newest_day = max(self._newest_day, listing.newest_day)
            new = [self._add(p, st, from_start=True) for p, st in listing.files.items()
                   if p not in self.files]
            targets = list(self.files.values()) if full else self._hot(set(goal_threads))
            found: list[Found] = []
            for state in {s.path: s for s in (*new, *targets)}.values():
                found.extend(self._check(state))
            return found

    def poll_file(self, path: Path) -> list[Found]:
        """Read what was appended to one file now (a runner's process just exited)."""
        with self._lock:
            state = self.files.get(path)
            if state is None:
                try:
                    state = self._add(path, path.stat(), from_start=True)
                except OSError:
                    return []
            return self._check(state)

    def _hot(self, goal_threads: set[str]) -> list[RolloutFileState]:
        newest = sorted(self.files.values(), key=lambda s: s.mtime_ns, reverse=True)[:HOT_NEWEST]
        chosen = {s.path: s for s in newest}
        for state in self.files.values():
            if state.path in self._watched or state.thread_id in goal_threads:
                chosen[state.path] = state
        return list(chosen.values())

    def _check(self, state: RolloutFileState) -> list[Found]:
        try:
            st = os.stat(state.path)
        except FileNotFoundError:
            self.files.pop(state.path, None)  # archived or deleted
            self.unreadable.pop(str(state.path), None)
            if state.thread_id and self.by_thread.get(state.thread_id) == state.path:
                del self.by_thread[state.thread_id]
            return []
        except OSError:
            return []
        if st.st_ino != state.ino or st.st_size < state.offset:
            log.info("%s was replaced or truncated; reading it again from the start", state.path)
            state.ino, state.offset, state.verified, state.skipping = st.st_ino, 0, True, 0
        state.size, state.mtime_ns = st.st_size, st.st_mtime_ns
        if st.st_size <= state.offset:
            return []
        try:
            found = list(self._read_appended(state, st.st_size))
        except OSError as exc:
            self._warn(state.path, f"cannot read: {exc.strerror}")
            self.unreadable[str(state.path)] = str(exc.strerror or exc)
            return []
        self.unreadable.pop(str(state.path), None)
        return found

    def _read_appended(self, state: RolloutFileState, size: int) -> Iterator[Found]:
        fd = os.open(state.path, os.O_RDONLY)
        try:
            if not state.verified:
                state.offset = self._boundary(fd, state.offset)
                state.verified = True
            while state.offset < size:
                data = None if state.skipping else lines.read_from(fd, state.offset,
                                                                   size - state.offset)
                if data is None:  # a line over the limit: passed, never held whole
                    if not self._pass_long_line(fd, state, size):
                        return  # its end is not written yet: passed on at the next poll
                    continue
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    return  # a line still being written: retried on the next poll
                state.offset += cut
                yield from self._lines(state, data[:cut])
        finally:
            os.close(fd)

    @staticmethod
    def _pass_long_line(fd: int, state: RolloutFileState, size: int) -> bool:
        """Pass (part of) the line at ``state.offset``; True once its end was passed."""
        passed, ended = lines.pass_line(fd, state.offset, size)
        lines.passed_on(state, passed, ended)
        return ended

    @staticmethod
    def _boundary(fd: int, offset: int) -> int:
        """``offset`` if a line ends just before it, else the end of the last complete line."""
        if offset == 0 or os.pread(fd, 1, offset - 1) == b"\n":
            return offset
        return complete_end(fd, offset)

    def _lines(self, state: RolloutFileState, data: bytes) -> Iterator[Found]:
        for line in data.split(b"\n"):
            if not line or not is_candidate(line):
                continue
            try:
                event = parse_line(line)
            except MalformedLine as exc:
                self._warn(state.path, exc.reason)
                continue
            if event is not None:
                yield Found(state.thread_id, state.path, event)

    def _warn(self, path: Path, reason: str) -> None:
        """One warning per file and reason: a broken writer must not flood the log."""
        if (path, reason) not in self._warned:
            self._warned.add((path, reason))
            log.warning("skipping a line of %s: %s", path, reason)
