"""What the Codex provider knows right now, and which reports each new fact calls for.

:class:`CodexState` holds the newest rate-limit snapshot, the goal book and each session's cwd.
It owns no I/O and sends nothing: its ``take_*`` methods say what changed, and the provider turns
that into sink calls. That keeps the rules (newest wins, a goal's reset is fixed when it stops)
testable without files or an engine.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from core.providers.codex.goals import GoalRecord, ThreadGoalBook
from core.providers.codex.goals_db import DbGoals
from core.providers.codex.limits import RateSnapshot
from core.providers.codex.rollout import GoalUpdate, RolloutSessionMeta, TurnLimited
from core.providers.codex.startup import StartupState


class CodexState:
    """Attributes: ``snapshot`` (newest rate limits), ``book`` (goals), ``metas`` (sessions)."""

    def __init__(self) -> None:
        self.snapshot: RateSnapshot | None = None
        self.book = ThreadGoalBook()
        self.metas: dict[str, RolloutSessionMeta] = {}
        self.db_seen = False  # a goals database was read at least once

    def take_snapshot(self, snapshot: RateSnapshot) -> bool:
        """Keep ``snapshot`` if it is the newest; True when the gauges changed.

        An app-server answer taken at the same instant as the last snapshot still wins (it is
        the authority); a rollout line must be strictly newer.
        """
        current = self.snapshot
        if current is not None and (snapshot.observed_at < current.observed_at or (
                snapshot.observed_at == current.observed_at and snapshot.source == "rollout")):
            return False  # an older line of a file read late: the gauges already know better
        self.snapshot = snapshot
        return True

    def take_goal(self, update: GoalUpdate, rollout: Path | None,
                  source: str = "rollout") -> GoalRecord | None:
        record = self.book.apply(update, self.snapshot, source)
        if record is None:
            return None
        meta = self.metas.get(update.thread_id)
        placed = self.book.place(update.thread_id, meta.cwd if meta else None, rollout)
        return placed or record

    def take_meta(self, meta: RolloutSessionMeta, rollout: Path | None) -> GoalRecord | None:
        """A session header; returns the goal record when it told us where a goal lives."""
        self.metas[meta.thread_id] = meta
        return self.book.place(meta.thread_id, meta.cwd, rollout)

    def take_startup(self, start: StartupState, paths: dict[str, Path]) -> None:
        if start.snapshot is not None:
            self.take_snapshot(start.snapshot)
        self.metas.update(start.metas)
        if start.db is not None:
            self.take_db(start.db, paths)
        for update in start.goals.values():
            self.take_goal(update, paths.get(update.thread_id))

    def take_db(self, db: DbGoals, paths: dict[str, Path]) -> list[GoalRecord]:
        """Goals from the database; archived threads are left out."""
        self.db_seen = True
        changed = []
        for thread, update in db.goals.items():
            row = db.threads.get(thread)
            if row is not None and row.archived:
                continue
            rollout = paths.get(thread) or (Path(row.rollout_path) if row and row.rollout_path
                                            else None)
            record = self.take_goal(update, rollout, source="db")
            if row is not None and row.cwd and thread not in self.metas:
                record = self.book.place(thread, row.cwd, None) or record
            if record is not None:
                changed.append(record)
        return changed

    def take_turn_limited(self, thread_id: str, limited: TurnLimited) -> GoalRecord | None:
        """A rollout turn stopped at the usage limit after the goal's last ``active``: Codex
        moved the goal to ``usageLimited`` (it writes that only to its database)."""
        record = self.book.records.get(thread_id)
        if record is None or record.update.status != "active" or limited.at <= record.update.at:
            return None
        return self.take_goal(replace(record.update, status="usageLimited", at=limited.at), None)

    def goal_threads(self) -> list[str]:
        """Threads whose goal can still change (their files are polled every time)."""
        return [t for t, r in self.book.records.items() if r.update.status != "complete"]
