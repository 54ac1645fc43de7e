"""The fallback runner: ``codex exec resume <SESSION_ID> "<continuation text>"``.

Used only to *resume* a goal — when the installed Codex's app-server lacks the ``thread/goal/*``
methods or cannot start — and never as a quota probe: every call appends a turn. It runs in the
session's own working directory with stdin closed (``exec`` reads stdin and has hung without
that), in its own process group so stopping it stops everything it started.

What happened is read from the thread's rollout, which the exec process appends to: a
``usageLimited`` goal or a turn stopped at the usage limit → ``goal_limited``; ``complete`` →
``goal_finished``; a turn that ended with the goal still active → paused (``external``), since
the goal is not finished but nothing runs it any more; a non-zero exit → paused (``error``).

Two quick exits are not start failures (observed on 0.169.0): at a usage limit ``exec resume``
exits 1 within about half a second ("You've hit your usage limit", ``usage_limit_exceeded`` in
the rollout) — a limit hit, reported as such; and in a directory Codex does not trust (not a git
repository) it exits 1 with "Not inside a trusted directory" — refused with a message naming the
cause. Goalkeeper never adds a flag that widens what Codex may do (no ``--skip-git-repo-check``).

``remote``: when the shared app-server (``codex app-server daemon``) holds the thread, a plain
``exec resume`` would be a second writer. From 0.171.0 ``codex exec resume --remote <ADDR>``
runs the turn *in* that app-server instead (``ADDR`` = its control socket, ``unix://PATH``);
the daemon writes the rollout, so what happened is read the same way. Observed on 0.171.0: no
trust check (the daemon's configuration decides), a thread the daemon is running a turn on
answers "remote thread already has an active turn" (exit 1) — deferred, someone is working on
it; a socket nobody listens on answers "failed to connect to remote app server" (exit 1) —
deferred too, the daemon is gone and the next try finds the thread free; and stopping the exec
process does not stop the turn the daemon runs (it ends by itself: one turn per exec).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path

from core.i18n import N_
from core.models import Exactness, PauseReason
from core.providers.base import LimitHit, RunnerDeferred, RunnerError, StartOutcome
from core.providers.codex.goals import state_for
from core.providers.codex.hosted import RELIMITED_NOTE, RunContext
from core.providers.codex.limits import GOAL_WINDOWS
from core.providers.codex.readings import limit_lifts_at, to_readings
from core.providers.codex.rollout import Event, GoalUpdate, TurnLimited

#: a process that fails within this time failed to start
#: 0.169.0 exits at a usage limit in about half a second; a loaded machine (node's start) takes
#: longer, and a limit exit taken for a started run would lose the "not really refreshed" note
EARLY_EXIT_SECONDS = 3.0
PollFile = Callable[[Path], Awaitable[list[Event]]]
#: what exec prints when the usage limit stops its turn (text and --json output)
LIMIT_MARKERS = ("usage_limit_exceeded", "hit your usage limit", "usage limit reached")
UNTRUSTED_MARKER = "not inside a trusted directory"
#: 0.171.0 ``exec resume --remote``: the app-server is running a turn on the thread, or is gone
REMOTE_BUSY_MARKERS = ("already has an active turn", "failed to connect to remote app server")
#: how long a remote run refused as busy waits before the next try
REMOTE_DEFER_SECONDS = 120.0


class ExecRun:
    """One ``codex exec resume`` process. Owns it, its output and the task waiting for it."""

    def __init__(self, ctx: RunContext, goal_id: str, fence: int, thread_id: str, cwd: Path,
                 rollout: Path | None, poll_file: PollFile, remote: str | None = None) -> None:
        self.ctx = ctx
        self.remote = remote  # the app-server to run in (``--remote``), None: a process of its own
        self.goal_id = goal_id
        self.fence = fence
        self.thread_id = thread_id
        self.cwd = cwd
        self.rollout = rollout
        self._poll_file = poll_file
        self._proc: asyncio.subprocess.Process | None = None
        self._output: deque[str] = deque(maxlen=40)
        self._events: list[Event] = []
        self._task: asyncio.Task[None] | None = None
        self._letting_go = False

    @property
    def pids(self) -> set[int]:
        return {self._proc.pid} if self._proc else set()

    async def start(self, executable: str) -> StartOutcome:
        through = ["--remote", self.remote] if self.remote else []
        argv = [executable, "exec", "resume", *through, self.thread_id,
                self.ctx.config.continuation_text]
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=str(self.cwd), env=dict(self.ctx.config.env),
                start_new_session=True,
            )
        except OSError as exc:
            raise RunnerError(f"cannot run {executable} exec resume: {exc.strerror or exc}"
                              ) from None
        readers = [asyncio.ensure_future(self._drain(s))
                   for s in (self._proc.stdout, self._proc.stderr) if s is not None]
        code: int | None = None
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(EARLY_EXIT_SECONDS):
                code = await self._proc.wait()
        if code:
            await asyncio.gather(*readers, return_exceptions=True)
            return await self._early_exit(code)
        self._task = asyncio.ensure_future(self._wait(readers))
        self._task.set_name(f"codex:exec:{self.thread_id}")
        return StartOutcome.STARTED

    async def _early_exit(self, code: int) -> StartOutcome:
        """Exited at once: a usage limit (a turn ran into it), an untrusted directory, or a
        failure to start."""
        text = " ".join(self._output).lower()
        busy = [line for line in self._output
                if any(marker in line.lower() for marker in REMOTE_BUSY_MARKERS)]
        if self.remote and busy:
            raise RunnerDeferred(N_("the shared Codex app-server holds this thread and did not "
                                    "take the turn from codex exec resume --remote ({output}); "
                                    "Goalkeeper tries again later").format(output=busy[0]),
                                 REMOTE_DEFER_SECONDS)
        if UNTRUSTED_MARKER in text:
            raise RunnerError(N_(
                "Codex will not run in {dir}: it is not a trusted directory (not a git "
                "repository, and not trusted in Codex). Open the session in Codex there once "
                "to trust it, or make it a git repository; Goalkeeper never passes "
                "--skip-git-repo-check").format(dir=self.cwd))
        if self.rollout is not None:
            self._events.extend(await self._poll_file(self.rollout))
        if any(marker in text for marker in LIMIT_MARKERS) or any(
                isinstance(e, TurnLimited) for e in self._events):
            self._limited(RELIMITED_NOTE)  # applied once this resume has settled
            return StartOutcome.STARTED
        raise RunnerError(N_("codex exec resume exited with code {code}: {output}").format(
            code=code, output=self.output_tail))

    @property
    def output_tail(self) -> str:
        return " | ".join(list(self._output)[-5:]) or "no output"

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            text = line.decode("utf-8", "replace").strip()
            if text:
                self._output.append(text[:300])

    def on_event(self, event: Event) -> None:
        """A line the follower read from this thread's rollout while the process runs."""
        self._events.append(event)

    async def _wait(self, readers: list[asyncio.Task[None]]) -> None:
        assert self._proc is not None
        try:
            code = await self._proc.wait()
            await asyncio.gather(*readers, return_exceptions=True)
            if self.rollout is not None:
                self._events.extend(await self._poll_file(self.rollout))  # the last lines
            if not self._letting_go:
                self._report(code)
        finally:
            self.ctx.finished(self.goal_id)

    def _report(self, code: int) -> None:
        goals = [e for e in self._events if isinstance(e, GoalUpdate)]
        last = goals[-1] if goals else None
        limited = any(isinstance(e, TurnLimited) for e in self._events) or (
            "usage limit" in " ".join(self._output).lower())
        if (last is not None and last.status == "usageLimited") or (limited and (
                last is None or last.status == "active")):
            self._limited()
        elif last is not None and last.status == "complete":
            self.ctx.sink().goal_finished(self.goal_id, self.fence, "the goal is complete in Codex")
        elif last is not None and last.status != "active":
            _, reason = state_for(last.status)
            self.ctx.sink().goal_paused(self.goal_id, self.fence, reason or PauseReason.EXTERNAL,
                                      f"{last.status} in Codex after codex exec resume")
        elif code == 0:
            self.ctx.sink().goal_paused(self.goal_id, self.fence, PauseReason.EXTERNAL,
                                      "codex exec resume finished its turn; the goal is still "
                                      "active in Codex — resume it to continue")
        else:
            self.ctx.sink().goal_paused(self.goal_id, self.fence, PauseReason.ERROR,
                                      f"codex exec resume exited with code {code}: "
                                      f"{self.output_tail}")

    @property
    def alive(self) -> bool:
        """The process still runs (a usage-limit exit ended the run at once)."""
        return self._task is not None and not self._task.done()

    def _limited(self, detail: str = N_("usage limit reached in Codex")) -> None:
        snapshot = self.ctx.snapshot()
        why = snapshot.no_timed_reset if snapshot else None
        readings = tuple(to_readings(snapshot, self.ctx.now(), self.ctx.config.stale_after)
                         ) if snapshot else ()
        self.ctx.sink().goal_limited(self.goal_id, self.fence, LimitHit(
            windows=GOAL_WINDOWS, resets_at=limit_lifts_at(snapshot), exactness=Exactness.EXACT,
            detail=why or detail, no_timed_reset=why is not None,
            readings=readings,
        ))

    async def pause(self) -> None:
        """No goal methods here: stopping the process is all a pause can do."""
        await self.stop()

    async def pause_gracefully(self) -> None:
        """The policy pause: ``exec resume`` runs one turn and exits — let it end by itself
        (reporting nothing: the goal is paused in Goalkeeper already), stopped as a pause
        stops it only after the turn-end timeout. With no goal methods, the goal's status in
        Codex stays as that turn left it."""
        self._letting_go = True
        if self._task is not None and not self._task.done():
            await asyncio.wait({self._task}, timeout=self.ctx.config.turn_end_timeout)
        await self.stop()

    async def stop(self) -> None:
        self._letting_go = True
        proc = self._proc
        if proc is not None and proc.returncode is None:
            _signal_group(proc, signal.SIGTERM)
            try:
                async with asyncio.timeout(3.0):
                    await proc.wait()
            except TimeoutError:
                _signal_group(proc, signal.SIGKILL)
                await proc.wait()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


def _signal_group(proc: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
