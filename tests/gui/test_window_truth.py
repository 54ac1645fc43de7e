"""Issue 22, "the window tells the truth": no level held across a known reset, the time of the
last reading, a legend clear of the data, columns that fit, a details dialog in the user's words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontMetrics, QImage, QPalette
from PySide6.QtWidgets import QLineEdit

from core.clock import FakeClock
from core.commands import SetAutoResume
from core.engine import Engine
from core.i18n.textfmt import short_time
from core.models import GoalState, PauseReason
from gui.dialogs.goal_details import FIELDS
from gui.dialogs.settings_dialog import SettingsDialog
from gui.i18n import tr
from gui.main_window import MainWindow
from gui.models.goals_model import Column
from gui.session import demo_title
from gui.settings_source import LABELS, SettingsSource
from gui.widgets.usage_chart import ChartData, UsageChart, held_segments
from tests.support.fakes import FakeProvider, reading, until

T0 = datetime(2026, 7, 7, 12, tzinfo=UTC)


def _is(colour: QColor, other: QColor) -> bool:
    pairs = zip(colour.getRgb()[:3], other.getRgb()[:3], strict=True)
    return all(abs(a - b) < 40 for a, b in pairs)


def test_a_level_is_not_held_across_a_known_reset() -> None:
    points = [(T0, 83.0), (T0 + timedelta(minutes=4), 10.0)]
    resets = [T0 + timedelta(minutes=m) for m in (1, 2, 5)]
    runs = held_segments(points, resets, T0 + timedelta(minutes=6))
    assert runs == [
        [(T0, 83.0), (T0 + timedelta(minutes=1), 83.0), (T0 + timedelta(minutes=1), 0.0)],
        [(T0 + timedelta(minutes=4), 10.0), (T0 + timedelta(minutes=5), 10.0),
         (T0 + timedelta(minutes=5), 0.0)]]
    assert held_segments(points, [], T0 + timedelta(minutes=6))[0][-1] == (
        T0 + timedelta(minutes=6), 10.0)


def test_the_chart_draws_nothing_after_a_reset_until_the_next_reading(qtbot: Any) -> None:
    chart = UsageChart()
    qtbot.addWidget(chart)
    chart.resize(600, 240)
    end = T0 + timedelta(minutes=6)
    chart.set_data(ChartData("demo", T0 - timedelta(seconds=20), end, [(T0, 83.0)],
                             resets=[T0 + timedelta(minutes=m) for m in range(1, 7)]))
    image: QImage = chart.grab().toImage()
    plot = chart.plot_rect()
    ratio = image.devicePixelRatio()
    line = chart.palette().color(QPalette.ColorRole.Highlight)

    def colour(at: datetime, percent: float) -> QColor:
        return image.pixelColor(int(chart.x_of(at, plot) * ratio),
                                int(chart.y_of(percent, plot) * ratio))

    assert _is(colour(T0 + timedelta(seconds=30), 83.0), line)  # held until the reset
    assert not _is(colour(T0 + timedelta(minutes=3, seconds=30), 83.0), line)
    assert not _is(colour(T0 + timedelta(minutes=5, seconds=30), 83.0), line)


@pytest.mark.asyncio
async def test_the_panel_knows_the_resets_after_the_last_reading(
        window: MainWindow, engine: Engine, clock: FakeClock) -> None:
    await engine.quota_intake.record_reading(reading(
        "fake:5h", 83.0, clock.now(), clock.now() + timedelta(seconds=60), window_seconds=60))
    first = clock.now()
    clock.advance(6 * 60 + 30)
    panel = window.chart_panel
    panel.show_window("fake:5h")
    panel.reload()
    loads = panel.loaded
    await until(lambda: panel.loaded > loads)
    data = panel.chart.data
    assert data is not None
    assert data.resets == [first + timedelta(minutes=m) for m in range(1, 7)]
    assert held_segments(data.points, data.resets, data.end)[-1][-1] == (
        first + timedelta(minutes=1), 0.0)


@pytest.mark.asyncio
async def test_providers_read_is_the_time_of_the_latest_reading(
        window: MainWindow, engine: Engine, clock: FakeClock) -> None:
    status = window.status
    clock.advance(3 * 3600 + 7 * 60)
    await engine.quota_intake.record_reading(reading("fake:5h", 40.0, clock.now()))
    local = clock.now().astimezone()
    assert status.refresh.text() == f"Providers read {local:%H:%M}"
    clock.advance(120)
    await engine.quota_intake.record_reading(reading("fake:5h", 42.0, clock.now()))
    assert status.refresh.text() == f"Providers read {clock.now().astimezone():%H:%M}"


def _legend_clearance(chart: UsageChart) -> float:
    """Pixels between the legend's lowest ink (text, markers) and the 100 % line."""
    image = chart.grab().toImage()
    ratio = image.devicePixelRatio()
    plot = chart.plot_rect()
    left, right = chart.legend_span()
    columns = range(int(left * ratio), int(right * ratio))
    rows = [y for y in range(int((plot.top() + 12) * ratio))
            if any(image.pixelColor(x, y).lightness() < 90 for x in columns)]
    assert rows, "no legend drawn"
    return plot.top() - (max(rows) + 1) / ratio


