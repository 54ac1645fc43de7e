"""The hosts of the store, as ``goalkeeper hosts`` lists them: state, offline since, last
heartbeat, goals, accounts, this machine. Non-modal and kept current while it is open."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QFont, QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.hosts.listing import HostLine
from core.i18n import localized
from core.i18n.textfmt import age, long_time, short_time
from core.i18n.words import word
from gui.bridge import Bridge, StoreError
from gui.i18n import QT_TR_NOOP, tr
from gui.tasks import TaskKeeper

COLUMNS = (QT_TR_NOOP("Host"), QT_TR_NOOP("Kind"), QT_TR_NOOP("State"),
           QT_TR_NOOP("Last heartbeat"), QT_TR_NOOP("Goals"), QT_TR_NOOP("Accounts"))
#: a host that died only stops beating: its lease runs out with no event, so the list is
#: judged again this often while it is shown (and the heartbeat's age moves on)
RELOAD_MS = 5000


class HostsDialog(QDialog):
    """Every host registered in the store (a one-machine store: this machine's own).

    Reloaded when a host comes online or stops (``Bridge.host_changed``), when this host's
    state changes, and every :data:`RELOAD_MS` while shown. Owns its load tasks.

    Signals: ``loaded(list[HostLine])`` — the table shows these lines now.
    """

    loaded = Signal(list)

    def __init__(self, bridge: Bridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._tasks = TaskKeeper()
        self.lines: list[HostLine] = []
        self.setWindowTitle(tr("Hosts"))
        self.setAccessibleName(tr("Hosts"))
        self.resize(900, 320)
        self.heading = QLabel(self)
        self.heading.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels([tr(c) for c in COLUMNS])
        self.table.setAccessibleName(tr("Hosts"))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self._timer = QTimer(self)
        self._timer.setInterval(RELOAD_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        bridge.host_changed.connect(self._on_bridge_host_changed)
        bridge.host_state_changed.connect(self._on_bridge_host_state_changed)
        self.destroyed.connect(self._tasks.cancel_pending)
        self.reload()

    # -- loading -------------------------------------------------------------------------------

    def reload(self) -> asyncio.Task[None]:
        return self._tasks.spawn(self._load(), "hosts")

    async def _load(self) -> None:
        try:
            lines = await self._bridge.hosts()
        except StoreError as exc:  # the shared store is down (or not open yet): say so, and
            # keep the lines last read, which the next reload replaces
            self.heading.setText(tr("The hosts cannot be read now: {error}").format(
                error=localized(str(exc))))
            self.loaded.emit(self.lines)
            return
        self.show_lines(lines)

    def show_lines(self, lines: list[HostLine]) -> None:
        self.lines = lines
        store = localized(self._bridge.store_text)
        self.heading.setText(tr("Hosts in {store}:").format(store=store) if lines else
                             tr("No host has registered in {store} yet.").format(store=store))
        self.table.setRowCount(len(lines))
        for row, line in enumerate(lines):
            for column, text in enumerate(self._cells(line)):
                item = QTableWidgetItem(text)
                if column == 2:
                    item.setToolTip(self._state_tip(line))
                if line.this_machine:
                    font = QFont(item.font())
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(row, column, item)
        self.loaded.emit(lines)

    def _cells(self, line: HostLine) -> list[str]:
        host = line.record
        name = (tr("{host} (this machine)").format(host=host.host_id) if line.this_machine
                else host.host_id)
        if line.online:
            state = tr("online")
        else:
            assert line.offline_since is not None
            state = tr("offline since {time}").format(
                time=short_time(line.offline_since, self._bridge.now()))
        accounts = ", ".join(f"{p}={a}" for p, a in sorted(host.accounts.items()))
        return [name, word(host.kind), state,
                tr("{age} ago").format(age=age(line.silent_seconds)), str(line.goals),
                accounts or "—"]

    def _state_tip(self, line: HostLine) -> str:
        host = line.record
        return tr("{machine}, pid {pid}, running since {since}; Goalkeeper {version}").format(
            machine=host.machine, pid=host.pid, since=long_time(host.since),
            version=host.version or "?")

    # -- keeping current -----------------------------------------------------------------------

    def _on_bridge_host_changed(self, _host_id: str) -> None:
        self.reload()

    def _on_bridge_host_state_changed(self, _state: str) -> None:
        self.reload()

    def _on_timer_timeout(self) -> None:
        try:  # Qt may deliver a timer while no asyncio loop runs (see HistoryView)
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self.reload()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._timer.start()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._timer.stop()

    async def shutdown(self) -> None:
        self._timer.stop()
        await self._tasks.close()

