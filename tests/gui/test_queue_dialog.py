"""Goal → Start at the reset…: the form checks what it sends, queues through the bridge and the
door, shows a refusal in itself, and closes on a queued start (issue 23)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from core.models import GoalState, PauseReason
from gui.bridge import Bridge
from gui.dialogs.queue_dialog import QueueDialog
from gui.main_window import MainWindow
from tests.support.fakes import FakeProvider, reading, until
from tests.support.gui import wait_signal

pytestmark = pytest.mark.asyncio


async def codex_bridge(make_engine: Any, clock: Any) -> tuple[Bridge, FakeProvider]:
    codex = FakeProvider(clock, name="codex")
    codex.readings = [reading("codex:5h", 40, clock.now(), clock.now() + timedelta(hours=2),
                              provider="codex")]
    engine = await make_engine(codex)
    bridge = Bridge(engine, host_text="test host")
    bridge.sync()
    return bridge, codex


async def test_the_menu_opens_the_form_with_codex_first(window: MainWindow, qtbot: Any) -> None:
    assert window.queue_action in window.goal_menu.actions()
    dialog = window.open_queue()
    qtbot.addWidget(dialog)
    assert dialog.windowTitle() == "Start at the reset"
    assert dialog.provider.currentData() == "codex"
    assert dialog.window_box.currentData() == "codex:5h"
    assert dialog.text_label.text() == "Objective" and not dialog.thread_field.isHidden()
    dialog.provider.setCurrentIndex(dialog.provider.findData("claude"))
    assert dialog.window_box.currentData() == "claude:5h"
    assert dialog.text_label.text() == "Prompt" and dialog.thread_field.isHidden()
    assert "No reset time is known for claude:5h" in dialog.when.text()


async def test_a_bad_form_is_refused_in_the_dialog_and_nothing_is_sent(
        make_engine: Any, clock: Any, qtbot: Any, tmp_path: Path) -> None:
    bridge, codex = await codex_bridge(make_engine, clock)
    try:
        dialog = QueueDialog(bridge)
        qtbot.addWidget(dialog)
        dialog.directory.setText(str(tmp_path / "missing"))
        dialog.text.setPlainText("Write the report")
        dialog.queue_button.click()
        assert not dialog.error.isHidden()
        assert dialog.error.text() == f"no such directory: {tmp_path / 'missing'}"
        dialog.directory.setText(str(tmp_path))
        dialog.text.setPlainText("  ")
        dialog.queue_button.click()
        assert dialog.error.text() == "the objective is empty"
        assert codex.prepared == []
    finally:
        await bridge.close()


async def test_queued_through_the_door_closes_and_the_goal_waits(
        make_engine: Any, clock: Any, qtbot: Any, tmp_path: Path) -> None:
    bridge, codex = await codex_bridge(make_engine, clock)
    try:
        dialog = QueueDialog(bridge)
        qtbot.addWidget(dialog)
        dialog.show()
        assert "codex:5h resets next at" in dialog.when.text()
        dialog.directory.setText(str(tmp_path))
        dialog.text.setPlainText("Write the report")
        dialog.thread_field.setText("")
        dialog.queue_button.click()
        [result] = await wait_signal(dialog.queued)
        assert result.outcome.value == "queued"
        await until(lambda: not dialog.isVisible())
        assert [w.text for w in codex.prepared] == ["Write the report"]
        await until(lambda: bridge.goal(result.goal) is not None)
        goal = bridge.goal(result.goal)
        assert goal is not None and (goal.state, goal.pause_reason) == (
            GoalState.PAUSED, PauseReason.QUOTA)
    finally:
        await bridge.close()


async def test_a_refusal_from_the_host_is_shown_in_the_dialog(
        make_engine: Any, clock: Any, qtbot: Any, tmp_path: Path) -> None:
    bridge, codex = await codex_bridge(make_engine, clock)
    codex.behaviour = "fail"
    try:
        dialog = QueueDialog(bridge)
        qtbot.addWidget(dialog)
        dialog.show()
        dialog.directory.setText(str(tmp_path))
        dialog.text.setPlainText("Write the report")
        dialog.queue_button.click()
        await until(lambda: not dialog.error.isHidden())
        assert "could not queue: the agent cannot prepare that" in dialog.error.text()
        assert dialog.isVisible() and dialog.queue_button.isEnabled()
    finally:
        await bridge.close()


async def test_the_window_is_named_as_its_quota_calls_itself(
        make_engine: Any, clock: Any, qtbot: Any) -> None:
    bridge, codex = await codex_bridge(make_engine, clock)
    labelled = codex.readings[0].model_copy(update={"label": "Codex · 5 h"})
    await bridge._core.quota_intake.record_reading(labelled)
    bridge.sync()
    try:
        dialog = QueueDialog(bridge)
        qtbot.addWidget(dialog)
        assert dialog.window_box.currentText() == "Codex · 5 h (codex:5h)"
        assert dialog.window_box.currentData() == "codex:5h"
        assert dialog.when.text().startswith("Codex · 5 h (codex:5h) resets next at")
    finally:
        await bridge.close()
