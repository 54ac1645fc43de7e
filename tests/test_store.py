"""The SQLite store: schema, atomic goal transactions, history, readings, corruption handling."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.models import Goal, GoalState, HistoryRow
from core.store import Mutation, SqliteStore, StoreError, open_store
from core.store.schema import SCHEMA_VERSION
from tests.support.fakes import reading

T0 = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)


def goal(goal_id: str = "fake:a", **kw: object) -> Goal:
    return Goal.model_validate({"id": goal_id, "provider": "fake", "title": "A",
                                "created_at": T0, "updated_at": T0, **kw})


def test_new_database_is_at_the_current_schema_in_wal_mode(tmp_path: Path) -> None:
    store, notice = open_store(tmp_path / "gk.db", T0)
    assert notice is None
    assert store.schema_version == SCHEMA_VERSION
    con = sqlite3.connect(tmp_path / "gk.db")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()
    store.close()


def test_transact_writes_goal_and_history_together(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "gk.db")
    row = HistoryRow(at=T0, goal="fake:a", event="discovered")
    c = store.transact("fake:a", lambda cur: Mutation(goal(), "made", [row]))
    assert c.before is None and c.after == goal() and c.result == "made"
    assert c.history[0].id is not None
    assert store.get_goal("fake:a") == goal()
    assert [h.event for h in store.history("fake:a")] == ["discovered"]


def test_a_failing_decision_rolls_everything_back(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "gk.db")
    store.transact("fake:a", lambda cur: Mutation(goal(), None))

    def boom(cur: Goal | None) -> Mutation[None]:
        raise RuntimeError("decided badly")

    with pytest.raises(RuntimeError):
        store.transact("fake:a", boom)
    assert store.get_goal("fake:a") == goal()
    # the connection is usable afterwards (no transaction left open)
    store.transact("fake:a", lambda cur: Mutation(goal(title="B"), None))
    assert store.get_goal("fake:a").title == "B"  # type: ignore[union-attr]


def test_goal_round_trips_every_field(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "gk.db")
    g = goal(state=GoalState.PAUSED, pause_reason="quota", pause_detail="5h", windows=("a", "b"),
             auto_resume=True, next_resume_at=T0, auto_resume_note="n", resets_at=T0,
             attempts=2, fence=9, hosted=True, resumed_at=T0, data={"cwd": "/x", "n": [1]},
             state_since=T0)
    store.transact(g.id, lambda cur: Mutation(g, None))
    assert store.get_goal(g.id) == g


def test_history_is_newest_first_and_paginated(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "gk.db")
    for i in range(25):
        store.append_history(HistoryRow(at=T0 + timedelta(seconds=i), goal="g" if i % 2 else "h",
                                        event=f"e{i}"))
    assert [r.event for r in store.history(limit=3)] == ["e24", "e23", "e22"]
    assert [r.event for r in store.history(limit=3, offset=3)] == ["e21", "e20", "e19"]
    assert store.count_history() == 25 and store.count_history("g") == 12
    assert all(r.goal == "g" for r in store.history("g", limit=100))


def test_readings_keep_the_latest_and_a_series(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "gk.db")
    assert store.save_reading(reading("w", 10, T0))
    assert store.save_reading(reading("w", 50, T0 + timedelta(minutes=1)))
    assert not store.save_reading(reading("w", 99, T0 - timedelta(minutes=1)))  # older
    assert [r.used_percent for r in store.latest_readings()] == [50]
    assert [u for _, u in store.series("w")] == [10, 50]
    assert [u for _, u in store.series("w", since=T0 + timedelta(seconds=30))] == [50]
    assert store.prune_series(T0 + timedelta(seconds=30)) == 1
    assert [u for _, u in store.series("w")] == [50]
    assert [r.used_percent for r in store.latest_readings()] == [50]


def test_a_corrupt_file_is_refused_and_left_alone_outside_a_host(tmp_path: Path) -> None:
    db = tmp_path / "goalkeeper.db"
    garbage = b"this is not a database, but it is the user's data" * 100
    db.write_bytes(garbage)
    with pytest.raises(StoreError, match="damaged"):
        open_store(db, T0)
    assert db.read_bytes() == garbage  # never moved or overwritten by a command
    assert sorted(p.name for p in tmp_path.iterdir()) == ["goalkeeper.db"]


def test_a_newer_schema_is_refused_and_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "goalkeeper.db"
    con = sqlite3.connect(db)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    con.close()
    before = db.read_bytes()
    with pytest.raises(StoreError, match="newer than this Goalkeeper"):
        open_store(db, T0)
    assert db.read_bytes() == before
    assert not list(tmp_path.glob("*.corrupt-*"))


def test_an_unopenable_path_is_an_error_not_a_corruption(tmp_path: Path) -> None:
    db = tmp_path / "goalkeeper.db"
    db.mkdir()  # e.g. a directory where the file should be: cannot open, nothing to move
    (db / "keep").write_text("x")
    with pytest.raises(StoreError, match="cannot"):
        open_store(db, T0)
    assert (db / "keep").read_text() == "x"
    assert not list(tmp_path.glob("*.corrupt-*"))


def test_migration_from_an_empty_version_zero_file(tmp_path: Path) -> None:
    db = tmp_path / "goalkeeper.db"
    sqlite3.connect(db).close()  # an empty, version-0 database
    store = SqliteStore(db)
    assert store.schema_version == SCHEMA_VERSION
    store.close()
