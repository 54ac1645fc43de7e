"""The CLI in Chinese: human output, help and errors follow the language; ``--json`` does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run, seed
from tests.support.policies import seed as seed_policies

ZH = {"LANG": "zh_CN.UTF-8"}


def test_status_and_history_in_chinese_and_their_json_unchanged(tmp_path: Path) -> None:
    seed(tmp_path)
    status = run(tmp_path, "status", env=ZH)
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    assert lines[0] == "宿主：未运行——目标无人照看（启动 `goalkeeper daemon` 或桌面应用）"
    assert lines[1] == "目标："
    assert "已暂停（配额）" in lines[2] and "自动恢复" in lines[2]
    assert "配额：" in lines and "通知：仅桌面（未配置 ntfy 或 Webhook）。" in lines
    history = run(tmp_path, "history", env=ZH)
    assert "paused" in history.stdout and history.stdout.rstrip().endswith("— 配额")
    for args in (("status", "--json"), ("history", "--json")):
        english = json.loads(run(tmp_path, *args).stdout)
        chinese = json.loads(run(tmp_path, *args, env=ZH).stdout)
        for data in (english, chinese):  # status --json ages the readings at "now"
            for quota in data.get("quotas", []) if isinstance(data, dict) else []:
                quota.pop("exactness", None)
        assert chinese == english
    assert "暂" not in run(tmp_path, "status", "--json", env=ZH).stdout


def test_help_and_errors_in_chinese(tmp_path: Path) -> None:
    seed(tmp_path)
    helped = run(tmp_path, "--help", env=ZH)
    assert helped.stdout.startswith("用法：goalkeeper")
    assert "显示此帮助信息并退出" in helped.stdout and "立即恢复一个已暂停的目标" in helped.stdout
    unknown = run(tmp_path, "resume", "nope", env=ZH)
    assert unknown.returncode == 3
    assert unknown.stderr.strip() == "goalkeeper: 未知目标 'nope'（参见 `goalkeeper status`）"
    no_host = run(tmp_path, "resume", "fake:g", env=ZH)
    assert no_host.returncode == 5 and "没有正在运行的 Goalkeeper 宿主" in no_host.stderr
    bad = run(tmp_path, "bogus", env=ZH)
    assert bad.returncode == 2 and "错误：参数 COMMAND：无效的选择：'bogus'" in bad.stderr


@pytest.mark.parametrize(("env", "chinese"), [
    ({"LANG": "C.UTF-8", "LANGUAGE": "zh_CN:en"}, True),
    ({"LANG": "C", "LANGUAGE": "zh_CN"}, False),  # GNU gettext ignores LANGUAGE under C
    ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8"}, True),
    ({"LANG": "zh_CN.UTF-8", "GOALKEEPER_LANGUAGE": "en"}, False),
    ({"LANG": "en_US.UTF-8", "GOALKEEPER_LANGUAGE": "zh_CN"}, True),
])
def test_the_language_follows_the_environment(tmp_path: Path, env: dict[str, str],
                                              chinese: bool) -> None:
    out = run(tmp_path, "status", env=env)
    assert out.stdout.startswith("宿主：未运行" if chinese else "Host: not running"), out.stdout
    assert ("\n还没有数据：" if chinese else "\nno data yet: ") in out.stdout, out.stdout


def test_the_config_file_sets_the_language(tmp_path: Path) -> None:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "config.toml").write_text('language = "zh_CN"\n')
    assert run(tmp_path, "status", env={"LANG": "C.UTF-8"}).stdout.startswith("宿主：未运行")
    (tmp_path / "config.toml").write_text('language = "zh_CN"\nstable_seconds = -1\n')
    bad = run(tmp_path, "status", env={"LANG": "C.UTF-8"})
    # a bad setting is reported in the chosen language, with pydantic's words translated too
    assert bad.returncode == 2 and "应大于或等于 0" in bad.stderr
    assert "来自" in bad.stderr and "stable_seconds = -1" in bad.stderr


def test_the_headless_demo_speaks_chinese(tmp_path: Path) -> None:
    out = run(tmp_path, "demo", "--headless", "--period", "3", "--step", "0.1", env=ZH,
              timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Goalkeeper 演示 — 数据位于 ")
    assert "demo:refactor  已暂停 — 配额：演示配额已用完（6/6）" in out.stdout
    assert "已安排自动恢复" in out.stdout and "已恢复（自动，调度器）" in out.stdout
    assert "所有开启自动恢复的目标都已完成。" in out.stdout


def test_the_resume_policies_in_chinese(tmp_path: Path) -> None:
    """What main added to ``status`` (a deferral by the allowed hours, a goal's own policy, the
    reserve, the forecast), ``goal set``'s messages and ``store``, in Chinese; ``--json`` keeps
    the English rule names and forecast text."""
    from datetime import UTC, datetime


    seed_policies(tmp_path, datetime.now(UTC))
    env = {**ZH, "GOALKEEPER_RESUME_RESERVE_BY_WINDOW": "fake:5h=30"}
    human = run(tmp_path, "status", env=env).stdout
    assert "自动恢复（允许时段）" in human, human
    assert "优先级 3，预算 25 %，时段 Mon-Fri 19:00-08:00，上一个窗口运行了 1:30:00" in human
    assert "（预留 30 %）" in human and "用完" in human
    data = json.loads(run(tmp_path, "status", "--json", env=env).stdout)
    assert data["goals"][0]["deferred_by"] == "allowed hours"
    assert data["quotas"][0]["forecast"]["text"].startswith("runs out ≈ ")
    bad = run(tmp_path, "goal", "set", "fake:g", "budget_percent", "120", env=ZH)
    assert bad.returncode == 2
    assert "budget_percent = '120'：应小于或等于 100" in bad.stderr, bad.stderr
    hours = run(tmp_path, "goal", "set", "fake:g", "auto_resume_hours", "Mon-Fry 9:00-18:00",
                env=ZH)
    assert "未知的星期 'Fry'" in hours.stderr, hours.stderr
    store = run(tmp_path, "store", env=ZH)
    assert store.returncode == 0, store.stderr
    assert "宿主：未运行" in store.stdout and "还没有备份（宿主每天做一次备份）" in store.stdout
    assert run(tmp_path, "store", "restore", "--backup", "x", "--empty", env=ZH).stderr.strip() \
        == "goalkeeper: --backup 和 --empty 不能同时使用"


def test_the_store_s_words_in_chinese(tmp_path: Path) -> None:
    """A database from a newer Goalkeeper: the read-only commands say so in Chinese."""
    import sqlite3

    tmp_path.mkdir(exist_ok=True)
    with sqlite3.connect(tmp_path / "goalkeeper.db") as con:
        con.execute("PRAGMA user_version = 99")
    out = run(tmp_path, "history", env=ZH)
    assert out.returncode == 1
    assert "的架构版本是 99，比这个 Goalkeeper 能理解的" in out.stderr, out.stderr
    assert "请升级 Goalkeeper 后再使用" in out.stderr
