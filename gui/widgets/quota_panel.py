"""The quota panel: one gauge per quota window, laid out in as many columns as fit.

Signals: ``window_selected(str)`` — the user picked a window (its usage chart is shown);
``windows_changed()`` — a window appeared.
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from core.models import QuotaReading
from gui.bridge import Bridge
from gui.i18n import tr
from gui.widgets.quota_gauge import QuotaGauge

GAUGE_WIDTH = 236
MAX_VISIBLE_ROWS = 2


class QuotaPanel(QWidget):
    """Owns the gauges; fed by the bridge's ``quota_observed`` / ``quota_edge`` and the tick."""

    window_selected = Signal(str)
    windows_changed = Signal()

    def __init__(self, bridge: Bridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self.gauges: dict[str, QuotaGauge] = {}
        self.current = ""
        self._columns = 0
        self.setAccessibleName(tr("Quota windows"))
        self._empty = QLabel(tr("No quota readings yet — they appear as providers report them."),
                             self)
        self._empty.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self._grid_host = QWidget(self)
        self._grid = QGridLayout(self._grid_host)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(6)
        self._scroll = QScrollArea(self)
        self._scroll.setWidget(self._grid_host)
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._empty)
        layout.addWidget(self._scroll)
        bridge.quota_observed.connect(self._on_bridge_quota_observed)
        bridge.quota_edge.connect(self._on_bridge_quota_edge)
        self._update_visibility()

    # -- data ----------------------------------------------------------------------------------

    def _on_bridge_quota_observed(self, reading: QuotaReading) -> None:
        gauge = self.gauges.get(reading.window_id)
        if gauge is None:
            gauge = QuotaGauge(reading.window_id, self._grid_host)
            gauge.selected.connect(self.select)
            self.gauges[reading.window_id] = gauge
            self._relayout(force=True)
            self._update_visibility()
            self._refresh(gauge, self._bridge.now())
            self.windows_changed.emit()
            if not self.current:
                self.select(reading.window_id)
            return
        self._refresh(gauge, self._bridge.now())

    def _on_bridge_quota_edge(self, window_id: str, exhausted: bool) -> None:
        gauge = self.gauges.get(window_id)
        if gauge is not None:
            self._refresh(gauge, self._bridge.now())

    def _refresh(self, gauge: QuotaGauge, now: datetime) -> None:
        reading = self._bridge.reading(gauge.window_id)
        if reading is not None:
            ahead = self._bridge.forecast(gauge.window_id)
            gauge.set_reading(reading, self._bridge.is_exhausted(gauge.window_id), now,
                              self._bridge.settings.resume_threshold_percent,
                              self._bridge.reserve_percent(gauge.window_id),
                              ahead.text(now) if ahead is not None else "",
                              runs_out=ahead is not None and ahead.runs_out_at is not None
                              and ahead.runs_out_at > now)  # never warm for a time gone by

    def tick(self, now: datetime) -> None:
        for gauge in self.gauges.values():
            self._refresh(gauge, now)

    def needs_tick(self) -> bool:
        return any(g.reading is not None and g.reading.resets_at is not None
                   for g in self.gauges.values())

    def select(self, window_id: str) -> None:
        if window_id not in self.gauges:
            return
        self.current = window_id
        for wid, gauge in self.gauges.items():
            gauge.set_current(wid == window_id)
        self.window_selected.emit(window_id)

    def window_labels(self) -> list[tuple[str, str]]:
        """(window id, label) of every gauge, in display order."""
        return [(wid, g.texts()[0]) for wid, g in sorted(self.gauges.items())]

    # -- layout --------------------------------------------------------------------------------

    def _update_visibility(self) -> None:
        has = bool(self.gauges)
        self._empty.setVisible(not has)
        self._scroll.setVisible(has)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._relayout()

    def _relayout(self, force: bool = False) -> None:
        columns = max(1, (self.width() - 8) // (GAUGE_WIDTH + 6))
        if columns == self._columns and not force:
            return
        self._columns = columns
        for gauge in self.gauges.values():
            self._grid.removeWidget(gauge)
        for i, (_wid, gauge) in enumerate(sorted(self.gauges.items())):
            self._grid.addWidget(gauge, i // columns, i % columns,
                                 Qt.AlignmentFlag.AlignLeft)
        for column in range(self._grid.columnCount()):
            self._grid.setColumnStretch(column, 0)
        # the gauges share the width up to their maximum; the rest stays empty on the right
        self._grid.setColumnStretch(columns, 1)
        rows = min(MAX_VISIBLE_ROWS, max(1, -(-len(self.gauges) // columns)))
        height = next(iter(self.gauges.values())).sizeHint().height() if self.gauges else 0
        self._scroll.setFixedHeight(rows * height + (rows - 1) * 6 + 2)
