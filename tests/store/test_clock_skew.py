"""Issue 21: on a shared store a reading's freshness is judged by the database's clock. A host
whose clock runs 2 h fast neither freezes its account's shared reading nor goes unnoticed: its
readings are refused, and every host's health names it with its offset."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.clock import FakeClock
from core.hosts.listing import host_lines
from core.store.postgres import PostgresStore
from tests.support.fakes import FakeProvider, reading, until

Make = Callable[..., Any]
SKEWED = "host desk: its clock is 2:00:00 ahead of the store's"


def _alice(used: float, at: datetime) -> Any:
    return reading("fake:5h", used, at, at + timedelta(hours=1)).model_copy(
        update={"account": "alice"})


def test_a_reading_stamped_ahead_of_the_database_is_refused(pg_url: str) -> None:
    laptop, desk = PostgresStore(pg_url), PostgresStore(pg_url)
    laptop.host_id, desk.host_id = "laptop", "desk"
    try:
        now = datetime.now(UTC)
        assert not desk.save_reading(_alice(100, now + timedelta(hours=2)))
        assert laptop.save_reading(_alice(10, now))
        assert laptop.save_reading(_alice(12, now + timedelta(seconds=1)))
        assert [r.used_percent for r in desk.latest_readings(["alice"])] == [12]
        assert [used for _, used in desk.series("fake:5h", account="alice")] == [10, 12]
        assert desk.save_reading(_alice(13, now + timedelta(seconds=2)))  # a few s: fine
    finally:
        laptop.close()
        desk.close()


def test_a_future_stamped_latest_left_by_an_older_version_gives_way(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    store.host_id = "laptop"
    try:
        now = datetime.now(UTC)
        future = _alice(100, now + timedelta(hours=2))
        store._write(lambda con: con.execute(
            "INSERT INTO quota_latest VALUES ('alice', 'fake:5h', 'fake', %s, %s::jsonb, "
            "'desk', 'exact')", (future.observed_at, future.model_dump_json())))
        assert store.save_reading(_alice(5, now))
        assert [r.used_percent for r in store.latest_readings(["alice"])] == [5]
    finally:
        store.close()


@pytest.mark.asyncio
async def test_a_fast_host_never_displaces_a_correct_hosts_readings_and_is_named(
        make_host: Make) -> None:
    now = datetime.now(UTC)
    right, fast = FakeClock(now), FakeClock(now + timedelta(hours=2))
    a = await make_host("laptop", FakeProvider(right), clock_of=right)
    b = await make_host("desk", FakeProvider(fast), clock_of=fast)
    await b.quota_intake.record_reading(_alice(100, fast.now()))
    await a.quota_intake.record_reading(_alice(7, right.now()))
    latest = await a.store.run(lambda s: s.latest_reading("alice", "fake:5h"))
    assert latest is not None and latest.used_percent == 7
    await a.host_registry.beat()  # both heartbeats are in: each host measured
    for engine in (a, b):
        await engine.host_registry.beat()
        await until(lambda e=engine: any(SKEWED in p for p in e.health().problems()), 10)
        assert not any("laptop" in p for p in engine.health().problems())
    hosts = await a.store.run(lambda s: s.list_hosts())
    lines = {line.record.host_id: line for line in host_lines(hosts, [], now, 60, "laptop")}
    assert lines["desk"].skewed and not lines["laptop"].skewed
    offset = lines["desk"].to_json()["clock_offset_seconds"]
    assert 7190 < offset < 7210, offset


@pytest.mark.asyncio
async def test_a_fast_hosts_early_reset_wakes_nothing_a_correct_hosts_does(
        make_host: Make) -> None:
    from core.models import GoalState, PauseReason

    now = datetime.now(UTC)
    right, fast = FakeClock(now), FakeClock(now + timedelta(hours=2))
    fb = FakeProvider(right)
    reset = now + timedelta(hours=1)
    fb.readings = [_alice(100, now).model_copy(update={"resets_at": reset,
                                                       "limit_reached": True})]
    fb.observations = [fb.observe("fake:b", GoalState.PAUSED, reason=PauseReason.QUOTA,
                                  resets_at=reset, auto_resume=True)]
    b = await make_host("desk", fb, clock_of=right, stable_seconds=5)
    a = await make_host("laptop", FakeProvider(fast), clock_of=fast)
    waiting = b.goals["fake:b"].next_resume_at
    assert waiting is not None and waiting > now + timedelta(minutes=59)
    await a.quota_intake.record_reading(_alice(3, fast.now()))  # "back", 2 h in the future
    await b.drain()
    assert b.goals["fake:b"].next_resume_at == waiting
    c = await make_host("other", FakeProvider(right), clock_of=right)
    await c.quota_intake.record_reading(_alice(3, right.now() + timedelta(seconds=1)))
    await until(lambda: (at := b.goals["fake:b"].next_resume_at) is not None and at <= right.now()
                + timedelta(seconds=1), 10)
    rows = await b.store.run(lambda s: s.history("fake:b", 20))
    woke = [r.reason for r in rows if r.event == "resume_scheduled" and "read by" in (
        r.reason or "")]
    assert woke and not any("laptop" in (w or "") for w in woke), woke
