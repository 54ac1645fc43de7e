"""The persisted things as pydantic models: goals, quota readings, history rows.

Imported through :mod:`core.models` (``from core.models import Goal``), which loads this module —
and pydantic — on first use of a model, not for its enums.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from core.clock import to_utc
from core.limits import MAX_DESCRIPTION_CHARS, MAX_TITLE_CHARS, clip
from core.models import (
    Exactness,
    GoalState,
    HistoryEvent,
    Outcome,
    PauseReason,
    QuotaKind,
    Trigger,
)
from core.policies.goal_policy import GoalPolicy

UtcDatetime = Annotated[datetime, AfterValidator(to_utc)]
#: texts from outside (agents, providers) are cut to size before they can be stored
Title = Annotated[str, BeforeValidator(lambda v: clip(v, MAX_TITLE_CHARS)
                                       if isinstance(v, str) else v)]
Description = Annotated[str | None, BeforeValidator(
    lambda v: clip(v, MAX_DESCRIPTION_CHARS) if isinstance(v, str) else v)]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class QuotaReading(_Frozen):
    """One observation of one quota window.

    Attributes:
        window_id: ``<provider>:<window>``, e.g. ``codex:5h``.
        used_percent: 0–100 when known.
        used / limit: absolute units when the provider reports them (capacity quotas, demo).
        resets_at: when a periodic window starts afresh; None for capacity quotas or unknown.
        window_seconds: the length of a periodic window (scales the fallback poll).
        limit_reached: the provider itself says the window is exhausted.
        no_timed_reset: exhaustion that no clock will lift (credits depleted, a capacity quota).
        rate_per_second / burst / tokens: token-bucket state at ``observed_at``.
        note: a human explanation carried to the views ("credits depleted: no timed reset").
    """

    window_id: str
    provider: str
    label: str
    kind: QuotaKind = QuotaKind.PERIODIC
    used_percent: float | None = None
    used: float | None = None
    limit: float | None = None
    resets_at: UtcDatetime | None = None
    window_seconds: float | None = None
    limit_reached: bool | None = None
    no_timed_reset: bool = False
    rate_per_second: float | None = None
    burst: float | None = None
    tokens: float | None = None
    exactness: Exactness = Exactness.EXACT
    observed_at: UtcDatetime
    note: str | None = None
    #: the account the window belongs to — hosts of one account share its readings (a shared
    #: store); empty: this machine's own (the store stamps it, providers leave it empty)
    account: str = ""



class Deferral(_Frozen):
    """Which resume policy moved a goal's not-before time, and to when.

    It speaks for the goal only while ``until`` is still the goal's ``next_resume_at``: anything
    else that moves the time (a new plan, a failed start) makes it silent, without having to
    know about it.
    """

    rule: str  # "allowed hours" | "reserve" | "waiting for a slot" | "budget"
    until: UtcDatetime


class LastRun(_Frozen):
    """How long a goal ran before it last paused for quota or a policy."""

    seconds: float
    ended_at: UtcDatetime


class PolicyPause(_Frozen):
    """A reserve or budget pause Goalkeeper made: its rule, and when (the goal's
    ``state_since`` then — the mark speaks only while the goal stays in that pause)."""

    rule: str
    at: UtcDatetime


class BudgetEntry(_Frozen):
    """What a goal spent of one window, in % of it, in the window period ending ``until``."""

    spent: float
    until: UtcDatetime


class QueuedStart(_Frozen):
    """New work queued to start right after a window's reset (``goalkeeper queue``).

    ``after`` is the reset it waits for: the start needs a reading of ``window`` taken at or
    after it (a fresh read, not one inferred from the clock). Cleared once the work started.
    """

    window: str
    after: UtcDatetime


class Steering(_Frozen):
    """What Goalkeeper notes on a goal to steer its own decisions; never provider metadata
    (that is :attr:`Goal.data`). Stored in the goal's ``steering`` column; before SQLite
    schema 4 (PostgreSQL 2) these were keys of ``data``, and the migration moved them.

    Attributes:
        no_reset_note: the goal's quota pause is one no clock lifts (credits depleted); the
            text says so. Written by a runner's limit report (``goals.intake.decide_limit``)
            and by an observation (``GoalObservation.no_reset_note``, Codex); cleared by a
            limit with a timed reset and when a refill lifts the window (the engine's
            ``_reschedule_lifted``). Read by ``policies.auto_resume.plan_resume`` (nothing is
            scheduled) and the engine (which goals a refill reschedules).
        resume_slot: the goal's last resume claim took a resume slot on its windows. Written
            by the claim (``goals.coordinator``); read by ``policies.slots.holds_slot``.
        last_resume_trigger: what started the goal's current or last run Goalkeeper started
            (a restored run keeps its own). Written when a resume starts the goal
            (``goals.coordinator``); read by ``goals.intake`` (a limit after a manual run
            starts a new episode) and ``policies.marks.ran_automatically`` (the reserve and
            budgets stop automatic runs only).
        auto_resume_block: why the goal must never be resumed automatically, as its provider
            sees it (``GoalObservation.auto_resume_block``: Claude resumes it itself).
            Written by every observation (``goals.intake``); read by ``plan_resume``.
        budget: per window, what the goal spent of it in the window's current period.
            Written by the policy guard (``policies.budget.charge``); read by
            ``policies.budget.spent`` / ``exceeded`` (the gate, the guard, ``status``, views).
        last_run: how long the goal ran before its last pause for quota or a policy. Written
            by those pauses (``goals.intake``, ``policies.guard``); read by ``status`` and
            the views (``policies.marks.last_run_seconds``).
        policy_pause: the reserve or budget pause the goal was put in. Written by the
            guard's pause (``policies.guard``); read by ``policies.marks.policy_paused``
            (the agent showing the goal paused does not replace that reason).
        queued: new work waiting for a window's reset (:class:`QueuedStart`). Written by the
            door's ``Queue`` (``goals.queued``); read by the resume claim (``goals.queued.
            hold``: no start before a fresh reading shows the new period) and the views;
            cleared when the start succeeded (``goals.coordinator``).
    """

    no_reset_note: str | None = None
    resume_slot: bool = False
    last_resume_trigger: Trigger | None = None
    auto_resume_block: str | None = None
    budget: dict[str, BudgetEntry] = Field(default_factory=dict)
    last_run: LastRun | None = None
    policy_pause: PolicyPause | None = None
    queued: QueuedStart | None = None

    def stored(self) -> dict[str, Any]:
        """The JSON the stores keep: only what differs from the defaults ({} for most goals)."""
        return self.model_dump(mode="json", exclude_defaults=True)


class Goal(_Frozen):
    """A goal Goalkeeper watches, as stored.

    ``fence`` is the fencing token: bumped by every claim that moves the goal (resume, pause,
    cancel), carried by the runner that claim started, and required by every report that runner
    makes — so a runner from an older claim can never move the goal.

    ``policy`` is the goal's own resume policy (priority, budget, allowed hours); ``deferral``
    the policy rule that set ``next_resume_at``, when one did (see :attr:`deferred_by`).

    ``steering`` is what Goalkeeper notes on the goal for its own decisions (:class:`Steering`);
    ``data`` is the provider's metadata only (working directory, session file, progress…).
    """

    id: str
    provider: str
    title: Title
    state: GoalState = GoalState.IDLE
    pause_reason: PauseReason | None = None
    pause_detail: Description = None
    windows: tuple[str, ...] = ()
    auto_resume: bool = False
    next_resume_at: UtcDatetime | None = None
    auto_resume_note: Description = None
    resets_at: UtcDatetime | None = None
    attempts: int = 0
    fence: int = 0
    hosted: bool = False
    resumed_at: UtcDatetime | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    steering: Steering = Field(default_factory=Steering)
    created_at: UtcDatetime
    updated_at: UtcDatetime
    state_since: UtcDatetime | None = None  # when the goal entered its current state
    policy: GoalPolicy = Field(default_factory=GoalPolicy)
    deferral: Deferral | None = None
    #: the host that owns the goal (its agent, files and runner); only it changes the goal.
    #: Empty until the store stamps it with the host that first recorded it.
    host: str = ""

    @property
    def deferred_by(self) -> str | None:
        """The rule the pending automatic resume waits for (``allowed hours``…), if any."""
        if self.deferral is None or self.next_resume_at is None or (
                self.deferral.until != self.next_resume_at):
            return None
        return self.deferral.rule



class HistoryRow(_Frozen):
    """One line of the resume history: every state change and every entry-point call."""

    id: int | None = None
    at: UtcDatetime
    goal: str | None
    #: a member when the stored name is known — compare with members; plain text otherwise
    #: (tried as a member first, so a known name never stays a string)
    event: HistoryEvent | str = Field(union_mode="left_to_right")
    trigger: Trigger | None = None
    origin: str | None = None
    outcome: Outcome | None = None
    reason: Description = None
    state_from: GoalState | None = None
    state_to: GoalState | None = None
    fence: int | None = None
    quotas: tuple[dict[str, Any], ...] = ()
    detail: dict[str, Any] = Field(default_factory=dict)
    host: str | None = None  # the host that wrote the row (a shared store has several)
