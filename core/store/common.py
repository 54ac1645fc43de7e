"""What both stores do the same way before a row is written: secrets masked, texts cut, a goal
validated again (a ``model_copy`` skips validation), owner and writer stamped.

Masking never reaches inside a path in goal data or a history row's detail (a session's
``cwd``, a transcript, a goal file): those are *used* — a resume runs there, "Open folder"
opens it — and a path masked in the store is a path lost (issue 19: the directory the host was
started from was taken for a secret and every Claude session under it was stored with
``cwd = "********"``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.redact import KNOWN, is_path
from core.store.base import NotOwner

if TYPE_CHECKING:
    from core.models import Goal, HistoryRow

#: the channel every PostgreSQL notification of Goalkeeper goes out on
CHANNEL = "goalkeeper"


def masked(text: str | None) -> str | None:
    """Every secret the process knows of, masked — in whatever encoding it arrived."""
    return KNOWN.text(text) if text is not None and KNOWN else text


def masked_data(value: Any) -> Any:
    """The same for every string inside a JSON-able structure (the JSON stays valid) — except
    a string that is a path (:func:`core.redact.is_path`), which is kept as it is."""
    if not KNOWN:
        return value
    if isinstance(value, str):
        return value if is_path(value) else KNOWN.text(value)
    if isinstance(value, dict):
        return {masked_data(k): masked_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [masked_data(v) for v in value]
    return value


def validated(goal: Goal | None) -> Goal | None:
    """``goal`` as the store will hold it: a ``model_copy`` skipped validation (and the cutting
    of over-long texts), so it runs again here — the engine's copy then equals the row."""
    if goal is None:
        return None
    from core.models import Goal  # the write path validates (issue 24: reads load no model)

    return Goal.model_validate(masked_data(goal.model_dump(mode="json")))


def owned(goal_id: str, before: Goal | None, new: Goal | None, host_id: str | None
          ) -> Goal | None:
    """``new`` stamped with its owner; :class:`NotOwner` when another host owns the goal.

    A goal belongs to the host that first recorded it; without a ``host_id`` (a bare engine,
    a test) nothing is stamped or checked.
    """
    if host_id is None:
        return new
    if before is not None and before.host and before.host != host_id:
        raise NotOwner(goal_id, before.host)
    if new is not None and new.host != host_id:
        if new.host:
            raise NotOwner(goal_id, new.host)
        new = new.model_copy(update={"host": host_id})
    return new


def written_by(row: HistoryRow, host_id: str | None) -> HistoryRow:
    return row if row.host or host_id is None else row.model_copy(update={"host": host_id})
