"""The full-history scan behind the usage chart: tokens per day and model, and quota over time.

Reading every rollout line with ``json.loads`` is far too slow for gigabytes of history, so this
is a byte-level scan of each memory-mapped file:

* one pass over the lines (``find`` of the newline, then of ``"type":"`` in the line's head —
  every record starts with its timestamp and type): ``token_count`` lines give the position of
  ``"last_token_usage":{`` — one per model call — and ``turn_context`` lines say which model
  the following calls used. A line whose head holds no type is searched whole for both;
* the usage objects of a run of calls are decoded in one call (msgspec, by
  :mod:`core.providers.codex.usagejson`) and summed column by column; a run holding an object
  that does not decode is read call by call, and a call whose object cannot be read alone has
  its whole line decoded;
* the day of a call is its line's UTC date (the fixed-width ``timestamp`` prefix). Lines are in
  time order, so days are found per *run* of calls by bisection, not line by line;
* for the quota chart, one ``rate_limits`` object per hour is decoded (the account's quota is
  the same in every session; a chart over weeks needs no finer points).
"""

from __future__ import annotations

import bisect
import contextlib
import mmap
import os
import pickle
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from core.providers import jsonload, lines
from core.providers.codex.limits import LimitShapeError, from_rollout
from core.providers.codex.usagejson import FIELDS as _FIELDS
from core.providers.codex.usagejson import Sums, stamp_and_limits, usage_sums

USAGE = b'"last_token_usage":{'
TURN = b'"turn_context","payload":{'  # type then payload: serde's tag + content
TYPE = b'"type":"'
#: ``"type":"`` is found within this many bytes of a line's start (after the timestamp and, in
#: newer builds, the ``ordinal``)
HEAD = 96
_AT = 40  # where ``"type":"`` starts in the usual head (after the fixed-width timestamp)
_EVENT, _TURN_KIND = b'event_msg","', b'turn_context'
_TOKEN_COUNT = b'payload":{"type":"token_count"'
#: where a usage object's ``{`` is, from the start of :data:`USAGE`
_OBJECT = len(USAGE) - 1
_MODEL_RE = re.compile(rb'"model":"([^"]*)"')
UNKNOWN_MODEL = "unknown"
#: every n-th call's hour is checked for a quota point (one point per hour is kept)
QUOTA_SAMPLE = 8
#: files are scanned in line-aligned windows of this size, each unmapped once scanned
WINDOW = 32 << 20


@dataclass
class TokenCounts:
    """Token counts of some model calls."""

    calls: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0
    total_tokens: int = 0

    def merge(self, other: TokenCounts) -> None:
        self.calls += other.calls
        for name in _FIELDS:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def add_sums(self, calls: int, sums: Sums) -> None:
        """Add ``calls`` calls whose (input, cached, output, reasoning, total) sum to ``sums``."""
        self.calls += calls
        self.input_tokens += sums[0]
        self.cached_input_tokens += sums[1]
        self.output_tokens += sums[2]
        self.reasoning_output_tokens += sums[3]
        self.total_tokens += sums[4]


@dataclass
class UsageHistory:
    """What the scan found.

    Attributes:
        daily: (UTC date ``YYYY-MM-DD``, model) → :class:`TokenCounts`.
        quota: window id → [(instant, used %)], one point an hour (the first call of the hour).
        files / size: how many files and bytes were read.
    """

    daily: dict[tuple[str, str], TokenCounts] = field(default_factory=dict)
    quota: dict[str, list[tuple[datetime, float]]] = field(default_factory=dict)
    files: int = 0
    size: int = 0
    hours: set[bytes] = field(default_factory=set, repr=False)

    def totals(self) -> TokenCounts:
        total = TokenCounts()
        for usage in self.daily.values():
            total.merge(usage)
        return total


def rollouts(sessions: Path) -> list[Path]:
    """Every rollout under ``sessions`` (the ``YYYY/MM/DD`` tree)."""
    found: list[Path] = []
    for directory, _, names in os.walk(sessions):
        found.extend(Path(directory) / n for n in names
                     if n.startswith("rollout-") and n.endswith(".jsonl"))
    return sorted(found)


