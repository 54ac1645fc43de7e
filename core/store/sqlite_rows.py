"""Rows of the SQLite store: its columns, and goals / history rows to and from them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from core.clock import iso
from core.limits import MAX_DESCRIPTION_CHARS, MAX_TITLE_CHARS, clip
from core.store.common import masked, masked_data

if TYPE_CHECKING:
    from core.models import Goal, HistoryRow, QuotaReading

GOAL_COLUMNS = (
    "id, provider, title, state, pause_reason, pause_detail, windows, auto_resume, "
    "next_resume_at, auto_resume_note, resets_at, attempts, fence, hosted, resumed_at, data, "
    "created_at, updated_at, state_since, policy, deferral, host, steering"
)
HISTORY_COLUMNS = (
    "id, at, goal, event, trigger, origin, outcome, reason, state_from, state_to, fence, quotas, "
    "detail, host"
)
_GOAL_NAMES = [c.strip() for c in GOAL_COLUMNS.split(",")]
_HISTORY_NAMES = [c.strip() for c in HISTORY_COLUMNS.split(",")]


def goal_from_row(row: Sequence[Any]) -> Goal:
    from core.models import Goal  # built on first use (issue 24)

    return Goal.model_validate(_goal_raw(row))


def goal_record_from_row(row: Sequence[Any]) -> Goal:
    """The goal as a plain record (:mod:`core.models.plain`), without pydantic; a row the
    record does not take as it is becomes the model, which says what is wrong as always."""
    from core.models.plain import PlainGoal

    try:
        return cast("Goal", PlainGoal.load(_goal_raw(row)))
    except (ValueError, TypeError):
        return goal_from_row(row)


def _goal_raw(row: Sequence[Any]) -> dict[str, Any]:
    raw = dict(zip(_GOAL_NAMES, row, strict=True))
    raw["windows"] = tuple(json.loads(raw["windows"]))
    raw["data"] = json.loads(raw["data"])
    raw["auto_resume"] = bool(raw["auto_resume"])
    raw["hosted"] = bool(raw["hosted"])
    raw["policy"] = json.loads(raw["policy"])
    raw["deferral"] = json.loads(raw["deferral"]) if raw["deferral"] else None
    raw["steering"] = json.loads(raw["steering"])
    return raw


def reading_from_json(text: str, plain: bool = False) -> QuotaReading:
    """A stored reading: the model, or with ``plain`` a record (:mod:`core.models.plain`) when
    the record takes it as it is."""
    if plain:
        from core.models.plain import PlainQuotaReading

        try:
            return cast("QuotaReading", PlainQuotaReading.load(json.loads(text)))
        except (ValueError, TypeError):
            pass
    from core.models import QuotaReading

    return QuotaReading.model_validate_json(text)


def goal_params(goal: Goal) -> tuple[Any, ...]:
    # texts are cut to their limits here too: a model_copy() is not validated again
    return (
        goal.id,
        goal.provider,
        masked(clip(goal.title, MAX_TITLE_CHARS)),
        goal.state.value,
        goal.pause_reason.value if goal.pause_reason else None,
        masked(clip(goal.pause_detail, MAX_DESCRIPTION_CHARS)),
        json.dumps(list(goal.windows)),
        int(goal.auto_resume),
        iso(goal.next_resume_at),
        masked(clip(goal.auto_resume_note, MAX_DESCRIPTION_CHARS)),
        iso(goal.resets_at),
        goal.attempts,
        goal.fence,
        int(goal.hosted),
        iso(goal.resumed_at),
        json.dumps(masked_data(goal.data), sort_keys=True),
        iso(goal.created_at),
        iso(goal.updated_at),
        iso(goal.state_since),
        goal.policy.model_dump_json(),
        goal.deferral.model_dump_json() if goal.deferral else None,
        goal.host,
        json.dumps(masked_data(goal.steering.stored()), sort_keys=True),
    )


def history_from_row(row: Sequence[Any]) -> HistoryRow:
    from core.models import HistoryRow  # built on first use (issue 24)

    raw = dict(zip(_HISTORY_NAMES, row, strict=True))
    raw["quotas"] = tuple(json.loads(raw["quotas"]))
    raw["detail"] = json.loads(raw["detail"])
    return HistoryRow.model_validate(raw)


def history_params(row: HistoryRow) -> tuple[Any, ...]:
    return (
        iso(row.at),
        row.goal,
        str(row.event),
        row.trigger.value if row.trigger else None,
        row.origin,
        row.outcome.value if row.outcome else None,
        masked(clip(row.reason, MAX_DESCRIPTION_CHARS)),
        row.state_from.value if row.state_from else None,
        row.state_to.value if row.state_to else None,
        row.fence,
        json.dumps(masked_data(list(row.quotas)), default=str),
        json.dumps(masked_data(row.detail), default=str, sort_keys=True),
        row.host,
    )
