"""The goal files the user added, and the runs of each, on disk.

``<data dir>/pipelines/<name>/`` holds ``goal.toml`` (a validated snapshot of the user's file:
editing the original changes nothing until ``goalkeeper add`` is run again), ``meta.json`` (where
it came from, when it was added, when its schedule last fired), ``current`` (the id of the
unfinished run, if any) and ``runs/<run id>/`` (each run's state file, artifacts and logs).
``goalkeeper remove`` moves the directory to ``pipelines/.removed/`` — runs are never deleted.

Used by the provider in the host and, read-only or without a host, by the CLI.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from core.atomic import atomic_write_text, private_dir
from core.clock import iso, parse_iso
from core.providers.pipeline.approval import digest_text
from core.providers.pipeline.checkpoint import CheckpointError, CheckpointStore, RunRecord
from core.providers.pipeline.goalfile import (
    GOAL_PREFIX,
    NAME_PATTERN,
    GoalFile,
    GoalFileError,
    parse_goal_text,
    read_goal_text,
)


@dataclass(frozen=True)
class CatalogEntry:
    """One added goal file: its model (None when the snapshot no longer validates)."""

    name: str
    directory: Path
    goal: GoalFile | None
    base_dir: Path
    source: str
    added_at: datetime | None
    last_fire: datetime | None
    error: str | None = None
    #: the SHA-256 of the snapshot's text that ``goal`` was parsed from (see :mod:`.approval`)
    digest: str = ""

    @property
    def goal_id(self) -> str:
        return GOAL_PREFIX + self.name

    @property
    def runs_dir(self) -> Path:
        return self.directory / "runs"

    def run_dir(self, run_id: str) -> Path:
        return self.runs_dir / run_id


def goal_name(text: str) -> str:
    """``hotspot-digest`` from ``hotspot-digest`` or ``pipeline:hotspot-digest``."""
    return text.removeprefix(GOAL_PREFIX)


class PipelineCatalog:
    """Owns ``<data dir>/pipelines``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def add(self, path: Path, now: datetime,
            rewrite: Callable[[GoalFile, str], str] | None = None,
            confirm: Callable[[GoalFile], None] | None = None) -> tuple[GoalFile, bool, str]:
        """Validate ``path`` and store its snapshot; (goal, True if new / False if updated,
        the snapshot's digest).

        ``confirm`` sees the validated goal before anything is written or moved, and raises to
        stop; ``rewrite`` turns the file's text into the snapshot's (secrets moved to the
        keyring, :mod:`core.providers.pipeline.envsecrets`)."""
        text = read_goal_text(path)  # read once: the snapshot is the text that was checked
        goal = parse_goal_text(text, path)
        if confirm is not None:
            confirm(goal)
        if rewrite is not None:
            text = rewrite(goal, text)
            goal = parse_goal_text(text, path)
        directory = self.root / goal.name
        meta = self._meta(directory)
        created = not (directory / "goal.toml").exists()
        private_dir(directory)
        atomic_write_text(directory / "goal.toml", text)
        meta.update({"source": str(path.resolve()), "base_dir": str(path.resolve().parent),
                     "updated_at": iso(now)})
        meta.setdefault("added_at", iso(now))
        atomic_write_text(directory / "meta.json", json.dumps(meta, indent=1))
        return goal, created, digest_text(text)

    def remove(self, name: str, now: datetime) -> Path | None:
        """Move the goal's directory (and its runs) aside; None when there was none."""
        directory = self.root / name
        if not directory.is_dir():
            return None
        aside = self.root / ".removed" / f"{name}-{now.strftime('%Y%m%dT%H%M%SZ')}"
        private_dir(aside.parent)
        shutil.move(str(directory), str(aside))
        return aside

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir()
                      if p.is_dir() and re.match(NAME_PATTERN, p.name)
                      and (p / "goal.toml").exists())

    def entries(self) -> list[CatalogEntry]:
        return [entry for name in self.names() if (entry := self.get(name)) is not None]

    def get(self, name: str) -> CatalogEntry | None:
        directory = self.root / goal_name(name)
        snapshot = directory / "goal.toml"
        if not snapshot.exists():
            return None
        meta = self._meta(directory)
        base_dir = Path(str(meta.get("base_dir") or directory))
        goal: GoalFile | None = None
        error, digest = None, ""
        try:
            text = read_goal_text(snapshot)  # read once: the digest is of the text parsed
            digest = digest_text(text)
            goal = parse_goal_text(text, snapshot)
        except GoalFileError as exc:  # shown on the goal; the snapshot is left as it is
            error = str(exc)
        return CatalogEntry(directory.name, directory, goal, base_dir, str(meta.get("source", "")),
                            parse_iso(meta.get("added_at")), parse_iso(meta.get("last_fire")),
                            error, digest)

    def set_last_fire(self, name: str, when: datetime) -> None:
        directory = self.root / name
        meta = self._meta(directory)
        meta["last_fire"] = iso(when)
        atomic_write_text(directory / "meta.json", json.dumps(meta, indent=1))

    @staticmethod
    def _meta(directory: Path) -> dict[str, Any]:
        try:
            data = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    # -- runs ----------------------------------------------------------------------------------

    def current(self, entry: CatalogEntry) -> str | None:
        try:
            text = (entry.directory / "current").read_text(encoding="utf-8").strip()
        except OSError:
            return None
        return text or None

    def set_current(self, entry: CatalogEntry, run_id: str | None) -> None:
        path = entry.directory / "current"
        if run_id is None:
            path.unlink(missing_ok=True)
        else:
            atomic_write_text(path, run_id + "\n")

    def new_run_id(self, entry: CatalogEntry, day: str) -> str:
        base = f"{entry.name}-{day}"
        candidate, n = base, 1
        while entry.run_dir(candidate).exists():
            n += 1
            candidate = f"{base}-{n}"
        return candidate

    def runs(self, entry: CatalogEntry) -> list[RunRecord | tuple[str, CheckpointError]]:
        """Every run, newest first; a run whose state file is unusable comes with the error."""
        if not entry.runs_dir.is_dir():
            return []
        found: list[tuple[float, RunRecord | tuple[str, CheckpointError]]] = []
        for run_dir in entry.runs_dir.iterdir():
            if not run_dir.is_dir():
                continue
            try:
                record = CheckpointStore(run_dir).load()
                found.append((record.started_at.timestamp(), record))
            except CheckpointError as exc:
                found.append((run_dir.stat().st_mtime, (run_dir.name, exc)))
        found.sort(key=lambda pair: pair[0], reverse=True)
        return [item for _, item in found]
