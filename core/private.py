"""Private files and directories: what Goalkeeper writes about you is yours alone, whatever the
umask — files 0600, directories 0700 (issue 21).

Two helpers carry the rule, used wherever a path is created: :func:`private_dir` (create or
tighten a directory) and :func:`private_file` (create or tighten a file, before a library such
as SQLite opens it — SQLite gives ``-wal`` and ``-shm`` the main file's mode). The umask is never
changed: it is the process's, and the commands a pipeline step runs inherit it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> bool:
    """Create ``path`` (and missing parents) mode 0700, or tighten it to 0700 when it exists
    with looser modes. True when an existing directory was tightened (worth a note).

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
    return not missing and _tighten(path, DIR_MODE)


def private_file(path: Path) -> bool:
    """Create ``path`` empty mode 0600 when it does not exist, or tighten it to 0600. True when
    an existing file was tightened. The parent directory is made private too."""
    private_dir(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return _tighten(path, FILE_MODE)
    except OSError:
        return False  # a read-only directory: whoever opens it will say so
    os.close(fd)
    _chmod(path, FILE_MODE)
    return False


def tighten(path: Path) -> bool:
    """Tighten an existing file (0600) or directory (0700); nothing when it is absent."""
    try:
        info = path.lstat()
    except OSError:
        return False
    if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
        return False  # a link (not ours to judge), a socket (made private when bound)
    return _tighten(path, DIR_MODE if stat.S_ISDIR(info.st_mode) else FILE_MODE)


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


def _tighten(path: Path, mode: int) -> bool:
    try:
        loose = path.stat().st_mode & 0o777 & ~mode
    except OSError:
        return False
    return bool(loose) and _chmod(path, mode)


def _chmod(path: Path, mode: int) -> bool:
    try:
        os.chmod(path, mode)
    except OSError:
        return False
    return True
