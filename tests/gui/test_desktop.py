"""Tray and notifications on a real X server with a private session bus (``-m desktop``).

Run by ``.ci/run`` under ``xvfb-run … dbus-run-session -- env QT_QPA_PLATFORM=xcb pytest -m
desktop``; skipped elsewhere. A fake desktop (tests/support/fake_desktop_bus.py) records every
``org.freedesktop.Notifications.Notify``; each scenario runs the app in its own process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SUPPORT = Path(__file__).resolve().parents[1] / "support"

pytestmark = [
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


@pytest.fixture
def desktop(request: pytest.FixtureRequest) -> Iterator[FakeDesktop]:
    fake = FakeDesktop(tray=request.param)
    yield fake
    fake.close()


def run_scenario() -> dict[str, Any]:
    out = subprocess.run([sys.executable, str(SUPPORT / "desktop_scenario.py")],
                         capture_output=True, text=True, timeout=60,
                         env={**os.environ, "QT_QPA_PLATFORM": "xcb"})
    assert out.returncode == 0, out.stderr[-3000:]
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("desktop", [True], indirect=True)
def test_tray_notification_on_auto_resume(desktop: FakeDesktop) -> None:
    result = run_scenario()
    assert result["tray"] is True and result["backend"] == "tray"
    summaries = [n["summary"] for n in desktop.notified]
    assert "Resumed: Refactor the parser" in summaries
    notice = next(n for n in desktop.notified if n["summary"] == "Resumed: Refactor the parser")
    assert notice["app"] == "Goalkeeper"
    assert notice["body"].startswith("The quota has refreshed")


@pytest.mark.parametrize("desktop", [False], indirect=True)
def test_without_a_tray_notifications_go_to_the_freedesktop_service(
        desktop: FakeDesktop) -> None:
    result = run_scenario()
    assert result["tray"] is False and result["backend"] == "freedesktop"
    assert "Resumed: Refactor the parser" in [n["summary"] for n in desktop.notified]
