"""Verified backups of the store, and putting one back.

The host takes one a day with ``VACUUM INTO`` (a consistent copy, made while the store stays
usable), checks it — ``PRAGMA integrity_check`` and the schema version, opened ``immutable`` so
nothing is written beside it — and only then gives it its final name in ``backups/``; the newest
:data:`KEEP` are kept. A damaged store is never backed up over a good backup: the copy of a
damaged file fails its check and is thrown away.

:func:`restore` (the host's, under its lease) moves the database and its ``-wal``/``-shm`` aside
to ``<name>.damaged-<UTC stamp>`` — nothing is deleted — and puts a verified backup (or nothing,
for an empty start) in its place.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from core.atomic import FILE_MODE, private_dir, private_file
from core.i18n import N_
from core.store.schema import SCHEMA_VERSION
from core.store.sqlite import SqliteStore, StoreError

KEEP = 2
BACKUP_EVERY_SECONDS = 86400.0
_NAME = re.compile(r"^goalkeeper-(\d{8}T\d{6}Z)\.db$")
_STAMP = "%Y%m%dT%H%M%SZ"


@dataclass(frozen=True)
class Backup:
    path: Path
    taken_at: datetime
    size: int


def list_backups(directory: Path) -> list[Backup]:
    """The backups in ``directory``, newest first (names only: verified when made)."""
    found = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return []
    for entry in entries:
        match = _NAME.match(entry.name)
        if match is None:
            continue
        with contextlib.suppress(OSError, ValueError):
            taken = datetime.strptime(match.group(1), _STAMP).replace(tzinfo=UTC)
            found.append(Backup(entry, taken, entry.stat().st_size))
    return sorted(found, key=lambda b: b.taken_at, reverse=True)


def verify(path: Path) -> str | None:
    """None when ``path`` is a sound database at the current schema, else what is wrong."""
    try:
        con = sqlite3.connect(f"file:{quote(str(path))}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error as exc:
        return N_("cannot open it: {error}").format(error=exc)
    try:
        rows = con.execute("PRAGMA integrity_check").fetchall()
        if [r[0] for r in rows] != ["ok"]:
            return N_("integrity check failed: {complaint}").format(
                complaint=rows[0][0] if rows else N_("no answer"))
        version = int(con.execute("PRAGMA user_version").fetchone()[0])
        if version != SCHEMA_VERSION:
            return N_("schema version {version}, expected {ours}").format(version=version,
                                                                           ours=SCHEMA_VERSION)
        con.execute("SELECT COUNT(*) FROM goals").fetchone()
    except sqlite3.Error as exc:
        return N_("not readable: {error}").format(error=exc)
    finally:
        con.close()
    return None


def take_backup(store: SqliteStore, directory: Path, now: datetime, keep: int = KEEP) -> Backup:
    """Copy the store into ``directory``, verify the copy, keep the newest ``keep``.

    Raises :class:`StoreError` (the copy removed) when it cannot be made or fails its check.
    """
    private_dir(directory)
    final = directory / f"goalkeeper-{now.strftime(_STAMP)}.db"
    tmp = directory / f".{final.name}.{os.getpid()}.tmp"
    tmp.unlink(missing_ok=True)
    try:
        private_file(tmp)  # VACUUM INTO fills an empty file and keeps its mode
        store.vacuum_into(tmp)
        problem = verify(tmp)
        if problem is not None:
            raise StoreError(N_("the backup copy failed its check ({problem}); the store "
                                "itself may be damaged").format(problem=problem))
        _fsync(tmp)
        os.replace(tmp, final)
        _fsync_dir(directory)
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(N_("the backup could not be made: {error}").format(error=exc)) from None
    finally:
        tmp.unlink(missing_ok=True)
    for old in list_backups(directory)[keep:]:
        old.path.unlink(missing_ok=True)
    return Backup(final, now.replace(microsecond=0), final.stat().st_size)


def quarantine(database: Path, now: datetime) -> Path | None:
    """Move the database and its companions aside; the new name of the main file, if any."""
    aside = database.with_name(f"{database.name}.damaged-{now.strftime(_STAMP)}")
    moved = None
    for suffix in ("", "-wal", "-shm"):
        source = Path(f"{database}{suffix}")
        if source.exists():
            source.rename(Path(f"{aside}{suffix}"))
            moved = moved or aside
    return moved


def restore(database: Path, backup: Path | None, now: datetime) -> Path | None:
    """Quarantine the current files and put ``backup`` (verified first) in their place; with no
    backup the next open starts an empty store. Returns where the old files went."""
    if backup is not None:
        problem = verify(backup)
        if problem is not None:
            raise StoreError(N_("the backup {file} cannot be restored: {problem}").format(
                file=backup, problem=problem))
    staged = database.with_name(f".{database.name}.{os.getpid()}.restore.tmp")
    if backup is not None:
        shutil.copyfile(backup, staged)
        os.chmod(staged, FILE_MODE)
        _fsync(staged)
    aside = quarantine(database, now)
    if backup is not None:
        os.replace(staged, database)
    _fsync_dir(database.parent)
    return aside


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        _fsync(directory)
