"""One running desktop app: the host and everything the window needs, started and stopped together.

The app process *is* the host for its data directory (lease, engine, control socket), exactly like
``goalkeeper daemon``. The session shows the window first (so launching feels instant), then starts
the host, announces the engine's state through the bridge, and — in the demo — starts the demo
goals. Quitting stops the host cleanly: the lease is released and goals this process was running
are marked interrupted, so the next host resumes them (start-up recovery).
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from PySide6.QtCore import QObject, Signal

from core.demo import DemoSession
from core.hosting import Host
from gui.bridge import Bridge
from gui.gc_guard import MainThreadGc
from gui.launch import SHOW_WINDOW_OP
from gui.launcher import Launcher
from gui.main_window import MainWindow
from gui.tick import DisplayTick

log = logging.getLogger("gui")


class GuiSession(QObject):
    """Owns the host, the bridge, the display tick and the main window.

    Signals: ``finished()`` once the host has stopped after a quit request.
    """

    finished = Signal()

    def __init__(self, host: Host, demo: DemoSession | None = None,
                 launcher: Launcher | None = None) -> None:
        super().__init__()
        self.host = host
        self.demo = demo
        self.gc = MainThreadGc(self)
        self.bridge = Bridge(host.engine, parent=self)
        self.tick = DisplayTick(self.bridge.now, self)
        self.window = MainWindow(self.bridge, launcher or Launcher(), self.tick)
        self.window.close_requested.connect(self._on_window_close_requested)
        self.window.quit_requested.connect(self.request_quit)
        self._quit = asyncio.Event()
        host.control.register(SHOW_WINDOW_OP, self._on_show_window_op)
        if demo is not None:
            self.window.setWindowTitle("Goalkeeper — demo")

    async def start(self) -> None:
        """Show the window, then take the lease and start the engine (raises what Host raises)."""
        self.window.show()
        self.bridge.set_host_state("starting")
        info = await self.host.start()
        self.bridge.host_text = (f"this app (pid {info.pid}) hosts {info.data_dir}")
        self.bridge.sync()
        self.bridge.set_host_state("running")
        if self.demo is not None:
            await self.demo.restart_goals(self.host)

    async def run(self) -> None:
        """Until the user quits (menu, tray, window close without a tray, SIGINT/SIGTERM)."""
        await self._quit.wait()

    def request_quit(self) -> None:
        self._quit.set()

    async def stop(self) -> None:
        self.bridge.set_host_state("stopping")
        self.tick.set_visible(False)
        await self.window.shutdown()
        try:
            await self.host.stop()
        finally:
            self.bridge.set_host_state("stopped")
            await self.bridge.close()
            self.window.hide()
            self.window.deleteLater()
            self.gc.stop()
            self.finished.emit()

    def _on_window_close_requested(self) -> None:
        self.request_quit()

    async def _on_show_window_op(self, request: dict[str, Any]) -> dict[str, Any]:
        self.window.bring_to_front()
        return {"ok": True, "pid": os.getpid()}
