"""Python's cyclic garbage collector, run on the GUI thread only.

Automatic collection starts in whichever thread happens to allocate — here often the store's
thread — and a collected cycle that holds a QObject then destroys it off the GUI thread (Qt warns
"Timers cannot be stopped from another thread"; worse can follow). The usual PySide/PyQt remedy:
switch automatic collection off and collect from a GUI-thread timer when the generation counts say
a collection is due.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

CHECK_INTERVAL_MS = 2000


class MainThreadGc(QObject):
    """Owns the check timer; :meth:`stop` gives collection back to Python."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = CHECK_INTERVAL_MS
                 ) -> None:
        super().__init__(parent)
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.check)
        self._timer.start(interval_ms)

    def check(self) -> int:
        """Collect the oldest generation that is due; returns how many objects were freed."""
        counts = gc.get_count()
        thresholds = gc.get_threshold()
        for generation in (2, 1, 0):
            if counts[generation] > thresholds[generation]:
                return gc.collect(generation)
        return 0

    def stop(self) -> None:
        self._timer.stop()
        gc.collect()
        if self._was_enabled:
            gc.enable()
