"""The command an entry or a service runs, and how it is quoted for each file format."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from core.integration.command import Runtime, desktop_exec, goalkeeper_argv, systemd_exec
from tests.support.entries import unit_command, unquote_desktop_exec


def _script(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_bundle_runs_itself(tmp_path: Path) -> None:
    runtime = Runtime(str(tmp_path / "dist" / "goalkeeper" / "goalkeeper"), True, lambda _: None)
    assert goalkeeper_argv(runtime) == [str(tmp_path / "dist" / "goalkeeper" / "goalkeeper")]


def test_the_script_beside_the_interpreter_wins_over_path(tmp_path: Path) -> None:
    script = _script(tmp_path / "venv" / "bin" / "goalkeeper")
    runtime = Runtime(str(tmp_path / "venv" / "bin" / "python"), False,
                      lambda _: "/usr/bin/goalkeeper")
    assert goalkeeper_argv(runtime) == [str(script)]


def test_then_the_one_on_path_then_the_interpreter(tmp_path: Path) -> None:
    python = str(tmp_path / "bin" / "python3")
    assert goalkeeper_argv(Runtime(python, False, lambda _: "/usr/bin/goalkeeper")) == [
        "/usr/bin/goalkeeper"]
    assert goalkeeper_argv(Runtime(python, False, lambda _: None)) == [python, "-m", "core"]


def test_this_installation_is_found() -> None:
    argv = goalkeeper_argv()
    assert Path(argv[0]).is_absolute() and os.access(argv[0], os.X_OK)


@pytest.mark.parametrize("path", [
    "/opt/goalkeeper/bin/goalkeeper",
    "/home/a b/My Apps/goalkeeper",
    '/tmp/we"ird/$HOME/`x`/back\\slash/100%/goalkeeper',
])
def test_desktop_exec_round_trips(path: str) -> None:
    value = desktop_exec([path, "gui"])
    assert unquote_desktop_exec(value) == [path, "gui"]
    assert "'" not in value or "'" in path  # single quotes are no quoting in desktop entries


def test_plain_words_stay_unquoted() -> None:
    assert desktop_exec(["/usr/bin/goalkeeper", "gui"]) == "/usr/bin/goalkeeper gui"


def test_systemd_exec_quotes_every_word() -> None:
    assert systemd_exec(["/a b/goalkeeper", "daemon"]) == '"/a b/goalkeeper" "daemon"'
    assert systemd_exec(['/x/100%"$y\\z']) == '"/x/100%%\\"$$y\\\\z"'


def test_a_units_command_line_reads_back(tmp_path: Path) -> None:
    from core.integration.systemd import unit_text

    odd = '/x/100%"$y\\z/goalkeeper'
    unit = tmp_path / "goalkeeper.service"
    unit.write_text(unit_text([odd], {"GOALKEEPER_HOME": "/a b/100%", "TZ": "UTC"}))
    argv, environment = unit_command(unit)
    assert argv == [odd, "daemon"]
    assert environment == {"GOALKEEPER_HOME": "/a b/100%", "TZ": "UTC", "PYTHONUNBUFFERED": "1"}


def test_current_runtime_reflects_the_interpreter() -> None:
    runtime = Runtime.current()
    assert runtime.executable == sys.executable and runtime.frozen is False
