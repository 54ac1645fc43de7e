"""Bulk rows in and out of the shared store inside one transaction (``store migrate``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from core.models import Goal, HistoryRow
from core.store.pg_rows import GOAL_COLUMNS, HISTORY_COLUMNS, goal_from_row, history_from_row

Connection = psycopg.Connection[tuple[Any, ...]]
SeriesRow = tuple[str, str, datetime, float | None, str]


class PgImport:
    """Mixed into :class:`~core.store.postgres.PostgresStore`."""

    @staticmethod
    def insert_series(con: Connection, rows: list[SeriesRow]) -> list[int]:
        if not rows:
            return []
        cur = con.cursor()
        cur.executemany("INSERT INTO quota_series (account, window_id, observed_at, "
                        "used_percent, exactness) VALUES (%s, %s, %s, %s, %s) RETURNING id",
                        rows, returning=True)
        ids = []
        while True:
            found = cur.fetchone()
            if found is not None:
                ids.append(int(found[0]))
            if not cur.nextset():
                break
        return ids

    @staticmethod
    def goals_by_id(con: Connection, ids: list[str]) -> list[Goal]:
        rows = con.execute(f"SELECT {GOAL_COLUMNS} FROM goals WHERE id = ANY(%s) ORDER BY id",
                           (ids,)).fetchall()
        return [goal_from_row(r) for r in rows]

    @staticmethod
    def history_by_id(con: Connection, ids: list[int]) -> list[HistoryRow]:
        rows = con.execute(f"SELECT {HISTORY_COLUMNS} FROM history WHERE id = ANY(%s) "
                           "ORDER BY id", (ids,)).fetchall()
        return [history_from_row(r) for r in rows]

    @staticmethod
    def series_by_id(con: Connection, ids: list[int]) -> list[SeriesRow]:
        rows = con.execute("SELECT account, window_id, observed_at, used_percent, exactness "
                           "FROM quota_series WHERE id = ANY(%s) ORDER BY id", (ids,)).fetchall()
        return [(str(a), str(w), t, None if u is None else float(u), str(x))
                for a, w, t, u, x in rows]
