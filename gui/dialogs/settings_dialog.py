"""The settings dialog: every field of ``config.toml``, validated as you type, saved atomically.

Editors are generated from :func:`gui.settings_source.field_specs` — a check box for a switch, a
list for a choice, a line edit for anything else — so a provider's new setting appears without
touching this file. The Notifications tab also says where the channels' secrets live and, when
the app passes a *tester*, sends a test message with the values as edited (saved or not).
Each edit re-validates the whole set through the same pydantic model the core loads, and shows
the messages next to the fields they concern; Save stays disabled until everything is valid.

Signals: ``saved(Settings, bool)`` after the file was written; the flag says whether a changed
field is one the running engine only reads at start-up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.i18n import localized
from core.settings import Settings
from gui.i18n import QT_TR_NOOP, say, tr
from gui.settings_source import (
    CHOICE_TEXT,
    LANGUAGE_NAMES,
    LIVE_FIELDS,
    PLACEHOLDERS,
    FieldSpec,
    SettingsSource,
    Validation,
    field_specs,
    from_text,
    to_text,
    validate,
)
from gui.tasks import TaskKeeper

ERROR_STYLE = "color: #c62828;"
NOTIFICATIONS_SECTION = "Notifications"
SECRETS_TEXT = QT_TR_NOOP("The ntfy access token and the webhook's signing secret are kept in "
                          "the OS keyring, never in config.toml; store them with<br>"
                          "<code>goalkeeper secret set ntfy-token</code><br>"
                          "<code>goalkeeper secret set webhook-secret</code>")

#: sends a test message with these settings; answers (channel, delivered, reason) per channel
Tester = Callable[[Settings], Awaitable[list[tuple[str, bool, str]]]]
Editor = QCheckBox | QLineEdit | QComboBox


def table_summary(name: str, tables: dict[str, Any], config_file: object) -> str:
    """``2 defined: github-api (capacity), llm (periodic). Edit the [quotas.<name>] tables…``"""
    if tables:
        listed = ", ".join(f"{key} ({value.get('kind', '?')})" if isinstance(value, dict)
                           else key for key, value in sorted(tables.items()))
        head = tr("{n} defined: {listed}.").format(n=len(tables), listed=listed)
    else:
        head = tr("None defined.")
    return tr("{head} Edit the [{name}.<name>] tables in {file}; saving here keeps them as they "
              "are.").format(head=head, name=name, file=config_file)


class SettingsDialog(QDialog):
    """Owns one editor and one inline error label per field."""

    saved = Signal(object, bool)

    def __init__(self, source: SettingsSource, parent: QWidget | None = None,
                 tester: Tester | None = None) -> None:
        super().__init__(parent)
        self.source = source
        self._tester = tester
        self._tasks = TaskKeeper()
        self.setWindowTitle(tr("Goalkeeper settings"))
        self.setAccessibleName(tr("Goalkeeper settings"))
        self.resize(1010, 560)  # every tab visible without scroll arrows
        self.specs = {spec.name: spec for spec in field_specs()}
        self.editors: dict[str, Editor] = {}
        self.errors: dict[str, QLabel] = {}
        self.tables: dict[str, QLabel] = {}
        self.overridden = source.overridden()
        values, problem = source.initial_values()
        self.initial = values
        self.tabs = QTabWidget(self)
        self._build_tabs()
        self.problem = QLabel(self)
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet(ERROR_STYLE)
        self.problem.setAccessibleName(tr("Settings problems"))
        note = QLabel(tr("Notification and start-at-login changes apply at once; the others "
                         "when Goalkeeper next starts. Saved to {file}.").format(
            file=source.config_file), self)
        note.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                        | QDialogButtonBox.StandardButton.Cancel, self)
        defaults = QPushButton(tr("Restore &defaults"), self)
        self.buttons.addButton(defaults, QDialogButtonBox.ButtonRole.ResetRole)
        defaults.clicked.connect(self.restore_defaults)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.problem)
        layout.addWidget(note)
        layout.addWidget(self.buttons)
        self.set_values(values)
        if problem:
            self.problem.setText(tr("{problem}\nShowing the defaults; saving replaces the "
                                    "file.").format(problem=problem))
            self.problem.show()

    # -- construction --------------------------------------------------------------------------

    def _build_tabs(self) -> None:
        forms: dict[str, QFormLayout] = {}
        for spec in self.specs.values():
            if spec.section not in forms:
                page = QWidget()
                forms[spec.section] = QFormLayout(page)
                scroll = QScrollArea(self.tabs)
                scroll.setWidget(page)
                scroll.setWidgetResizable(True)
                self.tabs.addTab(scroll, tr(spec.section))
            self._add_field(forms[spec.section], spec)
        if NOTIFICATIONS_SECTION in forms:
            self._add_notification_extras(forms[NOTIFICATIONS_SECTION])

    def _add_notification_extras(self, form: QFormLayout) -> None:
        secrets = QLabel(tr(SECRETS_TEXT), self)
        secrets.setWordWrap(True)
        secrets.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        secrets.setAccessibleName(tr("Where the notification secrets are kept"))
        form.addRow(secrets)
        self.test_button = QPushButton(tr("Send a &test notification"), self)
        self.test_button.setAccessibleName(tr("Send a test notification"))
        self.test_button.setToolTip(tr("Sends a test message to ntfy and the webhook with the "
                                       "values above, saved or not."))
        self.test_button.setEnabled(self._tester is not None)
        self.test_button.clicked.connect(self.send_test)
        self.test_result = QLabel(self)
        self.test_result.setWordWrap(True)
        self.test_result.setAccessibleName(tr("Test notification result"))
        form.addRow(self.test_button, self.test_result)

    def _add_table(self, form: QFormLayout, spec: FieldSpec) -> None:
        """Nested tables (``[quotas.<name>]``) are edited in the file; shown here, kept on save."""
        label = QLabel(self)
        label.setWordWrap(True)
        label.setAccessibleName(tr(spec.label))
        self.tables[spec.name] = label
        form.addRow(tr("{field}:").format(field=tr(spec.label)), label)

    def _add_field(self, form: QFormLayout, spec: FieldSpec) -> None:
        if spec.kind == "table":
            self._add_table(form, spec)
            return
        editor: Editor
        tip = self._tooltip(spec)
        if spec.kind == "bool":
            editor = QCheckBox(tr(spec.label), self)
            editor.toggled.connect(self.revalidate)
        elif spec.kind == "choice":
            editor = QComboBox(self)
            for value in spec.choices:
                text = LANGUAGE_NAMES.get(value, value)
                editor.addItem(tr(CHOICE_TEXT[value]) if value in CHOICE_TEXT else text, value)
            editor.currentIndexChanged.connect(self.revalidate)
        else:
            editor = QLineEdit(self)
            editor.setPlaceholderText(_placeholder(spec))
            editor.textChanged.connect(self.revalidate)
        editor.setToolTip(tip)
        editor.setAccessibleName(tr(spec.label))
        editor.setAccessibleDescription(tip)
        error = QLabel(self)
        error.setStyleSheet(ERROR_STYLE)
        error.setWordWrap(True)
        error.hide()
        box = QVBoxLayout()
        box.setSpacing(2)
        box.addWidget(editor)
        box.addWidget(error)
        if spec.name in self.overridden:
            editor.setEnabled(False)
            box.addWidget(QLabel(tr("Set by {variable} — the environment wins over the "
                                    "file.").format(variable=self.overridden[spec.name]), self))
        self.editors[spec.name] = editor
        self.errors[spec.name] = error
        if spec.kind == "bool":
            form.addRow(box)
        else:
            label = QLabel(tr("{field}:").format(field=tr(spec.label)), self)
            label.setBuddy(editor)
            label.setToolTip(tip)
            form.addRow(label, box)

    @staticmethod
    def _tooltip(spec: FieldSpec) -> str:
        lines = [say(spec.help)] if spec.help else []
        if spec.bounds:
            lines.append(tr("Allowed: {bounds}").format(bounds=spec.bounds))
        default = to_text(spec, spec.default) or tr("not set")
        lines.append(tr("Default: {default} · {variable} overrides it").format(
            default=default, variable=spec.env_var))
        return "\n".join(lines)

    # -- values --------------------------------------------------------------------------------

    def set_values(self, values: dict[str, Any]) -> None:
        for name, label in self.tables.items():
            label.setText(table_summary(name, values.get(name) or {}, self.source.config_file))
        for name, editor in self.editors.items():
            spec = self.specs[name]
            if isinstance(editor, QCheckBox):
                editor.setChecked(bool(values.get(name)))
            elif isinstance(editor, QComboBox):
                editor.setCurrentIndex(max(0, editor.findData(to_text(spec, values.get(name)))))
            else:
                editor.setText(to_text(spec, values.get(name)))
        self.revalidate()

    def values(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for name, editor in self.editors.items():
            if isinstance(editor, QCheckBox):
                result[name] = editor.isChecked()
            elif isinstance(editor, QComboBox):
                result[name] = editor.currentData()
            else:
                result[name] = from_text(self.specs[name], editor.text())
        return result

    def restore_defaults(self) -> None:
        """Every editable field back to its default; variable-set fields and tables stay."""
        defaults = Settings.model_validate(dict(self.source.defaults)).model_dump()
        for name in [*self.overridden, *self.tables]:
            defaults[name] = self.initial[name]
        self.set_values(defaults)

    def revalidate(self, *_: object) -> Validation:
        result = validate(self.source.merged_for_save(self.values()))
        for name, label in self.errors.items():
            message = result.errors.get(name)
            label.setText(localized(message) if message else "")
            label.setVisible(bool(message))
        self.problem.setText("\n".join(localized(m) for m in result.general))
        self.problem.setVisible(bool(result.general))
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(result.ok)
        self.validation = result
        return result

    # -- the test message ----------------------------------------------------------------------

    def send_test(self) -> asyncio.Task[str]:
        return self._tasks.spawn(self._send_test(), "test-notification")

    async def _send_test(self) -> str:
        self.revalidate()
        # the values as shown, a variable's included (it wins when the app runs)
        result = validate(self.values())
        if self._tester is None or result.settings is None:
            text = tr("Fix the settings above first.") if self._tester else tr(
                "Not available here.")
        elif not (result.settings.notify_ntfy_url or result.settings.notify_webhook_url):
            text = tr("Set an ntfy topic URL or a webhook URL first.")
        else:
            self.test_button.setEnabled(False)
            self.test_result.setText(tr("Sending…"))
            try:
                reports = await self._tester(result.settings)
            finally:
                self.test_button.setEnabled(True)
            text = "\n".join(
                tr("{channel}: delivered").format(channel=channel) if ok
                else tr("{channel}: NOT delivered — {reason}").format(
                    channel=channel, reason=localized(reason)) for channel, ok, reason in reports)
        self.test_result.setText(text)
        return text

    # -- saving --------------------------------------------------------------------------------

    def changed_fields(self, settings: Settings) -> set[str]:
        return {name for name, value in settings.model_dump().items()
                if value != self.initial.get(name)}

    def needs_restart(self, settings: Settings) -> bool:
        return bool(self.changed_fields(settings) - LIVE_FIELDS)

    def save(self) -> asyncio.Task[bool]:
        return self._tasks.spawn(self._save(), "save-settings")

    async def _save(self) -> bool:
        result = self.revalidate()
        if result.settings is None:
            return False
        try:
            await asyncio.to_thread(self.source.save, result.settings)
        except OSError as exc:
            self.problem.setText(tr("Could not write {file}: {error}").format(
                file=self.source.config_file, error=exc.strerror or exc))
            self.problem.show()
            return False
        self.saved.emit(result.settings, self.needs_restart(result.settings))
        self.accept()
        return True


def _placeholder(spec: FieldSpec) -> str:
    """An example for a policy field; "not set" for another optional one."""
    if spec.name in PLACEHOLDERS:
        template, example = PLACEHOLDERS[spec.name]
        return tr(template).format(example=example)
    return tr("not set") if spec.optional else ""
