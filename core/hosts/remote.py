"""Actions on another host's goal: asked through the store, carried out by the owner.

Only a goal's owner runs, resumes or pauses its agent. When the window, the CLI or a control
request on one host acts on a goal of another, :meth:`RemoteActions.ask` posts the request in
the store (``requests``; ``NOTIFY`` wakes the owner) and waits for the owner's answer — the
usual typed :class:`~core.commands.ActionResult` — which the owner produced through the same
entry point a click on its own window uses (:meth:`RemoteActions.serve`, through the control
server's ops). An owner that is offline is not asked: the action is refused with "host X
offline since T"; an owner that does not take the request in time has it expired (a conditional
update: it is then never carried out) and the action fails with that reason.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from core.clock import iso
from core.commands import ActionResult
from core.i18n import N_
from core.models import Outcome
from core.store import ActionRequest, HostRecord

if TYPE_CHECKING:
    from core.engine import Engine

log = logging.getLogger("goalkeeper")

Dispatch = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
#: what the owner gets beyond its runner-start time to answer
ANSWER_MARGIN_SECONDS = 30.0
#: how often a waiting asker looks at its request itself (a notification may be missed)
RECHECK_SECONDS = 1.0
#: the ops that act on a goal, and so go to its owner
ROUTED_OPS = frozenset({"resume", "pause", "cancel", "auto-resume", "start", "goal-set"})


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


class RemoteActions:
    """Asks owners and serves this host's requests. Owns the asks waiting for their answer.

    Attributes:
        dispatch: carries out one request here (the host sets its control server's).
    """

    def __init__(self, engine: Engine) -> None:
        self.e = engine
        self.dispatch: Dispatch = self._dispatch
        self._answers: dict[int, asyncio.Event] = {}

    @property
    def timeout(self) -> float:
        return self.e.settings.runner_start_timeout_seconds + ANSWER_MARGIN_SECONDS

    # -- asking ---------------------------------------------------------------------------------

    async def ask(self, owner: str, request: dict[str, Any]) -> dict[str, Any]:
        """The owner's reply to ``request`` (a control request), or a refusal saying why."""
        goal_id = str(request.get("goal") or "")
        now = self.e.clock.now()
        record = await self.e.store.run(lambda s: s.get_host(owner))
        lease = self.e.settings.host_stale_seconds
        if (why := offline_text(owner, record, lease, now)) is not None:
            return refused(goal_id, why)
        me = self.e.host_id or ""
        expires = now + timedelta(seconds=self.timeout)
        request_id = await self.e.store.run(
            lambda s: s.post_request(owner, request, me, now, expires))
        answered = self._answers.setdefault(request_id, asyncio.Event())
        try:
            return await self._wait(request_id, answered, owner, goal_id)
        finally:
            self._answers.pop(request_id, None)

    async def _wait(self, request_id: int, answered: asyncio.Event, owner: str,
                    goal_id: str) -> dict[str, Any]:
        deadline = self.e.clock.monotonic() + self.timeout
        expired = False
        while True:
            found = await self.e.store.run(lambda s: s.get_request(request_id))
            if found is not None and found.answer is not None:
                return found.answer
            left = deadline - self.e.clock.monotonic()
            if left <= 0 and not expired:
                if await self.e.store.run(lambda s: s.expire_request(request_id,
                                                                     self.e.clock.now())):
                    return ActionResult(goal_id, Outcome.FAILED,
                                        not_taken_text(owner, self.timeout)).to_json()
                expired, deadline = True, deadline + self.timeout  # taken: its answer comes
            elif left <= 0:
                return ActionResult(goal_id, Outcome.FAILED, no_answer_text(owner)).to_json()
            await self._until(answered, min(RECHECK_SECONDS, max(left, 0.01)))

    async def _until(self, event: asyncio.Event, seconds: float) -> None:
        waiter = asyncio.ensure_future(event.wait())
        sleeper = asyncio.ensure_future(self.e.clock.sleep(seconds))
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
        if self.e.host_id is None or self.e.safe_mode is not None:
            return
        now = self.e.clock.now()
        taken = await self.e.store.run(lambda s: s.take_requests(self.e.host_id or "", now))
        for request in taken:
            self.e.spawn(self._carry_out(request), f"request:{request.id}")

    async def _carry_out(self, request: ActionRequest) -> None:
        body = {**request.request, "origin": f"host:{request.by}"}
        if str(body.get("op")) not in ROUTED_OPS:
            reply: dict[str, Any] = {"error": N_(
                "op {op!r} is not carried out for another host").format(op=body.get("op"))}
        else:
            reply = await self.dispatch(body)
        await self.e.written(lambda s: s.answer_request(request.id, reply, self.e.clock.now()))

    async def _dispatch(self, request: dict[str, Any]) -> dict[str, Any]:
        from core.hosts.control import ControlServer

        return await ControlServer(self.e, self.e.paths).handle(request)
