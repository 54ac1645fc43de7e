"""Before any window: which data directory and settings, and is a host already running there?

Qt-free apart from nothing: everything here is plain Python so it is tested directly. The app calls
:func:`plan_launch`, then :func:`existing_host`; when a host holds the lease it either asks that
host (a desktop app) to raise its window over the control socket, or explains who holds it.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass

from core.demo import demo_settings
from core.hosts.control import NoHostRunning, send_request
from core.hosts.lease import HostInfo, host_running
from core.i18n import _
from core.paths import Paths, resolve_paths
from core.settings import Settings, SettingsError, load_settings

#: the control-socket op a desktop app serves so that a second launch can raise its window
SHOW_WINDOW_OP = "show-window"


@dataclass(frozen=True)
class LaunchPlan:
    paths: Paths
    settings: Settings
    demo: bool
    kind: str  # the host kind written to host.json: "gui" or "demo"


def plan_launch(demo: bool, environ: Mapping[str, str] | None = None) -> LaunchPlan:
    """Paths and settings; the demo runs on ``GOALKEEPER_HOME`` or a fresh throw-away directory.

    Raises :class:`core.settings.SettingsError` for a bad ``config.toml`` or variable.
    """
    environ = os.environ if environ is None else environ
    if demo:
        given = environ.get("GOALKEEPER_HOME")
        home = given or tempfile.mkdtemp(prefix="goalkeeper-demo-")
        paths = resolve_paths({**environ, "GOALKEEPER_HOME": home})
        settings = demo_settings(paths, environ, bool(given))
        return LaunchPlan(paths, settings, True, "demo")
    paths = resolve_paths(environ)
    return LaunchPlan(paths, load_settings(paths.config_file, environ), False, "gui")


def settings_problem(environ: Mapping[str, str] | None = None) -> str | None:
    """What is wrong with ``config.toml`` or a ``GOALKEEPER_*`` variable, or None."""
    environ = os.environ if environ is None else environ
    try:
        load_settings(resolve_paths(environ).config_file, environ)
    except SettingsError as exc:
        return str(exc)
    return None


def display_problem(environ: Mapping[str, str] | None = None) -> str | None:
    """Why no window can open here (Linux without a display), or None."""
    environ = os.environ if environ is None else environ
    if not sys.platform.startswith("linux") or environ.get("QT_QPA_PLATFORM"):
        return None
    if environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"):
        return None
    # said before Qt exists (no window without a display): the core's catalogue (as is all of
    # this Qt-free module's)
    return _("no display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set). "
             "Run `goalkeeper daemon` for the headless host, or `goalkeeper demo --headless`.")


def existing_host(paths: Paths) -> HostInfo | None:
    return host_running(paths)


def ask_to_show_window(info: HostInfo, paths: Paths, timeout: float = 3.0) -> bool:
    """Ask the running host to raise its window; False when it is not a desktop app (blocking)."""
    socket_path = type(paths.socket_path)(info.socket) if info.socket else paths.socket_path
    try:
        reply = send_request(socket_path, {"op": SHOW_WINDOW_OP, "origin": "gui"}, timeout)
    except (NoHostRunning, OSError, ValueError):
        return False
    return bool(reply.get("ok"))


def already_hosted_text(info: HostInfo, paths: Paths) -> str:
    """The explanation shown when another process (a daemon, a headless demo) is the host."""
    who = info.describe() if info.pid else _("another Goalkeeper process")
    stop = _(" (`kill {pid}`, or Ctrl-C in its terminal)").format(pid=info.pid) \
        if info.pid else ""
    return _("{who} is already the host for {data_dir}.\n\n"
             "Only one host may run goals for a data directory, so the desktop app will not "
             "start a second one. Stop it{stop} and open Goalkeeper again — or keep using that "
             "host through the `goalkeeper` commands (`goalkeeper status`, `goalkeeper resume "
             "GOAL`).").format(who=who, data_dir=paths.data_dir, stop=stop)
