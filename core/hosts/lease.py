"""The host lease: exactly one process runs goals and the scheduler for a data directory.

The lease is an exclusive ``flock`` on ``host.lock`` — the kernel drops it when the holder dies, so
a crashed host never blocks the next one — plus ``host.json`` saying who holds it (pid, kind,
since, control socket, epoch) and when it last said it was alive (``heartbeat``, rewritten every
``host_heartbeat_seconds``), so a second host and the CLI can name the running one.

A host that holds the lock but is *hung* (stopped with SIGSTOP, wedged) would block every new
host forever. When its heartbeat is older than ``host_stale_seconds`` and it does not answer a
ping either, a new host may **replace** it: it takes ``host.takeover`` instead of the lock (one
replacement at a time), opens the store — which bumps the host epoch, the *fence* every write of
the old host checks, so the old one can no longer write — and rewrites ``host.json``. The old
host, should it ever run again, finds the epoch moved (:class:`~core.store.LeaseLost`) or
``host.json`` naming another pid, and stops without writing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import logging
import os
import secrets
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from core.atomic import atomic_write_text, open_private
from core.clock import iso, parse_iso
from core.i18n import _, localized
from core.paths import Paths

log = logging.getLogger("goalkeeper")


@dataclass(frozen=True)
class HostInfo:
    pid: int
    kind: str  # "daemon", "gui", "demo"
    since: str
    socket: str
    data_dir: str
    epoch: int = 0
    heartbeat: str | None = None
    replaced: int | None = None  # the pid of the hung host this one replaced
    token: str = ""  # tells this lease apart from any other (a pid can be reused)

    def describe(self) -> str:
        return _("a Goalkeeper {kind} (pid {pid}, running since {since})").format(
            kind=localized(self.kind), pid=self.pid, since=self.since)

    def silent_for(self, now: datetime) -> float | None:
        """Seconds since the last heartbeat (None: never written one)."""
        beat = parse_iso(self.heartbeat)
        return None if beat is None else (now - beat).total_seconds()


class HostAlreadyRunning(Exception):
    def __init__(self, paths: Paths, info: HostInfo | None, why: str = "") -> None:
        who = info.describe() if info else _("another Goalkeeper process")
        super().__init__(
            _("{who} is already the host for {dir}; only one host may run goals for a data "
              "directory. Use that one, or stop it first.").format(who=who, dir=paths.data_dir)
            + (f" {why}" if why else ""))
        self.info = info


def read_host_info(paths: Paths) -> HostInfo | None:
    try:
        data = json.loads(paths.host_file.read_text(encoding="utf-8"))
        known = {f.name for f in dataclasses.fields(HostInfo)}
        return HostInfo(**{k: v for k, v in data.items() if k in known})
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def takeover_file(paths: Paths) -> Path:
    return paths.data_dir / "host.takeover"


def _locked(path: Path) -> bool:
    """Whether another process holds ``path``'s flock (probed without keeping it)."""
    if not path.exists():
        return False
    try:
        handle = open(path)  # noqa: SIM115 - closed below
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def host_running(paths: Paths) -> HostInfo | None:
    """The live host for ``paths``, or None. Probes the locks without taking them for long."""
    if not (_locked(paths.lock_file) or _locked(takeover_file(paths))):
        return None
    return read_host_info(paths) or HostInfo(0, "host", "?", "", str(paths.data_dir))


def _try_lock(path: Path) -> IO[str] | None:
    try:
        handle = os.fdopen(open_private(path, os.O_RDWR | os.O_APPEND), "a+")
    except OSError:
        handle = open(path)  # noqa: SIM115 - a read-only data directory: a shared lock file
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle


Probe = Callable[[HostInfo], bool]


class HostLease:
    """Held for the lifetime of a host. Attributes: ``replaced`` (the hung host taken over)."""

    def __init__(self, paths: Paths, kind: str, now: datetime, stale_seconds: float = 30.0
                 ) -> None:
        self.paths = paths
        self.kind = kind
        self.now = now
        self.stale_seconds = stale_seconds
        self._handle: IO[str] | None = None
        self._takeover: IO[str] | None = None
        self.replaced: HostInfo | None = None
        self.info: HostInfo | None = None

    def acquire(self, answers: Probe | None = None) -> HostInfo:
        """Take the lease — or replace a hung holder (silent past ``stale_seconds`` and not
        answering ``answers``); raises :class:`HostAlreadyRunning` otherwise."""
        self.paths.ensure()
        self._handle = _try_lock(self.paths.lock_file)
        if self._handle is None:
            self._replace(read_host_info(self.paths), answers)
        info = HostInfo(os.getpid(), self.kind, iso(self.now) or "", str(self.paths.socket_path),
                        str(self.paths.data_dir), heartbeat=iso(self.now),
                        replaced=self.replaced.pid if self.replaced else None,
                        token=secrets.token_hex(8))
        self.info = info
        self._write(info)
        return info

    def _replace(self, holder: HostInfo | None, answers: Probe | None) -> None:
        silent = holder.silent_for(self.now) if holder is not None else None
        if holder is None or silent is None or silent < self.stale_seconds:
            why = (_("It has not answered for {silent} s; a host silent for {stale} s can be "
                     "replaced.").format(silent=f"{silent:.0f}", stale=f"{self.stale_seconds:g}")
                   if silent and silent > 1 else "")
            raise HostAlreadyRunning(self.paths, holder, why)
        if answers is not None and answers(holder):
            raise HostAlreadyRunning(self.paths, holder)
        self._takeover = _try_lock(takeover_file(self.paths))
        if self._takeover is None:
            raise HostAlreadyRunning(self.paths, holder,
                                     _("Another host is replacing it now."))
        self.replaced = holder
        log.warning("replacing %s: silent for %.0f s and not answering; its writes are fenced "
                    "off", holder.describe(), silent)

    def _write(self, info: HostInfo) -> None:
        try:
            atomic_write_text(self.paths.host_file, json.dumps(asdict(info)), durable=False)
        except OSError as exc:
            log.warning("could not write %s: %s", self.paths.host_file, exc)

    def heartbeat(self, now: datetime, **changes: Any) -> bool:
        """Say we are alive (and, e.g., our ``epoch``); False when ``host.json`` names another
        host — this one was replaced and must stop."""
        if self.info is None:
            return False
        self.info = dataclasses.replace(self.info, heartbeat=iso(now), **changes)
        current = read_host_info(self.paths)
        if current is not None and current.token != self.info.token and (
                current.epoch >= self.info.epoch):
            return False  # the newer epoch wins, whoever wrote last
        self._write(self.info)
        if self._handle is None:  # a replacement: take the lock once the hung host is gone
            self._handle = _try_lock(self.paths.lock_file)
        return True

    def release(self) -> None:
        current = read_host_info(self.paths)
        if self.info is not None and current is not None and current.token == self.info.token:
            with contextlib.suppress(OSError):
                Path(self.paths.host_file).unlink(missing_ok=True)
        for handle in (self._handle, self._takeover):
            if handle is not None:
                with contextlib.suppress(OSError):
                    fcntl.flock(handle, fcntl.LOCK_UN)
                handle.close()
        self._handle = self._takeover = None
        self.info = None

    def __enter__(self) -> HostInfo:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
