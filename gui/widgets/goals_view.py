"""The goals table with its filter bar: text and state filters, sortable columns, state badges.

Signals: ``current_goal_changed(str)`` (empty string: none selected), ``goal_activated(str)``
(double-click or Enter), ``context_menu_requested(QPoint)`` (global position).
"""

from __future__ import annotations

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRectF,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QColor, QFontMetrics, QKeyEvent, QPainter, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.models import Goal
from gui.goal_rules import STATE_FILTER_LABELS, StateFilter
from gui.i18n import tr
from gui.models.goal_filter import GoalFilterProxy
from gui.models.goals_model import Column, GoalRole, GoalsModel
from gui.theme import state_color

Index = QModelIndex | QPersistentModelIndex
#: the widest a column other than the title and the pause reason is fitted to (px)
MAX_COLUMN_WIDTH = 240
#: the title keeps at least its content up to this width; the pause reason takes the rest
TITLE_KEEPS = 320
MIN_REASON_WIDTH = 190


class StateBadgeDelegate(QStyledItemDelegate):
    """Paints the state as a coloured pill with white text."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        goal: Goal | None = index.data(GoalRole)
        if goal is None:
            super().paint(painter, option, index)
            return
        style = option.widget.style() if option.widget else None
        if style is not None:  # selection background, focus frame
            opt = QStyleOptionViewItem(option)
            self.initStyleOption(opt, index)
            opt.text = ""
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, option.widget)
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        metrics = QFontMetrics(option.font)
        width = metrics.horizontalAdvance(text) + 14
        height = metrics.height() + 2
        rect = QRectF(option.rect.x() + 4, option.rect.center().y() - height / 2 + 0.5,
                      min(width, option.rect.width() - 8), height)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(state_color(goal)))
        painter.drawRoundedRect(rect, height / 2, height / 2)
        painter.setPen(QColor("white"))
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        size = super().sizeHint(option, index)
        return QSize(size.width() + 22, size.height() + 4)


class GoalTable(QTableView):
    """A table view where Enter opens the current goal (double-click does too)."""

    enter_pressed = Signal(QModelIndex)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.currentIndex().isValid():
            self.enter_pressed.emit(self.currentIndex())
            return
        super().keyPressEvent(event)


class GoalsView(QWidget):
    """Filter bar + sortable goals table over a :class:`GoalsModel`."""

    current_goal_changed = Signal(str)
    goal_activated = Signal(str)
    context_menu_requested = Signal(QPoint)

    def __init__(self, model: GoalsModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.proxy = GoalFilterProxy(self)
        self.proxy.setSourceModel(model)
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setPlaceholderText(tr("Filter goals by title, id, provider or reason"))
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setAccessibleName(tr("Filter goals"))
        self.state_combo = QComboBox(self)
        self.state_combo.setAccessibleName(tr("Show goals in state"))
        for key, label in STATE_FILTER_LABELS.items():
            self.state_combo.addItem(tr(label), key.value)
        self.count_label = QLabel(self)
        self.table = self._make_table()
        self._fit_timer = QTimer(self)
        self._fit_timer.setSingleShot(True)
        self._fit_timer.setInterval(0)
        self._fit_timer.timeout.connect(self.fit_columns)
        self._layout()
        self.filter_edit.textChanged.connect(self.proxy.set_text)
        self.state_combo.currentIndexChanged.connect(self._on_state_combo_changed)
        for signal in (self.proxy.rowsInserted, self.proxy.rowsRemoved, self.proxy.modelReset,
                       self.proxy.layoutChanged):
            signal.connect(self._update_count)
            signal.connect(self._fit_timer.start)
        self.proxy.dataChanged.connect(self._on_proxy_data_changed)
        self._update_count()

    def _make_table(self) -> GoalTable:
        table = GoalTable(self)
        table.setModel(self.proxy)
        table.setAccessibleName(tr("Goals"))
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setSortingEnabled(True)
        table.sortByColumn(Column.STATE, Qt.SortOrder.AscendingOrder)
        table.setAlternatingRowColors(True)
        table.setWordWrap(False)
        table.verticalHeader().hide()
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        table.setItemDelegateForColumn(Column.STATE, StateBadgeDelegate(table))
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(Column.TITLE, QHeaderView.ResizeMode.Stretch)
        for column, width in ((Column.PROVIDER, 80), (Column.STATE, 100), (Column.REASON, 190),
                              (Column.AUTO, 100), (Column.NEXT, 170), (Column.ATTEMPTS, 75),
                              (Column.CHANGED, 110)):
            table.setColumnWidth(column, width)  # until there are rows to fit them to
        table.selectionModel().currentRowChanged.connect(self._on_current_changed)
        table.doubleClicked.connect(self._activate)
        table.enter_pressed.connect(self._activate)
        table.customContextMenuRequested.connect(
            lambda pos: self.context_menu_requested.emit(table.viewport().mapToGlobal(pos)))
        return table

    def fit_columns(self) -> None:
        """Size every column but the title's to its content and header (up to a cap: the cell's
        tooltip holds the full text); the title stretches over what is left."""
        wanted = {column: max(self.table.sizeHintForColumn(column),
                              self.table.horizontalHeader().sectionSizeHint(column))
                  for column in Column}
        others = [c for c in Column if c not in (Column.TITLE, Column.REASON)]
        for column in others:
            self.table.setColumnWidth(column, min(wanted[column], MAX_COLUMN_WIDTH))
        room = (self.table.viewport().width() - sum(self.table.columnWidth(c) for c in others)
                - min(wanted[Column.TITLE], TITLE_KEEPS))
        self.table.setColumnWidth(Column.REASON,
                                  min(wanted[Column.REASON], max(room, MIN_REASON_WIDTH)))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_timer.start()

    def _on_proxy_data_changed(self, top_left: QModelIndex, bottom_right: QModelIndex,
                               roles: list[int] | None = None) -> None:
        # the countdown's once-a-second change refits nothing: its width barely moves
        if top_left.column() != bottom_right.column() or top_left.column() != Column.NEXT:
            self._fit_timer.start()

    def _layout(self) -> None:
        bar = QHBoxLayout()
        label = QLabel(tr("&Filter:"), self)
        label.setBuddy(self.filter_edit)
        bar.addWidget(label)
        bar.addWidget(self.filter_edit, 1)
        bar.addWidget(self.state_combo)
        bar.addWidget(self.count_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.table, 1)

    # -- selection -----------------------------------------------------------------------------

    def current_goal(self) -> Goal | None:
        index = self.table.currentIndex()
        return index.data(GoalRole) if index.isValid() else None

    def select_goal(self, goal_id: str) -> bool:
        row = self.model.row_of(goal_id)
        if row is None:
            return False
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        if not index.isValid():
            return False
        self.table.setCurrentIndex(index)
        self.table.scrollTo(index)
        return True

    def _on_current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        goal = current.data(GoalRole) if current.isValid() else None
        self.current_goal_changed.emit(goal.id if goal else "")

    def _activate(self, index: QModelIndex) -> None:
        goal = index.data(GoalRole)
        if goal is not None:
            self.goal_activated.emit(goal.id)

    def _on_state_combo_changed(self, _: int) -> None:
        self.proxy.set_state_filter(StateFilter(self.state_combo.currentData()))
        self._update_count()

    def _update_count(self, *args: object) -> None:
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        self.count_label.setText(tr("{shown} of {total}").format(shown=shown, total=total)
                                 if shown != total else tr("{total} goals").format(total=total))

    def focus_filter(self) -> None:
        self.filter_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter_edit.selectAll()
