"""Atomic file writes: a temporary file beside the target, fsync, ``os.replace``, fsync the dir.

The temporary file is named ``.<target>.<pid>.<random>.tmp``: a writer killed half-way leaves
it behind, and :func:`remove_leftovers` (run by a host at start, under its lease) removes those
whose writer is gone.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from core.private import private_dir

#: ``.<name>.<pid>.<random>.tmp`` — and the older ``.<name>.<random>.tmp`` (no pid)
_LEFTOVER = re.compile(r"^\..+?\.(?:(?P<pid>\d+)\.)?[a-z0-9_]{8}\.tmp$|"
                       r"^\..+\.(?P<pid2>\d+)\.(?:restore\.)?tmp$")
#: a temporary file without a pid is only removed when it is older than this
_OLD_SECONDS = 60.0


def atomic_write_bytes(path: Path, data: bytes, mode: int = 0o600, durable: bool = True) -> None:
    """Replace ``path`` by ``data`` in one step. ``durable=False`` skips the fsyncs, for files
    whose loss in a power cut costs nothing (a heartbeat)."""
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp",
                               dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        _fsync_dir(path.parent)


#: Windows sharing violations (ERROR_ACCESS_DENIED, _SHARING_VIOLATION, _LOCK_VIOLATION): a
#: virus scanner or indexer holds the target for a moment (retry-table.md, the last row)
_SHARING = (5, 32, 33)
REPLACE_RETRY_SECONDS = 2.5


def replace(tmp: str | Path, path: Path, sleep: Callable[[float], None] = time.sleep) -> None:
    """``os.replace``, retried on a Windows sharing violation: 50 ms doubling to 1 s, at most
    about 2.5 s, then the error. Elsewhere (and for any other error) it fails at once."""
    delay, waited = 0.05, 0.0
    while True:
        try:
            os.replace(tmp, path)
            return
        except PermissionError as exc:
            if getattr(exc, "winerror", None) not in _SHARING or waited >= REPLACE_RETRY_SECONDS:
                raise
        sleep(delay)
        waited += delay
        delay = min(delay * 2, 1.0)


def atomic_write_text(path: Path, text: str, mode: int = 0o600, durable: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode, durable)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # nothing of ours is under way before the host has started
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _leftover(entry: os.DirEntry[str], now: float) -> bool:
    match = _LEFTOVER.match(entry.name)
    if match is None or not entry.is_file(follow_symlinks=False):
        return False
    pid = match.group("pid") or match.group("pid2")
    if pid is not None:
        return not _alive(int(pid))
    try:
        return now - entry.stat(follow_symlinks=False).st_mtime > _OLD_SECONDS
    except OSError:
        return False


def remove_leftovers(root: Path, now: float | None = None) -> Iterator[Path]:
    """Remove the temporary files of interrupted atomic writes under ``root``; yields each.

    ``now`` is the file-system time to judge pid-less files by (their mtime is file-system
    time, not the injected clock).
    """
    if now is None:
        now = _fs_now(root)
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            elif _leftover(entry, now):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    yield Path(entry.path)


def _fs_now(root: Path) -> float:
    """The file system's idea of now: the mtime of a file we touch there."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".now.", dir=root)
    except OSError:
        return 0.0  # cannot tell: pid-less files are left alone
    try:
        return os.fstat(fd).st_mtime
    finally:
        os.close(fd)
        os.unlink(probe)
