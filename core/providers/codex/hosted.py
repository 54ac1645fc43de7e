"""A Codex goal resumed through ``codex app-server`` and hosted by Goalkeeper while it runs.

The resume protocol (``codex-rs/app-server`` v2):

1. ``thread/resume {threadId}`` loads the thread in this server;
2. ``thread/goal/get {threadId}`` — only a goal that is still ``usageLimited`` or ``paused`` is
   set active with ``thread/goal/set {threadId, status: "active"}``; ``complete`` means already
   done; ``active`` means Codex continues by itself once the thread is loaded and idle;
3. confirmed by ``thread/goal/updated`` (active) or ``turn/started`` within the confirm time.

While the goal runs, :class:`HostedRun` follows the server's notifications and reports through
the sink with its fence: a new ``usageLimited`` → ``goal_limited`` (with the limit's reset),
``complete`` → ``goal_finished``, ``paused``/``blocked``/``budgetLimited``/cleared →
``goal_paused``; ``account/rateLimits/updated`` is merged into the gauges. A request Codex sends
back (an approval) cannot be answered unattended: the run reports it, interrupts the turn and
lets go, so the user answers it in Codex.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.i18n import N_
from core.models import Exactness, PauseReason
from core.providers.base import LimitHit, ProviderSink, RunnerError, StartOutcome
from core.providers.codex.config import CodexConfig
from core.providers.codex.goals import state_for
from core.providers.codex.limits import (
    GOAL_WINDOWS,
    LimitShapeError,
    RateSnapshot,
    from_app_server,
    pick_codex_bucket,
)
from core.providers.codex.readings import limit_lifts_at, to_readings
from core.providers.codex.rollout import GOAL_STATUSES
from core.providers.codex.rpc import AppServer, AppServerError, Notification, RpcError

log = logging.getLogger(__name__)

RESUMABLE = ("usageLimited", "paused")


class GoalMethodsMissing(Exception):
    """This Codex's app-server has no thread/goal/* methods: use the exec fallback."""


@dataclass
class RunContext:
    """What a run needs from its provider (callbacks keep the run free of provider internals)."""

    config: CodexConfig
    sink: Callable[[], ProviderSink]  # looked up when reporting (the engine attaches late)
    now: Callable[[], datetime]
    snapshot: Callable[[], RateSnapshot | None]
    rate_update: Callable[[RateSnapshot, bool], None]  # (snapshot, sparse?) → gauges
    finished: Callable[[str], None]  # the run for this goal id is over


