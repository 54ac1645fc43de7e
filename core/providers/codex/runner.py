"""Resuming, pausing and cancelling Codex goals — the runner role of the Codex provider.

Resume (called only through the core's resume entry point, which has already claimed the goal):

1. refuse to touch a thread another live Codex process is working on (:class:`RunnerDeferred`,
   with the process named);
2. ``codex app-server``: resume the thread, check the goal, set it active, host the process
   (:mod:`.hosted`);
3. only if that Codex has no goal methods or its app-server cannot start: ``codex exec resume``
   in the session's directory (:mod:`.exec_run`).

Pause = ``thread/goal/set paused`` and interrupt the turn; cancel is the same in Codex (the user's
objective is never cleared) and ``cancelled`` in Goalkeeper.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import datetime
from pathlib import Path

from core.providers.base import RunnerDeferred, RunnerError, StartOutcome
from core.providers.codex.config import CodexNotFound
from core.providers.codex.exec_run import ExecRun, PollFile
from core.providers.codex.hosted import GoalMethodsMissing, HostedRun, RunContext
from core.providers.codex.liveness import RECENT_WRITE_SECONDS, find_holders, lock_file
from core.providers.codex.rpc import AppServer, AppServerError, RpcError

log = logging.getLogger(__name__)

Run = HostedRun | ExecRun
DEFER_SECONDS = 120.0


class CodexRunner:
    """Owns every run (hosted app-server or exec fallback), by goal id."""

    def __init__(self, ctx: RunContext, poll_file: PollFile) -> None:
        self.ctx = ctx
        self._poll_file = poll_file
        self.runs: dict[str, Run] = {}

    @property
    def pids(self) -> set[int]:
        return {pid for run in self.runs.values() for pid in run.pids}

    def finished(self, goal_id: str) -> None:
        self.runs.pop(goal_id, None)

    # -- resume --------------------------------------------------------------------------------

    async def resume(self, goal_id: str, fence: int, thread_id: str, cwd: str | None,
                     rollout: Path | None) -> StartOutcome:
        previous = self.runs.pop(goal_id, None)
        if previous is not None:
            await previous.stop()  # a run from an older claim: never two on one thread
        await self.check_free(thread_id, rollout)
        try:
            executable = self.ctx.config.executable()
        except CodexNotFound as exc:
            raise RunnerError(str(exc)) from None
        workdir = Path(cwd) if cwd and Path(cwd).is_dir() else None
        try:
            return await self._hosted(goal_id, fence, thread_id, executable, workdir)
        except GoalMethodsMissing as exc:
            log.info("Codex has no goal methods (%s): resuming %s with codex exec resume",
                     exc, goal_id)
        except AppServerError as exc:
            log.warning("codex app-server unavailable (%s): resuming %s with codex exec resume",
                        exc, goal_id)
        if workdir is None:
            raise RunnerError(f"cannot run codex exec resume: the session's directory "
                              f"{cwd or '(unknown)'} does not exist")
        run = ExecRun(self.ctx, goal_id, fence, thread_id, workdir, rollout, self._poll_file)
        outcome = await run.start(executable)
        if run.alive:
            self.runs[goal_id] = run
        return outcome

    async def _hosted(self, goal_id: str, fence: int, thread_id: str, executable: str,
                      workdir: Path | None) -> StartOutcome:
        server = AppServer(executable, self.ctx.config.env, cwd=workdir)
        run = HostedRun(self.ctx, goal_id, fence, thread_id, server)
        server.on_request = run.on_server_request
        try:
            timeout = self.ctx.config.app_server_timeout
            try:
                async with asyncio.timeout(timeout):
                    await server.start()
            except TimeoutError:
                raise AppServerError(f"codex app-server did not initialize within {timeout:g} s"
                                     ) from None
            outcome = await run.resume()
        except (RpcError, AppServerError, RunnerError) as exc:
            await asyncio.shield(self._abandon(run))
            if isinstance(exc, AppServerError) and not run.activated:
                raise  # nothing was changed in Codex yet: the fallback may take over
            raise RunnerError(str(exc)) from None
        except BaseException:
            await asyncio.shield(self._abandon(run))
            raise
        if outcome is not StartOutcome.STARTED:
            await server.close()
            return outcome
        self.runs[goal_id] = run
        run.follow()
        return outcome

    @staticmethod
    async def _abandon(run: HostedRun) -> None:
        await run.undo()
        await run.server.close()

    async def check_free(self, thread_id: str, rollout: Path | None) -> None:
        """Raise :class:`RunnerDeferred` when another live Codex process holds the thread."""
        paths = [p for p in (rollout, lock_file(self.ctx.config.home, thread_id)) if p]
        holders = await asyncio.to_thread(find_holders, paths, self.pids)
        if holders:
            raise RunnerDeferred("another Codex process is working on this thread: "
                                 + "; ".join(h.describe() for h in holders), DEFER_SECONDS)
        if holders is None and rollout is not None:
            written = _written_ago(rollout, self.ctx.now())
            if written is not None and written < RECENT_WRITE_SECONDS:
                raise RunnerDeferred(f"the thread's session was written {written:.0f} s ago and "
                                     "open files cannot be inspected here", DEFER_SECONDS)

    # -- pause, cancel, stop -------------------------------------------------------------------

    async def pause(self, goal_id: str, thread_id: str, rollout: Path | None) -> None:
        run = self.runs.pop(goal_id, None)
        if run is not None:
            await run.pause()
            return
        try:
            await self.check_free(thread_id, rollout)
        except RunnerDeferred as exc:
            log.info("not pausing %s in Codex: %s", goal_id, exc.reason)
            return
        await self._set_paused(thread_id)

    async def _set_paused(self, thread_id: str) -> None:
        """Pause a goal nobody runs (its Codex status said active) with a short session."""
        try:
            server = AppServer(self.ctx.config.executable(), self.ctx.config.env)
        except CodexNotFound as exc:
            log.warning("cannot pause the goal in Codex: %s", exc)
            return
        try:
            async with asyncio.timeout(self.ctx.config.app_server_timeout):
                await server.start()
                await server.request("thread/goal/set", {"threadId": thread_id,
                                                         "status": "paused"})
        except (TimeoutError, AppServerError, RpcError) as exc:
            log.warning("cannot pause the goal of thread %s in Codex: %s", thread_id, exc)
        finally:
            await asyncio.shield(server.close(grace=0.5))

    async def stop_all(self) -> None:
        runs, self.runs = list(self.runs.values()), {}
        for run in runs:
            with contextlib.suppress(Exception):
                await run.stop()


def _written_ago(path: Path, now: datetime) -> float | None:
    try:
        return now.timestamp() - path.stat().st_mtime
    except OSError:
        return None
