"""The one resume entry point.

``resume(goal_id, trigger, origin)`` is what a click, a CLI command, the scheduler, start-up
recovery and wake-from-sleep all call; nothing else moves a goal out of ``paused``. It

1. decides (:func:`core.goals.auto_resume.decide_resume`) and, when allowed, **claims** the goal
— ``paused →
   resuming`` with the fencing token bumped — in one ``BEGIN IMMEDIATE`` transaction, so however
   many callers race (threads, processes) exactly one wins;
2. starts the provider's runner *outside* the transaction, time-boxed;
3. settles: ``resuming → running`` on success, back to ``paused`` with the error on failure (the
   seed's failure fallback) — guarded by the fence, so a pause or cancel that arrived meanwhile
   wins and the runner just started is stopped again.

Every call appends a ``resume_requested`` history row with its trigger, origin, outcome, reason and
the quota readings it decided on — refusals and no-ops included.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

from core.clock import Clock
from core.commands import ActionResult
from core.goals import queued
from core.goals.auto_resume import (
    WAITS_FOR_RESET,
    AutoResumePolicy,
    Decision,
    decide_resume,
    plan_resume,
)
from core.goals.changes import note_row, transition
from core.goals.gate import review
from core.goals.machine import GoalEvent
from core.goals.rules import WindowLevel
from core.i18n import N_
from core.models import (
    Deferral,
    Goal,
    GoalState,
    HistoryEvent,
    HistoryRow,
    Outcome,
    PauseReason,
    Trigger,
)
from core.providers.base import Provider, RunnerDeferred, StartOutcome
from core.store import Committed, Mutation, Store, StoreThread, StoreUnavailable

log = logging.getLogger(__name__)


class QuotaLevels(Protocol):
    def blockers(self, windows: tuple[str, ...], now: datetime) -> dict[str, datetime | None]:
        """The goal's windows that are not recovered, each with when to check again."""
        ...

    def snapshot(self, windows: tuple[str, ...], now: datetime) -> tuple[dict[str, Any], ...]:
        """The readings a decision is based on, for the history row."""
        ...

    def levels(self, windows: tuple[str, ...], now: datetime) -> tuple[WindowLevel, ...]:
        """Used % and next reset of each window, for the resume policies."""
        ...


T = TypeVar("T")
Decide = Callable[[Goal | None], Mutation[Any]]
#: stores a change now or, while the store is unavailable, queues it (never lost)
RecordOrQueue = Callable[[str, Decide], Awaitable[None]]


class OnCommitted(Protocol):
    """Told of every committed change, whatever its decision returned."""

    def __call__(self, committed: Committed[T], /) -> None: ...


class Write(Protocol):
    """A store write (:meth:`StoreThread.run`, or the engine's health-aware ``written``)."""

    def __call__(self, fn: Callable[[Store], T], /) -> Awaitable[T]: ...


