"""What a host knows about Codex the moment it starts, read from the ends of the files.

* The gauges: the newest ``token_count`` snapshot. Rollouts are only appended to, so it is near
  the end of the most recently modified file; files are tried newest first, each searched
  backwards, and the search stops at the first file that is older than the best snapshot found.
* The goal list: the goals database when there is one (no rollout needs reading); otherwise the
  last ``thread_goal_updated`` line of every rollout, found by a backwards byte search that stops
  at the first hit — a goal's latest status is usually near the end of its file.
* Where each goal's session lives: its rollout's first line, ``session_meta`` (the cwd).

What was found is kept in the start index (:mod:`.startindex`), so the next start reads only what
changed since.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from core.providers.codex.follow import RolloutFileState
from core.providers.codex.goals_db import DbGoals, GoalsDbError, read_goals
from core.providers.codex.limits import RateSnapshot
from core.providers.codex.rollout import (
    GoalUpdate,
    MalformedLine,
    RateLine,
    RolloutSessionMeta,
    TurnLimited,
    parse_line,
)
from core.providers.codex.startindex import StartIndexEntry
from core.providers.codex.tailscan import first_line, scan_back, scan_back_at
from core.providers.numbers import warn_once

log = logging.getLogger(__name__)
E = TypeVar("E")
#: how far from a rollout's end a limit stop is looked for (see :func:`_limit_stopped`)
STOP_BUDGET = 1 << 20

#: how many of the newest files may be searched for a snapshot (API-key users have none)
SNAPSHOT_FILES = 8
#: a file modified this long before the best snapshot cannot hold a newer one
_MTIME_SLACK_NS = 120 * 10**9


@dataclass
class StartupState:
    snapshot: RateSnapshot | None = None
    #: the last goal line of each rollout (only read when there is no goals database)
    goals: dict[str, GoalUpdate] = field(default_factory=dict)
    metas: dict[str, RolloutSessionMeta] = field(default_factory=dict)
    db: DbGoals | None = None
    db_error: str | None = None
    #: the start index for the next start
    entries: dict[str, StartIndexEntry] = field(default_factory=dict)
    #: rollouts that could not be read: path → the system's reason (for the host's health)
    unreadable: dict[str, str] = field(default_factory=dict)


def _event_of(kind: type[E]) -> Callable[[bytes], E | None]:
    """An ``accept`` for :func:`scan_back`: the line's event when it is a ``kind``."""
    def accept(line: bytes) -> E | None:
        try:
            event = parse_line(line)
        except MalformedLine as exc:
            warn_once("a Codex rollout", exc.reason)  # skipped: the scan goes on to older lines
            return None
        return event if isinstance(event, kind) else None
    return accept


_goal_of = _event_of(GoalUpdate)
_stop_of = _event_of(TurnLimited)
_rate_of = _event_of(RateLine)


def _snapshot_of(line: bytes) -> RateSnapshot | None:
    event = _rate_of(line)
    return event.snapshot if event is not None else None


def latest_snapshot(files: list[RolloutFileState],
                    unreadable: dict[str, str] | None = None) -> RateSnapshot | None:
    best: RateSnapshot | None = None
    newest = sorted(files, key=lambda s: s.mtime_ns, reverse=True)[:SNAPSHOT_FILES]
    for state in newest:
        if best is not None and state.mtime_ns < _ns(best) - _MTIME_SLACK_NS:
            break
        try:
            found = scan_back(state.path, b'"token_count"', _snapshot_of)
        except OSError as exc:
            log.warning("cannot read %s: %s", state.path, exc.strerror)
            if unreadable is not None:
                unreadable[str(state.path)] = str(exc.strerror or exc)
            continue
        if found is not None and (best is None or found.observed_at > best.observed_at):
            best = found
    return best


def _ns(snapshot: RateSnapshot) -> int:
    return int(snapshot.observed_at.timestamp() * 10**9)


def last_goal(path: Path, floor: int = 0) -> GoalUpdate | None:
    found = _last_goal_at(path, floor)
    return found[0] if found is not None else None


