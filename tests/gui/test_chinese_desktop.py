"""The desktop app in Chinese on a real X server (``-m desktop``, under Xvfb with a private
session bus, as ``.ci/run`` runs it): the tray's notification and menu and the window's actions
with ``LANG=zh_CN.UTF-8``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.desktop import DESKTOP_MARKS, SUPPORT, FakeDesktop

pytestmark = DESKTOP_MARKS


@pytest.fixture
def desktop() -> Iterator[FakeDesktop]:
    fake = FakeDesktop(tray=True)
    yield fake
    fake.close()


def run_scenario(**env: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, str(SUPPORT / "desktop_scenario.py")],
                         capture_output=True, text=True, timeout=60,
                         env={**os.environ, "QT_QPA_PLATFORM": "xcb", **env})
    assert out.returncode == 0, out.stderr[-3000:]
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_the_tray_notifies_and_its_menu_speaks_chinese(desktop: FakeDesktop) -> None:
    result = run_scenario(LANG="zh_CN.UTF-8")
    assert result["tray"] is True
    notice = next(n for n in desktop.notified if n["summary"] == "已恢复：Refactor the parser")
    assert notice["body"].startswith("配额已刷新；Goalkeeper 已于 ")
    assert result["menu"][0] == "显示 Goalkeeper(&S)"
    assert result["menu"][-1] == "退出 Goalkeeper(&Q)"
    assert "没有等待配额的目标" in result["menu"]
    assert result["actions"][:2] == ["启动(&S)", "恢复(&R)"]


def test_the_language_setting_wins_over_lang(desktop: FakeDesktop) -> None:
    result = run_scenario(LANG="zh_CN.UTF-8", GOALKEEPER_LANGUAGE="en")
    assert "Resumed: Refactor the parser" in [n["summary"] for n in desktop.notified]
    assert result["menu"][0] == "&Show Goalkeeper"
