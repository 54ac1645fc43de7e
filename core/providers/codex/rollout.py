"""One rollout line in, one typed event out — for the few line types Goalkeeper reads.

Every rollout line is ``{"timestamp", "type", "payload"}``. Goalkeeper reads four kinds:

* ``session_meta`` — the thread id and the working directory (kept for resume and "open in
  terminal");
* ``event_msg`` / ``token_count`` — the account's rate limits at that moment;
* ``event_msg`` / ``thread_goal_updated`` — a goal's status changed;
* ``event_msg`` / ``task_complete`` whose error is ``usage_limit_exceeded`` — a turn stopped at
  the limit.

Everything else is skipped without decoding: :func:`is_candidate` is a byte-substring prefilter,
so following a busy session costs a few ``in`` checks per line, not a JSON parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from core.providers import jsonload
from core.providers.codex.limits import LimitShapeError, RateSnapshot, from_rollout

_ROLLOUT_NAME = re.compile(
    r"^rollout-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-"
    r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$"
)

#: a line is decoded only if it holds one of these
NEEDLES = (b'"token_count"', b'"thread_goal_updated"', b'"session_meta"', b"usage_limit_exceeded")

#: camelCase (rollout, app-server) and snake_case (SQLite) goal statuses → one spelling
GOAL_STATUSES = {
    "active": "active", "paused": "paused", "blocked": "blocked", "complete": "complete",
    "usageLimited": "usageLimited", "usage_limited": "usageLimited",
    "budgetLimited": "budgetLimited", "budget_limited": "budgetLimited",
}


class MalformedLine(ValueError):
    """A candidate line that cannot be used; ``reason`` is short and stable (for log de-dup)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def thread_id_from_name(name: str) -> str | None:
    """The thread id in ``rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl``, or None."""
    match = _ROLLOUT_NAME.match(name)
    return match.group(1).lower() if match else None


@dataclass(frozen=True)
class RolloutSessionMeta:
    thread_id: str
    cwd: str | None
    at: datetime


@dataclass(frozen=True)
class GoalUpdate:
    """A ``thread_goal_updated`` line (or a goals-database row, which says the same)."""

    thread_id: str
    status: str  # one of GOAL_STATUSES' values
    objective: str
    at: datetime  # when Codex recorded it
    tokens_used: int | None = None
    token_budget: int | None = None
    time_used_seconds: int | None = None


@dataclass(frozen=True)
class RateLine:
    snapshot: RateSnapshot


@dataclass(frozen=True)
class TurnLimited:
    """A turn that stopped at the usage limit (``codex_error_info: usage_limit_exceeded``)."""

    at: datetime
    message: str


Event = RolloutSessionMeta | GoalUpdate | RateLine | TurnLimited


def is_candidate(line: bytes) -> bool:
    return any(needle in line for needle in NEEDLES)


def parse_line(line: bytes) -> Event | None:
    """Decode a candidate line; None when it is valid but not one Goalkeeper uses.

    Raises :class:`MalformedLine` when the line is not JSON or lacks what its type needs.
    """
    try:
        record = jsonload.loads(line)  # refused by depth before parsing
    except (ValueError, UnicodeDecodeError):
        raise MalformedLine("not valid JSON") from None
    if not isinstance(record, dict) or not isinstance(record.get("payload"), dict):
        raise MalformedLine("not a rollout record (no payload object)")
    kind = record.get("type")
    payload = record["payload"]
    if kind == "session_meta":
        return _session_meta(payload, _timestamp(record))
    if kind != "event_msg":
        return None
    event = payload.get("type")
    if event == "token_count":
        return _token_count(payload, _timestamp(record))
    if event == "thread_goal_updated":
        return goal_update(payload.get("goal"), payload.get("threadId"), _timestamp(record))
    if event == "task_complete":
        return _task_complete(payload, _timestamp(record))
    return None


def _timestamp(record: dict[str, Any]) -> datetime:
    text = record.get("timestamp")
    if not isinstance(text, str):
        raise MalformedLine("no timestamp")
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise MalformedLine("bad timestamp") from None
    if parsed.tzinfo is None:
        raise MalformedLine("timestamp without a zone")
    return parsed.astimezone(UTC)


def _session_meta(payload: dict[str, Any], at: datetime) -> RolloutSessionMeta:
    thread_id = payload.get("id")
    if not isinstance(thread_id, str) or not thread_id:
        raise MalformedLine("session_meta without an id")
    cwd = payload.get("cwd")
    return RolloutSessionMeta(thread_id.lower(), cwd if isinstance(cwd, str) and cwd else None, at)


def _token_count(payload: dict[str, Any], at: datetime) -> RateLine | None:
    limits = payload.get("rate_limits")
    if limits is None:
        return None  # API-key sessions carry token usage but no rate limits
    try:
        return RateLine(from_rollout(limits, at))
    except LimitShapeError as exc:
        raise MalformedLine(f"token_count: {exc}") from None


def _task_complete(payload: dict[str, Any], at: datetime) -> TurnLimited | None:
    error = payload.get("error")
    if not isinstance(error, dict) or error.get("codex_error_info") != "usage_limit_exceeded":
        return None
    message = error.get("message")
    return TurnLimited(at, message if isinstance(message, str) else "usage limit reached")


def goal_update(goal: Any, thread_id: Any, at: datetime) -> GoalUpdate:
    """A goal object (rollout or app-server, camelCase) → :class:`GoalUpdate`."""
    if not isinstance(goal, dict):
        raise MalformedLine("thread_goal_updated without a goal object")
    thread = goal.get("threadId") or thread_id
    if not isinstance(thread, str) or not thread:
        raise MalformedLine("thread_goal_updated without a thread id")
    status = GOAL_STATUSES.get(str(goal.get("status")))
    if status is None:
        raise MalformedLine(f"unknown goal status {goal.get('status')!r}")
    objective = goal.get("objective")
    return GoalUpdate(
        thread_id=thread.lower(),
        status=status,
        objective=objective if isinstance(objective, str) else "",
        at=at,
        tokens_used=_int(goal.get("tokensUsed")),
        token_budget=_int(goal.get("tokenBudget")),
        time_used_seconds=_int(goal.get("timeUsedSeconds")),
    )


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
