"""A goal's details: every stored field, kept live while the dialog is open (non-modal)."""

from __future__ import annotations

import json
from datetime import datetime

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.i18n.textfmt import long_time
from core.models import Goal
from gui import format as fmt
from gui.bridge import Bridge
from gui.dialogs.goal_policy_form import GoalPolicyForm
from gui.i18n import QT_TR_NOOP, tr

#: the rows, in order (``field()`` takes these English names)
FIELDS = (QT_TR_NOOP("Title"), QT_TR_NOOP("Id"), QT_TR_NOOP("Provider"), QT_TR_NOOP("State"),
          QT_TR_NOOP("Pause reason"), QT_TR_NOOP("Windows"), QT_TR_NOOP("Auto-resume"),
          QT_TR_NOOP("Next auto-resume"), QT_TR_NOOP("Quota resets"), QT_TR_NOOP("Attempts"),
          QT_TR_NOOP("Budget spent"), QT_TR_NOOP("Last run"), QT_TR_NOOP("Last resumed"),
          QT_TR_NOOP("Created"), QT_TR_NOOP("Last change"))


def _when(instant: datetime | None) -> str:
    return long_time(instant) if instant else "—"


class GoalDetailsDialog(QDialog):
    """Shows one goal. Signals: ``history_requested(str)`` — show this goal's history."""

    history_requested = Signal(str)

    def __init__(self, bridge: Bridge, goal_id: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self.goal_id = goal_id
        self.setWindowTitle(tr("Goal details"))
        self.setAccessibleName(tr("Goal details"))
        self.resize(600, 720)
        self._fields: dict[str, QLabel] = {}
        form = QFormLayout()
        for name in FIELDS:
            label = QLabel(self)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                          | Qt.TextInteractionFlag.TextSelectableByKeyboard)
            label.setWordWrap(True)
            label.setAccessibleName(tr(name))
            self._fields[name] = label
            form.addRow(tr("{field}:").format(field=tr(name)), label)
        self.data_view = QPlainTextEdit(self)
        self.data_view.setReadOnly(True)
        self.data_view.setAccessibleName(tr("Provider data"))
        form.addRow(tr("Provider data:"), self.data_view)
        self.policy_form = GoalPolicyForm(bridge, goal_id, self)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        history = QPushButton(tr("Show &history"), self)
        buttons.addButton(history, QDialogButtonBox.ButtonRole.ActionRole)
        history.clicked.connect(lambda: self.history_requested.emit(self.goal_id))
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.policy_form)
        layout.addWidget(buttons)
        bridge.goals_changed.connect(self._on_bridge_goals_changed)
        self.refresh()

    def _on_bridge_goals_changed(self, goals: list[Goal]) -> None:
        if any(goal.id == self.goal_id for goal in goals):
            self.refresh()
            self.policy_form.show_policy()

    def field(self, name: str) -> str:
        return self._fields[name].text()

    def refresh(self) -> None:
        goal = self._bridge.goal(self.goal_id)
        if goal is None:
            self._fields["State"].setText(tr("no longer watched"))
            return
        now = self._bridge.now()
        state = tr("{state} since {when}").format(state=fmt.state_text(goal),
                                                  when=_when(goal.state_since))
        values = {
            "Title": goal.title,
            "Id": goal.id,
            "Provider": goal.provider,
            "State": state,
            "Pause reason": fmt.reason_text(goal) or "—",
            "Windows": ", ".join(goal.windows) or "—",
            "Auto-resume": tr("on") if goal.auto_resume else tr("off"),
            "Next auto-resume": fmt.next_resume_tooltip(goal, now) or "—",
            "Quota resets": _when(goal.resets_at),
            "Attempts": tr("{attempts} in this episode (runner fence {fence})").format(
                attempts=fmt.attempts_text(goal, self._bridge.max_attempts), fence=goal.fence),
            "Budget spent": fmt.budget_text(goal, now) or "—",
            "Last run": fmt.last_run_text(goal) or "—",
            "Last resumed": _when(goal.resumed_at),
            "Created": _when(goal.created_at),
            "Last change": _when(goal.updated_at),
        }
        for name, value in values.items():
            self._fields[name].setText(value)
        self.setWindowTitle(tr("Goal details — {title}").format(title=goal.title))
        self.data_view.setPlainText(json.dumps(goal.data, indent=2, sort_keys=True, default=str))
