"""What a host knows about Codex the moment it starts, read from the ends of the files.

* The gauges: the newest ``token_count`` snapshot. Rollouts are only appended to, so it is near
  the end of the most recently modified file; files are tried newest first, each searched
  backwards, and the search stops at the first file that is older than the best snapshot found.
* The goal list: the goals database when there is one (no rollout needs reading); otherwise the
  last ``thread_goal_updated`` line of every rollout, found by a backwards byte search that stops
  at the first hit — a goal's latest status is usually near the end of its file.
* Where each goal's session lives: its rollout's first line, ``session_meta`` (the cwd).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from core.providers.codex.follow import FileState
from core.providers.codex.goals_db import DbGoals, GoalsDbError, read_goals
from core.providers.codex.limits import RateSnapshot
from core.providers.codex.rollout import (
    GoalUpdate,
    MalformedLine,
    RateLine,
    SessionMeta,
    parse_line,
)
from core.providers.codex.tailscan import first_line, scan_back

log = logging.getLogger(__name__)

#: how many of the newest files may be searched for a snapshot (API-key users have none)
SNAPSHOT_FILES = 8
#: a file modified this long before the best snapshot cannot hold a newer one
_MTIME_SLACK_NS = 120 * 10**9


@dataclass
class StartupState:
    snapshot: RateSnapshot | None = None
    #: the last goal line of each rollout (only read when there is no goals database)
    goals: dict[str, GoalUpdate] = field(default_factory=dict)
    metas: dict[str, SessionMeta] = field(default_factory=dict)
    db: DbGoals | None = None
    db_error: str | None = None


def _snapshot_of(line: bytes) -> RateSnapshot | None:
    try:
        event = parse_line(line)
    except MalformedLine:
        return None
    return event.snapshot if isinstance(event, RateLine) else None


def _goal_of(line: bytes) -> GoalUpdate | None:
    try:
        event = parse_line(line)
    except MalformedLine:
        return None
    return event if isinstance(event, GoalUpdate) else None


def latest_snapshot(files: list[FileState]) -> RateSnapshot | None:
    best: RateSnapshot | None = None
    newest = sorted(files, key=lambda s: s.mtime_ns, reverse=True)[:SNAPSHOT_FILES]
    for state in newest:
        if best is not None and state.mtime_ns < _ns(best) - _MTIME_SLACK_NS:
            break
        try:
            found = scan_back(state.path, b'"token_count"', _snapshot_of)
        except OSError as exc:
            log.warning("cannot read %s: %s", state.path, exc.strerror)
            continue
        if found is not None and (best is None or found.observed_at > best.observed_at):
            best = found
    return best


def _ns(snapshot: RateSnapshot) -> int:
    return int(snapshot.observed_at.timestamp() * 10**9)


def last_goal(path: Path) -> GoalUpdate | None:
    return scan_back(path, b'"thread_goal_updated"', _goal_of)


def session_meta(path: Path) -> SessionMeta | None:
    try:
        line = first_line(path)
        event = parse_line(line) if line else None
    except (OSError, MalformedLine):
        return None
    return event if isinstance(event, SessionMeta) else None


def read_startup(files: list[FileState], sqlite_home: Path) -> StartupState:
    """Snapshot, goals and the goals' sessions, as described in the module docstring."""
    state = StartupState(snapshot=latest_snapshot(files))
    try:
        state.db = read_goals(sqlite_home)
    except GoalsDbError as exc:
        state.db_error = str(exc)
        log.warning("%s; reading goals from the session files instead", exc)
    by_thread = {f.thread_id: f for f in files if f.thread_id}
    if state.db is None:
        for file in files:
            try:
                goal = last_goal(file.path)
            except OSError as exc:
                log.warning("cannot read %s: %s", file.path, exc.strerror)
                continue
            if goal is not None:
                state.goals[goal.thread_id] = goal
    for thread in state.goals.keys() | (state.db.goals.keys() if state.db else set()):
        rollout = by_thread.get(thread)
        meta = session_meta(rollout.path) if rollout else None
        if meta is not None:
            state.metas[thread] = meta
    return state

