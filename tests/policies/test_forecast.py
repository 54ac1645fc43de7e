"""The forecast: the recent pace of a window's readings, and when it runs out at that pace."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.quota.forecast import Forecast, ForecastBook, forecast
from tests.support.fakes import reading

NOW = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)
RESET = NOW + timedelta(hours=4)  # a 5-hour window that began an hour ago
W = "fake:5h"


def ago(minutes: float) -> datetime:
    return NOW - timedelta(minutes=minutes)


def test_a_steady_pace_runs_out_before_the_reset() -> None:
    points = [(ago(20), 10.0), (ago(10), 20.0), (NOW, 30.0)]
    result = forecast(points, reading(W, 30, NOW, RESET), NOW)
    assert result.pace_per_hour is not None and abs(result.pace_per_hour - 60) < 1e-6
    assert result.runs_out_at == NOW + timedelta(minutes=70)
    assert result.text(NOW, UTC) == "runs out ≈ 13:10"
    assert result.to_json(NOW)["runs_out_at"] == "2026-07-07T13:10:00Z"


def test_the_level_in_force_at_the_start_of_the_span_counts() -> None:
    # 50 % an hour ago and 55 % now: a slow half hour, not a step from nothing
    points = [(ago(60), 50.0), (ago(5), 55.0)]
    result = forecast(points, reading(W, 55, ago(5), RESET), NOW)
    assert result.pace_per_hour is not None and abs(result.pace_per_hour - 10) < 1e-6
    assert result.lasts_until_reset and result.runs_out_at is None  # 45 % left, 4 h to go
    assert result.text(NOW) == "lasts until reset"


def test_no_use_lately_lasts_until_reset() -> None:
    result = forecast([(ago(40), 30.0)], reading(W, 30, ago(40), RESET), NOW)
    assert result == Forecast(0.0, None, True)


def test_too_little_to_tell_says_nothing() -> None:
    assert forecast([], reading(W, 30, NOW, RESET), NOW).text(NOW) == ""
    assert forecast([(ago(1), 29.0)], reading(W, 30, NOW, RESET), NOW).text(NOW) == ""
    exhausted = reading(W, 100, NOW, RESET, limit_reached=True)
    assert forecast([(ago(20), 10.0)], exhausted, NOW) == Forecast()


def test_only_the_current_period_counts() -> None:
    # 90 % before the reset ten minutes ago, 10 % now: the rise since the reset, not a fall
    start = NOW - timedelta(minutes=10)
    points = [(ago(30), 90.0), (start + timedelta(seconds=30), 2.0), (NOW, 10.0)]
    result = forecast(points, reading(W, 10, NOW, start + timedelta(hours=5)), NOW)
    assert result.pace_per_hour is not None and result.pace_per_hour > 0
    assert result.runs_out_at is not None


def test_a_short_window_needs_a_shorter_span() -> None:
    points = [(NOW - timedelta(seconds=12), 0.0), (NOW, 50.0)]
    one_minute = reading("demo:1m", 50, NOW, NOW + timedelta(seconds=48), window_seconds=60)
    result = forecast(points, one_minute, NOW)
    assert result.runs_out_at == NOW + timedelta(seconds=12)


def test_the_book_keeps_an_hour_in_order() -> None:
    book = ForecastBook()
    book.seed(W, [(ago(120), 1.0), (ago(50), 5.0)])
    book.add(reading(W, 9, ago(10), RESET))
    book.add(reading(W, 8, ago(20), RESET))  # older than the newest: ignored
    assert book.points(W) == [(ago(50), 5.0), (ago(10), 9.0)]
    assert book.forecast(reading(W, 9, ago(10), RESET), NOW).pace_per_hour is not None


def test_the_book_starts_afresh_when_the_window_resets() -> None:
    book = ForecastBook()
    book.add(reading(W, 100, ago(30), ago(5), limit_reached=True))
    book.add(reading(W, 10, ago(4), RESET))  # the reset instant moved by hours: a new period
    book.add(reading(W, 12, ago(4) + timedelta(seconds=30), RESET + timedelta(seconds=2)))
    assert [used for _, used in book.points(W)] == [10, 12]


@pytest.mark.asyncio
async def test_a_restart_keeps_the_pace(make_engine, fake, clock) -> None:  # type: ignore[no-untyped-def]
    reset = clock.now() + timedelta(hours=4)
    first = await make_engine(fake)
    await first.quota_intake.record_reading(reading(W, 10, clock.now(),
                                                    reset))  # 45 min before the restart
    clock.advance(40 * 60)
    await first.quota_intake.record_reading(reading(W, 20, clock.now(), reset))
    await first.stop()
    clock.advance(5 * 60)
    second = await make_engine(fake)
    # the level in force 30 minutes ago (10 %) came back from the store with the newer point
    assert [used for _, used in second.forecasts.points(W)] == [10.0, 20.0]
    result = second.forecasts.forecast(second.quotas.effective(W, clock.now()), clock.now())
    assert result.pace_per_hour is not None and abs(result.pace_per_hour - 20) < 1e-6



def test_the_pace_decays_to_zero_once_the_readings_stop_rising() -> None:
    points = [(ago(28), 10.0), (ago(20), 30.0), (ago(12), 40.0)]
    held = forecast(points, reading(W, 40, ago(12), RESET), ago(12) + timedelta(minutes=10))
    assert held.runs_out_at is not None  # sparse readings: the pace holds for a while
    half = forecast(points, reading(W, 40, ago(12), RESET), ago(12) + timedelta(minutes=15))
    assert half.pace_per_hour is not None and held.pace_per_hour is not None
    assert 0 < half.pace_per_hour < held.pace_per_hour
    later = ago(12) + timedelta(minutes=20)
    stopped = forecast([*points, (ago(1), 40.0)], reading(W, 40, ago(1), RESET), later)
    assert stopped == Forecast(0.0, None, True)  # readings still come, but no longer rise


def test_a_short_window_nothing_uses_any_more_has_no_forecast_of_running_out() -> None:
    # the demo's one-minute window: 5 of 6 units used, then every goal done
    points = [(NOW - timedelta(seconds=18 - 2 * i), 50.0 + 5 * i) for i in range(7)]
    one_minute = reading("demo:1m", 80, points[-1][0], NOW + timedelta(seconds=40),
                         window_seconds=60)
    assert forecast(points, one_minute, points[-1][0]).runs_out_at is not None
    later = points[-1][0] + timedelta(seconds=20)
    result = forecast(points, one_minute, later)
    assert result.runs_out_at is None and result.to_json(later)["runs_out_at"] is None


def test_a_forecast_never_names_a_time_already_past() -> None:
    stale = Forecast(60.0, ago(1), False)
    assert stale.text(NOW) == "" and stale.to_json(NOW)["runs_out_at"] is None
