"""A store that cannot take writes — disk full, a lock held by another process — loses nothing.

Reports wait in order and are retried with backoff; the host says "store unavailable: <reason>
since T"; nothing stays ``running`` without a runner; it recovers without a restart.
"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import threading
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
import pytest_asyncio

from core.clock import FakeClock
from core.commands import Pause, Resume, Start
from core.engine import Engine
from core.host import control_server
from core.models import GoalState, Outcome, PauseReason
from core.paths import Paths, resolve_paths
from core.settings import Settings
from core.store import SqliteStore
from tests.support.fakes import FakeProvider, reading, settled, until
from tests.support.faults import cap_and_fill, fill, uncap

READINGS = 1500


class Disk:
    """Fills and frees the store's space: a 16 MiB tmpfs filled to the brim (root), or the
    database capped at its size with its last pages filled (anyone)."""

    def __init__(self, engine: Engine, kind: str) -> None:
        self.engine, self.kind = engine, kind
        self._filler: Path | None = None

    def fill(self) -> None:
        if self.kind == "tmpfs":
            self._filler = fill(self.engine.paths.data_dir)
        else:
            self.engine.store.run_blocking(cap_and_fill)

    def free(self) -> None:
        if self._filler is not None:
            self._filler.unlink()
            self._filler = None
        else:
            self.engine.store.run_blocking(uncap)


@pytest_asyncio.fixture(params=["tmpfs", "capped"])
async def small_disk(request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock
                     ) -> AsyncIterator[tuple[Engine, FakeProvider, Disk]]:
    """An engine with one goal running, and a way to fill its store's disk."""
    root = request.getfixturevalue("tmpfs") if request.param == "tmpfs" else tmp_path
    paths = resolve_paths({"GOALKEEPER_HOME": str(root / "home")})
    fake = FakeProvider(clock)
    fake.observe("fake:g", GoalState.IDLE)
    engine = Engine(paths, Settings(resume_jitter_seconds=0), [fake], clock, random.Random(5))
    await engine.start()
    await settled(engine)
    assert (await engine.perform(Start("fake:g"))).outcome is Outcome.RESUMED
    await until(lambda: len(engine.store_keeper.backups()) == 1)
    disk = Disk(engine, request.param)
    try:
        yield engine, fake, disk
    finally:
        disk.free()
        await engine.stop()


async def recovered(engine: Engine, clock: FakeClock) -> None:
    """Let the queue's backoff run out on the fake clock until everything is stored."""
    for _ in range(50):
        clock.advance(engine.report_queue.policy.local_max)
        for _ in range(20):
            await asyncio.sleep(0)
        if not len(engine.report_queue) and engine.report_queue.health.available:
            break
    await settled(engine)


def flood(engine: Engine, fake: FakeProvider, clock: FakeClock) -> None:
    """What providers report while the disk is full: many readings, then the goal's end."""
    for i in range(READINGS):
        fake.sink.quota_observed(reading("fake:5h", i % 100, clock.now() + timedelta(
            milliseconds=i)))
    goal = engine.goals["fake:g"]
    fake.sink.goal_finished("fake:g", goal.fence, "all done")


@pytest.mark.asyncio
async def test_disk_full_loses_no_report_and_recovers_without_a_restart(
        small_disk: tuple[Engine, FakeProvider, Disk], clock: FakeClock) -> None:
    engine, fake, disk = small_disk
    disk.fill()
    flooded_at = clock.now()
    flood(engine, fake, clock)
    await until(lambda: not engine.report_queue.health.available)
    health = engine.health()
    assert health.store.reason is not None and "full" in health.store.reason
    assert health.store.since == clock.now()
    text = health.store.describe()
    assert text.startswith("store unavailable: database or disk is full") and " since " in text
    ping = await control_server(engine, engine.paths).dispatch(b'{"op": "ping"}')
    assert ping["health"]["store"]["text"] == text  # what `status` and the window show
    # bounded: the readings of one window merge; the finish is kept, in order, behind them
    assert len(engine.report_queue) <= 3
    for _ in range(5):  # retried with backoff while the disk stays full: still waiting
        clock.advance(engine.report_queue.policy.local_max)
        await asyncio.sleep(0.05)
    assert engine.goals["fake:g"].state is GoalState.RUNNING and len(engine.report_queue) >= 1
    disk.free()  # space comes back
    await recovered(engine, clock)
    assert engine.report_queue.health.available and len(engine.report_queue) == 0
    assert engine.goals["fake:g"].state is GoalState.DONE
    latest = await engine.store.run(lambda s: s.latest_readings())
    assert latest[0].observed_at == flooded_at + timedelta(milliseconds=READINGS - 1)


