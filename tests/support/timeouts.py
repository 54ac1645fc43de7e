"""The second line behind pytest-timeout: no test can hang the run, and the run names it.

pytest-timeout runs in ``signal`` mode (pyproject.toml): at the limit SIGALRM makes the test fail
by name and the run goes on to its summary. Python runs that handler only when the main thread
runs Python code, which a test stuck in Qt's C++ event loop (a qasync loop waiting on a future
that never completes, a nested ``QEventLoop.exec()``) never does — measured: such a test hangs
for ever under ``signal`` mode. So each test also gets a :class:`Watchdog` thread:

- :data:`NUDGE` seconds past the limit it makes the main thread leave every Qt event loop it
  is in (``QThread::exit`` on the GUI thread: thread-safe, nested loops included). The main
  thread is back in Python, the pending SIGALRM handler runs, and the test fails by name as
  any other time-out does (measured: an awaited future that never completes under qasync, and
  a nested ``QEventLoop().exec()``, each fail by name and the next test runs).
- :data:`HARD` seconds past the limit (nothing got it out) it prints the test's name, every
  thread's stack and the run's summary so far, and ends the process. The run's reaper
  (tests/support/reaper.py) then stops whatever the run started.

.ci/run's outer ``timeout`` stays as the last guard.
"""

from __future__ import annotations

import faulthandler
import os
import sys
import threading
import time
from typing import Any

import pytest

NUDGE = 10.0
HARD = 60.0


def limit_of(item: pytest.Item) -> float:
    """The item's pytest-timeout limit (marker, then --timeout, then the ini); 0: none."""
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0] or 0)
    value = item.config.getoption("timeout", None) or item.config.getini("timeout")
    return float(value or 0)


def _quit_qt() -> bool:
    """Leave every Qt event loop of the main thread (``QThread::exit`` is thread-safe and ends
    nested ``QEventLoop.exec()`` calls too, where ``QCoreApplication.quit`` ends only ``exec``)."""
    core = sys.modules.get("PySide6.QtCore")
    app = core.QCoreApplication.instance() if core is not None else None
    if app is None:
        return False
    app.thread().exit(1)
    return True


def _summary(config: pytest.Config) -> str:
    reporter: Any = config.pluginmanager.getplugin("terminalreporter")
    stats: dict[str, list[Any]] = getattr(reporter, "stats", {})
    counts = ", ".join(f"{len(v)} {k}" for k, v in stats.items() if k and v)
    failed = [r.nodeid for k in ("failed", "error") for r in stats.get(k, [])
              if getattr(r, "nodeid", None)]
    return "\n".join([f"so far: {counts or 'nothing reported'}",
                      *(f"FAILED {nodeid}" for nodeid in dict.fromkeys(failed))])


class Watchdog:
    """Watches one test from its setup to its teardown (see the module's docstring)."""

    def __init__(self, item: pytest.Item, limit: float) -> None:
        self.item = item
        self.limit = limit
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True,
                                        name=f"watchdog {item.nodeid}")

    def __enter__(self) -> Watchdog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def _watch(self) -> None:
        if self._done.wait(self.limit + NUDGE):
            return
        nudged = _quit_qt()
        if self._done.wait(HARD - NUDGE):
            return
        self._hard_stop(nudged)

    def _hard_stop(self, nudged: bool) -> None:
        config = self.item.config
        capman: Any = config.pluginmanager.getplugin("capturemanager")
        if capman is not None:
            capman.suspend_global_capture(in_=True)
        err = sys.__stderr__ or sys.stderr
        err.write(f"\n{'+' * 30} hard time-out {'+' * 30}\n"
                  f"{self.item.nodeid} still running {self.limit + HARD:.0f} s after it began "
                  f"(limit {self.limit:.0f} s); stuck outside Python"
                  f"{', and asking Qt to quit did not free it' if nudged else ''}.\n")
        err.flush()
        faulthandler.dump_traceback(file=err, all_threads=True)
        err.write(f"\n{_summary(config)}\nTIMED OUT {self.item.nodeid}\n")
        err.flush()
        time.sleep(0.1)
        os._exit(1)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    limit = limit_of(item)
    if limit <= 0:
        yield
        return
    with Watchdog(item, limit):
        yield