@pytest.mark.parametrize("points", [9.0, 13.0])
@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_the_legend_stays_above_the_data(qtbot: Any, request: pytest.FixtureRequest,
                                         language: str, points: float) -> None:
    if language == "zh_CN":
        request.getfixturevalue("zh")
    chart = UsageChart()
    qtbot.addWidget(chart)
    font = chart.font()
    font.setPointSizeF(points)
    chart.setFont(font)
    chart.resize(700, 240)
    chart.set_data(ChartData("演示配额 · 1 分钟", T0, T0 + timedelta(minutes=6)))
    # 8 px above the 100 % line: the data's dots at 100 % reach about 4 px above it
    assert _legend_clearance(chart) >= 8
    metrics = QFontMetrics(chart.font())
    assert chart.legend_height() >= max(metrics.boundingRect(text).height()
                                        for text in (tr("resumed"), tr("paused for quota")))


@pytest.mark.asyncio
async def test_the_pause_reason_column_fits_its_text(window: MainWindow, engine: Engine,
                                                     fake: FakeProvider, clock: FakeClock
                                                     ) -> None:
    detail = "demo quota used up (6/6) until the demo window resets"
    fake.observe("fake:a", GoalState.PAUSED, reason=PauseReason.QUOTA, pause_detail=detail,
                 resets_at=clock.now() + timedelta(minutes=5), title="Write the user guide")
    await engine.refresh()
    view = window.goals_view
    window.resize(1280, 800)
    window.show()
    await until(lambda: view.select_goal("fake:a"))
    await until(lambda: view.table.columnWidth(Column.REASON) > 190)
    table = view.table
    index = table.currentIndex().siblingAtColumn(Column.REASON)
    text = index.data()
    assert detail in text
    assert index.data(Qt.ItemDataRole.ToolTipRole) == text
    needed = QFontMetrics(table.font()).horizontalAdvance(text)
    assert table.columnWidth(Column.REASON) >= needed  # not cut: the title has room to give
    assert table.columnWidth(Column.TITLE) >= QFontMetrics(table.font()).horizontalAdvance(
        "Write the user guide")


@pytest.mark.asyncio
async def test_details_speak_the_users_words_in_the_windows_zone(
        window: MainWindow, engine: Engine, fake: FakeProvider, clock: FakeClock) -> None:
    kolkata = ZoneInfo("Asia/Kolkata")  # not the machine's zone: the window's decides
    window.goals_model.zone = kolkata
    await engine.quota_intake.record_reading(reading("fake:5h", 100.0, clock.now(),
                                                     clock.now() + timedelta(hours=2)))
    resets = clock.now() + timedelta(hours=2)
    fake.observe("fake:a", GoalState.PAUSED, reason=PauseReason.QUOTA, resets_at=resets,
                 title="Refactor the parser", data={"units": 6})
    await engine.refresh()
    await engine.perform(SetAutoResume("fake:a", True))
    window.bridge.flush()
    dialog = window.open_details("fake:a")
    goal = engine.goals["fake:a"]
    assert dialog.field("Quota resets") == short_time(resets, clock.now(), kolkata)
    assert dialog.field_tooltip("Quota resets").endswith(" IST")
    assert dialog.field("Created") == short_time(goal.created_at, clock.now(), kolkata)
    assert dialog.field("Next auto-resume").startswith("in ")  # as the table says it
    assert dialog.field_tooltip("Next auto-resume").endswith(" IST")
    assert "UTC" not in " ".join(dialog.field(name) for name in FIELDS)
    assert dialog.field("Attempts") == "0 of 3 automatic resumes tried since it paused"
    assert "fence" not in dialog.field("Attempts")
    assert dialog.field("Windows") == "fake:5h"  # the reading's label (the fakes use the id)
    assert dialog.technical.isHidden() and not dialog.data_view.isVisible()
    dialog.technical_button.click()
    assert dialog.technical.isVisible()
    assert dialog.field("Id") == "fake:a" and dialog.field("Runner fence") == str(goal.fence)
    assert '"units": 6' in dialog.data_view.toPlainText()


