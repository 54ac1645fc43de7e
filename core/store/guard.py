"""The host's way into the store: checked, fenced, and never a silent replacement.

Only a host — under its lease — opens the database through :func:`open_for_host`. It

* runs SQLite's ``quick_check`` over the whole file (the one place that does);
* compares the database with the *marker* beside it (``store.json``: the host epoch this data
  directory last wrote). A database that is missing, zero bytes long or older than the marker —
  its ``-wal`` was deleted, or an old copy was put in its place — used to hold data: that is
  reported, never replaced by an empty store;
* notices a read-only file or file system before the first write fails;
* bumps the host epoch in the same write transaction as any migration: the epoch is the fence
  every later write of this host checks (:meth:`SqliteStore.write`), so a host that was replaced
  while it hung can no longer write.

What it cannot use it describes as a :class:`StoreProblem`: the engine then runs in *safe mode*
(what can be read is shown, nothing runs, a verified backup is offered for restore).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from urllib.parse import quote

from core.atomic import atomic_write_text
from core.clock import iso
from core.i18n import N_
from core.store.backup import Backup, list_backups
from core.store.sqlite import (
    EPOCH_KEY,
    SqliteStore,
    StoreError,
    describe_failure,
    is_corruption,
)

log = logging.getLogger(__name__)

MARKER_NAME = "store.json"


class ProblemKind(StrEnum):
    DAMAGED = "damaged"  # quick_check failed, or the file is not a database
    READ_ONLY = "read_only"  # the file or its file system cannot be written
    ZERO_BYTES = "zero_bytes"  # the file was cut to nothing
    MISSING = "missing"  # the file is gone
    LOST_WRITES = "lost_writes"  # older than the marker: the -wal was deleted, or an old copy


@dataclass(frozen=True)
class StoreProblem:
    """Why the host cannot write to the store; ``message`` says it precisely, with what to do."""

    kind: ProblemKind
    message: str
    backups: tuple[Backup, ...] = ()

    @property
    def readable(self) -> bool:
        """Whether the file may still show something (safe mode reads it)."""
        return self.kind in (ProblemKind.DAMAGED, ProblemKind.READ_ONLY, ProblemKind.LOST_WRITES)


@dataclass(frozen=True)
class HostOpen:
    """The result of a host's open: a writable store, or the problem and maybe a reader."""

    store: SqliteStore | None
    problem: StoreProblem | None = None
    reader: SqliteStore | None = None


def marker_path(database: Path) -> Path:
    return database.with_name(MARKER_NAME)


def _marker_field(database: Path, name: str) -> int:
    try:
        data = json.loads(marker_path(database).read_text(encoding="utf-8"))
        value = data.get(name) if isinstance(data, dict) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else 0
    except (OSError, ValueError):
        return 0


def read_marker(database: Path) -> int:
    """The host epoch this data directory last wrote (0: none recorded)."""
    return _marker_field(database, "epoch")


def write_marker(database: Path, epoch: int, now: datetime, floor: int = 0) -> None:
    """Record ``epoch``; a failure (disk full) is logged: the next start then compares with the
    older marker, which the database still satisfies. ``floor`` (after a restore): the next
    epoch is above it even though the restored file is older, so no host from before the
    restore is ever let back in."""
    try:
        atomic_write_text(marker_path(database), json.dumps(
            {"epoch": epoch, "floor": floor, "database": database.name,
             "written_at": iso(now)}))
    except OSError as exc:
        log.warning("could not update %s: %s", marker_path(database), exc)


def open_for_host(database: Path, backups_dir: Path, now: datetime) -> HostOpen:
    """Open, check and fence the store for a host. Raises :class:`StoreError` only for what
    safe mode cannot help with (a newer schema, a path that is not a file)."""
    expected = read_marker(database)
    floor = max(expected, _marker_field(database, "floor"))
    wal_missing = not Path(f"{database}-wal").exists()  # opening creates an empty one
    backups = tuple(list_backups(backups_dir))
    problem = _file_problem(database, expected)
    if problem is not None:
        return _safe(database, problem, backups)
    try:
        store = SqliteStore(database, migrate=False)
    except sqlite3.DatabaseError as exc:
        return _safe(database, _problem_of(database, exc), backups)
    try:
        return HostOpen(_checked(store, database, (expected, floor, wal_missing), now))
    except _Unusable as exc:
        store.close()
        return _safe(database, exc.problem, backups)
    except BaseException:
        store.close()
        raise


class _Unusable(Exception):
    def __init__(self, problem: tuple[ProblemKind, str]) -> None:
        super().__init__(problem[1])
        self.problem = problem


