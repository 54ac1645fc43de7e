"""Every control can be reached by keyboard and is named for screen readers."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QComboBox,
    QLabel,
    QLineEdit,
    QWidget,
)

from gui.main_window import MainWindow
from gui.widgets.quota_gauge import QuotaGauge


def named(widget: QWidget) -> bool:
    """An accessible name, visible text, or a label that points at it (its buddy)."""
    if widget.accessibleName():
        return True
    if isinstance(widget, QAbstractButton) and widget.text().strip():
        return True
    labels = widget.window().findChildren(QLabel)
    return any(label.buddy() is widget for label in labels)


@pytest.mark.asyncio
async def test_every_focusable_control_has_a_name(window: MainWindow, qtbot: Any) -> None:
    window.show()
    interactive = (QAbstractButton, QComboBox, QLineEdit, QAbstractItemView, QuotaGauge)
    unnamed = [type(w).__name__ + ":" + w.objectName()
               for w in window.findChildren(QWidget)
               if isinstance(w, interactive) and w.focusPolicy() != Qt.FocusPolicy.NoFocus
               and w.isVisibleTo(window) and not named(w)]
    assert unnamed == []
    assert len([w for w in window.findChildren(QWidget) if isinstance(w, interactive)]) > 10


@pytest.mark.asyncio
async def test_every_action_has_a_shortcut_or_menu_entry(window: MainWindow) -> None:
    actions = window.goal_actions.all
    assert all(not a.shortcut().isEmpty() for a in actions)
    menu_actions = {a.text() for m in window.menuBar().findChildren(type(window.app_menu))
                    for a in m.actions()}
    assert {a.text() for a in actions} <= menu_actions
    assert "&Settings…" in menu_actions and "&Quit" in menu_actions


@pytest.mark.asyncio
async def test_tab_reaches_the_goals_table_from_the_filter(window: MainWindow, qtbot: Any) -> None:
    window.show()
    window.goals_view.focus_filter()
    seen = set()
    for _ in range(12):
        widget = window.focusWidget()
        seen.add(widget)
        window.focusNextChild()
    assert window.goals_view.table in seen
