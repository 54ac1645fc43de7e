"""Opening a goal in a terminal or its folder in the file manager.

``Provider.open_command(goal)`` gives the argv that shows the goal (e.g. the agent's resume
command); it is run *inside* a terminal emulator — ``$TERMINAL`` if set, else the first known one
on PATH — in the goal's working directory (``goal.data["cwd"]``). Both actions start detached
processes and never block the loop.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from PySide6.QtCore import QProcess, QProcessEnvironment, QUrl
from PySide6.QtGui import QDesktopServices

from core.models import Goal
from gui.i18n import tr

#: terminal emulators and the arguments that make them run a command
TERMINALS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("x-terminal-emulator", ("-e",)),
    ("gnome-terminal", ("--",)),
    ("konsole", ("-e",)),
    ("xfce4-terminal", ("-x",)),
    ("kitty", ()),
    ("alacritty", ("-e",)),
    ("wezterm", ("start", "--")),
    ("foot", ()),
    ("xterm", ("-e",)),
)

Which = Callable[[str], str | None]


def goal_folder(goal: Goal) -> Path | None:
    """The goal's working directory, when the provider recorded one that exists."""
    cwd = goal.data.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        return None
    path = Path(cwd).expanduser()
    return path if path.is_dir() else None


def terminal_command(argv: Sequence[str], environ: Mapping[str, str],
                     which: Which = shutil.which) -> list[str] | None:
    """The full command that runs ``argv`` in a terminal window, or None if there is none."""
    configured = environ.get("TERMINAL", "").strip()
    if configured:
        parts = shlex.split(configured)
        if parts and which(parts[0]):
            return [*parts, "-e", *argv]
    for binary, prefix in TERMINALS:
        if which(binary):
            return [binary, *prefix, *argv]
    return None


class Launcher:
    """Starts the file manager or a terminal. Methods return an error sentence or None."""

    def open_folder(self, path: Path) -> str | None:
        if not path.is_dir():
            return tr("the folder {path} does not exist").format(path=path)
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
            return tr("no application is set up to open {path}").format(path=path)
        return None

    def open_terminal(self, argv: Sequence[str], cwd: Path | None) -> str | None:
        command = terminal_command(argv, os.environ)
        if command is None:
            return tr("no terminal emulator found on PATH; set $TERMINAL to one, or run: "
                      "{command}").format(command=shlex.join(argv))
        ok, _pid = QProcess.startDetached(command[0], command[1:], str(cwd or Path.home()))
        return None if ok else tr("could not start {program}").format(program=command[0])

    def start_demo(self) -> str | None:
        return start_demo()


def start_demo() -> str | None:
    """Start ``goalkeeper demo`` as a separate app on a throw-away data directory."""
    process = QProcess()
    process.setProgram(sys.executable)
    process.setArguments(["-m", "core", "demo"])
    env = QProcessEnvironment.systemEnvironment()
    env.remove("GOALKEEPER_HOME")  # never the data directory of the app that offers the demo
    process.setProcessEnvironment(env)
    ok, _pid = process.startDetached()
    return None if ok else tr("could not start the demo")
