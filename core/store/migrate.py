"""``goalkeeper store migrate --to URL``: this machine's SQLite store, copied into a shared one.

Everything is read from the local file in one read transaction (opened read-only: the file is
never changed, not even converted) and written into the shared store in one transaction, which
then reads back what it wrote and compares it with what was read — the counts and a SHA-256
over every goal, history row, latest reading and chart point in a canonical form. Only when
they agree is the transaction committed; otherwise nothing at all was copied.

The copied goals become this host's (``host_id``); readings get the accounts this host's
settings name (else this host's own); history rows keep their order (their ids are the shared
store's). Goals already in the shared store are not overwritten: the copy is refused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg

from core.i18n import N_
from core.models import Goal, HistoryRow, QuotaReading
from core.store.base import APPROVALS_META_PREFIX, StoreError
from core.store.postgres import PostgresStore
from core.store.sqlite import SqliteStore

SeriesRow = tuple[str, str, datetime, float | None, str]
PAGE = 1000


@dataclass(frozen=True)
class Copied:
    """What was copied, and the checksum both sides agreed on."""

    goals: int
    history: int
    readings: int
    series: int
    checksum: str
    approvals: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"goals": self.goals, "history": self.history, "readings": self.readings,
                "series": self.series, "checksum": self.checksum, "approvals": self.approvals}


@dataclass(frozen=True)
class Rows:
    goals: list[Goal]
    history: list[HistoryRow]
    readings: list[QuotaReading]
    series: list[SeriesRow]
    #: this host's approved goal files (``meta`` key → digest): they keep running after the move
    approvals: dict[str, str] = field(default_factory=dict)

    def checksum(self) -> str:
        digest = hashlib.sha256()
        goals = sorted(self.goals, key=lambda g: g.id)  # collations differ: sorted here
        readings = sorted(self.readings, key=lambda r: (r.account, r.window_id))
        for kind, values in (("goal", [g.model_dump(mode="json") for g in goals]),
                             ("history", [r.model_dump(mode="json", exclude={"id"})
                                          for r in self.history]),
                             ("reading", [r.model_dump(mode="json") for r in readings]),
                             ("series", [[a, w, t.isoformat(), u, x]
                                         for a, w, t, u, x in self.series])):
            for value in values:
                digest.update(json.dumps([kind, value], sort_keys=True).encode())
                digest.update(b"\n")
        return digest.hexdigest()

    def counted(self) -> Copied:
        return Copied(len(self.goals), len(self.history), len(self.readings), len(self.series),
                      self.checksum(), len(self.approvals))


def read_local(source: SqliteStore, host_id: str, account_of: Callable[[str], str]) -> Rows:
    """Everything in the local store, as the shared store will hold it."""
    with source.snapshot():
        goals = [g.model_copy(update={"host": host_id}) for g in source.list_goals()]
        total = source.count_history()
        history: list[HistoryRow] = []
        for offset in range(0, total, PAGE):
            history.extend(source.history(None, PAGE, offset))
        readings = source.latest_readings()
        series = source.series_rows()
        approvals = source.meta_items(f"{APPROVALS_META_PREFIX}{host_id}:")
    history.reverse()
    history = [r.model_copy(update={"host": r.host or host_id}) for r in history]
    accounts = {p: account_of(p) for p in {r.provider for r in readings}}
    windows = {r.window_id: r.provider for r in readings}
    readings = [r.model_copy(update={"account": r.account or accounts[r.provider]})
                for r in readings]
    series = [(a or account_of(windows.get(w, w.split(":")[0])), w, t, u, x)
              for a, w, t, u, x in series]
    return Rows(goals, history, readings, series, approvals)


def copy_into(target: PostgresStore, rows: Rows) -> tuple[Copied, int]:
    """Write ``rows`` into the shared store in one transaction, verified before it commits;
    also how many readings were not copied (the shared store already had a fresher one of
    the same window and account: the freshest reading wins, as always)."""

    def body(con: psycopg.Connection[tuple[Any, ...]]) -> tuple[Copied, int]:
        clash = con.execute("SELECT id FROM goals WHERE id = ANY(%s) ORDER BY id",
                            ([g.id for g in rows.goals],)).fetchall()
        if clash:
            raise StoreError(N_("{count} of these goals are already in {store} ({goals}): "
                                "nothing was copied").format(
                                    count=len(clash), store=target.describe(),
                                    goals=", ".join(str(c[0]) for c in clash[:5])))
        written, lost = _write_rows(target, con, rows)
        expected = Rows(rows.goals, rows.history,
                        [r for r in rows.readings if r not in lost], rows.series,
                        rows.approvals).counted()
        found = written.counted()
        if found != expected or written.approvals != rows.approvals:  # a key, a digest
            raise StoreError(N_("the copy does not match what was read (read {expected}, found "
                                "{found}): nothing was copied").format(expected=expected,
                                                                        found=found))
        return found, len(lost)

    return target.run_transaction(body)


def _write_rows(target: PostgresStore, con: psycopg.Connection[tuple[Any, ...]], rows: Rows
                ) -> tuple[Rows, list[QuotaReading]]:
    """Insert everything, then read back exactly what was inserted."""
    for goal in rows.goals:
        target.put_goal(con, goal)
    history_ids = [target.insert_history(con, r).id for r in rows.history]
    lost = [r for r in rows.readings if not target.put_reading(con, r, series=False)]
    series_ids = target.insert_series(con, rows.series)
    for key, value in rows.approvals.items():
        con.execute("INSERT INTO meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = "
                    "excluded.value", (key, value))
    approvals = dict(con.execute("SELECT key, value FROM meta WHERE key = ANY(%s)",
                                 (list(rows.approvals),)).fetchall())
    back = Rows(target.goals_by_id(con, [g.id for g in rows.goals]),
                target.history_by_id(con, [i for i in history_ids if i is not None]),
                [r for r in (target.latest_reading(r.account, r.window_id) for r in rows.readings
                             if r not in lost) if r is not None],
                target.series_by_id(con, series_ids), approvals)
    return back, lost

