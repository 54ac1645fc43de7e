"""Start at login: an XDG autostart entry, written and removed — only ever our own."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gui.autostart import MARK, apply_autostart, autostart_file

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG autostart")


def test_on_writes_the_entry_and_off_removes_it(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    assert apply_autostart(True, env, "/opt/gk/goalkeeper gui") is None
    path = autostart_file(env)
    assert path == tmp_path / "autostart" / "io.github.goalkeeper.Goalkeeper.desktop"
    text = path.read_text()
    assert "Exec=/opt/gk/goalkeeper gui\n" in text and MARK in text
    assert apply_autostart(False, env) is None
    assert not path.exists()


def test_a_hand_written_entry_is_left_alone(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    path = autostart_file(env)
    path.parent.mkdir(parents=True)
    path.write_text("[Desktop Entry]\nExec=my-own-wrapper\n")
    assert apply_autostart(False, env) is None
    assert path.exists()


def test_a_problem_is_reported(tmp_path: Path) -> None:
    (tmp_path / "autostart").write_text("a file where the directory should be")
    problem = apply_autostart(True, {"XDG_CONFIG_HOME": str(tmp_path)}, "goalkeeper gui")
    assert problem is not None and problem.startswith("could not update ")
