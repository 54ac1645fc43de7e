"""A goal's own resume policy in its details dialog: priority, budget, allowed hours.

Each value is checked as you type with the core's own check
(:meth:`core.policies.goal_policy.GoalPolicy.with_value`, the one ``goalkeeper goal set`` uses),
its message shown under the field; *Apply* sends each changed value through the bridge
(``goal_set``) and shows what the engine answered.

Signals: none of its own — results come back on the bridge's ``action_finished``.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.commands import ActionResult, Command, SetGoalPolicy
from core.i18n import localized
from core.policies.goal_policy import GoalPolicy, PolicyValueError
from gui import format as fmt
from gui.bridge import Bridge
from gui.i18n import tr

ERROR_STYLE = "color: #c62828;"


class GoalPolicyForm(QGroupBox):
    """Owns the three editors, their error labels, the Apply button and the result line."""

    def __init__(self, bridge: Bridge, goal_id: str, parent: QWidget | None = None) -> None:
        super().__init__(tr("Resume policy"), parent)
        self._bridge = bridge
        self.goal_id = goal_id
        self.priority = QSpinBox(self)
        self.priority.setRange(-100, 100)
        self.priority.setAccessibleName(tr("Priority"))
        self.priority.setToolTip(tr("Goals waiting on the same window resume highest first; "
                                    "equal ones by the oldest pause."))
        self.budget = QLineEdit(self)
        self.budget.setAccessibleName(tr("Budget per window period (%)"))
        self.budget.setPlaceholderText(tr("e.g. {example} — empty: no budget").format(
            example="20"))
        self.budget.setToolTip(tr("At most this share of a window per window period; reaching "
                                  "it pauses the goal (reason budget) until the window resets."))
        self.hours = QLineEdit(self)
        self.hours.setAccessibleName(tr("Allowed hours"))
        self.hours.setToolTip(tr("When automatic resumes of this goal may start, e.g. "
                                 "Mon-Fri 19:00-08:00; empty: the global hours."))
        self.errors = {key: self._error_label() for key in ("budget_percent", "auto_resume_hours")}
        self.apply_button = QPushButton(tr("&Apply"), self)
        self.apply_button.clicked.connect(self.apply)
        self.result = QLabel(self)
        self.result.setWordWrap(True)
        self.result.setAccessibleName(tr("Resume policy result"))
        self._build()
        for signal in (self.priority.valueChanged, self.budget.textChanged,
                       self.hours.textChanged):
            signal.connect(self.revalidate)
        bridge.action_finished.connect(self._on_bridge_action_finished)
        self._shown = GoalPolicy()
        self.show_policy(force=True)

    def _error_label(self) -> QLabel:
        label = QLabel(self)
        label.setStyleSheet(ERROR_STYLE)
        label.setWordWrap(True)
        label.hide()
        return label

    def _build(self) -> None:
        form = QFormLayout()
        form.addRow(tr("Priority:"), self.priority)
        form.addRow(tr("Budget (% of a window):"),
                    self._with_error(self.budget, "budget_percent"))
        form.addRow(tr("Allowed hours:"), self._with_error(self.hours, "auto_resume_hours"))
        buttons = QHBoxLayout()
        buttons.addWidget(self.result, 1)
        buttons.addWidget(self.apply_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)

    def _with_error(self, editor: QWidget, key: str) -> QVBoxLayout:
        box = QVBoxLayout()
        box.setSpacing(2)
        box.addWidget(editor)
        box.addWidget(self.errors[key])
        return box

    # -- values --------------------------------------------------------------------------------

    def show_policy(self, force: bool = False) -> None:
        """Put the goal's stored policy into the editors (not over the user's own edits)."""
        goal = self._bridge.goal(self.goal_id)
        if goal is None or (self.edited() and not force):
            return
        self._shown = goal.policy
        self.priority.setValue(goal.policy.priority)
        self.budget.setText(goal.policy.value_text("budget_percent"))
        self.hours.setText(goal.policy.auto_resume_hours)
        hours = self._bridge.settings.auto_resume_hours
        example = "Mon-Fri 19:00-08:00"
        self.hours.setPlaceholderText(
            tr("e.g. {example} — empty: the global hours, {hours}").format(
                example=example, hours=hours) if hours
            else tr("e.g. {example} — empty: any time").format(example=example))
        self.revalidate()

    def edited_values(self) -> dict[str, str]:
        return {"priority": str(self.priority.value()), "budget_percent": self.budget.text(),
                "auto_resume_hours": self.hours.text()}

    def edited(self) -> bool:
        return bool(self.changes())

    def changes(self) -> dict[str, str]:
        """The keys whose edited value differs from the stored policy."""
        changed = {}
        for key, text in self.edited_values().items():
            try:
                value = self._shown.with_value(key, text)
            except PolicyValueError:
                changed[key] = text
                continue
            if value != self._shown:
                changed[key] = text
        return changed

    def revalidate(self, *_: object) -> bool:
        ok = True
        for key, label in self.errors.items():
            try:
                GoalPolicy().with_value(key, self.edited_values()[key])
                message = ""
            except PolicyValueError as exc:
                message, ok = localized(str(exc)), False
            label.setText(message)
            label.setVisible(bool(message))
        self.apply_button.setEnabled(ok and self.edited())
        return ok

    # -- applying ------------------------------------------------------------------------------

    def apply(self) -> None:
        if not self.revalidate():
            return
        for key, text in self.changes().items():
            self._bridge.request(SetGoalPolicy(self.goal_id, key, text))
        self.apply_button.setEnabled(False)

    def _on_bridge_action_finished(self, command: Command, result: ActionResult) -> None:
        if not isinstance(command, SetGoalPolicy) or result.goal != self.goal_id:
            return
        self.result.setText(fmt.result_text(command, result, now=self._bridge.now()))
        goal = self._bridge.goal(self.goal_id)
        if goal is not None and result.outcome.carried_out:
            self._shown = goal.policy
        self.revalidate()

