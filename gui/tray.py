"""The tray icon: the aggregate state at a glance, and a menu rebuilt each time it opens.

The icon shows the most urgent state of all goals — needs attention, waiting for quota, running,
idle — with a tooltip that counts them. The menu is built on ``aboutToShow`` from the goals as
they are at that moment: show the window, the goals waiting for quota with their countdowns
(choosing one shows it in the window), pause all, quit.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import datetime

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from core.commands import ActionResult, Pause
from core.i18n import localized
from core.i18n.textfmt import countdown, short_time
from core.i18n.words import word
from core.models import Goal, Outcome
from gui import format as fmt
from gui import goal_rules as rules
from gui.bridge import Bridge
from gui.goal_rules import Aggregate, Summary
from gui.i18n import QT_TR_NOOP, tr
from gui.tasks import TaskKeeper
from gui.theme import aggregate_icon

STATE_WORDS = {
    Aggregate.IDLE: QT_TR_NOOP("nothing running"),
    Aggregate.RUNNING: QT_TR_NOOP("running"),
    Aggregate.WAITING: QT_TR_NOOP("waiting for quota"),
    Aggregate.ATTENTION: QT_TR_NOOP("needs attention"),
}


def tooltip_text(summary: Summary, now_text: str = "") -> str:
    """``Goalkeeper — 2 running · 1 waiting for quota (next resume 18:40) · 1 needs attention``."""
    parts = []
    if summary.running:
        parts.append(tr("{n} running").format(n=summary.running))
    if summary.waiting:
        waiting = tr("{n} waiting for quota").format(n=summary.waiting)
        if now_text:
            waiting = tr("{n} waiting for quota (next resume {when})").format(
                n=summary.waiting, when=now_text)
        parts.append(waiting)
    if summary.attention:
        parts.append((tr("{n} needs attention") if summary.attention == 1
                      else tr("{n} need attention")).format(n=summary.attention))
    if not parts:
        parts.append(tr("nothing running ({n} goals)").format(n=summary.total) if summary.total
                     else tr("no goals yet"))
    return tr("Goalkeeper — {summary}").format(summary=" · ".join(parts))


def pause_all_text(results: list[ActionResult]) -> str:
    """``Pause all: 3 paused, 1 refused`` — counted from the engine's answers."""
    if not results:
        return tr("Pause all: nothing to pause")
    counts = Counter(r.outcome for r in results)
    order = [Outcome.PAUSED, Outcome.ALREADY_PAUSED, Outcome.REFUSED, Outcome.FAILED,
             Outcome.UNKNOWN_GOAL]
    parts = [tr("{n} {outcome}").format(n=counts[o], outcome=word(o)) for o in order if counts[o]]
    return tr("Pause all: {counts}").format(counts=tr(", ", "list separator").join(parts))


class Tray(QObject):
    """Owns the QSystemTrayIcon and its menu.

    Signals: ``show_window_requested()``, ``goal_requested(str)`` (show this goal),
    ``quit_requested()``, ``message(str, bool)`` (the pause-all result).
    """

    show_window_requested = Signal()
    goal_requested = Signal(str)
    quit_requested = Signal()
    message = Signal(str, bool)

    def __init__(self, bridge: Bridge, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._tasks = TaskKeeper()
        self.state: Aggregate | None = None
        self.icon = QSystemTrayIcon(self)
        self.menu = QMenu()
        self.menu.setAccessibleName(tr("Goalkeeper tray menu"))
        self.menu.aboutToShow.connect(self.rebuild_menu)
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._on_icon_activated)
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(0)
        self._refresh_timer.timeout.connect(self.refresh)
        for signal in (bridge.goals_changed, bridge.goal_removed, bridge.goals_reset):
            signal.connect(self._schedule_refresh)
        self.refresh()

    @staticmethod
    def available() -> bool:
        return QSystemTrayIcon.isSystemTrayAvailable()

    def show(self) -> None:
        self.icon.show()

    def hide(self) -> None:
        self.icon.hide()

    def close(self) -> None:
        self.icon.hide()
        self.menu.deleteLater()
        self._tasks.cancel_pending()

    # -- icon and tooltip ----------------------------------------------------------------------

    def _schedule_refresh(self, *_: object) -> None:
        if not self._refresh_timer.isActive():
            self._refresh_timer.start()

    def refresh(self) -> None:
        summary = rules.summarise(self._bridge.goals())
        if summary.state is not self.state:
            self.state = summary.state
            self.icon.setIcon(aggregate_icon(summary.state))
        when = (short_time(summary.next_resume_at, self._bridge.now())
                if summary.next_resume_at else "")
        self.icon.setToolTip(tooltip_text(summary, when))

    def _on_icon_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger,
                      QSystemTrayIcon.ActivationReason.DoubleClick):
            self.show_window_requested.emit()

    # -- the menu ------------------------------------------------------------------------------

    def rebuild_menu(self) -> None:
        menu = self.menu
        menu.clear()
        menu.addAction(tr("&Show Goalkeeper"), self.show_window_requested.emit)
        menu.addSeparator()
        now = self._bridge.now()
        waiting = sorted((g for g in self._bridge.goals() if rules.waiting_for_quota(g)),
                         key=lambda g: (g.next_resume_at is None, g.next_resume_at or now))
        header = menu.addAction(tr("Waiting for quota ({n})").format(n=len(waiting)) if waiting
                                else tr("Nothing is waiting for quota"))
        header.setEnabled(False)
        for goal in waiting:
            action = menu.addAction(self._waiting_text(goal, now))
            action.triggered.connect(lambda _c=False, gid=goal.id: self.goal_requested.emit(gid))
        menu.addSeparator()
        pausable = [g for g in self._bridge.goals() if rules.can_pause(g)]
        pause_all = menu.addAction(tr("&Pause all ({n})").format(n=len(pausable)),
                                   self.pause_all)
        pause_all.setEnabled(bool(pausable))
        menu.addSeparator()
        menu.addAction(tr("&Quit Goalkeeper"), self.quit_requested.emit)

    @staticmethod
    def _waiting_text(goal: Goal, now: datetime) -> str:
        if goal.next_resume_at is not None and goal.deferred_by and goal.next_resume_at > now:
            # "resumes at 19:00 (allowed hours)": a resume policy moved it
            return tr("{title} — resumes {when}").format(title=goal.title,
                                                         when=fmt.next_resume_text(goal, now))
        if goal.next_resume_at is not None:
            return tr("{title} — resumes {countdown}").format(
                title=goal.title, countdown=countdown(goal.next_resume_at, now))
        note = localized(goal.auto_resume_note) if goal.auto_resume_note else tr(
            "no automatic resume")
        return tr("{title} — {note}").format(title=goal.title, note=note)

    def menu_texts(self) -> list[str]:
        """The menu's entries as shown (separators as ``---``), for tests and accessibility."""
        return ["---" if a.isSeparator() else a.text() for a in self.menu.actions()]

    def action_named(self, prefix: str) -> QAction | None:
        return next((a for a in self.menu.actions() if a.text().startswith(prefix)), None)

    # -- pause all -----------------------------------------------------------------------------

    def pause_all(self) -> asyncio.Task[list[ActionResult]]:
        return self._tasks.spawn(self._pause_all(), "pause-all")

    async def _pause_all(self) -> list[ActionResult]:
        goals = [g for g in self._bridge.goals() if rules.can_pause(g)]
        results = [await self._bridge.perform_rendered(Pause(g.id), origin="tray")
                   for g in goals]
        ok = all(r.carried_out for r in results)
        self.message.emit(pause_all_text(results), ok)
        return results
