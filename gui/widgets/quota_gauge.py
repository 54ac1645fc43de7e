"""One quota window as a gauge: label, used %, a bar coloured by level with the reserve line, the
reset countdown, an exactness badge and the forecast ("runs out ≈ 14:20") — painted directly (20
of these repaint every second; no child widgets)."""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFocusEvent,
    QFont,
    QFontMetrics,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
)
from PySide6.QtWidgets import QSizePolicy, QWidget

from core.i18n import localized
from core.i18n.textfmt import short_time
from core.models import QuotaReading
from gui import format as fmt
from gui.i18n import tr
from gui.theme import LEVEL_COLORS, RESERVE_COLOR, muted

MAX_WIDTH = 340


class QuotaGauge(QWidget):
    """Renders one window's reading. Signals: ``selected(str)`` (click, Enter or Space)."""

    selected = Signal(str)

    def __init__(self, window_id: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.window_id = window_id
        self.reading: QuotaReading | None = None
        self.exhausted = False
        self.high_percent = 90.0
        self.is_current = False
        self.reserve = 0.0  # % of the window kept for the user (0: no reserve line)
        self.forecast = ""  # "runs out ≈ 14:20", "lasts until reset" or nothing
        self.runs_out = False  # the forecast says it runs out before it resets (drawn warm)
        self._now: datetime | None = None
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(200)
        self.setMaximumWidth(MAX_WIDTH)
        self.setCursor(Qt.CursorShape.PointingHandCursor)

    # -- data ----------------------------------------------------------------------------------

    def set_reading(self, reading: QuotaReading, exhausted: bool, now: datetime,
                    high_percent: float, reserve: float = 0.0, forecast: str = "",
                    runs_out: bool = False) -> None:
        self.reading = reading
        self.exhausted = exhausted
        self.high_percent = high_percent
        self.reserve = reserve
        self.forecast = forecast
        self.runs_out = runs_out
        self._now = now
        self._describe()
        self.update()

    def policy_text(self) -> str:
        """The fourth line: the forecast and the reserve, ``runs out ≈ 14:20 · keeps 30 %``."""
        parts = [self.forecast] if self.forecast else []
        if self.reserve > 0:
            parts.append(tr("keeps {percent} %").format(percent=f"{self.reserve:g}"))
        return " · ".join(parts)

    def set_current(self, current: bool) -> None:
        if current != self.is_current:
            self.is_current = current
            self.update()

    @property
    def level(self) -> str:
        if self.reading is None:
            return "ok"
        return fmt.level(self.reading, self.exhausted, self.high_percent)

    def texts(self) -> tuple[str, str, str, str]:
        """(label, used, reset countdown, exactness badge) as painted."""
        if self.reading is None or self._now is None:
            return (self.window_id, "", "", "")
        r = self.reading
        return (localized(r.label), fmt.used_text(r), fmt.reset_text(r, self._now),
                fmt.exactness_text(r, self._now))

    def _describe(self) -> None:
        label, used, reset, badge = self.texts()
        if self.reading is None or self._now is None:
            return
        # the spoken name names the reset instant, not the ticking countdown
        when = (tr("resets {when}").format(when=short_time(self.reading.resets_at, self._now))
                if self.reading.resets_at else reset)
        state = tr(", exhausted") if self.exhausted else ""
        name = tr("{label} quota: {used}{state}, {when}, {badge}").format(
            label=label, used=used, state=state, when=when, badge=badge)
        if self.forecast:
            name += tr(", {forecast}").format(forecast=self.forecast)
        if self.reserve > 0:
            name += tr(", {percent} % kept for you").format(percent=f"{self.reserve:g}")
        if name != self.accessibleName():
            self.setAccessibleName(name)
        tip = fmt.reset_tooltip(self.reading, self._now)
        if self.reserve > 0:
            tip += "\n" + tr("Reserve: automatic resumes need more than {reserve} % left; goals "
                              "Goalkeeper resumed pause at {used} % used").format(
                                  reserve=f"{self.reserve:g}", used=f"{100 - self.reserve:g}")
        self.setToolTip(tip)

    # -- painting ------------------------------------------------------------------------------

    def sizeHint(self) -> QSize:
        metrics = QFontMetrics(self.font())
        return QSize(236, metrics.height() * 4 + 28)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        frame = QRectF(self.rect()).adjusted(1, 1, -1, -1)
        border = palette.color(QPalette.ColorRole.Highlight) if (
            self.is_current or self.hasFocus()) else palette.color(QPalette.ColorRole.Mid)
        painter.setPen(border)
        painter.setBrush(palette.color(QPalette.ColorRole.Base))
        painter.drawRoundedRect(frame, 5, 5)
        label, used, reset, badge = self.texts()
        metrics = QFontMetrics(self.font())
        line = metrics.height()
        inner = frame.adjusted(9, 6, -9, -6)
        bold = QFont(self.font())
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(palette.color(QPalette.ColorRole.Text))
        painter.drawText(QRectF(inner.x(), inner.y(), inner.width() * 0.62, line),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         QFontMetrics(bold).elidedText(label, Qt.TextElideMode.ElideRight,
                                                       int(inner.width() * 0.62)))
        painter.setFont(self.font())
        painter.drawText(QRectF(inner.x(), inner.y(), inner.width(), line),
                         Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, used)
        self._paint_bar(painter, QRectF(inner.x(), inner.y() + line + 4, inner.width(), 8))
        bottom = QRectF(inner.x(), inner.y() + line + 16, inner.width(), line)
        badge_width = self._paint_badge(painter, bottom, badge)
        painter.setPen(muted(palette) if not self.exhausted else QColor(LEVEL_COLORS["exhausted"]))
        painter.drawText(bottom.adjusted(0, 0, -badge_width - 6, 0),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         metrics.elidedText(reset, Qt.TextElideMode.ElideRight,
                                            int(bottom.width() - badge_width - 6)))
        self._paint_policy(painter, bottom.translated(0, line + 2))
        painter.end()

    def _paint_policy(self, painter: QPainter, row: QRectF) -> None:
        text = self.policy_text()
        if not text:
            return
        painter.setPen(QColor(LEVEL_COLORS["high"]) if self.runs_out else muted(self.palette()))
        painter.drawText(row, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         QFontMetrics(self.font()).elidedText(
                             text, Qt.TextElideMode.ElideRight, int(row.width())))

    def _paint_bar(self, painter: QPainter, rect: QRectF) -> None:
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self.palette().color(QPalette.ColorRole.Midlight))
        painter.drawRoundedRect(rect, 4, 4)
        used = self.reading.used_percent if self.reading else None
        if used is None and self.reading is not None and self.reading.used is not None and (
                self.reading.limit):
            used = 100.0 * self.reading.used / self.reading.limit
        if used is not None:
            self._paint_used(painter, rect, used)
        self._paint_reserve(painter, rect)

    def _paint_used(self, painter: QPainter, rect: QRectF, used: float) -> None:
        filled = QRectF(rect.x(), rect.y(), rect.width() * max(0.0, min(used, 100.0)) / 100.0,
                        rect.height())
        painter.setBrush(QColor(LEVEL_COLORS[self.level]))
        painter.drawRoundedRect(filled, 4, 4)

    def reserve_x(self, rect: QRectF) -> float | None:
        """Where the reserve line is drawn on the bar (None: no reserve)."""
        if self.reserve <= 0:
            return None
        return rect.x() + rect.width() * (100.0 - self.reserve) / 100.0

    def _paint_reserve(self, painter: QPainter, rect: QRectF) -> None:
        x = self.reserve_x(rect)
        if x is None:
            return
        colour = QColor(RESERVE_COLOR)
        kept = QColor(colour)
        kept.setAlpha(60)  # the share kept for the user, lightly shaded
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(kept)
        painter.drawRect(QRectF(x, rect.y(), rect.right() - x, rect.height()))
        painter.setPen(QPen(colour, 2))
        painter.drawLine(QPointF(x, rect.y() - 3), QPointF(x, rect.bottom() + 3))

    def _paint_badge(self, painter: QPainter, row: QRectF, text: str) -> float:
        if not text:
            return 0.0
        small = QFont(self.font())
        small.setPointSizeF(max(6.5, small.pointSizeF() * 0.85))
        metrics = QFontMetrics(small)
        width = metrics.horizontalAdvance(text) + 12
        rect = QRectF(row.right() - width, row.y() + 1, width, row.height() - 2)
        exactness = self.reading.exactness.value if self.reading else ""
        colour = {"exact": "#2e7d32", "inferred": "#1565c0", "estimated": "#6a1b9a"}.get(
            exactness, "#8d6e63")  # by value: the text is translated
        painter.setPen(QColor(colour))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(rect, rect.height() / 2, rect.height() / 2)
        painter.setFont(small)
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        painter.setFont(self.font())
        return width

    # -- interaction ---------------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.selected.emit(self.window_id)
        super().mousePressEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.selected.emit(self.window_id)
            return
        super().keyPressEvent(event)

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        self.update()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self.update()
