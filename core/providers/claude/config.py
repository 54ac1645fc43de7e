"""Where Claude Code keeps things, and the few of its settings Goalkeeper reads.

* Config directories: the setting ``claude_config_dirs``, else ``$CLAUDE_CONFIG_DIR`` (several
  directories may be listed, separated by commas), else ``~/.claude`` and ``~/.config/claude``.
* Global state (``cachedUsageUtilization``): ``~/.claude.json`` for the default directory,
  ``<dir>/.claude.json`` for a relocated one.

Whether Claude Code continues a session by itself is not read from its settings
(``autoContinueAtUsageLimit``): only what a live TUI wrote to the transcript says it will
(:func:`core.providers.claude.sessions.native_block`).

Goalkeeper only reads here; the only writes into a config directory are the opt-in hook entries
(:mod:`core.providers.claude.hooks`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from datetime import tzinfo
from pathlib import Path
from typing import Any

from core import clock
from core.clock import zone_named
from core.i18n import N_
from core.providers import jsonload

log = logging.getLogger(__name__)

def home(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("HOME") or os.path.expanduser("~"))


def candidate_dirs(setting: str, environ: Mapping[str, str]) -> list[Path]:
    """Every directory Claude Code may use, existing or not, without duplicates."""
    listed = setting.strip() or environ.get("CLAUDE_CONFIG_DIR", "").strip()
    if listed:
        raw = [Path(part.strip()).expanduser() for part in listed.split(",") if part.strip()]
    else:
        base = home(environ)
        raw = [base / ".claude", base / ".config" / "claude"]
    seen: list[Path] = []
    for path in raw:
        resolved = path.absolute()
        if resolved not in seen:
            seen.append(resolved)
    return seen


def existing_dirs(setting: str, environ: Mapping[str, str]) -> list[Path]:
    return [d for d in candidate_dirs(setting, environ) if d.is_dir()]


def is_default_dir(config_dir: Path, environ: Mapping[str, str]) -> bool:
    return config_dir == (home(environ) / ".claude").absolute()


def global_state_path(config_dir: Path, environ: Mapping[str, str]) -> Path:
    if is_default_dir(config_dir, environ):
        return home(environ) / ".claude.json"
    return config_dir / ".claude.json"


def read_json_object(path: Path) -> dict[str, Any] | None:
    """A JSON object from ``path``; None (logged) when missing or unreadable."""
    return read_json_checked(path)[0]


def read_json_checked(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """A JSON object from ``path``, and why it could not be read (None: missing or read)."""
    try:
        data = jsonload.load_file(path)
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError) as exc:  # a 100,000-deep file: refused by depth
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        log.warning("cannot read %s: %s", path, why)
        return None, why
    if not isinstance(data, dict):
        return None, N_("not a JSON object")
    return data, None


class JsonCache:
    """JSON objects read from files, re-read only when a file's mtime or size changed
    (``~/.claude.json`` can be megabytes)."""

    def __init__(self) -> None:
        self._entries: dict[Path, tuple[tuple[int, int], dict[str, Any] | None]] = {}
        #: the files that could not be read, with why (a health problem: core.health)
        self.failed: dict[Path, str] = {}

    def get(self, path: Path) -> dict[str, Any] | None:
        try:
            st = path.stat()
        except OSError:
            self._entries.pop(path, None)
            self.failed.pop(path, None)
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        cached = self._entries.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        data, why = read_json_checked(path)
        if why is None:
            self.failed.pop(path, None)
        else:
            self.failed[path] = why
        self._entries[path] = (stamp, data)
        return data


def local_zone(setting: str, environ: Mapping[str, str], system: tzinfo | None = None
               ) -> tzinfo:
    """The zone for limit messages that name none: the setting, else ``system`` (a host's
    :class:`~core.clock.LiveZone`), else the system's now."""
    name = setting.strip()
    if name:
        zone = zone_named(name)
        if zone is not None:
            return zone
        log.warning("unknown time zone %r; ignored", name)
    return system or clock.local_zone(environ)
