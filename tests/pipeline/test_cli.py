"""The pipeline commands, in process and against a real `goalkeeper daemon`."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from tests.pipeline.support import step, toml_text, write_goal
from tests.support.daemon import running_daemon


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_add_names_every_problem_and_exits_2(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(toml_text({"name": "bad"}, [{"name": "s", "command": ["true"],
                                                  "timeout": 0}], []))
    code, _, err = cli(capsys, "add", str(path), "--yes")
    assert code == 2
    assert f"{path}:6: source[1 's'].timeout: Input should be greater than 0" in err
    assert "stage: required key is missing" in err


def test_add_without_a_host_and_list_runs(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = write_goal(tmp_path, {"name": "digest", "schedule": "09:00", "timezone": "UTC"},
                      [], [step("deliver", quota="nope")])
    code, out, _ = cli(capsys, "add", str(path), "--yes", "--json")
    data = json.loads(out)
    assert code == 0 and data["goal"] == "pipeline:digest" and data["created"] is True
    assert data["host_notified"] is False and data["unknown_quotas"] == ["nope"]
    assert data["next_run"].endswith("09:00:00+00:00")
    code, out, _ = cli(capsys, "add", str(path), "--yes")
    assert code == 0 and out.startswith("updated pipeline:digest")
    assert cli(capsys, "runs", "digest", "--json")[1].strip() == "[]"
    assert cli(capsys, "runs", "nothing")[0] == 3


def test_add_without_a_host_says_how_the_goal_appears_and_when_it_runs_in_both_zones(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_goal(tmp_path, {"name": "morning", "schedule": "09:00",
                                 "timezone": "Asia/Shanghai"}, [], [step("deliver")])
    code, out, _ = cli(capsys, "add", str(path), "--yes")
    assert code == 0
    assert "09:00:00 Asia/Shanghai = " in out and " local time (" in out
    assert "appears when a host starts" in out and "`resume` and `status`" in out
    data = json.loads(cli(capsys, "add", str(path), "--yes", "--json")[1])
    assert data["next_run"].endswith("09:00:00+08:00")
    assert data["next_run_local"] is not None


def test_run_needs_a_host(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_goal(tmp_path, {"name": "digest"}, [], [step("deliver")])
    cli(capsys, "add", str(path), "--yes")
    code, _, err = cli(capsys, "run", "digest")
    assert code == 5 and "goalkeeper daemon" in err


# -- against a real host -----------------------------------------------------------------------


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    with running_daemon(tmp_path) as proc:
        yield proc


@pytest.mark.slow
def test_run_wait_runs_and_refusal_through_a_daemon(
        daemon: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write_goal(tmp_path / "g", {"name": "digest", "min_sources": 1},
                      [step("github", {"items": 3}), step("rss", {"exit": 77})],
                      [step("aggregate", {"items": 3}), step("deliver")])
    code, out, _ = cli(capsys, "add", str(good), "--yes", "--json")
    assert code == 0 and json.loads(out)["host_notified"] is True
    code, out, _ = cli(capsys, "run", "digest", "--wait")
    assert code == 0, out
    assert "completed" in out and "sources 1/2" in out and "DEGRADED" in out
    code, out, _ = cli(capsys, "runs", "pipeline:digest", "--json")
    [run] = json.loads(out)
    assert set(run) == {"run_id", "state", "sources_ok", "sources_total", "missing", "items",
                        "degraded", "started_at", "updated_at"}
    assert run["state"] == "completed" and run["degraded"] is True
    assert (run["sources_ok"], run["sources_total"], run["items"]) == (1, 2, 3)
    assert run["missing"] == [{"name": "rss", "reason": "auth_failed", "attempts": 1}]

    blocked = write_goal(tmp_path / "b", {"name": "digest"}, [],
                         [step("deliver", {"exit": 78})])
    assert cli(capsys, "add", str(blocked), "--yes")[0] == 0
    code, out, _ = cli(capsys, "run", "digest", "--wait")
    assert code == 1 and "blocked" in out and "config_error" in out
    code, out, _ = cli(capsys, "run", "digest")
    assert code == 4 and "is unfinished" in out and "--new" in out
    code, out, _ = cli(capsys, "run", "digest", "--new", "--wait", "--json")
    assert code == 1 and json.loads(out)["state"] == "blocked"
    code, out, _ = cli(capsys, "runs", "digest", "--json")
    assert [r["state"] for r in json.loads(out)] == ["blocked", "abandoned", "completed"]
    code, out, _ = cli(capsys, "history", "pipeline:digest", "--json")
    assert "run_abandoned" in {row["event"] for row in json.loads(out)}
    code, out, _ = cli(capsys, "remove", "digest")
    assert code == 0 and "runs are kept" in out
    assert cli(capsys, "runs", "digest")[0] == 3
