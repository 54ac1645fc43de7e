"""One running desktop app: the host and everything the window needs, started and stopped together.

The app process *is* the host for its data directory (lease, engine, control socket), exactly like
``goalkeeper daemon``. The session shows the window first (so launching feels instant), sets up
notifications (tray, else the freedesktop service, else none) before the engine starts — start-up
recovery may already resume goals — then starts the host, announces the engine's state through the
bridge and, in the demo, starts the demo goals. Quitting stops the host cleanly: the lease is
released and goals this process was running are marked interrupted, so the next host resumes
them (start-up recovery).
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from PySide6.QtCore import QObject, Signal

from core.demo import DemoSession
from core.host import Host
from core.i18n import localized
from core.integration.autostart import apply_autostart
from core.settings import Settings, SettingsError
from core.setup.assistant import Applied
from gui.bridge import Bridge
from gui.dialogs.settings_dialog import SettingsDialog
from gui.dialogs.setup_dialog import SetupDialog
from gui.gc_guard import MainThreadGc
from gui.i18n import QT_TR_NOOP, tr
from gui.launch import SHOW_WINDOW_OP
from gui.launcher import Launcher
from gui.main_window import MainWindow
from gui.notifier import (
    Backend,
    FreedesktopBackend,
    Notifier,
    NullBackend,
    TrayBackend,
    notification_service_available,
)
from gui.settings_source import SettingsSource
from gui.state import GuiState
from gui.tasks import TaskKeeper
from gui.tick import DisplayTick
from gui.tray import Tray

log = logging.getLogger("gui")

TRAY_HINT = (QT_TR_NOOP("Goalkeeper is still running"),
             QT_TR_NOOP("It keeps watching your goals from the tray icon. Choose Quit in the "
                        "tray menu to stop it."))


class GuiSession(QObject):
    """Owns the host, the bridge, the display tick, the window, the tray and the notifier.

    Signals: ``finished()`` once the host has stopped after a quit request.
    """

    finished = Signal()

    def __init__(self, host: Host, demo: DemoSession | None = None,
                 launcher: Launcher | None = None, source: SettingsSource | None = None,
                 backend: Backend | None = None, use_tray: bool = True,
                 offer_setup: bool = False) -> None:
        super().__init__()
        self.host = host
        self.demo = demo
        self.source = source or SettingsSource(host.paths.config_file, os.environ)
        self.user_settings: Settings = host.engine.settings
        self.gc = MainThreadGc(self)
        self._tasks = TaskKeeper()
        self.bridge = Bridge(host.engine, parent=self)  # before the host starts: no event lost
        self.tick = DisplayTick(self.bridge.now, self)
        self.window = MainWindow(self.bridge, launcher or Launcher(), self.tick)
        self.state = GuiState(host.paths.config_dir)
        self.tray: Tray | None = None
        self.notifier: Notifier | None = None
        self.settings_dialog: SettingsDialog | None = None
        self.setup_dialog: SetupDialog | None = None
        self._backend = backend
        self._use_tray = use_tray
        #: open the set-up assistant at start when the config says it has not run (the app's
        #: bootstrap asks for it, never for the demo)
        self._offer_setup = offer_setup and demo is None
        self._quit = asyncio.Event()
        self.window.close_requested.connect(self._on_window_close_requested)
        self.window.quit_requested.connect(self.request_quit)
        self.window.settings_requested.connect(self.open_settings)
        self.window.setup_requested.connect(self.open_setup)
        host.control.register(SHOW_WINDOW_OP, self._on_show_window_op)
        if demo is not None:
            self.window.setWindowTitle(demo_title())

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Show the window, set up notifications, then take the lease and start the engine
        (raises what :meth:`Host.start` raises)."""
        self._restore_geometry()
        self.window.show()
        self.bridge.set_host_state("starting")
        await self._start_notifications()
        info = await self.host.start()
        self.bridge.host_text = tr("this app (pid {pid}) hosts {data_dir}").format(
            pid=info.pid, data_dir=info.data_dir)
        self.bridge.sync()
        self.bridge.set_host_state("running")
        if self.demo is not None:
            await self.demo.restart_goals(self.host)
        elif self._offer_setup and not self.user_settings.setup_done:
            self.open_setup()  # the first start: the assistant, over the first-run page

    async def _start_notifications(self) -> None:
        backend = self._backend
        if self._use_tray and Tray.available():
            self.tray = Tray(self.bridge, self)
            self.tray.show_window_requested.connect(self.window.bring_to_front)
            self.tray.goal_requested.connect(self._show_goal)
            self.tray.quit_requested.connect(self.request_quit)
            self.tray.message.connect(self.window.show_message)
            self.tray.show()
            backend = backend or TrayBackend(self.tray.icon)
        if backend is None:
            available = await asyncio.to_thread(notification_service_available)
            backend = FreedesktopBackend() if available else NullBackend()
        log.info("notifications: %s", backend.name)
        self.notifier = Notifier(self.bridge, backend, self)

    async def run(self) -> None:
        """Until the user quits (menu, tray, window close without a tray, SIGINT/SIGTERM). A
        host replaced by another one (it hung, see core.hosts.lease) says so and stays open, doing
        nothing more, until the user quits."""
        quit_waiter = asyncio.ensure_future(self._quit.wait())
        waiters: set[asyncio.Future[Any]] = {quit_waiter}
        if self.host.ended is not None:
            waiters.add(self.host.ended)
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        if self.host.ended is not None and self.host.ended.done() and not quit_waiter.done():
            self.bridge.set_host_state("replaced")
            self.window.show_message(tr("Host not running: {reason}").format(
                reason=localized(str(self.host.ended.result()))), False)
            await quit_waiter
        quit_waiter.cancel()

    def request_quit(self) -> None:
        self._quit.set()

    async def stop(self) -> None:
        self.bridge.set_host_state("stopping")
        self.tick.set_visible(False)
        self._save_geometry()
        await self.window.shutdown()
        await self._tasks.cancel_all()
        await self.bridge.cancel_actions()
        try:
            await self.host.stop()
        finally:
            self.bridge.set_host_state("stopped")
            await self.bridge.close()
            if self.tray is not None:
                self.tray.close()
            if self.notifier is not None:
                await asyncio.to_thread(self.notifier.close)
            self.window.hide()
            self.window.deleteLater()
            self.gc.stop()
            self.finished.emit()

    # -- window, tray, settings ----------------------------------------------------------------

    def _on_window_close_requested(self) -> None:
        if self.tray is None or not self.tray.icon.isVisible():
            self.request_quit()
            return
        self.window.hide()
        if not self.state.tray_hint_shown and self.notifier is not None:
            self.notifier.hint(*(tr(text) for text in TRAY_HINT))
            self.state.tray_hint_shown = True

    def _show_goal(self, goal_id: str) -> None:
        self.window.bring_to_front()
        self.window.bridge.flush()
        self.window.goals_view.select_goal(goal_id)

    def open_settings(self) -> SettingsDialog:
        if self.settings_dialog is None:
            dialog = SettingsDialog(self.source, self.window,
                                    tester=self.bridge.send_test_notification)
            dialog.saved.connect(self._on_settings_saved)
            dialog.finished.connect(lambda _r: self._forget_settings_dialog(dialog))
            self.settings_dialog = dialog
        self.settings_dialog.open()  # window-modal, without a nested event loop
        return self.settings_dialog

    def open_setup(self) -> SetupDialog:
        """The set-up assistant (the first start, Goalkeeper → Set up…, the first-run page)."""
        if self.setup_dialog is None:
            dialog = SetupDialog(self.bridge, self.window)
            dialog.applied.connect(self._on_setup_applied)
            dialog.finished.connect(lambda _r: self._forget_setup_dialog(dialog))
            self.setup_dialog = dialog
        self.setup_dialog.open()  # window-modal, without a nested event loop
        return self.setup_dialog

    def _forget_setup_dialog(self, dialog: SetupDialog) -> None:
        if self.setup_dialog is dialog:
            self.setup_dialog = None
        dialog.deleteLater()

    def _on_setup_applied(self, _done: list[Applied]) -> None:
        """The assistant wrote the config file: what applies at once (notifications) does."""
        try:
            settings = self.source.effective()
        except SettingsError as exc:
            self.window.show_message(localized(str(exc)), False)
            return
        self.user_settings = settings
        self.host.notifications.apply(settings)

    def _forget_settings_dialog(self, dialog: SettingsDialog) -> None:
        if self.settings_dialog is dialog:
            self.settings_dialog = None
        dialog.deleteLater()

    def _on_settings_saved(self, settings: Settings, restart: bool) -> None:
        # the dialog saves the file's values; a field a GOALKEEPER_* variable sets keeps the
        # variable's value (it wins over the file, now as at the next start)
        settings = settings.model_copy(update={name: getattr(self.user_settings, name)
                                               for name in self.source.overridden()})
        start_changed = settings.start_at_login != self.user_settings.start_at_login
        self.user_settings = settings
        self.host.notifications.apply(settings)  # switches, channels, time-out: at once
        text = (tr("Settings saved; scheduling changes apply when Goalkeeper next starts.")
                if restart else tr("Settings saved and applied."))
        self.window.show_message(text, True)
        if start_changed:
            self._tasks.spawn(self._apply_autostart(settings.start_at_login), "autostart")

    async def _apply_autostart(self, enabled: bool) -> None:
        problem = await asyncio.to_thread(apply_autostart, enabled)
        if problem:
            self.window.show_message(tr("Start at login: {problem}").format(
                problem=localized(problem)), False)

    async def _on_show_window_op(self, request: dict[str, Any]) -> dict[str, Any]:
        self.window.bring_to_front()
        return {"ok": True, "pid": os.getpid()}

    # -- geometry ------------------------------------------------------------------------------

    def _restore_geometry(self) -> None:
        geometry = self.state.blob("window/geometry")
        if geometry is not None:
            self.window.restoreGeometry(geometry)
        splitter = self.state.blob("window/splitter")
        if splitter is not None:
            self.window.splitter.restoreState(splitter)

    def _save_geometry(self) -> None:
        self.state.set_blob("window/geometry", self.window.saveGeometry())
        self.state.set_blob("window/splitter", self.window.splitter.saveState())
        self.state.sync()


def demo_title() -> str:
    """The window's title in the demo. It ends with the app's display name: Qt appends that
    name (" — Goalkeeper") to any title that does not, which made "Goalkeeper — demo —
    Goalkeeper"."""
    return tr("Demo — Goalkeeper")
