"""What Goalkeeper remembers about Claude sessions, in its own data directory.

``<data>/claude/tracking.json`` (owner-only, written atomically under a lock, so the CLI and a
running host can both change it):

* ``tracked`` — sessions the user chose to keep going (``goalkeeper track``), each with its
  options (``keep_prompting``: run another headless turn after each normal one);
* ``auto`` — sessions tracked because a limit stopped them (``claude_track_limit_stopped``);
  they stay goals when they go on, across restarts;
* ``untracked`` — sessions the user removed (``goalkeeper untrack``): never tracked again
  automatically, even when a limit stops them;
* ``runner_stops`` — the exact reset a headless run reported for a session's latest limit stop,
  so the inferred one from the transcript text never replaces it.

``<data>/claude/hook-events.jsonl`` — StopFailure and Notification hook payloads, appended by the
hook (:mod:`core.providers.claude.stop_hook`); the host reads them when it starts and on every
poll.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.atomic import atomic_write_bytes, atomic_write_text, open_private, private_dir
from core.providers import jsonload
from core.providers.claude.records import json_objects
from core.providers.claude.stop_hook import append_durably

log = logging.getLogger(__name__)


@dataclass
class Tracking:
    tracked: dict[str, dict[str, Any]] = field(default_factory=dict)
    auto: set[str] = field(default_factory=set)
    untracked: set[str] = field(default_factory=set)
    runner_stops: dict[str, dict[str, str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "tracked": self.tracked, "auto": sorted(self.auto),
                "untracked": sorted(self.untracked),
                "runner_stops": self.runner_stops}

    @classmethod
    def from_json(cls, data: Any) -> Tracking:
        if not isinstance(data, dict):
            return cls()
        tracked = data.get("tracked")
        auto = data.get("auto")
        untracked = data.get("untracked")
        stops = data.get("runner_stops")
        return cls(
            tracked={str(k): dict(v) for k, v in tracked.items() if isinstance(v, dict)}
            if isinstance(tracked, dict) else {},
            auto={str(s) for s in auto} if isinstance(auto, list) else set(),
            untracked={str(s) for s in untracked} if isinstance(untracked, list) else set(),
            runner_stops={str(k): dict(v) for k, v in stops.items() if isinstance(v, dict)}
            if isinstance(stops, dict) else {},
        )


class TrackingFile:
    """The tracking file; :meth:`update` is a locked read-modify-write."""

    def __init__(self, data_dir: Path) -> None:
        self.dir = data_dir / "claude"
        self.path = self.dir / "tracking.json"
        self._lock = self.dir / "tracking.lock"
        self._stamp: tuple[int, int] | None = None
        self._cached = Tracking()

    def load(self) -> Tracking:
        """The current contents (re-read only when the file changed)."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._stamp, self._cached = None, Tracking()
            return self._cached
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            self._cached = self._read()
            self._stamp = stamp
        return self._cached

    def _read(self) -> Tracking:
        try:
            return Tracking.from_json(json.loads(self.path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable %s: %s", self.path, exc)
            return Tracking()

    def update(self, change: Callable[[Tracking], None]) -> Tracking:
        with self.locked():
            current = self._read() if self.path.exists() else Tracking()
            change(current)
            atomic_write_text(self.path, json.dumps(current.to_json(), indent=1) + "\n")
        self._stamp = None
        return self.load()

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        private_dir(self.dir)
        with os.fdopen(open_private(self._lock, os.O_RDWR | os.O_APPEND), "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def spool_path(data_dir: Path) -> Path:
    return data_dir / "claude" / "hook-events.jsonl"


class HookSpool:
    """Hook payloads: appended by the hook (under an ``flock``), read by the host."""

    def __init__(self, data_dir: Path) -> None:
        self.path = spool_path(data_dir)
        self._offset = 0

    def append(self, event: dict[str, Any]) -> None:
        """Append one event durably (the lock and the check for a compaction that replaced
        the file are :func:`~core.providers.claude.stop_hook.append_durably`'s)."""
        line = (json.dumps(event, separators=(",", ":")) + "\n").encode()
        append_durably(str(self.path), line)

    def compact(self, keep: Callable[[dict[str, Any]], bool], above: int = 1 << 20) -> None:
        """Drop the events ``keep`` rejects once the spool is larger than ``above`` bytes (under
        the same lock the hook appends with, so no event is lost)."""
        try:
            if self.path.stat().st_size <= above:
                return
        except FileNotFoundError:
            return
        fd = os.open(self.path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            with open(self.path, "rb") as handle:
                lines = handle.read().splitlines(keepends=True)
            kept = []
            for line in lines:
                try:
                    event = jsonload.loads(line)
                except ValueError:
                    continue
                if isinstance(event, dict) and keep(event):
                    kept.append(line)
            atomic_write_bytes(self.path, b"".join(kept))
        finally:
            os.close(fd)
        self._offset = 0

    def read_new(self) -> list[dict[str, Any]]:
        """Events appended since the last call (all of them on the first call)."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return []
        if size < self._offset:
            self._offset = 0  # replaced
        if size == self._offset:
            return []
        with open(self.path, "rb") as handle:
            handle.seek(self._offset)
            data = handle.read(size - self._offset)
        end = data.rfind(b"\n") + 1
        self._offset += end
        return json_objects(data[:end])