class HostedRun:
    """One hosted goal. Owns its :class:`AppServer` and the task following it."""

    def __init__(self, ctx: RunContext, goal_id: str, fence: int, thread_id: str,
                 server: AppServer) -> None:
        self.ctx = ctx
        self.goal_id = goal_id
        self.fence = fence
        self.thread_id = thread_id
        self.server = server
        self.turn_id: str | None = None
        self.status: str | None = None
        self.activated = False  # thread/goal/set active was sent
        self._backlog: list[Notification] = []
        self._task: asyncio.Task[None] | None = None
        self._letting_go = False

    @property
    def pids(self) -> set[int]:
        return {self.server.pid} if self.server.pid else set()

    # -- resuming ------------------------------------------------------------------------------

    async def resume(self) -> StartOutcome:
        """Run the resume protocol; the server is left running only when this returns STARTED."""
        timeout = self.ctx.config.confirm_timeout
        await self.server.request("thread/resume", {"threadId": self.thread_id}, timeout)
        try:
            answer = await self.server.request("thread/goal/get", {"threadId": self.thread_id},
                                               timeout)
        except RpcError as exc:
            if exc.method_missing:
                raise GoalMethodsMissing(str(exc)) from None
            raise
        goal = answer.get("goal") if isinstance(answer, dict) else None
        if not isinstance(goal, dict):
            raise RunnerError("Codex has no goal on this thread any more (it was cleared)")
        status = GOAL_STATUSES.get(str(goal.get("status")), str(goal.get("status")))
        self.status = status
        if status == "complete":
            return StartOutcome.ALREADY_DONE
        if status in RESUMABLE:
            self.activated = True
            answer = await self.server.request(
                "thread/goal/set", {"threadId": self.thread_id, "status": "active"}, timeout)
            now = answer.get("goal") if isinstance(answer, dict) else None
            if isinstance(now, dict) and now.get("status") not in (None, "active"):
                raise RunnerError(f"Codex kept the goal {now.get('status')} when asked to "
                                  "make it active")
        elif status != "active":
            raise RunnerError(f"the Codex goal is {status}: Goalkeeper resumes only goals that "
                              "are usage-limited or paused; open it in Codex")
        await self._confirm(timeout, wait_for_turn=status == "active")
        return StartOutcome.STARTED

    async def undo(self) -> None:
        """After a failed resume: put the goal back as it was, so Codex and Goalkeeper agree."""
        if self.activated and self.status in RESUMABLE and self.server.running:
            with contextlib.suppress(AppServerError, RpcError):
                await self.server.request("thread/goal/set", {"threadId": self.thread_id,
                                                              "status": self.status}, 5.0)

    async def _confirm(self, timeout: float, wait_for_turn: bool) -> None:
        try:
            async with asyncio.timeout(timeout):
                while True:
                    method, params = await self.server.notifications.get()
                    self._backlog.append((method, params))
                    if self._confirms(method, params, wait_for_turn):
                        return
                    if method == "$exit":
                        raise AppServerError(self.server.stderr_tail or "the app-server exited")
        except TimeoutError:
            what = "start a turn" if wait_for_turn else "confirm the goal is active"
            raise RunnerError(f"Codex did not {what} within {timeout:g} s") from None

    def _confirms(self, method: str, params: dict[str, Any], wait_for_turn: bool) -> bool:
        if params.get("threadId", self.thread_id) != self.thread_id:
            return False
        if method == "turn/started":
            return True
        goal = params.get("goal")
        return (method == "thread/goal/updated" and not wait_for_turn and isinstance(goal, dict)
                and goal.get("status") == "active")

    # -- hosting -------------------------------------------------------------------------------

    def follow(self) -> None:
        self._task = asyncio.ensure_future(self._follow())
        self._task.set_name(f"codex:run:{self.thread_id}")

    async def _follow(self) -> None:
        try:
            for method, params in self._backlog:
                if await self._handle(method, params):
                    return
            self._backlog.clear()
            while True:
                method, params = await self.server.notifications.get()
                if await self._handle(method, params):
                    return
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("following Codex goal %s failed", self.goal_id)
            self._report_paused(PauseReason.ERROR, "Goalkeeper lost track of the Codex goal")
        finally:
            await asyncio.shield(self._release())

    async def _handle(self, method: str, params: dict[str, Any]) -> bool:
        """Act on one notification; True when the run is over."""
        if method == "account/rateLimits/updated":
            self._rate_update(params.get("rateLimits"))
            return False
        if method == "$exit":
            if not self._letting_go:
                self._report_paused(PauseReason.ERROR, f"codex app-server exited (code "
                                    f"{params.get('code')}): {self.server.stderr_tail or '-'}")
            return True
        if method == "$asked":
            await self._asked(str(params.get("method")))
            return True
        if params.get("threadId", self.thread_id) != self.thread_id:
            return False
        if method == "turn/started":
            turn = params.get("turn")
            self.turn_id = turn.get("id") if isinstance(turn, dict) else self.turn_id
        elif method == "turn/completed":
            self.turn_id = None
        elif method == "thread/goal/cleared":
            self._report_paused(PauseReason.EXTERNAL, "the goal was cleared in Codex")
            return True
        elif method == "thread/goal/updated" and isinstance(params.get("goal"), dict):
            return await self._goal_updated(params["goal"])
        return False

    async def _goal_updated(self, goal: dict[str, Any]) -> bool:
        status = GOAL_STATUSES.get(str(goal.get("status")))
        if status is None or self._letting_go:
            return False  # while letting go, pause()/stop() end the run
        self.status = status
        if status == "active":
            tokens = goal.get("tokensUsed")
            if isinstance(tokens, int):
                self.ctx.sink().goal_progress(self.goal_id, self.fence, f"{tokens:,} tokens used",
                                            {"tokens_used": tokens})
            return False
        if status == "usageLimited":
            await self._limited()
        elif status == "complete":
            self.ctx.sink().goal_finished(self.goal_id, self.fence, "the goal is complete in Codex")
        else:
            _, reason = state_for(status)
            self._report_paused(reason or PauseReason.EXTERNAL, _why(status, goal))
        return True

    async def _limited(self) -> None:
        with contextlib.suppress(AppServerError, RpcError, LimitShapeError, TimeoutError):
            result = await self.server.request("account/rateLimits/read", None, 5.0)
            self.ctx.rate_update(from_app_server(pick_codex_bucket(result), self.ctx.now()),
                                 False)
        snapshot = self.ctx.snapshot()
        readings = tuple(to_readings(snapshot, self.ctx.now(), self.ctx.config.stale_after)
                         ) if snapshot else ()
        why = snapshot.no_timed_reset if snapshot else None
        self.ctx.sink().goal_limited(self.goal_id, self.fence, LimitHit(
            windows=GOAL_WINDOWS, resets_at=limit_lifts_at(snapshot),
            exactness=Exactness.EXACT, detail=why or N_("usage limit reached in Codex"),
            no_timed_reset=why is not None, readings=readings,
        ))

    def _rate_update(self, limits: Any) -> None:
        if isinstance(limits, dict) and limits.get("limitId") in (None, "codex"):
            with contextlib.suppress(LimitShapeError):
                self.ctx.rate_update(from_app_server(limits, self.ctx.now()), True)

    def on_server_request(self, method: str, params: dict[str, Any]) -> None:
        """Codex asked something only the user can answer (see the module docstring)."""
        self.server.notifications.put_nowait(("$asked", {"method": method}))

    async def _asked(self, method: str) -> None:
        self._report_paused(PauseReason.EXTERNAL,
                            f"Codex is waiting for an answer ({method}); open the thread in "
                            "Codex to answer it there")
        self._letting_go = True
        await self._interrupt()  # the goal stays active in Codex: it asks again when opened

    def _report_paused(self, reason: PauseReason, detail: str) -> None:
        self.ctx.sink().goal_paused(self.goal_id, self.fence, reason, detail)

    # -- stopping ------------------------------------------------------------------------------

    async def pause(self) -> None:
        """Pause the goal in Codex (never clearing the objective), interrupt the turn, let go."""
        self._letting_go = True
        with contextlib.suppress(AppServerError, RpcError):
            await self.server.request("thread/goal/set",
                                      {"threadId": self.thread_id, "status": "paused"}, 5.0)
        await self._interrupt()
        await self.stop()

    async def stop(self) -> None:
        """Let go without changing the goal in Codex (the host is stopping)."""
        self._letting_go = True
        if self._task is not None and not self._task.done():
            await self._interrupt()
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._release()

    async def _interrupt(self) -> None:
        if self.turn_id and self.server.running:
            with contextlib.suppress(AppServerError, RpcError):
                await self.server.request("turn/interrupt",
                                          {"threadId": self.thread_id, "turnId": self.turn_id},
                                          5.0)

    async def _release(self) -> None:
        await self.server.close()
        self.ctx.finished(self.goal_id)


def _why(status: str, goal: dict[str, Any]) -> str:
    if status == "paused":
        return "paused in Codex"
    if status == "blocked":
        return N_("blocked in Codex: it needs your attention")
    used, budget = goal.get("tokensUsed"), goal.get("tokenBudget")
    if isinstance(used, int) and isinstance(budget, int):
        return f"token budget used up in Codex ({used:,} of {budget:,} tokens)"
    return "token budget used up in Codex"

