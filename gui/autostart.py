"""Start at login: an XDG autostart entry for the desktop app (Linux desktops).

The entry is written to ``$XDG_CONFIG_HOME/autostart`` when ``start_at_login`` is on and removed
when it is off — only if it is ours (marked ``X-Goalkeeper-Autostart=true``), never a file the
user wrote by hand.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from core.atomic import atomic_write_text

DESKTOP_ID = "io.github.goalkeeper.Goalkeeper"
MARK = "X-Goalkeeper-Autostart=true"


def autostart_file(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_CONFIG_HOME") or str(Path(environ.get("HOME", "~")) / ".config")
    return Path(base).expanduser() / "autostart" / f"{DESKTOP_ID}.desktop"


def launch_command() -> str:
    """The command that opens the desktop app: the installed script, else this interpreter."""
    script = shutil.which("goalkeeper")
    if script:
        return f"{shlex.quote(script)} gui"
    return f"{shlex.quote(sys.executable)} -m core gui"


def desktop_entry(command: str) -> str:
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Name=Goalkeeper\n"
        "Comment=Keeps AI coding-agent goals going across quota windows\n"
        f"Exec={command}\n"
        f"Icon={DESKTOP_ID}\n"
        "Terminal=false\n"
        "X-GNOME-Autostart-enabled=true\n"
        f"{MARK}\n"
    )


def apply_autostart(enabled: bool, environ: Mapping[str, str] | None = None,
                    command: str | None = None) -> str | None:
    """Make the autostart entry match ``enabled``; returns a problem sentence or None."""
    environ = os.environ if environ is None else environ
    if not sys.platform.startswith("linux"):
        return ("starting at login is only set up on Linux desktops (XDG autostart) so far"
                if enabled else None)
    path = autostart_file(environ)
    try:
        if enabled:
            atomic_write_text(path, desktop_entry(command or launch_command()), 0o644)
        elif path.exists() and MARK in path.read_text(encoding="utf-8", errors="replace"):
            path.unlink()
    except OSError as exc:
        return f"could not update {path}: {exc.strerror or exc}"
    return None