class ResumeCoordinator:
    """Owns the resume protocol; shares the store, clock and providers with the engine."""

    def __init__(
        self,
        store: StoreThread,
        clock: Clock,
        providers: Mapping[str, Provider],
        quotas: QuotaLevels,
        policy: AutoResumePolicy,
        on_committed: OnCommitted,
        start_timeout: float = 60.0,
        lock_for: Callable[[str], asyncio.Lock] | None = None,
        record_or_queue: RecordOrQueue | None = None,
        write: Write | None = None,
    ) -> None:
        self._store = store
        self._write: Write = write or store.run
        self._record_or_queue = record_or_queue
        self._clock = clock
        self._providers = providers
        self._quotas = quotas
        self._policy = policy
        self._on_committed = on_committed
        self._start_timeout = start_timeout
        locks: dict[str, asyncio.Lock] = {}
        self._lock_for = lock_for or (lambda goal_id: locks.setdefault(goal_id, asyncio.Lock()))

    async def resume(
        self,
        goal_id: str,
        trigger: Trigger,
        origin: str,
        context: dict[str, Any] | None = None,
    ) -> ActionResult:
        now = self._clock.now()
        goal = await self._store.run(lambda s: s.get_goal(goal_id))
        windows = goal.windows if goal else ()
        blockers = self._quotas.blockers(windows, now)
        quotas = self._quotas.snapshot(windows, now)
        levels = self._quotas.levels(windows, now)

        claimed: list[Goal] = []  # what the last run of the claim wrote, if it claimed

        def claim(current: Goal | None, store: Store) -> Mutation[Decision]:
            claimed.clear()
            decision = decide_resume(current, trigger, now, blockers, self._policy)
            # the resume policies; the slot count is a query inside this very transaction
            decision = review(decision, current, trigger, now, levels, self._policy, store)
            # queued new work: not before a reading shows its window's new period
            decision = queued.hold(decision, current, trigger, now, quotas, self._policy)
            detail = (context or {}) | ({"rule": decision.rule} if decision.rule else {})
            row = note_row(
                goal_id,
                HistoryEvent.RESUME_REQUESTED,
                now,
                outcome=decision.outcome,
                reason=decision.reason,
                trigger=trigger,
                origin=origin,
                quotas=quotas,
                detail=detail,
            )
            if current is None or not decision.allowed:
                return Mutation(_deferral(current, decision, trigger, now), decision, [row])
            won, moved = transition(
                current,
                GoalEvent.CLAIM_RESUME,
                now,
                origin=origin,
                trigger=trigger,
                reason=decision.reason,
                fence=current.fence + 1,
                attempts=_attempts_after_claim(current, trigger),
                next_resume_at=None,
                deferral=None,
                steering=current.steering.model_copy(
                    update={"resume_slot": decision.takes_slot}),
            )
            claimed.append(won)
            return Mutation(won, decision, [moved])

        try:
            committed = await self._write(
                lambda s: s.transact(goal_id, lambda current: claim(current, s)))
        except StoreUnavailable as exc:
            if claimed and self._record_or_queue is not None:
                await self._unclaim(claimed[0], trigger, origin, quotas, context, exc)
            raise
        self._on_committed(committed)
        decision = committed.result
        if not decision.allowed or committed.after is None:
            after = committed.after
            return ActionResult(
                goal_id,
                decision.outcome,
                decision.reason,
                decision.not_before,
                after.state if after else None,
            )
        # reports from the runner we are about to start wait for this lock: they apply only
        # after the claim has settled
        async with self._lock_for(goal_id):
            return await self._carry_out(committed.after, trigger, origin, quotas, context,
                                         decision.note)

    async def _unclaim(self, claimed: Goal, trigger: Trigger, origin: str,
                       quotas: tuple[dict[str, Any], ...], context: dict[str, Any] | None,
                       exc: StoreUnavailable) -> None:
        """The claim's commit was not confirmed (the connection dropped during COMMIT): it may
        have happened. No runner is started; a settle back to ``paused`` is stored, or queued
        until the store is back, that applies only while the goal is still in the state this
        claim wrote (``resuming`` with its fence) — safe whether or not the commit happened."""
        assert self._record_or_queue is not None
        why = N_("the store did not confirm the claim ({error}); no runner was started").format(
            error=exc)
        log.warning("%s: %s", claimed.id, why)
        settle = _Settle(claimed, trigger, origin, quotas, context, self._clock.now(),
                         self._policy)
        async with self._lock_for(claimed.id):
            await self._record_or_queue(claimed.id, settle.undo(why))

    async def _carry_out(
        self,
        goal: Goal,
        trigger: Trigger,
        origin: str,
        quotas: tuple[dict[str, Any], ...],
        context: dict[str, Any] | None,
        note: str | None = None,
    ) -> ActionResult:
        provider = self._providers.get(goal.provider)
        error: str | None = None
        deferred: RunnerDeferred | None = None
        started: StartOutcome | None = None
        try:
            if provider is None:
                raise LookupError(N_("provider {provider!r} is not enabled").format(
                    provider=goal.provider))
            async with asyncio.timeout(self._start_timeout):
                started = await provider.resume_goal(goal, goal.fence)
        except RunnerDeferred as exc:
            deferred = exc
        except TimeoutError:
            error = N_("the runner did not start within {seconds} s").format(
                seconds=f"{self._start_timeout:g}")
        except Exception as exc:  # a runner failure must never leave the goal in `resuming`
            log.warning("resume of %s failed: %s", goal.id, exc)
            error = str(exc) or type(exc).__name__
        settle = _Settle(goal, trigger, origin, quotas, context, self._clock.now(), self._policy,
                         note)
        decide = settle.decide(started, error, deferred)
        try:
            committed = await self._write(lambda s: s.transact(goal.id, decide))
        except Exception as exc:
            if self._record_or_queue is None:
                raise
            return await self._unsettled(goal, settle, provider, started, exc)
        self._on_committed(committed)
        result: ActionResult = committed.result
        if settle.superseded and started is StartOutcome.STARTED and provider is not None:
            await _stop_quietly(provider, goal)
        return result

    async def _unsettled(self, goal: Goal, settle: _Settle, provider: Provider | None,
                         started: StartOutcome | None, exc: Exception) -> ActionResult:
        """The settling could not be stored: a runner nobody can record must not run. It is
        stopped, and the goal's way back to ``paused`` waits for the store."""
        assert self._record_or_queue is not None
        why = N_("the store could not record the resume ({error}); the runner was stopped").format(
            error=exc)
        log.error("%s: %s", goal.id, why)
        if started is StartOutcome.STARTED and provider is not None:
            await _stop_quietly(provider, goal)
        await self._record_or_queue(goal.id, settle.decide(None, why, None))
        return ActionResult(goal.id, Outcome.FAILED, why, None, GoalState.RESUMING)


