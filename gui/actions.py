"""The goal actions — one QAction each, shared by the toolbar, the context menu and shortcuts.

An action is enabled only where it is legal for the current goal's state (:mod:`gui.goal_rules`),
but that is a hint: the goal may change between click and call, so every action goes through the
bridge to the engine and the window shows the engine's typed answer, never its own guess.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import QMenu, QMessageBox, QStyle, QWidget

from core.commands import (
    ActionResult,
    Cancel,
    Command,
    Pause,
    Resume,
    SetAutoResume,
    Start,
)
from core.models import Goal
from gui import goal_rules as rules
from gui.bridge import Bridge
from gui.format import result_is_success, result_text
from gui.i18n import tr
from gui.launcher import Launcher, goal_folder


class GoalActionSet(QObject):
    """Owns the goal QActions and the cancel confirmation.

    Signals:
        message(str, bool): a rendered action result or launcher error, and whether it succeeded.
        details_requested(str): the user asked for a goal's details.
    """

    message = Signal(str, bool)
    details_requested = Signal(str)

    def __init__(self, bridge: Bridge, launcher: Launcher, window: QWidget) -> None:
        super().__init__(window)
        self._bridge = bridge
        self._launcher = launcher
        self._window = window
        self._goal_id = ""
        self.confirm_box: QMessageBox | None = None
        style = window.style()
        sp = QStyle.StandardPixmap
        self.start = self._make(tr("&Start"), "media-playback-start",
                                style.standardIcon(sp.SP_MediaPlay), "Ctrl+Shift+S",
                                tr("Start this idle goal"), self._on_start)
        self.resume = self._make(tr("&Resume"), "media-playback-start",
                                 style.standardIcon(sp.SP_MediaSeekForward), "Ctrl+R",
                                 tr("Resume this paused goal now"), self._on_resume)
        self.pause = self._make(tr("&Pause"), "media-playback-pause",
                                style.standardIcon(sp.SP_MediaPause), "Ctrl+P",
                                tr("Pause this goal; it is never resumed automatically"),
                                self._on_pause)
        self.cancel = self._make(tr("&Cancel goal…"), "process-stop",
                                 style.standardIcon(sp.SP_DialogCancelButton), "Ctrl+Shift+C",
                                 tr("Stop this goal for good (asks first)"), self._on_cancel)
        self.auto_resume = self._make(tr("&Auto-resume"), "view-refresh",
                                      style.standardIcon(sp.SP_BrowserReload), "Ctrl+Shift+A",
                                      tr("Resume automatically once the quota has refreshed"),
                                      self._on_auto_resume)
        self.auto_resume.setCheckable(True)
        self.open_terminal = self._make(tr("Open in &terminal"), "utilities-terminal",
                                        style.standardIcon(sp.SP_ComputerIcon), "Ctrl+Shift+T",
                                        tr("Open this goal in a terminal"),
                                        self._on_open_terminal)
        self.open_folder = self._make(tr("Open &folder"), "folder-open",
                                      style.standardIcon(sp.SP_DirOpenIcon), "Ctrl+Shift+O",
                                      tr("Open the goal's working directory"),
                                      self._on_open_folder)
        self.details = self._make(tr("&Details…"), "document-properties",
                                  style.standardIcon(sp.SP_FileDialogInfoView), "Ctrl+I",
                                  tr("Everything about this goal"), self._on_details)
        bridge.goals_changed.connect(self._on_bridge_goals_changed)
        bridge.goal_removed.connect(self._on_bridge_goal_removed)
        bridge.action_finished.connect(self._on_bridge_action_finished)
        self.set_current("")

    def _make(self, text: str, theme: str, fallback: QIcon, shortcut: str, tip: str,
              slot: object) -> QAction:
        action = QAction(QIcon.fromTheme(theme, fallback), text, self._window)
        action.setShortcut(QKeySequence(shortcut))
        action.setToolTip(tr("{tip} ({shortcut})").format(tip=tip, shortcut=shortcut))
        action.setStatusTip(tip)
        action.triggered.connect(slot)
        self._window.addAction(action)  # shortcuts work wherever focus is in the window
        return action

    @property
    def all(self) -> list[QAction]:
        return [self.start, self.resume, self.pause, self.cancel, self.auto_resume,
                self.open_terminal, self.open_folder, self.details]

    # -- state ---------------------------------------------------------------------------------

    def current(self) -> Goal | None:
        return self._bridge.goal(self._goal_id) if self._goal_id else None

    def set_current(self, goal_id: str) -> None:
        self._goal_id = goal_id
        self._refresh()

    def _refresh(self) -> None:
        goal = self.current()
        legal = {
            self.start: goal is not None and rules.can_start(goal),
            self.resume: goal is not None and rules.can_resume(goal),
            self.pause: goal is not None and rules.can_pause(goal),
            self.cancel: goal is not None and rules.can_cancel(goal),
            self.auto_resume: goal is not None and rules.can_toggle_auto_resume(goal),
            self.open_terminal: goal is not None and self._bridge.open_command(goal) is not None,
            self.open_folder: goal is not None and goal_folder(goal) is not None,
            self.details: goal is not None,
        }
        for action, enabled in legal.items():
            action.setEnabled(enabled)
        self.auto_resume.blockSignals(True)
        self.auto_resume.setChecked(bool(goal and goal.auto_resume))
        self.auto_resume.blockSignals(False)

    def _on_bridge_goals_changed(self, goals: list[Goal]) -> None:
        if self._goal_id and any(goal.id == self._goal_id for goal in goals):
            self._refresh()

    def _on_bridge_goal_removed(self, goal_id: str) -> None:
        if goal_id == self._goal_id:
            self.set_current("")

    def build_menu(self, parent: QWidget) -> QMenu:
        menu = QMenu(parent)
        menu.setAccessibleName(tr("Goal actions"))
        for action in (self.start, self.resume, self.pause, self.cancel):
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction(self.auto_resume)
        menu.addSeparator()
        for action in (self.open_terminal, self.open_folder, self.details):
            menu.addAction(action)
        return menu

    # -- handlers ------------------------------------------------------------------------------

    def _request(self, make: Callable[[str], Command]) -> None:
        if self._goal_id:
            self._bridge.request(make(self._goal_id))

    def _on_start(self) -> None:
        self._request(Start)

    def _on_resume(self) -> None:
        self._request(Resume)

    def _on_pause(self) -> None:
        self._request(Pause)

    def _on_auto_resume(self, checked: bool) -> None:
        self._request(lambda goal_id: SetAutoResume(goal_id, checked))
        self._refresh()  # show the goal's state until the engine answers

    def request_auto_resume(self, goal_id: str, enabled: bool) -> None:
        """From the table's checkbox."""
        self._bridge.request(SetAutoResume(goal_id, enabled))

    def _on_cancel(self) -> None:
        goal = self.current()
        if goal is None:
            return
        box = QMessageBox(QMessageBox.Icon.Question, tr("Cancel goal?"),
                          tr("Cancel “{title}” for good?").format(title=goal.title),
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                          self._window)
        box.setInformativeText(tr("Goalkeeper stops it and never resumes it. The agent's own "
                                  "work and files are left as they are."))
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.button(QMessageBox.StandardButton.Yes).setText(tr("Cancel goal"))
        box.button(QMessageBox.StandardButton.No).setText(tr("Keep it"))
        box.finished.connect(lambda _r, g=goal.id, b=box: self._on_cancel_answered(b, g))
        self.confirm_box = box
        box.open()  # never exec(): a nested loop inside qasync stalls every coroutine

    def _on_cancel_answered(self, box: QMessageBox, goal_id: str) -> None:
        confirmed = box.clickedButton() is box.button(QMessageBox.StandardButton.Yes)
        self.confirm_box = None
        box.deleteLater()
        if confirmed:
            self._bridge.request(Cancel(goal_id))

    def _on_open_terminal(self) -> None:
        goal = self.current()
        argv = self._bridge.open_command(goal) if goal else None
        if goal is None or argv is None:
            return
        error = self._launcher.open_terminal(argv, goal_folder(goal))
        if error:
            self.message.emit(tr("{title}: {message}").format(title=goal.title, message=error),
                              False)

    def _on_open_folder(self) -> None:
        goal = self.current()
        folder = goal_folder(goal) if goal else None
        if goal is None or folder is None:
            return
        error = self._launcher.open_folder(folder)
        if error:
            self.message.emit(tr("{title}: {message}").format(title=goal.title, message=error),
                              False)

    def _on_details(self) -> None:
        if self._goal_id:
            self.details_requested.emit(self._goal_id)

    def _on_bridge_action_finished(self, command: Command, result: ActionResult) -> None:
        goal = self._bridge.goal(result.goal)
        title = goal.title if goal else result.goal
        text = result_text(command, result, now=self._bridge.now())
        self.message.emit(tr("{title}: {message}").format(title=title, message=text),
                          result_is_success(result))
