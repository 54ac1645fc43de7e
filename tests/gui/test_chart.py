"""The usage chart: stored readings with pause/resume markers, local time axis, decimation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from core.clock import FakeClock
from core.commands import Pause, Resume
from core.engine import Engine
from core.models import GoalState, PauseReason
from gui.bridge import Marker
from gui.main_window import MainWindow
from gui.widgets.chart_panel import auto_start, decimate
from gui.widgets.usage_chart import ChartData, UsageChart, tick_label, x_ticks
from tests.support.fakes import FakeProvider, reading, until

KOLKATA = ZoneInfo("Asia/Kolkata")  # UTC+05:30: round local ticks are not round UTC ones
BERLIN = ZoneInfo("Europe/Berlin")


def test_x_ticks_are_round_local_times() -> None:
    start = datetime(2026, 7, 7, 4, 37, tzinfo=UTC)  # 10:07 in Kolkata
    ticks = x_ticks(start, start + timedelta(hours=2), KOLKATA)
    assert [tick_label(t, timedelta(hours=2), KOLKATA) for t in ticks] == [
        "10:15", "10:30", "10:45", "11:00", "11:15", "11:30", "11:45", "12:00"]


def test_x_ticks_across_a_dst_change_are_labelled_in_local_time() -> None:
    start = datetime(2026, 3, 28, 23, 0, tzinfo=UTC)  # 00:00 CET; clocks jump 02:00 -> 03:00
    ticks = x_ticks(start, start + timedelta(hours=6), BERLIN)
    labels = [tick_label(t, timedelta(hours=6), BERLIN) for t in ticks]
    assert labels == ["00:00", "01:00", "03:00", "04:00", "05:00", "06:00", "07:00"]
    week = x_ticks(start, start + timedelta(days=7), BERLIN)
    assert tick_label(week[0], timedelta(days=7), BERLIN) == "Sun 29"


def test_decimate_keeps_peaks_and_the_latest_reading() -> None:
    t0 = datetime(2026, 7, 7, tzinfo=UTC)
    points = [(t0 + timedelta(seconds=5 * i), float(i % 100)) for i in range(10_000)]
    points[5_555] = (points[5_555][0], 100.0)
    kept = decimate(points, 500)
    assert len(kept) <= 502
    assert kept[-1] == points[-1]
    assert points[5_555] in kept
    assert decimate(points[:10], 500) == points[:10]


def test_auto_start_pads_young_series() -> None:
    now = datetime(2026, 7, 7, 12, tzinfo=UTC)
    assert auto_start([], now) == now - timedelta(minutes=1)
    assert auto_start([(now - timedelta(seconds=10), 5.0)], now) == now - timedelta(minutes=1)
    assert auto_start([(now - timedelta(hours=2), 5.0)], now) == now - timedelta(hours=2, minutes=6)


def test_chart_paints_and_describes_itself(qtbot: Any) -> None:
    chart = UsageChart()
    qtbot.addWidget(chart)
    chart.resize(600, 240)
    chart.set_data(None)
    chart.grab()
    assert chart.describe() == "No quota window selected."
    t0 = datetime(2026, 7, 7, 12, tzinfo=UTC)
    data = ChartData("Codex · 5 h", t0, t0 + timedelta(hours=1),
                     [(t0 + timedelta(minutes=m), float(m)) for m in range(0, 60, 5)],
                     [Marker(t0 + timedelta(minutes=40), "paused", "g"),
                      Marker(t0 + timedelta(minutes=50), "resumed", "g")])
    chart.set_data(data)
    assert chart.grab().width() >= 600
    assert chart.accessibleDescription() == (
        "Codex · 5 h: 12 readings, latest 55 % used, peak 55 %; 1 pauses for quota, 1 resumes.")
    chart.set_data(ChartData("Empty", t0, t0 + timedelta(hours=1)))
    chart.grab()
    assert chart.describe() == "No stored readings for Empty in this period."


@pytest.mark.asyncio
async def test_chart_loads_stored_readings_and_markers(window: MainWindow, engine: Engine,
                                                       fake: FakeProvider, clock: FakeClock
                                                       ) -> None:
    for used in (20.0, 60.0, 100.0):
        await engine.quota_intake.record_reading(reading("fake:5h", used, clock.now(),
                                            clock.now() + timedelta(hours=1)))
        clock.advance(60)
    fake.observe("fake:a", GoalState.PAUSED, reason=PauseReason.QUOTA,
                 resets_at=clock.now() + timedelta(hours=1), title="Refactor the parser")
    await engine.refresh()
    clock.advance(30)
    await engine.perform(Resume("fake:a"))
    panel = window.chart_panel
    panel.show_window("fake:5h")
    panel.reload()
    loads = panel.loaded
    await until(lambda: panel.loaded > loads)
    data = panel.chart.data
    assert data is not None
    assert [v for _, v in data.points][:3] == [20.0, 60.0, 100.0]
    assert [m.kind for m in data.markers] == ["paused", "resumed"]
    assert data.start < data.points[0][0] and data.end == clock.now()

    # live: a new reading and a new pause are added without reading the store again
    await engine.quota_intake.record_reading(reading("fake:5h", 30.0, clock.now(),
                                        clock.now() + timedelta(hours=1)))
    await engine.perform(Pause("fake:a"))
    assert data.points[-1][1] == 30.0
    assert [m.kind for m in data.markers] == ["paused", "resumed"]  # a user pause: no marker
    assert panel.loaded == loads + 1


def test_short_spans_tick_in_seconds() -> None:
    start = datetime(2026, 7, 7, 12, 0, 7, tzinfo=UTC)
    ticks = x_ticks(start, start + timedelta(seconds=70), UTC)
    assert [tick_label(t, timedelta(seconds=70), UTC) for t in ticks] == [
        "12:00:10", "12:00:20", "12:00:30", "12:00:40", "12:00:50", "12:01:00", "12:01:10"]
