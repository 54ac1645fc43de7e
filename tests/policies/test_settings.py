"""The policy settings: names, defaults, the table and its textual form, validation messages."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from core.goals.rules import ResumeRules
from core.policies.goal_policy import GoalPolicy, PolicyValueError
from core.policies.reserve_table import known_windows, unmatched_windows
from core.settings import Settings, SettingsError, load_settings, save_settings


def test_defaults_change_nothing_but_stagger_one_at_a_time() -> None:
    rules = ResumeRules.from_settings(Settings())
    assert (rules.reserve_percent, rules.reserve_by_window, rules.hours) == (0.0, (), None)
    assert rules.max_concurrent == 1 and rules.settle == timedelta(minutes=5)


def test_the_reserve_table_in_the_file_and_as_text_in_the_environment(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('resume_reserve_percent = 20\n[resume_reserve_by_window]\n'
                      '"codex:5h" = 35\n"claude:7d" = 10\n')
    rules = ResumeRules.from_settings(load_settings(config, {}))
    assert (rules.reserve_for("codex:5h"), rules.reserve_for("claude:7d")) == (35, 10)
    assert rules.reserve_for("demo:1m") == 20
    env = {"GOALKEEPER_RESUME_RESERVE_BY_WINDOW": "codex:5h = 50, demo:1m=0"}
    rules = ResumeRules.from_settings(load_settings(config, env))
    assert (rules.reserve_for("codex:5h"), rules.reserve_for("demo:1m")) == (50, 0)


def test_saving_keeps_the_table_and_the_hours(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    settings = Settings(resume_reserve_by_window={"codex:5h": 30}, auto_resume_hours="Sat-Sun",
                        auto_resume_timezone="Europe/Berlin", max_concurrent_resumes=0)
    save_settings(config, settings)
    assert load_settings(config, {}) == settings


@pytest.mark.parametrize(("env", "message"), [
    ({"GOALKEEPER_RESUME_RESERVE_PERCENT": "100"}, "resume_reserve_percent = '100' from "
     "environment variable GOALKEEPER_RESUME_RESERVE_PERCENT: Input should be less than 100"),
    ({"GOALKEEPER_RESUME_RESERVE_BY_WINDOW": "codex:5h"}, "'codex:5h' needs WINDOW=PERCENT"),
    ({"GOALKEEPER_RESUME_RESERVE_BY_WINDOW": "codex:5h=lots"},
     "the reserve of codex:5h must be a number of percent, not 'lots'"),
    ({"GOALKEEPER_AUTO_RESUME_HOURS": "Mon-Fri 19:00-8"}, "'19:00-8' is not a time range"),
    ({"GOALKEEPER_AUTO_RESUME_TIMEZONE": "Europe/Berln"}, "unknown time zone 'Europe/Berln'"),
    ({"GOALKEEPER_MAX_CONCURRENT_RESUMES": "-1"}, "max_concurrent_resumes = '-1'"),
    ({"GOALKEEPER_RESUME_SETTLE_SECONDS": "soon"}, "resume_settle_seconds = 'soon'"),
])
def test_bad_values_name_the_setting_and_where_it_came_from(tmp_path: Path, env: dict[str, str],
                                                            message: str) -> None:
    with pytest.raises(SettingsError) as err:
        load_settings(tmp_path / "none.toml", env)
    assert message in str(err.value)


def test_a_bad_table_entry_in_the_file_names_its_line(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[resume_reserve_by_window]\n"codex:5h" = 130\n')
    with pytest.raises(SettingsError, match="must be at least 0 and less than 100, not 130"):
        load_settings(config, {})


def test_a_goals_values_are_checked_with_the_same_messages() -> None:
    policy = GoalPolicy().with_value("priority", "5").with_value("budget_percent", "12.5")
    assert (policy.priority, policy.budget_percent) == (5, 12.5)
    assert policy.with_value("budget_percent", "none").budget_percent is None
    for key, value, message in (("priority", "high", "valid integer"),
                                ("priority", "101", "less than or equal to 100"),
                                ("budget_percent", "0", "greater than 0"),
                                ("auto_resume_hours", "Mon 7-9", "'7-9' is not a time range"),
                                ("colour", "red", "unknown key 'colour'")):
        with pytest.raises(PolicyValueError, match=message):
            policy.with_value(key, value)


def test_the_rules_check_themselves() -> None:
    with pytest.raises(ValueError, match="reserve of codex:5h"):
        ResumeRules(reserve_by_window=(("codex:5h", 100.0),))
    with pytest.raises(ValueError, match="max_concurrent"):
        ResumeRules(max_concurrent=-1)


@pytest.mark.parametrize(("text", "message"), [
    ("codex:7d=10", "unknown window 'codex:7d': the codex windows are codex:5h, codex:weekly, "
                    "codex:monthly, codex:credits, codex:access (did you mean codex:weekly?)"),
    ("codex:5h=30, claude:7d-opuss=5", "unknown window 'claude:7d-opuss': the claude windows "
     "are claude:5h, claude:7d, claude:7d-opus, claude:7d-sonnet, claude:7d-fable, "
     "claude:overage (did you mean claude:7d-opus?)"),
    ("claude:weekly=5", "(did you mean claude:7d?)"),
    ("demo:1h=5", "unknown window 'demo:1h': the demo windows are demo:1m"),
    ("codex:=5", "unknown window 'codex:'"),
])
def test_a_reserve_for_a_window_a_provider_does_not_have_is_refused(
        tmp_path: Path, text: str, message: str) -> None:
    var = "GOALKEEPER_RESUME_RESERVE_BY_WINDOW"
    with pytest.raises(SettingsError) as err:
        load_settings(tmp_path / "none.toml", {var: text})
    assert f"from environment variable {var}: " in str(err.value)
    assert message in str(err.value)


def test_an_unknown_window_in_the_file_names_the_file(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[resume_reserve_by_window]\n"codex:5h" = 30\n"claude:7days" = 10\n')
    with pytest.raises(SettingsError) as err:
        load_settings(config, {})
    assert f"from {config}:1: " in str(err.value)
    assert "unknown window 'claude:7days'" in str(err.value)


def test_windows_of_other_prefixes_may_appear_later_and_are_accepted(tmp_path: Path) -> None:
    text = "quota:nightly=5, quota:nightlly=5, fake:5h=30, codex:weekly=10, claude:overage=1"
    settings = load_settings(tmp_path / "none.toml",
                             {"GOALKEEPER_RESUME_RESERVE_BY_WINDOW": text})
    assert len(settings.resume_reserve_by_window) == 5
    assert unmatched_windows(settings.resume_reserve_by_window, {"nightly"}, {"fake:5h"}) == [
        "quota:nightlly"]
    assert unmatched_windows(settings.resume_reserve_by_window, set(), set()) == [
        "fake:5h", "quota:nightlly", "quota:nightly"]


def test_the_known_windows_are_the_providers_own() -> None:
    from core.providers.claude.readings import LABELS as CLAUDE
    from core.providers.claude.wording import WINDOW_BY_TYPE
    from core.providers.codex.limits import GOAL_WINDOWS
    from core.providers.codex.limits import LABELS as CODEX
    from core.providers.demo import WINDOW_ID
    from core.quota.user import WINDOW_PREFIX

    windows = known_windows()
    assert set(CODEX) <= set(windows["codex"]) and set(CLAUDE) == set(windows["claude"])
    # the settings' copy of the providers' windows, exactly and in order
    assert windows["codex"] == tuple(GOAL_WINDOWS)
    assert windows["claude"] == tuple(dict.fromkeys(WINDOW_BY_TYPE.values()))
    assert windows["demo"] == (WINDOW_ID,) == ("demo:1m",)
    assert WINDOW_PREFIX == "quota:"


def test_an_unknown_window_is_refused_in_chinese(tmp_path: Path) -> None:
    from core.i18n import use_language

    use_language("zh_CN")  # the autouse fixture puts English back
    with pytest.raises(SettingsError) as err:
        load_settings(tmp_path / "none.toml", {"GOALKEEPER_RESUME_RESERVE_BY_WINDOW": "codex:7d=4"})
    assert ("未知窗口 'codex:7d'：codex 的窗口有 codex:5h, codex:weekly, codex:monthly, "
            "codex:credits, codex:access（是不是想写 codex:weekly？）") in str(err.value)
