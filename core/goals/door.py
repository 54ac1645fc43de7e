"""The one door: every intent about a goal — from a click, the tray, the CLI over the control
socket, another host, the scheduler, start-up recovery or a provider — is carried out here.

``perform(command, origin)`` takes a :mod:`core.commands` value and answers with a typed
:class:`~core.commands.ActionResult`, also when the store cannot take the change. Before any
handler runs, the same guards hold for every caller:

* safe mode refuses (``safe mode: …``); a lost lease refuses with its reason;
* the host stopping refuses an action that would start a runner (a runner started behind a
  stopped provider would run unwatched); one under way is let finish before the providers stop;
* a goal another host owns: the command is sent to its owner (:mod:`core.hosts.remote`) when it
  travels, else refused before any runner here is touched;
* a write the store refuses is a ``failed`` result saying "store unavailable: <reason> since T".

Each command type has one handler in :attr:`GoalDoor._handlers` (no verb chains). The resume
coordinator (:mod:`core.goals.coordinator`) is this door's own: nothing else imports it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from core.clock import Clock
from core.commands import (
    ActionResult,
    Cancel,
    Command,
    Forget,
    Pause,
    Queue,
    Resume,
    SetAutoResume,
    SetGoalPolicy,
    SkipReset,
    Start,
)
from core.events import EventBus, Notice
from core.goals.auto_resume import AutoResumePolicy
from core.goals.book import GoalBook
from core.goals.changes import note_row
from core.goals.coordinator import QuotaLevels, ResumeCoordinator
from core.goals.decisions import (
    decide_auto_resume,
    decide_cancel,
    decide_pause,
    decide_skip_reset,
    decide_start,
    result,
)
from core.goals.intake import IntakeContext, decide_report
from core.goals.machine import GoalEvent
from core.goals.policy_setting import decide_goal_policy
from core.goals.queued import decide_queue, queue_problem
from core.goals.rules import following_reset
from core.i18n import N_
from core.models import Goal, GoalState, HistoryEvent, Outcome
from core.policies.reserve_table import known_windows
from core.providers.base import Provider, QueuedWork
from core.providers.calls import ProviderCalls
from core.store import LeaseLost, NotOwner
from core.store.inbox import store_unavailable
from core.store.writer import StoreWriter

HOST_STOPPING = N_("the host is stopping")

Handler = Callable[[Any, str], Awaitable[ActionResult]]


class HostGuards(Protocol):
    """What the door asks of the host before it acts (the engine answers)."""

    @property
    def safe_mode_problem(self) -> str | None:
        """Why the store cannot be written (nothing runs), or None."""
        ...

    @property
    def lease_lost(self) -> str | None:
        """Why this host may no longer write (another took over), or None."""
        ...

    def action(self) -> AbstractAsyncContextManager[bool]:
        """Track an action that may start a runner; yields False when the host is stopping."""
        ...


class Owners(Protocol):
    """Who owns a goal on a shared store, and how to ask them (:mod:`core.hosts`)."""

    async def owner_elsewhere(self, goal_id: str) -> str | None: ...

    async def ask(self, owner: str, request: dict[str, Any]) -> dict[str, Any]: ...


@dataclasses.dataclass(frozen=True)
class ResumeParts:
    """What the door builds its resume coordinator from."""

    policy: AutoResumePolicy
    levels: QuotaLevels
    start_timeout: float


class GoalDoor:
    """Carries out every command on a goal. Owns the resume coordinator."""

    def __init__(self, book: GoalBook, writer: StoreWriter, providers: Mapping[str, Provider],
                 calls: ProviderCalls, guards: HostGuards, owners: Owners, bus: EventBus,
                 clock: Clock, ctx: Callable[[], IntakeContext], parts: ResumeParts) -> None:
        self._book = book
        self._writer = writer
        self._providers = providers
        self._calls = calls
        self._guards = guards
        self._owners = owners
        self._bus = bus
        self._clock = clock
        self._ctx = ctx
        self._levels = parts.levels
        self._start_timeout = parts.start_timeout
        self._coordinator = ResumeCoordinator(
            writer.store, clock, providers, parts.levels, parts.policy, book.committed,
            parts.start_timeout, writer.lock_for, writer.record_or_queue, writer.written)
        self._handlers: dict[type[Command], Handler] = {
            Resume: self._resume, Pause: self._pause, Cancel: self._cancel,
            SetAutoResume: self._set_auto_resume, SetGoalPolicy: self._set_goal_policy,
            SkipReset: self._skip_reset, Start: self._start, Forget: self._forget,
            Queue: self._queue,
        }

    async def perform(self, command: Command, origin: str = "gui") -> ActionResult:
        """Carry out ``command`` for ``origin`` (``gui``, ``cli``, ``tray``, ``scheduler``,
        ``startup``, ``host:<id>``, ``provider:<name>``…) and answer with a typed result."""
        if not command.starts_runner:
            return await self._guarded(command, origin)
        async with self._guards.action() as allowed:
            if not allowed:
                return result(command.goal, Outcome.REFUSED, HOST_STOPPING)
            return await self._guarded(command, origin)

    async def _guarded(self, command: Command, origin: str) -> ActionResult:
        goal_id = command.goal
        known = self._book.goals.get(goal_id)
        state = known.state if known else None
        if (problem := self._guards.safe_mode_problem) is not None:
            return result(goal_id, Outcome.REFUSED,
                          N_("safe mode: {reason}").format(reason=problem), state)
        if (lost := self._guards.lease_lost) is not None:
            return result(goal_id, Outcome.REFUSED, lost, state)
        try:
            if owner := await self._owners.owner_elsewhere(goal_id):
                if not command.travels():  # only the owner stops its agent
                    raise NotOwner(goal_id, owner)
                return await self._ask_owner(owner, command)
            return await self._handlers[type(command)](command, origin)
        except (LeaseLost, NotOwner) as exc:
            return result(goal_id, Outcome.REFUSED, str(exc), state)
        except Exception as exc:
            if store_unavailable(exc) is None:
                raise
            return result(goal_id, Outcome.FAILED, self._writer.queue.health.describe(), state)

    async def _ask_owner(self, owner: str, command: Command) -> ActionResult:
        reply = await self._owners.ask(owner, command.to_json())
        if "error" in reply:
            return result(command.goal, Outcome.FAILED, N_("host {host}: {error}").format(
                host=owner, error=reply["error"]))
        return ActionResult.from_json(reply)

    # -- the handlers, one per command ----------------------------------------------------------

    async def _resume(self, command: Resume, origin: str) -> ActionResult:
        return await self._coordinator.resume(command.goal, command.trigger, origin,
                                              dict(command.context) or None)

    async def _pause(self, command: Pause, origin: str) -> ActionResult:
        committed = await self._writer.transact(
            command.goal, decide_pause(command.goal, self._clock.now(), origin))
        before = committed.before
        if committed.result.outcome is Outcome.PAUSED and before is not None and (
            before.state in (GoalState.RUNNING, GoalState.RESUMING)
        ):
            await self._calls.stop_runner(before, cancel=False)
        return committed.result

    async def _cancel(self, command: Cancel, origin: str) -> ActionResult:
        committed = await self._writer.transact(
            command.goal, decide_cancel(command.goal, self._clock.now(), origin))
        before = committed.before
        if committed.result.outcome is Outcome.CANCELLED and before is not None and (
            not before.state.terminal
        ):
            await self._calls.stop_runner(before, cancel=True)
        return committed.result

    async def _set_auto_resume(self, command: SetAutoResume, origin: str) -> ActionResult:
        decide = decide_auto_resume(command.goal, command.enabled, self._ctx(), origin)
        committed = await self._writer.transact(command.goal, decide)
        reply = committed.result
        if command.enabled and reply.outcome is Outcome.UPDATED and committed.after is not None:
            reply = await self._first_time_notice(committed.after, reply)
        return reply

    async def _skip_reset(self, command: SkipReset, origin: str) -> ActionResult:
        ctx = self._ctx()
        goal = self._book.goals.get(command.goal)
        following = None if goal is None else following_reset(
            goal.resets_at, self._levels.levels(goal.windows, ctx.now))
        decide = decide_skip_reset(command.goal, following, ctx, origin)
        return (await self._writer.transact(command.goal, decide)).result

    async def _set_goal_policy(self, command: SetGoalPolicy, origin: str) -> ActionResult:
        decide = decide_goal_policy(command.goal, command.key, command.value, self._ctx(),
                                    origin)
        return (await self._writer.transact(command.goal, decide)).result

    async def _first_time_notice(self, goal: Goal, reply: ActionResult) -> ActionResult:
        """Attach (and announce) the provider's auto-resume notice the first time only."""
        provider = self._providers.get(goal.provider)
        notice = provider.auto_resume_notice(goal) if provider is not None else None
        if notice is None:
            return reply
        key, text = notice
        meta_key = f"notice_shown:{key}"
        if await self._writer.store.run(lambda s: s.get_meta(meta_key)) is not None:
            return reply
        await self._writer.written(lambda s: s.set_meta(meta_key, self._clock.now().isoformat()))
        self._bus.publish(Notice("warning", text))
        return dataclasses.replace(reply, notice=text)

    async def _start(self, command: Start, origin: str) -> ActionResult:
        goal_id = command.goal
        known = self._book.goals.get(goal_id)
        if known is not None and known.provider not in self._providers:
            # checked before the move: a goal running with no runner would be stuck there
            return result(goal_id, Outcome.REFUSED, N_("provider {provider!r} is not enabled")
                          .format(provider=known.provider), known.state)
        committed = await self._writer.transact(
            goal_id, decide_start(goal_id, self._clock.now(), origin))
        goal = committed.after
        if committed.result.outcome is not Outcome.RESUMED or goal is None:
            return committed.result
        provider = self._providers[goal.provider]
        async with self._writer.lock_for(goal_id):
            try:
                await provider.start_goal(goal, goal.fence)
            except Exception as exc:
                why = N_("could not start: {error}").format(error=exc)
                await self._writer.record_or_queue(goal_id, lambda g: decide_report(
                    g, goal.fence, GoalEvent.FAIL, why, self._ctx()))
                return result(goal_id, Outcome.FAILED, why, GoalState.FAILED)
        return committed.result

    async def _queue(self, command: Queue, origin: str) -> ActionResult:
        """New work to start after a window's next reset (:mod:`core.goals.queued`): the
        provider prepares it (nothing runs yet), and it is stored as a goal paused for that
        window — the scheduler, the claim and the provider's resume take it from there."""
        if problem := queue_problem(command.provider, command.cwd, command.text,
                                    command.window, known_windows()):
            return result(command.goal, Outcome.REFUSED, problem)
        provider = self._providers.get(command.provider)
        if provider is None:
            return result(command.goal, Outcome.REFUSED, N_("provider {provider!r} is not enabled")
                          .format(provider=command.provider))
        now = self._clock.now()
        level = next(iter(self._levels.levels((command.window,), now)), None)
        if level is None or level.resets_at is None:
            return result(command.goal, Outcome.REFUSED, N_(
                "no reset time is known for {window} yet: Goalkeeper has no reading of it "
                "(see `goalkeeper status`)").format(window=command.window))
        after = level.resets_at
        known = self._book.goals.get(f"codex:{command.thread}") if command.thread else None
        if known is not None and not known.state.terminal:
            return result(known.id, Outcome.REFUSED, N_(
                "{goal} is already a goal ({state}): resume it instead").format(
                    goal=known.id, state=known.state.value), known.state)
        work = QueuedWork(cwd=command.cwd, text=command.text.strip(), thread=command.thread)
        try:
            async with asyncio.timeout(self._start_timeout):
                prepared = await provider.prepare_start(work)
        except TimeoutError:
            return result(command.goal, Outcome.FAILED, N_(
                "{provider} did not prepare the work within {seconds} s").format(
                    provider=command.provider, seconds=f"{self._start_timeout:g}"))
        except Exception as exc:
            return result(command.goal, Outcome.FAILED, N_("could not queue: {error}").format(
                error=str(exc) or type(exc).__name__))
        decide = functools.partial(decide_queue, prepared=prepared, provider=command.provider,
                                   window=command.window, after=after, origin=origin,
                                   ctx=self._ctx())
        return (await self._writer.transact(prepared.goal_id, decide)).result

    async def _forget(self, command: Forget, origin: str) -> ActionResult:
        """Stop watching a goal: its runner is stopped and its row removed (history stays)."""
        goal_id = command.goal
        goal = self._book.goals.get(goal_id) or await self._writer.store.run(
            lambda s: s.get_goal(goal_id))
        if goal is None:
            return result(goal_id, Outcome.UNKNOWN_GOAL, N_("unknown goal"))
        if goal.state in (GoalState.RUNNING, GoalState.RESUMING):
            await self._calls.stop_runner(goal, cancel=False)
        row = note_row(goal_id, HistoryEvent.REMOVED, self._clock.now(), origin=origin,
                       reason=N_("no longer watched"), outcome=Outcome.UPDATED)
        saved = await self._writer.written(lambda s: s.remove_goal(goal_id, row))
        self._book.removed(goal_id, saved)
        return result(goal_id, Outcome.UPDATED, N_("removed"))
