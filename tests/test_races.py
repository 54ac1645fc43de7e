"""However many callers race — threads and processes — exactly one runner start."""

from __future__ import annotations

import multiprocessing
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.models import Goal, GoalState, PauseReason
from core.store import Mutation, SqliteStore
from tests.support.race import race, race_in_process

T0 = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)


def paused_goal(home: Path, goal_id: str = "fake:g") -> None:
    home.mkdir(parents=True, exist_ok=True)
    store = SqliteStore(home / "goalkeeper.db")
    goal = Goal(id=goal_id, provider="fake", title="raced", state=GoalState.PAUSED,
                pause_reason=PauseReason.QUOTA, auto_resume=True, created_at=T0, updated_at=T0)
    store.transact(goal_id, lambda cur: Mutation(goal, None))
    store.close()


def test_a_thousand_calls_from_eight_threads_start_once(tmp_path: Path) -> None:
    home, starts = tmp_path / "home", tmp_path / "starts"
    paused_goal(home)
    result = race(str(home), str(starts), "fake:g", threads=8, calls=125)
    assert starts.read_text().count("\n") == 1
    outcomes = result["outcomes"]
    assert sum(outcomes.values()) == 1000
    assert outcomes["resumed"] == 1
    assert set(outcomes) <= {"resumed", "already_running", "already_resuming"}


@pytest.mark.slow
def test_two_processes_with_threads_start_once(tmp_path: Path) -> None:
    home, starts = tmp_path / "home", tmp_path / "starts"
    paused_goal(home)
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    queue = ctx.Queue()
    procs = [ctx.Process(target=race_in_process,
                         args=((str(home), str(starts), "fake:g", 4, 125, barrier), queue))
             for _ in range(2)]
    for proc in procs:
        proc.start()
    results = [queue.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    queue.close()
    queue.join_thread()
    lines = starts.read_text().splitlines()
    assert len(lines) == 1, lines
    total: dict[str, int] = {}
    for r in results:
        for key, count in r["outcomes"].items():
            total[key] = total.get(key, 0) + count
    assert sum(total.values()) == 1000 and total["resumed"] == 1
