"""The settings dialog: every field, inline validation, atomic save, environment overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QCheckBox, QDialogButtonBox, QLineEdit

from core.settings import TABLE_FIELDS, Settings, load_settings
from gui.dialogs.settings_dialog import SettingsDialog
from gui.settings_source import SettingsSource, field_specs, validate


def make(tmp_path: Path, qtbot: Any, environ: dict[str, str] | None = None,
         text: str = "") -> SettingsDialog:
    config = tmp_path / "config.toml"
    if text:
        config.write_text(text)
    dialog = SettingsDialog(SettingsSource(config, environ or {}))
    qtbot.addWidget(dialog)
    return dialog


def edit(dialog: SettingsDialog, name: str, text: str) -> None:
    editor = dialog.editors[name]
    assert isinstance(editor, QLineEdit)
    editor.setText(text)


def save_button(dialog: SettingsDialog) -> Any:
    return dialog.buttons.button(QDialogButtonBox.StandardButton.Save)


def test_every_setting_has_an_editor(tmp_path: Path, qtbot: Any) -> None:
    dialog = make(tmp_path, qtbot)
    assert set(dialog.editors) | set(dialog.tables) == set(Settings.model_fields)
    assert set(dialog.tables) == set(TABLE_FIELDS)
    assert isinstance(dialog.editors["notify_resumed"], QCheckBox)
    assert isinstance(dialog.editors["max_auto_attempts"], QLineEdit)
    assert [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())][:6] == [
        "Resuming", "Resume policies", "Quota thresholds", "Scheduler", "Notifications",
        "Desktop"]
    for name, editor in dialog.editors.items():
        assert editor.accessibleName(), name
        assert "Default:" in editor.toolTip()


def test_shows_the_file_values(tmp_path: Path, qtbot: Any) -> None:
    dialog = make(tmp_path, qtbot, text="max_auto_attempts = 5\nnotify_done = false\n")
    assert dialog.editors["max_auto_attempts"].text() == "5"  # type: ignore[union-attr]
    assert not dialog.editors["notify_done"].isChecked()  # type: ignore[union-attr]
    assert dialog.editors["resume_margin_seconds"].text() == "45"  # type: ignore[union-attr]


def test_inline_validation_per_field_and_across_fields(tmp_path: Path, qtbot: Any) -> None:
    dialog = make(tmp_path, qtbot)
    assert save_button(dialog).isEnabled()
    edit(dialog, "max_auto_attempts", "lots")
    assert not dialog.errors["max_auto_attempts"].isHidden()
    assert "valid integer" in dialog.errors["max_auto_attempts"].text()
    assert not save_button(dialog).isEnabled()
    edit(dialog, "max_auto_attempts", "0")
    assert "greater than or equal to 1" in dialog.errors["max_auto_attempts"].text()
    edit(dialog, "max_auto_attempts", "4")
    assert dialog.errors["max_auto_attempts"].isHidden()
    assert save_button(dialog).isEnabled()

    edit(dialog, "fallback_poll_min_seconds", "1000")  # more than the max (900)
    assert not save_button(dialog).isEnabled()
    assert "must not exceed" in dialog.errors["fallback_poll_min_seconds"].text()
    assert "must not exceed" in dialog.errors["fallback_poll_max_seconds"].text()
    assert not dialog.problem.isHidden()
    edit(dialog, "fallback_poll_max_seconds", "2000")
    assert save_button(dialog).isEnabled() and dialog.problem.isHidden()


@pytest.mark.asyncio
async def test_save_writes_the_file_atomically_and_reports(tmp_path: Path, qtbot: Any) -> None:
    dialog = make(tmp_path, qtbot, text="# mine\nstable_seconds = 10\n")
    saved: list[tuple[Settings, bool]] = []
    dialog.saved.connect(lambda settings, restart: saved.append((settings, restart)))
    edit(dialog, "max_auto_attempts", "5")
    dialog.editors["notify_done"].setChecked(False)  # type: ignore[union-attr]
    assert await dialog.save()
    settings = load_settings(tmp_path / "config.toml", {})
    assert settings.max_auto_attempts == 5 and not settings.notify_done
    assert settings.stable_seconds == 10
    assert saved == [(settings, True)]
    assert dialog.needs_restart(settings)  # max_auto_attempts is read at start-up
    assert not list(tmp_path.glob(".config.toml.*"))  # no temp file left behind


@pytest.mark.asyncio
async def test_environment_overrides_are_shown_but_not_saved(tmp_path: Path, qtbot: Any) -> None:
    env = {"GOALKEEPER_MAX_AUTO_ATTEMPTS": "9"}
    dialog = make(tmp_path, qtbot, env, text="max_auto_attempts = 2\n")
    editor = dialog.editors["max_auto_attempts"]
    assert not editor.isEnabled() and editor.text() == "9"  # type: ignore[union-attr]
    edit(dialog, "stable_seconds", "12")
    assert await dialog.save()
    written = load_settings(tmp_path / "config.toml", {})
    assert written.max_auto_attempts == 2  # the file keeps its own value
    assert written.stable_seconds == 12


def test_restore_defaults(tmp_path: Path, qtbot: Any) -> None:
    dialog = make(tmp_path, qtbot, text="max_auto_attempts = 5\n")
    dialog.restore_defaults()
    assert dialog.editors["max_auto_attempts"].text() == "3"  # type: ignore[union-attr]


def test_a_broken_file_is_reported_and_the_defaults_shown(tmp_path: Path, qtbot: Any) -> None:
    dialog = make(tmp_path, qtbot, text="max_auto_attempts = [\n")
    assert "not valid TOML" in dialog.problem.text()
    assert dialog.editors["max_auto_attempts"].text() == "3"  # type: ignore[union-attr]


def test_provider_fields_get_editors_from_their_type() -> None:
    kinds = {s.name: s.kind for s in field_specs()}
    assert kinds["notify_done"] == "bool" and kinds["max_auto_attempts"] == "int"
    assert kinds["stable_seconds"] == "float"
    assert validate({"stable_seconds": "x"}).errors["stable_seconds"].startswith(
        "Input should be a valid number")


@pytest.mark.asyncio
async def test_quota_tables_are_shown_and_kept(tmp_path: Path, qtbot: Any) -> None:
    text = ('max_auto_attempts = 4\n\n[quotas.github-api]\nkind = "periodic"\nlimit = 100\n'
            'period = "day"\n')
    dialog = make(tmp_path, qtbot, text=text)
    summary = dialog.tables["quotas"].text()
    assert summary.startswith("1 defined: github-api (periodic).")
    dialog.restore_defaults()
    assert dialog.tables["quotas"].text() == summary
    edit(dialog, "stable_seconds", "11")
    assert await dialog.save()
    saved = load_settings(tmp_path / "config.toml", {})
    assert list(saved.quotas) == ["github-api"] and saved.stable_seconds == 11
    assert saved.max_auto_attempts == 3  # restored to its default before saving


def test_every_setting_sits_in_a_known_section_or_its_providers_tab() -> None:
    """A new general setting must be placed by hand; only provider settings get a tab by name."""
    from core.providers.registry import SPECS
    from gui.settings_source import SECTIONS, TABLES_SECTION

    allowed = {title for title, _ in SECTIONS} | {TABLES_SECTION}
    allowed |= {spec.name.capitalize() for spec in SPECS}
    stray = {s.name: s.section for s in field_specs() if s.section not in allowed}
    assert stray == {}
