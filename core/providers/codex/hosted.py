"""A Codex goal resumed through ``codex app-server`` and hosted by Goalkeeper while it runs.

The resume protocol, as the real ``codex-cli 0.169.0`` speaks it (``provider-formats.md`` B0):

1. ``thread/resume {threadId, excludeTurns: true}`` loads the thread in this server (without the
   whole history); Codex then *replays* the goal's stored status as a ``thread/goal/updated``
   (e.g. ``usageLimited`` with ``turnId: null``) — history, not news;
2. ``thread/goal/get {threadId}`` — only a goal that is still ``usageLimited`` or ``paused`` is
   set active with ``thread/goal/set {threadId, status: "active", origin: "automatic"}``
   (Goalkeeper is an automation acting for the user); ``complete`` means already done; ``active``
   means Codex continues by itself once the thread is loaded and idle;
3. confirmed by ``turn/started`` or a ``thread/goal/updated`` (active) that came after the answer
   to the set, within the confirm time.

Every ``thread/goal/updated`` that arrived before the answer to the last goal request, or that
carries an older ``updatedAt`` than that answer, is history and ignored (:class:`_Feed`).

While the goal runs, :class:`HostedRun` follows the server's notifications and reports through
the sink with its fence: ``usageLimited`` → ``goal_limited`` (with the limit's reset),
``complete`` → ``goal_finished``, ``paused``/``blocked``/``budgetLimited``/cleared →
``goal_paused``; ``account/rateLimits/updated`` is merged into the gauges. Codex changes the
goal's status *inside* a turn (the model still writes its last message after ``update_goal``),
so the report waits for the turn to end (``turn/completed`` or the thread going idle), bounded
by the turn-end timeout: closing the app-server earlier would abort that turn. Only the user's
pause and cancel interrupt a turn. A policy pause (:meth:`HostedRun.pause_gracefully`) sets the
goal ``paused`` and waits the same way for the turn in progress to end — a paused goal gets no
continuation turn in 0.169.0 — interrupting it only after the turn-end timeout. A request
Codex sends back (an approval) cannot be answered unattended: the run reports it, interrupts the
turn and lets go, so the user answers it in Codex.
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
    from_rate_limits_read,
)
from core.providers.codex.readings import limit_lifts_at, to_readings
from core.providers.codex.rollout import GOAL_STATUSES
from core.providers.codex.rpc import AppServer, AppServerError, Notification, RpcError, finish

log = logging.getLogger(__name__)

RESUMABLE = ("usageLimited", "paused")
#: ``thread/goal/set`` provenance (``ThreadGoalMutationOrigin``): Goalkeeper's own resumes and
#: undos are an automation acting for the user; a pause or cancel is the user's explicit request
ORIGIN_AUTOMATIC = "automatic"
ORIGIN_USER = "user"
#: after the thread went idle, how long turn/completed may take before the run lets go anyway
IDLE_GRACE_SECONDS = 2.0
#: what :meth:`HostedRun.pause_gracefully` puts into the feed for the follow task
WIND_DOWN = "$wind-down"
RELIMITED_NOTE = N_("usage limit reached again in the first turn after the resume: the quota "
                    "had not really been refreshed")


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


class _Feed:
    """The server's notifications, each told apart as history or news.

    ``mark`` is :attr:`AppServer.arrived` at the answer to the latest goal request and ``since``
    that answer's ``updatedAt``: a goal update among the first ``mark`` notifications, or older
    than ``since``, describes the past.
    """

    def __init__(self, server: AppServer) -> None:
        self.server = server
        self.taken = 0
        self.mark = 0
        self.since: int | None = None

    def answered(self, mark: int, goal: Any) -> None:
        self.mark = mark
        updated = goal.get("updatedAt") if isinstance(goal, dict) else None
        if isinstance(updated, int):
            self.since = updated

    async def next(self, timeout: float | None = None) -> Notification | None:
        """The next notification that is news (None when ``timeout`` passed first)."""
        while True:
            try:
                async with asyncio.timeout(timeout):
                    method, params = await self.server.notifications.get()
            except TimeoutError:
                return None
            self.taken += 1
            if not self._history(method, params):
                return method, params

    def _history(self, method: str, params: dict[str, Any]) -> bool:
        if method != "thread/goal/updated":
            return False  # turns and rate limits are always current
        if self.taken <= self.mark:
            return True
        goal = params.get("goal")
        updated = goal.get("updatedAt") if isinstance(goal, dict) else None
        return isinstance(updated, int) and self.since is not None and updated < self.since


class HostedRun:
    """One hosted goal. Owns its :class:`AppServer` and the task following it.

    Attributes:
        turn_id: the turn Codex is running now (None between turns).
        turns: how many turns started since the resume.
        status: the goal's status as Codex last said it.
    """

    def __init__(self, ctx: RunContext, goal_id: str, fence: int, thread_id: str,
                 server: AppServer) -> None:
        self.ctx = ctx
        self.goal_id = goal_id
        self.fence = fence
        self.thread_id = thread_id
        self.server = server
        self.turn_id: str | None = None
        self.turns = 0
        self.status: str | None = None
        self.activated = False  # thread/goal/set active was sent
        self._feed = _Feed(server)
        self._backlog: list[Notification] = []
        self._task: asyncio.Task[None] | None = None
        self._letting_go = False
        self._ending: Callable[[], Any] | None = None  # the report once the turn has ended
        self._ends_by = 0.0  # the event loop's time by which that turn must have ended
        self._idle = False  # the thread went idle; turn/completed is due
        self._graceful = False  # a policy pause: the turn in progress may end

    @property
    def pids(self) -> set[int]:
        return {self.server.pid} if self.server.pid else set()

    # -- resuming ------------------------------------------------------------------------------

    async def resume(self) -> StartOutcome:
        """Run the resume protocol; the server is left running only when this returns STARTED."""
        timeout = self.ctx.config.confirm_timeout
        await self.server.request("thread/resume", {"threadId": self.thread_id,
                                                    "excludeTurns": True}, timeout)
        goal = await self._goal_request("thread/goal/get", {"threadId": self.thread_id}, timeout)
        if not isinstance(goal, dict):
            raise RunnerError(N_("Codex has no goal on this thread any more (it was cleared)"))
        status = GOAL_STATUSES.get(str(goal.get("status")), str(goal.get("status")))
        self.status = status
        if status == "complete":
            return StartOutcome.ALREADY_DONE
        if status in RESUMABLE:
            self.activated = True
            now = await self._goal_request("thread/goal/set", {
                "threadId": self.thread_id, "status": "active", "origin": ORIGIN_AUTOMATIC,
            }, timeout)
            if isinstance(now, dict) and now.get("status") not in (None, "active"):
                raise RunnerError(N_("Codex kept the goal {status} when asked to make it "
                                     "active").format(status=now.get("status")))
        elif status != "active":
            raise RunnerError(N_("the Codex goal is {status}: Goalkeeper resumes only goals that "
                                 "are usage-limited or paused; open it in Codex").format(
                                     status=status))
        elif self.server.via_proxy:
            return StartOutcome.ALREADY_RUNNING  # the shared app-server is running it
        await self._confirm(timeout, wait_for_turn=status == "active")
        return StartOutcome.STARTED

    async def _goal_request(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        try:
            answer, mark = await self.server.request_marked(method, params, timeout)
        except RpcError as exc:
            if exc.method_missing:
                raise GoalMethodsMissing(str(exc)) from None
            raise
        goal = answer.get("goal") if isinstance(answer, dict) else None
        self._feed.answered(mark, goal)
        return goal

    async def undo(self) -> None:
        """After a failed resume: put the goal back as it was, so Codex and Goalkeeper agree."""
        if self.activated and self.status in RESUMABLE and self.server.running:
            with contextlib.suppress(AppServerError, RpcError):
                await self.server.request("thread/goal/set", {
                    "threadId": self.thread_id, "status": self.status,
                    "origin": ORIGIN_AUTOMATIC}, 5.0)

    async def _confirm(self, timeout: float, wait_for_turn: bool) -> None:
        try:
            async with asyncio.timeout(timeout):
                while True:
                    item = await self._feed.next()
                    assert item is not None
                    method, params = item
                    self._backlog.append(item)
                    if self._confirms(method, params, wait_for_turn):
                        return
                    if method == "$exit":
                        raise AppServerError(self.server.stderr_tail or N_("the app-server exited"))
        except TimeoutError:
            what = (N_("Codex did not start a turn within {seconds} s") if wait_for_turn
                    else N_("Codex did not confirm the goal is active within {seconds} s"))
            raise RunnerError(what.format(seconds=f"{timeout:g}")) from None

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
                item = await self._feed.next(self._wait())
                if item is None:  # the turn did not end in time: report, and let it go
                    await self._turn_overdue()
                    return
                if await self._handle(*item):
                    return
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("following Codex goal %s failed", self.goal_id)
            self._report_paused(PauseReason.ERROR, N_("Goalkeeper lost track of the Codex goal"))
        finally:
            await finish(self._release())

    async def _turn_overdue(self) -> None:
        if not self._idle:
            log.warning("Codex goal %s: the turn did not end within %g s after the %s; %s",
                        self.goal_id, self.ctx.config.turn_end_timeout,
                        "policy pause" if self._graceful else "goal changed",
                        "interrupting it" if self._graceful else "letting go")
        if self._graceful:
            await self._interrupt()  # as a pause does: the turn had its time
        await self._end()

    async def _handle(self, method: str, params: dict[str, Any]) -> bool:
        """Act on one notification; True when the run is over."""
        if method == WIND_DOWN:
            return self._wind_down()
        if method == "account/rateLimits/updated":
            self._rate_update(params.get("rateLimits"))
            return False
        if method == "$exit":
            return await self._exited(params)
        if method == "$asked":
            await self._asked(str(params.get("method")))
            return True
        if params.get("threadId", self.thread_id) != self.thread_id:
            return False
        if method in ("turn/started", "turn/completed", "thread/status/changed"):
            return await self._turn_event(method, params)
        if method == "thread/goal/cleared":
            return await self._ends(lambda: self._report_paused(
                PauseReason.EXTERNAL, N_("the goal was cleared in Codex")))
        if method == "thread/goal/updated" and isinstance(params.get("goal"), dict):
            return await self._goal_updated(params["goal"])
        return False

    async def _turn_event(self, method: str, params: dict[str, Any]) -> bool:
        if method == "turn/started":
            turn = params.get("turn")
            self.turn_id = turn.get("id") if isinstance(turn, dict) else self.turn_id
            self.turns += 1
            self._idle = False  # 0.169.0 says idle on loading the thread, before any turn
        elif method == "turn/completed":
            self.turn_id, self._idle = None, False
            if self._ending is not None:
                await self._end()
                return True
        elif _idle(params.get("status")):
            # 0.169.0 says idle just before turn/completed: wait briefly for that, so the turn
            # has written its end before the server is let go
            self.turn_id, self._idle = None, True
        return False

    async def _exited(self, params: dict[str, Any]) -> bool:
        if self._ending is not None:
            await self._end()
        elif not self._letting_go:
            self._report_paused(PauseReason.ERROR, N_("codex app-server exited (code {code}): "
                                                      "{stderr}").format(
                code=params.get("code"), stderr=self.server.stderr_tail or "-"))
        return True

    async def _goal_updated(self, goal: dict[str, Any]) -> bool:
        status = GOAL_STATUSES.get(str(goal.get("status")))
        if status is None or self._letting_go:
            return False  # while letting go, pause()/stop() end the run
        self.status = status
        if status == "active":
            tokens = goal.get("tokensUsed")
            if isinstance(tokens, int):
                used = N_("{tokens} tokens used").format(tokens=f"{tokens:,}")
                self.ctx.sink().goal_progress(self.goal_id, self.fence, used,
                                            {"tokens_used": tokens})
            return False
        if status == "usageLimited":
            return await self._ends(self._limited)
        if status == "complete":
            return await self._ends(lambda: self.ctx.sink().goal_finished(
                self.goal_id, self.fence, N_("the goal is complete in Codex")))
        _, reason = state_for(status)
        why = _why(status, goal)
        return await self._ends(lambda: self._report_paused(reason or PauseReason.EXTERNAL, why))

    def _wait(self) -> float | None:
        """How long to wait for the next notification: for ever while the goal runs; once Codex
        ended it, until the turn ends (briefly, once the thread went idle)."""
        if self._ending is None:
            return None
        left = max(0.0, self._ends_by - asyncio.get_running_loop().time())
        return min(IDLE_GRACE_SECONDS, left) if self._idle else left

    def _end_after_turn(self, report: Callable[[], Any]) -> None:
        """``report`` once the turn in progress has ended — within ``turn_end_timeout`` of the
        first such wish, however much the turn still streams meanwhile."""
        if self._ending is None:
            self._ends_by = asyncio.get_running_loop().time() + self.ctx.config.turn_end_timeout
        self._ending = report

    async def _ends(self, report: Callable[[], Any]) -> bool:
        """Codex ended the goal: report once the turn in progress has ended (now, if none)."""
        self._end_after_turn(report)
        if self.turn_id is None:
            await self._end()
            return True
        return False

    async def _end(self) -> None:
        report, self._ending = self._ending, None
        if report is not None:
            result = report()
            if asyncio.iscoroutine(result):
                await result

    async def _limited(self) -> None:
        with contextlib.suppress(AppServerError, RpcError, LimitShapeError, TimeoutError):
            result = await self.server.request("account/rateLimits/read", None, 5.0)
            self.ctx.rate_update(from_rate_limits_read(result, self.ctx.now()), False)
        snapshot = self.ctx.snapshot()
        readings = tuple(to_readings(snapshot, self.ctx.now(), self.ctx.config.stale_after)
                         ) if snapshot else ()
        why = snapshot.no_timed_reset if snapshot else None
        detail = why or (N_("usage limit reached in Codex") if self.turns > 1 else RELIMITED_NOTE)
        self.ctx.sink().goal_limited(self.goal_id, self.fence, LimitHit(
            windows=GOAL_WINDOWS, resets_at=limit_lifts_at(snapshot),
            exactness=Exactness.EXACT, detail=detail,
            no_timed_reset=why is not None, readings=readings,
        ))

    def _rate_update(self, limits: Any) -> None:
        if isinstance(limits, dict) and limits.get("limitId") in (None, "codex"):
            with contextlib.suppress(LimitShapeError):
                self.ctx.rate_update(from_app_server(limits, self.ctx.now()), True)

    def on_server_request(self, method: str, params: dict[str, Any]) -> None:
        """Codex asked something only the user can answer (see the module docstring)."""
        self.server.push(("$asked", {"method": method}))

    async def _asked(self, method: str) -> None:
        self._report_paused(PauseReason.EXTERNAL,
                            N_("Codex is waiting for an answer ({method}); open the thread in "
                               "Codex to answer it there").format(method=method))
        self._letting_go = True
        await self._interrupt()  # the goal stays active in Codex: it asks again when opened

    def _report_paused(self, reason: PauseReason, detail: str) -> None:
        self.ctx.sink().goal_paused(self.goal_id, self.fence, reason, detail)

    # -- stopping ------------------------------------------------------------------------------

    async def pause(self) -> None:
        """Pause the goal in Codex (never clearing the objective), interrupt the turn, let go."""
        self._letting_go = True
        with contextlib.suppress(AppServerError, RpcError):
            await self.server.request("thread/goal/set", {
                "threadId": self.thread_id, "status": "paused", "origin": ORIGIN_USER}, 5.0)
        await self._interrupt()
        await self.stop()

    async def pause_gracefully(self) -> None:
        """The policy pause (the reserve, a budget): pause the goal in Codex — which then
        starts no further turn — let the turn in progress end, then let go. A turn still
        running after the turn-end timeout is interrupted, as :meth:`pause` does; with no turn
        running this is :meth:`pause`."""
        if self._task is None or self._task.done():
            await self.pause()
            return
        self._letting_go = True
        with contextlib.suppress(AppServerError, RpcError):
            await self.server.request("thread/goal/set", {
                "threadId": self.thread_id, "status": "paused", "origin": ORIGIN_AUTOMATIC},
                5.0)
        # through the follow task, after every notification Codex sent before the answer
        # (a turn/started among them counts)
        self.server.push((WIND_DOWN, {}))
        await asyncio.wait({self._task})

    def _wind_down(self) -> bool:
        """Let go once the turn in progress has ended (now, when none runs); True: now."""
        self._graceful = True
        self._end_after_turn(_nothing)  # paused in Goalkeeper already: nothing left to report
        return self.turn_id is None and not self._idle

    async def stop(self) -> None:
        """Let go without changing the goal in Codex (the host is stopping). A turn in a server
        of Goalkeeper's own is interrupted (closing the server would abort it anyway); one in
        the shared app-server goes on — it is the user's, and outlives this connection."""
        self._letting_go = True
        if self._task is not None and not self._task.done():
            if not self.server.via_proxy:
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


def _nothing() -> None:
    return None


def _idle(status: Any) -> bool:
    return isinstance(status, dict) and status.get("type") == "idle"


def _why(status: str, goal: dict[str, Any]) -> str:
    if status == "paused":
        return N_("paused in Codex")
    if status == "blocked":
        return N_("blocked in Codex: it needs your attention")
    used, budget = goal.get("tokensUsed"), goal.get("tokenBudget")
    if isinstance(used, int) and isinstance(budget, int):
        return N_("token budget used up in Codex ({used} of {budget} tokens)").format(
            used=f"{used:,}", budget=f"{budget:,}")
    return N_("token budget used up in Codex")
