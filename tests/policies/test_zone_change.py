"""A change of the local zone while the host runs (issue 21): the allowed hours are judged in the
new zone at once, a resume due at a reset (a UTC instant) is neither moved before it, lost nor
doubled, and hours in a named zone are not touched. The clock's zone is a
:class:`~core.clock.FakeZone` the test sets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from core.clock import FakeClock, FakeZone
from tests.policies.support import H, policy_settings, rows, started, waiting
from tests.support.fakes import advance

pytestmark = pytest.mark.asyncio
# the fake clock starts on Tuesday 2026-07-07 12:00 UTC: 14:00 in Berlin, 21:00 in Tokyo,
# 08:00 in New York
EVENING = datetime(2026, 7, 7, 17, 0, tzinfo=UTC)  # 19:00 in Berlin
HOURS = "Mon-Fri 19:00-08:00"
MARGIN = timedelta(seconds=45)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(zones=FakeZone(ZoneInfo("Europe/Berlin")))


def local_hours(**kw: str) -> object:
    return policy_settings(auto_resume_timezone="", auto_resume_hours=HOURS, **kw)


async def test_a_zone_where_the_hours_allow_it_resumes_at_the_reset_not_before_and_once(
        make_engine, fake, clock) -> None:
    reset = waiting(fake, clock)  # 15:00 in Berlin: outside the hours
    engine = await make_engine(fake, settings=local_hours())
    g = engine.goals["fake:g"]
    assert g.next_resume_at == EVENING and g.deferred_by == "allowed hours"
    clock.zones.set("Asia/Tokyo")  # 21:00 there: inside them
    await advance(engine, clock, 61)  # the scheduler's longest sleep while a resume is due
    g = engine.goals["fake:g"]
    assert g.next_resume_at == reset + MARGIN and g.deferred_by is None  # the reset, not now
    assert engine.policy.rules.zone_name == "Asia/Tokyo"
    planned = (await rows(engine, "fake:g", "resume_scheduled"))[0]
    assert planned.detail["zone"] == "Asia/Tokyo"
    await advance(engine, clock, (reset + MARGIN - clock.now()).total_seconds() - 1)
    assert started(fake) == []  # not before the reset
    await advance(engine, clock, 2)
    assert started(fake) == ["fake:g"]
    clock.zones.set("Europe/Berlin")  # and back: nothing is due again
    await advance(engine, clock, 4 * H)
    assert started(fake) == ["fake:g"]


async def test_a_zone_still_outside_the_hours_moves_the_resume_to_their_start_there(
        make_engine, fake, clock) -> None:
    waiting(fake, clock)
    engine = await make_engine(fake, settings=local_hours())
    clock.zones.set("America/New_York")  # 08:00 there: the night range just ended
    await advance(engine, clock, 61)
    g = engine.goals["fake:g"]
    new_york_evening = datetime(2026, 7, 7, 23, 0, tzinfo=UTC)  # 19:00 EDT
    assert g.next_resume_at == new_york_evening and g.deferred_by == "allowed hours"
    await advance(engine, clock, (EVENING - clock.now()).total_seconds() + 60)
    assert started(fake) == []  # Berlin's evening is not New York's
    await advance(engine, clock, (new_york_evening - clock.now()).total_seconds() + 1)
    assert started(fake) == ["fake:g"]


async def test_a_zone_change_after_the_reset_resumes_at_once_in_the_new_zone(
        make_engine, fake, clock) -> None:
    reset = waiting(fake, clock)
    engine = await make_engine(fake, settings=local_hours())
    await advance(engine, clock, (reset + MARGIN - clock.now()).total_seconds() + 60)
    assert started(fake) == []  # 15:01 in Berlin: still outside
    clock.zones.set("Asia/Tokyo")  # 22:01 there
    await advance(engine, clock, 61)
    assert started(fake) == ["fake:g"]


async def test_hours_in_a_named_zone_do_not_move_with_the_local_zone(make_engine, fake,
                                                                     clock) -> None:
    waiting(fake, clock)
    engine = await make_engine(fake, settings=policy_settings(auto_resume_hours=HOURS))
    before = await rows(engine, "fake:g", "resume_scheduled")
    clock.zones.set("Asia/Tokyo")
    await advance(engine, clock, 61)
    assert engine.goals["fake:g"].next_resume_at == EVENING
    assert await rows(engine, "fake:g", "resume_scheduled") == before
    assert engine.policy.rules.zone_name == "Europe/Berlin"
