"""The daemon as a systemd user service: ``$XDG_CONFIG_HOME/systemd/user/goalkeeper.service``.

``Restart=on-failure`` restarts a daemon that crashed or exited with an error, but not one that
stopped cleanly (exit 0) or stopped on a usage or configuration error (exit 2: a restart would
fail the same way). Stopping sends SIGTERM to the daemon alone (``KillMode=mixed``): that is its
clean stop — the host lease is released and running goals are marked interrupted, and the
daemon stops its own agent runs and pipeline steps in their own way; whatever is left after
``TimeoutStopSec`` is killed. Output goes to the journal (``journalctl --user -u goalkeeper``),
with the log level as a syslog priority (see :mod:`core.logs`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from core import __version__
from core.i18n import N_
from core.integration import xdg
from core.integration.command import systemd_exec, systemd_quote
from core.integration.files import Change, FileChange, remove_file, write_file
from core.integration.unit import (
    STOP_TIMEOUT_SECONDS,
    Runner,
    ServiceReport,
    ServiceStatus,
    carried_environment,
)

UNIT = "goalkeeper.service"
MARK = "# X-Goalkeeper-Service: written by `goalkeeper service install`"
DOCS = "https://github.com/goalkeeper/goalkeeper/blob/main/docs/user-guide.md#install"
#: answers of ``systemctl is-enabled`` / ``is-active`` (anything else is an error message)
UNIT_FILE_STATES = frozenset({
    "enabled", "enabled-runtime", "linked", "linked-runtime", "alias", "masked",
    "masked-runtime", "static", "indirect", "disabled", "generated", "transient", "bad",
    "not-found"})
ACTIVE_STATES = frozenset({"active", "reloading", "inactive", "failed", "activating",
                           "deactivating", "maintenance", "refreshing"})


def unit_path(environ: Mapping[str, str]) -> Path:
    return xdg.config_home(environ) / "systemd" / "user" / UNIT


def unit_text(argv: Sequence[str], environment: Mapping[str, str]) -> str:
    """The unit that runs ``argv daemon`` with ``environment``."""
    lines = [
        MARK,
        f"# Goalkeeper {__version__}; `goalkeeper service uninstall` removes it.",
        "[Unit]",
        "Description=Goalkeeper: keeps AI coding-agent goals going across quota windows",
        f"Documentation={DOCS}",
        "",
        "[Service]",
        "Type=exec",
        f"ExecStart={systemd_exec([*argv, 'daemon'])}",
    ]
    lines += [f"Environment={systemd_quote(f'{k}={v}')}" for k, v in sorted(environment.items())]
    lines += [
        "Environment=PYTHONUNBUFFERED=1",
        "Restart=on-failure",
        "RestartSec=10",
        "RestartPreventExitStatus=2",
        "KillMode=mixed",
        "KillSignal=SIGTERM",
        f"TimeoutStopSec={STOP_TIMEOUT_SECONDS}",
        "StandardOutput=journal",
        "StandardError=journal",
        "SyslogIdentifier=goalkeeper",
        "",
        "[Install]",
        "WantedBy=default.target",
    ]
    return "\n".join(lines) + "\n"


def is_ours(path: Path) -> bool:
    try:
        return path.read_text(encoding="utf-8", errors="replace").startswith(MARK + "\n")
    except FileNotFoundError:
        return False


class SystemdUser:
    """``goalkeeper.service`` in the user's systemd instance (``systemctl --user``)."""

    name = "systemd"

    def __init__(self, environ: Mapping[str, str], argv: Sequence[str], runner: Runner) -> None:
        self._path = unit_path(environ)
        self._text = unit_text(argv, carried_environment(environ))
        self._run = runner

    def _systemctl(self, *args: str) -> tuple[int, str]:
        return self._run(["systemctl", "--user", *args])

    def _reload(self) -> tuple[str, ...]:
        code, out = self._systemctl("daemon-reload")
        if code == 0:
            return ()
        return (N_("`systemctl --user daemon-reload` failed ({output}); run it in your login "
                   "session").format(output=out or f"exit {code}"),)

    def install(self) -> ServiceReport:
        if self._path.exists() and not is_ours(self._path):
            return ServiceReport(self.name, FileChange(N_("unit"), self._path, Change.KEPT,
                                                       N_("not written by Goalkeeper")),
                                 problem=N_("{path} exists and was not written by Goalkeeper; "
                                            "move it away first").format(path=self._path))
        change = write_file(N_("unit"), self._path, self._text.encode())
        notes = self._reload() if change.change is Change.WRITTEN else ()
        steps = ("systemctl --user enable --now goalkeeper",  # i18n: ignore (a command)
                 N_("loginctl enable-linger \"$USER\"   # keep it running without a login "
                    "session"),
                 N_("journalctl --user -u goalkeeper -f   # its log"))
        return ServiceReport(self.name, change, notes, steps)

    def uninstall(self) -> ServiceReport:
        if not is_ours(self._path):
            return ServiceReport(self.name, remove_file(N_("unit"), self._path, ours=False))
        notes: list[str] = []
        code, out = self._systemctl("disable", "--now", UNIT)
        if code != 0:
            notes.append(N_("`systemctl --user disable --now {unit}` failed ({output}); if it "
                            "is running, stop it in your session").format(
                unit=UNIT, output=out or f"exit {code}"))
        change = remove_file(N_("unit"), self._path)
        notes.extend(self._reload())
        return ServiceReport(self.name, change, tuple(notes))

    def status(self) -> ServiceStatus:
        installed = self._path.exists()
        ours = is_ours(self._path)
        current = installed and self._path.read_text(encoding="utf-8",
                                                      errors="replace") == self._text
        enabled, out = self._answer(("is-enabled", UNIT), UNIT_FILE_STATES)
        active, active_out = self._answer(("is-active", UNIT), ACTIVE_STATES)
        notes: tuple[str, ...] = ()
        if enabled is None or active is None:
            said = out if enabled is None else active_out
            notes = (N_("systemd's user instance did not answer: {output}").format(
                output=said or N_("no output")),)
        return ServiceStatus(self.name, self._path, installed, ours, current, enabled, active,
                             notes)

    def _answer(self, args: Sequence[str], known: frozenset[str]) -> tuple[str | None, str]:
        """The state ``systemctl`` answered (``None`` for an error message), and its output."""
        _, out = self._systemctl(*args)
        first = out.splitlines()[0].strip() if out else ""
        return (first if first in known else None), out
