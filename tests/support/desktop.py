"""Desktop-test helpers: a fake desktop (tests/support/fake_desktop_bus.py) in its own process
recording every ``org.freedesktop.Notifications.Notify``, and the marks of such tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

#: this folder: the fake desktop bus and the scenario the app runs in its own process
SUPPORT = Path(__file__).resolve().parent


#: the marks of a test module that needs a real X server and a session bus
DESKTOP_MARKS = [
    pytest.mark.desktop,
    pytest.mark.skipif(os.environ.get("QT_QPA_PLATFORM") != "xcb"
                       or not os.environ.get("DBUS_SESSION_BUS_ADDRESS"),
                       reason="needs QT_QPA_PLATFORM=xcb and a session bus "
                              "(xvfb-run + dbus-run-session)"),
]


class FakeDesktop:
    """The fake bus server process and the Notify calls it has seen."""

    def __init__(self, tray: bool) -> None:
        args = [sys.executable, str(SUPPORT / "fake_desktop_bus.py")] + (["--tray"] if tray
                                                                         else [])
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        self.notified: list[dict[str, Any]] = []
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        assert self._ready.wait(10), "the fake desktop bus did not start"

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            event = json.loads(line)
            if event.get("ready"):
                self._ready.set()
            elif "notify" in event:
                self.notified.append(event["notify"])

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        self._reader.join(5)
        assert self.proc.stdout is not None
        self.proc.stdout.close()
