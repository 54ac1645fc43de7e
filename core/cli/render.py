"""How the CLI renders a goal and a quota reading as JSON, and says there is no data yet; shared by
``status`` (:mod:`core.cli.status`), ``history`` and the actions (:mod:`core.cli.goals`) and the
pipelines' ``quota list``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.cli.common import Context
from core.clock import iso
from core.i18n import _

if TYPE_CHECKING:
    from core.models import Goal, QuotaReading


def goal_json(goal: Goal, max_attempts: int) -> dict[str, Any]:
    return {
        "id": goal.id,
        "title": goal.title,
        "provider": goal.provider,
        "state": goal.state.value,
        "pause_reason": goal.pause_reason.value if goal.pause_reason else None,
        "pause_detail": goal.pause_detail,
        "auto_resume": goal.auto_resume,
        "next_resume_at": iso(goal.next_resume_at),
        "auto_resume_note": None if goal.next_resume_at else goal.auto_resume_note,
        "attempts": goal.attempts,
        "max_attempts": max_attempts,
        "resets_at": iso(goal.resets_at),
        "windows": list(goal.windows),
        "state_since": iso(goal.state_since),
        "updated_at": iso(goal.updated_at),
        "host": goal.host or None,
        "data": goal.data,
        "steering": goal.steering.stored(),
    }


def quota_json(reading: QuotaReading) -> dict[str, Any]:
    return {
        "id": reading.window_id,
        "provider": reading.provider,
        "label": reading.label,
        "kind": reading.kind.value,
        "used_percent": reading.used_percent,
        "used": reading.used,
        "limit": reading.limit,
        "resets_at": iso(reading.resets_at),
        "exactness": reading.exactness.value,
        "observed_at": iso(reading.observed_at),
        "limit_reached": reading.limit_reached,
        "note": reading.note,
        "account": reading.account or None,
    }


def no_data_text(ctx: Context) -> str:
    """Why there is nothing to show: no database yet, or an empty (zero-byte) file — the latter
    said as such, since it is a file someone or something made, not a store never used."""
    database = ctx.paths.database
    try:
        empty = not ctx.target.shared and database.is_file() and database.stat().st_size == 0
    except OSError:
        empty = False
    if empty:
        return _("the database {file} is an empty file (0 bytes): nothing has been stored in it; "
                 "a host sets it up when it starts (`goalkeeper daemon` or `goalkeeper`)").format(
                     file=database)
    return _("no data yet: nothing has been stored in {dir} (start a host with "
             "`goalkeeper daemon` or `goalkeeper`)").format(dir=ctx.paths.data_dir)
