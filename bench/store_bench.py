#!/usr/bin/env python3
"""Figures for the shared store (issue 12), on this machine.

    python bench/store_bench.py [--claims 2000] [--propagations 60] [--days 30] [--url URL]

* **claim latency**: the resume claim's transaction (``paused → resuming``, fence bumped, its
  history row, the host's fence check, the slot query inside it), p50/p99 — on SQLite
  (``synchronous=FULL``) and on PostgreSQL (``fsync`` on: a real server's durability), both on
  the local disk; PostgreSQL through its Unix socket;
* **propagation**: a reading stored by host A → host B's quota manager has it (``NOTIFY`` → B's
  listener → B's event loop → the quota manager), two engines with their own connections and
  listeners, real clock; p50/p99/max (target < 2 s);
* **store size after a month of readings**: ``--days`` of one reading a minute for each of four
  windows (Codex 5 h / 7 d, Claude 5 h / 7 d — what a host that always watches stores), on
  both stores.

Without ``--url`` a throw-away PostgreSQL is started (``initdb`` + ``pg_ctl``, as for the
tests, but with fsync on), and removed afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.clock import SystemClock  # noqa: E402
from core.engine import Engine  # noqa: E402
from core.models import Goal, GoalState, PauseReason, QuotaReading  # noqa: E402
from core.paths import resolve_paths  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.store import Mutation, Store  # noqa: E402
from core.store.postgres import PostgresStore  # noqa: E402
from core.store.sqlite import SqliteStore  # noqa: E402
from tests.support.fakes import FakeProvider, reading  # noqa: E402
from tests.support.postgres import PgServer, find_bindir  # noqa: E402

T0 = datetime(2026, 7, 7, tzinfo=UTC)
WINDOWS = ("codex:5h", "codex:7d", "claude:5h", "claude:7d")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -- claim latency ---------------------------------------------------------------------------


def paused(goal_id: str) -> Goal:
    return Goal(id=goal_id, provider="fake", title=goal_id, state=GoalState.PAUSED,
                pause_reason=PauseReason.QUOTA, windows=("fake:5h",), auto_resume=True,
                created_at=T0, updated_at=T0)


def claim_latency(store: Store, claims: int) -> dict[str, float]:
    store.host_id = "bench"
    store.epoch = store.take_epoch("bench")
    took = []
    for i in range(claims):
        goal = paused(f"fake:{i % 50}")
        store.transact(goal.id, lambda _, g=goal: Mutation(g, None))

        def claim(current: Goal | None, s: Store = store) -> Mutation[None]:
            assert current is not None
            s.goals_on_window("fake:5h", (GoalState.RESUMING, GoalState.RUNNING))  # the slots
            won = current.model_copy(update={"state": GoalState.RESUMING,
                                             "fence": current.fence + 1})
            from core.goals.changes import note_row

            return Mutation(won, None, [note_row(current.id, "resume_requested", T0)])

        start = time.perf_counter()
        store.transact(goal.id, claim)
        took.append((time.perf_counter() - start) * 1000)
    return {"p50_ms": round(statistics.median(took), 3), "p99_ms": round(pct(took, 0.99), 3)}


# -- propagation ---------------------------------------------------------------------------


async def propagation(url: str, root: Path, rounds: int) -> dict[str, float]:
    engines = []
    for host in ("laptop", "desk"):
        paths = resolve_paths({"GOALKEEPER_HOME": str(root / host)})
        settings = Settings(store_url=url, host_id=host, account="me", resume_jitter_seconds=0,
                            codex_enabled=False, claude_enabled=False, pipeline_enabled=False)
        engine = Engine(paths, settings, [FakeProvider(SystemClock())], SystemClock(),
                        random.Random(1))
        await engine.start()
        engines.append(engine)
    a, b = engines
    while not b.shared_sync.listening:
        await asyncio.sleep(0.01)
    took = []
    try:
        for i in range(rounds):
            now = datetime.now(UTC)
            sent = time.perf_counter()
            await a.quota_intake.record_reading(reading("fake:5h", float(i % 100), now))
            while (heard := b.quotas.tracker("fake:5h").reading) is None or (
                    heard.observed_at < now):
                await asyncio.sleep(0.001)
            took.append((time.perf_counter() - sent) * 1000)
            await asyncio.sleep(0.05)
    finally:
        for engine in engines:
            await engine.stop()
    return {"p50_ms": round(statistics.median(took), 1), "p99_ms": round(pct(took, 0.99), 1),
            "max_ms": round(max(took), 1), "rounds": rounds}


# -- size after a month ------------------------------------------------------------------------


def month(days: int) -> list[QuotaReading]:
    rows = []
    for minute in range(days * 24 * 60):
        at = T0 + timedelta(minutes=minute)
        for window in WINDOWS:
            rows.append(reading(window, (minute % 300) / 3, at, at + timedelta(hours=5),
                                provider=window.split(":")[0]).model_copy(
                update={"account": "me"}))
    return rows


def sqlite_size(path: Path, readings: list[QuotaReading]) -> dict[str, float]:
    store = SqliteStore(path)
    with store.write(fenced=False) as con:
        for r in readings:
            con.execute("INSERT INTO quota_series (account, window_id, observed_at, "
                        "used_percent, exactness) VALUES (?, ?, ?, ?, ?)",
                        (r.account, r.window_id, r.observed_at.isoformat(), r.used_percent,
                         r.exactness.value))
    for r in readings[-len(WINDOWS):]:
        store.save_reading(r)
    store.close()  # the WAL is checkpointed into the file
    size = path.stat().st_size
    return {"bytes": size, "mib": round(size / 2**20, 1), "per_reading": round(
        size / len(readings), 1)}


def postgres_size(url: str, readings: list[QuotaReading]) -> dict[str, float]:
    store = PostgresStore(url)
    rows = [(r.account, r.window_id, r.observed_at, r.used_percent, r.exactness.value)
            for r in readings]
    store.run_transaction(lambda con: store.insert_series(con, rows) and None)
    for r in readings[-len(WINDOWS):]:
        store.save_reading(r)
    con = store.con
    con.execute("VACUUM ANALYZE quota_series")
    size = int(con.execute("SELECT pg_total_relation_size('quota_series') + "
                           "pg_total_relation_size('quota_latest')").fetchone()[0])
    database = int(con.execute("SELECT pg_database_size(current_database())").fetchone()[0])
    store.close()
    return {"bytes": size, "mib": round(size / 2**20, 1),
            "per_reading": round(size / len(readings), 1),
            "database_mib": round(database / 2**20, 1)}


# -- main ---------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--claims", type=int, default=2000)
    parser.add_argument("--propagations", type=int, default=60)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--url", help="an existing database (else a throw-away server)")
    args = parser.parse_args()
    server = None
    with tempfile.TemporaryDirectory(prefix="gk-store-bench-", dir=str(Path.home())) as tmp:
        root = Path(tmp)
        if args.url:
            url_for: Any = lambda name: args.url  # noqa: E731
        else:
            bindir = find_bindir()
            if bindir is None:
                sys.exit("no PostgreSQL server binaries (initdb) found: pass --url")
            server = PgServer(bindir, fsync=True).init()
            url_for = lambda name: server.url(server.create_database())  # noqa: E731
        try:
            figures: dict[str, Any] = {}
            figures["claim_sqlite"] = claim_latency(SqliteStore(root / "claim.db"), args.claims)
            figures["claim_postgres"] = claim_latency(PostgresStore(url_for("claim")),
                                                      args.claims)
            figures["propagation"] = asyncio.run(propagation(url_for("propagation"), root,
                                                             args.propagations))
            readings = month(args.days)
            figures["month_readings"] = len(readings)
            figures["size_sqlite"] = sqlite_size(root / "month.db", readings)
            figures["size_postgres"] = postgres_size(url_for("month"), readings)
        finally:
            if server is not None:
                server.stop()
    for name, value in figures.items():
        print(f"{name:16} {value}")


if __name__ == "__main__":
    main()
