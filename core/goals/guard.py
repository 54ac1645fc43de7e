"""The policies while a goal runs: count its budget, pause it at the reserve or its budget.

The engine hands every stored reading to :meth:`PolicyGuard.reading_recorded`. For each goal that
runs on that window it

* charges the reading's rise to the goal's budget (:mod:`core.goals.budget`);
* pauses a goal **Goalkeeper resumed automatically** when the window reaches ``100 − R`` % used
  (the reserve) or the goal has spent its budget this period — through the normal pause path: a
  transition to ``paused`` (reason ``quota`` for the reserve, ``budget`` for the budget) with the
  fence bumped, planned for the window's next reset like any quota pause, and then the provider
  is asked to stop at the end of the current turn where it can
  (:meth:`~core.providers.base.Provider.pause_goal_gracefully`).

A goal the user resumed or started, or one the agent runs by itself, is never paused here — its
spending still counts towards its budget.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any, Protocol, TypeVar

from core.goals import budget
from core.goals.changes import transition
from core.goals.intake import IntakeContext, schedule
from core.goals.machine import GoalEvent
from core.goals.marks import policy_pause_mark, ran_automatically, with_last_run
from core.goals.rules import RULE_BUDGET, RULE_RESERVE
from core.i18n import N_
from core.models import BudgetEntry, Goal, GoalState, PauseReason, QuotaReading
from core.quota.machine import used_percent
from core.store import Committed, Mutation

Decide = Callable[[Goal | None], Mutation[Any]]
T = TypeVar("T")


class GuardWriter(Protocol):
    """How the guard stores its changes (:class:`~core.store.writer.StoreWriter`)."""

    async def report(self, goal_id: str, decide: Callable[[Goal | None], Mutation[T]]
                     ) -> Committed[T]:
        """Apply ``decide`` in a transaction, never between a resume's claim and its settling."""
        ...

    def enqueue(self, job: Callable[[], Awaitable[None]]) -> None: ...


class PolicyGuard:
    """Watches running goals against the reserve and their budgets; owns no state.

    Handed: this host's goals, the planning context, the writer, and how to ask a goal's
    provider to stop at the end of its turn.
    """

    def __init__(self, goals: Mapping[str, Goal], ctx: Callable[[], IntakeContext],
                 writer: GuardWriter, stop_gracefully: Callable[[Goal], None]) -> None:
        self._goals = goals
        self._ctx = ctx
        self._writer = writer
        self._stop_gracefully = stop_gracefully

    async def reading_recorded(self, previous: QuotaReading | None, reading: QuotaReading,
                               effective: QuotaReading | None) -> None:
        running = [g for g in list(self._goals.values())
                   if g.state is GoalState.RUNNING and reading.window_id in g.windows]
        for goal in running:
            entries = budget.charge(goal, previous, reading)
            if entries is not None:
                committed = await self._writer.report(goal.id, _budget_update(goal.id, entries))
                goal = committed.after or goal
            self._check(goal, effective or reading)

    def _check(self, goal: Goal, reading: QuotaReading) -> None:
        if not ran_automatically(goal):
            return
        ctx = self._ctx()
        breach = reserve_breach(goal, reading, ctx) or budget_breach(goal, ctx.now)
        if breach is None:
            return
        rule, why, resets_at = breach
        fence = goal.fence

        async def pause() -> None:
            committed = await self._writer.report(goal.id, lambda current: decide_policy_pause(
                current, fence, rule, why, resets_at, self._ctx()))
            if committed.result and committed.before is not None:
                self._stop_gracefully(committed.before)

        self._writer.enqueue(pause)


def reserve_breach(goal: Goal, reading: QuotaReading, ctx: IntakeContext
                   ) -> tuple[str, str, datetime | None] | None:
    keep = ctx.policy.rules.reserve_for(reading.window_id)
    used = used_percent(reading)
    if keep <= 0 or used is None or used < 100 - keep:
        return None
    why = N_("{window} {used} % used, {keep} % kept for you — paused until the window "
             "resets").format(window=reading.window_id, used=f"{used:.0f}", keep=f"{keep:g}")
    return RULE_RESERVE, why, reading.resets_at


def budget_breach(goal: Goal, now: datetime) -> tuple[str, str, datetime | None] | None:
    over = budget.exceeded(goal, now)
    if over is None:
        return None
    why = N_("{percent} % of {window} spent this period (budget {budget} %) — not resumed "
             "before the window resets").format(percent=f"{over.percent:.0f}",
                                                window=over.window_id,
                                                budget=f"{goal.policy.budget_percent:g}")
    return RULE_BUDGET, why, over.until


def decide_policy_pause(current: Goal | None, fence: int, rule: str, why: str,
                        resets_at: datetime | None, ctx: IntakeContext) -> Mutation[bool]:
    """Pause a goal Goalkeeper resumed, for the reserve or its budget, and plan its resume."""
    if current is None or current.fence != fence or current.state is not GoalState.RUNNING:
        return Mutation(None, False)  # it stopped, or moved on, meanwhile
    reason = PauseReason.BUDGET if rule == RULE_BUDGET else PauseReason.QUOTA
    steering = with_last_run(current, ctx.now).model_copy(
        update={"policy_pause": policy_pause_mark(rule, ctx.now)})
    paused, row = transition(
        current, GoalEvent.PAUSE, ctx.now, origin="policy", reason=N_("{rule}: {why}").format(
            rule=rule, why=why),
        pause_reason=reason, pause_detail=N_("{rule}: {why}").format(rule=rule, why=why),
        fence=current.fence + 1,
        attempts=0, steering=steering, detail={"rule": rule},
    )
    planned, scheduled = schedule(paused, resets_at, ctx)
    return Mutation(planned, True, [row, scheduled])


def _budget_update(goal_id: str, entries: dict[str, BudgetEntry]) -> Decide:
    def decide(current: Goal | None) -> Mutation[None]:
        if current is None or current.steering.budget == entries:
            return Mutation(None, None)
        steering = current.steering.model_copy(update={"budget": entries})
        return Mutation(current.model_copy(update={"steering": steering}), None)

    return decide
