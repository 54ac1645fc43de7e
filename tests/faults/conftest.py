"""Fixtures of the fault-injection suite: small file systems, capped and locked stores."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.store import SqliteStore


def _mount(target: Path, options: str) -> None:
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)], check=True,
                   capture_output=True)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB tmpfs (root only: skipped otherwise), unmounted afterwards."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a small tmpfs")
    target = tmp_path / "small-fs"
    target.mkdir()
    try:
        _mount(target, "size=16m,mode=0700")
    except (subprocess.CalledProcessError, OSError) as exc:
        pytest.skip(f"cannot mount a tmpfs here: {exc}")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False, capture_output=True)


def remount(target: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(target)], check=True,
                   capture_output=True)


def fill(directory: Path) -> Path:
    """Fill the file system holding ``directory`` to the last byte; returns the filler."""
    filler = directory / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                continue
    finally:
        os.close(fd)
    return filler


def cap_and_fill(store: SqliteStore) -> None:
    """Make a store refuse every new history row and reading (SQLITE_FULL) without a small
    file system: cap it at its size, then fill the free pages and the last leaf of each table
    a report writes to."""
    con = store._con
    pages = con.execute("PRAGMA page_count").fetchone()[0]
    con.execute(f"PRAGMA max_page_count = {pages}")
    inserts = {
        "history": "INSERT INTO history (at, goal, event, detail) VALUES ('x', 'filler', ?, '{}')",
        "quota_series": "INSERT INTO quota_series (window_id, observed_at, exactness) "
                        "VALUES ('filler', ?, 'exact')",
        "meta": "INSERT INTO meta VALUES (hex(randomblob(8)), ?)",
    }
    for sql in inserts.values():
        for size in (2000, 200, 20, 1):
            try:
                while True:
                    con.execute(sql, ("f" * size,))
            except sqlite3.OperationalError:
                continue


def uncap(store: SqliteStore) -> None:
    store._con.execute("PRAGMA max_page_count = 1073741823")
