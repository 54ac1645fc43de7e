"""Atomic, private file writes: a temporary file beside the target, fsync, ``os.replace``, fsync
the dir — and every file and directory private whatever the umask (issue 21): files 0600,
directories 0700, through :func:`private_dir` and :func:`private_file` wherever a path is
created (before a library such as SQLite opens it — SQLite gives ``-wal`` and ``-shm`` the main
file's mode). The umask itself is never changed: it is the process's, and the commands a
pipeline step runs inherit it.

The temporary file is named ``.<target>.<pid>.<random>.tmp``: a writer killed half-way leaves
it behind, and :func:`remove_leftovers` (run by a host at start, under its lease) removes those
whose writer is gone.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

#: ``.<name>.<pid>.<random>.tmp`` — and the older ``.<name>.<random>.tmp`` (no pid)
_LEFTOVER = re.compile(r"^\..+?\.(?:(?P<pid>\d+)\.)?[a-z0-9_]{8}\.tmp$|"
                       r"^\..+\.(?P<pid2>\d+)\.(?:restore\.)?tmp$")
#: a temporary file without a pid is only removed when it is older than this
_OLD_SECONDS = 60.0


def atomic_write_bytes(path: Path, data: bytes, mode: int = 0o600, durable: bool = True) -> None:
    """Replace ``path`` by ``data`` in one step. ``durable=False`` skips the fsyncs, for files
    whose loss in a power cut costs nothing (a heartbeat). Missing directories are made
    private; an existing one keeps its mode (it may be another program's: ``~/.claude``)."""
    private_dir(path.parent, tighten=False)
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


DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path, tighten: bool = True) -> bool:
    """Create ``path`` (and missing parents) mode 0700, or tighten it to 0700 when it exists
    with looser modes (unless ``tighten`` is False: an atomic write into someone else's
    directory — ``~/.claude``, ``~/.config/autostart`` — leaves its mode alone). True when an
    existing directory was tightened (worth a note).

    Parents that already exist are left alone (``~/.local/share`` is not ours); a directory
    that cannot be changed (a read-only file system, someone else's) is left as it is."""
    missing = []
    current = path
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=DIR_MODE)
        _chmod(directory, DIR_MODE)  # mkdir's mode is filtered by the umask
    return not missing and tighten and _tighten(path)


def private_file(path: Path) -> bool:
    """Create ``path`` empty mode 0600 when it does not exist, or tighten it to 0600. True when
    an existing file was tightened. The parent directory is made private too."""
    private_dir(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return _tighten(path)
    except OSError:
        return False  # a read-only directory: whoever opens it will say so
    os.close(fd)
    _chmod(path, FILE_MODE)
    return False


def tighten(path: Path) -> bool:
    """Tighten an existing file or directory to its owner's bits alone (0644 → 0600, 0755 →
    0700); nothing when it is absent, a link or a socket."""
    try:
        info = path.lstat()
    except OSError:
        return False
    if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
        return False  # a link (not ours to judge), a socket (made private when bound)
    return _tighten(path)


def tighten_tree(root: Path) -> list[Path]:
    """Tighten ``root`` and everything under it (links are not followed); what was loose."""
    loose = [root] if tighten(root) else []
    for directory, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = Path(directory, name)
            if tighten(path):
                loose.append(path)
    return loose


def open_private(path: Path, flags: int) -> int:
    """``os.open`` with mode 0600 for a new file, and an existing one tightened."""
    fd = os.open(path, flags | os.O_CREAT, FILE_MODE)
    with contextlib.suppress(OSError):
        if os.fstat(fd).st_mode & 0o777 & ~FILE_MODE:
            os.fchmod(fd, FILE_MODE)
    return fd


def _tighten(path: Path) -> bool:
    """Take the group's and others' bits away; the owner's stay (an executable stays one)."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return False
    return bool(mode & 0o077) and _chmod(path, mode & 0o700)


def _chmod(path: Path, mode: int) -> bool:
    try:
        os.chmod(path, mode)
    except OSError:
        return False
    return True


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
