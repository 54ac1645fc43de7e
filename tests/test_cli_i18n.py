"""The CLI in Chinese: human output, help and errors follow the language; ``--json`` does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_cli import run, seed

ZH = {"LANG": "zh_CN.UTF-8"}


def test_status_and_history_in_chinese_and_their_json_unchanged(tmp_path: Path) -> None:
    seed(tmp_path)
    status = run(tmp_path, "status", env=ZH)
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    assert lines[0] == "目标："
    assert "已暂停（配额）" in lines[1] and "自动恢复" in lines[1]
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
    assert out.stdout.startswith("还没有目标。" if chinese else "No goals yet."), out.stdout


def test_the_config_file_sets_the_language(tmp_path: Path) -> None:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "config.toml").write_text('language = "zh_CN"\n')
    assert run(tmp_path, "status", env={"LANG": "C.UTF-8"}).stdout.startswith("还没有目标。")
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
    assert "已安排自动恢复" in out.stdout and "已恢复 (自动, scheduler)" in out.stdout
    assert "所有开启自动恢复的目标都已完成。" in out.stdout
