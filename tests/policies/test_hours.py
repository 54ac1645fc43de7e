"""Allowed hours: the syntax and its messages, ranges across midnight, DST edges in two zones."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.policies.hours import AllowedHours, HoursError, parse_hours

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def hours(text: str, zone: ZoneInfo = BERLIN) -> AllowedHours:
    weekly = parse_hours(text)
    assert weekly is not None
    return weekly.in_zone(zone)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


def local(zone: ZoneInfo, *args: int, fold: int = 0) -> datetime:
    return datetime(*args, tzinfo=zone, fold=fold).astimezone(UTC)  # type: ignore[misc]


@pytest.mark.parametrize(("text", "message"), [
    ("Mon-Fry 19:00-08:00", "unknown day 'Fry'"),
    ("Mon 25:00-26:00", "25:00 is not a start time"),
    ("Mon 24:00-01:00", "24:00 is not a start time"),
    ("Mon 10:61-11:00", "10:61 is not a start time"),
    ("Mon 08:00-08:00", "starts and ends at the same time"),
    ("Mon 9-10", "'9-10' is not a time range"),
    ("Mon 19:00-08:00,", "an empty item"),
    ("except", "'except' needs the ranges"),
    ("except 00:00-24:00", "allows no time at all"),
])
def test_bad_specifications_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(HoursError, match=message):
        parse_hours(text)


def test_empty_means_any_time_and_the_text_is_normalised() -> None:
    assert parse_hours("") is None and parse_hours("   ") is None
    weekly = parse_hours("  mon-FRI   19:00-08:00 ,  Sat-Sun ")
    assert weekly is not None and weekly.text == "mon-FRI 19:00-08:00 , Sat-Sun"


def test_the_issue_example_weeknights_and_weekends() -> None:
    h = hours("Mon-Fri 19:00-08:00, Sat-Sun 00:00-24:00")
    tue = local(BERLIN, 2026, 7, 7, 12, 0)  # a Tuesday noon
    assert not h.allows(tue)
    assert h.next_allowed(tue) == local(BERLIN, 2026, 7, 7, 19, 0)
    assert h.allows(local(BERLIN, 2026, 7, 8, 7, 59))  # Tuesday's range runs into Wednesday
    assert not h.allows(local(BERLIN, 2026, 7, 8, 8, 0))  # the end is not included
    assert h.allows(local(BERLIN, 2026, 7, 11, 7, 0))  # Friday night into Saturday
    assert h.allows(local(BERLIN, 2026, 7, 12, 23, 59))  # all of Sunday
    # a range belongs to the day it starts on: Monday 00:00-08:00 is Sunday's night, and
    # Sunday's range is 00:00-24:00 — so Monday morning is not in these hours
    assert not h.allows(local(BERLIN, 2026, 7, 13, 3, 0))
    assert hours("except Mon-Fri 08:00-19:00").allows(local(BERLIN, 2026, 7, 13, 3, 0))


def test_ranges_across_midnight_and_wrapping_day_ranges() -> None:
    h = hours("Fri-Mon 22:00-06:00")  # Fri, Sat, Sun and Mon nights
    assert h.allows(local(BERLIN, 2026, 7, 11, 5, 59))  # Friday's night, Saturday morning
    assert h.allows(local(BERLIN, 2026, 7, 14, 5, 0))  # Monday's night, Tuesday morning
    assert not h.allows(local(BERLIN, 2026, 7, 15, 5, 0))  # Tuesday's night is not included
    assert hours("Mon/Wed 12:00-13:00").allows(local(BERLIN, 2026, 7, 8, 12, 30))
    assert hours("22:00-06:00").allows(local(BERLIN, 2026, 7, 8, 2, 0))  # every day
    assert hours("Sat").allows(local(BERLIN, 2026, 7, 11, 23, 59))  # whole days


def test_quiet_hours_with_except() -> None:
    h = hours("except Mon-Fri 09:00-18:00")
    assert not h.allows(local(BERLIN, 2026, 7, 7, 10, 0))
    assert h.next_allowed(local(BERLIN, 2026, 7, 7, 10, 0)) == local(BERLIN, 2026, 7, 7, 18, 0)
    assert h.allows(local(BERLIN, 2026, 7, 11, 10, 0))


def test_results_are_utc_and_an_allowed_instant_is_its_own_next() -> None:
    h = hours("Mon-Sun 00:00-24:00")
    at = datetime(2026, 7, 7, 12, 0, 13, tzinfo=BERLIN)
    assert h.next_allowed(at) == at and h.next_allowed(at).tzinfo is UTC  # type: ignore[union-attr]
    assert h.describe() == "Mon-Sun 00:00-24:00 (Europe/Berlin)"


# -- DST: Europe/Berlin (02:00 CET -> 03:00 CEST on 29 March; 03:00 CEST -> 02:00 CET on 25 Oct)


def test_berlin_spring_forward_shortens_a_night_range() -> None:
    h = hours("22:00-06:00")
    assert h.allows(utc(2026, 3, 28, 21, 0))  # Saturday 22:00 CET
    assert h.allows(utc(2026, 3, 29, 3, 59))  # Sunday 05:59 CEST: 7 hours, not 8
    assert not h.allows(utc(2026, 3, 29, 4, 0))  # 06:00 CEST
    assert h.next_allowed(utc(2026, 3, 29, 4, 0)) == utc(2026, 3, 29, 20, 0)  # 22:00 CEST


def test_berlin_a_range_starting_in_the_gap_starts_at_the_gap_end() -> None:
    h = hours("Sun 02:30-04:00")
    assert h.next_allowed(utc(2026, 3, 29, 0, 0)) == utc(2026, 3, 29, 1, 0)  # 03:00 CEST
    assert not h.allows(utc(2026, 3, 29, 0, 59))  # 01:59 CET


def test_berlin_fall_back_repeats_the_hour_and_both_count() -> None:
    h = hours("Sun 02:00-02:30")
    assert h.allows(utc(2026, 10, 25, 0, 15))  # 02:15 CEST
    assert not h.allows(utc(2026, 10, 25, 0, 45))  # 02:45 CEST
    # the clock falls back from 03:00 CEST to 02:00 CET at 01:00 UTC: allowed again at once
    assert h.next_allowed(utc(2026, 10, 25, 0, 45)) == utc(2026, 10, 25, 1, 0)
    assert h.allows(utc(2026, 10, 25, 1, 15)) and not h.allows(utc(2026, 10, 25, 1, 30))


# -- DST: America/New_York (02:00 EST -> 03:00 EDT on 8 March; 02:00 EDT -> 01:00 EST on 1 Nov)


def test_new_york_a_range_inside_the_gap_never_shows_that_day() -> None:
    h = hours("Sun 02:00-03:00", NEW_YORK)
    start = local(NEW_YORK, 2026, 3, 8, 1, 0)  # 01:00 EST, one hour before the gap
    assert h.next_allowed(start) == local(NEW_YORK, 2026, 3, 15, 2, 0)  # a week later, EDT


def test_new_york_fall_back_allows_the_repeated_hour_twice() -> None:
    h = hours("Sun 01:00-01:30", NEW_YORK)
    first = local(NEW_YORK, 2026, 11, 1, 1, 0)  # 01:00 EDT = 05:00 UTC
    second = local(NEW_YORK, 2026, 11, 1, 1, 0, fold=1)  # 01:00 EST = 06:00 UTC
    assert (first, second) == (utc(2026, 11, 1, 5, 0), utc(2026, 11, 1, 6, 0))
    assert h.allows(first) and h.allows(second)
    assert h.next_allowed(utc(2026, 11, 1, 5, 45)) == second


def test_new_york_weekday_evenings_keep_their_wall_time_across_the_change() -> None:
    h = hours("Mon-Fri 19:00-23:00", NEW_YORK)
    # 19:00 EST on Friday 6 March is 00:00 UTC; 19:00 EDT on Monday 9 March is 23:00 UTC
    assert h.next_allowed(utc(2026, 3, 6, 12, 0)) == utc(2026, 3, 7, 0, 0)
    assert h.next_allowed(utc(2026, 3, 7, 12, 0)) == utc(2026, 3, 9, 23, 0)


SPECS = ["Mon-Fri 19:00-08:00, Sat-Sun 00:00-24:00", "22:00-06:00", "Sun 02:30-04:00",
         "except Mon-Fri 09:00-18:00", "Tue 01:00-01:30", "Sat 23:59-00:01"]


@settings(max_examples=150, deadline=None)
@given(spec=st.sampled_from(SPECS), zone=st.sampled_from([BERLIN, NEW_YORK]),
       minutes=st.integers(min_value=0, max_value=366 * 24 * 60))
def test_next_allowed_is_allowed_and_nothing_earlier_is(spec: str, zone: ZoneInfo,
                                                          minutes: int) -> None:
    h = hours(spec, zone)
    start = utc(2026, 1, 1, 0, 0) + timedelta(minutes=minutes)
    found = h.next_allowed(start)
    assert found is not None and found >= start and h.allows(found)
    probe = start
    while probe < found:  # every minute before it (the zone's offsets change on the minute)
        assert not h.allows(probe)
        probe += timedelta(minutes=1)
