"""Colours and icons, drawn with QPainter so they are sharp at every device pixel ratio.

Badge and gauge colours are saturated mid-tones with white text, readable on light and dark
palettes alike; everything else takes its colours from the widget's palette, so the window follows
the system's light/dark scheme. Icons carry a glyph as well as a colour (colour alone fails
colour-blind users).
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPainterPath, QPalette, QPen, QPixmap

from core.models import Goal, GoalState, PauseReason
from gui.goal_rules import Aggregate

ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256)

LEVEL_COLORS = {
    "ok": "#2e7d32",
    "warn": "#b26a00",
    "high": "#d84315",
    "exhausted": "#b71c1c",
}

AGGREGATE_COLORS = {
    Aggregate.IDLE: "#607d8b",
    Aggregate.RUNNING: "#2e7d32",
    Aggregate.WAITING: "#b26a00",
    Aggregate.ATTENTION: "#c62828",
}

MARKER_COLORS = {"paused": "#d84315", "resumed": "#2e7d32"}

#: the reserve line on a gauge and the share of the window it keeps for the user
RESERVE_COLOR = "#6a1b9a"


def state_color(goal: Goal) -> str:
    if goal.state is GoalState.PAUSED:
        return {
            PauseReason.QUOTA: "#b26a00",
            PauseReason.BUDGET: "#8d5a00",  # waits for a reset too, by the goal's own rule
            PauseReason.USER: "#546e7a",
            PauseReason.EXTERNAL: "#6d4c41",
            PauseReason.INTERRUPTED: "#5e35b1",
        }.get(goal.pause_reason or PauseReason.ERROR, "#c62828")
    return {
        GoalState.IDLE: "#78909c",
        GoalState.RUNNING: "#2e7d32",
        GoalState.RESUMING: "#00838f",
        GoalState.DONE: "#33691e",
        GoalState.CANCELLED: "#757575",
        GoalState.FAILED: "#c62828",
    }.get(goal.state, "#757575")


def muted(palette: QPalette) -> QColor:
    """Secondary text: the palette's text colour, half-way to the background."""
    text = palette.color(QPalette.ColorRole.WindowText)
    back = palette.color(QPalette.ColorRole.Window)
    return QColor((text.red() + back.red()) // 2, (text.green() + back.green()) // 2,
                  (text.blue() + back.blue()) // 2)


# -- icons -------------------------------------------------------------------------------------


def _paint_glyph(painter: QPainter, glyph: str, size: float) -> None:
    c = size / 2
    white = QColor("white")
    if glyph == "target":
        painter.setPen(QPen(white, size * 0.08))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawEllipse(QPointF(c, c), size * 0.26, size * 0.26)
        painter.setBrush(white)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.drawEllipse(QPointF(c, c), size * 0.09, size * 0.09)
    elif glyph == "play":
        path = QPainterPath(QPointF(size * 0.38, size * 0.28))
        path.lineTo(QPointF(size * 0.74, size * 0.5))
        path.lineTo(QPointF(size * 0.38, size * 0.72))
        path.closeSubpath()
        painter.fillPath(path, white)
    elif glyph == "wait":
        w, h = size * 0.11, size * 0.42
        painter.fillRect(QRectF(c - w * 1.6, c - h / 2, w, h), white)
        painter.fillRect(QRectF(c + w * 0.6, c - h / 2, w, h), white)
    elif glyph == "alert":
        painter.fillRect(QRectF(c - size * 0.06, size * 0.22, size * 0.12, size * 0.36), white)
        painter.setBrush(white)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.drawEllipse(QPointF(c, size * 0.72), size * 0.075, size * 0.075)


def _pixmap(color: str, glyph: str, size: int) -> QPixmap:
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(color))
    inset = size * 0.04
    painter.drawEllipse(QRectF(inset, inset, size - 2 * inset, size - 2 * inset))
    _paint_glyph(painter, glyph, float(size))
    painter.end()
    return pixmap


def _icon(color: str, glyph: str) -> QIcon:
    icon = QIcon()
    for size in ICON_SIZES:
        icon.addPixmap(_pixmap(color, glyph, size))
    return icon


_GLYPHS = {
    Aggregate.IDLE: "target",
    Aggregate.RUNNING: "play",
    Aggregate.WAITING: "wait",
    Aggregate.ATTENTION: "alert",
}


def app_icon() -> QIcon:
    return _icon("#1565c0", "target")


def app_pixmap(size: int) -> QPixmap:
    return _pixmap("#1565c0", "target", size)


def aggregate_icon(state: Aggregate) -> QIcon:
    return _icon(AGGREGATE_COLORS[state], _GLYPHS[state])
