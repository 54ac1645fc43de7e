"""``goalkeeper service install`` / ``uninstall`` / ``status``: the daemon under the user's
service manager — a systemd user unit on Linux, a launchd agent on macOS.

The service runs ``goalkeeper daemon`` of this installation (absolute path) with the variables
in :data:`CARRIED` copied from the shell that ran ``install``: a service manager starts
programs with its own small environment, where the agents' ``codex``/``claude`` (``PATH``) and
the homes Goalkeeper reads would otherwise be missing. Secrets are never among them.

The service manager is asked through a :data:`Runner` (tests pass a fake); when it cannot be
reached (no user session bus over SSH, a container) the file is still written and the report
says what to run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from core.i18n import N_
from core.integration.files import FileChange

#: the variables a service keeps from the installing shell (when set and not empty)
CARRIED = ("PATH", "GOALKEEPER_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "TZ")

#: runs a service-manager command: argv → (exit code, combined output)
Runner = Callable[[Sequence[str]], tuple[int, str]]


def run_command(argv: Sequence[str]) -> tuple[int, str]:
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=30,
                              check=False)
    except FileNotFoundError:
        return 127, f"{argv[0]}: not found"
    except subprocess.TimeoutExpired:
        return 124, f"{' '.join(argv)}: no answer within 30 s"
    return done.returncode, (done.stdout + done.stderr).strip()


#: carried variables that name one directory: made absolute (a service starts elsewhere)
_DIRECTORIES = ("GOALKEEPER_HOME", "CODEX_HOME")


def carried_environment(environ: Mapping[str, str]) -> dict[str, str]:
    carried = {name: environ[name] for name in CARRIED if environ.get(name)}
    for name in _DIRECTORIES:
        if name in carried:
            carried[name] = os.path.abspath(os.path.expanduser(carried[name]))
    return carried


@dataclass(frozen=True)
class ServiceReport:
    """What ``install``/``uninstall`` did: the file, what the service manager said, and what
    the user may still have to run."""

    manager: str
    file: FileChange
    notes: tuple[str, ...] = ()
    next_steps: tuple[str, ...] = ()
    problem: str | None = None


@dataclass(frozen=True)
class ServiceStatus:
    """The service as installed: its file, whether it is ours and current, and what the
    service manager says (``None`` when it could not be asked)."""

    manager: str
    path: Path
    installed: bool
    ours: bool
    current: bool
    enabled: str | None = None
    active: str | None = None
    notes: tuple[str, ...] = field(default=())


class ServiceManager(Protocol):
    name: str

    def install(self) -> ServiceReport: ...

    def uninstall(self) -> ServiceReport: ...

    def status(self) -> ServiceStatus: ...


class ServiceUnsupported(Exception):
    """No service manager Goalkeeper knows on this platform."""


def service_manager(environ: Mapping[str, str], argv: Sequence[str],
                    runner: Runner = run_command, platform: str | None = None,
                    uid: int | None = None, log_dir: Path | None = None) -> ServiceManager:
    """The manager for ``platform``: systemd (Linux) or launchd (macOS); ``log_dir`` is where
    a launchd agent puts its stderr (the daemon's own log directory)."""
    name = platform or sys.platform
    if name.startswith("linux"):
        from core.integration.systemd import SystemdUser

        return SystemdUser(environ, argv, runner)
    if name == "darwin":
        from core.integration.launchd import LaunchAgent

        return LaunchAgent(environ, argv, runner, uid, log_dir)
    raise ServiceUnsupported(N_("no service manager is supported on {platform} (systemd on "
                                "Linux and launchd on macOS are)").format(platform=name))
