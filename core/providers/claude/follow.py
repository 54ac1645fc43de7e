"""Following every transcript under the Claude config directories, incrementally.

One :class:`FileState` per ``*.jsonl`` file: the byte offset read so far (only complete lines
are consumed; a partial last line is read again next time), and what the file has shown
(:class:`~core.providers.claude.scan.FileFacts`). Usage and limit stops go to one shared
:class:`~core.providers.claude.ledger.UsageLedger`.

Noticing appends is a size check, never a rescan. A :meth:`TranscriptWatcher.poll` stats

* every directory (a new session file changes its directory's mtime; a directory touched in the
  last two seconds is listed again next time, for coarse-mtime filesystems),
* every *hot* file — pinned (a session that is a goal) or modified in the last two hours,
* and a quarter of the cold ones, in turn —

so with a one-second poll an append to any file is seen within four seconds, at the cost of a
few hundred ``stat`` calls per poll even for thousands of files. A file that shrank or was
replaced is read again from the start (responses already counted are not counted twice).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from core.providers.claude.ledger import UsageLedger
from core.providers.claude.scan import FileFacts, LineSink, decode_lines, scan_bytes

log = logging.getLogger(__name__)

HOT_SECONDS = 2 * 3600.0
COLD_SLICES = 4
RACY_SECONDS = 2.0
READ_LIMIT = 8 << 20  # per file and poll: a huge append is read over several polls
DECODE_LIMIT = 1 << 20  # appends up to this size are decoded line by line


@dataclass
class FileState:
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

    def reset(self) -> None:
        self.offset = 0
        self.facts = FileFacts()


def describe_path(path: str, config_dir: str) -> tuple[str, bool]:
    """(session id, is a sub-agent transcript) from a transcript's path."""
    p = Path(path)
    if p.parent.name == "subagents":
        return p.parent.parent.name, True
    return p.stem, False


def read_file(state: FileState, ledger: UsageLedger, bulk: bool = False) -> bool:
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
    if st.st_size <= state.offset:
        return False
    data = _read_from(state.path, state.offset, st.st_size - state.offset)
    sink = LineSink(ledger, state.facts, state.session_id)
    if bulk or len(data) > DECODE_LIMIT:
        consumed = scan_bytes(data, sink)
    else:
        sink.from_start = state.offset == 0
        consumed = data.rfind(b"\n") + 1
        decode_lines(data, 0, consumed, sink)
    state.offset += consumed
    _log_malformed(state)
    return consumed > 0


def _read_from(path: str, offset: int, available: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(offset)
        data = handle.read(min(available, READ_LIMIT))
        if len(data) == READ_LIMIT and b"\n" not in data:
            data += handle.read()  # a single line longer than the limit: take it whole
    return data


def _log_malformed(state: FileState) -> None:
    for reason, count in state.facts.malformed.counts.items():
        if reason not in state.logged:
            state.logged.add(reason)
            log.warning("skipping malformed line(s) in %s: %s (%d so far; said once per file "
                        "and reason)", state.path, reason, count)


class TranscriptWatcher:
    """Owns the file states, the directory mtimes and the usage ledger of all config dirs."""

    def __init__(self, roots: Sequence[Path]) -> None:
        self.roots = [Path(r) for r in roots]
        self.ledger = UsageLedger()
        self.files: dict[str, FileState] = {}
        self.dirs: dict[str, int] = {}
        self.pinned: set[str] = set()
        self._racy: set[str] = set()
        self._cold_turn = 0
        self._by_session: dict[str, FileState] = {}

    # -- lookup --------------------------------------------------------------------------------

    def session(self, session_id: str) -> FileState | None:
        """The main transcript of a session (the newest if several config dirs have one)."""
        return self._by_session.get(session_id)

    def sessions(self) -> Iterable[FileState]:
        return self._by_session.values()

    def _add_file(self, path: str, config_dir: str) -> FileState:
        session_id, sidechain = describe_path(path, config_dir)
        state = FileState(path, config_dir, session_id, sidechain)
        self.files[path] = state
        if not sidechain:
            current = self._by_session.get(session_id)
            if current is None or current.mtime <= state.mtime:
                self._by_session[session_id] = state
        return state

    # -- the first scan ------------------------------------------------------------------------

    def discover(self, now: float) -> list[FileState]:
        """Walk every config dir's ``projects`` tree; return the files not seen before."""
        new: list[FileState] = []
        for root in self.roots:
            projects = root / "projects"
            if projects.is_dir():
                new.extend(self._walk(str(projects), str(root), now))
        return new

    def full_scan(self, now: float) -> None:
        """Read every transcript from the start (the fast byte scan); runs in a worker thread."""
        for state in self.discover(now):
            read_file(state, self.ledger, bulk=True)
        for state in self.files.values():
            if not state.sidechain and self._by_session.get(state.session_id) is not state:
                self._prefer(state)

    def adopt(self, states: Iterable[FileState]) -> None:
        """Take over file states read elsewhere (a parallel scan)."""
        for state in states:
            self.files[state.path] = state
            if not state.sidechain:
                self._prefer(state)

    def _prefer(self, state: FileState) -> None:
        current = self._by_session.get(state.session_id)
        if current is None or current.mtime <= state.mtime:
            self._by_session[state.session_id] = state

    def _walk(self, directory: str, config_dir: str, now: float) -> list[FileState]:
        new: list[FileState] = []
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
                        known.mtime = entry.stat().st_mtime
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
        if now - st.st_mtime < RACY_SECONDS:
            self._racy.add(directory)

    # -- following -----------------------------------------------------------------------------

    def poll(self, now: float) -> set[str]:
        """Check directories and files for changes; return the sessions whose files changed."""
        changed: set[str] = set()
        for state in self._new_files(now):
            if read_file(state, self.ledger) and not state.sidechain:
                self._prefer(state)
                changed.add(state.session_id)
        for state in self._due(now):
            if read_file(state, self.ledger) and not state.sidechain:
                changed.add(state.session_id)
        return changed

    def _new_files(self, now: float) -> list[FileState]:
        new: list[FileState] = []
        for root in self.roots:
            projects = root / "projects"
            if str(projects) not in self.dirs and projects.is_dir():
                new.extend(self._walk(str(projects), str(root), now))
        for directory, mtime_ns in list(self.dirs.items()):
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
        return new

    def _config_dir_of(self, directory: str) -> str | None:
        for root in self.roots:
            if directory == str(root) or directory.startswith(str(root) + os.sep):
                return str(root)
        return None

    def _due(self, now: float) -> list[FileState]:
        """Hot files, and this poll's share of the cold ones."""
        hot, cold = [], []
        for state in self.files.values():
            if state.gone:
                continue
            if state.session_id in self.pinned or now - state.mtime < HOT_SECONDS:
                hot.append(state)
            else:
                cold.append(state)
        if cold:
            self._cold_turn = (self._cold_turn + 1) % COLD_SLICES
            hot.extend(cold[self._cold_turn::COLD_SLICES])
        return hot
