"""Start at login: an XDG autostart entry, written and removed — only ever our own."""

from __future__ import annotations

from pathlib import Path

from core.integration.autostart import apply_autostart, autostart_file
from core.integration.entry import AUTOSTART_MARK

LINUX = "linux"


def test_on_writes_the_entry_and_off_removes_it(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    assert apply_autostart(True, env, ["/opt/gk/goalkeeper"], LINUX) is None
    path = autostart_file(env)
    assert path == tmp_path / "autostart" / "io.github.goalkeeper.Goalkeeper.desktop"
    text = path.read_text()
    assert "Exec=/opt/gk/goalkeeper gui\n" in text and "TryExec=/opt/gk/goalkeeper\n" in text
    assert AUTOSTART_MARK in text.splitlines()
    assert apply_autostart(False, env, platform=LINUX) is None
    assert not path.exists()


def test_a_hand_written_entry_is_left_alone(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    path = autostart_file(env)
    path.parent.mkdir(parents=True)
    path.write_text("[Desktop Entry]\nExec=my-own-wrapper\n")
    assert apply_autostart(False, env, platform=LINUX) is None
    assert path.exists()


def test_a_problem_is_reported(tmp_path: Path) -> None:
    (tmp_path / "autostart").write_text("a file where the directory should be")
    problem = apply_autostart(True, {"XDG_CONFIG_HOME": str(tmp_path)}, ["goalkeeper"], LINUX)
    assert problem is not None and problem.startswith("could not update ")


def test_relative_or_empty_xdg_config_home_falls_back_to_home(tmp_path: Path) -> None:
    for value in ("", "relative/dir"):
        env = {"XDG_CONFIG_HOME": value, "HOME": str(tmp_path)}
        assert autostart_file(env) == tmp_path / ".config" / "autostart" / (
            "io.github.goalkeeper.Goalkeeper.desktop")


def test_without_any_home_it_says_so() -> None:
    problem = apply_autostart(True, {}, ["goalkeeper"], LINUX)
    assert problem is not None and "HOME" in problem


def test_off_an_xdg_desktop_only_turning_it_on_is_a_problem(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    problem = apply_autostart(True, env, ["goalkeeper"], "darwin")
    assert problem is not None and "XDG" in problem
    assert apply_autostart(False, env, platform="darwin") is None
    assert not (tmp_path / "autostart").exists()
