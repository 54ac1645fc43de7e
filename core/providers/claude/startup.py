"""Gauges and goals at once: the newest transcripts first, the whole history behind them.

A full history can be gigabytes (the bench's is 1 GiB, 2,600 files) and scanning it takes
seconds; the host must not show "no quota, no goal" for that long. So the first pass reads whole
files newest first (by mtime) — with the same fast scanner — until what they show cannot change
any more by reading older files:

* every file modified within ``claude_track_recent_hours`` is read (a session a limit stopped
  that recently is a goal, and its stop is no older than its file);
* every session that already is a goal (tracked, auto-tracked) is read;
* for the 5-hour and the 7-day window a limit stop is known that is newer than the next file's
  mtime: records are appended in time order, so no older file holds a newer stop;

or when ``QUICK_BYTES`` have been read. That is not enough for goals: a session whose last record
is a limit stop is one while the stop's reset is still ahead, and a weekly reset can be days
after its stop — in a file older than any of those. So the first pass then reads the *tails* of
the older files young enough (by mtime) to end in a stop whose reset is still ahead
(:data:`RESET_HORIZON`, from the longest window): a session's current stop and what followed it
are its last records. A tail showing the session paused at a stop makes it reportable before the
full scan (same observation: state, reset, windows, title, directory); any other tail is
forgotten, and the file is left to the full scan. :class:`TailBudget` bounds those reads.

The rest is scanned in a worker thread (and worker
processes, for a large rest) into separate file states and a separate ledger, and then taken
over on the event loop (:meth:`~core.providers.claude.follow.TranscriptWatcher.adopt_scanned`)
— the watcher never shares its state with another thread. Until then those files are *pending*:
polls leave them alone and no goal is reported from them.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Collection, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from core.providers.claude.follow import (
    PARALLEL_BYTES,
    TranscriptFileState,
    TranscriptWatcher,
    read_file,
    scan_group,
)
from core.providers.claude.ledger import LedgerExport, UsageLedger
from core.providers.claude.scan import LineSink, holds_api_error, scan_bytes
from core.providers.claude.wording import (
    WINDOW_5H,
    WINDOW_7D,
    WINDOW_BY_TYPE,
    WINDOW_SECONDS,
    window_of,
)

#: the first pass reads at most this much whole (about a quarter of a second here)
QUICK_BYTES = 96 << 20
#: the windows whose newest stop the first pass makes sure of
CORE_WINDOWS = (WINDOW_5H, WINDOW_7D)
#: a limit stop's reset is at most this long after the stop: the longest window Claude has, plus
#: the day a reset given as a day alone is rounded up by ("resets Saturday": the end of that day,
#: :func:`~core.providers.claude.resets.resolve_spec`). Extra usage has no fixed window: its
#: older stops are left to the full scan.
RESET_HORIZON = max(WINDOW_SECONDS.values()) + 86400.0


@dataclass(frozen=True)
class TailBudget:
    """How much the first pass reads of the older files' ends.

    Attributes:
        per_file: bytes read from each file's end: its last records (a stop line is 1–2 KiB;
            what may follow one without ending it — notices, summaries — is small too).
        files: at most this many files are read so (the newest first) ...
        total: ... and at most this many bytes in all; the files over it wait for the full scan.
    """

    per_file: int = 64 << 10
    files: int = 2048
    total: int = 48 << 20

    def __post_init__(self) -> None:
        if min(self.per_file, self.files, self.total) <= 0:
            raise ValueError(f"a tail budget is positive: {self}")

    def __str__(self) -> str:
        return (f"{self.files} files × {self.per_file >> 10} KiB, "
                f"{self.total / (1 << 20):.0f} MiB in all")


TAIL_BUDGET = TailBudget()


@dataclass
class TailPass:
    """What :func:`read_tails` read: ``stopped`` are the files whose tails show their session
    paused at a limit stop; ``left`` files were young enough but over the budget."""

    read: int = 0
    bytes_read: int = 0
    stopped: list[TranscriptFileState] = field(default_factory=list)
    left: int = 0


@dataclass
class FirstPass:
    """What :func:`read_newest_first` read, and what it left for the full scan."""

    read: list[TranscriptFileState]
    rest: list[TranscriptFileState]
    bytes_read: int
    tails: TailPass = field(default_factory=TailPass)


def read_newest_first(watcher: TranscriptWatcher, now: float, recent_seconds: float,
                      goals: Collection[str]) -> FirstPass:
    """Discover every transcript and read the newest ones, into ``watcher`` (a worker thread
    may run this before the watcher is shared). The rest are marked pending."""
    order = sorted(watcher.discover(now), key=lambda s: s.mtime, reverse=True)
    wanted = set(goals)
    done, read_bytes = 0, 0
    for state in order:
        if _enough(watcher.ledger, state, now - recent_seconds, read_bytes, wanted):
            break
        read_file(state, watcher.ledger, bulk=True)
        read_bytes += state.size
        wanted.discard(state.session_id)
        done += 1
    rest = order[done:]
    watcher.set_pending(rest)
    for state in order[:done]:
        watcher.settle(state)
    tails = read_tails(watcher, rest, now, TAIL_BUDGET)
    return FirstPass(order[:done], rest, read_bytes, tails)


def read_tails(watcher: TranscriptWatcher, rest: list[TranscriptFileState], now: float,
               budget: TailBudget) -> TailPass:
    """Read the ends of the pending main transcripts (``rest``, newest first) modified within
    :data:`RESET_HORIZON`; the ones whose tail shows their session paused at a limit stop become
    reportable (whether the session is a goal — reset ahead, or a recent stop — the provider
    decides as it does for any file). Their stops join the ledger (it keeps each stop once)."""
    newest = _newest_mtimes(watcher)
    young = [s for s in rest if not s.sidechain and s.mtime >= now - RESET_HORIZON
             and s.mtime >= newest[s.session_id]]  # a newer file of the session would decide
    tails = TailPass()
    for index, state in enumerate(young):
        size = min(state.size, budget.per_file)
        if tails.read >= budget.files or tails.bytes_read + size > budget.total:
            tails.left = len(young) - index
            break
        tails.bytes_read += read_tail(state, watcher.ledger, budget.per_file)
        tails.read += 1
        stops = state.facts.stops
        if stops.stop is not None and stops.activity_at is None:
            watcher.note_tail_stop(state)
            tails.stopped.append(state)
        else:
            state.reset()  # nothing to show from a tail: the full scan reads the file
    return tails


def _newest_mtimes(watcher: TranscriptWatcher) -> dict[str, float]:
    """The newest main transcript's mtime of each session (several config dirs may hold one)."""
    newest: dict[str, float] = {}
    for state in watcher.files.values():
        if not state.sidechain:
            newest[state.session_id] = max(newest.get(state.session_id, state.mtime),
                                           state.mtime)
    return newest