def scan_usage(paths: Iterable[Path], workers: int = 1) -> UsageHistory:
    """Scan ``paths``; with ``workers`` > 1 the files are shared out to that many processes.

    Worker processes are never forked from the caller (it may be a threaded host). They are
    fresh interpreters that import only this module (``python -c``, the file list on stdin, the
    result pickled on stdout): multiprocessing's ``spawn`` and ``forkserver`` would also
    re-import the caller's main module in every worker — for the ``goalkeeper`` command the
    whole CLI, which cost more than the workers saved. A frozen app (no ``python -c``) uses
    ``spawn``.
    """
    files = list(paths)
    if (pending := start_scan(files, workers)) is not None:
        return pending.result()
    if workers <= 1 or len(files) < 2:
        return _scan_serial(files)
    groups = _share_out(files, workers)  # a frozen app: no ``python -c``, so ``spawn``
    import multiprocessing  # imported here: workers must start fast
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(len(groups), mp_context=context) as pool:
        return _combine(list(pool.map(_scan_serial, groups)))


def start_scan(paths: Iterable[Path], workers: int) -> PendingScan | None:
    """The scan of ``paths`` shared out to ``workers``, all but one share started at once in
    worker interpreters, for a caller with other work to do meanwhile (``codex-usage`` loading
    its settings); the last share is scanned by :meth:`PendingScan.result`. (All shares in
    workers would leave this process idle later and cost one more interpreter's start: on a
    loaded machine the CPU spent decides.) None where workers cannot be started so (one
    worker asked for, fewer than two files, a frozen app)."""
    files = list(paths)
    if workers <= 1 or len(files) < 2 or getattr(sys, "frozen", False):
        return None
    groups = _share_out(files, workers)
    return PendingScan(groups[1:], here=groups[0])


_WORKER = "from core.providers.codex.history import worker_main; worker_main()"


