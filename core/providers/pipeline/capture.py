"""A step's output, streamed to disk as it comes: masked, capped, in bounded memory.

Each of a step's pipes is read in 64 KiB chunks into a :class:`CappedFile` — never held whole
in memory (300 MB of output once took the host from 45 to 660 MB). Secrets are masked on the way
(:class:`core.redact.StreamMasker`). Past its cap a file keeps nothing more and says how much it
dropped; for the step's artifact (its stdout) that makes the attempt fail with
``output_too_large`` — a cut artifact is never passed on as if it were whole.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from core.atomic import private_dir
from core.redact import Redactor, StreamMasker

CHUNK = 1 << 16


class CappedFile:
    """Masked bytes into ``handle``, at most ``limit`` of them. Attributes: ``seen`` (bytes
    read from the pipe), ``written``, ``overflowed``."""

    def __init__(self, handle: BinaryIO, redactor: Redactor, limit: int) -> None:
        self.handle = handle
        self.limit = limit
        self._masker = StreamMasker(redactor)
        self.seen = 0
        self.written = 0
        self.overflowed = False

    def write(self, chunk: bytes) -> None:
        self.seen += len(chunk)
        self._put(self._masker.feed(chunk))

    def _put(self, data: bytes) -> None:
        room = self.limit - self.written
        if len(data) > room:
            self.overflowed = True
            data = data[:max(room, 0)]
        if data:
            self.handle.write(data)
            self.written += len(data)

    def finish(self) -> None:
        self._put(self._masker.finish())
        self.handle.flush()


async def pump(stream: asyncio.StreamReader | None, sink: CappedFile,
               on_overflow: Callable[[], None] | None = None) -> None:
    """Copy ``stream`` into ``sink`` until EOF; call ``on_overflow`` once when it overflows
    (it goes on reading, and dropping, so the writer never blocks on a full pipe)."""
    if stream is None:
        return
    told = False
    while chunk := await stream.read(CHUNK):
        sink.write(chunk)
        if sink.overflowed and not told and on_overflow is not None:
            told = True
            on_overflow()
    sink.finish()


def open_partial(path: Path) -> BinaryIO:
    """A new file for an artifact being written (renamed into place when complete)."""
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    return os.fdopen(fd, "wb")


def sync_close(handle: BinaryIO) -> None:
    handle.flush()
    os.fsync(handle.fileno())
    handle.close()
