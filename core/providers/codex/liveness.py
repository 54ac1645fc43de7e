"""Is some other Codex process working on a thread right now?

A live Codex keeps the thread's rollout file open while it writes to it, and newer builds also
hold an ``flock`` on ``$CODEX_HOME/thread-writer-locks/<thread>.lock``. Goalkeeper must never
resume a thread under such a process (two writers on one thread), so before every resume it looks
for holders of either file:

* Linux: ``/proc/<pid>/fd`` links and ``/proc/locks`` (nothing is opened or locked to find out);
* elsewhere: ``lsof`` when it is installed;
* with neither, a rollout written in the last minute counts as live.

Processes that are Goalkeeper's own — this process (reading the file), and every process
descended from a Codex it started — do not count. Other children of Goalkeeper do (a Codex the
user opened from it in a terminal is the user's).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from core.providers.procstat import parent

_PROC = Path("/proc")
RECENT_WRITE_SECONDS = 60.0


@dataclass(frozen=True)
class Holder:
    pid: int
    command: str
    path: Path
    argv: tuple[str, ...] = ()

    def describe(self) -> str:
        return f"{self.command} (pid {self.pid}) has {self.path.name} open"

    @property
    def shared_server(self) -> bool:
        """The shared app-server ``codex app-server daemon`` runs (``app-server --listen``):
        other clients reach it through ``codex app-server proxy``."""
        args = self.argv[1:]
        return "app-server" in args and ("--managed-daemon" in args or "--listen" in args)

    @property
    def tui(self) -> bool:
        """An interactive ``codex`` (no subcommand, or ``resume``/``fork``)."""
        args = [a for a in self.argv[1:] if not a.startswith("-")]
        return not args or args[0] in ("resume", "fork")


def control_socket(home: Path) -> Path:
    """Where ``codex app-server daemon`` listens (0.169.0 and 0.171.0; ``daemon start``
    prints it as ``socketPath``)."""
    return home / "app-server-control" / "app-server-control.sock"


def control_address(home: Path) -> str:
    """The daemon's control socket as ``codex exec resume --remote`` takes it (0.171.0:
    ``ws://host:port``, ``wss://host:port``, ``unix://`` or ``unix://PATH``)."""
    return f"unix://{control_socket(home)}"


def lock_file(home: Path, thread_id: str) -> Path:
    return home / "thread-writer-locks" / f"{thread_id}.lock"


def find_holders(paths: Iterable[Path], ours: Iterable[int]) -> list[Holder] | None:
    """Live processes other than ours holding any of ``paths``; None when this cannot be told."""
    targets = {}
    for path in paths:
        with contextlib.suppress(OSError):
            st = path.stat()
            targets[(st.st_dev, st.st_ino)] = path
    if _PROC.is_dir() and (_PROC / "self" / "fd").is_dir():
        holders = _proc_fd_holders(targets) + _proc_lock_holders(targets)
    elif shutil.which("lsof"):
        holders = _lsof_holders(targets)
    else:
        return None
    unique = {h.pid: h for h in holders if h.pid != os.getpid()}  # our own reads do not count
    runs = set(ours)
    return [h for h in unique.values() if not _descends_from(h.pid, runs)]


def _proc_fd_holders(targets: dict[tuple[int, int], Path]) -> list[Holder]:
    found = []
    for entry in _pids():
        fd_dir = _PROC / str(entry) / "fd"
        try:
            fds = list(os.scandir(fd_dir))
        except OSError:
            continue  # gone, or another user's process
        for fd in fds:
            try:
                st = os.stat(fd.path)
            except OSError:
                continue
            path = targets.get((st.st_dev, st.st_ino))
            if path is not None:
                found.append(Holder(entry, _command(entry), path, _argv(entry)))
    return found


def _proc_lock_holders(targets: dict[tuple[int, int], Path]) -> list[Holder]:
    by_inode = {(os.major(dev), os.minor(dev), ino): p for (dev, ino), p in targets.items()}
    try:
        lines = (_PROC / "locks").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        parts = line.split()
        if len(parts) < 6 or "->" in parts:
            continue  # a waiter, not a holder
        with contextlib.suppress(ValueError):
            pid = int(parts[4])
            major, minor, inode = parts[5].split(":")
            path = by_inode.get((int(major, 16), int(minor, 16), int(inode)))
            if path is not None:
                found.append(Holder(pid, _command(pid), path, _argv(pid)))
    return found


def _lsof_holders(targets: dict[tuple[int, int], Path]) -> list[Holder]:
    found: list[Holder] = []
    for path in targets.values():
        try:
            out = subprocess.run(["lsof", "-t", "--", str(path)], capture_output=True, text=True,
                                 timeout=10, stdin=subprocess.DEVNULL, check=False).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        found.extend(Holder(int(pid), "process", path) for pid in out.split() if pid.isdigit())
    return found


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir(_PROC) if name.isdigit()]
    except OSError:
        return []


def _command(pid: int) -> str:
    try:
        return (_PROC / str(pid) / "comm").read_text().strip() or "a process"
    except OSError:
        return "a process"


def _argv(pid: int) -> tuple[str, ...]:
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return ()
    return tuple(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)


def _descends_from(pid: int, ancestors: set[int]) -> bool:
    seen = set()
    current: int | None = pid
    while current is not None and current > 1 and current not in seen:
        if current in ancestors:
            return True
        seen.add(current)
        current = parent(current)
    return False