class PendingScan:
    """Groups of files being scanned, each by a worker interpreter started at once, and
    ``here``: the group this process scans when asked for the :meth:`result`.

    The file lists are written to the workers' stdin by a thread, so that starting them never
    waits for an interpreter to come up (a long list fills the pipe before the worker reads
    it). Owns the processes: :meth:`parts` collects them — a failed worker's files are scanned
    here instead (the chart shows what could be read) — and :meth:`cancel` ends them.
    """

    def __init__(self, groups: list[list[Path]], here: list[Path] | None = None) -> None:
        import subprocess  # imported here: workers must start fast
        import threading

        self.here = here or []
        self.groups = groups
        self.procs = [subprocess.Popen([sys.executable, "-c", _WORKER], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                      for _ in groups]
        self._writer = threading.Thread(target=self._send, name="codex-scan-lists", daemon=True)
        self._writer.start()

    def _send(self) -> None:
        for proc, group in zip(self.procs, self.groups, strict=True):
            assert proc.stdin is not None
            with contextlib.suppress(OSError):
                proc.stdin.write("\n".join(str(p) for p in group).encode())
                proc.stdin.close()

    def parts(self) -> list[UsageHistory]:
        """Each group's answer, waiting for the workers."""
        parts = []
        for proc, group in zip(self.procs, self.groups, strict=True):
            assert proc.stdout is not None
            with proc.stdout:
                data = proc.stdout.read()
            proc.wait()
            # our own worker's answer: the same code, run by the same interpreter
            part = pickle.loads(data) if proc.returncode == 0 and data else None
            parts.append(part if isinstance(part, UsageHistory) else _scan_serial(group))
        self._writer.join()
        return parts

    def result(self) -> UsageHistory:
        """The whole answer: the share kept for this process scanned now, then the workers'."""
        here = _scan_serial(self.here)
        return _combine([here, *self.parts()])

    def cancel(self) -> None:
        """End the workers (their answer is not wanted any more)."""
        for proc in self.procs:
            with contextlib.suppress(OSError):
                proc.kill()
        for proc in self.procs:
            if proc.stdout is not None:
                proc.stdout.close()
            proc.wait()
        self._writer.join()


def worker_main() -> None:
    """A worker: the paths on stdin, one a line; the pickled :class:`UsageHistory` on stdout."""
    paths = [Path(line) for line in sys.stdin.read().splitlines() if line]
    sys.stdout.buffer.write(pickle.dumps(_scan_serial(paths)))
    sys.stdout.flush()


def _share_out(files: list[Path], workers: int) -> list[list[Path]]:
    """Groups of about equal size in bytes, largest files first."""
    sized = sorted(((_size(p), p) for p in files), reverse=True)
    groups: list[tuple[int, list[Path]]] = [(0, []) for _ in range(min(workers, len(files)))]
    for size, path in sized:
        total, members = min(groups, key=lambda group: group[0])
        groups.remove((total, members))
        members.append(path)
        groups.append((total + size, members))
    return [members for _, members in groups if members]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _combine(parts: list[UsageHistory]) -> UsageHistory:
    history = UsageHistory()
    for part in parts:
        history.files += part.files
        history.size += part.size
        for key, usage in part.daily.items():
            history.daily.setdefault(key, TokenCounts()).merge(usage)
        for window, points in part.quota.items():
            history.quota.setdefault(window, []).extend(points)
    for window, points in history.quota.items():
        hourly: dict[datetime, tuple[datetime, float]] = {}
        for when, used in sorted(points):
            hourly.setdefault(when.replace(minute=0, second=0, microsecond=0), (when, used))
        history.quota[window] = list(hourly.values())
    return history


def _scan_serial(paths: list[Path]) -> UsageHistory:
    history = UsageHistory()
    for path in paths:
        try:
            with open(path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size == 0:
                    continue
                _scan_file(handle.fileno(), size, history)
                history.size += size
                history.files += 1
        except OSError:
            continue  # vanished or unreadable: the chart shows what could be read
    for points in history.quota.values():
        points.sort()
    return history


def _day(data: mmap.mmap, at: int) -> bytes:
    """The ``YYYY-MM-DD`` of the line holding ``at`` (its fixed-width timestamp prefix)."""
    start = data.rfind(b"\n", 0, at) + 1
    return data[start + 14: start + 24]


def _day_runs(data: mmap.mmap, hits: list[int]) -> list[tuple[int, bytes]]:
    """(first hit index, day) of each run of hits on one day.

    A rollout is written in time order, so the day changes rarely: the first and last hit of a
    range are compared and only a range that spans midnight is bisected — a handful of lookups
    per file instead of one per line.
    """
    runs: list[tuple[int, bytes]] = []
    lo = 0
    while lo < len(hits):
        day, hi = _day(data, hits[lo]), len(hits) - 1
        if _day(data, hits[hi]) != day:
            left, right = lo, hi  # day(left) == day, day(right) != day
            while right - left > 1:
                middle = (left + right) // 2
                if _day(data, hits[middle]) == day:
                    left = middle
                else:
                    right = middle
            hi = left
        runs.append((lo, day))
        lo = hi + 1
    return runs


def _scan_file(fd: int, size: int, history: UsageHistory) -> None:
    """Scan one file in line-aligned windows, each mapped (pre-faulted) and unmapped in turn:
    the process never holds more than a window of any file."""
    model, lo, span = UNKNOWN_MODEL, 0, WINDOW
    while lo < size:
        base = lo - lo % mmap.ALLOCATIONGRANULARITY
        length = min(size - base, lo - base + span)
        with _window(fd, base, length) as data:
            start = lo - base
            end = data.rfind(b"\n", start) + 1
            if end <= start:  # no complete line in the window
                if base + length >= size:
                    return  # the file's last line is still being written
                span *= 2  # a line longer than the window
                continue
            model = _scan_region(data, start, end, model, history)
        lo, span = base + end, WINDOW


def _window(fd: int, offset: int, length: int) -> mmap.mmap:
    populate = getattr(mmap, "MAP_POPULATE", 0)  # Linux: fault the window in one go
    return mmap.mmap(fd, length, flags=mmap.MAP_SHARED | populate, prot=mmap.PROT_READ,
                     offset=offset)


def _lines(data: mmap.mmap, lo: int, hi: int) -> tuple[list[int], list[int]]:
    """(positions of ``"last_token_usage":{`` in token_count lines, positions of turn_context
    lines' types) in the complete lines of ``[lo, hi)`` — one pass over the lines."""
    usage: list[int] = []
    turns: list[int] = []
    find, start = data.find, lo
    while start < hi:
        end = find(b"\n", start, hi)
        end = hi if end < 0 else end
        # the usual head: {"timestamp":"<24 chars>","type":"  — else look for the type
        at = start + _AT if data[start + _AT: start + _AT + 8] == TYPE else find(
            TYPE, start, min(start + HEAD, end))
        if at < 0:  # an unusual head: search the whole line
            if (hit := find(USAGE, start, end)) >= 0:
                usage.append(hit)
            if (hit := find(TURN, start, end)) >= 0:
                turns.append(hit)
        else:
            kind = data[at + 8: at + 20]
            if kind == _EVENT and data[at + 20: at + 50] == _TOKEN_COUNT:
                if (hit := find(USAGE, at + 50, end)) >= 0:
                    usage.append(hit)
            elif kind == _TURN_KIND:
                turns.append(at)
        start = end + 1
    return usage, turns


def _scan_region(data: mmap.mmap, lo: int, hi: int, model: str, history: UsageHistory) -> str:
    """Count the calls in the complete lines of ``[lo, hi)``; returns the model in force after."""
    hits, turns = _lines(data, lo, hi)
    segments, model_after = _segments(data, hits, turns, model)
    ends = [first for first, _, _ in segments[1:]] + ([len(hits)] if segments else [])
    for (first, day, name), end in zip(segments, ends, strict=True):
        calls, sums = _usage(data, hits[first:end])
        if calls and day[4:5] == b"-":
            history.daily.setdefault((day.decode(), name), TokenCounts()).add_sums(calls, sums)
    for at in hits[::QUOTA_SAMPLE]:
        _quota_point(data, at, history)
    return model_after


def _usage(data: mmap.mmap, hits: list[int]) -> tuple[int, Sums]:
    """How many of the calls at ``hits`` could be read, and their counts summed: their usage
    objects decoded in one go, else one by one; a call whose object will not decode alone (a
    nested value, an unexpected layout) has its line decoded, and one that cannot be read at
    all is left out."""
    find = data.find
    objects = [data[at + _OBJECT: find(b"}", at) + 1] for at in hits]
    sums = usage_sums(objects)
    if sums is not None:
        return len(objects), sums
    rows = [usage_sums([one]) or _slow_usage(data, at)
            for at, one in zip(hits, objects, strict=True)]
    read = [row for row in rows if row is not None]
    if not read:
        return 0, (0, 0, 0, 0, 0)
    a, b, c, d, e = (sum(column) for column in zip(*read, strict=True))
    return len(read), (a, b, c, d, e)


def _segments(data: mmap.mmap, hits: list[int], turns: list[int],
              model: str) -> tuple[list[tuple[int, bytes, str]], str]:
    """(first hit index, day, model) wherever the day or the model changes; the last model."""
    models = [(bisect.bisect_left(hits, turn), _model(data, turn)) for turn in turns]
    days = _day_runs(data, hits)
    points = sorted({0} | {i for i, _ in models} | {i for i, _ in days})
    result: list[tuple[int, bytes, str]] = []
    m = d = 0
    day = b""
    for point in points:
        while m < len(models) and models[m][0] <= point:
            model = models[m][1] or model
            m += 1
        while d < len(days) and days[d][0] <= point:
            day = days[d][1]
            d += 1
        if point < len(hits):
            result.append((point, day, model))
    for _, name in models[m:]:
        model = name or model
    return result, model


def _model(data: mmap.mmap, turn: int) -> str | None:
    found = _MODEL_RE.search(data, turn, data.find(b"\n", turn))
    return found.group(1).decode() if found else None


def _slow_usage(data: mmap.mmap, at: int) -> Sums | None:
    """The same numbers from a line in an unexpected layout (decoded properly)."""
    start = data.rfind(b"\n", 0, at) + 1
    end = data.find(b"\n", start)
    if lines.too_long(start, end):
        return None  # never sliced out whole (core.providers.lines)
    try:
        record = jsonload.loads(data[start:end])
        usage = record["payload"]["info"]["last_token_usage"]
        return tuple(int(usage.get(name) or 0) for name in _FIELDS)  # type: ignore[return-value]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _quota_point(data: mmap.mmap, at: int, history: UsageHistory) -> None:
    start = data.rfind(b"\n", 0, at) + 1
    hour = data[start + 14: start + 27]
    if hour in history.hours:
        return
    history.hours.add(hour)
    end = data.find(b"\n", at)
    if data.find(b'"rate_limits":{', at, end) < 0 or lines.too_long(start, end):
        return  # a line over the limit is never sliced out whole (core.providers.lines)
    found = stamp_and_limits(data[start:end])
    if found is None:
        return
    try:
        when = datetime.fromisoformat(found[0].replace("Z", "+00:00")).astimezone(UTC)
        snapshot = from_rollout(found[1], when)
    except (ValueError, KeyError, TypeError, LimitShapeError):
        return
    for window_id, window in snapshot.windows.items():
        if window.used_percent is not None:
            history.quota.setdefault(window_id, []).append((when, window.used_percent))
