"""Following every transcript under the Claude config directories, incrementally.

One :class:`TranscriptFileState` per ``*.jsonl`` file: the byte offset read so far (only
complete lines are consumed; a partial last line is read again next time), and what the file has
shown (:class:`~core.providers.claude.scan.FileFacts`). Usage and limit stops go to one shared
:class:`~core.providers.claude.ledger.UsageLedger`.

Noticing appends is a size check, never a rescan. A :meth:`TranscriptWatcher.poll` stats

* the ``projects`` directories and every directory modified in the last two hours (a new
  session file changes its directory's mtime; a directory touched in the last two seconds is
  listed again next time, for coarse-mtime filesystems),
* every *hot* file — pinned (a session that is a goal) or modified in the last two hours,
* and a fifth of the other files and directories, in turn (a cold file that changes is hot from
  then on; which is hot is decided again every thirty polls) —

so with a one-second poll an append to any file is seen within five seconds, at the cost of a
few hundred ``stat`` calls per poll even for thousands of files. A file that shrank or was
replaced is read again from the start (responses already counted are not counted twice).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from core.providers import lines
from core.providers.claude.ledger import LedgerExport, UsageLedger
from core.providers.claude.scan import FileFacts, LineSink, decode_lines, scan_bytes

log = logging.getLogger(__name__)

HOT_SECONDS = 2 * 3600.0
COLD_SLICES = 5
REPLAN_POLLS = 30  # hot files that went quiet become cold again after at most this many polls
RACY_SECONDS = 2.0
PARALLEL_BYTES = 64 << 20  # smaller histories are scanned in-process
DECODE_LIMIT = 1 << 20  # appends up to this size are decoded line by line


@dataclass
class TranscriptFileState:
    """One transcript file being followed."""

    path: str
    config_dir: str
    session_id: str
    sidechain: bool
    offset: int = 0
    size: int = 0
    ino: int = 0
    mtime: float = 0.0
    facts: FileFacts = field(default_factory=FileFacts)
    logged: set[str] = field(default_factory=set)
    gone: bool = False
    #: bytes of a line over the limit of one line (:mod:`core.providers.lines`) passed so far
    #: (its end not yet written): the rest of it is passed too, never read whole
    skipping: int = 0

    def reset(self) -> None:
        self.offset = 0
        self.skipping = 0
        self.facts = FileFacts()


def describe_path(path: str, config_dir: str) -> tuple[str, bool]:
    """(session id, is a sub-agent transcript) from a transcript's path."""
    p = Path(path)
    if p.parent.name == "subagents":
        return p.parent.parent.name, True
    return p.stem, False


def read_file(state: TranscriptFileState, ledger: UsageLedger, bulk: bool = False) -> bool:
    """Read what was appended to ``state``'s file; True when complete lines were consumed."""
    try:
        st = os.stat(state.path)
    except OSError:
        state.gone = True
        return False
    state.gone = False
    state.mtime = st.st_mtime
    if st.st_ino != state.ino or st.st_size < state.offset:
        if state.ino:
            log.info("%s was replaced or truncated: reading it again", state.path)
        state.reset()
        state.ino = st.st_ino
    state.size = st.st_size
    consumed = 0
    while st.st_size > state.offset:  # a bulk read goes to the end, a poll reads one chunk
        data = None if state.skipping else _read_from(state.path, state.offset,
                                                      st.st_size - state.offset)
        if data is None:
            passed = _skip_long_line(state, st.st_size)
            consumed += passed
            if state.skipping or not passed:
                break
            continue
        sink = LineSink(ledger, state.facts, state.session_id)
        if bulk or len(data) > DECODE_LIMIT:
            chunk = scan_bytes(data, sink)
        else:
            sink.from_start = state.offset == 0
            chunk = data.rfind(b"\n") + 1
            decode_lines(data, 0, chunk, sink)
        state.offset += chunk
        consumed += chunk
        if not bulk or chunk == 0:
            break
    if consumed and state.facts.malformed.counts:
        _log_malformed(state)
    return consumed > 0


