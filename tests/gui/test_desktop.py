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
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.desktop import DESKTOP_MARKS, SUPPORT, FakeDesktop

pytestmark = DESKTOP_MARKS


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
