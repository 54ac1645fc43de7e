"""The desktop app in Chinese: with ``LANG=zh_CN.UTF-8`` every window, menu, dialog, gauge,
countdown and result is in Chinese (Qt's catalogue for the app's words, the core's for what the
engine says), and no English is left on the widgets but names, commands and data."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDialogButtonBox,
    QMenu,
)

from core import i18n
from core.engine import Engine
from core.i18n.textfmt import short_time
from core.models import Deferral, GoalState, PauseReason
from core.quota.forecast import Forecast
from gui import format as fmt
from gui import i18n as gui_i18n
from gui.bridge import Bridge
from gui.dialogs.settings_dialog import SettingsDialog
from gui.goal_rules import summarise
from gui.main_window import MainWindow
from gui.models.goals_model import Column, GoalsModel
from gui.settings_source import SettingsSource
from gui.tick import DisplayTick
from gui.tray import tooltip_text
from tests.gui.factories import T0
from tests.gui.factories import goal as factory_goal
from tests.support.fakes import FakeProvider, reading
from tests.support.gui import CJK, RecordingLauncher, english_left, wait_signal


@pytest.fixture
def zh_window(zh: None, qtbot: Any, bridge: Bridge, launcher: RecordingLauncher) -> MainWindow:
    win = MainWindow(bridge, launcher, DisplayTick(bridge.now))  # type: ignore[arg-type]
    qtbot.addWidget(win)
    bridge.sync()
    return win


@pytest.mark.asyncio
async def test_the_main_window_speaks_chinese(zh_window: MainWindow, engine: Engine,
                                              fake: FakeProvider) -> None:
    win = zh_window
    assert [m.title() for m in win.menuBar().findChildren(QMenu)][:3] == [
        "&Goalkeeper", "目标(&O)", "查看(&V)"]
    assert [a.text() for a in win.goal_actions.all][:4] == ["启动(&S)", "恢复(&R)", "暂停(&P)",
                                                            "取消目标(&C)…"]
    assert win.goal_actions.pause.toolTip() == "暂停这个目标；之后永不自动恢复（Ctrl+P）"
    model = win.goals_model
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in Column] == [
        "目标", "提供方", "状态", "暂停原因", "自动恢复", "下次自动恢复", "尝试次数", "最近变更"]
    row = model.row_of("fake:a")
    assert row is not None
    assert model.data(model.index(row, Column.STATE)) == "运行中"
    assert win.tabs.tabText(0) == "用量图表(&U)" and win.tabs.tabText(1) == "历史(&H)"
    assert win.status.host.text() == "正在启动宿主…"
    win.bridge.set_host_state("running")
    assert win.status.host.text() == "宿主：test host"
    assert english_left(win) == []


@pytest.mark.asyncio
async def test_gauges_countdowns_and_results_in_chinese(zh_window: MainWindow, engine: Engine,
                                                        fake: FakeProvider) -> None:
    now = engine.clock.now()
    await engine.quota_intake.record_reading(reading("fake:5h", 100, now,
                                                     now + timedelta(seconds=6442)))
    gauge = zh_window.quota_panel.gauges["fake:5h"]
    label, used, reset, badge = gauge.texts()
    assert (used, reset, badge) == ("已用 100 %", "1:47:22后重置", "精确")
    assert label == "fake:5h" and gauge.accessibleName().startswith("fake:5h 配额：已用 100 %")
    fake.observe("fake:b", GoalState.PAUSED, reason=PauseReason.QUOTA, title="Write the docs")
    await engine.refresh()
    zh_window.bridge.flush()
    row = zh_window.goals_model.row_of("fake:b")
    assert row is not None
    assert zh_window.goals_model.data(zh_window.goals_model.index(row, Column.REASON)) == "配额"
    # an action's result, in the engine's words (the reason, too)
    zh_window.goals_view.select_goal("fake:a")
    zh_window.goal_actions.resume.setEnabled(True)
    zh_window.goal_actions.resume.trigger()
    text, ok = await wait_signal(zh_window.goal_actions.message)
    assert text == "Refactor the parser：已在运行" and ok


def test_the_settings_dialog_and_qt_s_own_buttons(zh: None, qtbot: Any, tmp_path: Any) -> None:
    dialog = SettingsDialog(SettingsSource(tmp_path / "config.toml", {}))
    qtbot.addWidget(dialog)
    assert dialog.windowTitle() == "Goalkeeper 设置"
    tabs = [dialog.tabs.tabText(i) for i in range(7)]
    assert tabs == ["恢复", "保持唤醒", "恢复策略", "配额阈值", "调度器", "通知", "桌面"]
    language = dialog.editors["language"]
    assert isinstance(language, QComboBox)
    assert [language.itemText(i) for i in range(language.count())] == [
        "系统语言", "English", "简体中文"]
    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    assert CJK.search(save.text()), save.text()  # Qt's own translation (qtbase_zh_CN.qm)
    editor = dialog.editors["max_auto_attempts"]
    editor.setText("0")  # type: ignore[union-attr]
    assert dialog.errors["max_auto_attempts"].text() == "应大于或等于 1"
    assert english_left(dialog) == []
    dialog.editors["auto_resume_hours"].setText("Mon-Fry 19:00-08:00")  # type: ignore[union-attr]
    assert dialog.errors["auto_resume_hours"].text() == (
        "'Mon-Fry'：未知的星期 'Fry'（请用 Mon、Tue、Wed、Thu、Fri、Sat、Sun）")
    dialog.editors["resume_reserve_by_window"].setText("codex:5h")  # type: ignore[union-attr]
    assert dialog.errors["resume_reserve_by_window"].text() == (
        "'codex:5h' 需要写成 WINDOW=PERCENT，例如 codex:5h=30")


@pytest.mark.asyncio
async def test_the_resume_policies_in_chinese(zh_window: MainWindow, engine: Engine,
                                              fake: FakeProvider) -> None:
    """What the resume policies put on the screen: a goal's details with its policy form (and
    the core's message for a wrong value), a deferral by the allowed hours, the gauge's forecast
    and reserve."""
    now = engine.clock.now()
    dialog = zh_window.open_details("fake:a")
    assert dialog.policy_form.title() == "恢复策略"
    assert dialog.field("Budget spent") == "—"
    dialog.policy_form.budget.setText("120")
    assert dialog.policy_form.errors["budget_percent"].text() == (
        "budget_percent = '120'：应小于或等于 100")
    assert english_left(dialog) == ["Refactor the parser"]  # the goal's title is data
    dialog.close()
    goal = engine.goals["fake:a"].model_copy(update={
        "state": GoalState.PAUSED, "pause_reason": PauseReason.QUOTA,
        "next_resume_at": now + timedelta(hours=3),
        "deferral": Deferral(rule="allowed hours", until=now + timedelta(hours=3))})
    when = short_time(now + timedelta(hours=3), now)
    assert fmt.next_resume_text(goal, now) == f"{when}（允许时段）"
    assert fmt.next_resume_tooltip(goal, now).startswith("自动恢复不早于 ")
    await engine.quota_intake.record_reading(reading("fake:5h", 40, now, now + timedelta(hours=4)))
    gauge = zh_window.quota_panel.gauges["fake:5h"]
    ahead = Forecast(60.0, now + timedelta(minutes=70)).text(now)
    gauge.set_reading(gauge.reading, False, now, 90.0, 30.0, ahead, runs_out=True)  # type: ignore[arg-type]
    soon = short_time(now + timedelta(minutes=70), now)
    assert gauge.policy_text() == f"约 {soon} 用完 · 预留 30 %"
    assert gauge.accessibleName().endswith(f"，约 {soon} 用完，为你预留 30 %")
    assert "预留：自动恢复需要剩余多于 30 %" in gauge.toolTip()
    assert Forecast(0.0, None, True).text(now) == "可撑到重置"
    assert Forecast(60.0, now + timedelta(minutes=70)).to_json(now)["text"].startswith(
        "runs out ≈ ")  # --json keeps the English


def test_the_tray_tooltip_in_chinese(zh: None, fake: FakeProvider) -> None:
    assert tooltip_text(summarise([])) == "Goalkeeper — 还没有目标"


def test_another_hosts_goal_in_chinese(zh: None) -> None:
    """A shared store: another host's goal names its host, and its tooltip says who acts."""
    model = GoalsModel(lambda: T0, lambda: 3)
    model.local_host = "laptop"
    model.apply([factory_goal("fake:theirs").model_copy(update={"host": "desk"})])
    index = model.index(0, Column.PROVIDER)
    assert model.data(index) == "fake · desk"  # names: the provider's and the host's
    assert model.data(index, Qt.ItemDataRole.ToolTipRole) == (
        "fake，在宿主 desk 上：只有该宿主运行、恢复或暂停它；你在这里的操作会发送给它")


def test_english_comes_back(qapp: QApplication, zh: None) -> None:
    gui_i18n.uninstall(qapp)
    i18n.use_language("en")
    assert gui_i18n.tr("&Start") == "&Start" and i18n._("Goals:") == "Goals:"
