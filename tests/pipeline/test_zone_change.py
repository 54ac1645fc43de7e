"""A pipeline schedule in the local zone follows a change of zone while the host runs
(issue 21): planned again in the new zone, it does not fire at the old zone's time; one with a
``timezone`` of its own does not move."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from core.clock import FakeClock, FakeZone
from core.paths import Paths
from tests.pipeline.support import step
from tests.support.engine import EngineFactory
from tests.support.fakes import until
from tests.support.pipeline import host

pytestmark = pytest.mark.asyncio
# the fake clock starts at 2026-07-07 12:00 UTC; 12:30 in New York (EDT) is 16:30 UTC
NEW_YORK_1230 = datetime(2026, 7, 7, 16, 30, tzinfo=UTC)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(zones=FakeZone(UTC))


def effects(tmp_path: Path) -> list[str]:
    path = tmp_path / "effects.log"
    return path.read_text().split() if path.exists() else []


async def test_a_local_schedule_is_planned_again_in_the_new_zone(
        make_engine: EngineFactory, paths: Paths, clock: FakeClock, tmp_path: Path) -> None:
    _, provider = await host(make_engine, paths, clock, tmp_path, [],
                             [step("deliver", {"effect": str(tmp_path / "effects.log")})],
                             schedule="12:30")
    assert provider.next_wake(clock.now()) == clock.now() + timedelta(minutes=30)
    clock.zones.set(ZoneInfo("America/New_York"))
    await clock.run_for(120, step=30)  # a scheduler pass notices it
    assert provider.next_wake(clock.now()) == NEW_YORK_1230
    await clock.run_for(40 * 60, step=60)  # past 12:30 UTC
    assert effects(tmp_path) == []
    await clock.run_for((NEW_YORK_1230 - clock.now()).total_seconds() + 60, step=60)
    await until(lambda: effects(tmp_path) == ["deliver"], 15)


async def test_a_schedule_in_its_own_zone_does_not_move(
        make_engine: EngineFactory, paths: Paths, clock: FakeClock, tmp_path: Path) -> None:
    _, provider = await host(make_engine, paths, clock, tmp_path, [],
                             [step("deliver", {"effect": str(tmp_path / "effects.log")})],
                             schedule="12:30", timezone="UTC")
    clock.zones.set(ZoneInfo("America/New_York"))
    await clock.run_for(120, step=30)
    assert provider.next_wake(clock.now()) == datetime(2026, 7, 7, 12, 30, tzinfo=UTC)
