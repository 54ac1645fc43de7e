"""The resume policies in the window: the reserve line and the forecast on the gauges, a goal's
own policy in its details dialog, the global settings in the settings dialog."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import pytest_asyncio
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QDialogButtonBox, QLineEdit

from core.clock import FakeClock
from core.commands import SetGoalPolicy
from core.engine import Engine
from core.i18n.textfmt import short_time
from core.models import GoalState, PauseReason
from core.settings import Settings, load_settings
from gui.dialogs.settings_dialog import SettingsDialog
from gui.main_window import MainWindow
from gui.models.goals_model import Column
from gui.settings_source import SettingsSource
from gui.theme import RESERVE_COLOR
from tests.support.fakes import FakeProvider, reading, until

W = "fake:5h"


@pytest_asyncio.fixture
async def engine(make_engine: Any, fake: FakeProvider, clock: FakeClock) -> Engine:
    """Overrides the suite's engine: a reserve of 30 %, evening hours, one goal waiting."""
    reset = clock.now() + timedelta(hours=1)
    fake.readings = [reading(W, 100, clock.now(), reset, limit_reached=True)]
    fake.observe("fake:w", GoalState.PAUSED, reason=PauseReason.QUOTA, resets_at=reset,
                 auto_resume=True, windows=(W,), title="Port the parser")
    settings = Settings(resume_jitter_seconds=0, resume_reserve_percent=30,
                        auto_resume_hours="Mon-Fri 19:00-08:00",
                        auto_resume_timezone="Europe/Berlin")
    result: Engine = await make_engine(fake, settings=settings)
    return result


@pytest.mark.asyncio
async def test_the_gauge_draws_the_reserve_line_and_says_when_it_runs_out(
        window: MainWindow, engine: Engine, clock: FakeClock) -> None:
    start = clock.now()
    for used in (10.0, 20.0):
        await engine.quota_intake.record_reading(reading(W, used, clock.now(),
                                                         start + timedelta(hours=4)))
        clock.advance(600)
    await engine.quota_intake.record_reading(reading(W, 30.0, clock.now(),
                                                     start + timedelta(hours=4)))
    gauge = window.quota_panel.gauges[W]
    await until(lambda: gauge.reading is not None and gauge.reading.used_percent == 30)
    assert gauge.reserve == 30
    # 10 -> 30 % in 20 minutes: 70 % left at 60 % an hour, 70 minutes from now
    expected = short_time(clock.now() + timedelta(minutes=70), clock.now())
    assert gauge.forecast == f"runs out ≈ {expected}"
    assert gauge.runs_out  # drawn warm: decided by the forecast, not by its (translated) text
    assert gauge.policy_text() == f"runs out ≈ {expected} · keeps 30 %"
    assert gauge.accessibleName().endswith(f"runs out ≈ {expected}, 30 % kept for you")
    assert "Reserve: automatic resumes need more than 30 % left" in gauge.toolTip()
    image = gauge.grab().toImage()
    bar = QRectF(gauge.rect()).adjusted(10, 7, -10, -7)
    line = gauge.fontMetrics().height()
    top = bar.y() + line + 4
    x = gauge.reserve_x(QRectF(bar.x(), top, bar.width(), 8))
    assert x is not None and abs(x - (bar.x() + 0.7 * bar.width())) < 0.5
    target = QColor(RESERVE_COLOR)
    near = [image.pixelColor(int(x) + dx, int(top) + 4) for dx in (-1, 0, 1)]
    assert any(abs(c.red() - target.red()) + abs(c.green() - target.green())
               + abs(c.blue() - target.blue()) < 60 for c in near), near
    # once the run-out time has passed the gauge neither says it nor is drawn warm
    window.quota_panel.tick(clock.now() + timedelta(minutes=71))
    assert gauge.forecast == "" and not gauge.runs_out


@pytest.mark.asyncio
async def test_a_quiet_window_lasts_until_reset(window: MainWindow, engine: Engine,
                                                clock: FakeClock) -> None:
    reset = clock.now() + timedelta(hours=4)
    await engine.quota_intake.record_reading(reading(W, 12.0, clock.now(), reset))
    clock.advance(900)
    await engine.quota_intake.record_reading(reading(W, 12.0, clock.now(), reset))
    gauge = window.quota_panel.gauges[W]
    window.quota_panel.tick(clock.now())
    assert gauge.forecast == "lasts until reset"
    assert not gauge.runs_out


@pytest.mark.asyncio
async def test_the_goal_says_when_and_which_rule(window: MainWindow, engine: Engine) -> None:
    model = window.goals_view.model
    model.zone = ZoneInfo("Europe/Berlin")
    row = model.row_of("fake:w")
    assert row is not None
    text = model.data(model.index(row, Column.NEXT))
    assert text == "at 19:00 (allowed hours)"


