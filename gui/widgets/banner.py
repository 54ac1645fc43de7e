"""The result banner above the goals table: the last action's answer, in the engine's words."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from gui.i18n import tr

SUCCESS_SECONDS = 10
FAILURE_SECONDS = 30


class ResultBanner(QFrame):
    """Shows one message; successes fade after 10 s, refusals and failures after 30 s."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultBanner")
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setAccessibleName(tr("Last action result"))
        close = QToolButton(self)
        close.setText("✕")
        close.setAutoRaise(True)
        close.setAccessibleName(tr("Dismiss message"))
        close.setToolTip(tr("Dismiss"))
        close.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(close)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.hide)
        self.ok = True
        self.hide()

    @property
    def text(self) -> str:
        return self.label.text()

    def show_message(self, text: str, ok: bool) -> None:
        self.ok = ok
        self.label.setText(text)
        color = "#2e7d32" if ok else "#c62828"
        self.setStyleSheet(
            f"#resultBanner {{ border: 1px solid {color}; border-left: 5px solid {color};"
            " border-radius: 3px; }")
        self.show()
        self._timer.start(1000 * (SUCCESS_SECONDS if ok else FAILURE_SECONDS))
