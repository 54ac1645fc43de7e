"""What a service manager's unit shares with the code that picks one: the variables a service
keeps from the installing shell, the command runner, the reports and the stop timeout.

:mod:`core.integration.systemd` and :mod:`core.integration.launchd` write the units;
:mod:`core.integration.service` picks one of them for the platform.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from core.integration.files import FileChange

#: how long the manager waits for ``goalkeeper daemon`` to stop
STOP_TIMEOUT_SECONDS = 30  # claude_stop_grace_seconds (10) + pipeline grace (5), with room

#: the variables a service keeps from the installing shell (when set and not empty)
CARRIED = ("PATH", "GOALKEEPER_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "TZ")

#: the XDG base directories, carried too so that the service and the CLI share one data, config
#: and state directory; the spec says a relative path is invalid, so only absolute ones are kept
XDG_CARRIED = ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME")

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
    carried.update({name: environ[name] for name in XDG_CARRIED
                    if os.path.isabs(environ.get(name) or "")})
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