def _attempts_after_claim(goal: Goal, trigger: Trigger) -> int:
    if trigger is Trigger.MANUAL:
        return 0  # the user took over: a new episode
    if goal.pause_reason in WAITS_FOR_RESET:
        return goal.attempts + 1
    return goal.attempts


def _deferral(goal: Goal | None, decision: Decision, trigger: Trigger,
              now: datetime) -> Goal | None:
    """A deferred auto resume moves the goal's not-before time; a refused one drops it.

    A refused automatic resume whose not-before time stayed would be due again at once, so the
    scheduler would call again and again (e.g. a failed start's retry past the attempt cap).
    """
    if goal is None:
        return None
    if decision.outcome is Outcome.REFUSED and trigger is not Trigger.MANUAL and (
        goal.state is GoalState.PAUSED and goal.next_resume_at is not None
    ):
        return goal.model_copy(update={"next_resume_at": None, "auto_resume_note": decision.reason,
                                       "updated_at": now})
    if decision.outcome is not Outcome.DEFERRED or decision.not_before is None:
        return None
    deferral = Deferral(rule=decision.rule, until=decision.not_before) if decision.rule else None
    if goal.next_resume_at == decision.not_before and goal.deferral == deferral:
        return None
    return goal.model_copy(update={"next_resume_at": decision.not_before, "deferral": deferral,
                                   "updated_at": now})


