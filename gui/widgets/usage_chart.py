"""The usage chart: used % of one quota window over time, with pause and resume markers.

A small QPainter widget on PySide6-Essentials rather than QtCharts: QtCharts lives in
PySide6-Addons (≈110 MB more, and in 6.11 Addons also carries WebEngine — hundreds of MB) for
what is one step line, two threshold lines and a few markers; pyqtgraph would add numpy. Painting
it ourselves also keeps it on the palette (light/dark) and sharp at any device pixel ratio.

Readings are samples: the line holds each value until the next reading (a step line), which is
what the quota did as far as anyone knows — a straight slope would invent usage between samples.
A level is never held across a reset the chart knows of (``ChartData.resets``): the line drops
at the reset and is left out, as unknown, until the next reading.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPainterPath, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from core.i18n.textfmt import weekday_day
from gui.bridge import Marker
from gui.i18n import tr
from gui.theme import MARKER_COLORS, RESERVE_COLOR, muted

TICK_STEPS = [timedelta(seconds=s) for s in (10, 15, 30)] + [
    timedelta(minutes=m) for m in (1, 2, 5, 10, 15, 30)] + [
    timedelta(hours=h) for h in (1, 2, 3, 6, 12)] + [timedelta(days=d) for d in (1, 2, 7)]
MAX_X_TICKS = 8
LEGEND_TOP = 4.0
LEGEND_GAP = 12.0


@dataclass
class ChartData:
    """What the chart shows; ``start``/``end`` bound the time axis."""

    label: str
    start: datetime
    end: datetime
    points: list[tuple[datetime, float]] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)
    pause_threshold: float = 100.0
    resume_threshold: float = 90.0
    reserve: float = 0.0  # % kept for the user: a line at 100 − reserve (0: none)
    resets: list[datetime] = field(default_factory=list)  # known resets of the window


def held_segments(points: list[tuple[datetime, float]], resets: list[datetime], end: datetime
                  ) -> list[list[tuple[datetime, float]]]:
    """The step line as runs of (instant, percent) vertices.

    Each reading holds its level until the next reading, or until a known reset that comes
    first: there the run drops to 0 % and ends — the level after a reset is unknown until the
    next reading starts a new run."""
    ordered = sorted(resets)
    runs: list[list[tuple[datetime, float]]] = []
    run: list[tuple[datetime, float]] = []
    for index, (at, value) in enumerate(points):
        if run:
            run.append((at, run[-1][1]))
        run.append((at, value))
        until = points[index + 1][0] if index + 1 < len(points) else end
        cut = next((r for r in ordered if at < r <= until), None)
        if cut is not None:
            run += [(cut, value), (cut, 0.0)]
            runs.append(run)
            run = []
    if run:
        run.append((max(end, run[-1][0]), run[-1][1]))
        runs.append(run)
    return runs


def x_ticks(start: datetime, end: datetime, zone: tzinfo | None = None) -> list[datetime]:
    """At most :data:`MAX_X_TICKS` round local instants between ``start`` and ``end``."""
    span = max((end - start).total_seconds(), 1.0)
    step = next((s for s in TICK_STEPS if span / s.total_seconds() <= MAX_X_TICKS),
                TICK_STEPS[-1])
    seconds = step.total_seconds()
    offset = start.astimezone(zone).utcoffset() or timedelta(0)
    local_epoch = start.timestamp() + offset.total_seconds()
    first = start + timedelta(seconds=(-local_epoch) % seconds)
    ticks = []
    tick = first
    while tick <= end:
        ticks.append(tick)
        tick += step
    return ticks


def tick_label(instant: datetime, span: timedelta, zone: tzinfo | None = None) -> str:
    local = instant.astimezone(zone)
    if span >= timedelta(days=2):
        return weekday_day(local)
    if span <= timedelta(minutes=5):
        return local.strftime("%H:%M:%S")
    return local.strftime("%H:%M")


class UsageChart(QWidget):
    """Paints a :class:`ChartData`; owns nothing else."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: ChartData | None = None
        self.zone: tzinfo | None = None
        self.setMinimumHeight(160)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setAccessibleName(tr("Usage chart"))

    def sizeHint(self) -> QSize:
        return QSize(600, 220)

    def set_data(self, data: ChartData | None) -> None:
        self.data = data
        self.setAccessibleDescription(self.describe())
        self.update()

    def describe(self) -> str:
        """A sentence for screen readers (the chart's content in words)."""
        d = self.data
        if d is None:
            return tr("No quota window selected.")
        if not d.points:
            return tr("No stored readings for {label} in this period.").format(label=d.label)
        pauses = sum(1 for m in d.markers if m.kind == "paused")
        resumes = sum(1 for m in d.markers if m.kind == "resumed")
        peak = max(v for _, v in d.points)
        return tr("{label}: {readings} readings, latest {latest} % used, peak {peak} %; "
                  "{pauses} pauses for quota, {resumes} resumes.").format(
            label=d.label, readings=len(d.points), latest=f"{d.points[-1][1]:.0f}",
            peak=f"{peak:.0f}", pauses=pauses, resumes=resumes)

    # -- geometry ------------------------------------------------------------------------------

    def legend_height(self) -> float:
        """The legend band's height: the tallest of its texts as drawn, fallback fonts included
        (Chinese glyphs are taller than the Latin font's line), so nothing is clipped."""
        metrics = QFontMetrics(self.font())
        texts = [text for _, text, _ in self._legend_items()]
        return float(max([metrics.height()] + [metrics.boundingRect(t).height() for t in texts]))

    def plot_rect(self) -> QRectF:
        metrics = QFontMetrics(self.font())
        left = metrics.horizontalAdvance("100 %") + 12
        # LEGEND_TOP + the band + a gap the data's dots at 100 % (radius 2.5, pen 2) stay below
        top = LEGEND_TOP + self.legend_height() + LEGEND_GAP
        return QRectF(self.rect()).adjusted(left, top, -14, -(metrics.height() + 10))

    def x_of(self, instant: datetime, plot: QRectF) -> float:
        assert self.data is not None
        span = max((self.data.end - self.data.start).total_seconds(), 1.0)
        return plot.left() + plot.width() * (instant - self.data.start).total_seconds() / span

    @staticmethod
    def y_of(percent: float, plot: QRectF) -> float:
        return plot.bottom() - plot.height() * max(0.0, min(percent, 100.0)) / 100.0

    # -- painting ------------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        painter.fillRect(self.rect(), palette.color(QPalette.ColorRole.Base))
        plot = self.plot_rect()
        self._paint_axes(painter, plot)
        if self.data is not None and self.data.points:
            self._paint_thresholds(painter, plot)
            self._paint_series(painter, plot)
        else:
            painter.setPen(muted(palette))
            painter.drawText(plot, Qt.AlignmentFlag.AlignCenter, self.describe())
        if self.data is not None:
            self._paint_markers(painter, plot)
            self._paint_legend(painter)
        painter.end()

    def _paint_axes(self, painter: QPainter, plot: QRectF) -> None:
        palette = self.palette()
        grid = QPen(palette.color(QPalette.ColorRole.Mid), 1, Qt.PenStyle.DotLine)
        text = muted(palette)
        metrics = QFontMetrics(self.font())
        for percent in (0, 25, 50, 75, 100):
            y = self.y_of(percent, plot)
            painter.setPen(grid)
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            painter.setPen(text)
            painter.drawText(QRectF(0, y - metrics.height() / 2, plot.left() - 6, metrics.height()),
                             Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                             f"{percent} %")
        if self.data is None:
            return
        span = self.data.end - self.data.start
        for tick in x_ticks(self.data.start, self.data.end, self.zone):
            x = self.x_of(tick, plot)
            painter.setPen(grid)
            painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
            painter.setPen(text)
            label = tick_label(tick, span, self.zone)
            width = metrics.horizontalAdvance(label) + 4
            left = min(max(x - width / 2, 0.0), self.width() - width - 2)  # never clipped
            painter.drawText(QRectF(left, plot.bottom() + 4, width, metrics.height()),
                             Qt.AlignmentFlag.AlignCenter, label)

    def _paint_thresholds(self, painter: QPainter, plot: QRectF) -> None:
        assert self.data is not None
        lines = [(self.data.pause_threshold, "#c62828"), (self.data.resume_threshold, "#b26a00")]
        if self.data.reserve > 0:
            lines.append((100.0 - self.data.reserve, RESERVE_COLOR))
        for value, colour in lines:
            y = round(self.y_of(value, plot)) + 0.5  # on a pixel's centre: one crisp row
            painter.setPen(QPen(QColor(colour), 1, Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))

    def _paint_series(self, painter: QPainter, plot: QRectF) -> None:
        assert self.data is not None
        d = self.data
        colour = self.palette().color(QPalette.ColorRole.Highlight)
        shown = [(t, v) for t, v in d.points if d.start <= t <= d.end]
        fill = QColor(colour)
        fill.setAlpha(50)
        for run in held_segments(shown, d.resets, d.end):
            vertices = [QPointF(self.x_of(t, plot), self.y_of(v, plot)) for t, v in run]
            path = QPainterPath(vertices[0])
            for vertex in vertices[1:]:
                path.lineTo(vertex)
            area = QPainterPath(path)
            area.lineTo(QPointF(vertices[-1].x(), plot.bottom()))
            area.lineTo(QPointF(vertices[0].x(), plot.bottom()))
            area.closeSubpath()
            painter.fillPath(area, fill)
            painter.setPen(QPen(colour, 2))
            painter.drawPath(path)
        if len(shown) <= plot.width() / 6:
            painter.setPen(QPen(colour, 2))
            painter.setBrush(colour)
            for t, v in shown:
                painter.drawEllipse(QPointF(self.x_of(t, plot), self.y_of(v, plot)), 2.5, 2.5)

    def _paint_markers(self, painter: QPainter, plot: QRectF) -> None:
        assert self.data is not None
        for marker in self.data.markers:
            if not self.data.start <= marker.at <= self.data.end:
                continue
            x = self.x_of(marker.at, plot)
            colour = QColor(MARKER_COLORS.get(marker.kind, "#757575"))
            painter.setPen(QPen(colour, 1, Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colour)
            painter.drawPath(_triangle(x, plot.bottom(), down=marker.kind == "paused"))

    def _legend_items(self) -> list[tuple[str, str, float]]:
        """(kind, text, left edge of the text) of the two marker keys, right-aligned."""
        metrics = QFontMetrics(self.font())
        x = float(self.width() - 14)
        items = []
        for kind, text in (("resumed", tr("resumed")), ("paused", tr("paused for quota"))):
            x -= metrics.horizontalAdvance(text)
            items.append((kind, text, x))
            x -= 26
        return items

    def legend_span(self) -> tuple[float, float]:
        """Left and right x of the marker keys (their triangles included)."""
        return self._legend_items()[-1][2] - 16, float(self.width() - 14)

    def _paint_legend(self, painter: QPainter) -> None:
        assert self.data is not None
        metrics = QFontMetrics(self.font())
        y, height = LEGEND_TOP, self.legend_height()
        flags = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        for kind, text, x in self._legend_items():
            width = metrics.horizontalAdvance(text) + 2
            painter.setPen(self.palette().color(QPalette.ColorRole.Text))
            painter.drawText(QRectF(x, y, width, height), flags, text)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(MARKER_COLORS[kind]))
            base = y + height / 2 + (6.0 if kind == "paused" else 4.5)
            painter.drawPath(_triangle(x - 9, base, down=kind == "paused"))
        x = self.legend_span()[0] - 10
        painter.setPen(self.palette().color(QPalette.ColorRole.Text))
        painter.drawText(QRectF(self.plot_rect().left(), y, x - self.plot_rect().left(),
                                height), flags,
                         metrics.elidedText(tr("{label} — used %").format(label=self.data.label),
                                            Qt.TextElideMode.ElideRight,
                                            int(max(0.0, x - self.plot_rect().left()))))


def _triangle(x: float, base: float, down: bool) -> QPainterPath:
    size = 6.0
    path = QPainterPath()
    if down:  # a pause: pointing down onto the axis
        path.moveTo(x - size, base - 2 * size)
        path.lineTo(x + size, base - 2 * size)
        path.lineTo(x, base - size / 2)
    else:
        path.moveTo(x - size, base)
        path.lineTo(x + size, base)
        path.lineTo(x, base - 1.5 * size)
    path.closeSubpath()
    return path
