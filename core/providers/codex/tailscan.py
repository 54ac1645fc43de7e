"""Reading rollouts from the end: the newest state of a session is in its last lines.

A rollout only ever grows, so the latest rate-limit snapshot and the latest goal status are found
by searching *backwards* for a byte needle and decoding just the lines that hold it. A last line
without its newline is being written right now: it is never looked at here (the follower retries
it once it is complete).

Files are memory-mapped read-only: searching a mapping skips the copy a ``read`` makes, which is
most of the cost of scanning a gigabyte of history. This relies on rollouts being append-only
(Codex never truncates one in place; a file truncated under a live mapping would fault).
Forward ``find`` is about twice as fast as ``rfind`` in CPython, so each backwards step first asks
whether its chunk holds the needle at all; chunks already searched are released from the
process's resident set as the scan moves on.

That question is most of a start-up scan (a first start searches every rollout for its last goal
line: a gigabyte). ``mmap.find`` holds the GIL for all of it, so the other providers starting in
their threads at the same time wait; where the C library has ``memmem`` (Linux, macOS) it is
asked instead, through ctypes, which lets go of the GIL for the call (and is about twice as
fast). That needs the mapping's address: a copy-on-write mapping exports one (nothing is ever
written, so no page is copied); the read-only one does not.
"""

from __future__ import annotations

import contextlib
import functools
import mmap
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from core.providers import lines

T = TypeVar("T")
#: ``last(needle, lo, hi)``: where the last ``needle`` lying wholly inside ``[lo, hi)`` of a
#: mapping starts, or -1
Last = Callable[[bytes, int, int], int]

CHUNK = 4 << 20
_STEP = 1 << 16


def scan_back(path: Path, needle: bytes, accept: Callable[[bytes], T | None],
              budget: int | None = None, floor: int = 0) -> T | None:
    """``accept(line)`` for the last complete line holding ``needle`` that it accepts.

    Lines are tried newest first; ``accept`` returns None to go on searching. ``budget`` bounds
    how many bytes from the end are searched (None: the whole file); ``floor`` skips the lines
    that ended before that offset (the line it falls in is still searched).
    """
    found = scan_back_at(path, needle, accept, budget, floor)
    return found[0] if found is not None else None


def scan_back_at(path: Path, needle: bytes, accept: Callable[[bytes], T | None],
                 budget: int | None = None, floor: int = 0) -> tuple[T, int] | None:
    """:func:`scan_back`, with the offset just past the line it accepted. A line over the limit
    of one line (:mod:`core.providers.lines`) is passed over, never sliced out whole."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            return None
        with mapped(handle.fileno(), size) as (data, last):
            limit = data.rfind(b"\n", max(0, size - _STEP)) + 1  # past the last complete line
            if limit == 0:
                limit = data.rfind(b"\n") + 1
            lowest = max(floor, limit - budget if budget is not None else 0, 0)
            if lowest > 0:
                lowest = data.rfind(b"\n", 0, min(lowest, limit)) + 1
            return _backwards(data, last, needle, accept, lowest, limit, path)


@contextlib.contextmanager
def mapped(fd: int, size: int) -> Iterator[tuple[mmap.mmap, Last]]:
    """``size`` bytes of ``fd`` mapped, with the fastest ``last`` there is for them."""
    search = _memmem()
    if search is not None:
        try:
            data = mmap.mmap(fd, size, access=mmap.ACCESS_COPY)
        except OSError:  # e.g. strict overcommit accounting refusing a private mapping
            search = None
    if search is None:
        with mmap.mmap(fd, size, access=mmap.ACCESS_READ) as data:
            yield data, functools.partial(_last_found, data)
        return
    import ctypes

    with data:
        view = ctypes.c_char.from_buffer(data)  # its first byte: no array type per size
        base = ctypes.addressof(view)

        def last(needle: bytes, lo: int, hi: int) -> int:
            found, size = -1, len(needle)
            while hi - lo >= size and (at := search(base + lo, hi - lo, needle, size)):
                found = at - base  # the needles are rare: walk them forwards to the last
                lo = found + 1
            return found

        try:
            yield data, last
        finally:
            del view  # the mapping cannot be closed while the export lives


def _last_found(data: mmap.mmap, needle: bytes, lo: int, hi: int) -> int:
    return data.rfind(needle, lo, hi) if data.find(needle, lo, hi) >= 0 else -1


@functools.cache
def _memmem() -> Callable[[int, int, bytes, int], Any] | None:
    """The C library's ``memmem`` (ctypes releases the GIL while it runs), or None."""
    try:
        import ctypes

        function = ctypes.CDLL(None).memmem  # the symbols already loaded: libc's among them
    except (ImportError, OSError, AttributeError, TypeError):
        return None
    function.restype = ctypes.c_void_p
    function.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
    found: Callable[[int, int, bytes, int], Any] = function
    return found


