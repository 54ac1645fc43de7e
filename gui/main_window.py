"""The main window: composes the panels and wires them to the bridge; owns no logic of its own.

What each part does lives in its module — goals table (:mod:`gui.widgets.goals_view`), actions
(:mod:`gui.actions`), result banner, details dialog. The window lays them out, connects signals,
keeps the display tick informed of its visibility, and hands "the user closed me" to the app,
which decides between hiding to the tray and quitting.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QHideEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QMainWindow,
    QSplitter,
    QStackedWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from core.models import Goal
from gui.actions import GoalActions
from gui.bridge import Bridge
from gui.dialogs.goal_details import GoalDetailsDialog
from gui.launcher import Launcher
from gui.models.goals_model import GoalsModel
from gui.theme import app_icon
from gui.tick import DisplayTick
from gui.widgets.banner import ResultBanner
from gui.widgets.goals_view import GoalsView


class MainWindow(QMainWindow):
    """Signals: ``close_requested()`` (window closed by the user), ``quit_requested()``."""

    close_requested = Signal()
    quit_requested = Signal()

    def __init__(self, bridge: Bridge, launcher: Launcher, tick: DisplayTick,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.tick = tick
        self.setWindowTitle("Goalkeeper")
        self.setWindowIcon(app_icon())
        self.setAccessibleName("Goalkeeper")
        self.resize(1180, 760)
        self.details: dict[str, GoalDetailsDialog] = {}
        self.goals_model = GoalsModel(bridge.now, lambda: bridge.max_attempts, parent=self)
        self.goals_view = GoalsView(self.goals_model, self)
        self.goal_actions = GoalActions(bridge, launcher, self)
        self.banner = ResultBanner(self)
        self.stack = QStackedWidget(self)
        self.main_page = self._build_main_page()
        self.stack.addWidget(self.main_page)
        self.setCentralWidget(self.stack)
        self._build_toolbar()
        self._build_menus()
        self._connect()
        tick.add_need(self.goals_model.needs_tick)

    # -- construction --------------------------------------------------------------------------

    def _build_main_page(self) -> QWidget:
        page = QWidget(self)
        self.splitter = QSplitter(Qt.Orientation.Vertical, page)
        self.splitter.addWidget(self.goals_view)
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(6, 6, 6, 0)
        layout.addWidget(self.banner)
        layout.addWidget(self.splitter, 1)
        return page

    def _build_toolbar(self) -> None:
        bar = QToolBar("Goal actions", self)
        bar.setObjectName("goalActions")
        bar.setAccessibleName("Goal actions")
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
        app_menu = self.menuBar().addMenu("&Goalkeeper")
        self.refresh_action = self._action("&Refresh providers", "F5", self.bridge.refresh)
        app_menu.addAction(self.refresh_action)
        app_menu.addSeparator()
        app_menu.addAction(self._action("&Close window", QKeySequence.StandardKey.Close,
                                        self.close))
        app_menu.addAction(self._action("&Quit", QKeySequence.StandardKey.Quit,
                                        self.quit_requested.emit))
        self.app_menu = app_menu
        goal_menu = self.menuBar().addMenu("G&oal")
        for action in self.goal_actions.all:
            goal_menu.addAction(action)
        view_menu = self.menuBar().addMenu("&View")
        view_menu.addAction(self._action("&Find goals", QKeySequence.StandardKey.Find,
                                         self.goals_view.focus_filter))
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
        b.goal_changed.connect(self._on_bridge_goal_changed)
        b.goal_removed.connect(self.goals_model.remove)
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

    def _on_bridge_goal_changed(self, goal: Goal) -> None:
        self.goals_model.upsert(goal)

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
            dialog = GoalDetailsDialog(self.bridge, goal_id, self)
            dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            dialog.destroyed.connect(lambda *_: self.details.pop(goal_id, None))
            self.details[goal_id] = dialog
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        return dialog

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
