"""GUI test fixtures: a qasync loop for async tests here, a window over a real engine.

Only tests under ``tests/gui`` get the qasync loop (pytest-asyncio asks this conftest's hook per
item); the core's async tests keep asyncio's default loop. Inside an async test never call
``qtbot.wait*`` or anything else that nests a Qt event loop: await :func:`wait_signal` or
:func:`tests.support.fakes.until` instead (the offscreen platform has no real window manager).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
import pytest_asyncio
import pytestqt.plugin
import qasync
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import (
    QApplication,
)

from core import i18n
from core.engine import Engine
from core.models import GoalState
from core.paths import resolve_paths
from gui import i18n as gui_i18n
from gui.bridge import Bridge
from gui.main_window import MainWindow
from gui.tick import DisplayTick
from tests.support.fakes import FakeProvider
from tests.support.gui import RecordingLauncher

_loops: list[qasync.QEventLoop] = []


def _new_loop() -> qasync.QEventLoop:
    loop = qasync.QEventLoop(QApplication.instance() or QApplication([]))
    _loops[:] = [loop]
    return loop


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item
                                  ) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    return {"qasync": _new_loop}


def _process_events_in_loop() -> None:
    """pytest-qt calls ``processEvents()`` between a test and its teardown, outside the asyncio
    loop; qasync runs due asyncio callbacks from Qt events, so a task stepped there would find no
    running loop (``asyncio.wait`` raises). Mark the test's loop as running meanwhile."""
    loop = next((lp for lp in _loops if not lp.is_closed() and not lp.is_running()), None)
    if loop is None or asyncio.events._get_running_loop() is not None:
        _original_process_events()
        return
    asyncio.events._set_running_loop(loop)
    try:
        _original_process_events()
    finally:
        asyncio.events._set_running_loop(None)


_original_process_events = pytestqt.plugin._process_events
pytestqt.plugin._process_events = _process_events_in_loop


@pytest.fixture(autouse=True)
def _app_like_the_real_one(qapp: QApplication) -> None:
    """As gui/app.py sets it: closing the last window (a message box...) never quits Qt's loop,
    which under qasync would end the running test with "Event loop stopped"."""
    qapp.setQuitOnLastWindowClosed(False)


@pytest.fixture(autouse=True)
def _collect_on_the_gui_thread() -> Any:
    """As the app does (gui/gc_guard.py): no automatic GC in the store thread, where a collected
    cycle holding a QObject would be destroyed off the GUI thread."""
    gc.disable()
    yield
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()
    gc.enable()


@pytest.fixture(autouse=True)
def _no_swallowed_subscriber_errors(caplog: pytest.LogCaptureFixture) -> Any:
    """The event bus logs (and swallows) a failing subscriber; in GUI tests that is a failure."""
    caplog.set_level(logging.ERROR, logger="core.events")
    yield
    failures = [r for r in caplog.records if r.name == "core.events" and r.levelno >= logging.ERROR]
    assert not failures, failures[0].getMessage()


@pytest.fixture
def launcher() -> RecordingLauncher:
    return RecordingLauncher()


@pytest_asyncio.fixture
async def engine(make_engine: Any, fake: FakeProvider) -> Engine:
    """An engine with three goals: running, waiting for quota (no reset known), idle."""
    fake.observe("fake:a", GoalState.RUNNING, title="Refactor the parser")
    fake.observe("fake:b", GoalState.IDLE, title="Write the docs")
    fake.observe("fake:c", GoalState.IDLE, title="Port the tests", data={"cwd": "/"})
    engine: Engine = await make_engine(fake)
    return engine


@pytest_asyncio.fixture
async def bridge(engine: Engine) -> AsyncIterator[Bridge]:
    bridge = Bridge(engine, host_text="test host")
    yield bridge
    await bridge.close()


@pytest_asyncio.fixture
async def window(qtbot: Any, bridge: Bridge, launcher: RecordingLauncher
                 ) -> AsyncIterator[MainWindow]:
    tick = DisplayTick(bridge.now)
    win = MainWindow(bridge, launcher, tick)  # type: ignore[arg-type]
    qtbot.addWidget(win)
    bridge.sync()
    yield win
    # its loads (the chart's, the history's) end while the event loop still runs, as the app's
    # own shutdown does — not in qtbot's close, where no asyncio loop is running
    await win.shutdown()


@pytest.fixture
def zh(qapp: QApplication, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """What ``goalkeeper gui`` does under LANG=zh_CN.UTF-8: the core's language, then Qt's."""
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert i18n.setup(resolve_paths(os.environ).config_file, os.environ) == "zh_CN"
    assert gui_i18n.install(qapp) == "zh_CN"
    yield
    gui_i18n.uninstall(qapp)
    i18n.use_language("en")
