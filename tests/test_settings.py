"""Settings: defaults, config.toml, GOALKEEPER_* overrides, and precise errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.settings import Settings, SettingsError, load_settings, save_settings


def test_defaults_match_the_documented_ones(tmp_path: Path) -> None:
    s = load_settings(tmp_path / "missing.toml", {})
    assert s.auto_resume_default is False
    assert (s.resume_margin_seconds, s.resume_jitter_seconds) == (45, 15)
    assert (s.resume_threshold_percent, s.stable_seconds) == (90, 30)
    assert (s.max_wait_hours, s.max_auto_attempts) == (169, 3)


def test_file_then_environment(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("resume_margin_seconds = 10\nmax_auto_attempts = 5\n")
    s = load_settings(cfg, {"GOALKEEPER_RESUME_MARGIN_SECONDS": "1"})
    assert s.resume_margin_seconds == 1  # the environment wins
    assert s.max_auto_attempts == 5
    env_bool = load_settings(cfg, {"GOALKEEPER_AUTO_RESUME_DEFAULT": "true"})
    assert env_bool.auto_resume_default is True


def test_defaults_argument_sits_under_file_and_env(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("stable_seconds = 7\n")
    s = load_settings(cfg, {}, {"stable_seconds": 2, "resume_margin_seconds": 3})
    assert (s.stable_seconds, s.resume_margin_seconds) == (7, 3)


@pytest.mark.parametrize(("text", "env", "expected"), [
    ("max_auto_attempts = 0\n", {}, "setting max_auto_attempts = 0 from {cfg}"),
    ("resume_margin_seconds = \"soon\"\n", {}, "setting resume_margin_seconds = 'soon' from {cfg}"),
    ("", {"GOALKEEPER_STABLE_SECONDS": "-3"},
     "setting stable_seconds = '-3' from environment variable GOALKEEPER_STABLE_SECONDS"),
    ("resume_threshold_percent = 100\n", {}, "setting resume_threshold_percent = 100 from {cfg}"),
    ("bogus = 1\n", {}, "unknown setting 'bogus' in {cfg}"),
])
def test_bad_values_name_field_value_and_source(tmp_path: Path, text: str,
                                                env: dict[str, str], expected: str) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(text)
    with pytest.raises(SettingsError) as err:
        load_settings(cfg, env)
    assert expected.format(cfg=cfg) in str(err.value)


def test_inconsistent_thresholds_are_refused(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("pause_threshold_percent = 80\nresume_threshold_percent = 85\n")
    with pytest.raises(SettingsError, match="resume_threshold_percent"):
        load_settings(cfg, {})


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("resume_margin_seconds = = 3\n")
    with pytest.raises(SettingsError, match=f"{cfg} is not valid TOML"):
        load_settings(cfg, {})


def test_save_round_trips_atomically(tmp_path: Path) -> None:
    cfg = tmp_path / "sub" / "config.toml"
    s = Settings(resume_margin_seconds=12.5, auto_resume_default=True, max_auto_attempts=4)
    save_settings(cfg, s)
    assert load_settings(cfg, {}) == s
    assert "stable_seconds" not in cfg.read_text()  # defaults are not written
    assert not [p for p in cfg.parent.iterdir() if p.name.endswith(".tmp")]
    assert cfg.stat().st_mode & 0o777 == 0o600
