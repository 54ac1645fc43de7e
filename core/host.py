"""The host lease: exactly one process runs goals and the scheduler for a data directory.

The lease is an exclusive ``flock`` on ``host.lock`` — the kernel drops it when the holder dies, so
a crashed host never blocks the next one — plus ``host.json`` saying who holds it (pid, kind,
since, control socket), so a second host and the CLI can name the running one.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import IO

from core.atomic import atomic_write_text
from core.clock import iso
from core.i18n import _, localized
from core.paths import Paths


@dataclass(frozen=True)
class HostInfo:
    pid: int
    kind: str  # "daemon", "gui", "demo"
    since: str
    socket: str
    data_dir: str

    def describe(self) -> str:
        return _("a Goalkeeper {kind} (pid {pid}, running since {since})").format(
            kind=localized(self.kind), pid=self.pid, since=self.since)


class HostAlreadyRunning(Exception):
    def __init__(self, paths: Paths, info: HostInfo | None) -> None:
        who = info.describe() if info else _("another Goalkeeper process")
        super().__init__(
            _("{who} is already the host for {dir}; only one host may run goals for a data "
              "directory. Use that one, or stop it first.").format(who=who, dir=paths.data_dir)
        )
        self.info = info


def read_host_info(paths: Paths) -> HostInfo | None:
    try:
        data = json.loads(paths.host_file.read_text(encoding="utf-8"))
        return HostInfo(**data)
    except (OSError, ValueError, TypeError):
        return None


def host_running(paths: Paths) -> HostInfo | None:
    """The live host for ``paths``, or None. Probes the lock without taking it for long."""
    if not paths.lock_file.exists():
        return None
    with open(paths.lock_file, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return read_host_info(paths) or HostInfo(0, "host", "?", "", str(paths.data_dir))
        fcntl.flock(handle, fcntl.LOCK_UN)
    return None


class HostLease:
    """Held for the lifetime of a host. Use as a context manager."""

    def __init__(self, paths: Paths, kind: str, now: datetime) -> None:
        self.paths = paths
        self.kind = kind
        self.now = now
        self._handle: IO[str] | None = None

    def acquire(self) -> HostInfo:
        self.paths.ensure()
        handle = open(self.paths.lock_file, "a+")  # noqa: SIM115 - held for the host's lifetime
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise HostAlreadyRunning(self.paths, read_host_info(self.paths)) from None
        self._handle = handle
        info = HostInfo(os.getpid(), self.kind, iso(self.now) or "", str(self.paths.socket_path),
                        str(self.paths.data_dir))
        atomic_write_text(self.paths.host_file, json.dumps(asdict(info)))
        return info

    def release(self) -> None:
        if self._handle is None:
            return
        try:
            Path(self.paths.host_file).unlink(missing_ok=True)
        finally:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None

    def __enter__(self) -> HostInfo:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
