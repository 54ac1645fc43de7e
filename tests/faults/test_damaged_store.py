"""Damaged, read-only, zero-byte, WAL-less and missing databases: reported, safe mode, restore."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from core.clock import FakeClock
from core.commands import Pause, Resume
from core.engine import Engine
from core.models import GoalState, Outcome, PauseReason
from core.paths import Paths, resolve_paths
from core.settings import Settings
from core.store import SqliteStore, StoreError
from core.store.backup import list_backups, take_backup, verify
from core.store.guard import ProblemKind
from tests.support.fakes import FakeProvider, settled, until
from tests.support.faults import remount

PAGE = 4096


def make(paths: Paths, clock: FakeClock, *goals: str) -> tuple[Engine, FakeProvider]:
    fake = FakeProvider(clock)
    for goal in goals:
        fake.observe(goal, GoalState.PAUSED, reason=PauseReason.USER)
    return Engine(paths, Settings(resume_jitter_seconds=0), [fake], clock,
                  random.Random(3)), fake


async def healthy_run(paths: Paths, clock: FakeClock, *goals: str) -> None:
    """A host that stores goals and takes its first daily backup, then stops cleanly."""
    engine, _ = make(paths, clock, *goals)
    await engine.start()
    await settled(engine)
    await until(lambda: bool(engine.store_keeper.backups()))
    await engine.stop()


def damage_a_page(db: Path, page: int = 2) -> None:
    with open(db, "r+b") as handle:
        handle.seek((page - 1) * PAGE)
        handle.write(b"\xde\xad\xbe\xef" * (PAGE // 4))


def companions(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.iterdir() if p.name.startswith(db.name))


@pytest.mark.asyncio
@pytest.mark.parametrize("how", ["page", "garbage"])
async def test_a_damaged_database_starts_safe_mode_and_a_backup_is_restored(
        paths: Paths, clock: FakeClock, how: str) -> None:
    await healthy_run(paths, clock, "fake:a", "fake:b")
    if how == "page":
        damage_a_page(paths.database)
    else:
        paths.database.write_bytes(b"not a database at all" * 500)
    damaged = paths.database.read_bytes()
    engine, _ = make(paths, clock, "fake:a", "fake:b")
    await engine.start()
    try:
        assert engine.safe_mode.problem is not None and "damaged" in engine.safe_mode.problem
        assert "verified backup" in engine.safe_mode.problem and "goalkeeper store restore" in \
            engine.safe_mode.problem
        assert engine.store.problem is not None
        assert engine.store.problem.kind is ProblemKind.DAMAGED
        assert engine.health().safe_mode == engine.safe_mode.problem
        # nothing runs
        assert not engine.provider_supervisor.started and not engine.scheduler.running
        refused = await engine.perform(Resume("fake:a"))
        assert refused.outcome is Outcome.REFUSED and refused.reason.startswith("safe mode")
        assert paths.database.read_bytes() == damaged  # never replaced behind the user's back
        reply = await engine.safe_mode.restore(None, empty=False)
        assert "error" not in reply, reply
        assert engine.safe_mode.problem is None and engine.provider_supervisor.started == {"fake"}
        await settled(engine)
        assert {"fake:a", "fake:b"} <= set(engine.goals)
        aside = Path(str(reply["moved_aside"]))
        assert aside.read_bytes() == damaged  # kept, not deleted
    finally:
        await engine.stop()


@pytest.mark.asyncio
async def test_restore_is_refused_while_the_store_is_healthy(paths: Paths,
                                                             clock: FakeClock) -> None:
    engine, _ = make(paths, clock, "fake:a")
    await engine.start()
    try:
        reply = await engine.safe_mode.restore(None, empty=True)
        assert "healthy" in str(reply["error"])
        assert paths.database.exists()
    finally:
        await engine.stop()


@pytest.mark.asyncio
async def test_a_zero_byte_database_that_held_data_is_reported_not_replaced(
        paths: Paths, clock: FakeClock) -> None:
    await healthy_run(paths, clock, "fake:a")
    paths.database.write_bytes(b"")
    for suffix in ("-wal", "-shm"):
        Path(f"{paths.database}{suffix}").unlink(missing_ok=True)
    engine, _ = make(paths, clock, "fake:a")
    await engine.start()
    try:
        assert engine.store.problem is not None
        assert engine.store.problem.kind is ProblemKind.ZERO_BYTES
        assert "zero bytes" in str(engine.safe_mode.problem)
        assert paths.database.stat().st_size == 0  # not silently an empty store
        reply = await engine.safe_mode.restore(None, empty=True)
        assert reply.get("ok") and engine.safe_mode.problem is None
        await settled(engine)
        assert "fake:a" in engine.goals  # found again by its provider
    finally:
        await engine.stop()


@pytest.mark.asyncio
async def test_a_deleted_wal_is_reported_not_replaced(paths: Paths, clock: FakeClock,
                                                      tmp_path: Path) -> None:
    engine, _ = make(paths, clock, "fake:a", "fake:b")
    await engine.start()
    await settled(engine)
    # the state a killed host leaves: the database and its write-ahead log, copied now
    crashed = resolve_paths({"GOALKEEPER_HOME": str(tmp_path / "crashed")})
    crashed.data_dir.mkdir(parents=True)
    for name in ("goalkeeper.db", "goalkeeper.db-wal", "store.json"):
        shutil.copy2(paths.data_dir / name, crashed.data_dir / name)
    await engine.stop()
    (crashed.data_dir / "goalkeeper.db-wal").unlink()  # ... and then the -wal is deleted
    before = crashed.database.read_bytes()
    again, _ = make(crashed, clock, "fake:a")
    await again.start()
    try:
        assert again.store.problem is not None
        assert again.store.problem.kind is ProblemKind.LOST_WRITES
        assert "goalkeeper.db-wal is missing" in str(again.safe_mode.problem)
        assert crashed.database.read_bytes() == before
    finally:
        await again.stop()


@pytest.mark.asyncio
async def test_a_missing_database_that_held_data_is_reported(paths: Paths,
                                                             clock: FakeClock) -> None:
    await healthy_run(paths, clock, "fake:a")
    paths.database.unlink()
    engine, _ = make(paths, clock)
    await engine.start()
    try:
        assert engine.store.problem is not None
        assert engine.store.problem.kind is ProblemKind.MISSING
        assert not paths.database.exists()
    finally:
        await engine.stop()


@pytest.mark.asyncio
async def test_a_read_only_database_gets_safe_mode_showing_its_goals(
        tmp_path: Path, clock: FakeClock, request: pytest.FixtureRequest) -> None:
    if os.geteuid() == 0:
        small = request.getfixturevalue("tmpfs")
        paths = resolve_paths({"GOALKEEPER_HOME": str(small / "home")})
    else:
        paths = resolve_paths({"GOALKEEPER_HOME": str(tmp_path / "home")})
    await healthy_run(paths, clock, "fake:a")
    if os.geteuid() == 0:
        remount(small, "ro")
    else:
        paths.database.chmod(0o444)
    engine, _ = make(paths, clock, "fake:a")
    try:
        await engine.start()  # no traceback: safe mode
        assert engine.store.problem is not None
        assert engine.store.problem.kind is ProblemKind.READ_ONLY
        assert "read-only" in str(engine.safe_mode.problem)
        assert "fake:a" in engine.goals  # what can be read is shown
    finally:
        await engine.stop()
        if os.geteuid() == 0:
            remount(small, "rw")


@pytest.mark.asyncio
async def test_daily_backups_are_verified_and_two_are_kept(paths: Paths,
                                                           clock: FakeClock) -> None:
    engine, _ = make(paths, clock, "fake:a")
    await engine.start()
    try:
        await until(lambda: len(engine.store_keeper.backups()) == 1)
        for _ in range(3):
            clock.advance(86400)
            newest = clock.now().replace(microsecond=0)
            await until(lambda at=newest: [b.taken_at for b in engine.store_keeper.backups()][:1]
                        == [at] and len(engine.store_keeper.backups()) <= 2)
        backups = engine.store_keeper.backups()
        assert len(backups) == 2
        assert all(verify(b.path) is None for b in backups)
        assert backups[0].taken_at - backups[1].taken_at == timedelta(days=1)
    finally:
        await engine.stop()


def test_a_copy_of_a_damaged_store_is_never_kept_as_a_backup(tmp_path: Path,
                                                            clock: FakeClock) -> None:
    db = tmp_path / "goalkeeper.db"
    store = SqliteStore(db)
    for i in range(300):
        store.set_meta(f"k{i}", "v" * 300)
    good = take_backup(store, tmp_path / "backups", clock.now())
    store.close()
    damage_a_page(db, page=20)  # a page of meta rows (a damaged index would be rebuilt)
    store = SqliteStore(db, migrate=False)
    clock.advance(86400)
    with pytest.raises(StoreError):
        take_backup(store, tmp_path / "backups", clock.now())
    store.close()
    assert [b.path for b in list_backups(tmp_path / "backups")] == [good.path]
    assert sorted(p.name for p in (tmp_path / "backups").iterdir()) == [good.path.name]


def test_verify_rejects_what_is_not_a_sound_backup(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"junk" * 1000)
    assert verify(bad) is not None
    old = tmp_path / "old.db"
    sqlite3.connect(old).close()
    assert "schema version 0" in str(verify(old))


@pytest.mark.slow
@pytest.mark.parametrize("with_host", [True, False])
def test_the_command_line_shows_safe_mode_and_restores(tmp_path: Path, with_host: bool) -> None:
    import json

    from tests.support.faults import daemon, run, status_json, wait_for

    home = tmp_path / "home"
    with daemon(home):
        wait_for(lambda: bool(list((home / "backups").glob("goalkeeper-*.db"))))
    damage_a_page(home / "goalkeeper.db")
    if not with_host:
        listing = json.loads(run(home, "store", "--json").stdout)
        assert listing["host"] == "not_running" and len(listing["backups"]) == 1
        out = run(home, "store", "restore")
        assert out.returncode == 0, out.stderr
        assert "restored from" in out.stdout and "damaged-" in out.stdout
        with daemon(home):
            assert status_json(home)["host"]["problems"] == []
        return
    with daemon(home, goals=False):
        wait_for(lambda: bool(status_json(home, ok=False)["host"]["problems"]))
        damaged = status_json(home, ok=False)
        assert damaged["host"]["problems"][0].startswith("safe mode: the database")
        assert "damaged" in damaged["error"]
        assert "safe mode" in run(home, "store").stdout
        refused = run(home, "resume", "demo:docs")
        assert refused.returncode == 1 and "damaged" in refused.stderr
        out = run(home, "store", "restore")
        assert out.returncode == 0, out.stderr
        assert status_json(home)["host"]["problems"] == []
        assert {g["id"] for g in status_json(home)["goals"]} >= {"demo:docs"}


@pytest.mark.asyncio
async def test_damage_found_while_running_is_checked_then_safe_mode(paths: Paths,
                                                                    clock: FakeClock) -> None:
    from core.models import HistoryRow

    paths.ensure()
    seed = SqliteStore(paths.database)
    for i in range(3000):
        seed.append_history(HistoryRow(at=clock.now(), goal="old:g", event="note",
                                       reason="r" * 200 + str(i)))
    seed.close()
    engine, _ = make(paths, clock, "fake:a")
    await engine.start()
    try:
        await settled(engine)
        await until(lambda: bool(engine.store_keeper.backups()))  # taken before the damage
        engine.store.run_blocking(lambda s: s._con.execute("PRAGMA cache_size = 5"))
        engine.store.run_blocking(lambda s: s._con.execute("PRAGMA wal_checkpoint(TRUNCATE)"))
        pages = paths.database.stat().st_size // PAGE
        damage_a_page(paths.database, pages // 2)
        with pytest.raises(sqlite3.DatabaseError):
            await engine.reads.history(limit=1000, offset=1000)
        await until(lambda: engine.safe_mode.problem is not None)
        assert "integrity check" in str(engine.safe_mode.problem)
        assert not engine.provider_supervisor.started and not engine.scheduler.running
        refused = await engine.perform(Pause("fake:a"))
        assert refused.outcome is Outcome.REFUSED and "safe mode" in refused.reason
        reply = await engine.safe_mode.restore(None, empty=False)
        assert reply.get("ok") and engine.safe_mode.problem is None, reply
        await settled(engine)
        assert "fake:a" in engine.goals and engine.provider_supervisor.started == {"fake"}
    finally:
        await engine.stop()


@pytest.mark.slow
def test_an_action_on_a_zero_byte_store_in_safe_mode_is_refused_for_safe_mode(
        tmp_path: Path) -> None:
    """The store knows no goal (zero bytes), but the answer is the host's: safe mode — not
    "unknown goal", which would send you looking for the wrong thing (issue 21)."""
    from tests.support.faults import daemon, run, status_json, wait_for

    home = tmp_path / "home"
    with daemon(home):
        pass
    (home / "goalkeeper.db").write_bytes(b"")
    for suffix in ("-wal", "-shm"):
        Path(f"{home / 'goalkeeper.db'}{suffix}").unlink(missing_ok=True)
    with daemon(home, goals=False):
        wait_for(lambda: bool(status_json(home, ok=False)["host"]["problems"]))
        out = run(home, "pause", "demo:docs")
        assert out.returncode == 4, (out.stdout, out.stderr)
        assert out.stdout.startswith("demo:docs: refused: safe mode: the database "), out.stdout
        assert "zero bytes" in out.stdout
    assert run(home, "pause", "demo:docs").returncode == 3  # no host: unknown, as before