def read_tail(state: TranscriptFileState, ledger: UsageLedger, size: int) -> int:
    """Read the complete lines among the last ``size`` bytes of ``state``'s file into fresh facts
    (with the same scanner as a whole read); returns the bytes read.

    A tail without an API-error line holds no stop and is not decoded. The state's offset and
    inode stay unset: a later :func:`~core.providers.claude.follow.read_file` of it starts over
    from the file's start.
    """
    try:
        with open(state.path, "rb") as handle:
            end = os.fstat(handle.fileno()).st_size
            start = max(0, end - size)
            data = os.pread(handle.fileno(), end - start, start)
    except OSError:
        return 0
    if start > 0:  # the first line began before the tail: it is not read
        cut = data.find(b"\n")
        data = data[cut + 1:] if cut >= 0 else b""
    state.reset()
    if holds_api_error(data):
        scan_bytes(data, LineSink(ledger, state.facts, state.session_id))
    return end - start


def _enough(ledger: UsageLedger, state: TranscriptFileState, recent_since: float, read_bytes: int,
            goals_left: set[str]) -> bool:
    """True when reading ``state`` (and every older file) can wait for the full scan."""
    if read_bytes >= QUICK_BYTES:
        return True
    if state.mtime >= recent_since or goals_left:
        return False
    newest = newest_stops(ledger)
    return all(newest.get(w, float("-inf")) >= state.mtime for w in CORE_WINDOWS)


def newest_stops(ledger: UsageLedger) -> dict[str, float]:
    """The newest limit stop seen for each window, as epoch seconds."""
    newest: dict[str, float] = {}
    for stop in ledger.stops.values():
        window = WINDOW_BY_TYPE.get(stop.rate_limit_type or "") or window_of(stop.text)
        at = stop.at.timestamp()
        if at > newest.get(window, float("-inf")):
            newest[window] = at
    return newest


def scan_rest(states: Iterable[TranscriptFileState], workers: int
              ) -> tuple[list[TranscriptFileState], list[LedgerExport]]:
    """Read files from the start into fresh states and ledgers, off the event loop.

    A large rest goes to ``workers`` worker processes at a lower priority, so the host's own
    process — its event loop, the other providers starting — keeps the CPU (and the GIL) it
    needs while the history is read behind it.
    """
    items = [(s.path, s.config_dir) for s in states]
    sizes = {s.path: s.size for s in states}
    if len(items) <= 1 or sum(sizes.values()) < PARALLEL_BYTES:
        alone, export = scan_group(items)
        return alone, [export]
    count = max(1, workers)
    groups: list[list[tuple[str, str]]] = [[] for _ in range(count)]
    loads = [0] * count
    for item in sorted(items, key=lambda i: sizes[i[0]], reverse=True):
        lightest = loads.index(min(loads))
        groups[lightest].append(item)
        loads[lightest] += sizes[item[0]]
    context = multiprocessing.get_context("spawn")  # never fork a threaded host
    scanned: list[TranscriptFileState] = []
    exports: list[LedgerExport] = []
    with ProcessPoolExecutor(count, mp_context=context, initializer=_background) as pool:
        for more, export in pool.map(scan_group, [g for g in groups if g]):
            scanned.extend(more)
            exports.append(export)
    return scanned, exports


def _background() -> None:
    """A worker of the background scan yields the CPU to the host."""
    with contextlib.suppress(OSError):
        os.nice(10)