POLICY_FIELDS = ("resume_reserve_percent", "resume_reserve_by_window", "auto_resume_hours",
                 "auto_resume_timezone", "max_concurrent_resumes", "resume_settle_seconds")


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_every_policy_field_has_an_example(tmp_path: Path, qtbot: Any,
                                           request: pytest.FixtureRequest, language: str) -> None:
    if language == "zh_CN":
        request.getfixturevalue("zh")
    dialog = SettingsDialog(SettingsSource(tmp_path / "config.toml", {}))
    qtbot.addWidget(dialog)
    examples = {"auto_resume_hours": "Mon-Fri 19:00-08:00", "auto_resume_timezone": "/",
                "resume_reserve_by_window": "codex:5h=30"}
    for name in POLICY_FIELDS:
        editor = dialog.editors[name]
        assert isinstance(editor, QLineEdit)
        placeholder = editor.placeholderText()
        assert placeholder.startswith("e.g. " if language == "en" else "例如"), name
        assert examples.get(name, "") in placeholder


@pytest.mark.asyncio
async def test_the_goal_policy_form_shows_examples(window: MainWindow) -> None:
    form = window.open_details("fake:a").policy_form
    assert form.budget.placeholderText() == "e.g. 20 — empty: no budget"
    assert form.hours.placeholderText() == "e.g. Mon-Fri 19:00-08:00 — empty: any time"


@pytest.mark.asyncio
async def test_history_names_the_selected_goal_it_shows(window: MainWindow) -> None:
    window.goals_view.select_goal("fake:b")
    history = window.history_view
    assert history.scope_combo.currentText() == f"Selected goal ({engine_title(window, 'fake:b')})"
    await until(lambda: history.scope_goal == "fake:b")
    history.scope_combo.setCurrentIndex(0)  # the user's choice holds
    window.goals_view.select_goal("fake:a")
    assert history.scope_combo.currentText() == "All goals"
    assert history.scope_goal is None


def engine_title(window: MainWindow, goal_id: str) -> str:
    goal = window.bridge.goal(goal_id)
    assert goal is not None
    return goal.title


def test_the_demo_window_title_names_the_app_once() -> None:
    """Qt adds " — <display name>" (gui/app.py: "Goalkeeper") to a title that does not end
    with it (X11, Wayland)."""
    title = demo_title()
    assert title.endswith("Goalkeeper") and title.count("Goalkeeper") == 1


def test_the_chinese_settings_say_what_they_do(zh: None) -> None:
    margin = tr(LABELS["resume_margin_seconds"])
    settle = tr(LABELS["resume_settle_seconds"])
    assert "余量" not in margin and margin == "重置后再等待（秒）"  # not "remaining quota"
    assert settle == "恢复一个目标后，隔多久再恢复下一个（秒）"
    assert demo_title() == "演示 — Goalkeeper"


@pytest.mark.asyncio
async def test_a_reset_announced_by_an_earlier_reading_stays_known(
        window: MainWindow, engine: Engine, clock: FakeClock) -> None:
    panel = window.chart_panel
    first = clock.now()
    await engine.quota_intake.record_reading(reading(
        "fake:5h", 100.0, first, first + timedelta(seconds=60), window_seconds=60))
    panel.show_window("fake:5h")
    panel.reload()
    loads = panel.loaded
    await until(lambda: panel.loaded > loads)
    clock.advance(62)
    await engine.quota_intake.record_reading(reading(
        "fake:5h", 0.0, clock.now(), first + timedelta(seconds=120), window_seconds=60))
    data = panel.chart.data
    assert data is not None
    assert first + timedelta(seconds=60) in data.resets
    assert held_segments(data.points, data.resets, data.end)[0][-1] == (
        first + timedelta(seconds=60), 0.0)  # 100 % is not held until the 0 % reading
