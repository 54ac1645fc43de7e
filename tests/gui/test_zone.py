"""The window renders times in the host clock's zone, followed when it changes while the app
runs (issue 21): the goals, the history and the chart share the bridge's live zone."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from core.clock import FakeZone
from core.i18n.textfmt import long_time, short_time

pytestmark = pytest.mark.asyncio


async def test_the_views_follow_a_change_of_the_local_zone(window: Any, engine: Any) -> None:
    engine.clock.zones = FakeZone(ZoneInfo("Europe/Berlin"))
    instant = datetime(2026, 7, 7, 18, 40, tzinfo=UTC)
    zones = (window.goals_model.zone, window.history_view.model.zone,
             window.chart_panel.chart.zone)
    assert all(zone is window.bridge.zone for zone in zones)
    assert long_time(instant, window.goals_model.zone).endswith("20:40:00 CEST")
    engine.clock.zones.set("Asia/Tokyo")
    assert long_time(instant, window.goals_model.zone).endswith("03:40:00 JST")
    assert short_time(instant, instant, window.history_view.model.zone) == "03:40"
