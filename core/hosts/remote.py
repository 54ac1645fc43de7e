"""Actions on another host's goal: asked through the store, carried out by the owner.

Only a goal's owner runs, resumes or pauses its agent. When the window, the CLI or a control
request on one host acts on a goal of another, :meth:`RemoteActions.ask` posts the request in
the store (``requests``; ``NOTIFY`` wakes the owner) and waits for the owner's answer — the
usual typed :class:`~core.commands.ActionResult` — which the owner produced through the same
entry point a click on its own window uses (:meth:`RemoteActions.serve`, through the control
server's ops). An owner that is offline is not asked: the action is refused with "host X
offline since T"; an owner that does not take the request in time has it expired (a conditional
update: it is then never carried out) and the action fails with that reason.

The request is the command's own JSON form (:mod:`core.commands`); only commands that travel
(:meth:`~core.commands.Command.travels`) are carried out for another host.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from core.clock import Clock, iso
from core.commands import ActionResult, Command, command_from_json
from core.i18n import N_
from core.models import Goal, Outcome
from core.store import ActionRequest, HostRecord
from core.store.thread import StoreThread
from core.store.writer import StoreWriter

log = logging.getLogger("goalkeeper")

Perform = Callable[[Command, str], Awaitable[ActionResult]]
Spawn = Callable[[Awaitable[Any], str], "asyncio.Task[Any]"]
#: what the owner gets beyond its runner-start time to answer
ANSWER_MARGIN_SECONDS = 30.0
#: how often a waiting asker looks at its request itself (a notification may be missed)
RECHECK_SECONDS = 1.0


def offline_text(host_id: str, record: HostRecord | None, lease_seconds: float,
                 now: Any) -> str | None:
    """"host X offline since T" when the owner cannot take a request now, else None."""
    if record is None:
        return N_("host {host} offline (it never registered in the shared store)").format(
            host=host_id)
    since = record.offline_since(now, lease_seconds)
    if since is None:
        return None
    return N_("host {host} offline since {since}").format(host=host_id, since=iso(since))


def not_taken_text(owner: str, seconds: float) -> str:
    """Why an ask failed whose request was expired before its owner took it."""
    return N_("host {host} did not take the request within {seconds} s; nothing was "
              "done").format(host=owner, seconds=f"{seconds:g}")


def no_answer_text(owner: str) -> str:
    """Why an ask failed whose request the owner took but did not answer in time."""
    return N_("host {host} took the request but did not answer in time; see `goalkeeper "
              "history` for what it did").format(host=owner)


def refused(goal_id: str, why: str) -> dict[str, Any]:
    return ActionResult(goal_id, Outcome.REFUSED, why).to_json()


@dataclass(frozen=True)
class HostsView:
    """Where this host stands among the store's hosts (what remote actions need to know)."""

    host_id: str | None  # None: a bare engine on a one-machine store
    shared: Callable[[], bool]  # whether the store is a shared one
    own: Mapping[str, Goal]  # this host's goals
    others: Mapping[str, Goal]  # every other host's, as last heard
    lease_seconds: float  # a host is online while its heartbeat is younger
    answer_seconds: float  # how long an asker waits for the owner