def _last_goal_at(path: Path, floor: int = 0) -> tuple[GoalUpdate, int] | None:
    """The last goal line from ``floor`` on, and the offset just past it."""
    return scan_back_at(path, b'"thread_goal_updated"', _goal_of, floor=floor)


def session_meta(path: Path) -> RolloutSessionMeta | None:
    try:
        line = first_line(path)
        event = parse_line(line) if line else None
    except (OSError, MalformedLine):
        return None
    return event if isinstance(event, RolloutSessionMeta) else None


def read_startup(files: list[RolloutFileState], sqlite_home: Path,
                 cached: dict[str, StartIndexEntry] | None = None) -> StartupState:
    """Snapshot, goals and the goals' sessions, as described in the module docstring.

    ``cached`` is the start index of the previous start: unchanged files are not read again,
    grown ones only from where they were (``state.entries`` is the index for the next start).
    """
    state = StartupState()
    state.snapshot = latest_snapshot(files, state.unreadable)
    try:
        state.db = read_goals(sqlite_home)
    except GoalsDbError as exc:
        state.db_error = str(exc)
        log.warning("%s; reading goals from the session files instead", exc)
    cached = cached or {}
    scan = state.db is None
    for file in files:
        entry = cached.get(str(file.path))
        if entry is not None and entry.ino != file.ino:
            entry = None  # another file under the same name
        goal = _goal_for(file, entry, state.unreadable) if scan else None
        if goal is not None:
            state.goals[goal.thread_id] = goal
        state.entries[str(file.path)] = StartIndexEntry(file.ino, file.size, file.mtime_ns, scan,
                                                        goal, entry.cwd if entry else None)
    _find_sessions(state, files)
    return state


def _goal_for(file: RolloutFileState, entry: StartIndexEntry | None,
              unreadable: dict[str, str]) -> GoalUpdate | None:
    try:
        if entry is not None and entry.scanned:
            if entry.unchanged(file.ino, file.size, file.mtime_ns):
                return entry.goal
            if file.size > entry.size:  # appended to: only the new lines can hold a newer goal
                found = _last_goal_at(file.path, floor=entry.size)
                goal = found[0] if found else entry.goal
                return _limit_stopped(file.path, goal, floor=found[1] if found else entry.size)
        found = _last_goal_at(file.path)
        return _limit_stopped(file.path, *found) if found else None
    except OSError as exc:
        log.warning("cannot read %s: %s", file.path, exc.strerror)
        unreadable[str(file.path)] = str(exc.strerror or exc)
        return None


def _limit_stopped(path: Path, goal: GoalUpdate | None, floor: int = 0) -> GoalUpdate | None:
    """An ``active`` goal whose rollout shows a turn stopped at the usage limit after it is
    ``usageLimited`` (0.169.0 writes that change only to its database). Such a stop ends the
    session's last turn, so only the file's last ``STOP_BUDGET`` bytes are searched — and only
    from ``floor`` on (just past the goal's line: rollouts are written in time order)."""
    if goal is None or goal.status != "active":
        return goal
    stop = scan_back(path, b"usage_limit_exceeded", _stop_of, budget=STOP_BUDGET, floor=floor)
    if stop is None or stop.at <= goal.at:
        return goal
    return replace(goal, status="usageLimited", at=stop.at)


def _find_sessions(state: StartupState, files: list[RolloutFileState]) -> None:
    """The cwd of every goal's session: from the index, else from the rollout's first line."""
    by_thread = {f.thread_id: f for f in files if f.thread_id}
    for thread in state.goals.keys() | (state.db.goals.keys() if state.db else set()):
        rollout = by_thread.get(thread)
        if rollout is None:
            continue
        key = str(rollout.path)
        entry = state.entries[key]
        if entry.cwd is not None:
            state.metas[thread] = RolloutSessionMeta(thread, entry.cwd, state.goals[thread].at
                                                     if thread in state.goals else _mtime(rollout))
            continue
        meta = session_meta(rollout.path)
        if meta is not None:
            state.metas[thread] = meta
            state.entries[key] = replace(entry, cwd=meta.cwd)


def _mtime(file: RolloutFileState) -> datetime:
    return datetime.fromtimestamp(file.mtime_ns / 1e9, UTC)
