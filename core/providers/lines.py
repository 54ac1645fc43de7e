"""Lines of the files other programs write, read bounded in memory (issue 21).

One 256 MiB line in a Claude transcript took the host to 700 MB: a reader that reads "the next
line" holds all of it, and ``json.loads`` several times more. Every provider's reader of JSON
lines goes through here instead:

* :func:`read_from` — from a line boundary, up to :data:`READ_LIMIT` bytes of lines, or one line
  longer than that up to :data:`LINE_LIMIT`; ``None`` when the line is longer still;
* :func:`pass_line` — such a line is then passed a chunk at a time (never held whole; it may
  still be being written: the caller keeps how much it passed and goes on at its next read);
* :func:`too_long` — a reader of a memory-mapped file asks before it slices a line out;
* :func:`note_long_line` — one note per line passed, naming the file and the line's size.

No record Claude or Codex writes comes near the limit (they are kilobytes; a pasted image or a
huge tool output stays far below), so nothing is lost but a line that would cost the host its
memory. The limits are read at each call, so a test can make them small.
"""

from __future__ import annotations

import logging
import os
from typing import Protocol

log = logging.getLogger(__name__)

#: per read: a huge append is read over several reads (one chunk each)
READ_LIMIT = 8 << 20
#: one line, at most: a longer one is passed unread, never held whole
LINE_LIMIT = 16 << 20


def read_from(fd: int, offset: int, available: int) -> bytes | None:
    """Up to :data:`READ_LIMIT` bytes at ``offset`` (a line boundary) of the ``available`` ones;
    when they hold no newline, the one line up to and including its newline, if it ends within
    :data:`LINE_LIMIT` (else what there is of it, when the file ends first: a line still being
    written); None: the line at ``offset`` is longer than :data:`LINE_LIMIT`."""
    chunk = READ_LIMIT
    data = os.pread(fd, min(available, chunk), offset)
    if len(data) < chunk or b"\n" in data:
        return data
    parts, size = [data], len(data)
    while size <= LINE_LIMIT:
        more = os.pread(fd, min(chunk, LINE_LIMIT + 1 - size, available - size), offset + size)
        if not more:
            return b"".join(parts)  # still being written: the next read sees the rest
        end = more.find(b"\n")
        if end >= 0 and size + end < LINE_LIMIT:
            return b"".join([*parts, more[:end + 1]])
        parts.append(more)
        size += len(more)
    return None


def pass_line(fd: int, offset: int, size: int) -> tuple[int, bool]:
    """Pass the line at ``offset`` (of a file ``size`` bytes long) one :data:`READ_LIMIT`
    chunk at a time: (bytes passed, whether its newline was among them)."""
    passed = 0
    while offset + passed < size:
        data = os.pread(fd, min(READ_LIMIT, size - offset - passed), offset + passed)
        if not data:
            break
        end = data.find(b"\n")
        if end >= 0:
            return passed + end + 1, True
        passed += len(data)
    return passed, False


def too_long(start: int, stop: int) -> bool:
    """Whether the line ``[start, stop)`` of a mapped file is over :data:`LINE_LIMIT`."""
    return stop - start > LINE_LIMIT


#: (file, offset) of the lines noted already: a line several scans meet is noted once
_noted: set[tuple[str, int]] = set()
_MAX_NOTED = 4096


def note_long_line(path: object, size: int, at: int | None = None) -> None:
    """The one note of a line passed unread (``at``: where it starts, when several readers
    may meet it — it is then noted only once)."""
    if at is not None:
        if (str(path), at) in _noted:
            return
        if len(_noted) >= _MAX_NOTED:
            _noted.clear()
        _noted.add((str(path), at))
    log.warning("skipping a line of %s: %d bytes, over the %d-byte limit of one line", path,
                size, LINE_LIMIT)


class Passing(Protocol):
    """A followed file's place: its path, the offset read to, the bytes of a long line passed."""

    offset: int
    skipping: int

    @property
    def path(self) -> object: ...


def passed_on(state: Passing, passed: int, ended: bool) -> None:
    """Move ``state`` past ``passed`` bytes of a long line (:func:`pass_line`), with its one
    note once the line's end was passed."""
    state.offset += passed
    state.skipping += passed
    if ended:
        note_long_line(state.path, state.skipping)
        state.skipping = 0