@pytest.mark.asyncio
async def test_a_start_that_failed_while_the_disk_was_full_is_recorded_later(
        small_disk: tuple[Engine, FakeProvider, Disk], clock: FakeClock) -> None:
    engine, fake, disk = small_disk
    fake.observe("fake:h", GoalState.IDLE)
    await engine.refresh()
    await settled(engine)

    async def refuse(goal: object, fence: int) -> object:
        disk.fill()  # the disk fills up meanwhile
        raise RuntimeError("the agent would not start")

    fake.start_goal = refuse  # type: ignore[method-assign, assignment]
    answer = await engine.perform(Start("fake:h"))
    assert answer.outcome is Outcome.FAILED
    assert engine.goals["fake:h"].state is GoalState.RUNNING  # claimed; the failure waits
    disk.free()
    await recovered(engine, clock)
    assert engine.goals["fake:h"].state is GoalState.FAILED  # never running without a runner


@pytest.mark.asyncio
async def test_a_resume_the_store_cannot_settle_stops_its_runner(
        small_disk: tuple[Engine, FakeProvider, Disk], clock: FakeClock) -> None:
    engine, fake, disk = small_disk
    await engine.perform(Pause("fake:g"))
    fake.gate = asyncio.Event()
    resume = asyncio.ensure_future(engine.perform(Resume("fake:g")))
    await until(lambda: bool(fake.resume_calls))  # claimed: the runner is starting
    disk.fill()
    fake.gate.set()
    answer = await resume
    assert answer.outcome is Outcome.FAILED and "runner was stopped" in answer.reason
    assert fake.paused.count("fake:g") == 2  # our pause, then the runner nobody could record
    disk.free()
    await recovered(engine, clock)
    goal = engine.goals["fake:g"]
    assert goal.state is GoalState.PAUSED and goal.pause_reason is PauseReason.USER


@pytest.mark.asyncio
async def test_actions_while_the_disk_is_full_answer_store_unavailable(
        small_disk: tuple[Engine, FakeProvider, Disk], clock: FakeClock) -> None:
    engine, _, disk = small_disk
    disk.fill()
    answer = await engine.perform(Pause("fake:g"))
    assert answer.outcome is Outcome.FAILED
    assert answer.reason.startswith("store unavailable: database or disk is full (SQLITE_FULL)"
                                    " since ")
    disk.free()
    assert (await engine.perform(Pause("fake:g"))).outcome is Outcome.PAUSED
    assert engine.report_queue.health.available


# -- a lock held by another process --------------------------------------------------------------


def _hold_write_lock(db: Path, held: threading.Event, release: threading.Event) -> None:
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("BEGIN IMMEDIATE")
    held.set()
    release.wait(30)
    con.execute("ROLLBACK")
    con.close()


@pytest.mark.asyncio
async def test_a_write_lock_held_past_the_busy_timeout_delays_reports_but_loses_none(
        paths: Paths, clock: FakeClock) -> None:
    fake = FakeProvider(clock)
    fake.observe("fake:g", GoalState.IDLE)
    engine = Engine(paths, Settings(resume_jitter_seconds=0), [fake], clock, random.Random(5))
    await engine.start()
    try:
        await settled(engine)
        await engine.perform(Start("fake:g"))
        engine.store.run_blocking(lambda s: s.set_busy_timeout(0.05))
        held, release = threading.Event(), threading.Event()
        holder = threading.Thread(target=_hold_write_lock, args=(paths.database, held, release))
        holder.start()
        held.wait(10)
        fake.sink.goal_finished("fake:g", engine.goals["fake:g"].fence, "done")
        await until(lambda: not engine.report_queue.health.available)
        assert "locked" in str(engine.report_queue.health.reason)
        release.set()
        holder.join()
        await recovered(engine, clock)
        assert engine.goals["fake:g"].state is GoalState.DONE
        assert engine.report_queue.health.available
    finally:
        await engine.stop()


@pytest.mark.asyncio
async def test_a_long_external_reader_does_not_block_the_hosts_writes(
        paths: Paths, clock: FakeClock) -> None:
    fake = FakeProvider(clock)
    engine = Engine(paths, Settings(resume_jitter_seconds=0), [fake], clock, random.Random(5))
    await engine.start()
    try:
        reader = SqliteStore(paths.database, read_only=True)
        reader._con.execute("BEGIN")
        assert reader.list_goals() == []  # a read transaction stays open
        for i in range(50):
            fake.sink.quota_observed(reading("fake:5h", i, clock.now() + timedelta(seconds=i)))
        await settled(engine)
        assert engine.report_queue.health.available and len(engine.report_queue) == 0
        reader._con.execute("COMMIT")
        reader.close()
    finally:
        await engine.stop()


def test_store_health_json_round_trips() -> None:
    from core.health import HostHealth

    engine_health = {"store": {"available": False, "reason": "disk full",
                               "since": "2026-07-07T12:00:00Z", "waiting": 3},
                     "providers": [{"name": "codex", "state": "failed", "reason": "boom",
                                    "since": "2026-07-07T12:00:00Z", "attempts": 2}]}
    health = HostHealth.from_json(json.loads(json.dumps(engine_health)))
    assert health.problems() == [
        "store unavailable: disk full since 2026-07-07T12:00:00Z",
        "provider codex: start failed since 2026-07-07T12:00:00Z: boom (tried 2×)"]
