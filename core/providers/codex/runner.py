"""Resuming, pausing and cancelling Codex goals — the runner role of the Codex provider.

Resume (called only through the core's resume entry point, which has already claimed the goal):

1. a thread another live Codex process is working on: when that is the shared app-server
   (``codex app-server daemon``, reachable through its control socket), go through it with
   ``codex app-server proxy`` — one writer, and its turns outlive Goalkeeper's connection; when
   that fails (no goal methods there, or the proxy cannot reach it), the fallback goes through
   the same app-server too — ``codex exec resume --remote unix://<control socket>``, on Codex
   0.171.0 and later — and below that version it is refused (a plain ``exec resume`` would be a
   second writer) and deferred; any other holder (the user's ``codex`` TUI, another
   app-server) is never touched: the resume is deferred (:class:`RunnerDeferred`) naming the
   process and what the user can do;
2. ``codex app-server``: resume the thread, check the goal, set it active, host the process
   (:mod:`.hosted`);
3. only if that Codex has no goal methods or its app-server cannot start: ``codex exec resume``
   in the session's directory (:mod:`.exec_run`).

Pause = ``thread/goal/set paused`` and interrupt the turn; cancel is the same in Codex (the user's
objective is never cleared) and ``cancelled`` in Goalkeeper. The policy pause (the reserve, a
budget) is graceful: ``paused`` without interrupting — the turn in progress ends, bounded by
``codex_turn_end_timeout_seconds`` — and an exec run is let finish its one turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import datetime
from pathlib import Path

from core.i18n import N_
from core.providers.base import RunnerDeferred, RunnerError, StartOutcome
from core.providers.codex.config import CodexNotFound
from core.providers.codex.exec_run import ExecRun, PollFile
from core.providers.codex.hosted import ORIGIN_USER, GoalMethodsMissing, HostedRun, RunContext
from core.providers.codex.liveness import (
    RECENT_WRITE_SECONDS,
    Holder,
    control_address,
    control_socket,
    find_holders,
    lock_file,
)
from core.providers.codex.rpc import AppServer, AppServerError, RpcError, finish
from core.providers.codex.version import EXEC_REMOTE_SINCE, Version, has_exec_remote, text_of

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
                     rollout: Path | None, version: Version | None = None) -> StartOutcome:
        """``version``: the installed Codex's (``codex --version``), None when unknown."""
        previous = self.runs.pop(goal_id, None)
        if previous is not None:
            await previous.stop()  # a run from an older claim: never two on one thread
        shared = await self.check_free(thread_id, rollout, shared_ok=True)
        try:
            executable = self.ctx.config.executable()
        except CodexNotFound as exc:
            raise RunnerError(str(exc)) from None
        workdir = Path(cwd) if cwd and Path(cwd).is_dir() else None
        if shared:
            try:
                return await self._through_shared(goal_id, fence, thread_id, executable, workdir)
            except (GoalMethodsMissing, AppServerError) as exc:
                return await self._exec_remote(goal_id, fence, thread_id, executable, workdir,
                                               rollout, version, exc)
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
        return await self._exec(goal_id, run, executable)

    async def _exec(self, goal_id: str, run: ExecRun, executable: str) -> StartOutcome:
        outcome = await run.start(executable)
        if run.alive:
            self.runs[goal_id] = run
        return outcome

    async def _through_shared(self, goal_id: str, fence: int, thread_id: str, executable: str,
                              workdir: Path | None) -> StartOutcome:
        """The shared app-server holds the thread: resume it there (never a second writer).
        Raises :class:`GoalMethodsMissing` or :class:`AppServerError` (nothing changed in Codex
        yet) for the fallback through the same app-server."""
        return await self._hosted(goal_id, fence, thread_id, executable, workdir, via_proxy=True)

    async def _exec_remote(self, goal_id: str, fence: int, thread_id: str, executable: str,
                           workdir: Path | None, rollout: Path | None, version: Version | None,
                           why: Exception) -> StartOutcome:
        """The exec fallback for a thread the shared app-server holds: ``codex exec resume
        --remote`` runs the turn in that app-server (0.171.0+); an older or unknown Codex has
        no way to do so without a second writer, so the resume waits until the thread is
        free."""
        if not has_exec_remote(version):
            raise RunnerDeferred(N_(
                "the shared Codex app-server holds this thread and Goalkeeper could not resume "
                "it there ({error}); the codex exec resume fallback reaches that app-server "
                "only from Codex {since} on (installed: {version}), and a second writer is "
                "never started. Goalkeeper tries again once the app-server has let the thread "
                "go").format(error=why, since=text_of(EXEC_REMOTE_SINCE),
                             version=text_of(version) if version else N_("unknown")),
                DEFER_SECONDS) from None
        log.info("the shared app-server holds %s and cannot host the resume there (%s): "
                 "codex exec resume --remote", goal_id, why)
        # the thread's directory is the daemon's business; exec only needs somewhere to start
        run = ExecRun(self.ctx, goal_id, fence, thread_id, workdir or self.ctx.config.home,
                      rollout, self._poll_file, remote=control_address(self.ctx.config.home))
        return await self._exec(goal_id, run, executable)

    async def _hosted(self, goal_id: str, fence: int, thread_id: str, executable: str,
                      workdir: Path | None, via_proxy: bool = False) -> StartOutcome:
        server = AppServer(executable, self.ctx.config.env, cwd=workdir, via_proxy=via_proxy)
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
            await finish(self._abandon(run))
            if isinstance(exc, AppServerError) and not run.activated:
                raise  # nothing was changed in Codex yet: the fallback may take over
            if isinstance(exc, RpcError) and exc.writer_elsewhere:  # it came after check_free
                raise RunnerDeferred(N_("another Codex process became the thread's writer "
                                        "meanwhile (Codex: {error}); Goalkeeper tries again "
                                        "once it has let the thread go").format(
                                            error=exc.message), DEFER_SECONDS) from None
            raise RunnerError(str(exc)) from None
        except BaseException:
            await finish(self._abandon(run))
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

    async def check_free(self, thread_id: str, rollout: Path | None,
                         shared_ok: bool = False) -> bool:
        """Raise :class:`RunnerDeferred` when another live Codex process holds the thread.

        With ``shared_ok``, a thread held only by the shared app-server whose control socket
        is there is not refused: returns True (go through it).
        """
        paths = [p for p in (rollout, lock_file(self.ctx.config.home, thread_id)) if p]
        holders = await asyncio.to_thread(find_holders, paths, self.pids)
        if holders:
            if shared_ok and all(h.shared_server for h in holders) and control_socket(
                    self.ctx.config.home).exists():
                return True
            raise RunnerDeferred(held_by(holders, thread_id), DEFER_SECONDS)
        if holders is None and rollout is not None:
            written = _written_ago(rollout, self.ctx.now())
            if written is not None and written < RECENT_WRITE_SECONDS:
                raise RunnerDeferred(f"the thread's session was written {written:.0f} s ago and "
                                     "open files cannot be inspected here", DEFER_SECONDS)
        return False

    # -- pause, cancel, stop -------------------------------------------------------------------

    async def pause(self, goal_id: str, thread_id: str, rollout: Path | None) -> None:
        run = self.runs.pop(goal_id, None)
        if run is not None:
            await run.pause()
            return
        try:
            shared = await self.check_free(thread_id, rollout, shared_ok=True)
        except RunnerDeferred as exc:
            log.info("not pausing %s in Codex: %s", goal_id, exc.reason)
            return
        await self._set_paused(thread_id, via_proxy=shared)

    async def pause_gracefully(self, goal_id: str, thread_id: str, rollout: Path | None
                               ) -> None:
        """The policy pause: a run Goalkeeper hosts ends its turn in progress first (it stays
        this goal's run meanwhile, so a resume or pause replaces it as usual); anything else is
        :meth:`pause`."""
        run = self.runs.get(goal_id)
        if run is None:
            await self.pause(goal_id, thread_id, rollout)
            return
        await run.pause_gracefully()
        if self.runs.get(goal_id) is run:
            del self.runs[goal_id]

    async def _set_paused(self, thread_id: str, via_proxy: bool = False) -> None:
        """Pause a goal Goalkeeper does not run (its Codex status said active) with a short
        session — through the shared app-server when that holds the thread."""
        try:
            server = AppServer(self.ctx.config.executable(), self.ctx.config.env,
                               via_proxy=via_proxy)
        except CodexNotFound as exc:
            log.warning("cannot pause the goal in Codex: %s", exc)
            return
        try:
            async with asyncio.timeout(self.ctx.config.app_server_timeout):
                await server.start()
                await server.request("thread/goal/set", {"threadId": thread_id,
                                                         "status": "paused",
                                                         "origin": ORIGIN_USER})
        except (TimeoutError, AppServerError, RpcError) as exc:
            log.warning("cannot pause the goal of thread %s in Codex: %s", thread_id, exc)
        finally:
            await finish(server.close(grace=0.5))

    async def stop_all(self) -> None:
        runs, self.runs = list(self.runs.values()), {}
        for run in runs:
            with contextlib.suppress(Exception):
                await run.stop()


def held_by(holders: list[Holder], thread_id: str) -> str:
    """Who holds the thread, and what the user can do (Codex allows one writer per thread)."""
    named = "; ".join(h.describe() for h in holders)
    if any(h.tui for h in holders):
        return N_("the thread is open in your Codex terminal session ({holders}). Codex allows "
                  "one writer per thread: in that session type /goal resume (a plain message "
                  "does not re-arm the goal), or quit it and Goalkeeper resumes the goal on its "
                  "next try").format(holders=named)
    return N_("another Codex process is working on this thread ({holders}); Goalkeeper tries "
              "again once it has let the thread go").format(holders=named)


def _written_ago(path: Path, now: datetime) -> float | None:
    try:
        return now.timestamp() - path.stat().st_mtime
    except OSError:
        return None
