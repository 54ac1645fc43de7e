"""Codex goals as Goalkeeper sees them: the newest status of each, mapped onto goal states.

A Codex goal belongs to one thread (``codex:<thread-id>``). Its status comes from two places that
say the same thing — ``thread_goal_updated`` lines in the thread's rollout and the goals database
— so :class:`ThreadGoalBook` keeps, per thread, whichever report is newest. The mapping:

=================  ==============================================================
Codex status       Goalkeeper
=================  ==============================================================
``active``         running
``usageLimited``   paused, reason ``quota``, reset from the rate limits in force
``paused``         paused, reason ``external``
``blocked``        paused, reason ``error`` (Codex needs the user)
``budgetLimited``  paused, reason ``error`` (its token budget is used up)
``complete``       done
=================  ==============================================================

The objective is the goal's title; the session's cwd is kept for resume and "open in terminal".

Codex 0.169.0 writes its *own* transitions (``usageLimited`` after a 429, ``complete`` through
its ``update_goal`` tool) only to the goals database and the app-server, never to the rollout,
which gets a ``thread_goal_updated`` line only when a client sets the goal. So an ``active``
known only from a rollout while no goals database could be read says nothing about now: such a
goal is shown with its status **unknown** (paused, ``external``, with a note), never "running".
A turn the rollout shows stopped at the usage limit after that line does say ``usageLimited``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from core.i18n import N_
from core.models import GoalState, PauseReason
from core.providers.base import GoalObservation
from core.providers.codex.limits import GOAL_WINDOWS, RateSnapshot
from core.providers.codex.readings import limit_lifts_at
from core.providers.codex.rollout import GoalUpdate

GOAL_PREFIX = "codex:"

_STATES: dict[str, tuple[GoalState, PauseReason | None]] = {
    "active": (GoalState.RUNNING, None),
    "usageLimited": (GoalState.PAUSED, PauseReason.QUOTA),
    "paused": (GoalState.PAUSED, PauseReason.EXTERNAL),
    "blocked": (GoalState.PAUSED, PauseReason.ERROR),
    "budgetLimited": (GoalState.PAUSED, PauseReason.ERROR),
    "complete": (GoalState.DONE, None),
}


def goal_id(thread_id: str) -> str:
    return GOAL_PREFIX + thread_id


def thread_of(goal_id_: str) -> str:
    return goal_id_.removeprefix(GOAL_PREFIX)


def state_for(status: str) -> tuple[GoalState, PauseReason | None]:
    return _STATES[status]


@dataclass(frozen=True)
class GoalRecord:
    """One goal: its newest status and what the runner needs to resume it.

    ``resets_at`` / ``no_reset`` are fixed when the goal becomes ``usageLimited`` (from the
    snapshot in force then), so reporting the same status again never moves the schedule.
    """

    update: GoalUpdate
    cwd: str | None = None
    rollout: Path | None = None
    resets_at: datetime | None = None
    no_reset: str | None = None
    source: str = "rollout"  # rollout | db: where the newest status came from

    @property
    def thread_id(self) -> str:
        return self.update.thread_id


class ThreadGoalBook:
    """Every Codex goal found so far, by thread id. Owns no I/O."""

    def __init__(self) -> None:
        self.records: dict[str, GoalRecord] = {}

    def apply(self, update: GoalUpdate, snapshot: RateSnapshot | None,
              source: str = "rollout") -> GoalRecord | None:
        """Take ``update`` if it is newer; return the record when anything changed."""
        current = self.records.get(update.thread_id)
        if current is not None and update.at <= current.update.at:
            return None
        if current is not None and update.status == current.update.status:
            record = replace(current, update=update, source=source)
        else:
            limited = update.status == "usageLimited"
            record = GoalRecord(
                update=update,
                cwd=current.cwd if current else None,
                rollout=current.rollout if current else None,
                resets_at=limit_lifts_at(snapshot) if limited else None,
                no_reset=snapshot.no_timed_reset if limited and snapshot else None,
                source=source,
            )
        self.records[update.thread_id] = record
        return record

    def place(self, thread_id: str, cwd: str | None, rollout: Path | None) -> GoalRecord | None:
        """Record where a goal's session lives; returns the record when that is news."""
        current = self.records.get(thread_id)
        if current is None:
            return None
        new = replace(current, cwd=cwd or current.cwd, rollout=rollout or current.rollout)
        if new == current:
            return None
        self.records[thread_id] = new
        return new


UNKNOWN_NOTE = N_("status unknown: Codex records its own goal changes only in its goals "
                  "database, which Goalkeeper could not read; open the thread in Codex to see it")


def observe(record: GoalRecord, db_seen: bool = True) -> GoalObservation:
    """The observation the engine is given for ``record`` (``db_seen``: a goals database was
    read, so a rollout-only ``active`` is not the only word on the goal)."""
    update = record.update
    state, reason = state_for(update.status)
    codex_status = update.status
    detail = _detail(record) if reason else None
    if update.status == "active" and record.source == "rollout" and not db_seen:
        state, reason, codex_status, detail = (GoalState.PAUSED, PauseReason.EXTERNAL, "unknown",
                                               UNKNOWN_NOTE)
    data: dict[str, Any] = {"thread_id": update.thread_id, "codex_status": codex_status}
    for key, value in (("cwd", record.cwd),
                       ("rollout", str(record.rollout) if record.rollout else None),
                       ("tokens_used", update.tokens_used),
                       ("token_budget", update.token_budget),
                       ("time_used_seconds", update.time_used_seconds)):
        if value is not None:
            data[key] = value
    return GoalObservation(
        id=goal_id(update.thread_id),
        title=update.objective or f"Codex thread {update.thread_id[:8]}",
        state=state,
        observed_at=update.at,
        pause_reason=reason,
        pause_detail=detail,
        windows=GOAL_WINDOWS,
        resets_at=record.resets_at if reason is PauseReason.QUOTA else None,
        # the engine reschedules when it lifts
        no_reset_note=record.no_reset if reason is PauseReason.QUOTA and record.no_reset else None,
        data=data,
    )


def _detail(record: GoalRecord) -> str:
    update = record.update
    if update.status == "usageLimited":
        return record.no_reset or N_("usage limit reached in Codex")
    if update.status == "budgetLimited":
        if update.tokens_used is not None and update.token_budget:
            return N_("token budget used up in Codex ({used} of {budget} tokens)").format(
                used=f"{update.tokens_used:,}", budget=f"{update.token_budget:,}")
        return N_("token budget used up in Codex")
    if update.status == "blocked":
        return N_("blocked in Codex: it needs your attention")
    return N_("paused in Codex")
