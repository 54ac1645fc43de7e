"""The usage chart with its controls: which window, which period; loaded from the store.

Stored readings and history are read on the store's thread through the bridge; new readings and
pause/resume rows for the shown window are appended live without another read.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from core.i18n import localized
from core.models import HistoryRow, QuotaReading
from gui.bridge import Bridge, Marker, marker_for
from gui.i18n import QT_TR_NOOP, tr
from gui.tasks import TaskKeeper
from gui.widgets.usage_chart import ChartData, UsageChart

#: (label, look-back); None: from the first stored reading within a week
SPANS: list[tuple[str, timedelta | None]] = [
    (QT_TR_NOOP("Since the first reading (up to 7 days)"), None),
    (QT_TR_NOOP("Last hour"), timedelta(hours=1)),
    (QT_TR_NOOP("Last 24 hours"), timedelta(days=1)),
    (QT_TR_NOOP("Last 7 days"), timedelta(days=7)),
]
AUTO_LOOKBACK = timedelta(days=7)
MIN_AUTO_SPAN = timedelta(minutes=1)
MAX_POINTS = 1500


def decimate(points: list[tuple[datetime, float]], limit: int = MAX_POINTS
             ) -> list[tuple[datetime, float]]:
    """At most about ``limit`` points: per time bucket keep the highest reading (the quota's
    worst moment is what matters), and always the latest one."""
    if len(points) <= limit:
        return points
    size = -(-len(points) // limit)
    kept = [max(points[i:i + size], key=lambda p: p[1]) for i in range(0, len(points), size)]
    if kept[-1] != points[-1]:
        kept.append(points[-1])
    return kept


def auto_start(points: list[tuple[datetime, float]], now: datetime) -> datetime:
    """The left edge for "since the first reading": a little before it, and at least
    :data:`MIN_AUTO_SPAN` before now so that a young series is not squeezed into a sliver."""
    if not points:
        return now - MIN_AUTO_SPAN
    first = points[0][0]
    padded = first - (now - first) / 20
    return min(padded, now - MIN_AUTO_SPAN)


class ChartPanel(QWidget):
    """Owns the chart, its two combo boxes and the tasks that load it.

    Signals: ``window_changed(str)`` — the user picked another window in the combo box.
    """

    window_changed = Signal(str)

    def __init__(self, bridge: Bridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._tasks = TaskKeeper()
        self.destroyed.connect(self._tasks.cancel_pending)
        self.window_id = ""
        self.window_combo = QComboBox(self)
        self.window_combo.setAccessibleName(tr("Quota window to chart"))
        self.span_combo = QComboBox(self)
        self.span_combo.setAccessibleName(tr("Period to chart"))
        for text, _ in SPANS:
            self.span_combo.addItem(tr(text))
        self.chart = UsageChart(self)
        self.chart.zone = bridge.zone
        label = QLabel(tr("&Window:"), self)
        label.setBuddy(self.window_combo)
        bar = QHBoxLayout()
        bar.addWidget(label)
        bar.addWidget(self.window_combo, 1)
        bar.addWidget(self.span_combo)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.chart, 1)
        self.window_combo.currentIndexChanged.connect(self._on_window_combo_changed)
        self.span_combo.currentIndexChanged.connect(lambda _i: self.reload())
        bridge.quota_observed.connect(self._on_bridge_quota_observed)
        bridge.history_recorded.connect(self._on_bridge_history_recorded)
        self.loaded = 0  # loads completed (tests wait on it)
        self._seen_resets: dict[str, set[datetime]] = {}  # told by readings while we ran

    # -- selection -----------------------------------------------------------------------------

    def set_windows(self, windows: list[tuple[str, str]]) -> None:
        """(id, label) pairs to offer; keeps the current window selected."""
        self.window_combo.blockSignals(True)
        self.window_combo.clear()
        for window_id, label in windows:
            self.window_combo.addItem(label, window_id)
        index = self.window_combo.findData(self.window_id)
        self.window_combo.setCurrentIndex(max(index, 0))
        self.window_combo.blockSignals(False)

    def show_window(self, window_id: str) -> None:
        if window_id == self.window_id:
            return
        self.window_id = window_id
        index = self.window_combo.findData(window_id)
        if index >= 0:
            self.window_combo.blockSignals(True)
            self.window_combo.setCurrentIndex(index)
            self.window_combo.blockSignals(False)
        self.reload()

    def _on_window_combo_changed(self, index: int) -> None:
        window_id = self.window_combo.itemData(index)
        if window_id:
            self.show_window(str(window_id))
            self.window_changed.emit(str(window_id))

    # -- loading -------------------------------------------------------------------------------

    def reload(self) -> None:
        if self.window_id:
            self._tasks.spawn(self._load(self.window_id), "chart")

    async def _load(self, window_id: str) -> None:
        now = self._bridge.now()
        lookback = SPANS[max(self.span_combo.currentIndex(), 0)][1]
        since = now - (lookback or AUTO_LOOKBACK)
        points = decimate(await self._bridge.series(window_id, since))
        markers = await self._bridge.markers(window_id, since)
        if window_id != self.window_id:
            return  # the user moved on while we were reading
        start = since if lookback else auto_start(points, now)
        self.chart.set_data(self._data(window_id, start, now, points, markers))
        self.loaded += 1

    def tick(self, now: datetime) -> None:
        """Keep the right edge at "now" (repainted each second only on short periods)."""
        data = self.chart.data
        if data is None or not self.isVisible():
            return
        span = data.end - data.start
        if span <= timedelta(hours=1) or (now - data.end) >= span / 200:
            lookback = SPANS[max(self.span_combo.currentIndex(), 0)][1]
            if lookback is not None:
                data.start = now - lookback
            data.end = now
            self._add_resets(data)
            self.chart.set_data(data)

    def _data(self, window_id: str, start: datetime, end: datetime,
              points: list[tuple[datetime, float]], markers: list[Marker]) -> ChartData:
        reading = self._bridge.reading(window_id)
        settings = self._bridge.settings
        data = ChartData(localized(reading.label) if reading else window_id, start, end, points,
                         sorted(markers, key=lambda m: m.at), settings.pause_threshold_percent,
                         settings.resume_threshold_percent,
                         self._bridge.reserve_percent(window_id))
        self._add_resets(data)
        return data

    def _add_resets(self, data: ChartData) -> None:
        """The resets the window's latest reading tells, added to those already known (a
        reading after a reset tells the next one, not the one it followed)."""
        known = set(data.resets) | self._seen_resets.get(self.window_id, set()) | set(
            self._bridge.known_resets(self.window_id, data.start, data.end))
        data.resets = sorted(r for r in known if data.start <= r <= data.end)

    # -- live updates --------------------------------------------------------------------------

    def _on_bridge_quota_observed(self, reading: QuotaReading) -> None:
        if reading.resets_at is not None and not reading.no_timed_reset:
            # the reset a reading announces stays known after the next reading tells a later one
            self._seen_resets.setdefault(reading.window_id, set()).add(reading.resets_at)
        data = self.chart.data
        if reading.window_id != self.window_id or data is None or reading.used_percent is None:
            return
        data.points.append((reading.observed_at, reading.used_percent))
        data.end = max(data.end, reading.observed_at)
        self._add_resets(data)
        self.chart.set_data(data)

    def _on_bridge_history_recorded(self, row: HistoryRow) -> None:
        data = self.chart.data
        if data is None or row.goal is None:
            return
        goal = self._bridge.goal(row.goal)
        if goal is None or self.window_id not in goal.windows:
            return
        marker = marker_for(row, {goal.id})
        if marker is not None:
            data.markers.append(marker)
            data.end = max(data.end, row.at)
            self.chart.set_data(data)

    async def shutdown(self) -> None:
        await self._tasks.close()
