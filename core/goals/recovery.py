"""Start-up recovery and the host's stop: goals a host left mid-run are taken up again.

At start, a goal the previous host left ``resuming`` (or ``running`` under its runner) goes back
to ``paused`` (reason ``interrupted``), and every such goal is resumed — through the one door,
with trigger ``startup``, so safe mode, a lost lease and the host stopping refuse it like any
other resume. At a clean stop, the goals this host runs are marked interrupted for the next host.

Handed: this host's goals, the writer and the door.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from core.clock import Clock
from core.commands import ActionResult, Door, Resume
from core.goals.changes import transition
from core.goals.machine import GoalEvent
from core.i18n import N_
from core.models import Goal, GoalState, PauseReason, Trigger
from core.store.base import LeaseLost, Mutation
from core.store.inbox import store_unavailable
from core.store.writer import StoreWriter

log = logging.getLogger("goalkeeper")


class Recovery:
    """Interrupts and resumes goals left mid-run; owns nothing."""

    def __init__(self, goals: Mapping[str, Goal], writer: StoreWriter, door: Door,
                 clock: Clock) -> None:
        self._goals = goals
        self._writer = writer
        self._door = door
        self._clock = clock

    async def recover(self, whose: Callable[[Goal], bool]) -> list[ActionResult]:
        """Goals the previous host left running or resuming: back to paused, then resumed.
        ``whose`` picks the goals (one provider's): each goal is recovered once."""
        for goal in [g for g in self._goals.values() if whose(g)]:
            if goal.state is GoalState.RESUMING or (
                goal.state is GoalState.RUNNING and goal.hosted
            ):
                await self.interrupt(goal.id, N_("the previous host stopped while it was "
                                                 "{state}").format(state=goal.state.value),
                                     "startup")
        results = []
        for goal in [g for g in self._goals.values() if whose(g)]:
            if goal.state is GoalState.PAUSED and goal.pause_reason is PauseReason.INTERRUPTED:
                results.append(await self._door.perform(Resume(goal.id, Trigger.STARTUP),
                                                        "startup"))
        return results

    async def interrupt_hosted(self) -> None:
        """At a clean stop: the goals this host runs are marked interrupted."""
        for goal in list(self._goals.values()):
            if goal.hosted and goal.state is GoalState.RUNNING:
                try:
                    await self.interrupt(goal.id, N_("the host stopped"), "shutdown")
                except Exception as exc:  # the next host's start-up recovery catches it
                    if store_unavailable(exc) is None and not isinstance(exc, LeaseLost):
                        raise
                    log.error("%s: could not record the interruption: %s", goal.id, exc)

    async def interrupt(self, goal_id: str, why: str, origin: str) -> None:
        now = self._clock.now()

        def decide(current: Goal | None) -> Mutation[Any]:
            if current is None or current.state not in (GoalState.RUNNING, GoalState.RESUMING):
                return Mutation(None, None)
            new, row = transition(current, GoalEvent.PAUSE, now, origin=origin,
                                  pause_reason=PauseReason.INTERRUPTED, pause_detail=why,
                                  fence=current.fence + 1, auto_resume_note=why)
            return Mutation(new, None, [row])

        await self._writer.transact(goal_id, decide)
