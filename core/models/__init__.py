"""The persisted things: goals, quota readings, history rows — and the vocabulary they use.

Every instant is timezone-aware UTC. The enums' values are what the store, the CLI's JSON and
the logs show, so they are part of the public interface: add values, never rename them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.models.records import BudgetEntry as BudgetEntry
    from core.models.records import Deferral as Deferral
    from core.models.records import Description as Description
    from core.models.records import Goal as Goal
    from core.models.records import HistoryRow as HistoryRow
    from core.models.records import LastRun as LastRun
    from core.models.records import PolicyPause as PolicyPause
    from core.models.records import QueuedStart as QueuedStart
    from core.models.records import QuotaReading as QuotaReading
    from core.models.records import Steering as Steering
    from core.models.records import Title as Title
    from core.models.records import UtcDatetime as UtcDatetime
else:
    def __getattr__(name: str) -> Any:
        """The models are pydantic's, built on first use: the enums alone load none of it
        (issue 24: a command that only shows stored values needs no validation)."""
        import importlib

        records = importlib.import_module("core.models.records")
        try:
            return getattr(records, name)
        except AttributeError:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


class GoalState(StrEnum):
    IDLE = "idle"
    RUNNING = "running"
    PAUSED = "paused"
    RESUMING = "resuming"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"

    @property
    def terminal(self) -> bool:
        return self in (GoalState.DONE, GoalState.CANCELLED)


class PauseReason(StrEnum):
    QUOTA = "quota"  # auto-resumed once the quota is back
    BUDGET = "budget"  # spent its budget of a window: auto-resumed only in the next period
    USER = "user"  # never auto-resumed
    AUTH = "auth"
    ERROR = "error"
    EXTERNAL = "external"  # paused by the agent itself or another tool
    INTERRUPTED = "interrupted"  # the host stopped while Goalkeeper was running the goal


class Trigger(StrEnum):
    MANUAL = "manual"  # a click in the window or a CLI command
    AUTO = "auto"  # quota recovered / deadline reached
    STARTUP = "startup"  # recovery when a host starts
    WAKE = "wake"  # the machine woke from sleep past a deadline


class Outcome(StrEnum):
    RESUMED = "resumed"
    ALREADY_RUNNING = "already_running"
    ALREADY_RESUMING = "already_resuming"
    DEFERRED = "deferred"
    REFUSED = "refused"
    FAILED = "failed"  # the claim was won but the runner could not start; back to paused
    UNKNOWN_GOAL = "unknown_goal"
    # for pause / cancel / auto-resume toggles
    PAUSED = "paused"
    ALREADY_PAUSED = "already_paused"
    CANCELLED = "cancelled"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    QUEUED = "queued"  # new work waits for a window's reset (core.goals.queued)

    @property
    def carried_out(self) -> bool:
        """True when the request was carried out or was already in effect (CLI exit 0)."""
        return self not in (Outcome.REFUSED, Outcome.FAILED, Outcome.UNKNOWN_GOAL)


class HistoryEvent(StrEnum):
    """What a history row records. The values are the names stored in the ``event`` column.

    A row whose stored name is not listed here (one a newer Goalkeeper wrote) still loads:
    :attr:`HistoryRow.event` then keeps the name as plain text.
    """

    # the goal machine's transitions (core.goals.machine.HISTORY_EVENT)
    STARTED = "started"
    PAUSED = "paused"
    RESUMING = "resuming"
    RESUMED = "resumed"
    RESUME_FAILED = "resume_failed"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"
    RUNNING_EXTERNALLY = "running_externally"
    RESET = "reset"
    RESTED = "rested"
    # requests at the entry points (core.goals.decisions, core.goals.policy_setting)
    RESUME_REQUESTED = "resume_requested"
    PAUSE_REQUESTED = "pause_requested"
    CANCEL_REQUESTED = "cancel_requested"
    AUTO_RESUME_CHANGED = "auto_resume_changed"
    GOAL_POLICY_CHANGED = "goal_policy_changed"
    QUEUED = "queued"  # new work queued to start after a window's reset
    # decisions without a state change (core.goals.intake, the engine, the CLI)
    RESUME_SCHEDULED = "resume_scheduled"
    RESUME_NOT_SCHEDULED = "resume_not_scheduled"
    GAVE_UP = "gave_up"
    DISCOVERED = "discovered"
    REMOVED = "removed"
    # quota edges (no goal)
    QUOTA_EXHAUSTED = "quota_exhausted"
    QUOTA_RECOVERED = "quota_recovered"
    # providers' own notes (GoalSink.goal_noted)
    CODEX_VERSION = "codex_version"
    UNTRACKED = "untracked"
    RETRY_SCHEDULED = "retry_scheduled"
    RUN_STARTED = "run_started"
    RUN_CONTINUED = "run_continued"
    RUN_ABANDONED = "run_abandoned"
    RUN_DEGRADED = "run_degraded"
    SCHEDULE_SKIPPED = "schedule_skipped"
    STEP_RETRY = "step_retry"
    STEP_INTERRUPTED = "step_interrupted"
    SOURCE_MISSING = "source_missing"
    # a command from the phone that was not acted on (core.notify.listen)
    PHONE_REFUSED = "phone_refused"


class Exactness(StrEnum):
    EXACT = "exact"  # reported by the provider just now
    INFERRED = "inferred"  # derived, e.g. the reset instant has passed
    ESTIMATED = "estimated"  # computed from a model (token bucket refill, user quota)
    STALE = "stale"  # older than the provider's freshness limit


class QuotaKind(StrEnum):
    PERIODIC = "periodic"  # resets at an instant, window after window
    CAPACITY = "capacity"  # fixed total, refilled by hand: no timed reset
    TOKEN_BUCKET = "token_bucket"  # refills continuously at a rate, up to a burst
