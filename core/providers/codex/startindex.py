"""What the last start-up scan found in each rollout, kept in Goalkeeper's data directory.

Without a goals database, the goal list needs the last ``thread_goal_updated`` line of every
rollout — one pass over the history. That answer does not change while a file does not: this
index records, per rollout, the file's identity and size when it was scanned, its last goal line
and its session's cwd. The next start re-reads nothing of an unchanged file, and of a grown one
only the appended part. It lives in Goalkeeper's data directory (never in ``$CODEX_HOME``); a
missing, corrupt or foreign-version index is simply rebuilt.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from core.atomic import atomic_write_text
from core.providers import jsonload
from core.providers.codex.rollout import GoalUpdate

log = logging.getLogger(__name__)
VERSION = 1


@dataclass(frozen=True)
class StartIndexEntry:
    """One rollout as scanned: identity, size, and what was found (``scanned``: goals looked
    for at all — they are not when a goals database answers)."""

    ino: int
    size: int
    mtime_ns: int
    scanned: bool
    goal: GoalUpdate | None = None
    cwd: str | None = None

    def unchanged(self, ino: int, size: int, mtime_ns: int) -> bool:
        return (self.ino, self.size, self.mtime_ns) == (ino, size, mtime_ns)


def load(path: Path | None) -> dict[str, StartIndexEntry]:
    if path is None:
        return {}
    try:
        data = jsonload.load_file(path)  # refused by size and depth before parsing
        if data.get("version") != VERSION:
            return {}
        return {name: _entry(raw) for name, raw in data["files"].items()}
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        log.info("rebuilding the Codex start index (%s is unusable: %s)", path, exc)
        return {}


def save(path: Path | None, entries: dict[str, StartIndexEntry]) -> None:
    if path is None:
        return
    files = {name: _raw(entry) for name, entry in sorted(entries.items())}
    try:
        atomic_write_text(path, json.dumps({"version": VERSION, "files": files},
                                           separators=(",", ":")))
    except OSError as exc:
        log.warning("cannot write the Codex start index %s: %s", path, exc.strerror)


def _entry(raw: dict[str, Any]) -> StartIndexEntry:
    goal = raw.get("goal")
    return StartIndexEntry(int(raw["ino"]), int(raw["size"]), int(raw["mtime_ns"]),
                           bool(raw["scanned"]), _goal(goal) if goal else None, raw.get("cwd"))


def _goal(raw: dict[str, Any]) -> GoalUpdate:
    return GoalUpdate(
        thread_id=str(raw["thread_id"]), status=str(raw["status"]),
        objective=str(raw["objective"]), at=datetime.fromisoformat(raw["at"]),
        tokens_used=raw.get("tokens_used"), token_budget=raw.get("token_budget"),
        time_used_seconds=raw.get("time_used_seconds"),
    )


def _raw(entry: StartIndexEntry) -> dict[str, Any]:
    raw: dict[str, Any] = {"ino": entry.ino, "size": entry.size, "mtime_ns": entry.mtime_ns,
                           "scanned": entry.scanned}
    if entry.goal is not None:
        goal = entry.goal
        raw["goal"] = {"thread_id": goal.thread_id, "status": goal.status,
                       "objective": goal.objective, "at": goal.at.isoformat(),
                       "tokens_used": goal.tokens_used, "token_budget": goal.token_budget,
                       "time_used_seconds": goal.time_used_seconds}
    if entry.cwd is not None:
        raw["cwd"] = entry.cwd
    return raw
