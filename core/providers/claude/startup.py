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

or when ``QUICK_BYTES`` have been read. The rest is scanned in a worker thread (and worker
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
from dataclasses import dataclass

from core.providers.claude.follow import (
    PARALLEL_BYTES,
    FileState,
    TranscriptWatcher,
    read_file,
    scan_group,
)
from core.providers.claude.ledger import LedgerExport, UsageLedger
from core.providers.claude.wording import WINDOW_5H, WINDOW_7D, WINDOW_BY_TYPE, window_of

#: the first pass reads at most this much (about a quarter of a second here)
QUICK_BYTES = 96 << 20
#: the windows whose newest stop the first pass makes sure of
CORE_WINDOWS = (WINDOW_5H, WINDOW_7D)


@dataclass
class FirstPass:
    """What :func:`read_newest_first` read, and what it left for the full scan."""

    read: list[FileState]
    rest: list[FileState]
    bytes_read: int


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
    return FirstPass(order[:done], rest, read_bytes)


def _enough(ledger: UsageLedger, state: FileState, recent_since: float, read_bytes: int,
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


def scan_rest(states: Iterable[FileState], workers: int) -> tuple[list[FileState],
                                                                  list[LedgerExport]]:
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
    scanned: list[FileState] = []
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
