"""``goalkeeper service install`` / ``uninstall`` / ``status``: the daemon under the user's
service manager — a systemd user unit on Linux, a launchd agent on macOS.

The service runs ``goalkeeper daemon`` of this installation (absolute path) with the variables
in :data:`~core.integration.unit.CARRIED` copied from the shell that ran ``install``: a service
manager starts programs with its own small environment, where the agents' ``codex``/``claude``
(``PATH``) and the homes Goalkeeper reads would otherwise be missing. Secrets are never among
them.

The service manager is asked through a :data:`~core.integration.unit.Runner` (tests pass a
fake); when it cannot be reached (no user session bus over SSH, a container) the file is still
written and the report says what to run. This module only picks the manager; what the managers
share is :mod:`core.integration.unit`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from core.i18n import N_
from core.integration.launchd import LaunchAgent
from core.integration.systemd import SystemdUser
from core.integration.unit import Runner, ServiceManager, run_command


class ServiceUnsupported(Exception):
    """No service manager Goalkeeper knows on this platform."""


def service_manager(environ: Mapping[str, str], argv: Sequence[str],
                    runner: Runner = run_command, platform: str | None = None,
                    uid: int | None = None, log_dir: Path | None = None) -> ServiceManager:
    """The manager for ``platform``: systemd (Linux) or launchd (macOS); ``log_dir`` is where
    a launchd agent puts its stderr (the daemon's own log directory)."""
    name = platform or sys.platform
    if name.startswith("linux"):
        return SystemdUser(environ, argv, runner)
    if name == "darwin":
        return LaunchAgent(environ, argv, runner, uid, log_dir)
    raise ServiceUnsupported(N_("no service manager is supported on {platform} (systemd on "
                                "Linux and launchd on macOS are)").format(platform=name))
