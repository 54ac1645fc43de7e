"""Read-only commands never create, convert, migrate, check or move the database."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.models import HistoryRow
from core.store import SqliteStore
from core.store.schema import MIGRATIONS, SCHEMA_VERSION
from tests.support.faults import daemon, run

T0 = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)
PAGE = 4096


def test_no_database_means_no_data_yet_and_nothing_is_created(tmp_path: Path) -> None:
    home = tmp_path / "never-used"
    for args in (["status"], ["history"]):
        out = run(home, *args)
        assert out.returncode == 0, out.stderr
        assert "no data yet" in out.stdout
    status = json.loads(run(home, "status", "--json").stdout)
    assert (status["goals"], status["quotas"], status["host"]["state"]) == ([], [], "not_running")
    assert json.loads(run(home, "history", "--json").stdout) == []
    unknown = run(home, "resume", "fake:g")
    assert unknown.returncode == 3 and "no data yet" in unknown.stderr
    assert not home.exists()


def test_a_zero_byte_database_is_called_an_empty_file_not_no_data_yet(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "goalkeeper.db").touch()
    out = run(home, "status")
    assert out.returncode == 0, out.stderr
    assert "is an empty file (0 bytes)" in out.stdout and "no data yet" not in out.stdout
    assert (home / "goalkeeper.db").stat().st_size == 0


def _legacy_database(path: Path, version: int) -> None:
    """A rollback-journal file (no WAL) at ``version``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path, isolation_level=None)
    for step in MIGRATIONS[:version]:
        con.executescript(step)
    con.execute(f"PRAGMA user_version = {version}")
    con.execute("CREATE TABLE IF NOT EXISTS keep (x)")  # so version 0 is not an empty file
    con.close()


@pytest.mark.parametrize("version", [0, SCHEMA_VERSION])
def test_status_neither_converts_nor_migrates(tmp_path: Path, version: int) -> None:
    home = tmp_path / "home"
    db = home / "goalkeeper.db"
    _legacy_database(db, version)
    before = db.read_bytes()
    out = run(home, "status")
    assert out.returncode == 0, out.stderr
    assert ("no data yet" in out.stdout) == (version == 0)
    assert db.read_bytes() == before  # same version, same (rollback) journal mode, no schema
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert con.execute("PRAGMA user_version").fetchone()[0] == version
    con.close()


def _seed_history(db: Path, rows: int) -> None:
    store = SqliteStore(db)
    for i in range(rows):
        store.append_history(HistoryRow(at=T0 + timedelta(seconds=i), goal="old:goal",
                                        event="note", reason="x" * 200))
    store.close()  # checkpointed: every page is in the main file


def _damage_a_middle_page(db: Path) -> None:
    """A page of old history rows: the host never writes it again, so the WAL has no newer
    copy of it."""
    pages = db.stat().st_size // PAGE
    with open(db, "r+b") as handle:
        handle.seek((pages // 2) * PAGE)
        handle.write(b"\xde\xad\xbe\xef" * (PAGE // 4))


def _quick_check(db: Path) -> str:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return str(con.execute("PRAGMA quick_check").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        return str(exc)
    finally:
        con.close()


@pytest.mark.slow
def test_status_against_a_live_host_with_a_damaged_page(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    _seed_history(home / "goalkeeper.db", 2000)
    with daemon(home) as proc:
        db = home / "goalkeeper.db"
        inode = db.stat().st_ino
        _damage_a_middle_page(db)
        assert _quick_check(db) != "ok"  # really damaged
        for _ in range(3):
            out = run(home, "status", "--json")
            assert out.returncode == 0, out.stderr
            assert {g["id"] for g in json.loads(out.stdout)["goals"]} >= {"demo:docs"}
        assert db.stat().st_ino == inode  # never moved aside under the host
        assert sorted(p.name for p in home.glob("goalkeeper.db*")) == [
            "goalkeeper.db", "goalkeeper.db-shm", "goalkeeper.db-wal"]
        # the host is undisturbed: it still knows its goals and carries out actions
        answer = run(home, "auto-resume", "demo:docs", "on", "--json")
        assert answer.returncode == 0, answer.stderr
        assert json.loads(answer.stdout)["outcome"] == "updated"
        assert proc.poll() is None
