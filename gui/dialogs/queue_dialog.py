"""Goal → Start at the reset…: new work queued to start right after a window's next reset —
a Codex goal (on a new or a given thread) or a Claude prompt, in a directory.

The request is checked here as ``goalkeeper queue`` checks it (:func:`core.goals.queued.
queue_problem`: the directory exists, the text is not empty, the window is the provider's),
then sent through the bridge as the :class:`~core.commands.Queue` command. The dialog stays
open until the host answers: a refusal is shown in it, a queued start closes it (the status
bar says when the work starts, as for every action).
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from core.commands import ActionResult, Command, Queue
from core.goals.queued import QUEUE_PROVIDERS, queue_problem
from core.i18n import localized
from core.i18n.textfmt import long_time
from core.policies.reserve_table import known_windows
from gui.bridge import Bridge
from gui.format import result_text
from gui.i18n import QT_TR_NOOP, tr

PROVIDERS = (("codex", QT_TR_NOOP("Codex goal")), ("claude", QT_TR_NOOP("Claude prompt")))


class QueueDialog(QDialog):
    """The Start at the reset… form. Owns nothing but its widgets; the command's result comes
    back on the bridge's ``action_finished``.

    Signals: ``queued(ActionResult)`` — the host queued the work (the dialog then closes).
    """

    queued = Signal(object)

    def __init__(self, bridge: Bridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._sent: Queue | None = None
        self.setWindowTitle(tr("Start at the reset"))
        self.setAccessibleName(tr("Start at the reset"))
        self.resize(560, 380)
        intro = QLabel(tr("Start new work right after a quota window's next reset, instead of "
                          "spending the last of this one. Goalkeeper starts it once, after a "
                          "fresh reading shows the window was reset, under your reserve and "
                          "allowed hours."), self)
        intro.setWordWrap(True)
        self.provider = QComboBox(self)
        for name, label in PROVIDERS:
            self.provider.addItem(tr(label), name)
        self.provider.setAccessibleName(tr("Agent"))
        self.directory = QLineEdit(self)
        self.directory.setAccessibleName(tr("Directory"))
        self.directory.setPlaceholderText(tr("the project's directory"))
        browse = QPushButton(tr("Browse…"), self)
        browse.clicked.connect(self._on_browse_clicked)
        row = QHBoxLayout()
        row.addWidget(self.directory, 1)
        row.addWidget(browse)
        self.thread_field = QLineEdit(self)
        self.thread_field.setAccessibleName(tr("Thread"))
        self.thread_field.setPlaceholderText(tr("optional: an existing Codex thread id"))
        self.text = QPlainTextEdit(self)
        self.text.setAccessibleName(tr("Objective"))
        self.window_box = QComboBox(self)
        self.window_box.setAccessibleName(tr("Window"))
        self.when = QLabel(self)
        self.when.setWordWrap(True)
        self.error = QLabel(self)
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b00020;")
        self.error.hide()
        form = QFormLayout()
        form.addRow(tr("Agent"), self.provider)
        form.addRow(tr("Directory"), row)
        self.thread_label = QLabel(tr("Thread"), self)
        form.addRow(self.thread_label, self.thread_field)
        self.text_label = QLabel(self)
        form.addRow(self.text_label, self.text)
        form.addRow(tr("Window"), self.window_box)
        form.addRow("", self.when)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.queue_button = self.buttons.addButton(tr("Queue"),
                                                   QDialogButtonBox.ButtonRole.AcceptRole)
        self.queue_button.setIcon(self.style().standardIcon(
            QStyle.StandardPixmap.SP_DialogOkButton))  # as Cancel has its own
        self.queue_button.setDefault(True)
        self.buttons.accepted.connect(self._on_buttons_accepted)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.provider.currentIndexChanged.connect(self._on_provider_changed)
        self.window_box.currentIndexChanged.connect(self._on_window_changed)
        bridge.action_finished.connect(self._on_bridge_action_finished)
        self._on_provider_changed()

    # -- what the form says ---------------------------------------------------------------------

    def command(self) -> Queue:
        name = str(self.provider.currentData())
        return Queue("", provider=name, cwd=self.directory.text().strip(),
                     text=self.text.toPlainText().strip(),
                     window=str(self.window_box.currentData() or ""),
                     thread=self.thread_field.text().strip() if name == "codex" else "")

    def _on_provider_changed(self, _index: int = 0) -> None:
        name = str(self.provider.currentData())
        codex = name == "codex"
        self.thread_field.setVisible(codex)
        self.thread_label.setVisible(codex)
        self.text_label.setText(tr("Objective") if codex else tr("Prompt"))
        self.text.setAccessibleName(self.text_label.text())
        self.text.setPlaceholderText(tr("what the goal should achieve") if codex
                                     else tr("what Claude should do"))
        self.window_box.blockSignals(True)
        self.window_box.clear()
        for window in known_windows().get(name, ()):
            self.window_box.addItem(self._window_label(window), window)
        self.window_box.setCurrentIndex(max(0, self.window_box.findData(QUEUE_PROVIDERS[name])))
        self.window_box.blockSignals(False)
        self._on_window_changed()

    def _window_label(self, window: str) -> str:
        """The quota's own name where a reading gave one ("Codex · 5 h (codex:5h)")."""
        reading = self._bridge.reading(window)
        if reading is None or reading.label in ("", window):
            return window
        return tr("{label} ({window})").format(label=localized(reading.label), window=window)

    def _on_window_changed(self, _index: int = 0) -> None:
        window = str(self.window_box.currentData() or "")
        reading = self._bridge.reading(window) if window else None
        if reading is None or reading.resets_at is None:
            self.when.setText(tr("No reset time is known for {window} yet: Goalkeeper needs a "
                                 "reading of it first.").format(window=window))
        else:
            self.when.setText(tr("{window} resets next at {time}; the work starts right "
                                 "after.").format(window=self._window_label(window),
                                                  time=long_time(reading.resets_at)))

    def _on_browse_clicked(self) -> None:
        picker = QFileDialog(self, tr("Directory"), self.directory.text())
        picker.setFileMode(QFileDialog.FileMode.Directory)
        picker.setOption(QFileDialog.Option.ShowDirsOnly, True)
        picker.fileSelected.connect(self.directory.setText)
        picker.open()  # never exec() under qasync

    # -- sending it -----------------------------------------------------------------------------

    def _on_buttons_accepted(self) -> None:
        command = self.command()
        problem = queue_problem(command.provider, command.cwd, command.text, command.window,
                                known_windows())
        if problem is not None:
            self.show_error(localized(problem))
            return
        self.error.hide()
        self.queue_button.setEnabled(False)
        self._sent = command
        self._bridge.request(command)

    def show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.show()

    def _on_bridge_action_finished(self, command: Command, result: ActionResult) -> None:
        if self._sent is None or command is not self._sent:
            return
        self._sent = None
        self.queue_button.setEnabled(True)
        if result.carried_out:
            self.queued.emit(result)
            self.accept()
        else:
            self.show_error(result_text(command, result, now=self._bridge.now()))