class _Settle:
    """Builds the transaction that ends a claim: running, done, or back to paused."""

    def __init__(
        self,
        claimed: Goal,
        trigger: Trigger,
        origin: str,
        quotas: tuple[dict[str, Any], ...],
        context: dict[str, Any] | None,
        now: datetime,
        policy: AutoResumePolicy,
        note: str | None = None,
    ) -> None:
        self.claimed = claimed
        self.trigger = trigger
        self.origin = origin
        self.quotas = quotas
        self.context = context or {}
        self.now = now
        self.policy = policy
        self.note = note
        self.superseded = False

    def decide(
        self, started: StartOutcome | None, error: str | None, deferred: RunnerDeferred | None
    ) -> Callable[[Goal | None], Mutation[ActionResult]]:
        def _decide(current: Goal | None) -> Mutation[ActionResult]:
            if current is None or current.state is not GoalState.RESUMING or (
                current.fence != self.claimed.fence
            ):
                return self._superseded(current)
            if deferred is not None:
                return self._back_to_paused(current, Outcome.DEFERRED, deferred.reason,
                                            timedelta(seconds=deferred.retry_after_seconds),
                                            uncount=True)
            if error is not None or started is None:
                return self._back_to_paused(current, Outcome.FAILED, error or N_("runner failed"),
                                            self.policy.failure_backoff, uncount=False)
            return self._started(current, started)

        return _decide

    def undo(self, reason: str) -> Callable[[Goal | None], Mutation[ActionResult]]:
        """Back to ``paused`` if the goal is still as the claim left it, else nothing at all
        (the claim was never committed, or what came after it stands)."""
        def _decide(current: Goal | None) -> Mutation[ActionResult]:
            if current is None or current.state is not GoalState.RESUMING or (
                current.fence != self.claimed.fence
            ):
                state = current.state if current else None
                return Mutation(None, ActionResult(self.claimed.id, Outcome.REFUSED, reason,
                                                   None, state))
            return self._back_to_paused(current, Outcome.FAILED, reason,
                                        self.policy.failure_backoff, uncount=True)

        return _decide

    def _row(self, outcome: Outcome, reason: str, not_before: datetime | None = None
             ) -> HistoryRow:
        detail = dict(self.context)
        if not_before is not None:
            detail["not_before"] = not_before.isoformat()
        return note_row(
            self.claimed.id,
            HistoryEvent.RESUME_REQUESTED,
            self.now,
            outcome=outcome,
            reason=reason,
            trigger=self.trigger,
            origin=self.origin,
            fence=self.claimed.fence,
            quotas=self.quotas,
            detail=detail,
        )

    def _started(self, current: Goal, started: StartOutcome) -> Mutation[ActionResult]:
        if started is StartOutcome.ALREADY_DONE:
            new, moved = transition(current, GoalEvent.COMPLETE, self.now, origin=self.origin,
                                    reason=N_("the agent had already finished it"))
            reason = N_("already done")
        else:
            reason = (N_("resumed") if started is StartOutcome.STARTED
                      else N_("the agent was already working on it"))
            if self.note and started is StartOutcome.STARTED:
                reason = self.note  # what the manual resume went past: the reserve, the hours
            steering = current.steering.model_copy(  # queued work has started: no longer queued
                update={"last_resume_trigger": self._run_trigger(current), "queued": None})
            new, moved = transition(
                current, GoalEvent.RESUME_SUCCEEDED, self.now, origin=self.origin,
                trigger=self.trigger, reason=reason, hosted=started is StartOutcome.STARTED,
                resumed_at=self.now, steering=steering,
            )
        result = ActionResult(current.id, Outcome.RESUMED, reason, None, new.state)
        return Mutation(new, result, [moved, self._row(Outcome.RESUMED, reason)])

    def _run_trigger(self, current: Goal) -> Trigger:
        """What started this run: a restored run keeps the trigger of the run it restores
        (a manual run stays manual across a host restart, so no policy pauses it)."""
        previous = current.steering.last_resume_trigger
        if self.trigger is Trigger.STARTUP and current.pause_reason is PauseReason.INTERRUPTED and (
                previous is not None):
            return previous
        return self.trigger

    def _back_to_paused(
        self, current: Goal, outcome: Outcome, reason: str, wait: timedelta, uncount: bool
    ) -> Mutation[ActionResult]:
        attempts = current.attempts - 1 if uncount and self.trigger is not Trigger.MANUAL else (
            current.attempts)
        retry_at: datetime | None = None
        note = current.auto_resume_note
        if self.trigger is not Trigger.MANUAL and current.pause_reason in WAITS_FOR_RESET:
            # retry later only where an automatic resume would still be allowed then
            plan = plan_resume(current.model_copy(update={"attempts": max(0, attempts)}),
                               self.now, self.now, self.policy, 0.0)
            retry_at = self.now + wait if plan.next_resume_at is not None else None
            note = plan.note
        new, moved = transition(
            current, GoalEvent.RESUME_FAILED, self.now, origin=self.origin, trigger=self.trigger,
            reason=reason, pause_reason=current.pause_reason or PauseReason.ERROR,
            pause_detail=reason if outcome is Outcome.FAILED else current.pause_detail,
            next_resume_at=retry_at, attempts=max(0, attempts), auto_resume_note=note,
        )
        result = ActionResult(current.id, outcome, reason, retry_at, new.state)
        return Mutation(new, result, [moved, self._row(outcome, reason, retry_at)])

    def _superseded(self, current: Goal | None) -> Mutation[ActionResult]:
        self.superseded = True
        state = current.state if current else None
        reason = N_("superseded while resuming: the goal is now {state}").format(
            state=state.value if state else N_("gone"))
        result = ActionResult(self.claimed.id, Outcome.REFUSED, reason, None, state)
        return Mutation(None, result, [self._row(Outcome.REFUSED, reason)])


async def _stop_quietly(provider: Provider, goal: Goal) -> None:
    try:
        await provider.pause_goal(goal)
    except Exception:
        log.exception("could not stop %s after a superseded resume", goal.id)
