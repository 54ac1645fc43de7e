"""The engine's goal actions — resume, pause, cancel, auto-resume, start, forget — carried out.

Each returns a typed :class:`~core.goals.results.ActionResult`, also when the store cannot take the
change: in safe mode the action is refused (``safe mode: …``); when a write fails because the
store is unavailable the result is ``failed`` with "store unavailable: <reason> since T". A
change that must be recorded after a runner already moved (a start that failed) waits in the
engine's report queue instead of being lost, so no goal stays ``running`` without a runner.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from core.events import GoalRemoved, Notice
from core.goals.changes import note_row
from core.goals.decisions import (
    decide_auto_resume,
    decide_cancel,
    decide_pause,
    decide_start,
    result,
)
from core.goals.intake import decide_report
from core.goals.machine import GoalEvent
from core.goals.results import ActionResult
from core.i18n import N_
from core.models import Goal, GoalState, HistoryEvent, Outcome, Trigger
from core.policies.setting import decide_goal_policy
from core.store import LeaseLost, NotOwner
from core.store.inbox import store_unavailable

if TYPE_CHECKING:
    from core.engine import Engine

HOST_STOPPING = N_("the host is stopping")


class GoalActions:
    """Carries out the actions for one :class:`~core.engine.Engine` (which owns everything)."""

    def __init__(self, engine: Engine) -> None:
        self.e = engine

    async def guarded(self, goal_id: str, act: Callable[[], Awaitable[ActionResult]],
                      request: dict[str, Any] | None = None) -> ActionResult:
        """Run ``act`` — or, for a goal another host owns, send ``request`` to its owner
        (:mod:`core.hosts.remote`); answer safe mode, a lost lease and an unavailable store as
        results."""
        e = self.e
        known = e.goals.get(goal_id)
        state = known.state if known else None
        if e.safe_mode is not None:
            return result(goal_id, Outcome.REFUSED,
                          N_("safe mode: {reason}").format(reason=e.safe_mode), state)
        if e.lease_lost is not None:
            return result(goal_id, Outcome.REFUSED, e.lease_lost, state)
        try:
            if request is not None and (owner := await e.owner_elsewhere(goal_id)):
                return await self._ask_owner(owner, goal_id, request)
            return await act()
        except (LeaseLost, NotOwner) as exc:
            return result(goal_id, Outcome.REFUSED, str(exc), state)
        except Exception as exc:
            if store_unavailable(exc) is None:
                raise
            return result(goal_id, Outcome.FAILED, e.inbox.health.describe(), state)

    async def _ask_owner(self, owner: str, goal_id: str, request: dict[str, Any]
                         ) -> ActionResult:
        reply = await self.e.remote.ask(owner, {**request, "goal": goal_id})
        if "error" in reply:
            return result(goal_id, Outcome.FAILED, N_("host {host}: {error}").format(
                host=owner, error=reply["error"]))
        return ActionResult.from_json(reply)

    async def resume(self, goal_id: str, origin: str, trigger: Trigger,
                     context: dict[str, Any] | None) -> ActionResult:
        async with self.e.action() as allowed:
            if not allowed:
                return result(goal_id, Outcome.REFUSED, HOST_STOPPING)
            return await self.guarded(goal_id, lambda: self.e.coordinator.resume(
                goal_id, trigger, origin, context), _manual("resume", trigger))

    async def pause(self, goal_id: str, origin: str) -> ActionResult:
        return await self.guarded(goal_id, lambda: self._pause(goal_id, origin),
                                  {"op": "pause"})

    async def _pause(self, goal_id: str, origin: str) -> ActionResult:
        committed = await self.e.transact(goal_id, decide_pause(goal_id, self.e.clock.now(),
                                                                origin))
        before = committed.before
        if committed.result.outcome is Outcome.PAUSED and before is not None and (
            before.state in (GoalState.RUNNING, GoalState.RESUMING)
        ):
            await self.stop_runner(before, cancel=False)
        return committed.result

    async def cancel(self, goal_id: str, origin: str) -> ActionResult:
        return await self.guarded(goal_id, lambda: self._cancel(goal_id, origin),
                                  {"op": "cancel"})

    async def _cancel(self, goal_id: str, origin: str) -> ActionResult:
        committed = await self.e.transact(goal_id, decide_cancel(goal_id, self.e.clock.now(),
                                                                 origin))
        before = committed.before
        if committed.result.outcome is Outcome.CANCELLED and before is not None and (
            not before.state.terminal
        ):
            await self.stop_runner(before, cancel=True)
        return committed.result

    async def stop_runner(self, goal: Goal, cancel: bool) -> None:
        provider = self.e.providers.get(goal.provider)
        if provider is None:
            return
        action = provider.cancel_goal(goal) if cancel else provider.pause_goal(goal)
        await self.e.guarded_call(provider.name, "cancel" if cancel else "pause", action)

    async def set_auto_resume(self, goal_id: str, enabled: bool, origin: str) -> ActionResult:
        return await self.guarded(goal_id, lambda: self._set_auto_resume(
            goal_id, enabled, origin), {"op": "auto-resume", "enabled": enabled})

    async def _set_auto_resume(self, goal_id: str, enabled: bool, origin: str) -> ActionResult:
        decide = decide_auto_resume(goal_id, enabled, self.e.ctx(), origin)
        committed = await self.e.transact(goal_id, decide)
        reply: ActionResult = committed.result
        if enabled and reply.outcome is Outcome.UPDATED and committed.after is not None:
            reply = await self._first_time_notice(committed.after, reply)
        return reply

    async def set_goal_policy(self, goal_id: str, key: str, value: str,
                              origin: str) -> ActionResult:
        return await self.guarded(goal_id, lambda: self._set_goal_policy(
            goal_id, key, value, origin), {"op": "goal-set", "key": key, "value": value})

    async def _set_goal_policy(self, goal_id: str, key: str, value: str,
                               origin: str) -> ActionResult:
        decide = decide_goal_policy(goal_id, key, value, self.e.ctx(), origin)
        committed = await self.e.transact(goal_id, decide)
        reply: ActionResult = committed.result
        return reply

    async def _first_time_notice(self, goal: Goal, reply: ActionResult) -> ActionResult:
        """Attach (and announce) the provider's auto-resume notice the first time only."""
        e = self.e
        provider = e.providers.get(goal.provider)
        notice = provider.auto_resume_notice(goal) if provider is not None else None
        if notice is None:
            return reply
        key, text = notice
        meta_key = f"notice_shown:{key}"
        if await e.store.run(lambda s: s.get_meta(meta_key)) is not None:
            return reply
        await e.written(lambda s: s.set_meta(meta_key, e.clock.now().isoformat()))
        e.bus.publish(Notice("warning", text))
        return dataclasses.replace(reply, notice=text)

    async def start_goal(self, goal_id: str, origin: str) -> ActionResult:
        async with self.e.action() as allowed:
            if not allowed:
                return result(goal_id, Outcome.REFUSED, HOST_STOPPING)
            return await self.guarded(goal_id, lambda: self._start_goal(goal_id, origin),
                                      {"op": "start"})

    async def _start_goal(self, goal_id: str, origin: str) -> ActionResult:
        e = self.e
        known = e.goals.get(goal_id)
        if known is not None and known.provider not in e.providers:
            # checked before the move: a goal running with no runner would be stuck there
            return result(goal_id, Outcome.REFUSED, N_("provider {provider!r} is not enabled")
                          .format(provider=known.provider),
                          known.state)
        committed = await e.transact(goal_id, decide_start(goal_id, e.clock.now(), origin))
        goal = committed.after
        if committed.result.outcome is not Outcome.RESUMED or goal is None:
            return committed.result
        provider = e.providers[goal.provider]
        async with e.lock_for(goal_id):
            try:
                await provider.start_goal(goal, goal.fence)
            except Exception as exc:
                why = N_("could not start: {error}").format(error=exc)
                await e.record_or_queue(goal_id, lambda g: decide_report(
                    g, goal.fence, GoalEvent.FAIL, why, e.ctx()))
                return result(goal_id, Outcome.FAILED, why, GoalState.FAILED)
        return committed.result

    async def forget_goal(self, goal_id: str, origin: str) -> ActionResult:
        return await self.guarded(goal_id, lambda: self._forget_goal(goal_id, origin))

    async def _forget_goal(self, goal_id: str, origin: str) -> ActionResult:
        """Stop watching a goal: its runner is stopped and its row removed (history stays)."""
        e = self.e
        if owner := await e.owner_elsewhere(goal_id):  # before any runner here is touched:
            raise NotOwner(goal_id, owner)  # only the owner stops its agent
        goal = e.goals.get(goal_id) or await e.store.run(lambda s: s.get_goal(goal_id))
        if goal is None:
            return result(goal_id, Outcome.UNKNOWN_GOAL, N_("unknown goal"))
        if goal.state in (GoalState.RUNNING, GoalState.RESUMING):
            await self.stop_runner(goal, cancel=False)
        row = note_row(goal_id, HistoryEvent.REMOVED, e.clock.now(), origin=origin,
                       reason=N_("no longer watched"), outcome=Outcome.UPDATED)
        saved = await e.written(lambda s: s.remove_goal(goal_id, row))
        e.goals.pop(goal_id, None)
        e.bus.publish(GoalRemoved(goal_id))
        if saved is not None:
            e.announce(saved)
        e.scheduler.poke()
        return result(goal_id, Outcome.UPDATED, N_("removed"))


def _manual(op: str, trigger: Trigger) -> dict[str, Any] | None:
    """The request another host's goal gets: only a person's action travels (the scheduler
    never acts on goals it does not own)."""
    return {"op": op} if trigger is Trigger.MANUAL else None
