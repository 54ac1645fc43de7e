"""The snapshot of validated settings (:mod:`core.settings.snapshot`): the same settings as a
validation, used only while nothing validation read has changed, never trusted otherwise."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from core.notices import Kind
from core.settings import SettingsError, load_settings, read_settings
from core.settings.schema import Settings
from core.settings.snapshot import FORMAT, SettingsSnapshot

CONFIG = ('resume_margin_seconds = 60\n'
          'max_auto_attempts = 5\n'
          'auto_resume_hours = "Mon-Fri 19:00-08:00"\n'
          'auto_resume_timezone = "Europe/Berlin"\n'
          'resume_reserve_by_window = "codex:5h=30, claude:5h=12.5"\n'
          'notify_ntfy_url = "https://ntfy.example/goals"\n'
          'notify_webhook_min_kind = "needs_attention"\n'
          'language = "zh_CN"\n'
          'host_id = "desk"\n')


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    return config, tmp_path / "settings-snapshot.json"


def test_a_recalled_snapshot_holds_the_same_values_of_the_same_types(
        files: tuple[Path, Path]) -> None:
    config, snapshot = files
    env = {"GOALKEEPER_STALE_AFTER_SECONDS": "900"}
    first = read_settings(config, snapshot, env)
    assert isinstance(first, Settings)  # validated: no snapshot yet
    assert snapshot.stat().st_mode & 0o777 == 0o600
    again = read_settings(config, snapshot, env)
    assert isinstance(again, SettingsSnapshot)
    for name in Settings.model_fields:
        value, expected = getattr(again, name), getattr(first, name)
        assert (type(value), value) == (type(expected), expected), name
    assert again.notify_webhook_min_kind is Kind.NEEDS_ATTENTION
    assert again.hysteresis() == first.hysteresis()
    assert again.auto_resume_for("codex") == first.auto_resume_for("codex")
    with pytest.raises(AttributeError):
        again.max_auto_attempts = 4  # type: ignore[misc]


def test_the_defaults_are_kept_too(tmp_path: Path) -> None:
    """No config.toml: every field's default survives the round trip (a new field of a type
    JSON does not hold would turn the snapshot off; list it in ``ENUMS``)."""
    snapshot = tmp_path / "settings-snapshot.json"
    read_settings(tmp_path / "config.toml", snapshot, {})
    assert isinstance(read_settings(tmp_path / "config.toml", snapshot, {}), SettingsSnapshot)


@pytest.mark.parametrize("change", ["file", "variable", "other variable"])
def test_a_change_to_what_validation_read_validates_again(
        files: tuple[Path, Path], change: str) -> None:
    config, snapshot = files
    env = {"GOALKEEPER_MAX_AUTO_ATTEMPTS": "4"}
    read_settings(config, snapshot, env)
    if change == "file":
        config.write_text(CONFIG.replace("60", "61"), encoding="utf-8")
        env_now = env
    elif change == "variable":
        env_now = {"GOALKEEPER_MAX_AUTO_ATTEMPTS": "6"}
    else:
        env_now = {**env, "GOALKEEPER_STABLE_SECONDS": "10"}
    settings = read_settings(config, snapshot, env_now)
    assert isinstance(settings, Settings)
    assert settings == load_settings(config, env_now)


def test_a_bad_file_says_what_it_always_said_and_leaves_the_snapshot(
        files: tuple[Path, Path]) -> None:
    config, snapshot = files
    read_settings(config, snapshot, {})
    kept = snapshot.read_bytes()
    config.write_text(CONFIG + "max_wait_hours = -1\n", encoding="utf-8")
    with pytest.raises(SettingsError) as direct:
        load_settings(config, {})
    with pytest.raises(SettingsError) as through:
        read_settings(config, snapshot, {})
    assert str(through.value) == str(direct.value)
    assert "max_wait_hours = -1" in str(through.value)
    assert snapshot.read_bytes() == kept  # a failure is never kept


def _held(snapshot: Path) -> dict[str, Any]:
    held: dict[str, Any] = json.loads(snapshot.read_text(encoding="utf-8"))
    return held


@pytest.mark.parametrize("damage", ["corrupt", "format", "key", "values", "loose", "enum"])
def test_a_damaged_or_foreign_snapshot_is_not_trusted(files: tuple[Path, Path],
                                                      damage: str) -> None:
    config, snapshot = files
    read_settings(config, snapshot, {})
    held = _held(snapshot)
    if damage == "corrupt":
        snapshot.write_text('{"format": 1, "key": ', encoding="utf-8")
    elif damage == "loose":
        os.chmod(snapshot, 0o644)
    else:
        if damage == "format":
            held["format"] = FORMAT + 1
        elif damage == "key":
            held["key"] = "0" * 64
        elif damage == "values":
            held["values"] = ["not", "a", "table"]
        else:
            held["values"]["notify_webhook_min_kind"] = "no such kind"
        snapshot.write_text(json.dumps(held), encoding="utf-8")
    settings = read_settings(config, snapshot, {})
    assert isinstance(settings, Settings)
    assert isinstance(read_settings(config, snapshot, {}), SettingsSnapshot)


def test_the_snapshot_is_private_and_ours(files: tuple[Path, Path]) -> None:
    """Its key digests what validation read, not the values: the file is private (0600, like
    the database), and one that is not, or is another user's, is not read."""
    config, snapshot = files
    read_settings(config, snapshot, {})
    info = snapshot.stat()
    assert (info.st_uid, info.st_mode & 0o777) == (os.getuid(), 0o600)


def test_user_quotas_are_validated_every_time(files: tuple[Path, Path]) -> None:
    config, snapshot = files
    config.write_text(CONFIG + '[quotas.api]\nkind = "capacity"\nlimit = 100\n',
                      encoding="utf-8")
    read_settings(config, snapshot, {})
    assert not snapshot.exists()
    assert isinstance(read_settings(config, snapshot, {}), Settings)


def test_no_snapshot_without_the_directory(tmp_path: Path) -> None:
    """A command that reads creates no directory for it."""
    snapshot = tmp_path / "data" / "settings-snapshot.json"
    read_settings(tmp_path / "config.toml", snapshot, {})
    assert not snapshot.parent.exists()


def test_a_changed_check_validates_again(files: tuple[Path, Path], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The key digests the sources of the schema and of the modules it takes checks from:
    a check changed within one version (a development tree) is not answered by a snapshot
    the old check made."""
    from core.settings import snapshot as module

    sources = module._validating_sources()
    assert {"settings/schema.py", "policies/hours.py", "quota/user.py"} <= set(sources)
    copy = tmp_path / "core"
    for source in sources:
        (copy / source).parent.mkdir(parents=True, exist_ok=True)
        (copy / source).write_bytes((module._CORE / source).read_bytes())
    monkeypatch.setattr(module, "_CORE", copy)
    config, snapshot = files
    read_settings(config, snapshot, {})
    assert isinstance(read_settings(config, snapshot, {}), SettingsSnapshot)
    with (copy / "policies" / "hours.py").open("a", encoding="utf-8") as handle:
        handle.write("# a changed check\n")
    assert isinstance(read_settings(config, snapshot, {}), Settings)