def _backwards(data: mmap.mmap, last: Last, needle: bytes,
               accept: Callable[[bytes], T | None], floor: int, limit: int, path: Path
               ) -> tuple[T, int] | None:
    hi = limit
    while hi > floor:
        lo = max(floor, hi - CHUNK)
        end = hi
        index = last(needle, lo, hi)
        while index >= 0:
            start = _line_start(data, index)
            stop = _line_end(data, index, limit)
            if lines.too_long(start, stop):
                lines.note_long_line(path, stop + 1 - start, start)
                result = None
            else:
                result = accept(data[start:stop])
            if result is not None:
                return result, stop + 1
            end = start  # a rejected line: go on before it
            index = last(needle, lo, end) if end > lo else -1
        if lo == floor:
            break  # searched to the floor (the mapping is closed next: nothing to release)
        # the next window overlaps this one by a needle's length but one, so a needle cut by the
        # window edge is still found (a rejected line's start is a newline: nothing straddles it)
        release(data, lo + len(needle), hi)
        hi = min(end, lo + len(needle) - 1)
    return None


def _line_start(data: mmap.mmap, index: int) -> int:
    """Where the line holding ``index`` starts, searched back a chunk at a time: the pages of a
    line of hundreds of megabytes are let go as the search passes them (else the whole line
    became resident: 256 MiB of one)."""
    hi = index
    while hi > 0:
        lo = max(0, hi - CHUNK)
        found = data.rfind(b"\n", lo, hi)
        if found >= 0:
            return found + 1
        release(data, lo, hi)
        hi = lo
    return 0


def _line_end(data: mmap.mmap, index: int, limit: int) -> int:
    """Where the line holding ``index`` ends (its newline; ``limit`` is past one), searched a
    chunk at a time, as :func:`_line_start`."""
    lo = index
    while lo < limit:
        hi = min(limit, lo + CHUNK)
        found = data.find(b"\n", lo, hi)
        if found >= 0:
            return found
        release(data, lo, hi)
        lo = hi
    return -1


def release(data: mmap.mmap, start: int, end: int) -> None:
    """Drop the mapped pages of ``[start, end)`` from this process (not from the page cache).

    A scan touches every page of a file once; without this, a 100 MB rollout stays in the
    process's resident set until the map is closed.
    """
    advice = getattr(mmap, "MADV_DONTNEED", None)
    first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE  # whole pages inside the range only
    if advice is not None and end > first:
        with contextlib.suppress(OSError, ValueError):
            data.madvise(advice, first, end - first)


def complete_end(fd: int, size: int) -> int:
    """The offset just past the last newline before ``size`` (0 when there is none)."""
    hi = size
    while hi > 0:
        lo = max(0, hi - _STEP)
        index = os.pread(fd, hi - lo, lo).rfind(b"\n")
        if index >= 0:
            return lo + index + 1
        hi = lo
    return 0


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
