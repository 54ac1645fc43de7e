"""The host's care of its store: a verified backup every day, and restoring one.

:class:`StoreKeeper` runs as one engine task in normal mode: it takes a backup when the newest is a
day old (at start, then daily), verified before it gets its name, keeping the newest two
(:mod:`core.store.backup`). A backup that fails (the disk is full) is tried again an hour later.

:meth:`StoreKeeper.restore` is what ``goalkeeper store restore`` ends in — on the host, under its
lease: the damaged files are moved aside, a verified backup (or nothing) put in their place, and
the engine leaves safe mode.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from core.clock import Clock, iso
from core.store import SqliteStore, Store, StoreError, StoreThread
from core.store.backup import (
    BACKUP_EVERY_SECONDS,
    KEEP,
    Backup,
    list_backups,
    restore,
    take_backup,
)
from core.store.guard import read_marker, write_marker

log = logging.getLogger("goalkeeper")

RETRY_FAILED_BACKUP_SECONDS = 3600.0
#: the longest single sleep: a wall-clock jump (suspend) is noticed within this
MAX_SLEEP_SECONDS = 3600.0


@dataclass(frozen=True)
class Restored:
    moved_aside: Path | None
    backup: Path | None

    def to_json(self) -> dict[str, object]:
        return {"ok": True, "moved_aside": str(self.moved_aside) if self.moved_aside else None,
                "backup": str(self.backup) if self.backup else None}


class StoreKeeper:
    """Owns the backup schedule of one store. Attributes: ``last_error``."""

    def __init__(self, store: StoreThread, clock: Clock, keep: int = KEEP,
                 every_seconds: float = BACKUP_EVERY_SECONDS) -> None:
        self.store = store
        self.clock = clock
        self.keep = keep
        self.every = timedelta(seconds=every_seconds)
        self.last_error: str | None = None
        self._retry_at: datetime | None = None

    @property
    def directory(self) -> Path:
        return self.store.backups_dir

    def backups(self) -> list[Backup]:
        return list_backups(self.directory)

    def next_due(self, now: datetime) -> datetime:
        if self._retry_at is not None:
            return self._retry_at
        newest = self.backups()
        return newest[0].taken_at + self.every if newest else now

    async def run(self) -> None:
        """Forever: sleep until a backup is due, take it."""
        while True:
            now = self.clock.now()
            wait = (self.next_due(now) - now).total_seconds()
            if wait > 0:
                await self.clock.sleep(min(wait, MAX_SLEEP_SECONDS))
                continue
            await self.backup_now()

    async def backup_now(self) -> Backup | None:
        now = self.clock.now()

        def backup(store: Store) -> Backup:
            assert isinstance(store, SqliteStore)  # the shared store is backed up by its DBA
            return take_backup(store, self.directory, now, self.keep)

        try:
            made = await self.store.run(backup)
        except StoreError as exc:
            self.last_error = str(exc)
            self._retry_at = now + timedelta(seconds=RETRY_FAILED_BACKUP_SECONDS)
            log.warning("%s; trying again at %s", exc, iso(self._retry_at))
            return None
        self.last_error, self._retry_at = None, None
        log.info("store backed up to %s (%d bytes, verified)", made.path, made.size)
        return made

    async def restore(self, backup: Path | None) -> Restored:
        """Replace the store's files by ``backup`` (None: an empty start). The caller holds the
        lease and has stopped using the store."""
        database = self.store.path
        now = self.clock.now()

        def swap() -> Path | None:
            self.store.release()  # nothing may keep the old files open across the swap
            floor = read_marker(database)
            aside = restore(database, backup, now)
            write_marker(database, 0, now, floor=floor)
            return aside

        aside = await self.store.call(swap)
        log.warning("store restored from %s; the previous files are in %s",
                    backup or "nothing (an empty store)", aside)
        return Restored(aside, backup)
