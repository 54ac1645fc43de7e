"""Quota gauges: one per window, live countdown, level colours, exactness and stale badges."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from PySide6.QtCore import Qt

from core.clock import FakeClock
from core.engine import Engine
from core.models import QuotaReading
from gui.main_window import MainWindow
from tests.support.fakes import FakeProvider, reading, until


def labelled(window: str, label: str, used: float, clock: FakeClock, resets_in: float | None,
             **kw: Any) -> QuotaReading:
    resets = clock.now() + timedelta(seconds=resets_in) if resets_in is not None else None
    return reading(window, used, clock.now(), resets, **kw).model_copy(update={"label": label})


@pytest.mark.asyncio
async def test_a_gauge_per_window_with_live_countdown(window: MainWindow, engine: Engine,
                                                      fake: FakeProvider, clock: FakeClock
                                                      ) -> None:
    fake.readings = [
        labelled("fake:5h", "Fake · 5 h", 43, clock, 6442),
        labelled("fake:7d", "Fake · 7 d", 100, clock, 2 * 86400 + 3600, limit_reached=True,
                 window_seconds=7 * 86400),
    ]
    await engine.refresh()
    panel = window.quota_panel
    await until(lambda: len(panel.gauges) == 2)
    five, week = panel.gauges["fake:5h"], panel.gauges["fake:7d"]
    assert five.texts() == ("Fake · 5 h", "43 % used", "resets in 1:47:22", "exact")
    assert five.level == "ok"
    assert week.texts()[2] == "resets in 2d 01:00:00"
    assert week.level == "exhausted" and week.exhausted
    assert "Resets " in five.toolTip() and "(0 s ago)" in five.toolTip()
    assert five.accessibleName().startswith("Fake · 5 h quota: 43 % used, resets ")
    assert panel.needs_tick()

    clock.advance(22)
    panel.tick(clock.now())
    assert five.texts()[2] == "resets in 1:47:00"

    clock.advance(700)  # older than stale_after_seconds (600)
    panel.tick(clock.now())
    assert five.texts()[3] == "stale · 12 min"

    clock.advance(6442)  # the 5-hour window's reset has passed: counted as empty, inferred
    panel.tick(clock.now())
    assert five.texts()[1] == "0 % used" and five.texts()[3] == "inferred"


@pytest.mark.asyncio
async def test_levels_follow_the_resume_threshold(window: MainWindow, engine: Engine,
                                                  fake: FakeProvider, clock: FakeClock) -> None:
    fake.readings = [labelled("fake:a", "A", 50, clock, 60), labelled("fake:b", "B", 70, clock, 60),
                     labelled("fake:c", "C", 95, clock, 60)]
    await engine.refresh()
    gauges = window.quota_panel.gauges
    await until(lambda: len(gauges) == 3)
    assert [gauges[w].level for w in ("fake:a", "fake:b", "fake:c")] == ["ok", "warn", "high"]
    gauges["fake:a"].grab()  # paints without warnings


@pytest.mark.asyncio
async def test_picking_a_gauge_shows_its_chart(window: MainWindow, engine: Engine,
                                               fake: FakeProvider, clock: FakeClock,
                                               qtbot: Any) -> None:
    fake.readings = [labelled("fake:a", "A", 10, clock, 60), labelled("fake:b", "B", 20, clock, 60)]
    await engine.refresh()
    panel, chart = window.quota_panel, window.chart_panel
    await until(lambda: len(panel.gauges) == 2)
    assert panel.current == "fake:a" and chart.window_id == "fake:a"
    assert [chart.window_combo.itemText(i) for i in range(chart.window_combo.count())] == [
        "A", "B"]
    qtbot.mouseClick(panel.gauges["fake:b"], Qt.MouseButton.LeftButton)
    assert panel.current == "fake:b" and chart.window_id == "fake:b"
    assert chart.window_combo.currentText() == "B"
    panel.gauges["fake:a"].setFocus()
    qtbot.keyClick(panel.gauges["fake:a"], Qt.Key.Key_Space)
    assert chart.window_id == "fake:a" and panel.gauges["fake:a"].is_current
    chart.window_combo.setCurrentIndex(1)
    assert panel.current == "fake:b"
