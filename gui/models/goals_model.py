"""The goals table's model: one row per goal, updated in coalesced batches.

Goal changes arrive one event at a time (a provider burst can be a thousand); each is parked in a
pending map and applied on the next turn of the event loop in one go — one ``rowsInserted`` for
the new goals and one ``dataChanged`` span for the changed ones — so the view and the sorting
proxy do their work once per burst, not once per goal.

The auto-resume checkbox never changes the model itself: it emits
:attr:`GoalsModel.auto_resume_requested` and the row changes when the engine says the goal did.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, tzinfo
from enum import IntEnum
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from core.i18n.textfmt import long_time
from core.models import Goal, GoalState
from gui import format as fmt
from gui.goal_rules import can_toggle_auto_resume
from gui.i18n import QT_TR_NOOP, tr

Index = QModelIndex | QPersistentModelIndex

GoalRole = Qt.ItemDataRole.UserRole + 1
SortRole = Qt.ItemDataRole.UserRole + 2

_STATE_ORDER = {s: i for i, s in enumerate((
    GoalState.FAILED, GoalState.PAUSED, GoalState.RESUMING, GoalState.RUNNING, GoalState.IDLE,
    GoalState.DONE, GoalState.CANCELLED))}
_FAR_FUTURE = 1e18
_ROLES = frozenset({Qt.ItemDataRole.DisplayRole, GoalRole, SortRole, Qt.ItemDataRole.ToolTipRole,
                    Qt.ItemDataRole.CheckStateRole, Qt.ItemDataRole.AccessibleTextRole})


class Column(IntEnum):
    TITLE = 0
    PROVIDER = 1
    STATE = 2
    REASON = 3
    AUTO = 4
    NEXT = 5
    ATTEMPTS = 6
    CHANGED = 7


HEADERS = {
    Column.TITLE: QT_TR_NOOP("Goal"),
    Column.PROVIDER: QT_TR_NOOP("Provider"),
    Column.STATE: QT_TR_NOOP("State"),
    Column.REASON: QT_TR_NOOP("Pause reason"),
    Column.AUTO: QT_TR_NOOP("Auto-resume"),
    Column.NEXT: QT_TR_NOOP("Next auto-resume"),
    Column.ATTEMPTS: QT_TR_NOOP("Attempts"),
    Column.CHANGED: QT_TR_NOOP("Last change"),
}


class GoalsModel(QAbstractTableModel):
    """Rows of goals, kept in the order of the current sort column.

    Signals: ``auto_resume_requested(goal_id, enabled)``; ``applied()`` after a batch of changes
    (or a reset) reached the rows.
    """

    auto_resume_requested = Signal(str, bool)
    applied = Signal()

    def __init__(self, now: Callable[[], datetime], max_attempts: Callable[[], int],
                 zone: tzinfo | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._now_fn = now
        self._cap = max_attempts
        self.zone = zone
        self._now = now()
        self._goals: list[Goal] = []
        self._rows: dict[str, int] = {}
        self.sort_column: Column | None = None
        self.sort_order = Qt.SortOrder.AscendingOrder
        #: this host's id: the goals of other hosts (a shared store) name their host
        self.local_host = ""

    # -- updates -------------------------------------------------------------------------------

    def reset(self, goals: Iterable[Goal]) -> None:
        self.beginResetModel()
        self._goals = self._sorted(list(goals))
        self._reindex()
        self._now = self._now_fn()
        self.endResetModel()
        self.applied.emit()

    def upsert(self, goal: Goal) -> None:
        self.apply([goal])

    def apply(self, goals: Iterable[Goal]) -> None:
        """Apply a batch: one ``rowsInserted`` for the new goals, one ``dataChanged`` span for
        the changed ones, and one re-sort if a sort key moved."""
        self._now = self._now_fn()
        changed: list[int] = []
        added: list[Goal] = []
        resort = False
        for goal in goals:
            row = self._rows.get(goal.id)
            if row is None:
                added.append(goal)
                continue
            if not resort and self.sort_column is not None:
                resort = (self._sort_key(goal, self.sort_column)
                          != self._sort_key(self._goals[row], self.sort_column))
            self._goals[row] = goal
            changed.append(row)
        if changed:
            self.dataChanged.emit(self.index(min(changed), 0),
                                  self.index(max(changed), len(Column) - 1))
        if added:
            first = len(self._goals)
            self.beginInsertRows(QModelIndex(), first, first + len(added) - 1)
            for offset, goal in enumerate(added):
                self._rows[goal.id] = first + offset
                self._goals.append(goal)
            self.endInsertRows()
        if resort or (added and self.sort_column is not None):
            self._resort()
        self.applied.emit()

    def remove(self, goal_id: str) -> None:
        row = self._rows.get(goal_id)
        if row is None:
            return
        self.beginRemoveRows(QModelIndex(), row, row)
        del self._goals[row]
        self._reindex()
        self.endRemoveRows()

    def _reindex(self) -> None:
        self._rows = {g.id: i for i, g in enumerate(self._goals)}

    # -- sorting (here, in Python, rather than by Qt calling back into Python per comparison) --

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.sort_column = Column(column) if 0 <= column < len(Column) else None
        self.sort_order = order
        self._resort()

    def _sorted(self, goals: list[Goal]) -> list[Goal]:
        column = self.sort_column
        if column is None:
            return goals
        return sorted(goals, key=lambda g: (self._sort_key(g, column), g.id),
                      reverse=self.sort_order is Qt.SortOrder.DescendingOrder)

    def _resort(self) -> None:
        ordered = self._sorted(self._goals)
        if ordered == self._goals:
            return
        self.layoutAboutToBeChanged.emit()
        new_row = {g.id: i for i, g in enumerate(ordered)}
        persistent = self.persistentIndexList()
        moved = [self.index(new_row[self._goals[i.row()].id], i.column()) for i in persistent]
        self._goals = ordered
        self._rows = new_row
        self.changePersistentIndexList(persistent, moved)
        self.layoutChanged.emit()

    def tick(self, now: datetime) -> None:
        """The display second passed: refresh the countdown column (only rows that count)."""
        self._now = now
        rows = [i for i, g in enumerate(self._goals) if g.next_resume_at is not None]
        if rows:
            self.dataChanged.emit(self.index(min(rows), Column.NEXT),
                                  self.index(max(rows), Column.NEXT),
                                  [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole])

    def needs_tick(self) -> bool:
        return any(g.next_resume_at is not None and g.state is GoalState.PAUSED
                   for g in self._goals)

    # -- lookup --------------------------------------------------------------------------------

    def goal_at(self, row: int) -> Goal | None:
        return self._goals[row] if 0 <= row < len(self._goals) else None

    def goal(self, goal_id: str) -> Goal | None:
        row = self._rows.get(goal_id)
        return self._goals[row] if row is not None else None

    def row_of(self, goal_id: str) -> int | None:
        return self._rows.get(goal_id)

    def goals(self) -> list[Goal]:
        return list(self._goals)

    # -- Qt model interface --------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._goals)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(Column)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation is Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return tr(HEADERS[Column(section)])
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        goal = self.goal_at(index.row())
        if index.column() == Column.AUTO and goal is not None and can_toggle_auto_resume(goal):
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        return flags

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role not in _ROLES:  # painting asks for a dozen roles per cell; most are not ours
            return None
        goal = self.goal_at(index.row())
        if goal is None:
            return None
        column = Column(index.column())
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(goal, column)
        if role == GoalRole:
            return goal
        if role == SortRole:
            return self._sort_key(goal, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(goal, column)
        if role == Qt.ItemDataRole.CheckStateRole and column == Column.AUTO:
            return Qt.CheckState.Checked if goal.auto_resume else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return self._accessible(goal, column)
        return None

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        goal = self.goal_at(index.row())
        if goal is None or index.column() != Column.AUTO or (
            role != Qt.ItemDataRole.CheckStateRole
        ):
            return False
        wanted = Qt.CheckState(value) == Qt.CheckState.Checked
        self.auto_resume_requested.emit(goal.id, wanted)
        return False  # the row changes when the engine reports the goal changed

    def _display(self, goal: Goal, column: Column) -> str:
        if column is Column.TITLE:
            return goal.title
        if column is Column.PROVIDER:
            if self._elsewhere(goal):
                return f"{goal.provider} · {goal.host}"
            return goal.provider
        if column is Column.STATE:
            return fmt.state_text(goal)
        if column is Column.REASON:
            return fmt.reason_text(goal)
        if column is Column.AUTO:
            return tr("on") if goal.auto_resume else tr("off")
        if column is Column.NEXT:
            return fmt.next_resume_text(goal, self._now, self.zone)
        if column is Column.ATTEMPTS:
            return fmt.attempts_text(goal, self._cap())
        return fmt.last_change_text(goal, self._now, self.zone)

    def _sort_key(self, goal: Goal, column: Column) -> Any:
        if column is Column.STATE:
            return _STATE_ORDER.get(goal.state, 99)
        if column is Column.AUTO:
            return int(goal.auto_resume)
        if column is Column.NEXT:
            return goal.next_resume_at.timestamp() if goal.next_resume_at else _FAR_FUTURE
        if column is Column.ATTEMPTS:
            return goal.attempts
        if column is Column.CHANGED:
            return fmt.last_change_instant(goal).timestamp()
        return self._display(goal, column).casefold()

    def _tooltip(self, goal: Goal, column: Column) -> str:
        if column is Column.TITLE:
            return f"{goal.title}\n{goal.id}"
        if column is Column.NEXT:
            return fmt.next_resume_tooltip(goal, self._now, self.zone)
        if column is Column.CHANGED:
            return long_time(fmt.last_change_instant(goal), self.zone)
        if column is Column.ATTEMPTS:
            return tr("{attempts} automatic resume attempts of {cap} in this episode").format(
                attempts=goal.attempts, cap=self._cap())
        if column is Column.PROVIDER and self._elsewhere(goal):
            return tr("{provider}, on host {host}: only that host runs, resumes or pauses it; "
                      "what you do here is sent to it").format(provider=goal.provider,
                                                              host=goal.host)
        return self._display(goal, column)

    def _elsewhere(self, goal: Goal) -> bool:
        """Whether another host (a shared store) owns ``goal``."""
        return bool(goal.host and self.local_host and goal.host != self.local_host)

    def _accessible(self, goal: Goal, column: Column) -> str:
        if column is Column.AUTO:
            return tr("auto-resume on") if goal.auto_resume else tr("auto-resume off")
        return tr("{header}: {value}").format(header=tr(HEADERS[column]),
                                              value=self._display(goal, column))
