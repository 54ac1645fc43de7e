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
    assert [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())][:7] == [
        "Resuming", "Keep awake", "Resume policies", "Quota thresholds", "Scheduler",
        "Notifications", "Desktop"]
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


def test_a_file_that_is_not_utf8_is_reported_and_left_alone(tmp_path: Path, qtbot: Any) -> None:
    config = tmp_path / "config.toml"
    config.write_bytes("# 中文注释\nmax_auto_attempts = 5\n".encode("gbk"))
    dialog = make(tmp_path, qtbot)
    assert f"{config} is not UTF-8 text (byte 0xd6 at line 1, column 3)" in dialog.problem.text()
    assert dialog.editors["max_auto_attempts"].text() == "3"  # type: ignore[union-attr]
    assert config.read_bytes() == "# 中文注释\nmax_auto_attempts = 5\n".encode("gbk")


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


@pytest.mark.asyncio
async def test_notification_channels_are_edited_here(tmp_path: Path, qtbot: Any) -> None:
    from PySide6.QtWidgets import QComboBox

    from core.notices import RANKED, Kind

    dialog = make(tmp_path, qtbot, text='notify_webhook_min_kind = "gave_up"\n')
    combo = dialog.editors["notify_ntfy_min_kind"]
    assert isinstance(combo, QComboBox)
    assert [combo.itemData(i) for i in range(combo.count())] == [k.value for k in RANKED]
    assert combo.currentText() == "A resume was scheduled (everything)"
    hook = dialog.editors["notify_webhook_min_kind"]
    assert isinstance(hook, QComboBox) and hook.currentData() == "gave_up"
    assert "goalkeeper secret set ntfy-token" in dialog.editors["notify_ntfy_url"].toolTip()
    edit(dialog, "notify_ntfy_url", "https://me:pw@ntfy.sh/goals")
    assert "user or password" in dialog.errors["notify_ntfy_url"].text()
    assert not save_button(dialog).isEnabled()
    edit(dialog, "notify_ntfy_url", "https://ntfy.sh/my-goals-7f3a")
    combo.setCurrentIndex(combo.findData("failed"))
    assert save_button(dialog).isEnabled()
    assert await dialog.save()
    saved = load_settings(tmp_path / "config.toml", {})
    assert saved.notify_ntfy_url == "https://ntfy.sh/my-goals-7f3a"
    assert saved.notify_ntfy_min_kind is Kind.FAILED
    assert saved.notify_webhook_min_kind is Kind.GAVE_UP
    assert 'notify_ntfy_min_kind = "failed"' in (tmp_path / "config.toml").read_text()
    assert not dialog.needs_restart(saved)  # notification settings apply at once



def test_the_pipeline_kinds_have_their_switches_and_minimums(tmp_path: Path, qtbot: Any) -> None:
    from PySide6.QtWidgets import QCheckBox, QComboBox

    dialog = make(tmp_path, qtbot, text="notify_rested = false\n")
    attention, rested = dialog.editors["notify_needs_attention"], dialog.editors["notify_rested"]
    assert isinstance(attention, QCheckBox) and isinstance(rested, QCheckBox)
    assert (attention.text(), attention.isChecked()) == (
        "A goal stopped on a problem and needs you", True)
    assert (rested.text(), rested.isChecked()) == ("A pipeline run finished", False)
    assert "blocked pipeline run" in attention.toolTip()
    combo = dialog.editors["notify_webhook_min_kind"]
    assert isinstance(combo, QComboBox)
    texts = [combo.itemText(i) for i in range(combo.count())]
    assert texts.index("Needs attention") == texts.index("Failed") + 1
    assert texts.index("A pipeline run finished") == 1  # right after "scheduled"


@pytest.mark.asyncio
async def test_the_test_button_sends_with_the_values_as_edited(tmp_path: Path, qtbot: Any
                                                              ) -> None:
    asked: list[Settings] = []

    async def tester(settings: Settings) -> list[tuple[str, bool, str]]:
        asked.append(settings)
        return [("ntfy", True, ""), ("webhook", False, "HTTP 400 Bad Request")]

    dialog = SettingsDialog(SettingsSource(tmp_path / "config.toml", {}), tester=tester)
    qtbot.addWidget(dialog)
    assert await dialog.send_test() == "Set an ntfy topic URL or a webhook URL first."
    edit(dialog, "notify_webhook_url", "https://hooks.example.org/x")
    edit(dialog, "notify_ntfy_url", "https://ntfy.example.org/goals")
    assert await dialog.send_test() == ("ntfy: delivered\n"
                                        "webhook: NOT delivered — HTTP 400 Bad Request")
    assert dialog.test_result.text().startswith("ntfy: delivered")
    assert asked[0].notify_webhook_url == "https://hooks.example.org/x"  # not saved: edited
    assert not (tmp_path / "config.toml").exists()
    without = make(tmp_path, qtbot)
    assert not without.test_button.isEnabled()
