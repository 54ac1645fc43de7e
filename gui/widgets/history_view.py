"""The resume history: every goal or the selected one, a page at a time, exportable to CSV.

Pages are read from the store on its own thread; a new row for the shown scope reloads the first
page (debounced) and only updates the count on later pages, so rows do not shift under the reader.

Signals: ``message(str, bool)`` — the export's result.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.atomic import atomic_write_text
from core.models import HistoryRow
from gui.bridge import Bridge
from gui.i18n import tr
from gui.models.history_model import HColumn, HistoryModel, csv_text
from gui.tasks import TaskKeeper

PAGE_SIZE = 100
EXPORT_CHUNK = 1000


class HistoryView(QWidget):
    """Owns the history model, the pager and the export."""

    message = Signal(str, bool)

    def __init__(self, bridge: Bridge, parent: QWidget | None = None,
                 page_size: int = PAGE_SIZE) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._tasks = TaskKeeper()
        self.destroyed.connect(self._tasks.cancel_pending)
        self.page_size = page_size
        self.page = 0
        self.total = 0
        self.newer = 0
        self.selected_goal = ""
        self.scope_goal: str | None = None
        self.loads = 0
        self.model = HistoryModel(bridge.zone, parent=self)
        self._build()
        self._reload_timer = QTimer(self)
        self._reload_timer.setSingleShot(True)
        self._reload_timer.setInterval(150)
        self._reload_timer.timeout.connect(self._on_reload_timer_timeout)
        self._shut_down = False
        bridge.history_recorded.connect(self._on_bridge_history_recorded)

    def _build(self) -> None:
        self.scope_combo = QComboBox(self)
        self.all_chosen = False  # the user picked "All goals": selections no longer narrow it
        self.scope_combo.setAccessibleName(tr("Whose history"))
        self.scope_combo.addItem(tr("All goals"), "")
        self.scope_combo.addItem(tr("Selected goal ({title})").format(title=tr("none")),
                                 "selected")
        self.scope_combo.currentIndexChanged.connect(self._on_scope_changed)
        self.first_button = self._pager_button("«", tr("First page (newest)"),
                                               lambda: self.go_to(0))
        self.prev_button = self._pager_button(tr("‹ Newer"), tr("Newer page"),
                                              lambda: self.go_to(self.page - 1))
        self.next_button = self._pager_button(tr("Older ›"), tr("Older page"),
                                              lambda: self.go_to(self.page + 1))
        self.last_button = self._pager_button("»", tr("Last page (oldest)"),
                                              lambda: self.go_to(self.pages - 1))
        self.page_label = QLabel(self)
        self.export_button = QPushButton(tr("E&xport CSV…"), self)
        self.export_button.clicked.connect(self._choose_export_file)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setAccessibleName(tr("Resume history"))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(HColumn.REASON, QHeaderView.ResizeMode.Stretch)
        for column, width in ((HColumn.TIME, 150), (HColumn.GOAL, 130), (HColumn.EVENT, 150),
                              (HColumn.TRIGGER, 130), (HColumn.OUTCOME, 140),
                              (HColumn.QUOTA, 190)):
            self.table.setColumnWidth(column, width)
        label = QLabel(tr("&Show:"), self)
        label.setBuddy(self.scope_combo)
        bar = QHBoxLayout()
        bar.addWidget(label)
        bar.addWidget(self.scope_combo)
        bar.addStretch(1)
        for widget in (self.first_button, self.prev_button, self.page_label, self.next_button,
                       self.last_button, self.export_button):
            bar.addWidget(widget)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.table, 1)
        self._update_pager()

    def _pager_button(self, text: str, name: str, slot: object) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(name)
        button.setAccessibleName(name)
        button.clicked.connect(slot)
        return button

    # -- scope ---------------------------------------------------------------------------------

    def set_selected_goal(self, goal_id: str) -> None:
        """Follow the goals table's selection: with a goal selected the history is that goal's
        (the scope says so), unless the user asked for all goals."""
        self.selected_goal = goal_id
        goal = self._bridge.goal(goal_id) if goal_id else None
        self.scope_combo.setItemText(1, tr("Selected goal ({title})").format(
            title=goal.title if goal else tr("none")))
        if goal_id and not self.all_chosen and self.scope_combo.currentIndex() != 1:
            self.scope_combo.blockSignals(True)
            self.scope_combo.setCurrentIndex(1)
            self.scope_combo.blockSignals(False)
        if self.scope_combo.currentData() == "selected":
            self._set_scope(goal_id or None)

    def show_goal(self, goal_id: str) -> None:
        """Switch to the history of one goal (from its details)."""
        self.set_selected_goal(goal_id)
        self.scope_combo.setCurrentIndex(1)
        self._set_scope(goal_id)

    def _on_scope_changed(self, index: int) -> None:
        selected = self.scope_combo.itemData(index) == "selected"
        self.all_chosen = not selected  # the user's choice holds for later selections
        self._set_scope((self.selected_goal or None) if selected else None)

    def _set_scope(self, goal_id: str | None) -> None:
        if goal_id == self.scope_goal and self.loads:
            return
        self.scope_goal = goal_id
        self.go_to(0)

    # -- paging --------------------------------------------------------------------------------

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.page_size))

    def go_to(self, page: int) -> asyncio.Task[None]:
        return self._tasks.spawn(self.load_page(page), "history")

    def _on_reload_timer_timeout(self) -> None:
        # Qt delivers timers whenever it processes events — also while the asyncio loop is not
        # running (between a test and its teardown, or after the app's loop ended); a task
        # spawned then would be stepped with no running loop
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self.reload()

    def reload(self) -> asyncio.Task[None]:
        return self.go_to(self.page)

    async def load_page(self, page: int) -> None:
        scope = self.scope_goal
        page = max(0, page)
        rows, total = await self._bridge.history_page(scope, self.page_size,
                                                      page * self.page_size)
        if page and not rows and total:  # past the end (history shrank or page too far)
            page = (total - 1) // self.page_size
            rows, total = await self._bridge.history_page(scope, self.page_size,
                                                          page * self.page_size)
        if scope != self.scope_goal:
            return
        self.page, self.total, self.newer = page, total, 0
        self.model.set_rows(rows)
        self.loads += 1
        self._update_pager()

    def _update_pager(self) -> None:
        first = self.page * self.page_size + 1 if self.total else 0
        last = min(self.total, (self.page + 1) * self.page_size)
        text = tr("Page {page} of {pages} · rows {first}–{last} of {total}").format(
            page=self.page + 1, pages=self.pages, first=f"{first:,}", last=f"{last:,}",
            total=f"{self.total:,}")
        if self.newer:
            text += tr(" · {n} newer").format(n=f"{self.newer:,}")
        self.page_label.setText(text)
        self.first_button.setEnabled(self.page > 0)
        self.prev_button.setEnabled(self.page > 0)
        self.next_button.setEnabled(self.page < self.pages - 1)
        self.last_button.setEnabled(self.page < self.pages - 1)

    def _on_bridge_history_recorded(self, row: HistoryRow) -> None:
        if self._shut_down:
            return  # the host still records its own stopping: no reload may start after that
        if self.scope_goal is not None and row.goal != self.scope_goal:
            return
        if self.page == 0:
            self._reload_timer.start()
        else:
            self.newer += 1
            self._update_pager()

    # -- export --------------------------------------------------------------------------------

    def _choose_export_file(self) -> None:
        name = f"goalkeeper-history-{self.scope_goal or 'all'}.csv".replace(":", "_")
        dialog = QFileDialog(self, tr("Export history as CSV"), str(Path.home() / name),
                             tr("CSV files (*.csv)"))
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDefaultSuffix("csv")
        dialog.fileSelected.connect(lambda path: self.export_csv(Path(path)))
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()  # never exec() on the qasync loop
        self.export_dialog = dialog

    def export_csv(self, path: Path) -> asyncio.Task[int]:
        return self._tasks.spawn(self._export(path, self.scope_goal), "export")

    async def _export(self, path: Path, scope: str | None) -> int:
        rows: list[HistoryRow] = []
        while True:
            chunk, _total = await self._bridge.history_page(scope, EXPORT_CHUNK, len(rows))
            rows.extend(chunk)
            if len(chunk) < EXPORT_CHUNK:
                break
        # rows recorded meanwhile shift the offsets: drop the repeats
        rows = list({row.id: row for row in rows}.values())
        try:
            await asyncio.to_thread(atomic_write_text, path, csv_text(rows), 0o644)
        except (OSError, ValueError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            self.message.emit(tr("Could not export the history to {path}: {why}").format(
                path=path, why=why), False)
            return 0
        self.message.emit(tr("Exported {n} history rows to {path}").format(
            n=f"{len(rows):,}", path=path), True)
        return len(rows)

    async def shutdown(self) -> None:
        self._shut_down = True
        self._reload_timer.stop()
        await self._tasks.close()