class RemoteActions:
    """Asks owners and serves this host's requests. Owns the asks waiting for their answer.

    Handed: the store (its requests table), the writer, the hosts view, the clock, the door's
    ``perform`` (what a request is carried out with), ``spawn`` and the safe-mode check.
    """

    def __init__(self, store: StoreThread, writer: StoreWriter, hosts: HostsView, clock: Clock,
                 perform: Perform, spawn: Spawn, safe_mode: Callable[[], str | None]) -> None:
        self._store = store
        self._writer = writer
        self._hosts = hosts
        self._clock = clock
        self._perform = perform
        self._spawn = spawn
        self._safe_mode = safe_mode
        self._answers: dict[int, asyncio.Event] = {}

    @property
    def timeout(self) -> float:
        return self._hosts.answer_seconds + ANSWER_MARGIN_SECONDS

    async def owner_elsewhere(self, goal_id: str) -> str | None:
        """The host that owns ``goal_id`` when it is not this one (a shared store), else None."""
        me = self._hosts.host_id
        if me is None or not self._hosts.shared() or goal_id in self._hosts.own:
            return None
        goal = self._hosts.others.get(goal_id) or await self._store.run(
            lambda s: s.get_goal(goal_id))
        return goal.host if goal is not None and goal.host not in ("", me) else None

    # -- asking ---------------------------------------------------------------------------------

    async def ask(self, owner: str, request: dict[str, Any]) -> dict[str, Any]:
        """The owner's reply to ``request`` (a command's JSON form), or a refusal saying why."""
        goal_id = str(request.get("goal") or "")
        now = self._clock.now()
        record = await self._store.run(lambda s: s.get_host(owner))
        if (why := offline_text(owner, record, self._hosts.lease_seconds, now)) is not None:
            return refused(goal_id, why)
        me = self._hosts.host_id or ""
        expires = now + timedelta(seconds=self.timeout)
        request_id = await self._store.run(
            lambda s: s.post_request(owner, request, me, now, expires))
        answered = self._answers.setdefault(request_id, asyncio.Event())
        try:
            return await self._wait(request_id, answered, owner, goal_id)
        finally:
            self._answers.pop(request_id, None)

    async def _wait(self, request_id: int, answered: asyncio.Event, owner: str,
                    goal_id: str) -> dict[str, Any]:
        deadline = self._clock.monotonic() + self.timeout
        expired = False
        while True:
            found = await self._store.run(lambda s: s.get_request(request_id))
            if found is not None and found.answer is not None:
                return found.answer
            left = deadline - self._clock.monotonic()
            if left <= 0 and not expired:
                if await self._store.run(lambda s: s.expire_request(request_id,
                                                                    self._clock.now())):
                    return ActionResult(goal_id, Outcome.FAILED,
                                        not_taken_text(owner, self.timeout)).to_json()
                expired, deadline = True, deadline + self.timeout  # taken: its answer comes
            elif left <= 0:
                return ActionResult(goal_id, Outcome.FAILED, no_answer_text(owner)).to_json()
            await self._until(answered, min(RECHECK_SECONDS, max(left, 0.01)))

    async def _until(self, event: asyncio.Event, seconds: float) -> None:
        waiter = asyncio.ensure_future(event.wait())
        sleeper = asyncio.ensure_future(self._clock.sleep(seconds))
        try:
            await asyncio.wait({waiter, sleeper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            sleeper.cancel()
        event.clear()

    def answered(self, request_id: int | None = None) -> None:
        """A notification said a request was answered (None: look at every waiting one)."""
        for key, event in list(self._answers.items()):
            if request_id is None or key == request_id:
                event.set()

    # -- serving --------------------------------------------------------------------------------

    async def serve(self) -> None:
        """Take this host's pending requests and carry each out (each in its own task)."""
        me = self._hosts.host_id
        if me is None or self._safe_mode() is not None:
            return
        now = self._clock.now()
        taken = await self._store.run(lambda s: s.take_requests(me, now))
        for request in taken:
            self._spawn(self._carry_out(request), f"request:{request.id}")

    async def _carry_out(self, request: ActionRequest) -> None:
        reply = await self._reply(request)
        await self._writer.written(
            lambda s: s.answer_request(request.id, reply, self._clock.now()))

    async def _reply(self, request: ActionRequest) -> dict[str, Any]:
        body = request.request
        try:
            command = command_from_json(body)
        except ValueError:
            command = None
        if command is None or not command.travels():
            return {"error": N_("op {op!r} is not carried out for another host").format(
                op=body.get("op"))}
        try:
            return (await self._perform(command, f"host:{request.by}")).to_json()
        except Exception as exc:  # answered, so the asker is not left waiting
            log.exception("carrying out request %s failed", request.id)
            return {"error": f"{type(exc).__name__}: {exc}"}
