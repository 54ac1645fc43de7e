"""Preparing a queued Codex goal (``goalkeeper queue codex``): the goal is set now, ``paused``,
and started at the reset by the ordinary resume (:mod:`.hosted`).

Through ``codex app-server`` (the real ``codex-cli 0.169.0``, checked offline):

1. a new thread: ``thread/start {cwd}``. A thread with no goal and no turn is never written
   down (``thread/resume`` later says "no rollout found"), so the goal is set at once:
2. ``thread/goal/set {threadId, objective, status: "paused", origin: "user"}`` — Codex writes
   the rollout and the goals database, and runs no turn (no request reaches the API).

At the reset the resume protocol finds the goal ``paused``, sets it ``active``, and Codex
starts the first turn. Until then Codex shows the goal paused (the user may start it there);
Goalkeeper keeps it waiting for its window (:func:`core.goals.marks.sticks_against`).
On a given thread, one that already has a goal that is not complete is refused, and so is a
thread another live Codex process holds.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from core.i18n import N_
from core.providers.base import PreparedStart, QueuedWork, RunnerError
from core.providers.codex.config import CodexConfig, CodexNotFound
from core.providers.codex.goals import goal_id
from core.providers.codex.hosted import ORIGIN_USER
from core.providers.codex.rpc import AppServer, AppServerError, RpcError, finish


async def prepare(config: CodexConfig, work: QueuedWork) -> PreparedStart:
    """Set the queued goal in Codex, paused, on a new or the given thread; raise
    :class:`RunnerError` saying why when Codex cannot."""
    try:
        executable = config.executable()
    except CodexNotFound as exc:
        raise RunnerError(str(exc)) from None
    server = AppServer(executable, config.env, cwd=Path(work.cwd))
    try:
        async with asyncio.timeout(config.app_server_timeout):
            await server.start()
        thread = await (_given(server, work.thread, config.confirm_timeout) if work.thread
                        else _new(server, work.cwd, config.confirm_timeout))
        await server.request("thread/goal/set", {
            "threadId": thread, "objective": work.text, "status": "paused",
            "origin": ORIGIN_USER}, config.confirm_timeout)
    except TimeoutError:
        raise RunnerError(N_("codex app-server did not answer within {seconds} s").format(
            seconds=f"{config.app_server_timeout:g}")) from None
    except (AppServerError, RpcError) as exc:
        raise RunnerError(str(exc)) from None
    finally:
        await finish(server.close(grace=0.5))
    return PreparedStart(goal_id(thread), work.text.strip().splitlines()[0],
                         {"cwd": work.cwd, "queued_objective": work.text})


async def _new(server: AppServer, cwd: str, timeout: float) -> str:
    answer: Any = await server.request("thread/start", {"cwd": cwd}, timeout)
    thread = answer.get("thread") if isinstance(answer, dict) else None
    if not isinstance(thread, dict) or not isinstance(thread.get("id"), str):
        raise RunnerError(N_("codex app-server started no thread"))
    return str(thread["id"])


async def _given(server: AppServer, thread: str, timeout: float) -> str:
    await server.request("thread/resume", {"threadId": thread, "excludeTurns": True}, timeout)
    answer: Any = await server.request("thread/goal/get", {"threadId": thread}, timeout)
    goal = answer.get("goal") if isinstance(answer, dict) else None
    if isinstance(goal, dict) and goal.get("status") != "complete":
        raise RunnerError(N_("thread {thread} already has a goal ({status}): resume it "
                             "instead").format(thread=thread, status=goal.get("status")))
    return thread
