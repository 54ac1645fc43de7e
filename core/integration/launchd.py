"""The daemon as a launchd agent (macOS): ``~/Library/LaunchAgents/<label>.plist``.

``RunAtLoad`` starts it when the user logs in (an agent in ``LaunchAgents`` is loaded then);
``KeepAlive = {SuccessfulExit: false}`` restarts it only when it exits with an error — the
``Restart=on-failure`` of launchd — at most every ``ThrottleInterval`` seconds. launchd stops it
with SIGTERM (the daemon's clean stop) and kills it after ``ExitTimeOut`` seconds. The daemon
writes its own rotated log (the log directory, ``~/Library/Logs/Goalkeeper``); stdout would
repeat it, so only stderr (a crash's traceback) gets a file of its own.
"""

from __future__ import annotations

import os
import plistlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from core.i18n import N_
from core.integration import xdg
from core.integration.files import Change, FileChange, remove_file, write_file
from core.integration.unit import (
    STOP_TIMEOUT_SECONDS,
    Runner,
    ServiceReport,
    ServiceStatus,
    carried_environment,
)

LABEL = "io.github.goalkeeper.Goalkeeper.daemon"
_STATE = re.compile(r"^\s*state = (.+)$", re.MULTILINE)


def agent_path(environ: Mapping[str, str]) -> Path:
    return xdg.home_dir(environ) / "Library" / "LaunchAgents" / f"{LABEL}.plist"


def agent_plist(argv: Sequence[str], environment: Mapping[str, str], log_dir: Path) -> bytes:
    """The agent that runs ``argv daemon`` with ``environment``."""
    agent: dict[str, Any] = {
        "Label": LABEL,
        "ProgramArguments": [*argv, "daemon"],
        "EnvironmentVariables": {**environment, "PYTHONUNBUFFERED": "1"},
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": 10,
        "ExitTimeOut": STOP_TIMEOUT_SECONDS,
        "StandardOutPath": "/dev/null",
        "StandardErrorPath": str(log_dir / "daemon.stderr.log"),
    }
    return plistlib.dumps(agent, sort_keys=True)


def is_ours(path: Path) -> bool:
    try:
        data = plistlib.loads(path.read_bytes())
    except (OSError, plistlib.InvalidFileException, ValueError):
        return False
    return isinstance(data, dict) and data.get("Label") == LABEL


class LaunchAgent:
    """The agent ``io.github.goalkeeper.Goalkeeper.daemon`` in the user's GUI domain."""

    name = "launchd"

    def __init__(self, environ: Mapping[str, str], argv: Sequence[str], runner: Runner,
                 uid: int | None, log_dir: Path | None = None) -> None:
        self._path = agent_path(environ)
        logs = log_dir or xdg.home_dir(environ) / "Library" / "Logs" / "Goalkeeper"
        self._data = agent_plist(argv, carried_environment(environ), logs)
        self._run = runner
        self._domain = f"gui/{os.getuid() if uid is None else uid}"

    def install(self) -> ServiceReport:
        if self._path.exists() and not is_ours(self._path):
            return ServiceReport(self.name, FileChange(N_("agent"), self._path, Change.KEPT,
                                                       N_("not written by Goalkeeper")),
                                 problem=N_("{path} exists and was not written by Goalkeeper; "
                                            "move it away first").format(path=self._path))
        change = write_file(N_("agent"), self._path, self._data)
        steps = (N_("launchctl bootstrap {domain} {path}   # start it now (it starts by itself "
                    "at your next login)").format(domain=self._domain, path=self._path),
                 N_("launchctl kickstart -k {service}   # restart it").format(
                     service=f"{self._domain}/{LABEL}"))
        notes = ((N_("it was already loaded: `launchctl bootout` and `bootstrap` it again to "
                     "use the new file"),) if change.change is Change.WRITTEN and self._loaded()
                 else ())
        return ServiceReport(self.name, change, notes, steps)

    def uninstall(self) -> ServiceReport:
        if not is_ours(self._path):
            return ServiceReport(self.name, remove_file(N_("agent"), self._path, ours=False))
        notes: tuple[str, ...] = ()
        if self._loaded():
            code, out = self._run(["launchctl", "bootout", f"{self._domain}/{LABEL}"])
            if code != 0:
                notes = (N_("`launchctl bootout` failed ({output})").format(
                    output=out or f"exit {code}"),)
        return ServiceReport(self.name, remove_file(N_("agent"), self._path), notes)

    def status(self) -> ServiceStatus:
        installed = self._path.exists()
        current = installed and self._path.read_bytes() == self._data
        code, out = self._run(["launchctl", "print", f"{self._domain}/{LABEL}"])
        state = _STATE.search(out) if code == 0 else None
        active = state.group(1).strip() if state else "not loaded"
        return ServiceStatus(self.name, self._path, installed, is_ours(self._path), current,
                             "at login" if installed else "not-found", active)

    def _loaded(self) -> bool:
        code, _ = self._run(["launchctl", "print", f"{self._domain}/{LABEL}"])
        return code == 0
