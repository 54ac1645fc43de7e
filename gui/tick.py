"""The display tick: one signal per wall-clock second, only while something visible counts down.

The core's scheduler does all the timing that matters; this clock only repaints countdowns. It
runs while the window is visible (not hidden to the tray, not minimised) *and* some view says it
has a countdown to show, and it fires just after each whole second of the engine's clock so every
countdown on screen changes at the same moment.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from PySide6.QtCore import QObject, Qt, QTimer, Signal

Need = Callable[[], bool]


class DisplayTick(QObject):
    """Owns the one-second timer. Signals: ``ticked(datetime)``, ``active_changed(bool)``."""

    ticked = Signal(object)
    active_changed = Signal(bool)

    def __init__(self, now: Callable[[], datetime], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._now = now
        self._needs: list[Need] = []
        self._visible = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._on_timer_timeout)
        self.ticks = 0

    @property
    def active(self) -> bool:
        return self._timer.isActive()

    def add_need(self, need: Need) -> None:
        """Register a view's "I have a countdown on screen" predicate."""
        self._needs.append(need)
        self.reevaluate()

    def set_visible(self, visible: bool) -> None:
        if visible != self._visible:
            self._visible = visible
            self.reevaluate()

    def reevaluate(self) -> None:
        """Start or stop the timer; call whenever what is shown may have changed."""
        wanted = self._visible and any(need() for need in self._needs)
        if wanted and not self._timer.isActive():
            self._arm()
            self.active_changed.emit(True)
        elif not wanted and self._timer.isActive():
            self._timer.stop()
            self.active_changed.emit(False)

    def fire(self) -> None:
        """Tick once now, whether or not the timer runs (after the clock moved by other means)."""
        self.ticked.emit(self._now())

    def _arm(self) -> None:
        millis = self._now().microsecond // 1000
        self._timer.start(1000 - millis + 5)  # just past the next whole second

    def _on_timer_timeout(self) -> None:
        self.ticks += 1
        self.ticked.emit(self._now())
        if self._visible and any(need() for need in self._needs):
            self._arm()
        else:
            self.active_changed.emit(False)
