"""The first-run page: nothing found yet — what was looked for and where, and what to do next."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from core.i18n import localized
from gui.bridge import Bridge
from gui.i18n import QT_TR_NOOP, tr

ADD_PIPELINE = QT_TR_NOOP(
    "<b>Watch a job of your own:</b> describe it in a pipeline goal file (a TOML file with its "
    "sources and stages — see “Pipeline goals” in the user guide, docs/user-guide.md) and run "
    "<code>goalkeeper add my-job.toml</code>. Codex goals and Claude Code sessions show up here "
    "by themselves once Goalkeeper finds them."
)


class FirstRunPage(QWidget):
    """Signals: ``demo_requested()``, ``refresh_requested()``, ``settings_requested()``,
    ``setup_requested()`` (the set-up assistant)."""

    demo_requested = Signal()
    refresh_requested = Signal()
    settings_requested = Signal()
    setup_requested = Signal()

    def __init__(self, bridge: Bridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self.setAccessibleName(tr("Getting started"))
        title = QLabel(tr("<h2>Nothing to watch yet</h2>"), self)
        self.looked = QLabel(self)
        self.looked.setWordWrap(True)
        self.looked.setTextFormat(Qt.TextFormat.RichText)
        self.looked.setAccessibleName(tr("Where Goalkeeper looked"))
        how = QLabel(tr(ADD_PIPELINE), self)
        how.setWordWrap(True)
        how.setTextFormat(Qt.TextFormat.RichText)
        self.demo_button = QPushButton(tr("Try the &demo"), self)
        self.demo_button.setToolTip(tr("Opens a separate Goalkeeper window on a throw-away data "
                                       "directory: three simulated goals run out of a one-minute "
                                       "quota and are resumed automatically. Your data is "
                                       "untouched."))
        self.demo_button.setDefault(True)
        refresh = QPushButton(tr("&Look again"), self)
        settings = QPushButton(tr("&Settings…"), self)
        self.setup_button = QPushButton(tr("Set &up…"), self)
        self.setup_button.setToolTip(tr("What Goalkeeper found, and the choices that put it to "
                                        "work on your agents"))
        self.setup_button.clicked.connect(self.setup_requested.emit)
        self.demo_button.clicked.connect(self.demo_requested.emit)
        refresh.clicked.connect(self.refresh_requested.emit)
        settings.clicked.connect(self.settings_requested.emit)
        buttons = QHBoxLayout()
        for button in (self.demo_button, self.setup_button, refresh, settings):
            buttons.addWidget(button)
        buttons.addStretch(1)
        card = QVBoxLayout()
        card.addWidget(title)
        card.addWidget(self.looked)
        card.addSpacing(8)
        card.addWidget(how)
        card.addSpacing(12)
        card.addLayout(buttons)
        outer = QHBoxLayout(self)
        outer.addStretch(1)
        column = QWidget(self)
        column.setLayout(card)
        column.setMaximumWidth(760)
        outer.addWidget(column, 4)
        outer.addStretch(1)
        self.refresh()

    def refresh(self) -> None:
        items = "".join(f"<li><b>{html.escape(name)}</b> — {html.escape(localized(text))}</li>"
                        for name, text in self._bridge.looked_for())
        self.looked.setText(tr("Goalkeeper looked for goals and quota windows here:")
                            + f"<ul>{items}</ul>")

    def looked_for_text(self) -> str:
        return self.looked.text()
