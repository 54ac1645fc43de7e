"""Which Claude Code processes are running now, and on which session.

Claude Code 2.1.x keeps ``<config>/sessions/<pid>.json`` while a process runs::

    {"pid": 21970, "sessionId": "fc81a14f-…", "cwd": "/repo", "startedAt": 1796160952561,
     "procStart": "67308", "version": "2.1.328", "kind": "interactive", "entrypoint": "cli",
     "status": "idle", …}

A TUI says ``kind: "interactive"``, ``entrypoint: "cli"``; print mode (``claude -p``) writes the
same ``kind`` with ``entrypoint: "sdk-cli"`` — only the entrypoint tells them apart.

The file goes when the process exits, also when its terminal is closed (SIGHUP); a process
killed outright leaves it behind. So a file counts only while its pid is alive — and, on Linux,
is the same process: ``procStart`` is field 22 (start time in clock ticks) of
``/proc/<pid>/stat``, which tells a reused pid apart.

A process started with ``CLAUDE_CODE_RETRY_WATCHDOG`` set (any kind, print mode included) waits
out a usage limit inside itself instead of stopping; ``/proc/<pid>/environ`` tells (Linux, the
user's own processes), and :attr:`LiveProcess.retry_watchdog` says so (None: not known).

Only Goalkeeper reads here, never writes.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.providers import jsonload
from core.providers.procstat import environ, start_time

#: Claude Code's retry watchdog; with ``…_SCOPE=capacity`` it leaves usage limits alone
WATCHDOG = "CLAUDE_CODE_RETRY_WATCHDOG"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LiveProcess:
    """A running Claude Code process and the session it has open."""

    pid: int
    session_id: str
    kind: str  # "interactive" (a TUI), "bg", "daemon", "daemon-worker"
    entrypoint: str | None
    proc_start: str | None
    path: str
    #: started with the retry watchdog on usage limits (None: its environment is not readable)
    retry_watchdog: bool | None = None

    @property
    def interactive(self) -> bool:
        """A TUI the user sits at (print mode and the SDKs say ``sdk-…``)."""
        return self.kind == "interactive" and not (self.entrypoint or "").startswith("sdk")


def read_process_file(path: Path) -> LiveProcess | None:
    """The process a ``sessions/<pid>.json`` describes (None when unreadable or not one)."""
    try:
        data = jsonload.load_file(path)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    pid, session = data.get("pid"), data.get("sessionId")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 1 or not isinstance(
            session, str) or not session:
        return None
    start = data.get("procStart")
    entry = data.get("entrypoint")
    return LiveProcess(pid, session, str(data.get("kind") or "interactive"),
                       entry if isinstance(entry, str) else None,
                       str(start) if isinstance(start, str | int) else None, str(path),
                       retry_watchdog(pid))


def retry_watchdog(pid: int) -> bool | None:
    """Whether ``pid`` runs with the retry watchdog on usage limits (None: not readable)."""
    env = environ(pid)
    if env is None:
        return None
    value = env.get(WATCHDOG, "").strip().lower()
    return value not in ("", "0", "false", "no", "off") and env.get(
        f"{WATCHDOG}_SCOPE") != "capacity"


def is_alive(pid: int, proc_start: str | None) -> bool:
    """True while ``pid`` runs and (where /proc tells) is the process that wrote the file."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it exists
    if proc_start is None:
        return True
    started = start_time(pid)  # None without /proc (macOS): the pid check is all there is
    return started is None or started == proc_start


class LiveSessions:
    """The live Claude Code processes under every config dir, re-read on :meth:`refresh`.

    Owns nothing but a cache of parsed files (by name, mtime and size): a refresh lists each
    ``sessions`` directory and checks each pid — cheap enough for every poll.
    """

    def __init__(self, roots: Sequence[Path]) -> None:
        self.roots = [Path(r) for r in roots]
        self._files: dict[str, tuple[tuple[int, int], LiveProcess | None]] = {}
        #: every live process of a session, TUIs first
        self._by_session: dict[str, tuple[LiveProcess, ...]] = {}
        self._changed: set[str] = set()

    def live(self, session_id: str, ignore: Collection[int] = ()) -> LiveProcess | None:
        """The live process that has ``session_id`` open (a TUI preferred), leaving out the
        pids in ``ignore`` (Goalkeeper's own headless runs)."""
        return next((p for p in self._by_session.get(session_id, ()) if p.pid not in ignore),
                    None)

    def take_changed(self) -> set[str]:
        """The sessions whose live process changed since the last call (whoever refreshed)."""
        changed, self._changed = self._changed, set()
        return changed

    def refresh(self) -> set[str]:
        """Read the process files again; returns the sessions whose live process changed (they
        are also kept for :meth:`take_changed`)."""
        found: dict[str, list[LiveProcess]] = {}
        seen: set[str] = set()
        for root in self.roots:
            for process in self._scan(root / "sessions", seen):
                if is_alive(process.pid, process.proc_start):
                    found.setdefault(process.session_id, []).append(process)
        current = {session: tuple(sorted(processes, key=lambda p: (not p.interactive, p.pid)))
                   for session, processes in found.items()}
        for name in set(self._files) - seen:
            del self._files[name]
        before, self._by_session = self._by_session, current
        changed = {s for s in set(before) | set(current) if before.get(s) != current.get(s)}
        self._changed |= changed
        return changed

    def _scan(self, directory: Path, seen: set[str]) -> list[LiveProcess]:
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return []
        found = []
        for entry in entries:
            if not entry.name.endswith(".json"):
                continue
            seen.add(entry.path)
            try:
                st = entry.stat()
            except OSError:
                continue
            stamp = (st.st_mtime_ns, st.st_size)
            cached = self._files.get(entry.path)
            if cached is None or cached[0] != stamp:
                cached = (stamp, read_process_file(Path(entry.path)))
                self._files[entry.path] = cached
            if cached[1] is not None:
                found.append(cached[1])
        return found
