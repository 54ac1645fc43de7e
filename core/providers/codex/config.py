"""Where Codex is and how Goalkeeper talks to it, resolved once from the settings.

``$CODEX_HOME`` (default ``~/.codex``) holds the sessions and, unless ``CODEX_SQLITE_HOME`` moves
them, the SQLite databases. The ``codex`` executable is the ``codex_bin`` setting (also
``GOALKEEPER_CODEX_BIN``) or ``codex`` on ``PATH``; it is looked up each time it is needed, so
installing Codex while Goalkeeper runs just works.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # not imported: codex-usage reads the home before the settings load
    from core.settings import Settings


class CodexNotFound(Exception):
    """The codex executable is not there; the message says where it was looked for."""


def codex_home(settings: Settings, environ: Mapping[str, str]) -> Path:
    return home_from(settings.codex_home, environ)


def home_from(setting: str, environ: Mapping[str, str]) -> Path:
    """``$CODEX_HOME`` as the ``codex_home`` setting (its text) and the environment say."""
    if setting:
        return Path(setting).expanduser()
    if environ.get("CODEX_HOME"):
        return Path(environ["CODEX_HOME"]).expanduser()
    home = environ.get("HOME")
    return (Path(home) if home else Path.home()) / ".codex"


@dataclass(frozen=True)
class CodexConfig:
    """Everything the Codex provider needs from the settings and the environment.

    Attributes:
        home: ``$CODEX_HOME``.
        sqlite_home: where ``goals_N.sqlite`` / ``state_N.sqlite`` live.
        binary: the ``codex_bin`` setting, or ``codex``.
        env: the environment Codex processes are started with (``CODEX_HOME`` set to ``home``).
        app_server_timeout: the time-box of a quota read through ``codex app-server``.
        confirm_timeout: how long a resume waits for Codex to confirm the goal is active.
        turn_end_timeout: how long a hosted run waits for the turn in progress to end after
            Codex completed or limited the goal, before it lets the app-server go.
        poll_seconds: how often appended rollout lines are looked for.
        stale_after: snapshots older than this are ``stale``.
    """

    home: Path
    sqlite_home: Path
    binary: str = "codex"
    continuation_text: str = "The usage limit has reset; continue working on the active goal."
    app_server_timeout: float = 10.0
    confirm_timeout: float = 30.0
    turn_end_timeout: float = 120.0
    poll_seconds: float = 5.0
    stale_after: float = 600.0
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def sessions(self) -> Path:
        return self.home / "sessions"

    def executable(self) -> str:
        """The codex executable's path; raises :class:`CodexNotFound` saying where it looked."""
        binary = self.binary
        if os.sep in binary or (os.altsep and os.altsep in binary):
            path = Path(binary).expanduser()
            if path.is_file() and os.access(path, os.X_OK):
                return str(path)
            raise CodexNotFound(f"the codex executable {binary} (setting codex_bin) does not "
                                "exist or is not executable")
        found = shutil.which(binary, path=self.env.get("PATH"))
        if found is None:
            raise CodexNotFound(f"{binary!r} was not found on PATH; install Codex or set "
                                "codex_bin to its path")
        return found


def from_settings(settings: Settings, environ: Mapping[str, str]) -> CodexConfig:
    home = codex_home(settings, environ)
    sqlite_home = Path(environ["CODEX_SQLITE_HOME"]).expanduser() if environ.get(
        "CODEX_SQLITE_HOME") else home
    env = dict(environ)
    env["CODEX_HOME"] = str(home)
    return CodexConfig(
        home=home,
        sqlite_home=sqlite_home,
        binary=settings.codex_bin or "codex",
        continuation_text=settings.codex_continuation_text,
        app_server_timeout=settings.codex_app_server_timeout_seconds,
        confirm_timeout=settings.codex_confirm_timeout_seconds,
        turn_end_timeout=settings.codex_turn_end_timeout_seconds,
        poll_seconds=settings.provider_refresh_seconds,
        stale_after=settings.stale_after_seconds,
        env=env,
    )
