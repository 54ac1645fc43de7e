"""A goal's details in the user's words, kept live while the dialog is open (non-modal).

Times are in the window's zone, as the table shows them (the full instant in each tooltip);
what only a developer needs — the goal's id, the runner fence, the provider's raw data — is
behind a "Technical details" expander.
"""

from __future__ import annotations

import json
from datetime import datetime, tzinfo

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.i18n import localized
from core.i18n.textfmt import long_time, short_time
from core.models import Goal
from gui import format as fmt
from gui.bridge import Bridge
from gui.dialogs.goal_policy_form import GoalPolicyForm
from gui.i18n import QT_TR_NOOP, tr

#: the rows, in order (``field()`` takes these English names)
FIELDS = (QT_TR_NOOP("Title"), QT_TR_NOOP("Provider"), QT_TR_NOOP("State"),
          QT_TR_NOOP("Pause reason"), QT_TR_NOOP("Windows"), QT_TR_NOOP("Auto-resume"),
          QT_TR_NOOP("Next auto-resume"), QT_TR_NOOP("Quota resets"), QT_TR_NOOP("Attempts"),
          QT_TR_NOOP("Budget spent"), QT_TR_NOOP("Last run"), QT_TR_NOOP("Last resumed"),
          QT_TR_NOOP("Created"), QT_TR_NOOP("Last change"))
#: the rows behind "Technical details"
TECHNICAL = (QT_TR_NOOP("Id"), QT_TR_NOOP("Runner fence"))


def _selectable(parent: QWidget, name: str) -> QLabel:
    label = QLabel(parent)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                  | Qt.TextInteractionFlag.TextSelectableByKeyboard)
    label.setWordWrap(True)
    label.setAccessibleName(tr(name))
    return label


class GoalDetailsDialog(QDialog):
    """Shows one goal. Signals: ``history_requested(str)`` — show this goal's history.

    Attributes:
        zone: the window's time zone (None: the local one).
        technical: the expander's content (id, runner fence, provider data), hidden at first.
    """

    history_requested = Signal(str)

    def __init__(self, bridge: Bridge, goal_id: str, parent: QWidget | None = None,
                 zone: tzinfo | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self.goal_id = goal_id
        self.zone = zone
        self.setWindowTitle(tr("Goal details"))
        self.setAccessibleName(tr("Goal details"))
        self.resize(600, 540)
        self._fields: dict[str, QLabel] = {}
        form = QFormLayout()
        for name in FIELDS:
            self._fields[name] = _selectable(self, name)
            form.addRow(tr("{field}:").format(field=tr(name)), self._fields[name])
        self.technical_button = QToolButton(self)
        self.technical_button.setText(tr("Technical details"))
        self.technical_button.setCheckable(True)
        self.technical_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.technical_button.setArrowType(Qt.ArrowType.RightArrow)
        self.technical_button.setAutoRaise(True)
        self.technical = self._technical_box()
        self.technical_button.toggled.connect(self._on_technical_toggled)
        self.policy_form = GoalPolicyForm(bridge, goal_id, self)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        history = QPushButton(tr("Show &history"), self)
        buttons.addButton(history, QDialogButtonBox.ButtonRole.ActionRole)
        history.clicked.connect(lambda: self.history_requested.emit(self.goal_id))
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.policy_form)
        layout.addWidget(self.technical_button)
        layout.addWidget(self.technical, 1)
        layout.addStretch(0)
        layout.addWidget(buttons)
        bridge.goals_changed.connect(self._on_bridge_goals_changed)
        self.refresh()

    def _technical_box(self) -> QWidget:
        box = QWidget(self)
        form = QFormLayout(box)
        form.setContentsMargins(18, 0, 0, 0)
        for name in TECHNICAL:
            self._fields[name] = _selectable(box, name)
            form.addRow(tr("{field}:").format(field=tr(name)), self._fields[name])
        self.data_view = QPlainTextEdit(box)
        self.data_view.setReadOnly(True)
        self.data_view.setAccessibleName(tr("Provider data"))
        form.addRow(tr("Provider data:"), self.data_view)
        box.hide()
        return box

    def _on_technical_toggled(self, shown: bool) -> None:
        self.technical.setVisible(shown)
        self.technical_button.setArrowType(Qt.ArrowType.DownArrow if shown
                                           else Qt.ArrowType.RightArrow)

    def _on_bridge_goals_changed(self, goals: list[Goal]) -> None:
        if any(goal.id == self.goal_id for goal in goals):
            self.refresh()
            self.policy_form.show_policy()

    def field(self, name: str) -> str:
        return self._fields[name].text()

    def field_tooltip(self, name: str) -> str:
        return self._fields[name].toolTip()

    def _when(self, instant: datetime | None) -> str:
        return short_time(instant, self._bridge.now(), self.zone) if instant else "—"

    def _window_names(self, goal: Goal) -> str:
        names = []
        for window_id in goal.windows:
            reading = self._bridge.reading(window_id)
            names.append(localized(reading.label) if reading is not None else window_id)
        return tr(", ").join(names) or "—"

    def refresh(self) -> None:
        goal = self._bridge.goal(self.goal_id)
        if goal is None:
            self._fields["State"].setText(tr("no longer watched"))
            return
        now = self._bridge.now()
        state = tr("{state} since {when}").format(state=fmt.state_text(goal),
                                                  when=self._when(goal.state_since))
        values = {
            "Title": goal.title,
            "Provider": goal.provider,
            "State": state,
            "Pause reason": fmt.reason_text(goal) or "—",
            "Windows": self._window_names(goal),
            "Auto-resume": tr("on") if goal.auto_resume else tr("off"),
            "Next auto-resume": fmt.next_resume_text(goal, now, self.zone) or "—",
            "Quota resets": self._when(goal.resets_at),
            "Attempts": tr("{attempts} of {cap} automatic resumes tried since it paused").format(
                attempts=goal.attempts, cap=self._bridge.max_attempts),
            "Budget spent": fmt.budget_text(goal, now) or "—",
            "Last run": fmt.last_run_text(goal) or "—",
            "Last resumed": self._when(goal.resumed_at),
            "Created": self._when(goal.created_at),
            "Last change": self._when(goal.updated_at),
            "Id": goal.id,
            "Runner fence": str(goal.fence),
        }
        for name, value in values.items():
            self._fields[name].setText(value)
        instants = {"Quota resets": goal.resets_at, "Last resumed": goal.resumed_at,
                    "Created": goal.created_at, "Last change": goal.updated_at,
                    "State": goal.state_since}
        for name, instant in instants.items():
            self._fields[name].setToolTip(long_time(instant, self.zone) if instant else "")
        self._fields["Windows"].setToolTip(", ".join(goal.windows))
        self._fields["Next auto-resume"].setToolTip(
            fmt.next_resume_tooltip(goal, now, self.zone))
        self.setWindowTitle(tr("Goal details — {title}").format(title=goal.title))
        self.data_view.setPlainText(json.dumps(goal.data, indent=2, sort_keys=True, default=str))
