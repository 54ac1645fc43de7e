"""A goal's steering (core.models.Steering) on both stores: it round-trips, and the schema step
that moved it out of ``data`` (SQLite 3 -> 4, PostgreSQL 1 -> 2) keeps every value."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from core.models import BudgetEntry, LastRun, PolicyPause, Steering, Trigger
from core.store import pg_schema, schema
from core.store.postgres import PostgresStore
from core.store.sqlite import SqliteStore
from tests.store.support import T0, goal, put
from tests.support.store import Opener

#: a goal's ``data`` as an older Goalkeeper wrote it: provider metadata and the seven keys
OLD_DATA: dict[str, Any] = {
    "cwd": "/work/x", "thread_id": "t-1",
    "no_reset_note": "credits depleted", "resume_slot": True, "last_resume_trigger": "wake",
    "auto_resume_block": "Claude resumes it itself",
    "budget": {"fake:5h": {"spent": 12.5, "until": "2026-07-07T14:00:00Z"}},
    "last_run": {"seconds": 5400.0, "ended_at": "2026-07-07T12:00:00Z"},
    "policy_pause": {"rule": "reserve", "at": "2026-07-07T12:00:00Z"},
}
STEERING = Steering(
    no_reset_note="credits depleted", resume_slot=True, last_resume_trigger=Trigger.WAKE,
    auto_resume_block="Claude resumes it itself",
    budget={"fake:5h": BudgetEntry(spent=12.5, until=T0 + timedelta(hours=2))},
    last_run=LastRun(seconds=5400.0, ended_at=T0),
    policy_pause=PolicyPause(rule="reserve", at=T0),
)
INSERT = ("INSERT INTO goals (id, provider, title, state, data, created_at, updated_at) "
          "VALUES ({p}, 'fake', {p}, 'paused', {p}, '2026-07-07T12:00:00Z', "
          "'2026-07-07T12:00:00Z')")


def test_steering_round_trips_and_stays_out_of_data(opener: Opener) -> None:
    store = opener()
    written = goal("fake:a", data={"cwd": "/work/x"}, steering=STEERING)
    put(store, written)
    assert store.get_goal("fake:a") == written
    plain = goal("fake:b")
    put(store, plain)
    loaded = store.get_goal("fake:b")
    assert loaded is not None and loaded.steering == Steering() and loaded.data == {}


def test_sqlite_step_four_moves_the_keys_out_of_data(tmp_path: Path) -> None:
    db = tmp_path / "goalkeeper.db"
    con = sqlite3.connect(db)
    for step in schema.MIGRATIONS[:3]:
        con.executescript(step)
    con.execute(INSERT.format(p="?"), ("fake:old", "old", json.dumps(OLD_DATA)))
    con.execute(INSERT.format(p="?"), ("fake:plain", "plain", json.dumps({"cwd": "/y"})))
    con.execute("PRAGMA user_version = 3")
    con.commit()
    con.close()
    store = SqliteStore(db)
    try:
        assert store.schema_version == schema.SCHEMA_VERSION == 4
        _assert_moved(store.get_goal("fake:old"), store.get_goal("fake:plain"))
    finally:
        store.close()


def test_postgres_step_two_moves_the_keys_out_of_data(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as con:
        con.execute(pg_schema.MIGRATIONS[0].encode())
        con.execute("UPDATE goalkeeper_schema SET version = 1")
        con.execute(INSERT.format(p="%s"), ("fake:old", "old", Jsonb(OLD_DATA)))
        con.execute(INSERT.format(p="%s"), ("fake:plain", "plain", Jsonb({"cwd": "/y"})))
    store = PostgresStore(pg_url)
    try:
        assert store.schema_version == pg_schema.SCHEMA_VERSION  # step two, and those after it
        _assert_moved(store.get_goal("fake:old"), store.get_goal("fake:plain"))
    finally:
        store.close()


def _assert_moved(old: Any, plain: Any) -> None:
    assert old is not None and plain is not None
    assert old.data == {"cwd": "/work/x", "thread_id": "t-1"}  # provider metadata only
    assert old.steering == STEERING  # every value as it was
    assert plain.data == {"cwd": "/y"} and plain.steering == Steering()
