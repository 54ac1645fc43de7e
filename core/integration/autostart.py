"""Start at login: the XDG autostart entry for the desktop app (Linux desktops).

Shared by the desktop app's *start at login* setting and ``goalkeeper desktop install``. The
entry is written to ``$XDG_CONFIG_HOME/autostart`` when ``start_at_login`` is on and removed when
it is off — only if it is ours (marked ``X-Goalkeeper-Autostart=true``), never a file the user
wrote by hand.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from core.atomic import atomic_write_text
from core.i18n import N_
from core.integration import resources, xdg
from core.integration.command import goalkeeper_argv
from core.integration.entry import AUTOSTART_MARK, autostart_entry


def autostart_path(config_home: Path) -> Path:
    return config_home / "autostart" / resources.DESKTOP_FILE


def autostart_file(environ: Mapping[str, str]) -> Path:
    return autostart_path(xdg.config_home(environ))


def is_ours(path: Path) -> bool:
    try:
        return AUTOSTART_MARK in path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return False


def apply_autostart(enabled: bool, environ: Mapping[str, str] | None = None,
                    argv: Sequence[str] | None = None, platform: str | None = None) -> str | None:
    """Make the autostart entry match ``enabled``; returns a problem sentence or None."""
    environ = os.environ if environ is None else environ
    if not xdg.is_xdg_platform(platform or sys.platform):
        return (N_("starting at login is only set up on XDG desktops (Linux) so far")
                if enabled else None)
    try:
        path = autostart_file(environ)
    except xdg.NoHomeDirectory as exc:
        return N_("cannot find the autostart directory: {error}").format(error=exc)
    try:
        if enabled:
            text = autostart_entry(resources.desktop_template(), argv or goalkeeper_argv())
            atomic_write_text(path, text, 0o644)
        elif is_ours(path):
            path.unlink()
    except OSError as exc:
        return N_("could not update {path}: {error}").format(path=path,
                                                               error=exc.strerror or exc)
    return None