def _checked(store: SqliteStore, database: Path, marker: tuple[int, int, bool],
             now: datetime) -> SqliteStore:
    try:
        complaint = store.quick_check()
        if complaint is not None:
            raise _Unusable((ProblemKind.DAMAGED, N_(
                "the database {file} is damaged: SQLite's integrity check says {complaint!r}"
            ).format(file=database, complaint=complaint)))
        epoch = _fence(store, database, *marker)
    except sqlite3.DatabaseError as exc:
        raise _Unusable(_problem_of(database, exc)) from None
    store.epoch = epoch
    write_marker(database, epoch, now)
    return store


def _fence(store: SqliteStore, database: Path, expected: int, floor: int,
           wal_missing: bool) -> int:
    """Migrate and take the next epoch in one write transaction; refuse an older file."""
    store.use_wal()
    with store.write(fenced=False) as con:
        if store.schema_version > 0:
            row = con.execute("SELECT value FROM meta WHERE key = ?", (EPOCH_KEY,)).fetchone()
            found = int(row[0]) if row else 0
        else:
            found = 0
        if found < expected:
            raise _Unusable((ProblemKind.LOST_WRITES,
                             _older_text(database, found, expected, wal_missing)))
        store.migrate_in_transaction()
        epoch = max(found, floor) + 1
        con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (EPOCH_KEY, str(epoch)))
    return epoch


def _older_text(database: Path, found: int, expected: int, wal_missing: bool) -> str:
    why = (N_("its write-ahead log {name}-wal is missing").format(name=database.name)
           if wal_missing else N_("it is an older copy than the one Goalkeeper last wrote"))
    return N_("the database {file} lost its latest changes: {why} (it is at host epoch {found}, "
              "Goalkeeper last wrote epoch {expected}); nothing was replaced").format(
                  file=database, why=why, found=found, expected=expected)


def _file_problem(database: Path, expected: int) -> tuple[ProblemKind, str] | None:
    if expected <= 0:
        return None  # no database ever held data here: a new one may be created
    try:
        size = database.stat().st_size
    except FileNotFoundError:
        return (ProblemKind.MISSING, N_(
            "the database {file} is missing, but this data directory held one (host epoch "
            "{expected}); nothing was created in its place").format(file=database,
                                                                    expected=expected))
    except OSError as exc:
        raise StoreError(N_("cannot use the database {file}: {error}").format(
            file=database, error=exc)) from None
    if size == 0:
        return (ProblemKind.ZERO_BYTES, N_(
            "the database {file} is zero bytes long, but it held data (host epoch {expected}); "
            "it was not replaced by an empty one").format(file=database, expected=expected))
    return None


def _problem_of(database: Path, exc: sqlite3.DatabaseError) -> tuple[ProblemKind, str]:
    name = getattr(exc, "sqlite_errorname", "") or ""
    if is_corruption(exc):
        return ProblemKind.DAMAGED, N_("the database {file} is damaged: {error}").format(
            file=database, error=exc)
    if name.startswith("SQLITE_READONLY") or _read_only_fs(database):
        return ProblemKind.READ_ONLY, N_(
            "the database {file} cannot be written ({error}): the file, its directory or its "
            "file system is read-only").format(file=database, error=exc)
    raise StoreError(describe_failure(database, exc)) from None


def _read_only_fs(database: Path) -> bool:
    try:
        return bool(os.statvfs(database.parent).f_flag & os.ST_RDONLY) or not os.access(
            database.parent, os.W_OK)
    except OSError:
        return False


def _safe(database: Path, problem: tuple[ProblemKind, str],
          backups: tuple[Backup, ...]) -> HostOpen:
    kind, text = problem
    if backups:
        text = N_("{problem}. A verified backup from {at} is available: `goalkeeper store "
                  "restore` puts it in place (the damaged files are kept aside)").format(
                      problem=text, at=iso(backups[0].taken_at))
    else:
        text = N_("{problem}. No backup is available: `goalkeeper store restore --empty` moves "
                  "the files aside and starts an empty store").format(problem=text)
    found = StoreProblem(kind, text, backups)
    reader = open_salvage_reader(database) if found.readable else None
    log.error("%s", text)
    return HostOpen(None, found, reader)


def open_salvage_reader(database: Path) -> SqliteStore | None:
    """A read-only view for safe mode: through the WAL when possible, else the main file only
    (``immutable``: a read-only file system cannot hold the ``-shm`` a WAL reader needs)."""
    try:
        return SqliteStore(database, read_only=True)
    except (sqlite3.DatabaseError, StoreError):
        pass
    try:
        return SqliteStore(f"file:{quote(str(database))}?mode=ro&immutable=1",
                           read_only=True, uri_given=True)
    except (sqlite3.DatabaseError, StoreError):
        return None
