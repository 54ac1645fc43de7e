"""Opening the store from many processes at once, on fresh data directories."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from core.store.schema import SCHEMA_VERSION

PROCESSES = 6
ROUNDS = 12


def _open_in_lockstep(root: str, barrier: Any, queue: Any) -> None:
    """Open ``ROUNDS`` fresh databases, all processes together on each (barrier per round)."""
    from core.store import SqliteStore, open_read_only

    failures = []
    for round_ in range(ROUNDS):
        path = Path(root) / f"round-{round_}" / "goalkeeper.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        barrier.wait()
        try:
            store = SqliteStore(path)
            store.list_goals()
            store.close()
            reader = open_read_only(path)  # a process that lost the race sees the new schema
            assert reader.schema_version == SCHEMA_VERSION
            reader.close()
        except Exception as exc:  # reported to the test, which shows them all
            failures.append(f"round {round_}: {type(exc).__name__}: {exc}")
    queue.put(failures)


@pytest.mark.slow
def test_first_opens_from_several_processes_migrate_once(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(PROCESSES)
    queue = ctx.Queue()
    procs = [ctx.Process(target=_open_in_lockstep, args=(str(tmp_path), barrier, queue))
             for _ in range(PROCESSES)]
    for proc in procs:
        proc.start()
    failures = [f for _ in procs for f in queue.get(timeout=120)]
    for proc in procs:
        proc.join(timeout=60)
    assert failures == []
    for round_ in range(ROUNDS):
        con = sqlite3.connect(tmp_path / f"round-{round_}" / "goalkeeper.db")
        assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        con.close()
