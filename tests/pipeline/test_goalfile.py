"""Goal files: what a valid one yields, and errors that name the file, the line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.providers.pipeline.goalfile import GoalFileError, load_goal_file

VALID = """\
name = "hotspot-digest"          # goal id becomes pipeline:hotspot-digest
schedule = "09:00"
timezone = "Asia/Shanghai"
min_sources = 2
auto_resume = true

[[source]]
name = "github"
command = ["python3", "fetch_github.py"]
cwd = "."
timeout = 10
retries = 1
quota = "github-api"
cost = 1
secrets = ["GITHUB_TOKEN"]

[[source]]
name = "rss"
command = ["python3", "fetch_rss.py"]

[[stage]]
name = "aggregate"
command = ["python3", "aggregate.py"]
min_items = 5

[stage.env]
LANG = "C"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "digest.toml"
    path.write_text(text)
    return path


def test_the_documented_example_loads(tmp_path: Path) -> None:
    goal = load_goal_file(write(tmp_path, VALID))
    assert goal.goal_id == "pipeline:hotspot-digest"
    assert [s.name for s in goal.source] == ["github", "rss"]
    assert goal.source[0].secrets == ["GITHUB_TOKEN"] and goal.source[0].quota == "github-api"
    assert goal.stage[0].min_items == 5 and goal.stage[0].env == {"LANG": "C"}
    assert goal.required_sources == 2 and goal.quota_names() == ["github-api"]
    assert goal.source[1].timeout == 60 and goal.source[1].retries == 1  # defaults


def test_min_sources_defaults_to_all(tmp_path: Path) -> None:
    goal = load_goal_file(write(tmp_path, VALID.replace("min_sources = 2\n", "")))
    assert goal.required_sources == 2


def problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(GoalFileError) as info:
        load_goal_file(write(tmp_path, text))
    return info.value.problems


def test_a_bad_value_names_file_line_field_and_problem(tmp_path: Path) -> None:
    text = VALID.replace('command = ["python3", "fetch_rss.py"]',
                         'command = ["python3", "fetch_rss.py"]\ntimeout = -3')
    [line] = problems(tmp_path, text)
    path = tmp_path / "digest.toml"
    number = text.splitlines().index("timeout = -3") + 1
    assert line.startswith(f"{path}:{number}: source[2 'rss'].timeout: ")
    assert "greater than 0" in line and "-3" in line


def test_an_unknown_key_is_pointed_at(tmp_path: Path) -> None:
    text = VALID.replace("min_items = 5", "min_items = 5\nretry = 3")
    [line] = problems(tmp_path, text)
    number = text.splitlines().index("retry = 3") + 1
    assert f":{number}: stage[1 'aggregate'].retry: unknown key" in line


def test_a_missing_key_names_the_table(tmp_path: Path) -> None:
    text = VALID.replace('command = ["python3", "aggregate.py"]\n', "")
    [line] = problems(tmp_path, text)
    number = text.splitlines().index("[[stage]]") + 1
    assert f":{number}: stage[1 'aggregate'].command: required key is missing" in line


def test_several_problems_are_all_reported(tmp_path: Path) -> None:
    text = VALID.replace('timezone = "Asia/Shanghai"', 'timezone = "Mars/Olympus"').replace(
        'schedule = "09:00"', 'schedule = "25:00"')
    lines = problems(tmp_path, text)
    assert any(":2: schedule:" in x and "25:00" in x for x in lines)
    assert any(":3: timezone: unknown time zone 'Mars/Olympus'" in x for x in lines)


def test_toml_syntax_errors_carry_the_position(tmp_path: Path) -> None:
    [line] = problems(tmp_path, 'name = "x"\nschedule = \n')
    assert "not valid TOML" in line and "line 2" in line


@pytest.mark.parametrize(("edit", "needle"), [
    (("min_sources = 2", "min_sources = 3"), "min_sources = 3 but only 2 source(s)"),
    (('name = "rss"', 'name = "github"'), "repeated: github"),
    (('name = "hotspot-digest"', 'name = "bad name!"'), "name:"),
    (('secrets = ["GITHUB_TOKEN"]', 'secrets = ["GITHUB-TOKEN"]'), "secrets"),
    (('cwd = "."', 'output = "../escape.json"'), "relative path inside the run directory"),
    (('schedule = "09:00"', 'schedule = "*/5 * *"'), "neither"),
    (('schedule = "09:00"', 'schedule = "61 * * * *"'), "bad cron expression"),
    (('command = ["python3", "aggregate.py"]', "command = []"), "command"),
    (('cwd = "."', 'env = {GOALKEEPER_STEP = "x"}'), "set by Goalkeeper"),
])
def test_inconsistent_files_are_refused(tmp_path: Path, edit: tuple[str, str],
                                        needle: str) -> None:
    text = VALID.replace(*edit)
    assert text != VALID
    assert any(needle in line for line in problems(tmp_path, text))


def test_a_file_without_stages_is_refused(tmp_path: Path) -> None:
    lines = problems(tmp_path, 'name = "x"\n')
    assert any("stage: required key is missing" in x for x in lines)


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(GoalFileError, match="no such file"):
        load_goal_file(tmp_path / "nope.toml")
