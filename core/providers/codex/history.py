"""The full-history scan behind ``codex-usage``: tokens per day and model, and quota over time.

Reading every rollout line with ``json.loads`` is far too slow for gigabytes of history, so this
is a byte-level scan of each memory-mapped file:

* one pass over the lines (``readline``, then a ``find`` of ``"type":"`` in the line's head —
  every record starts with its timestamp, since 0.169 its ordinal, and its type — and a dict
  lookup of the type): ``token_count`` lines give the usage object after
  ``"last_token_usage":{`` — one per model call — and ``turn_context`` lines say which model
  the following calls used. A line whose head holds no known type is searched whole for both;
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

import mmap
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from core.providers import jsonload, lines

if TYPE_CHECKING:
    from core.providers.codex.usagejson import Sums

# The decoders (msgspec) and the rate-limit shapes are imported where they are first used, not
# here: a forked worker is started before they are loaded, and loads them itself meanwhile.

USAGE = b'"last_token_usage":{'
TURN = b'"turn_context","payload":{'  # type then payload: serde's tag + content
TYPE = b'"type":"'
#: ``"type":"`` is found within this many bytes of a line's start (after the timestamp and, in
#: codex-cli 0.169 and later, the ``ordinal``)
HEAD = 96
#: what a line is, by the ``_KEY`` bytes from its ``"type":"`` on
_SKIP, _EVENT, _TURN, _UNUSUAL = "skip", "event", "turn", "unusual"
_KEY = 22
_KINDS = {b'"type":"response_item"': _SKIP, b'"type":"event_msg","pa': _EVENT,
          b'"type":"turn_context",': _TURN, b'"type":"session_meta",': _SKIP,
          b'"type":"compacted","pa': _SKIP}
_PAYLOAD = len(b'"type":"event_msg",')  # where an event's payload starts, from its type
_TOKEN_COUNT = b'"payload":{"type":"token_count"'
_AFTER = _PAYLOAD + len(_TOKEN_COUNT)  # where a token count's info starts, from its type
#: where the type is in a line without an ordinal: after ``{"timestamp":"<24 chars>",``
_AT = len(b'{"timestamp":"') + 24 + len(b'",')
#: where a usage object's ``{`` is, from the start of :data:`USAGE`
_OBJECT = len(USAGE) - 1
_MODEL = b'"model":"'
UNKNOWN_MODEL = "unknown"
#: quota points' instants: microseconds since the epoch (UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)
HOUR = 3_600_000_000
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
        self.add_sums(other.calls, (other.input_tokens, other.cached_input_tokens,
                                    other.output_tokens, other.reasoning_output_tokens,
                                    other.total_tokens))

    def __reduce__(self) -> tuple[type[TokenCounts], tuple[int, ...]]:
        return TokenCounts, (self.calls, self.input_tokens, self.cached_input_tokens,
                             self.output_tokens, self.reasoning_output_tokens,
                             self.total_tokens)

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
        quota: window id → [(instant in microseconds since the epoch, used %)], one point an
            hour (the first call of the hour) — whole numbers, cheap to send between processes
            and to keep.
        files / size: how many files and bytes were read.
    """

    daily: dict[tuple[str, str], TokenCounts] = field(default_factory=dict)
    quota: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    files: int = 0
    size: int = 0
    hours: set[bytes] = field(default_factory=set, repr=False)

    def __reduce__(self) -> tuple[type[UsageHistory], tuple[object, ...]]:
        # sent between the scan's processes: its fields, not a dict of them (a third of the
        # time), and never the hours seen while scanning
        return UsageHistory, (self.daily, self.quota, self.files, self.size)

    def totals(self) -> TokenCounts:
        total = TokenCounts()
        for usage in self.daily.values():
            total.merge(usage)
        return total


