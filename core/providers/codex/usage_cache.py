"""What ``codex-usage`` read of each rollout, kept for its next run.

Rollouts are only ever appended to, so a rollout whose stamp — size, modification time and
inode — is what it was is not read again; a changed one is read whole. The answers are kept in
one private file in Goalkeeper's data directory, written in one step after a run. A cache that
is missing, unreadable, not this user's, corrupt, or written by another version of the scan's
code is ignored — the run reads every rollout and writes a new one — never an error: the cache
only ever saves time.

:class:`UsageRun` is one run: the cached answers, and the scan of the rest started at once
(:mod:`core.providers.codex.usage_workers`).
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from core.providers.codex.history import Part, Stamp, TokenCounts, UsageHistory, combine

FILE_NAME = "codex-usage-cache.json"
#: the modules whose code decides what the cache holds
SCAN_MODULES = ("core.providers.codex.history", "core.providers.codex.usagejson",
                "core.providers.codex.limits")
#: the layout of the file (the scan's own code is in the key too: a changed scan reads again)
FORMAT = 1


def scan_key() -> str:
    """Names the code whose answers are kept: a digest of the scan's modules — their files,
    found without loading them (a frozen app, whose sources cannot be read: its version)."""
    from importlib.util import find_spec

    digest = hashlib.sha256(str(FORMAT).encode())
    try:
        for module in SCAN_MODULES:
            spec = find_spec(module)
            digest.update(Path(str(spec and spec.origin)).read_bytes())
    except (OSError, TypeError, ValueError, ImportError):
        from core import __version__

        return f"version {__version__} ({'frozen' if getattr(sys, 'frozen', False) else ''})"
    return digest.hexdigest()


class UsageCache:
    """The kept answers: rollout path → (stamp, its :class:`UsageHistory`)."""

    def __init__(self, entries: dict[str, tuple[Stamp, UsageHistory]] | None = None) -> None:
        self.entries = entries or {}

    @classmethod
    def load(cls, path: Path, key: str) -> UsageCache:
        """The cache at ``path`` if it is this user's, private, and was written by the code
        ``key`` names; else an empty one."""
        try:
            with path.open("rb") as handle:
                info = os.fstat(handle.fileno())
                if info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
                    return cls()
                raw = handle.read()
            from core.providers.codex import usagejson  # (not loaded before it is needed)

            held = usagejson.decode(raw)
            if held["format"] != FORMAT or held["key"] != key:
                return cls()
            return cls({str(row[0]): _entry(row) for row in held["files"]})
        except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
            return cls()

    def split(self, files: Iterable[Path]) -> tuple[list[Part], list[Path]]:
        """(the kept answers of the rollouts among ``files`` whose stamp is unchanged, the
        rollouts to read)."""
        kept: list[Part] = []
        todo: list[Path] = []
        for path in files:
            entry = self.entries.get(str(path))
            if entry is not None and entry[0] == _stamp(path):
                kept.append((path, *entry))
            else:
                todo.append(path)
        return kept, todo

    @staticmethod
    def save(path: Path, key: str, parts: Iterable[Part]) -> None:
        """Keep ``parts`` — the rollouts there are now — for the next run, in place of what
        was kept. Best effort: a cache not written is only a slower next run."""
        from core.atomic import atomic_write_bytes
        from core.providers.codex import usagejson

        held = {"format": FORMAT, "key": key,
                "files": [_row(file, stamp, part) for file, stamp, part in parts]}
        try:
            atomic_write_bytes(path, usagejson.encode(held), mode=0o600, durable=False)
        except OSError:
            return


def _stamp(path: Path) -> Stamp | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ino


def _row(path: Path, stamp: Stamp, part: UsageHistory) -> list[Any]:
    daily = [[day, model, u.calls, u.input_tokens, u.cached_input_tokens, u.output_tokens,
              u.reasoning_output_tokens, u.total_tokens]
             for (day, model), u in part.daily.items()]
    quota = [[window, when, used] for window, points in part.quota.items()
             for when, used in points]
    return [str(path), list(stamp), part.files, daily, quota]


def _entry(row: list[Any]) -> tuple[Stamp, UsageHistory]:
    """A kept row read back, its types checked (a wrong one raises TypeError/ValueError)."""
    _, (size, mtime, inode), files, daily, quota = row
    part = UsageHistory(files=_int(files), size=_int(size))
    for day, model, *counts in daily:
        if not isinstance(day, str) or not isinstance(model, str) or len(counts) != 6:
            raise TypeError("a day's row")
        part.daily[(day, model)] = TokenCounts(*(_int(n) for n in counts))
    for window, micros, used in quota:
        if not isinstance(window, str) or not isinstance(used, (int, float)):
            raise TypeError("a quota point")
        part.quota.setdefault(window, []).append((_int(micros), float(used)))
    return (_int(size), _int(mtime), _int(inode)), part


def _int(value: object) -> int:
    if type(value) is not int:
        raise TypeError("not a whole number")
    return value


class UsageRun:
    """One ``codex-usage`` run over ``files``, the rollouts under ``root``: the cache at
    ``cache_file`` read, the rollouts it does not answer for read by ``workers(their size in
    bytes)`` processes started at once; :meth:`history` is the answer, :meth:`save` writes the
    cache anew after it (what it keeps of other Codex homes stays as it was)."""

    def __init__(self, files: list[Path], workers: Callable[[int], int],
                 cache_file: Path, root: Path) -> None:
        from core.providers.codex.usage_workers import file_size, start_scan

        self.cache_file = cache_file
        self.key = scan_key()
        cache = UsageCache.load(cache_file, self.key)
        self.kept, self.todo = cache.split(files)
        self.others: list[Part] = [(Path(name), *entry) for name, entry in cache.entries.items()
                                   if not Path(name).is_relative_to(root)]
        # the cache holds rollouts gone since
        self.stale = len(cache.entries) != len(self.kept) + len(self.others)
        sizes = [file_size(path) for path in self.todo]
        self.pending = start_scan(self.todo, workers(sum(sizes)), sizes)
        self.parts: list[Part] = []
        self.unsaved = False

    def history(self) -> UsageHistory:
        """The answer for every rollout: the kept ones and those read now."""
        from core.providers.codex.history import scan_parts

        read = self.pending.parts() if self.pending is not None else scan_parts(self.todo)
        self.pending = None
        self.parts = self.kept + read
        self.unsaved = bool(read) or self.stale
        return combine(part for _, _, part in self.parts)

    def save(self) -> None:
        """Keep what :meth:`history` read for the next run (when it read anything, or the cache
        holds rollouts gone since)."""
        if self.unsaved:
            UsageCache.save(self.cache_file, self.key, self.parts + self.others)
            self.unsaved = False

    def cancel(self) -> None:
        """End the scan (its answer is not wanted any more)."""
        if self.pending is not None:
            self.pending.cancel()
            self.pending = None
