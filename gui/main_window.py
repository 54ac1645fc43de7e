"""The main window: composes the panels and wires them to the bridge; owns no logic of its own.

What each part does lives in its module — quota panel, usage chart, goals table, history,
status bar (:mod:`gui.widgets`), actions (:mod:`gui.actions`), dialogs. The window lays them out,
connects signals, switches between the first-run page and the main page, keeps the display tick
informed of its visibility, and hands "the user closed me" to the app, which decides between
hiding to the tray and quitting.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QEvent, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QHideEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QMainWindow,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from core.commands import ActionResult
from core.models import Goal
from gui.actions import GoalActionSet
from gui.bridge import Bridge
from gui.dialogs.goal_details import GoalDetailsDialog
from gui.dialogs.hosts import HostsDialog
from gui.dialogs.queue_dialog import QueueDialog
from gui.i18n import tr
from gui.launcher import Launcher
from gui.models.goals_model import GoalsModel
from gui.tick import DisplayTick
from gui.widgets.banner import ResultBanner
from gui.widgets.chart_panel import ChartPanel
from gui.widgets.first_run import FirstRunPage
from gui.widgets.goals_view import GoalsView
from gui.widgets.history_view import HistoryView
from gui.widgets.notify_status import ChannelIndicator
from gui.widgets.quota_panel import QuotaPanel
from gui.widgets.status_bar import HostStatus


class MainWindow(QMainWindow):
    """Signals: ``close_requested()`` (window closed by the user), ``quit_requested()``,
    ``settings_requested()``, ``setup_requested()`` (the set-up assistant)."""

    close_requested = Signal()
    quit_requested = Signal()
    settings_requested = Signal()
    setup_requested = Signal()

    def __init__(self, bridge: Bridge, launcher: Launcher, tick: DisplayTick,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.tick = tick
        self._launcher = launcher
        self.setWindowTitle("Goalkeeper")  # i18n: ignore (the name)
        self.setAccessibleName("Goalkeeper")  # i18n: ignore
        self.resize(1180, 760)
        self.details: dict[str, GoalDetailsDialog] = {}
        self.hosts_dialog: HostsDialog | None = None
        self.goals_model = GoalsModel(bridge.now, lambda: bridge.max_attempts, bridge.zone,
                                      parent=self)
        self.goals_model.local_host = bridge.host_id
        self.goals_view = GoalsView(self.goals_model, self)
        self.goal_actions = GoalActionSet(bridge, launcher, self)
        self.banner = ResultBanner(self)
        self.quota_panel = QuotaPanel(bridge, self)
        self.chart_panel = ChartPanel(bridge, self)
        self.history_view = HistoryView(bridge, self)
        self.first_run = FirstRunPage(bridge, self)
        self.stack = QStackedWidget(self)
        self.main_page = self._build_main_page()
        self.stack.addWidget(self.main_page)
        self.stack.addWidget(self.first_run)
        self.setCentralWidget(self.stack)
        self.status = HostStatus(bridge, self.statusBar())
        self.channels = ChannelIndicator(bridge, self.statusBar())
        self._build_toolbar()
        self._build_menus()
        self._connect()
        for need in (self.goals_model.needs_tick, self.quota_panel.needs_tick,
                     self.status.needs_tick):
            tick.add_need(need)

    # -- construction --------------------------------------------------------------------------

    def _build_main_page(self) -> QWidget:
        page = QWidget(self)
        self.tabs = QTabWidget(page)
        self.tabs.setAccessibleName(tr("Usage and history"))
        self.tabs.addTab(self.chart_panel, tr("&Usage chart"))
        self.tabs.addTab(self.history_view, tr("&History"))
        self.splitter = QSplitter(Qt.Orientation.Vertical, page)
        self.splitter.addWidget(self.goals_view)
        self.splitter.addWidget(self.tabs)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(6, 6, 6, 0)
        layout.addWidget(self.quota_panel)
        layout.addWidget(self.banner)
        layout.addWidget(self.splitter, 1)
        return page

    def _build_toolbar(self) -> None:
        bar = QToolBar(tr("Goal actions"), self)
        bar.setObjectName("goalActions")
        bar.setAccessibleName(tr("Goal actions"))
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        a = self.goal_actions
        for action in (a.start, a.resume, a.pause, a.cancel):
            bar.addAction(action)
        bar.addSeparator()
        bar.addAction(a.auto_resume)
        bar.addSeparator()
        for action in (a.open_terminal, a.open_folder, a.details):
            bar.addAction(action)
        self.addToolBar(bar)
        self.toolbar = bar

    def _build_menus(self) -> None:
        app_menu = self.menuBar().addMenu("&Goalkeeper")  # i18n: ignore (the name)
        self.settings_action = self._action(tr("&Settings…"),
                                            QKeySequence.StandardKey.Preferences,
                                            self.settings_requested.emit)
        if self.settings_action.shortcut().isEmpty():
            self.settings_action.setShortcut(QKeySequence("Ctrl+,"))
        app_menu.addAction(self.settings_action)
        self.setup_action = self._action(tr("Set &up…"), "", self.setup_requested.emit)
        self.setup_action.setToolTip(tr("What Goalkeeper found, and the choices that put it to "
                                        "work on your agents"))
        app_menu.addAction(self.setup_action)
        self.refresh_action = self._action(tr("&Refresh providers"), "F5", self.bridge.refresh)
        app_menu.addAction(self.refresh_action)
        app_menu.addSeparator()
        app_menu.addAction(self._action(tr("&Close window"), QKeySequence.StandardKey.Close,
                                        self.close))
        app_menu.addAction(self._action(tr("&Quit"), QKeySequence.StandardKey.Quit,
                                        self.quit_requested.emit))
        self.app_menu = app_menu
        goal_menu = self.menuBar().addMenu(tr("G&oal"))
        for action in self.goal_actions.all:
            goal_menu.addAction(action)
        goal_menu.addSeparator()
        self.queue_action = self._action(tr("Start at the &reset…"), "", self.open_queue)
        self.queue_action.setToolTip(tr("Queue new work to start right after a quota window's "
                                        "next reset"))
        goal_menu.addAction(self.queue_action)
        self.goal_menu = goal_menu
        view_menu = self.menuBar().addMenu(tr("&View"))
        view_menu.addAction(self._action(tr("&Find goals"), QKeySequence.StandardKey.Find,
                                         self.goals_view.focus_filter))
        view_menu.addAction(self._action(tr("&Goals"), "Ctrl+1", self._focus_goals))
        view_menu.addAction(self._action(tr("&Usage chart"), "Ctrl+2",
                                         lambda: self._show_tab(self.chart_panel)))
        view_menu.addAction(self._action(tr("&History"), "Ctrl+3",
                                         lambda: self._show_tab(self.history_view)))
        view_menu.addSeparator()
        self.hosts_action = self._action(tr("H&osts…"), "Ctrl+4", self.open_hosts)
        view_menu.addAction(self.hosts_action)
        self.view_menu = view_menu

    def _action(self, text: str, shortcut: str | QKeySequence.StandardKey, slot: object
                ) -> QAction:
        action = QAction(text, self)
        action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    def _connect(self) -> None:
        b = self.bridge
        b.goals_reset.connect(self._on_bridge_goals_reset)
        b.goals_changed.connect(self._on_bridge_goals_changed)
        b.goal_removed.connect(self.goals_model.remove)
        b.quota_observed.connect(self._update_page)
        b.host_state_changed.connect(self._update_page)
        self.quota_panel.window_selected.connect(self.chart_panel.show_window)
        self.quota_panel.windows_changed.connect(
            lambda: self.chart_panel.set_windows(self.quota_panel.window_labels()))
        self.chart_panel.window_changed.connect(self.quota_panel.select)
        self.goals_view.current_goal_changed.connect(self.history_view.set_selected_goal)
        self.history_view.message.connect(self.show_message)
        self.channels.started_failing.connect(lambda text: self.show_message(text, False))
        self.first_run.refresh_requested.connect(self.bridge.refresh)
        self.first_run.settings_requested.connect(self.settings_requested.emit)
        self.first_run.setup_requested.connect(self.setup_requested.emit)
        self.first_run.demo_requested.connect(self._start_demo)
        self.tick.ticked.connect(self.quota_panel.tick)
        self.tick.ticked.connect(self.status.tick)
        self.tick.ticked.connect(self.chart_panel.tick)
        self.quota_panel.windows_changed.connect(self.tick.reevaluate)
        b.scheduler_woke.connect(lambda _w: self.tick.reevaluate())
        self.goals_model.auto_resume_requested.connect(self.goal_actions.request_auto_resume)
        self.goals_model.applied.connect(self.tick.reevaluate)
        self.goals_view.current_goal_changed.connect(self.goal_actions.set_current)
        self.goals_view.goal_activated.connect(self.open_details)
        self.goals_view.context_menu_requested.connect(self._show_context_menu)
        self.goal_actions.details_requested.connect(self.open_details)
        self.goal_actions.message.connect(self.show_message)
        self.tick.ticked.connect(self.goals_model.tick)

    # -- slots ---------------------------------------------------------------------------------

    def _on_bridge_goals_reset(self, goals: list[Goal]) -> None:
        self.goals_model.reset(goals)
        self.history_view.reload()
        self._update_page()
        if goals and self.goals_view.current_goal() is None:
            self.goals_view.table.selectRow(0)

    def _on_bridge_goals_changed(self, goals: list[Goal]) -> None:
        self.goals_model.apply(goals)
        if self.stack.currentWidget() is self.first_run:
            self._update_page()

    def _update_page(self, *_: object) -> None:
        """The first-run page while the running host has found nothing, else the main page."""
        empty = (self.bridge.host_state == "running" and not self.bridge.goals()
                 and not self.bridge.readings())
        page = self.first_run if empty else self.main_page
        if page is self.first_run:
            self.first_run.refresh()
        if self.stack.currentWidget() is not page:
            self.stack.setCurrentWidget(page)

    def _start_demo(self) -> None:
        error = self._launcher.start_demo()
        if error:
            self.show_message(tr("Demo: {error}").format(error=error), False)
        else:
            self.show_message(tr("The demo opens in its own window, on a throw-away data "
                                 "directory."), True)

    def _show_tab(self, widget: QWidget) -> None:
        self.tabs.setCurrentWidget(widget)
        widget.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _focus_goals(self) -> None:
        self.goals_view.table.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def show_history(self, goal_id: str) -> None:
        self.history_view.show_goal(goal_id)
        self._show_tab(self.history_view)

    def _show_context_menu(self, pos: QPoint) -> None:
        if self.goals_view.current_goal() is None:
            return
        menu = self.goal_actions.build_menu(self)
        menu.aboutToHide.connect(menu.deleteLater)
        menu.popup(pos)

    def show_message(self, text: str, ok: bool) -> None:
        self.banner.show_message(text, ok)
        self.statusBar().showMessage(text, 10_000)

    def open_details(self, goal_id: str) -> GoalDetailsDialog:
        dialog = self.details.get(goal_id)
        if dialog is None:
            dialog = GoalDetailsDialog(self.bridge, goal_id, self, self.goals_model.zone)
            dialog.history_requested.connect(self.show_history)
            dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            dialog.destroyed.connect(lambda *_: self.details.pop(goal_id, None))
            self.details[goal_id] = dialog
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        return dialog

    def open_queue(self) -> QueueDialog:
        """Goal → Start at the reset…: a new form each time (non-modal)."""
        dialog = QueueDialog(self.bridge, self)
        dialog.queued.connect(self._on_queue_queued)
        dialog.finished.connect(dialog.deleteLater)
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        return dialog

    def _on_queue_queued(self, result: ActionResult) -> None:
        self.goals_view.select_goal(result.goal)  # the new goal, once the list has it

    def open_hosts(self) -> HostsDialog:
        """The hosts of the store (one dialog; shown again if it is open)."""
        if self.hosts_dialog is None:
            self.hosts_dialog = HostsDialog(self.bridge, self)
        else:
            self.hosts_dialog.reload()
        self.hosts_dialog.show()
        self.hosts_dialog.raise_()
        self.hosts_dialog.activateWindow()
        return self.hosts_dialog

    async def shutdown(self) -> None:
        """Stop the panels' loads before the host (and its store) goes away. A part Qt has
        deleted meanwhile (the window closing while an earlier part's loads ended) has none."""
        for part in (self.chart_panel, self.history_view, self.hosts_dialog):
            if part is not None and shiboken6.isValid(part):
                await part.shutdown()

    def bring_to_front(self) -> None:
        """Show and raise the window (a second launch asks for this over the control socket)."""
        if self.isMinimized():
            self.showNormal()
        self.show()
        self.raise_()
        self.activateWindow()

    # -- visibility and closing ----------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.tick.set_visible(not self.isMinimized())

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self.tick.set_visible(False)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.WindowStateChange:
            self.tick.set_visible(self.isVisible() and not self.isMinimized())

    def closeEvent(self, event: QCloseEvent) -> None:
        # the app decides: hide to the tray, or quit (it calls hide() or shuts down)
        event.ignore()
        self.close_requested.emit()
