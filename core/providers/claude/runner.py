"""Running a Claude session headless: ``claude -p --resume <id> "<text>" --output-format
stream-json --verbose`` in the session's directory, hosted while it runs.

A :class:`HeadlessRun` owns the process (in its own process group) and the task that reads its
output. It reports to the provider sink with the fence of the claim that started it:

* every ``rate_limit_event`` → ``quota_observed`` (each reading it carries);
* the turn ended with a usage limit → ``goal_limited`` with the exact reset;
* the turn ended with a *transient* 429 ("Server is temporarily limiting requests (not your usage
  limit)", the API-key "Request rejected (429)") → the turn is run again after a backoff (the
  step-level policy of ``retry-table.md``: full jitter from ``claude_retry_backoff_seconds``,
  doubling up to 15 minutes, ``claude_retry_attempts`` in all; Claude's own in-turn retries
  come first) — never a quota pause; when no attempt is left → ``goal_paused`` (error);
* the turn ended normally → ``goal_finished`` — or, when the goal asks to keep prompting, another
  turn with the continuation text;
* anything else → ``goal_failed`` with what Claude said.

:meth:`HeadlessRun.stop` ends it cleanly: SIGINT first (Claude saves the session), SIGTERM after
a grace period, SIGKILL as a last resort; a stopped run reports nothing. A policy pause is
:meth:`HeadlessRun.finish_turn`: the ``claude -p`` turn in progress ends by itself, bounded by a
timeout, and no further turn starts. No permission-bypass flag is ever passed (see
:func:`command`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import tzinfo

from core.clock import Clock
from core.i18n import N_
from core.models import HistoryEvent, PauseReason
from core.providers.base import ProviderSink, RunnerError
from core.providers.claude.stream import StreamState, TurnEnded, interpret
from core.retry.policy import Action, Fault, RetryPolicy

log = logging.getLogger(__name__)

LINE_LIMIT = 32 << 20  # stream-json lines carry whole tool results
STDERR_KEEP = 8192
FORBIDDEN_FLAGS = ("--dangerously-skip-permissions", "--allow-dangerously-skip-permissions",
                   "bypassPermissions")


def command(binary: str, session_id: str, text: str) -> list[str]:
    """The headless resume command line. Refuses anything that could bypass permissions."""
    argv = [binary, "-p", "--resume", session_id, text, "--output-format", "stream-json",
            "--verbose"]
    if text.startswith("-") or session_id.startswith("-"):
        raise RunnerError(f"refusing to pass {text if text.startswith('-') else session_id!r} "
                          "as a prompt: it would be read as an option")
    if any(flag in arg for arg in argv for flag in FORBIDDEN_FLAGS):
        raise RunnerError("refusing to run claude with a permission-bypass flag")
    return argv


def new_session_command(binary: str, session_id: str, prompt: str) -> list[str]:
    """The command line that starts queued work as a new session with a known id
    (``claude -p --session-id <uuid> "<prompt>"``), so the goal ``claude:<uuid>`` exists before
    Claude does. Refuses what :func:`command` refuses."""
    checked = command(binary, session_id, prompt)  # the same checks
    return [binary, "-p", "--session-id", session_id, prompt, *checked[5:]]


#: the step-level retry policy of retry-table.md (30 s doubling to 15 min, 5 attempts)
DEFAULT_RETRY = RetryPolicy(retries=4, backoff_initial=30.0, backoff_max=900.0)


def _half() -> float:
    return 0.5


@dataclass(frozen=True)
class RunSpec:
    goal_id: str
    fence: int
    argv: list[str]
    cwd: str
    env: Mapping[str, str]
    keep_prompting: bool
    zone: tzinfo
    retry: RetryPolicy = DEFAULT_RETRY
    jitter: Callable[[], float] = field(default=_half, compare=False)


#: called when a turn ended with a limit, before the sink hears of it
OnLimited = Callable[[str, TurnEnded], None]


class HeadlessRun:
    """One hosted headless run of a goal (possibly several turns). Owns its process and task."""

    def __init__(self, spec: RunSpec, sink: ProviderSink, clock: Clock,
                 on_limited: OnLimited, grace_seconds: float = 10.0) -> None:
        self.spec = spec
        self.sink = sink
        self.clock = clock
        self.on_limited = on_limited
        self.grace_seconds = grace_seconds
        self.turns = 0
        self.transient_attempts = 0
        self._proc: asyncio.subprocess.Process | None = None
        self._task: asyncio.Task[None] | None = None
        self._stderr: asyncio.Task[bytes] | None = None
        self._state = StreamState()
        self._stopping = False
        self._last_turn = False  # a policy pause: this turn may end, no other starts

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Spawn the first turn and wait until Claude answers; RunnerError if it cannot."""
        try:
            await self._spawn()
            await self._await_start()
        except BaseException:
            await self._kill()
            raise
        self._task = asyncio.ensure_future(self._follow())
        self._task.set_name(f"claude:{self.spec.goal_id}")

    async def _spawn(self) -> None:
        spec = self.spec
        self._state = StreamState()
        self.turns += 1
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *spec.argv, cwd=spec.cwd, env=dict(spec.env), stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                start_new_session=True, limit=LINE_LIMIT)
        except OSError as exc:
            raise RunnerError(f"cannot run {spec.argv[0]}: {exc.strerror or exc}") from None
        assert self._proc.stderr is not None
        self._stderr = asyncio.ensure_future(_tail(self._proc.stderr))
        log.info("%s: started claude (pid %d, turn %d) in %s", spec.goal_id, self._proc.pid,
                 self.turns, spec.cwd)

    async def _await_start(self) -> None:
        """Read until Claude's ``init`` line; fail when it exits having said nothing usable."""
        while not self._state.started:
            line = await self._readline()
            if line is None:
                if self._state.events:
                    return  # it answered (e.g. straight away with a limit): report that
                code = await self._proc_wait()
                stderr = (await self._stderr_text()).strip()
                raise RunnerError(f"claude exited (code {code}) before starting"
                                  + (f": {stderr[-500:]}" if stderr else ""))
            self._take(line)

    async def _readline(self) -> bytes | None:
        assert self._proc is not None and self._proc.stdout is not None
        while True:
            try:
                line = await self._proc.stdout.readline()
            except ValueError:  # a line beyond LINE_LIMIT: skip it
                self._state.bad_lines += 1
                continue
            return line or None

    def _take(self, line: bytes) -> None:
        for reading in self._state.feed(line, self.clock.now()):
            self.sink.quota_observed(reading)

    async def _follow(self) -> None:
        while True:
            while (line := await self._readline()) is not None:
                self._take(line)
            code = await self._proc_wait()
            if self._stopping or self._last_turn:
                return  # the goal is paused in Goalkeeper already: nothing to report
            ended = interpret(self._state, self.clock.now(), self.spec.zone, code,
                              await self._stderr_text())
            delay = self._again_after(ended)
            if delay is None:
                self._report(ended)
                return
            await self.clock.sleep(delay)
            if self._stopping or self._last_turn:
                return
            try:
                await self._spawn()
            except RunnerError as exc:
                self._report(TurnEnded("failed", str(exc)))
                return

    def _again_after(self, ended: TurnEnded) -> float | None:
        """Seconds until the next turn, or None when this turn's end is reported."""
        if ended.kind == "finished":
            self.transient_attempts = 0
            return 1.0 if self.spec.keep_prompting else None
        if ended.kind != "transient":
            return None
        self.transient_attempts += 1
        decision = self.spec.retry.decide(Fault.RATE_LIMITED, self.transient_attempts,
                                          self.clock.now(), self.spec.jitter())
        if decision.action is not Action.RETRY:
            return None
        self.sink.goal_noted(self.spec.goal_id, HistoryEvent.RETRY_SCHEDULED,
                             N_("transient 429, not a usage limit ({detail}): {why}, in "
                                "{seconds} s").format(detail=ended.detail, why=decision.why,
                                                      seconds=f"{decision.delay:.0f}"),
                             {"attempt": self.transient_attempts,
                              "delay_seconds": round(decision.delay, 3)})
        return decision.delay

    def _report(self, ended: TurnEnded) -> None:
        spec = self.spec
        if ended.kind == "limited" and ended.hit is not None:
            self.on_limited(spec.goal_id, ended)
            self.sink.goal_limited(spec.goal_id, spec.fence, ended.hit)
        elif ended.kind == "finished":
            summary = " ".join(ended.detail.split())[:200]
            self.sink.goal_finished(spec.goal_id, spec.fence,
                                    N_("the turn ended: {summary}").format(summary=summary)
                                    if summary else N_("the turn ended"))
        elif ended.kind == "transient":
            self.sink.goal_paused(
                spec.goal_id, spec.fence, PauseReason.ERROR,
                N_("transient 429s, not a usage limit ({detail}): gave up after {attempts} "
                   "attempts; resume it by hand").format(detail=ended.detail,
                                                         attempts=self.transient_attempts))
        else:
            self.sink.goal_failed(spec.goal_id, spec.fence, ended.detail)

    async def _proc_wait(self) -> int | None:
        return await self._proc.wait() if self._proc is not None else None

    async def _stderr_text(self) -> str:
        if self._stderr is None:
            return ""
        with contextlib.suppress(Exception):
            return (await self._stderr).decode(errors="replace")
        return ""

    async def stop(self) -> None:
        """SIGINT, then SIGTERM after the grace period, then SIGKILL; reports nothing."""
        self._stopping = True
        proc = self._proc
        if proc is not None and proc.returncode is None:
            for sig, wait in ((signal.SIGINT, self.grace_seconds),
                              (signal.SIGTERM, self.grace_seconds), (signal.SIGKILL, 5.0)):
                _signal_group(proc.pid, sig)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), wait)
                    break
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    async def finish_turn(self, timeout: float) -> None:
        """The policy pause (the reserve, a budget): the turn in progress may end by itself —
        no SIGINT — and no other turn starts (no continuation, no retry); a turn still running
        after ``timeout`` seconds is stopped as :meth:`stop` stops it. Reports nothing."""
        self._last_turn = True
        proc, task = self._proc, self._task
        if proc is not None and proc.returncode is None and task is not None and not task.done():
            await asyncio.wait({task}, timeout=timeout)
        await self.stop()

    async def _kill(self) -> None:
        self._stopping = True
        proc = self._proc
        if proc is not None and proc.returncode is None:
            _signal_group(proc.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(proc.wait(), 5.0)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def _tail(stream: asyncio.StreamReader) -> bytes:
    kept = b""
    while chunk := await stream.read(65536):
        kept = (kept + chunk)[-STDERR_KEEP:]
    return kept


def child_env(environ: Mapping[str, str], config_dir: str | None,
              default_dir: bool) -> dict[str, str]:
    """The environment for ``claude``: the user's, pointed at the session's config dir."""
    env = dict(environ)
    if config_dir and not default_dir:
        env["CLAUDE_CONFIG_DIR"] = config_dir
    elif "," in env.get("CLAUDE_CONFIG_DIR", ""):
        env.pop("CLAUDE_CONFIG_DIR")  # Goalkeeper's list form; Claude itself takes one dir
    return env

