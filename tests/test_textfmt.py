"""Human renderings of instants and durations, across days and DST changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from core.i18n.textfmt import age, countdown, duration, long_time, short_time

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0:00"), (42, "0:42"), (3599.6, "1:00:00"), (6442, "1:47:22"),
    (86400, "1d 00:00:00"), (2 * 86400 + 3 * 3600 + 4 * 60 + 5, "2d 03:04:05"), (-5, "0:00"),
])
def test_duration(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_countdown_future_and_overdue() -> None:
    now = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)
    assert countdown(now + timedelta(hours=1, minutes=47, seconds=22), now) == "in 1:47:22"
    assert countdown(now + timedelta(days=6, hours=1), now) == "in 6d 01:00:00"
    assert countdown(now, now) == "now"
    assert countdown(now - timedelta(seconds=90), now) == "now (due 1:30 ago)"


def test_countdown_across_spring_forward_counts_real_time() -> None:
    # Berlin skips 02:00-03:00 on 2026-03-29: 01:30 -> 03:30 local is one real hour
    now = datetime(2026, 3, 29, 1, 30, tzinfo=BERLIN)
    target = datetime(2026, 3, 29, 3, 30, tzinfo=BERLIN)
    assert countdown(target, now) == "in 1:00:00"
    assert short_time(target, now, BERLIN) == "03:30"


def test_countdown_across_fall_back_counts_real_time() -> None:
    # New York repeats 01:00-02:00 on 2026-11-01: 00:30 -> 02:30 local is three real hours
    now = datetime(2026, 11, 1, 0, 30, tzinfo=NEW_YORK)
    target = datetime(2026, 11, 1, 2, 30, tzinfo=NEW_YORK)
    assert countdown(target, now) == "in 3:00:00"


def test_short_time_names_local_days() -> None:
    now = datetime(2026, 3, 28, 22, 0, tzinfo=UTC)  # 23:00 in Berlin, Saturday
    assert short_time(datetime(2026, 3, 28, 22, 40, tzinfo=UTC), now, BERLIN) == "23:40"
    # 23:30 UTC is already Sunday in Berlin
    assert short_time(datetime(2026, 3, 28, 23, 30, tzinfo=UTC), now, BERLIN) == "tomorrow 00:30"
    # after the spring-forward change, Berlin is UTC+2
    assert short_time(datetime(2026, 3, 29, 16, 40, tzinfo=UTC), now, BERLIN) == "tomorrow 18:40"
    assert short_time(datetime(2026, 3, 31, 8, 0, tzinfo=UTC), now, BERLIN) == "Tue 31 Mar 10:00"
    assert short_time(datetime(2026, 4, 10, 8, 0, tzinfo=UTC), now, BERLIN) == "2026-04-10 10:00"
    assert short_time(datetime(2026, 3, 27, 22, 30, tzinfo=UTC), now, BERLIN) == "yesterday 23:30"


def test_long_time_carries_the_zone_abbreviation_on_each_side_of_dst() -> None:
    assert long_time(datetime(2026, 3, 29, 0, 30, tzinfo=UTC), BERLIN) == (
        "Sun 2026-03-29 01:30:00 CET")
    assert long_time(datetime(2026, 3, 29, 1, 30, tzinfo=UTC), BERLIN) == (
        "Sun 2026-03-29 03:30:00 CEST")


@pytest.mark.parametrize(("seconds", "text"), [
    (5, "5 s"), (59, "59 s"), (60, "1 min"), (754, "12 min"), (7500, "2 h 05 min"),
    (3 * 86400 + 4 * 3600 + 99, "3 d 4 h"),
])
def test_age(seconds: float, text: str) -> None:
    assert age(seconds) == text
