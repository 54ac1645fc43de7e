"""The set-up assistant's window: what was found, then one explicit choice per line (issue 22).

Every box starts unticked — nothing changes without a tick and *Apply* — and a choice already in
effect is shown ticked and greyed out. The words of each choice (what it is, what it does) are the
core's (``core/setup/assistant.py`` ``CHOICES``), shown through ``localized()``, so the window and
``goalkeeper setup`` say the same.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from core.i18n import localized
from core.setup.assistant import CHOICES, Applied, Choices, Findings
from gui.bridge import Bridge
from gui.i18n import tr
from gui.tasks import TaskKeeper


class SetupDialog(QDialog):
    """The assistant, window-modal, opened with ``open()``.

    Signals:
        applied(list[Applied]): the choices were carried out (empty: "Not now").
    Attributes:
        boxes: the checkbox of each choice, by key; ``ntfy_url`` the phone's topic URL.
    """

    applied = Signal(list)

    def __init__(self, bridge: Bridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._tasks = TaskKeeper()
        self.findings = bridge.setup_findings()
        self.setWindowTitle(tr("Set up Goalkeeper"))
        self.setAccessibleName(tr("Set up Goalkeeper"))
        self.found = QLabel(found_html(self.findings), self)
        self.found.setWordWrap(True)
        self.found.setTextFormat(Qt.TextFormat.RichText)
        self.found.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.boxes: dict[str, QCheckBox] = {}
        self.ntfy_url = QLineEdit(self)
        self.ntfy_url.setPlaceholderText("https://ntfy.sh/my-goals")  # i18n: ignore (an example)
        self.ntfy_url.setAccessibleName(tr("ntfy topic URL"))
        self.outcome = QLabel(self)
        self.outcome.setWordWrap(True)
        self.outcome.hide()
        self.buttons = QDialogButtonBox(self)
        self.apply_button = QPushButton(tr("&Apply"), self)
        self.apply_button.setDefault(True)
        self.later_button = QPushButton(tr("&Not now"), self)
        self.buttons.addButton(self.apply_button, QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton(self.later_button, QDialogButtonBox.ButtonRole.RejectRole)
        self.apply_button.clicked.connect(self.apply)
        self.later_button.clicked.connect(self.not_now)
        self._layout(self._choices_widget())
        self.resize(800, 800)

    def _choices_widget(self) -> QWidget:
        page = QWidget(self)
        column = QVBoxLayout(page)
        column.addWidget(self.found)
        column.addSpacing(6)
        column.addWidget(QLabel(tr("<b>Choose what Goalkeeper may do.</b> Nothing changes unless "
                                   "you tick it; auto-resume stays off until you turn it on."),
                                page))
        for key, title, does in CHOICES:
            box = QCheckBox(localized(title), page)
            if self.findings.already.get(key):
                box.setChecked(True)
                box.setEnabled(False)
                box.setText(tr("{choice} (already on)").format(choice=localized(title)))
            words = QLabel(rich(localized(does)), page)
            words.setTextFormat(Qt.TextFormat.RichText)
            words.setWordWrap(True)
            words.setContentsMargins(24, 0, 0, 6)
            words.setEnabled(box.isEnabled())
            box.setToolTip(localized(does))
            self.boxes[key] = box
            column.addWidget(box)
            column.addWidget(words)
        self.ntfy_url.setEnabled(False)
        self.boxes["ntfy"].toggled.connect(self._on_ntfy_toggled)
        indented = QHBoxLayout()
        indented.addSpacing(24)  # under the choice's words, as they are under its box
        indented.addWidget(self.ntfy_url)
        column.addLayout(indented)
        column.addStretch(1)
        return page

    def _layout(self, choices: QWidget) -> None:
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(choices)
        layout = QVBoxLayout(self)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.outcome)
        layout.addWidget(self.buttons)

    def _on_ntfy_toggled(self, on: bool) -> None:
        self.ntfy_url.setEnabled(on)
        if on:
            self.ntfy_url.setFocus()

    def choices(self) -> Choices:
        """The ticked boxes that are not already in effect."""
        def yes(key: str) -> bool:
            box = self.boxes[key]
            return box.isEnabled() and box.isChecked()

        url = self.ntfy_url.text().strip() if yes("ntfy") else ""
        return Choices(codex_auto_resume=yes("codex_auto_resume"),
                       claude_auto_resume=yes("claude_auto_resume"),
                       claude_hooks=yes("claude_hooks"), start_at_login=yes("start_at_login"),
                       service=yes("service"), ntfy_url=url)

    def apply(self) -> None:
        self.apply_button.setEnabled(False)
        self._tasks.spawn(self._apply(self.choices()), "setup-apply")

    async def _apply(self, choices: Choices) -> list[Applied]:
        done = await self._bridge.apply_setup(choices)
        self.outcome.setText(applied_html(done))
        self.outcome.show()
        self.applied.emit(done)
        if all(a.ok for a in done):
            self.later_button.setText(tr("&Close"))
        else:
            self.apply_button.setEnabled(True)
        self.later_button.clicked.disconnect(self.not_now)
        self.later_button.clicked.connect(self.accept)
        return done

    def not_now(self) -> None:
        self._tasks.spawn(self._not_now(), "setup-skip")

    async def _not_now(self) -> None:
        await self._bridge.skip_setup()
        self.applied.emit([])
        self.reject()


def rich(text: str) -> str:
    """Plain text with its `commands` in code type, as rich text."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text, quote=False))


def _short(path: str) -> str:
    """``~/.codex`` for a path in the home directory (the words the user knows it by)."""
    home = str(Path.home())
    return "~" + path[len(home):] if path == home or path.startswith(home + "/") else path


def found_html(found: Findings) -> str:
    """What was found, as a short list."""
    rows = []
    if found.codex_found:
        rows.append(tr("<b>Codex</b> in {dir}: {n} goals").format(
            dir=html.escape(_short(found.codex_home)), n=found.codex_goals))
    else:
        rows.append(tr("<b>Codex</b>: not found (looked in {dir})").format(
            dir=html.escape(_short(found.codex_home))))
    if found.claude_found:
        rows.append(tr("<b>Claude Code</b> in {dirs}: {n} sessions").format(
            dirs=html.escape(", ".join(map(_short, found.claude_found))), n=found.claude_sessions))
    else:
        rows.append(tr("<b>Claude Code</b>: not found (looked in {dirs})").format(
            dirs=html.escape(", ".join(map(_short, found.claude_dirs)))))
    for name, how in found.quotas:
        rows.append(tr("<b>{provider} quota</b>: {how}").format(
            provider=html.escape(name.capitalize()), how=rich(localized(how))))
    items = "".join(f"<li>{row}</li>" for row in rows)
    return tr("<h2>Set up Goalkeeper</h2>Goalkeeper found:") + f"<ul>{items}</ul>"


def applied_html(done: list[Applied]) -> str:
    if not done:
        return tr("Nothing changed. Goalkeeper → Set up… opens this again any time.")
    return "<br>".join(("✓ " if a.ok else "✗ ") + html.escape(localized(a.text)) for a in done)
