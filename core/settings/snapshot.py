"""A snapshot of validated settings, so that a command that only reads them need not load pydantic.

``goalkeeper status`` runs in scripts, status lines and hooks, many times a minute; validating
``config.toml`` with pydantic costs more than the rest of the command (issue 24). What it
validates is the same every time as long as the file, the ``GOALKEEPER_*`` variables and the
schema are: so the validated values are kept in a private file (0600, in the data directory)
under a key that digests all of them, and read back as a :class:`SettingsSnapshot`.

The snapshot is a cache, never a source: it is used only when its key matches exactly (this
format, this version of Goalkeeper, the source of the schema and of the modules it takes its
checks from, this file's path and bytes, these variables), when it is ours and private, and
when it parses; anything else — missing, corrupt, stale, another format — is validated again
as always (the same messages for a bad file), and a good result written back. A failed
validation is never kept. Settings that do not survive the round trip through JSON unchanged
(user quotas, ``[quotas.*]``, are models) are not kept either: those are validated every time.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from core import __version__
from core.atomic import atomic_write_text
from core.models.plain import FrozenValues
from core.notices import Kind
from core.quota.machine import HysteresisPolicy

if TYPE_CHECKING:
    from core.settings import Settings

#: bumped when what the file holds changes; a snapshot of another format is never trusted
FORMAT = 1
#: settings fields whose values are enums (JSON holds their value); a field of another
#: non-JSON type makes the round trip fail, and such settings are then not kept
ENUMS: dict[str, type[Enum]] = {"notify_ntfy_min_kind": Kind, "notify_webhook_min_kind": Kind}
#: the core's top (the sources the key digests are named relative to it)
_CORE = Path(__file__).resolve().parents[1]
_PREFIX = "GOALKEEPER_"


class SettingsSnapshot(FrozenValues):
    """Settings validated before, read back: the same attributes, values and derived policies
    as :class:`core.settings.schema.Settings`, frozen — for reading only (no pydantic methods)."""

    __slots__ = ()

    def auto_resume_for(self, provider: str) -> bool:
        return auto_resume_for(cast("Settings", self), provider)

    def hysteresis(self) -> HysteresisPolicy:
        return hysteresis_of(cast("Settings", self))


def auto_resume_for(settings: Settings, provider: str) -> bool:
    """Whether a newly found goal of ``provider`` starts with auto-resume on."""
    own = {"codex": settings.codex_auto_resume, "claude": settings.claude_auto_resume}
    return settings.auto_resume_default or own.get(provider, False)


def hysteresis_of(settings: Settings) -> HysteresisPolicy:
    return HysteresisPolicy(
        pause_threshold_percent=settings.pause_threshold_percent,
        resume_threshold_percent=settings.resume_threshold_percent,
        stable_seconds=settings.stable_seconds,
        stale_after_seconds=settings.stale_after_seconds,
    )


def recall(config_file: Path, snapshot_file: Path,
           environ: Mapping[str, str]) -> Settings | None:
    """The settings kept in ``snapshot_file`` for exactly this file and these variables, else
    None (missing, unreadable, not private, another format or key: validate again)."""
    try:
        with snapshot_file.open("rb") as handle:
            info = os.fstat(handle.fileno())
            if info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
                return None
            held = json.loads(handle.read())
        values, sources = held["values"], held["sources"]
        if held["format"] != FORMAT or not isinstance(values, dict) or not isinstance(
                sources, list):
            return None
        if held["key"] != _key(config_file, environ, values, sources):
            return None
        restored = {name: ENUMS[name](value) if name in ENUMS else value
                    for name, value in values.items()}
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return cast("Settings", SettingsSnapshot(restored))


def remember(settings: Settings, config_file: Path, snapshot_file: Path,
             environ: Mapping[str, str]) -> None:
    """Keep ``settings`` (just validated from ``config_file`` and ``environ``) for the next
    :func:`recall` — when they survive the round trip unchanged and the directory exists (a
    command that reads creates no directory). Best effort: a snapshot not written is only a
    slower next start."""
    values = settings.model_dump(mode="json")
    restored = {name: ENUMS[name](value) if name in ENUMS else value
                for name, value in values.items()}
    for name, value in restored.items():
        original = getattr(settings, name)
        if type(value) is not type(original) or value != original:
            return
    if not snapshot_file.parent.is_dir():
        return
    try:
        sources = _validating_sources()
        key = _key(config_file, environ, values, sources)
        held = {"format": FORMAT, "key": key, "sources": sources, "values": values}
        atomic_write_text(snapshot_file, json.dumps(held, sort_keys=True), mode=0o600,
                          durable=False)
    except OSError:
        return


def _validating_sources() -> list[str]:
    """The files whose code validates the settings: the schema, this module and the core's
    modules the schema imports its checks from (a changed check validates again, even within
    one version)."""
    import re

    schema = _CORE / "settings" / "schema.py"
    names = re.findall(r"^from (core(?:\.\w+)+) import", schema.read_text(encoding="utf-8"),
                       re.MULTILINE)
    files = {schema, _CORE / "settings" / "snapshot.py"}
    for name in names:
        base = _CORE.joinpath(*name.split(".")[1:])
        files.add(base / "__init__.py" if base.is_dir() else base.with_suffix(".py"))
    return sorted(path.relative_to(_CORE).as_posix() for path in files)


def _key(config_file: Path, environ: Mapping[str, str], fields: Mapping[str, Any],
         sources: list[str]) -> str:
    """A digest of everything validation read: Goalkeeper's version, the sources of the checks,
    the file's path and bytes, and the ``GOALKEEPER_*`` variables that name a field."""
    digest = hashlib.sha256()
    digest.update(f"{FORMAT}\0{__version__}\0".encode())
    for source in sources:
        digest.update(source.encode() + b"\0")
        digest.update(hashlib.sha256((_CORE / source).read_bytes()).digest())
    digest.update(os.fsencode(config_file) + b"\0")
    try:
        digest.update(b"file\0" + hashlib.sha256(config_file.read_bytes()).digest())
    except FileNotFoundError:
        digest.update(b"no file\0")
    variables = sorted((name, environ[_PREFIX + name.upper()]) for name in fields
                       if _PREFIX + name.upper() in environ)
    digest.update(json.dumps(variables).encode())
    return digest.hexdigest()
