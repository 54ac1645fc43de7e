"""Opening a goal in a terminal: which emulator, and the goal's folder."""

from __future__ import annotations

from pathlib import Path

from gui.launcher import goal_folder, terminal_command
from tests.gui.factories import goal


def which_of(*found: str):  # type: ignore[no-untyped-def]
    return lambda name: f"/usr/bin/{name}" if name in found else None


def test_terminal_command_prefers_TERMINAL_then_known_emulators() -> None:
    argv = ["codex", "resume", "abc"]
    assert terminal_command(argv, {"TERMINAL": "foot"}, which_of("foot", "xterm")) == [
        "foot", "-e", "codex", "resume", "abc"]
    assert terminal_command(argv, {"TERMINAL": "missing"}, which_of("xterm")) == [
        "xterm", "-e", "codex", "resume", "abc"]
    assert terminal_command(argv, {}, which_of("gnome-terminal", "xterm")) == [
        "gnome-terminal", "--", "codex", "resume", "abc"]
    assert terminal_command(argv, {}, which_of()) is None


def test_goal_folder_only_when_it_exists(tmp_path: Path) -> None:
    assert goal_folder(goal(data={"cwd": str(tmp_path)})) == tmp_path
    assert goal_folder(goal(data={"cwd": str(tmp_path / "gone")})) is None
    assert goal_folder(goal(data={})) is None
    assert goal_folder(goal(data={"cwd": 42})) is None
