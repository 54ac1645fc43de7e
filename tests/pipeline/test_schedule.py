"""Schedules: daily times and cron expressions, in a time zone, across DST."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from core.providers.pipeline.schedule import next_fire, parse_schedule

SHANGHAI = ZoneInfo("Asia/Shanghai")
BERLIN = ZoneInfo("Europe/Berlin")


def test_daily_fires_at_the_local_time_in_its_zone() -> None:
    daily = parse_schedule("09:00")
    after = datetime(2026, 7, 10, 0, 30, tzinfo=UTC)  # 08:30 in Shanghai
    assert next_fire(daily, after, SHANGHAI) == datetime(2026, 7, 10, 1, 0, tzinfo=UTC)
    after = datetime(2026, 7, 10, 1, 0, tzinfo=UTC)  # exactly 09:00: the next day's
    assert next_fire(daily, after, SHANGHAI) == datetime(2026, 7, 11, 1, 0, tzinfo=UTC)


def test_cron_expressions_fire_in_their_zone() -> None:
    weekdays = parse_schedule("30 9 * * 1-5")
    friday_evening = datetime(2026, 7, 10, 12, 0, tzinfo=UTC)
    assert next_fire(weekdays, friday_evening, SHANGHAI) == datetime(2026, 7, 13, 1, 30,
                                                                    tzinfo=UTC)


def test_a_daily_time_in_a_dst_gap_fires_after_the_jump() -> None:
    daily = parse_schedule("02:30")  # does not exist in Berlin on 2026-03-29
    after = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)
    fired = next_fire(daily, after, BERLIN)
    assert fired == datetime(2026, 3, 29, 1, 0, tzinfo=UTC)  # 03:00 CEST, as cron does


def test_daily_uses_wall_time_across_dst() -> None:
    daily = parse_schedule("09:00")
    before = next_fire(daily, datetime(2026, 3, 27, 12, 0, tzinfo=UTC), BERLIN)
    after = next_fire(daily, before, BERLIN)
    assert before.astimezone(BERLIN).hour == after.astimezone(BERLIN).hour == 9
    assert (after - before).total_seconds() == 23 * 3600


@pytest.mark.parametrize("text", ["24:00", "9", "* * *", "0 25 * * *", "every day"])
def test_bad_schedules_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_schedule(text)
