"""Reading rollouts from the end: the newest state of a session is in its last lines.

A rollout only ever grows, so the latest rate-limit snapshot and the latest goal status are found
by searching *backwards* in large chunks for a byte needle and decoding just the lines that hold
it — a few megabytes read instead of the whole history. A last line without its newline is being
written right now: it is never looked at here (the follower retries it once it is complete).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

CHUNK = 1 << 20
_STEP = 1 << 16


def complete_end(fd: int, size: int) -> int:
    """The offset just past the last newline (0 when there is none)."""
    hi = size
    while hi > 0:
        lo = max(0, hi - _STEP)
        data = os.pread(fd, hi - lo, lo)
        index = data.rfind(b"\n")
        if index >= 0:
            return lo + index + 1
        hi = lo
    return 0


def _line_start(fd: int, pos: int, buf: bytearray, lo: int) -> int:
    index = buf.rfind(b"\n", 0, pos - lo)
    if index >= 0:
        return lo + index + 1
    hi = lo
    while hi > 0:  # the line began before this chunk
        start = max(0, hi - _STEP)
        index = os.pread(fd, hi - start, start).rfind(b"\n")
        if index >= 0:
            return start + index + 1
        hi = start
    return 0


def _line_end(fd: int, pos: int, buf: bytearray, lo: int, n: int, limit: int) -> int:
    index = buf.find(b"\n", pos - lo, n)
    if index >= 0:
        return lo + index
    at = lo + n
    while at < limit:  # the line goes on past this chunk
        data = os.pread(fd, min(_STEP, limit - at), at)
        index = data.find(b"\n")
        if index >= 0:
            return at + index
        at += len(data)
    return limit


def scan_back(path: Path, needle: bytes, accept: Callable[[bytes], T | None],
              budget: int | None = None) -> T | None:
    """``accept(line)`` for the last complete line holding ``needle`` that it accepts.

    Lines are tried newest first; ``accept`` returns None to go on searching. ``budget`` bounds
    the bytes searched (None: the whole file).
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        limit = complete_end(fd, size)
        return _scan(fd, needle, accept, limit, budget)
    finally:
        os.close(fd)


def _scan(fd: int, needle: bytes, accept: Callable[[bytes], T | None], limit: int,
          budget: int | None) -> T | None:
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    hi, searched = limit, 0
    while hi > 0:
        lo = max(0, hi - CHUNK)
        n = os.preadv(fd, [view[: hi - lo]], lo)
        end = n
        while (index := buf.rfind(needle, 0, end)) >= 0:
            start = _line_start(fd, lo + index, buf, lo)
            stop = _line_end(fd, lo + index, buf, lo, n, limit)
            line = bytes(buf[start - lo: stop - lo]) if start >= lo and stop <= lo + n else (
                os.pread(fd, stop - start, start))
            result = accept(line)
            if result is not None:
                return result
            if start < lo:  # the rejected line began in an earlier chunk: go on from there
                break
            end = start - lo
        else:
            start = lo + len(needle) - 1 if lo > 0 else 0  # a needle may straddle the cut
        searched += n
        if budget is not None and searched >= budget:
            return None
        hi = start if lo > 0 else 0
    return None


def first_line(path: Path, max_bytes: int = 8 << 20) -> bytes | None:
    """The first complete line of a file (the ``session_meta`` header), or None."""
    fd = os.open(path, os.O_RDONLY)
    try:
        data = b""
        while len(data) < max_bytes:
            chunk = os.pread(fd, _STEP if not data else len(data), len(data))
            if not chunk:
                return None
            index = chunk.find(b"\n")
            if index >= 0:
                return data + chunk[:index]
            data += chunk
        return None
    finally:
        os.close(fd)
