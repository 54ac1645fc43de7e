"""Rows of the shared store (native types: ``timestamptz``, ``jsonb``, ``boolean``) to and from
goals, history rows, hosts and requests — the same values SQLite's text columns hold."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from core.limits import MAX_DESCRIPTION_CHARS, MAX_TITLE_CHARS, clip
from core.models import Goal, HistoryRow
from core.store.base import ActionRequest, HostRecord
from core.store.common import masked, masked_data
from core.store.sqlite_rows import GOAL_COLUMNS, HISTORY_COLUMNS

__all__ = ["GOAL_COLUMNS", "HISTORY_COLUMNS", "HOST_COLUMNS", "REQUEST_COLUMNS"]

HOST_COLUMNS = ("host_id, kind, machine, pid, since, heartbeat, epoch, state, stopped_at, "
                "accounts, version")
REQUEST_COLUMNS = ("id, to_host, by_host, request, state, requested_at, expires_at, answer, "
                   "answered_at")
_GOAL_NAMES = [c.strip() for c in GOAL_COLUMNS.split(",")]
_HISTORY_NAMES = [c.strip() for c in HISTORY_COLUMNS.split(",")]


def goal_from_row(row: Sequence[Any]) -> Goal:
    raw = dict(zip(_GOAL_NAMES, row, strict=True))
    raw["windows"] = tuple(raw["windows"])
    return Goal.model_validate(raw)


def goal_params(goal: Goal) -> tuple[Any, ...]:
    return (
        goal.id,
        goal.provider,
        masked(clip(goal.title, MAX_TITLE_CHARS)),
        goal.state.value,
        goal.pause_reason.value if goal.pause_reason else None,
        masked(clip(goal.pause_detail, MAX_DESCRIPTION_CHARS)),
        Jsonb(list(goal.windows)),
        goal.auto_resume,
        goal.next_resume_at,
        masked(clip(goal.auto_resume_note, MAX_DESCRIPTION_CHARS)),
        goal.resets_at,
        goal.attempts,
        goal.fence,
        goal.hosted,
        goal.resumed_at,
        Jsonb(masked_data(goal.data)),
        goal.created_at,
        goal.updated_at,
        goal.state_since,
        Jsonb(goal.policy.model_dump(mode="json")),
        Jsonb(goal.deferral.model_dump(mode="json")) if goal.deferral else None,
        goal.host,
        Jsonb(masked_data(goal.steering.stored())),
    )


def _json_safe(value: Any) -> Any:
    """What SQLite's ``json.dumps(..., default=str)`` stores: non-JSON values as text."""
    return json.loads(json.dumps(value, default=str))


def history_from_row(row: Sequence[Any]) -> HistoryRow:
    raw = dict(zip(_HISTORY_NAMES, row, strict=True))
    raw["quotas"] = tuple(raw["quotas"])
    return HistoryRow.model_validate(raw)


def history_params(row: HistoryRow) -> tuple[Any, ...]:
    return (
        row.at,
        row.goal,
        str(row.event),
        row.trigger.value if row.trigger else None,
        row.origin,
        row.outcome.value if row.outcome else None,
        masked(clip(row.reason, MAX_DESCRIPTION_CHARS)),
        row.state_from.value if row.state_from else None,
        row.state_to.value if row.state_to else None,
        row.fence,
        Jsonb(_json_safe(masked_data(list(row.quotas)))),
        Jsonb(_json_safe(masked_data(row.detail))),
        row.host,
    )


def host_from_row(row: Sequence[Any]) -> HostRecord:
    """A ``hosts`` row read with ``now()`` (the database's clock) and the host's clock offset
    after its columns."""
    offset = row[12] if len(row) > 12 else None
    return HostRecord(str(row[0]), str(row[1]), str(row[2]), int(row[3]), row[4], row[5],
                      int(row[6]), str(row[7]), row[8], dict(row[9] or {}), str(row[10]),
                      row[11], float(offset) if offset is not None else None)


def request_from_row(row: Sequence[Any]) -> ActionRequest:
    return ActionRequest(int(row[0]), str(row[1]), str(row[2]), dict(row[3]), str(row[4]),
                         row[5], row[6], dict(row[7]) if row[7] is not None else None, row[8])
