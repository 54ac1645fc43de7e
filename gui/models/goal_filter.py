"""Filtering of the goals table (text and state); sorting is handed to the source model.

The source model sorts its rows itself (one Python ``list.sort`` with a key); a Qt proxy would
call back into Python for every comparison, which costs tens of milliseconds on a 1,000-goal
burst. The proxy only filters, and does nothing per row while no filter is set.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt

from gui.goal_rules import StateFilter, matches_state, matches_text
from gui.models.goals_model import GoalRole


class GoalFilterProxy(QSortFilterProxyModel):
    """Shows the goals matching a free-text filter and a :class:`StateFilter`."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._text = ""
        self._state = StateFilter.ALL
        self.setDynamicSortFilter(True)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        model = self.sourceModel()
        if model is not None:
            model.sort(column, order)  # the proxy keeps the source's order

    @property
    def text(self) -> str:
        return self._text

    def set_text(self, text: str) -> None:
        if text != self._text:
            self._change(lambda: setattr(self, "_text", text))

    def set_state_filter(self, wanted: StateFilter) -> None:
        if wanted != self._state:
            self._change(lambda: setattr(self, "_state", wanted))

    def _change(self, apply: Callable[[], None]) -> None:
        # Qt 6.10 added begin/endFilterChange and deprecates invalidateRowsFilter; 6.8 has
        # only the latter (the pin allows both)
        if hasattr(self, "endFilterChange"):
            self.beginFilterChange()
            apply()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            apply()
            self.invalidateRowsFilter()

    def filterAcceptsRow(self, source_row: int,
                         source_parent: QModelIndex | QPersistentModelIndex) -> bool:
        if self._state is StateFilter.ALL and not self._text:
            return True
        model = self.sourceModel()
        goal = model.data(model.index(source_row, 0, source_parent), GoalRole)
        if goal is None:
            return False
        return matches_state(goal, self._state) and matches_text(goal, self._text)
