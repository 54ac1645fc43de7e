"""Codex's goals database, opened strictly read-only.

Newer Codex builds keep goals in ``goals_<N>.sqlite``; older ones kept a ``thread_goals`` table in
the state database ``state_<N>.sqlite`` (which also has a ``threads`` table with each thread's cwd
and rollout path). ``CODEX_SQLITE_HOME`` moves both out of ``$CODEX_HOME``. The schema generation
is in the file name, so the highest ``N`` present wins. Columns are looked up, not assumed: the
first goals migration had fewer statuses and columns than today's.

"Read-only" is strict: opening a WAL database with ``mode=ro`` makes SQLite *create* the ``-wal``
and ``-shm`` files when no writer has them open — a write into ``$CODEX_HOME``. So a database
whose ``-wal``/``-shm`` pair is absent is opened ``immutable`` (it has no writer, nothing to
lock), and one with a live writer is opened ``mode=ro`` (the writer's files already exist).
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from core.providers.codex.rollout import GOAL_STATUSES, GoalUpdate

_GENERATION = re.compile(r"^(goals|state)_(\d+)\.sqlite$")


class GoalsDbError(Exception):
    """The database exists but could not be read; the message says which and why."""


@dataclass(frozen=True)
class ThreadRow:
    cwd: str | None
    rollout_path: str | None
    archived: bool


@dataclass(frozen=True)
class DbGoals:
    """What the database says: goals by thread id, and (state DB) the goals' threads."""

    source: Path
    goals: dict[str, GoalUpdate]
    threads: dict[str, ThreadRow]


def newest(directory: Path, kind: str) -> Path | None:
    """``<kind>_<N>.sqlite`` with the highest ``N`` in ``directory``."""
    best: tuple[int, Path] | None = None
    try:
        names = [p for p in directory.iterdir() if p.is_file()]
    except OSError:
        return None
    for path in names:
        match = _GENERATION.match(path.name)
        if match and match.group(1) == kind:
            generation = int(match.group(2))
            if best is None or generation > best[0]:
                best = (generation, path)
    return best[1] if best else None


def signature(directory: Path) -> tuple[tuple[str, int, int], ...]:
    """A cheap fingerprint of the goal-bearing databases (changes when Codex writes them)."""
    result = []
    for kind in ("goals", "state"):
        db = newest(directory, kind)
        if db is None:
            continue
        for path in (db, db.with_name(db.name + "-wal")):
            try:
                st = path.stat()
            except OSError:
                continue
            result.append((path.name, st.st_size, st.st_mtime_ns))
    return tuple(result)


def open_readonly(path: Path) -> sqlite3.Connection:
    """Open ``path`` without ever writing to its directory (see the module docstring)."""
    wal, shm = path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")
    mode = "mode=ro" if wal.exists() and shm.exists() else "mode=ro&immutable=1"
    uri = f"file:{quote(str(path))}?{mode}"
    try:
        con = sqlite3.connect(uri, uri=True, timeout=2.0, check_same_thread=False)
        con.execute("PRAGMA query_only = 1")
    except sqlite3.Error as exc:
        raise GoalsDbError(f"cannot open {path} read-only: {exc}") from None
    return con


def read_goals(directory: Path) -> DbGoals | None:
    """Goals from ``goals_<N>.sqlite``, else from ``thread_goals`` in ``state_<N>.sqlite``.

    None when neither database has a goals table (a Codex without goals).
    """
    goals_db, state_db = newest(directory, "goals"), newest(directory, "state")
    source = None
    for candidate in (goals_db, state_db):
        if candidate is not None and _has_table(candidate, "thread_goals"):
            source = candidate
            break
    if source is None:
        return None
    goals = _read_goal_rows(source)
    threads = _read_threads(state_db, list(goals)) if state_db is not None else {}
    return DbGoals(source, goals, threads)


def _has_table(path: Path, table: str) -> bool:
    con = open_readonly(path)
    try:
        row = con.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        return row is not None
    except sqlite3.Error as exc:
        raise GoalsDbError(f"cannot read {path}: {exc}") from None
    finally:
        con.close()


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in con.execute(f"PRAGMA table_info({table})")}


def _read_goal_rows(path: Path) -> dict[str, GoalUpdate]:
    con = open_readonly(path)
    try:
        columns = _columns(con, "thread_goals")
        if not {"thread_id", "status"} <= columns:
            raise GoalsDbError(f"{path}: thread_goals has no thread_id/status columns")
        wanted = [c for c in ("thread_id", "objective", "status", "token_budget", "tokens_used",
                              "time_used_seconds", "created_at_ms", "updated_at_ms")
                  if c in columns]
        rows = con.execute(f"SELECT {', '.join(wanted)} FROM thread_goals").fetchall()
    except sqlite3.Error as exc:
        raise GoalsDbError(f"cannot read goals from {path}: {exc}") from None
    finally:
        con.close()
    fallback = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    goals = {}
    for row in rows:
        goal = _goal_from_row(dict(zip(wanted, row, strict=True)), fallback)
        if goal is not None:
            goals[goal.thread_id] = goal
    return goals


def _goal_from_row(row: dict[str, object], fallback: datetime) -> GoalUpdate | None:
    status = GOAL_STATUSES.get(str(row.get("status")))
    thread = row.get("thread_id")
    if status is None or not isinstance(thread, str):
        return None  # a status this Goalkeeper does not know: leave the goal alone
    stamp = row.get("updated_at_ms") or row.get("created_at_ms")
    at = datetime.fromtimestamp(stamp / 1000.0, UTC) if isinstance(stamp, int | float) else (
        fallback)
    objective = row.get("objective")
    return GoalUpdate(
        thread_id=thread.lower(), status=status,
        objective=objective if isinstance(objective, str) else "", at=at,
        tokens_used=_int(row.get("tokens_used")), token_budget=_int(row.get("token_budget")),
        time_used_seconds=_int(row.get("time_used_seconds")),
    )


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _read_threads(path: Path, thread_ids: list[str]) -> dict[str, ThreadRow]:
    if not thread_ids:
        return {}
    con = open_readonly(path)
    try:
        columns = _columns(con, "threads")
        if "id" not in columns:
            return {}
        wanted = [c for c in ("id", "cwd", "rollout_path", "archived") if c in columns]
        marks = ", ".join("?" for _ in thread_ids)
        rows = con.execute(f"SELECT {', '.join(wanted)} FROM threads WHERE lower(id) IN ({marks})",
                           thread_ids).fetchall()
    except sqlite3.Error:
        return {}  # the threads table is a convenience; the rollouts say the same
    finally:
        con.close()
    result = {}
    for row in rows:
        values = dict(zip(wanted, row, strict=True))
        cwd, rollout = values.get("cwd"), values.get("rollout_path")
        result[str(values["id"]).lower()] = ThreadRow(
            cwd if isinstance(cwd, str) else None,
            rollout if isinstance(rollout, str) else None,
            bool(values.get("archived")),
        )
    return result
