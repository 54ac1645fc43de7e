"""The policy settings: names, defaults, the table and its textual form, validation messages."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from core.policies.goal_policy import GoalPolicy, PolicyValueError
from core.policies.rules import ResumeRules
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
