"""Codex rate-limit snapshots: every shape Codex has written, told apart by window length.

A snapshot is what one ``token_count`` rollout line or one app-server answer says about the
account's limits. Codex has written three shapes over time:

* current: ``primary``/``secondary`` = ``{used_percent, window_minutes, resets_at}`` (epoch s);
* legacy: the same with ``resets_in_seconds`` — relative to the *line's own* timestamp — and
  window minutes 299 / 10079;
* oldest flat: ``primary_used_percent`` / ``secondary_used_percent`` with no window length and no
  reset (the only shape where the slot name has to say which window it is).

The app-server speaks camelCase (``usedPercent``, ``windowDurationMins``, ``resetsAt``) and its
``account/rateLimits/updated`` notification is *sparse*: :func:`merge` folds it into the last
snapshot and never clears a field because it is absent or null.

Windows are identified by their length, never by slot: some plans put the weekly window first or
show only a monthly one (``secondary: null``).

This module is plain data and parsing (no pydantic), so the history scan's worker processes start
fast; :mod:`.readings` turns snapshots into Goalkeeper readings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from core.i18n import N_
from core.providers.numbers import MAX_PERCENT_READ, MAX_RESET_SECONDS, BadNumber, finite

T = TypeVar("T")

PROVIDER = "codex"
FIVE_HOUR = "codex:5h"
WEEKLY = "codex:weekly"
MONTHLY = "codex:monthly"
CREDITS = "codex:credits"
#: the authority's own yes/no (``ordinaryUsageAllowed`` / ``spendControlReached``), read only
#: from ``account/rateLimits/read``
ACCESS = "codex:access"
#: every window a Codex goal depends on (a window never read does not block anything)
GOAL_WINDOWS = (FIVE_HOUR, WEEKLY, MONTHLY, CREDITS, ACCESS)

LABELS = {FIVE_HOUR: N_("Codex · 5 h"), WEEKLY: N_("Codex · weekly"),
          MONTHLY: N_("Codex · monthly"), CREDITS: N_("Codex · credits"),
          ACCESS: N_("Codex · access")}

#: ``rate_limit_reached_type`` values that no clock lifts, with what the window says about them
NO_TIMED_RESET: Mapping[str, str] = {
    "workspace_owner_credits_depleted":
        N_("your workspace's credits are used up: no timed reset (add credits to continue)"),
    "workspace_member_credits_depleted":
        N_("the workspace's credits are used up: no timed reset (ask the workspace owner)"),
    "workspace_owner_usage_limit_reached":
        N_("the workspace usage limit you set was reached: no timed reset (raise it to "
           "continue)"),
    "workspace_member_usage_limit_reached":
        N_("the workspace usage limit set by the owner was reached: no timed reset"),
}
TIMED_REACHED = "rate_limit_reached"

# Epoch seconds before 2001 or after 2100 are not reset instants; they are garbage.
_EPOCH_MIN, _EPOCH_MAX = 978_307_200, 4_102_444_800


class LimitShapeError(ValueError):
    """A ``rate_limits`` object that matches none of the known shapes."""


def window_id(minutes: float | None, slot: str, flat: bool = False) -> str | None:
    """The Goalkeeper window a Codex window of ``minutes`` is, or None for an unknown length.

    300 (and the legacy 299) is the 5-hour window, 10080 (10079) the weekly one, about 43,800 the
    monthly one. Only the oldest flat shape (``flat``), which never carries a length, falls back
    to the slot name; anywhere else a window of unknown length is not guessed from its slot
    (one-window accounts put the weekly window in ``primary``).
    """
    if minutes is None:
        return {"primary": FIVE_HOUR, "secondary": WEEKLY}.get(slot) if flat else None
    if 295 <= minutes <= 305:
        return FIVE_HOUR
    if 10_000 <= minutes <= 10_160:
        return WEEKLY
    if 40_000 <= minutes <= 46_100:
        return MONTHLY
    return None


@dataclass(frozen=True)
class Window:
    """One slot of a snapshot; any field may be unknown (None)."""

    used_percent: float | None = None
    window_minutes: float | None = None
    resets_at: datetime | None = None
    flat: bool = False  # the oldest rollout shape: no length, the slot says which window

    def merged(self, update: Window) -> Window:
        return Window(
            used_percent=_pick(update.used_percent, self.used_percent),
            window_minutes=_pick(update.window_minutes, self.window_minutes),
            resets_at=_pick(update.resets_at, self.resets_at),
            flat=self.flat and update.flat,
        )


@dataclass(frozen=True)
class Credits:
    has_credits: bool | None = None
    unlimited: bool | None = None
    balance: str | None = None

    def merged(self, update: Credits) -> Credits:
        return Credits(_pick(update.has_credits, self.has_credits),
                       _pick(update.unlimited, self.unlimited),
                       _pick(update.balance, self.balance))


@dataclass(frozen=True)
class Access:
    """The authority's word on using Codex now (``GetAccountRateLimitsResponse``, 0.169.0).

    Attributes:
        ordinary_allowed: ``ordinaryUsageAllowed`` — the deciding fact when known ("clients must
            not infer recovery from percentages or reset times"); None = unknown.
        spend_control: ``spendControlReached`` of the codex bucket (None = unknown).
        reset_credits: ``rateLimitResetCredits.availableCount`` — banked resets, shown, never
            spent by Goalkeeper (None = not reported).
        observed_at: when the read said so (a sparse update merged later does not renew it).
    """

    ordinary_allowed: bool | None = None
    spend_control: bool | None = None
    reset_credits: int | None = None
    observed_at: datetime | None = None

    @property
    def blocked(self) -> str | None:
        """Why Codex says it cannot be used now, whatever the percentages say; or None."""
        if self.ordinary_allowed is False:
            return N_("Codex says ordinary usage is not allowed now")
        if self.spend_control:
            return N_("Codex says a spend control was reached")
        return None


@dataclass(frozen=True)
class RateSnapshot:
    """What Codex said about the account's limits at ``observed_at``.

    Attributes:
        slots: ``primary`` / ``secondary`` → :class:`Window` (a slot Codex sent as null is absent).
        reached_type: ``rate_limit_reached_type``, when Codex says a limit was reached.
        source: ``rollout`` (a session file line) or ``app-server`` (asked just now).
        access: what ``account/rateLimits/read`` said about using Codex at all, when this
            snapshot came from one (:class:`Access`); None for rollout lines and sparse updates.
    """

    observed_at: datetime
    slots: Mapping[str, Window] = field(default_factory=dict)
    credits: Credits | None = None
    plan_type: str | None = None
    reached_type: str | None = None
    limit_id: str | None = None
    source: str = "rollout"
    access: Access | None = None

    @property
    def windows(self) -> dict[str, Window]:
        """Goalkeeper window id → window, for the slots whose length is known."""
        return windows_by_id(self.slots)

    @property
    def no_timed_reset(self) -> str | None:
        """Why no clock lifts the limit (credits / workspace kinds), or None."""
        return NO_TIMED_RESET.get(self.reached_type or "")


def merge(base: RateSnapshot | None, update: RateSnapshot) -> RateSnapshot:
    """Fold a sparse update into ``base``: a field absent or null in ``update`` keeps its value."""
    if base is None:
        return update
    slots = dict(base.slots)
    for slot, window in update.slots.items():
        slots[slot] = slots[slot].merged(window) if slot in slots else window
    credits = base.credits
    if update.credits is not None:
        credits = credits.merged(update.credits) if credits else update.credits
    return replace(
        base,
        observed_at=max(base.observed_at, update.observed_at),
        slots=slots,
        credits=credits,
        plan_type=_pick(update.plan_type, base.plan_type),
        reached_type=_pick(update.reached_type, base.reached_type),
        limit_id=_pick(update.limit_id, base.limit_id),
        source=update.source,
        access=_pick(update.access, base.access),
    )


def _pick(new: T | None, old: T | None) -> T | None:
    return old if new is None else new


# -- parsing -----------------------------------------------------------------------------------


def from_rollout(limits: Any, line_time: datetime) -> RateSnapshot:
    """Parse a rollout ``rate_limits`` object (current, legacy or flat shape)."""
    slots = rollout_slots(limits, line_time)
    credits = limits.get("credits")
    return RateSnapshot(
        observed_at=line_time,
        slots=slots,
        credits=_credits(credits, "has_credits") if isinstance(credits, dict) else None,
        plan_type=_text(limits.get("plan_type")),
        reached_type=_text(limits.get("rate_limit_reached_type")),
        limit_id=_text(limits.get("limit_id")),
        source="rollout",
    )


def rollout_slots(limits: Any, line_time: datetime) -> dict[str, Window]:
    """The windows of a rollout ``rate_limits`` object, by slot — all of :func:`from_rollout`'s
    checks (LimitShapeError), without the rest of a snapshot (the usage scan's quota points)."""
    if not isinstance(limits, dict):
        raise LimitShapeError("rate_limits is not an object")
    if "primary" in limits or "secondary" in limits:
        slots = {}
        for slot in ("primary", "secondary"):
            raw = limits.get(slot)
            if raw is not None:
                slots[slot] = _rollout_window(raw, line_time)
        return slots
    if "primary_used_percent" in limits or "secondary_used_percent" in limits:
        return {
            slot: Window(used_percent=_percent(limits.get(f"{slot}_used_percent")), flat=True)
            for slot in ("primary", "secondary")
            if limits.get(f"{slot}_used_percent") is not None
        }
    raise LimitShapeError("rate_limits has neither primary/secondary nor the flat fields")


def windows_by_id(slots: Mapping[str, Window]) -> dict[str, Window]:
    """Goalkeeper window id → window, for the slots whose length is known."""
    result: dict[str, Window] = {}
    for slot, window in slots.items():
        wid = window_id(window.window_minutes, slot, window.flat)
        if wid is not None:
            result[wid] = window
    return result


def _rollout_window(raw: Any, line_time: datetime) -> Window:
    if not isinstance(raw, dict):
        raise LimitShapeError("a rate-limit window is not an object")
    resets_at = _epoch(raw.get("resets_at"))
    if resets_at is None and raw.get("resets_in_seconds") is not None:
        seconds = _number(raw["resets_in_seconds"], "resets_in_seconds", 0.0, MAX_RESET_SECONDS)
        resets_at = line_time + timedelta(seconds=seconds)  # relative to the line, not to now
    return Window(
        used_percent=_percent(raw.get("used_percent")),
        window_minutes=_optional_number(raw.get("window_minutes"), "window_minutes"),
        resets_at=resets_at,
    )


def from_app_server(limits: Any, now: datetime) -> RateSnapshot:
    """Parse an app-server ``RateLimitSnapshot`` (camelCase; every field may be missing)."""
    if not isinstance(limits, dict):
        raise LimitShapeError("rateLimits is not an object")
    slots = {}
    for slot in ("primary", "secondary"):
        raw = limits.get(slot)
        if isinstance(raw, dict):
            slots[slot] = Window(
                used_percent=_percent(raw.get("usedPercent")),
                window_minutes=_optional_number(raw.get("windowDurationMins"),
                                                "windowDurationMins"),
                resets_at=_epoch(raw.get("resetsAt")),
            )
    credits = limits.get("credits")
    return RateSnapshot(
        observed_at=now,
        slots=slots,
        credits=_credits(credits, "hasCredits") if isinstance(credits, dict) else None,
        plan_type=_text(limits.get("planType")),
        reached_type=_text(limits.get("rateLimitReachedType")),
        limit_id=_text(limits.get("limitId")),
        source="app-server",
    )


def from_rate_limits_read(result: Any, now: datetime) -> RateSnapshot:
    """A whole ``account/rateLimits/read`` answer: the codex bucket and the account's
    :class:`Access` (``ordinaryUsageAllowed``, ``spendControlReached``, banked resets)."""
    bucket = pick_codex_bucket(result)
    snapshot = from_app_server(bucket, now)
    assert isinstance(result, dict)  # pick_codex_bucket checked it
    allowed = result.get("ordinaryUsageAllowed")
    spend = bucket.get("spendControlReached") if isinstance(bucket, dict) else None
    credits = result.get("rateLimitResetCredits")
    count = credits.get("availableCount") if isinstance(credits, dict) else None
    access = Access(
        ordinary_allowed=allowed if isinstance(allowed, bool) else None,
        spend_control=spend if isinstance(spend, bool) else None,
        reset_credits=count if isinstance(count, int) and not isinstance(count, bool) else None,
        observed_at=now,
    )
    return replace(snapshot, access=access)


def pick_codex_bucket(result: Any) -> Any:
    """From an ``account/rateLimits/read`` result, the ``codex`` bucket's snapshot."""
    if not isinstance(result, dict):
        raise LimitShapeError("account/rateLimits/read returned no object")
    by_id = result.get("rateLimitsByLimitId")
    single = result.get("rateLimits")
    if isinstance(single, dict) and single.get("limitId") in (None, "codex"):
        return single
    if isinstance(by_id, dict) and isinstance(by_id.get("codex"), dict):
        return by_id["codex"]
    if isinstance(single, dict):
        return single
    raise LimitShapeError("account/rateLimits/read returned no rateLimits")


def _credits(raw: dict[str, Any], has_key: str) -> Credits:
    has = raw.get(has_key)
    unlimited = raw.get("unlimited")
    balance = raw.get("balance")
    return Credits(has if isinstance(has, bool) else None,
                   unlimited if isinstance(unlimited, bool) else None,
                   None if balance is None else str(balance))


def _percent(value: Any) -> float | None:
    """0–100 (B0); a negative one would read as "more than available" and is refused, one
    above 100 (overdrawn, up to 1000) is kept as it is."""
    if value is None:
        return None
    return _number(value, "used percent", 0.0, MAX_PERCENT_READ)


def _number(value: Any, name: str, low: float | None = None,
            high: float | None = None) -> float:
    """Finite and in range, or LimitShapeError (``1e999`` parses as infinity)."""
    try:
        return finite(value, name, low, high)
    except BadNumber as exc:
        raise LimitShapeError(str(exc)) from None


def _optional_number(value: Any, name: str) -> float | None:
    return None if value is None else _number(value, name, 0.0)


def _epoch(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise LimitShapeError(f"resets_at is not a time: {value!r}") from None
        if parsed.tzinfo is None:
            raise LimitShapeError(f"resets_at has no zone: {value!r}")
        return parsed.astimezone(UTC)
    seconds = _number(value, "resets_at")
    if seconds > _EPOCH_MAX * 100:  # milliseconds
        seconds /= 1000.0
    if not _EPOCH_MIN <= seconds <= _EPOCH_MAX:
        raise LimitShapeError(f"resets_at {value!r} is not an epoch instant")
    return datetime.fromtimestamp(seconds, UTC)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