def _read_from(path: str, offset: int, available: int) -> bytes | None:
    """The next chunk of lines, or one long line, bounded (:func:`core.providers.lines.
    read_from`); None: the line at ``offset`` is over the limit."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return lines.read_from(fd, offset, available)
    finally:
        os.close(fd)


def _skip_long_line(state: TranscriptFileState, size: int) -> int:
    """Pass the line at ``state.offset``, over :data:`~core.providers.lines.LINE_LIMIT`, one
    chunk at a time (:func:`core.providers.lines.pass_line`); bytes passed. One note per line,
    when its end is found (issue 21: one 256 MiB line took the host to 700 MB)."""
    fd = os.open(state.path, os.O_RDONLY)
    try:
        passed, ended = lines.pass_line(fd, state.offset, size)
    finally:
        os.close(fd)
    lines.passed_on(state, passed, ended)
    return passed


def _log_malformed(state: TranscriptFileState) -> None:
    for reason, count in state.facts.malformed.counts.items():
        if reason not in state.logged:
            state.logged.add(reason)
            log.warning("skipping malformed line(s) in %s: %s (%d so far; said once per file "
                        "and reason)", state.path, reason, count)


def scan_group(items: list[tuple[str, str]]) -> tuple[list[TranscriptFileState], LedgerExport]:
    """Scan some transcripts from the start (in a worker process of a parallel scan)."""
    ledger = UsageLedger()
    states = []
    for path, config_dir in items:
        session_id, sidechain = describe_path(path, config_dir)
        state = TranscriptFileState(path, config_dir, session_id, sidechain)
        read_file(state, ledger, bulk=True)
        states.append(state)
    return states, ledger.export()


class TranscriptWatcher:
    """Owns the file states, the directory mtimes and the usage ledger of all config dirs."""

    def __init__(self, roots: Sequence[Path]) -> None:
        self.roots = [Path(r) for r in roots]
        self.ledger = UsageLedger()
        self.files: dict[str, TranscriptFileState] = {}
        self.dirs: dict[str, int] = {}
        self.pinned: set[str] = set()
        self._racy: set[str] = set()
        self._shallow: set[str] = set()  # projects dirs and project dirs: new sessions appear
        self._turn = 0
        self._plan: _Plan | None = None
        self._by_session: dict[str, TranscriptFileState] = {}
        #: files a background full scan owns until :meth:`adopt_scanned` (polls skip them)
        self._pending: set[str] = set()
        #: pending files whose last records alone show the limit stop their session is paused
        #: at (:func:`~core.providers.claude.startup.read_tails`): reported before they are read
        self._tail_stopped: set[str] = set()

    # -- lookup --------------------------------------------------------------------------------

    def session(self, session_id: str) -> TranscriptFileState | None:
        """The main transcript of a session (the newest if several config dirs have one)."""
        return self._by_session.get(session_id)

    def sessions(self) -> Iterable[TranscriptFileState]:
        return self._by_session.values()

    def is_pending(self, state: TranscriptFileState) -> bool:
        """The background scan has not read this file yet: what it shows is not known."""
        return state.path in self._pending

    def set_pending(self, states: Iterable[TranscriptFileState]) -> None:
        self._pending = {s.path for s in states}
        self._tail_stopped.clear()
        self._plan = None

    def note_tail_stop(self, state: TranscriptFileState) -> None:
        """The tail of pending ``state`` shows its session paused at a limit stop (its facts
        hold that tail alone): the session may be reported until the background scan's state
        replaces it."""
        self._tail_stopped.add(state.path)
        self.settle(state)

    def reportable(self, state: TranscriptFileState) -> bool:
        """What ``state`` shows is known well enough to report its session: the file was read,
        or its tail shows the stop the session is paused at."""
        return state.path not in self._pending or state.path in self._tail_stopped

    def settle(self, state: TranscriptFileState) -> None:
        """A file read outside :meth:`full_scan` becomes its session's main transcript if it is
        the newest one."""
        if not state.sidechain:
            self._prefer(state)

    def adopt_scanned(self, states: Iterable[TranscriptFileState], exports: Iterable[LedgerExport]
                      ) -> set[str]:
        """Take over what a background scan read (on the watcher's own thread); returns the
        sessions it brought."""
        sessions = set()
        for state in states:
            self.files[state.path] = state
            self._pending.discard(state.path)
            self._tail_stopped.discard(state.path)
            if not state.sidechain:
                self._prefer(state)
            sessions.add(state.session_id)
        for export in exports:
            self.ledger.merge(export)
        self._plan = None
        return sessions

    def _add_file(self, path: str, config_dir: str) -> TranscriptFileState:
        session_id, sidechain = describe_path(path, config_dir)
        state = TranscriptFileState(path, config_dir, session_id, sidechain)
        self.files[path] = state
        if not sidechain:
            current = self._by_session.get(session_id)
            if current is None or current.mtime <= state.mtime:
                self._by_session[session_id] = state
        return state

    # -- the first scan ------------------------------------------------------------------------

    def discover(self, now: float) -> list[TranscriptFileState]:
        """Walk every config dir's ``projects`` tree; return the files not seen before."""
        new: list[TranscriptFileState] = []
        for root in self.roots:
            projects = root / "projects"
            if projects.is_dir():
                new.extend(self._walk(str(projects), str(root), now))
        return new

    def full_scan(self, now: float, workers: int = 1) -> None:
        """Read every transcript from the start (the fast byte scan); runs in a worker thread.

        With ``workers`` > 1 and a history of at least ``PARALLEL_BYTES``, the files are shared
        out to that many processes (by size) and their results merged here.
        """
        new = self.discover(now)
        total = sum(state.size for state in new)
        if workers > 1 and len(new) > 1 and total >= PARALLEL_BYTES:
            self._parallel_scan(new, workers)
            return
        for state in new:
            read_file(state, self.ledger, bulk=True)
        for state in self.files.values():
            if not state.sidechain and self._by_session.get(state.session_id) is not state:
                self._prefer(state)

    def _parallel_scan(self, states: list[TranscriptFileState], workers: int) -> None:
        """Share the files out by size; this process scans one share itself while the worker
        processes (``workers - 1``) start and scan the others."""
        groups: list[list[TranscriptFileState]] = [[] for _ in range(workers)]
        loads = [0] * workers
        for state in sorted(states, key=lambda s: s.size, reverse=True):
            lightest = loads.index(min(loads))
            groups[lightest].append(state)
            loads[lightest] += state.size
        context = multiprocessing.get_context("spawn")  # never fork a threaded host
        with ProcessPoolExecutor(workers - 1, mp_context=context) as pool:
            futures = [pool.submit(scan_group, [(s.path, s.config_dir) for s in group])
                       for group in groups[1:] if group]
            for state in groups[0]:
                read_file(state, self.ledger, bulk=True)
            self.adopt(groups[0])
            for future in futures:
                scanned, export = future.result()
                self.ledger.merge(export)
                self.adopt(scanned)

    def adopt(self, states: Iterable[TranscriptFileState]) -> None:
        """Take over file states read elsewhere (a parallel scan)."""
        for state in states:
            self.files[state.path] = state
            if not state.sidechain:
                self._prefer(state)

    def _prefer(self, state: TranscriptFileState) -> None:
        current = self._by_session.get(state.session_id)
        if current is None or current.mtime <= state.mtime:
            self._by_session[state.session_id] = state

    def _walk(self, directory: str, config_dir: str, now: float) -> list[TranscriptFileState]:
        new: list[TranscriptFileState] = []
        self._watch_dir(directory, now)
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return new
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.path not in self.dirs:
                        new.extend(self._walk(entry.path, config_dir, now))
                elif entry.name.endswith(".jsonl"):
                    known = self.files.get(entry.path)
                    if known is None:
                        known = self._add_file(entry.path, config_dir)
                        st = entry.stat()
                        known.mtime, known.size = st.st_mtime, st.st_size
                        new.append(known)
                    elif known.gone:
                        new.append(known)
            except OSError:
                continue
        return new

    def _watch_dir(self, directory: str, now: float) -> None:
        try:
            st = os.stat(directory)
        except OSError:
            return
        self.dirs[directory] = st.st_mtime_ns
        if "projects" in (os.path.basename(directory),
                          os.path.basename(os.path.dirname(directory))):
            self._shallow.add(directory)
        if now - st.st_mtime < RACY_SECONDS:
            self._racy.add(directory)

    # -- following -----------------------------------------------------------------------------

    def poll(self, now: float) -> set[str]:
        """Check directories and files for changes; return the sessions whose files changed."""
        self._turn += 1
        if self._plan is None or self._turn % REPLAN_POLLS == 0:
            self._plan = self._make_plan(now)
        changed: set[str] = set()
        for state in self._new_files(now):
            if state.path in self._pending:
                continue
            if read_file(state, self.ledger) and not state.sidechain:
                self._prefer(state)
                changed.add(state.session_id)
        plan = self._plan or _Plan()
        for state in self._due():
            if read_file(state, self.ledger):
                plan.promote(state)
                if not state.sidechain:
                    changed.add(state.session_id)
        return changed

    def _make_plan(self, now: float) -> _Plan:
        """Split files and directories into hot (every poll) and cold (in turn)."""
        since = now - HOT_SECONDS
        files = [s for s in self.files.values() if not s.gone and s.path not in self._pending]
        since_ns = since * 1e9
        shallow = self._shallow
        return _Plan(
            hot=[s for s in files if s.mtime > since],
            cold=[s for s in files if s.mtime <= since],
            hot_dirs=[d for d, m in self.dirs.items() if m > since_ns or d in shallow],
            cold_dirs=[d for d, m in self.dirs.items() if m <= since_ns and d not in shallow],
        )

    def _new_files(self, now: float) -> list[TranscriptFileState]:
        new: list[TranscriptFileState] = []
        for root in self.roots:
            projects = root / "projects"
            if str(projects) not in self.dirs and projects.is_dir():
                new.extend(self._walk(str(projects), str(root), now))
        assert self._plan is not None
        turn = self._turn % COLD_SLICES
        for directory in [*self._plan.hot_dirs, *self._plan.cold_dirs[turn::COLD_SLICES]]:
            mtime_ns = self.dirs.get(directory)
            if mtime_ns is None:
                continue
            try:
                current = os.stat(directory).st_mtime_ns
            except OSError:
                del self.dirs[directory]
                continue
            if current != mtime_ns or directory in self._racy:
                self._racy.discard(directory)
                config_dir = self._config_dir_of(directory)
                del self.dirs[directory]
                if config_dir is not None:
                    new.extend(self._walk(directory, config_dir, now))
        if new:
            self._plan = None  # new files and directories start hot
        return new

    def _config_dir_of(self, directory: str) -> str | None:
        for root in self.roots:
            if directory == str(root) or directory.startswith(str(root) + os.sep):
                return str(root)
        return None

    def _due(self) -> list[TranscriptFileState]:
        """Hot files, pinned sessions, and this poll's share of the cold files."""
        plan = self._plan or _Plan()
        due = {id(s): s for s in plan.hot}
        due.update((id(s), s) for s in plan.cold[self._turn % COLD_SLICES::COLD_SLICES])
        for session_id in self.pinned:
            state = self._by_session.get(session_id)
            if state is not None and state.path not in self._pending:
                due[id(state)] = state
        return list(due.values())


@dataclass
class _Plan:
    """Which files and directories a poll checks every time (hot) and which in turn (cold)."""

    hot: list[TranscriptFileState] = field(default_factory=list)
    cold: list[TranscriptFileState] = field(default_factory=list)
    hot_dirs: list[str] = field(default_factory=list)
    cold_dirs: list[str] = field(default_factory=list)

    def promote(self, state: TranscriptFileState) -> None:
        """A file that just changed is checked every poll from now on (it stays in the cold
        rotation too, so the other cold files keep their turn)."""
        if not any(hot is state for hot in self.hot):
            self.hot.append(state)
