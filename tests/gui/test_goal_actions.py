"""Clicking pause / resume / cancel drives the real core; the table shows what the engine did."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from core.clock import FakeClock
from core.commands import Cancel, Pause, Resume, SetAutoResume
from core.engine import Engine
from core.models import GoalState, PauseReason
from gui.main_window import MainWindow
from gui.models.goals_model import Column
from tests.support.fakes import FakeProvider, until
from tests.support.gui import RecordingLauncher, wait_signal


def cell(window: MainWindow, goal_id: str, column: Column) -> str:
    window.bridge.flush()
    row = window.goals_model.row_of(goal_id)
    assert row is not None
    return str(window.goals_model.index(row, column).data())


def select(window: MainWindow, goal_id: str) -> None:
    window.bridge.flush()
    assert window.goals_view.select_goal(goal_id)


async def finished(window: MainWindow) -> tuple[str, Any]:
    command, result = await wait_signal(window.bridge.action_finished)
    return command.wire, result


@pytest.mark.asyncio
async def test_pause_then_resume_through_the_toolbar(window: MainWindow, engine: Engine,
                                                     fake: FakeProvider) -> None:
    assert cell(window, "fake:a", Column.STATE) == "running"
    select(window, "fake:a")
    actions = window.goal_actions
    assert actions.pause.isEnabled() and not actions.resume.isEnabled()

    actions.pause.trigger()
    verb, result = await finished(window)
    assert (verb, result.outcome.value) == ("pause", "paused")
    await until(lambda: cell(window, "fake:a", Column.STATE) == "paused")
    assert cell(window, "fake:a", Column.REASON) == "user"
    assert cell(window, "fake:a", Column.NEXT) == "paused by the user: never auto-resumed"
    assert fake.paused == ["fake:a"]
    assert window.banner.text == "Refactor the parser: Paused"
    assert actions.resume.isEnabled() and not actions.pause.isEnabled()

    actions.resume.trigger()
    verb, result = await finished(window)
    assert (verb, result.outcome.value) == ("resume", "resumed")
    await until(lambda: cell(window, "fake:a", Column.STATE) == "running")
    assert [goal for goal, _ in fake.starts] == ["fake:a"]
    assert window.banner.text == "Refactor the parser: Resumed"
    assert engine.goals["fake:a"].state is GoalState.RUNNING


@pytest.mark.asyncio
async def test_cancel_asks_first_and_keep_it_does_nothing(window: MainWindow, engine: Engine,
                                                          fake: FakeProvider) -> None:
    select(window, "fake:a")
    window.goal_actions.cancel.trigger()
    box = window.goal_actions.confirm_box
    assert box is not None and box.isVisible()
    box.button(QMessageBox.StandardButton.No).click()
    await until(lambda: window.goal_actions.confirm_box is None)
    assert engine.goals["fake:a"].state is GoalState.RUNNING

    window.goal_actions.cancel.trigger()
    box = window.goal_actions.confirm_box
    assert box is not None
    assert "Refactor the parser" in box.text()
    box.button(QMessageBox.StandardButton.Yes).click()
    verb, result = await finished(window)
    assert (verb, result.outcome.value) == ("cancel", "cancelled")
    await until(lambda: cell(window, "fake:a", Column.STATE) == "cancelled")
    assert fake.cancelled == ["fake:a"]
    actions = window.goal_actions
    assert not any(a.isEnabled() for a in (actions.pause, actions.resume, actions.cancel,
                                           actions.auto_resume))


@pytest.mark.asyncio
async def test_a_refusal_is_rendered_as_the_engine_said(window: MainWindow) -> None:
    bridge = window.bridge
    bridge.request(Cancel("fake:b"))
    await finished(window)
    # a click that raced the change (the action was still enabled on screen)
    bridge.request(Pause("fake:b"))
    _verb, result = await finished(window)
    assert result.outcome.value == "refused"
    assert window.banner.text == "Write the docs: Refused: cancelled"
    assert not window.banner.ok
    bridge.request(Resume("fake:a"))
    await finished(window)
    assert window.banner.text == "Refactor the parser: Already running"


@pytest.mark.asyncio
async def test_start_an_idle_goal(window: MainWindow, fake: FakeProvider) -> None:
    select(window, "fake:b")
    assert window.goal_actions.start.isEnabled() and not window.goal_actions.resume.isEnabled()
    window.goal_actions.start.trigger()
    verb, result = await finished(window)
    assert verb == "start" and result.outcome.value == "resumed"
    assert window.banner.text == "Write the docs: Started"
    await until(lambda: cell(window, "fake:b", Column.STATE) == "running")


@pytest.mark.asyncio
async def test_auto_resume_checkbox_asks_the_engine_and_shows_its_answer(
        window: MainWindow, engine: Engine) -> None:
    model = window.goals_model
    window.bridge.flush()
    index = model.index(model.row_of("fake:a") or 0, Column.AUTO)
    assert index.data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Unchecked
    # the view does not flip the box itself: it asks, and changes when the engine says so
    checked = Qt.CheckState.Checked.value
    assert model.setData(index, checked, Qt.ItemDataRole.CheckStateRole) is False
    assert index.data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Unchecked
    verb, result = await finished(window)
    assert (verb, result.outcome.value) == ("auto-resume", "updated")
    await until(lambda: model.index(index.row(), Column.AUTO).data(
        Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked)
    assert engine.goals["fake:a"].auto_resume is True
    assert window.banner.text == "Refactor the parser: Auto-resume on"

    select(window, "fake:a")
    assert window.goal_actions.auto_resume.isChecked()
    window.goal_actions.auto_resume.trigger()  # unchecks
    await finished(window)
    assert engine.goals["fake:a"].auto_resume is False
    assert not window.goal_actions.auto_resume.isChecked()


@pytest.mark.asyncio
async def test_quota_pause_shows_a_live_countdown(window: MainWindow, engine: Engine,
                                                  fake: FakeProvider, clock: FakeClock) -> None:
    await engine.perform(SetAutoResume("fake:a", True))
    fake.observe("fake:a", GoalState.PAUSED, reason=PauseReason.QUOTA,
                 resets_at=clock.now() + timedelta(hours=1), pause_detail="5-hour limit",
                 title="Refactor the parser")
    fake.observe("fake:b", GoalState.PAUSED, reason=PauseReason.QUOTA, title="Write the docs")
    await engine.refresh()
    assert cell(window, "fake:a", Column.REASON) == "quota: 5-hour limit"
    assert cell(window, "fake:a", Column.NEXT) == "in 1:00:45"  # reset + 45 s margin
    assert cell(window, "fake:b", Column.NEXT) == "auto-resume is off"
    assert window.goals_model.needs_tick()
    clock.advance(45)
    window.goals_model.tick(clock.now())
    assert cell(window, "fake:a", Column.NEXT) == "in 1:00:00"
    tip = window.goals_model.index(window.goals_model.row_of("fake:a") or 0, Column.NEXT).data(
        Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("Automatic resume not before ")


@pytest.mark.asyncio
async def test_open_terminal_and_folder_use_the_provider_command_and_cwd(
        window: MainWindow, fake: FakeProvider, launcher: RecordingLauncher,
        monkeypatch: pytest.MonkeyPatch) -> None:
    select(window, "fake:b")
    assert not window.goal_actions.open_terminal.isEnabled()
    assert not window.goal_actions.open_folder.isEnabled()  # no cwd recorded
    monkeypatch.setattr(fake, "open_command", lambda goal: ["fake-agent", "resume", goal.id])
    select(window, "fake:c")
    actions = window.goal_actions
    assert actions.open_terminal.isEnabled() and actions.open_folder.isEnabled()
    window.goal_actions.open_terminal.trigger()
    window.goal_actions.open_folder.trigger()
    assert [(argv, str(cwd)) for argv, cwd in launcher.terminals] == [
        (["fake-agent", "resume", "fake:c"], "/")]
    assert [str(p) for p in launcher.folders] == ["/"]
    launcher.error = "no terminal emulator found on PATH"
    window.goal_actions.open_terminal.trigger()
    assert window.banner.text == "Port the tests: no terminal emulator found on PATH"
    assert not window.banner.ok


@pytest.mark.asyncio
async def test_actions_are_enabled_only_where_legal(window: MainWindow, engine: Engine) -> None:
    actions = window.goal_actions
    select(window, "fake:b")  # idle
    assert [a.isEnabled() for a in (actions.start, actions.resume, actions.pause,
                                    actions.cancel)] == [True, False, True, True]
    await engine.perform(Pause("fake:b"))
    await until(lambda: engine.goals["fake:b"].pause_reason is PauseReason.USER)
    window.bridge.flush()
    assert [a.isEnabled() for a in (actions.start, actions.resume, actions.pause,
                                    actions.cancel)] == [False, True, False, True]


@pytest.mark.asyncio
async def test_double_click_and_enter_open_details(window: MainWindow, qtbot: Any) -> None:
    select(window, "fake:a")
    view = window.goals_view.table
    qtbot.keyClick(view, Qt.Key.Key_Return)
    dialog = window.details["fake:a"]
    assert dialog.isVisible()
    assert dialog.field("Title") == "Refactor the parser"
    assert dialog.field("State").startswith("running since")
    dialog.close()
    await until(lambda: "fake:a" not in window.details)
    index = view.currentIndex()
    view.doubleClicked.emit(index)
    assert window.details["fake:a"].isVisible()


@pytest.mark.asyncio
async def test_details_follow_the_goal(window: MainWindow, engine: Engine) -> None:
    dialog = window.open_details("fake:a")
    await engine.perform(Pause("fake:a"))
    window.bridge.flush()  # (the loop does it on its next turn)
    assert dialog.field("State").startswith("paused since")
    assert dialog.field("Pause reason") == "user"


@pytest.mark.asyncio
async def test_details_show_history_switches_to_that_goal(window: MainWindow) -> None:
    dialog = window.open_details("fake:b")
    loads = window.history_view.loads
    dialog.history_requested.emit("fake:b")
    assert window.tabs.currentWidget() is window.history_view
    await until(lambda: window.history_view.loads > loads)
    assert window.history_view.scope_goal == "fake:b"
    assert window.history_view.model.rowCount() >= 1
