"""The window on a shared store: other hosts' goals are listed, naming their host."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from gui.models.goals_model import Column, GoalsModel
from tests.gui.factories import T0, goal


def test_another_hosts_goal_names_its_host(qtbot: Any) -> None:
    model = GoalsModel(lambda: T0, lambda: 3)
    model.local_host = "laptop"
    model.apply([goal("fake:mine").model_copy(update={"host": "laptop"}),
                 goal("fake:theirs").model_copy(update={"host": "desk"})])
    shown = {model.goal_at(row).id: model.data(model.index(row, Column.PROVIDER))  # type: ignore[union-attr]
             for row in range(model.rowCount())}
    assert shown == {"fake:mine": "fake", "fake:theirs": "fake · desk"}
    tips = {model.goal_at(row).id: model.data(model.index(row, Column.PROVIDER),  # type: ignore[union-attr]
                                              Qt.ItemDataRole.ToolTipRole)
            for row in range(model.rowCount())}
    assert tips["fake:mine"] == "fake"
    assert tips["fake:theirs"].startswith("fake, on host desk: only that host runs")