def rollouts(sessions: Path) -> list[Path]:
    """Every rollout under ``sessions`` (the ``YYYY/MM/DD`` tree), in the order of their
    paths' text."""
    found: list[str] = []
    for directory, _, names in os.walk(sessions):
        found.extend(os.path.join(directory, n) for n in names
                     if n.startswith("rollout-") and n.endswith(".jsonl"))
    return [Path(p) for p in sorted(found)]


def combine(parts: Iterable[UsageHistory]) -> UsageHistory:
    """One history of the parts scanned apart (one quota point an hour kept)."""
    history = UsageHistory()
    for part in parts:
        history.files += part.files
        history.size += part.size
        for key, usage in part.daily.items():
            history.daily.setdefault(key, TokenCounts()).merge(usage)
        for window, points in part.quota.items():
            history.quota.setdefault(window, []).extend(points)
    for window, points in history.quota.items():
        hourly: dict[int, tuple[int, float]] = {}
        for when, used in sorted(points):
            hourly.setdefault(when // HOUR, (when, used))
        history.quota[window] = list(hourly.values())
    return history


#: what a rollout was when it was scanned: (size, modification time in ns, inode) — a file
#: with the same stamp has the same complete lines (rollouts are only ever appended to)
Stamp = tuple[int, int, int]
#: a rollout, its stamp and what it holds
Part = tuple[Path, Stamp, UsageHistory]


def scan_files(paths: Iterable[Path]) -> UsageHistory:
    """Scan ``paths`` in this process, one after the other."""
    return combine([part for _, _, part in scan_parts(paths)])


def scan_parts(paths: Iterable[Path]) -> list[Part]:
    """Each of ``paths`` scanned on its own, with its :data:`Stamp` (one that has vanished or
    cannot be read is left out: the chart shows what could be read)."""
    parts: list[Part] = []
    for path in paths:
        if (found := scan_file(path)) is not None:
            parts.append((path, *found))
    return parts


def scan_file(path: Path) -> tuple[Stamp, UsageHistory] | None:
    """The calls and quota points of the rollout at ``path`` (one quota point per hour of
    it), with the stamp of what was read; None when it cannot be read."""
    history = UsageHistory()
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            if info.st_size:
                _scan_file(handle.fileno(), info.st_size, history, path)
    except OSError:
        return None
    history.size, history.files, history.hours = info.st_size, int(info.st_size > 0), set()
    for points in history.quota.values():
        points.sort()
    return (info.st_size, info.st_mtime_ns, info.st_ino), history


def _scan_file(fd: int, size: int, history: UsageHistory, path: Path) -> None:
    """Scan one file in line-aligned windows, each mapped (pre-faulted) and unmapped in turn:
    the process never holds more than a window of any file. A window is at most the limit of
    one line (:mod:`core.providers.lines`), so a line that does not end within one is over the
    limit: it is passed unread, never mapped or copied whole (one note)."""
    model, lo = UNKNOWN_MODEL, 0
    span = min(WINDOW, lines.LINE_LIMIT)
    while lo < size:
        base = lo - lo % mmap.ALLOCATIONGRANULARITY
        length = min(size - base, lo - base + span)
        with _window(fd, base, length) as data:
            start = lo - base
            end = data.rfind(b"\n", start) + 1
            if end > start:
                model = _scan_region(data, start, model, history)
        if end <= start:  # no newline within a window of ``lo``
            if base + length >= size:
                return  # the file's last line is still being written
            passed, ended = lines.pass_line(fd, lo, size)
            if not ended:
                return  # a long line still being written: the next scan meets it again
            lines.note_long_line(path, passed, lo)
            lo += passed
        else:
            lo = base + end


def _window(fd: int, offset: int, length: int) -> mmap.mmap:
    populate = getattr(mmap, "MAP_POPULATE", 0)  # Linux: fault the window in one go
    return mmap.mmap(fd, length, flags=mmap.MAP_SHARED | populate, prot=mmap.PROT_READ,
                     offset=offset)


@dataclass
class _Calls:
    """The calls of a window, in order: each one's line and usage object, and where a
    ``turn_context`` line names the model of the calls after it."""

    lines: list[bytes] = field(default_factory=list)
    objects: list[bytes] = field(default_factory=list)
    #: (index of the first call after it, the turn_context line, where its type is)
    turns: list[tuple[int, bytes, int]] = field(default_factory=list)

    def call(self, line: bytes, at: int) -> None:
        """The call whose ``"last_token_usage":{`` is at ``at`` of ``line``."""
        self.lines.append(line)
        self.objects.append(line[at + _OBJECT: line.find(b"}", at) + 1])

    def unusual(self, line: bytes) -> None:
        """A line whose head holds no known type: searched whole for both."""
        usage, turn = line.find(USAGE), line.find(TURN)
        if turn >= 0 and not 0 <= usage < turn:
            self.turns.append((len(self.lines), line, turn))
        if usage >= 0:
            self.call(line, usage)
        if 0 <= usage < turn:
            self.turns.append((len(self.lines), line, turn))

    def drop(self, line: bytes) -> None:
        """Forget what ``line`` — the last one read — added."""
        if self.lines and self.lines[-1] is line:
            del self.lines[-1], self.objects[-1]
        while self.turns and self.turns[-1][1] is line:
            del self.turns[-1]


def _calls(data: mmap.mmap, start: int) -> _Calls:
    """The calls and turns in the complete lines of ``data`` from ``start`` — one pass over the
    lines (``readline``: the newline found and the line copied in C). A line's Python steps are
    one slice and one dict lookup: its type is looked up where the line before had it (a
    rollout's lines all start with the same fixed-width timestamp, and since codex-cli 0.169 an
    ordinal whose width changes only at 10, 100, …); a line whose type is not there has it
    found (a bounded ``find`` in its head). Lines are at most a window long (one line's
    limit)."""
    found = _Calls()
    data.seek(start)
    kinds, turns = _KINDS.get, found.turns
    lines_, objects = found.lines, found.objects
    at, end = _AT, _AT + _KEY  # where the line before had its type
    line = b""
    for line in iter(data.readline, b""):
        # {"timestamp":"<24 chars>",["ordinal":<n>,]"type":"<kind>…
        kind = kinds(line[at:end])
        if kind is _SKIP:  # (most lines: one test)
            continue
        if kind is None:
            if (where := line.find(TYPE, 0, HEAD)) >= 0 and (
                    kind := kinds(line[where:where + _KEY])) is not None:
                at, end = where, where + _KEY
            else:
                kind = _UNUSUAL
            if kind is _SKIP:
                continue
        if kind is _EVENT:
            if line.startswith(_TOKEN_COUNT, at + _PAYLOAD) and (
                    hit := line.find(USAGE, at + _AFTER)) >= 0:
                lines_.append(line)  # _Calls.call, inlined: one call a model call saved
                objects.append(line[hit + _OBJECT: line.find(b"}", hit) + 1])
        elif kind is _TURN:
            turns.append((len(lines_), line, at))
        else:
            found.unusual(line)
    if line[-1:] != b"\n":
        found.drop(line)  # the last line, still being written: the next window or scan reads it
    return found


def _scan_region(data: mmap.mmap, start: int, model: str, history: UsageHistory) -> str:
    """Count the calls in the complete lines of ``data`` from ``start``; returns the model in
    force after them."""
    found = _calls(data, start)
    segments, model_after = _segments(found, model)
    ends = [first for first, _, _ in segments[1:]] + ([len(found.lines)] if segments else [])
    for (first, day, name), end in zip(segments, ends, strict=True):
        calls, sums = _usage(found, first, end)
        if calls and day[4:5] == b"-":
            history.daily.setdefault((day.decode(errors="replace"), name),
                                     TokenCounts()).add_sums(calls, sums)
    for line in found.lines[::QUOTA_SAMPLE]:
        _quota_point(line, history)
    return model_after


def _usage(found: _Calls, first: int, end: int) -> tuple[int, Sums]:
    """How many of the calls ``[first, end)`` could be read, and their counts summed: their
    usage objects decoded in one go, else one by one; a call whose object will not decode
    alone (a nested value, an unexpected layout) has its line decoded, and one that cannot be
    read at all is left out."""
    from core.providers.codex.usagejson import usage_sums

    objects = found.objects[first:end]
    sums = usage_sums(objects)
    if sums is not None:
        return len(objects), sums
    rows = [usage_sums([one]) or _slow_usage(line)
            for line, one in zip(found.lines[first:end], objects, strict=True)]
    read = [row for row in rows if row is not None]
    if not read:
        return 0, (0, 0, 0, 0, 0)
    a, b, c, d, e = (sum(column) for column in zip(*read, strict=True))
    return len(read), (a, b, c, d, e)


def _day_runs(lines_: list[bytes]) -> list[tuple[int, bytes]]:
    """(first call index, day) of each run of calls on one day — the ``YYYY-MM-DD`` of a
    line's fixed-width timestamp prefix.

    A rollout is written in time order, so the day changes rarely: the first and last call of a
    range are compared and only a range that spans midnight is bisected — a handful of lookups
    per file instead of one per line.
    """
    runs: list[tuple[int, bytes]] = []
    lo = 0
    while lo < len(lines_):
        day, hi = lines_[lo][14:24], len(lines_) - 1
        if lines_[hi][14:24] != day:
            left, right = lo, hi  # day(left) == day, day(right) != day
            while right - left > 1:
                middle = (left + right) // 2
                if lines_[middle][14:24] == day:
                    left = middle
                else:
                    right = middle
            hi = left
        runs.append((lo, day))
        lo = hi + 1
    return runs


def _segments(found: _Calls, model: str) -> tuple[list[tuple[int, bytes, str]], str]:
    """(first call index, day, model) wherever the day or the model changes; the last model."""
    models = [(index, _model(line, at)) for index, line, at in found.turns]
    days = _day_runs(found.lines)
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
        # a turn of the same model on the same day goes on with the same run (its calls are
        # decoded in one go)
        if point < len(found.lines) and (not result or result[-1][1:] != (day, model)):
            result.append((point, day, model))
    for _, name in models[m:]:
        model = name or model
    return result, model


def _model(line: bytes, at: int) -> str | None:
    """The ``"model":"…"`` of a turn_context line (from its type at ``at``), or None."""
    if (start := line.find(_MODEL, at)) < 0 or (end := line.find(b'"', start + len(_MODEL))) < 0:
        return None
    return line[start + len(_MODEL):end].decode(errors="replace")  # (a file in another
    # encoding names its model as best it can, never ends the scan)


def _slow_usage(line: bytes) -> Sums | None:
    """The same numbers from a line in an unexpected layout (decoded properly; the line is at
    most a window, so within the limit of one line)."""
    from core.providers.codex.usagejson import FIELDS

    try:
        record = jsonload.loads(line)
        usage = record["payload"]["info"]["last_token_usage"]
        return tuple(int(usage.get(name) or 0) for name in FIELDS)  # type: ignore[return-value]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _quota_point(line: bytes, history: UsageHistory) -> None:
    hour = line[14:27]
    if hour in history.hours:
        return
    history.hours.add(hour)
    if b'"rate_limits":{' not in line:
        return  # (a line over the limit of one line never gets here: _scan_file passes it)
    from core.providers.codex.limits import LimitShapeError, rollout_slots, windows_by_id
    from core.providers.codex.usagejson import stamp_and_limits

    found = stamp_and_limits(line)
    if found is None:
        return
    try:
        when = datetime.fromisoformat(found[0].replace("Z", "+00:00")).astimezone(UTC)
        windows = windows_by_id(rollout_slots(found[1], when))  # (from_rollout's checks)
        micros = (when - EPOCH) // MICROSECOND
    except (ValueError, KeyError, TypeError, LimitShapeError):
        return
    for window_id, window in windows.items():
        if window.used_percent is not None:
            history.quota.setdefault(window_id, []).append((micros, window.used_percent))
