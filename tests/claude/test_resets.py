"""Limit messages: every wording variant, resolved against the stop's own time, DST included."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from core.models import Exactness
from core.providers.claude.records import LimitInfo
from core.providers.claude.resets import MINUTE_SLACK, next_occurrence, parse_limit
from core.providers.claude.wording import (
    WINDOW_5H,
    WINDOW_7D,
    WINDOW_7D_FABLE,
    WINDOW_7D_OPUS,
    WINDOW_7D_SONNET,
    WINDOW_OVERAGE,
    looks_like_limit,
)

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def minute(text: str) -> datetime:
    """The last second of a minute-precise reset (Claude truncates "22:41:54" to "10:41pm")."""
    return utc(text) + MINUTE_SLACK


def test_session_limit_with_zone_resets_the_same_day_in_that_zone() -> None:
    # 13:58Z is 15:58 in Berlin (CEST, +2): 6:40pm Berlin is 16:40Z
    parsed = parse_limit("You've hit your session limit · resets 6:40pm (Europe/Berlin)",
                         utc("2026-07-07T13:58:00.120"), UTC)
    assert parsed.window == WINDOW_5H
    assert parsed.resets_at == minute("2026-07-07T16:40:00")
    assert parsed.exactness is Exactness.INFERRED
    assert parsed.note is None


def test_the_text_after_the_first_line_is_not_part_of_the_reset() -> None:
    parsed = parse_limit("You've hit your session limit · resets 7pm (Europe/London)\n"
                         "/upgrade or /usage-credits to finish what you're working on.",
                         utc("2026-07-07T13:30:00"), UTC)
    assert parsed.resets_at == minute("2026-07-07T18:00:00")
    assert parsed.text == "You've hit your session limit · resets 7pm (Europe/London)"


def test_a_reset_after_midnight_is_the_next_day() -> None:
    # 22:10 in Berlin; "2am" is tomorrow 02:00 CEST = 00:00Z
    parsed = parse_limit("You've hit your session limit · resets 2am (Europe/Berlin)",
                         utc("2026-07-07T20:10:00"), UTC)
    assert parsed.resets_at == minute("2026-07-08T00:00:00")


def test_fall_back_night_first_pass_of_0130_resets_fifteen_minutes_later() -> None:
    # 2026-11-01: New York falls back at 02:00 EDT; 05:30Z is the first 01:30 (EDT)
    parsed = parse_limit("You've hit your session limit · resets 1:45am (America/New_York)",
                         utc("2026-11-01T05:30:00"), UTC)
    assert parsed.resets_at == minute("2026-11-01T05:45:00")


def test_fall_back_night_second_pass_of_0130_takes_the_second_0145() -> None:
    # 06:30Z is the second 01:30 (EST): the next 01:45 is 01:45 EST = 06:45Z
    parsed = parse_limit("You've hit your session limit · resets 1:45am (America/New_York)",
                         utc("2026-11-01T06:30:00"), UTC)
    assert parsed.resets_at == minute("2026-11-01T06:45:00")


def test_fall_back_night_counts_the_extra_hour() -> None:
    # from 01:30 EDT (05:30Z), "5am" is 05:00 EST = 10:00Z: 4.5 h, not 3.5 h
    parsed = parse_limit("You've hit your session limit · resets 5am (America/New_York)",
                         utc("2026-11-01T05:30:00"), UTC)
    assert parsed.resets_at == minute("2026-11-01T10:00:00")


def test_a_wall_time_skipped_by_spring_forward_reads_with_the_old_offset() -> None:
    # Berlin skips 02:00-03:00 on 2026-03-29; "2:30am" said at 01:50 CET (00:50Z)
    parsed = parse_limit("You've hit your session limit · resets 2:30am (Europe/Berlin)",
                         utc("2026-03-29T00:50:00"), UTC)
    assert parsed.resets_at == minute("2026-03-29T01:30:00")
    assert parsed.resets_at.astimezone(BERLIN).hour == 3


def test_next_occurrence_is_strictly_after_the_stop() -> None:
    after = datetime(2026, 7, 7, 18, 40, tzinfo=BERLIN)
    assert next_occurrence(after.timetz().replace(tzinfo=None), BERLIN, after) == datetime(
        2026, 7, 8, 18, 40, tzinfo=BERLIN)


def test_weekly_limit_with_a_weekday_resets_by_the_end_of_that_day() -> None:
    # Thursday 2026-07-09 10:00Z; "Tuesday" is 2026-07-14; its end in the user's zone
    parsed = parse_limit("You've hit your weekly limit · resets Tuesday",
                         utc("2026-07-09T10:00:00"), BERLIN)
    assert parsed.window == WINDOW_7D
    assert parsed.resets_at == datetime(2026, 7, 15, 0, 0, tzinfo=BERLIN)
    assert parsed.note is not None and "end of that day" in parsed.note


def test_a_weekday_naming_today_means_next_week() -> None:
    parsed = parse_limit("You've hit your weekly limit · resets Thursday",
                         utc("2026-07-09T10:00:00"), UTC)
    assert parsed.resets_at == utc("2026-07-17T00:00:00")


def test_out_of_extra_usage_resets_at_the_named_time() -> None:
    # Colombo is +05:30: 03:10Z is 08:40 local; 11:30am local is 06:00Z
    parsed = parse_limit("You're out of extra usage · resets 11:30am (Asia/Colombo)",
                         utc("2026-07-07T03:10:00"), UTC)
    assert parsed.window == WINDOW_OVERAGE
    assert parsed.resets_at == minute("2026-07-07T06:00:00")


def test_a_date_and_time_with_zone() -> None:
    parsed = parse_limit("You're out of usage credits · resets Oct 3, 9am (UTC)",
                         utc("2026-09-30T12:00:00"), BERLIN)
    assert parsed.resets_at == minute("2026-10-03T09:00:00")


def test_a_date_in_january_said_in_december_is_next_year() -> None:
    parsed = parse_limit("You've hit your weekly limit · resets Jan 2, 9am (UTC)",
                         utc("2026-12-30T12:00:00"), UTC)
    assert parsed.resets_at == minute("2027-01-02T09:00:00")


def test_the_older_wording_without_zone_uses_the_default_zone() -> None:
    # 21:15Z is 23:15 in Berlin: "12am" is midnight Berlin = 22:00Z
    parsed = parse_limit("Claude usage limit reached. Your limit will reset at 12am.",
                         utc("2026-07-07T21:15:00"), BERLIN)
    assert parsed.resets_at == minute("2026-07-07T22:00:00")
    parsed_utc = parse_limit("Claude usage limit reached. Your limit will reset at 12am.",
                             utc("2026-07-07T21:15:00"), UTC)
    assert parsed_utc.resets_at == minute("2026-07-08T00:00:00")


def test_the_epoch_form_is_exact() -> None:
    parsed = parse_limit("Claude AI usage limit reached|1783440000", utc("2026-07-07T11:00:00"),
                         UTC)
    assert parsed.resets_at == datetime.fromtimestamp(1783440000, UTC)
    assert parsed.exactness is Exactness.EXACT
    assert "|" not in parsed.text


@pytest.mark.parametrize("text", [
    "You've hit your session limit · resets whenever the moon is full",
    "You've hit your session limit · resets 7 (Europe/Berlin)",
    "You've hit your session limit · resets 6:40pm (Mars/Olympus_Mons)",
    "You've hit your session limit · resets 25:00",
    "You've hit your session limit",
    "API Error: Rate limit reached",
])
def test_unreadable_resets_are_unknown_with_a_reason(text: str) -> None:
    parsed = parse_limit(text, utc("2026-07-07T09:30:00"), UTC)
    assert parsed.resets_at is None
    assert parsed.note


def test_24_hour_times_are_read() -> None:
    parsed = parse_limit("You've hit your session limit · resets 18:40 (Europe/Berlin)",
                         utc("2026-07-07T13:58:00"), UTC)
    assert parsed.resets_at == minute("2026-07-07T16:40:00")


def test_model_scoped_weekly_limits_have_their_own_window() -> None:
    parsed = parse_limit("You've hit your weekly Opus limit · resets Tuesday",
                         utc("2026-07-09T10:00:00"), UTC)
    assert parsed.window == WINDOW_7D_OPUS


@pytest.mark.parametrize(("text", "expected"), [
    ("You've hit your session limit · resets 6:40pm (Europe/Berlin)", True),
    ("You've hit your weekly limit · resets Tuesday", True),
    ("You're out of extra usage · resets 11:30am (Asia/Colombo)", True),
    ("Claude usage limit reached. Your limit will reset at 12am.", True),
    ("Claude AI usage limit reached|1783440000", True),
    ("API Error: 500 Internal server error", False),
])
def test_limit_wording_is_recognised(text: str, expected: bool) -> None:
    assert looks_like_limit(text) is expected


def test_a_weekday_and_time_still_ahead_today_is_today() -> None:
    # Thursday 2026-07-09 10:00Z: "Thursday 5pm" is seven hours away, not next week
    parsed = parse_limit("You've hit your weekly limit · resets Thursday 5pm (UTC)",
                         utc("2026-07-09T10:00:00"), UTC)
    assert parsed.resets_at == minute("2026-07-09T17:00:00")
    passed = parse_limit("You've hit your weekly limit · resets Thu, 9am (UTC)",
                         utc("2026-07-09T10:00:00"), UTC)
    assert passed.resets_at == minute("2026-07-16T09:00:00")


def test_a_model_scoped_weekly_stop_with_a_trailing_sentence() -> None:
    # 2.1.328's words for a seven_day_overage_included stop (see B0)
    parsed = parse_limit("You've hit your Fable limit · resets Dec 4, 8:17pm (UTC). Switch to "
                         "another model to continue.", utc("2026-12-01T21:00:00"), BERLIN)
    assert parsed.window == WINDOW_7D_FABLE
    assert parsed.resets_at == minute("2026-12-04T20:17:00")
    assert parsed.note is None
    day_only = parse_limit("You've hit your weekly limit · resets Tuesday. Switch to another "
                           "model to continue.", utc("2026-07-09T10:00:00"), UTC)
    assert day_only.resets_at == utc("2026-07-15T00:00:00")


@pytest.mark.parametrize(("text", "window"), [
    ("You've hit your 5-hour limit · resets 11:33pm (UTC)", WINDOW_5H),
    ("You've hit your weekly limit · resets Dec 5, 8:59am (UTC)", WINDOW_7D),
    ("You've hit your Opus limit · resets Dec 5, 8:59am (UTC)", WINDOW_7D_OPUS),
    ("You've hit your Sonnet limit · resets Dec 5, 8:59am (UTC)", WINDOW_7D_SONNET),
    ("You've hit your Fable limit · resets Dec 5, 8:59am (UTC). Switch to another model to "
     "continue.", WINDOW_7D_FABLE),
    ("You're out of usage credits · resets 10:40pm (UTC)", WINDOW_OVERAGE),
])
def test_every_2_1_328_limit_text_names_its_window(text: str, window: str) -> None:
    parsed = parse_limit(text, utc("2026-12-01T21:39:00"), UTC)
    assert parsed.window == window
    assert parsed.resets_at is not None and parsed.note is None


def test_the_structured_reset_and_type_win_over_the_words() -> None:
    info = LimitInfo("seven_day_opus", 1796168008.0)
    parsed = parse_limit("You've hit your weekly limit · resets 11:33pm (UTC)",
                         utc("2026-12-01T21:33:11"), UTC, info)
    assert parsed.window == WINDOW_7D_OPUS
    assert parsed.resets_at == datetime.fromtimestamp(1796168008, UTC)  # 23:33:28, to the second
    assert parsed.exactness is Exactness.EXACT


@pytest.mark.parametrize("text", [
    "API Error: Server is temporarily limiting requests (not your usage limit) · Rate limit "
    "exceeded",
    "API Error: Request rejected (429) · Rate limit exceeded",
])
def test_transient_429s_do_not_read_as_limits(text: str) -> None:
    assert not looks_like_limit(text)