@pytest.mark.asyncio
async def test_the_details_dialog_edits_the_goals_policy(window: MainWindow,
                                                         engine: Engine) -> None:
    dialog = window.open_details("fake:w")
    form = dialog.policy_form
    assert form.hours.placeholderText() == (
        "e.g. Mon-Fri 19:00-08:00 — empty: the global hours, Mon-Fri 19:00-08:00")
    assert not form.apply_button.isEnabled()  # nothing changed yet
    assert "(allowed hours)" in dialog.field("Next auto-resume")
    form.priority.setValue(5)
    form.budget.setText("lots")
    assert form.errors["budget_percent"].isVisibleTo(dialog)
    assert "budget_percent = 'lots'" in form.errors["budget_percent"].text()
    assert not form.apply_button.isEnabled()
    form.budget.setText("20")
    form.hours.setText("Sat-Sun 10:00-12:0")
    assert "is not a time range" in form.errors["auto_resume_hours"].text()
    form.hours.setText("Sat-Sun 10:00-12:00")
    assert not form.errors["auto_resume_hours"].isVisibleTo(dialog)
    assert form.apply_button.isEnabled()
    form.apply()
    await until(lambda: engine.goals["fake:w"].policy.auto_resume_hours == "Sat-Sun 10:00-12:00"
                and engine.goals["fake:w"].policy.priority == 5
                and engine.goals["fake:w"].policy.budget_percent == 20)
    await until(lambda: form.result.text() != "")
    assert form.result.text().split(" = ")[0] in ("Priority", "Budget_percent",
                                                   "Auto_resume_hours")
    await until(lambda: not form.apply_button.isEnabled())
    window.bridge.flush()
    assert dialog.field("Budget spent") == "nothing this period (budget 20 %)"
    # a change made elsewhere shows up; the user's own unsaved edits are kept
    form.priority.setValue(9)
    await engine.perform(SetGoalPolicy("fake:w", "budget_percent", "none"), "cli")
    window.bridge.flush()
    assert form.priority.value() == 9 and form.budget.text() == "20"


def test_the_settings_dialog_has_the_policies_with_inline_messages(tmp_path: Path,
                                                                   qtbot: Any) -> None:
    config = tmp_path / "config.toml"
    dialog = SettingsDialog(SettingsSource(config, {}))
    qtbot.addWidget(dialog)
    titles = [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())]
    assert "Resume policies" in titles
    for name in ("resume_reserve_percent", "resume_reserve_by_window", "auto_resume_hours",
                 "auto_resume_timezone", "max_concurrent_resumes", "resume_settle_seconds"):
        assert isinstance(dialog.editors[name], QLineEdit), name
        assert "GOALKEEPER_" + name.upper() in dialog.editors[name].toolTip()
    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    editors: dict[str, Any] = dialog.editors
    editors["auto_resume_hours"].setText("Mon-Fry 19:00-08:00")
    assert "unknown day 'Fry'" in dialog.errors["auto_resume_hours"].text()
    assert not save.isEnabled()
    editors["auto_resume_hours"].setText("Mon-Fri 19:00-08:00, Sat-Sun 00:00-24:00")
    editors["resume_reserve_by_window"].setText("codex:5h=130")
    assert "less than 100, not 130" in dialog.errors["resume_reserve_by_window"].text()
    editors["resume_reserve_by_window"].setText("codex:5h=30, codex:7d=10")
    assert ("unknown window 'codex:7d': the codex windows are codex:5h, codex:weekly"
            in dialog.errors["resume_reserve_by_window"].text())
    assert "(did you mean codex:weekly?)" in dialog.errors["resume_reserve_by_window"].text()
    assert not save.isEnabled()
    editors["resume_reserve_by_window"].setText("codex:5h=30, claude:7d=10")
    editors["auto_resume_timezone"].setText("Europe/Berln")
    assert "unknown time zone" in dialog.errors["auto_resume_timezone"].text()
    editors["auto_resume_timezone"].setText("Europe/Berlin")
    editors["resume_reserve_percent"].setText("20")
    assert save.isEnabled()
    dialog.source.save(dialog.validation.settings)  # type: ignore[arg-type]
    saved = load_settings(config, {})
    assert saved.resume_reserve_by_window == {"codex:5h": 30, "claude:7d": 10}
    assert saved.auto_resume_hours == "Mon-Fri 19:00-08:00, Sat-Sun 00:00-24:00"
    assert (saved.resume_reserve_percent, saved.auto_resume_timezone) == (20, "Europe/Berlin")
    reopened = SettingsDialog(SettingsSource(config, {}))
    qtbot.addWidget(reopened)
    assert reopened.editors["resume_reserve_by_window"].text() == (  # type: ignore[union-attr]
        "claude:7d=10, codex:5h=30")


@pytest.mark.asyncio
async def test_the_usage_chart_draws_the_reserve_too(window: MainWindow, engine: Engine,
                                                     clock: FakeClock) -> None:
    await engine.quota_intake.record_reading(reading(W, 40.0, clock.now(),
                                                     clock.now() + timedelta(hours=4)))
    panel = window.chart_panel
    panel.show_window(W)
    loads = panel.loaded
    panel.reload()
    await until(lambda: panel.loaded > loads)
    assert panel.chart.data is not None and panel.chart.data.reserve == 30
    panel.chart.resize(600, 300)  # (the window is never shown: give the chart its size)
    image = panel.chart.grab().toImage()
    target = QColor(RESERVE_COLOR)
    found = any(abs(image.pixelColor(x, y).red() - target.red())
                + abs(image.pixelColor(x, y).green() - target.green())
                + abs(image.pixelColor(x, y).blue() - target.blue()) < 40
                for x in range(0, image.width(), 3) for y in range(image.height()))
    assert found


@pytest.mark.asyncio
async def test_the_tray_menu_says_when_and_which_rule(bridge: Any) -> None:
    from gui.tray import Tray

    goal = bridge.goal("fake:w")
    local = short_time(goal.next_resume_at, bridge.now())  # 19:00 in Berlin; here: local time
    assert Tray._waiting_text(goal, bridge.now()) == (
        f"Port the parser — resumes at {local} (allowed hours)")
