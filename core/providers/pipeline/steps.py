"""Running one attempt of one step: a subprocess with cwd, timeout, environment and clean-up.

The command is an argv list (no shell unless the user writes one), started in its own process
group so that a timeout, a pause or a host shutdown stops the whole group: SIGTERM, then SIGKILL
after the grace period. Its environment is the host's plus the step's ``env``, the secrets it
names (and only those), and the run variables ``GOALKEEPER_RUN_DIR``, ``GOALKEEPER_RUN_ID``,
``GOALKEEPER_STEP``, ``GOALKEEPER_REPORT``, ``GOALKEEPER_ATTEMPT`` and ``GOALKEEPER_COVERAGE``.

Output: without an ``output`` key, stdout *is* the step's artifact (``<run dir>/<step>.out``);
with one, the step writes that file itself and stdout joins stderr in ``logs/<step>.log``. Every
byte Goalkeeper writes from a step's output has the step's secret values masked first.

Process waits use real time (a subprocess runs on the real clock); only retry waits go through
the injected clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from core.atomic import atomic_write_bytes, open_private, private_dir
from core.providers.pipeline.capture import CappedFile, open_partial, pump, sync_close
from core.providers.pipeline.checkpoint import file_sha256
from core.providers.pipeline.goalfile import StepSpec
from core.providers.pipeline.protocol import (
    StepOutcome,
    classify,
    read_report,
    spawn_failure,
    timeout_outcome,
)
from core.providers.procstat import start_time, state
from core.redact import Redactor
from core.retry.policy import Fault

#: a step's stdout artifact beyond this fails the attempt (``output_too_large``); the step's
#: ``max_output_mb`` changes it
MAX_CAPTURE_BYTES = 64 << 20
#: what a step's log keeps of each pipe per attempt (the rest is counted, not kept)
MAX_LOG_BYTES = 8 << 20


@dataclass
class StepContext:
    """What every attempt of a run's steps shares."""

    run_dir: Path
    run_id: str
    base_dir: Path  # the goal file's directory; a step's cwd is relative to it
    environ: Mapping[str, str]
    now: Callable[[], datetime]
    grace_seconds: float = 5.0
    secrets: dict[str, str] = field(default_factory=dict)
    redactor: Redactor = field(default_factory=Redactor)


@dataclass(frozen=True)
class AttemptResult:
    outcome: StepOutcome
    artifact: str | None = None  # relative to the run directory
    checksum: str | None = None


OnStarted = Callable[[int, str | None], Awaitable[None]]


def artifact_name(spec: StepSpec) -> str:
    return spec.output or f"{spec.name}.out"


def report_path(ctx: StepContext, spec: StepSpec) -> Path:
    return ctx.run_dir / "reports" / f"{spec.name}.json"


def build_env(spec: StepSpec, ctx: StepContext, attempt: int) -> dict[str, str]:
    env = dict(ctx.environ)
    env.update(spec.env)
    for name in spec.secrets:
        env[name] = ctx.secrets[name]
    for key, value in spec.env.items():
        if value.startswith("keyring:"):  # a goal-file secret moved to the keyring at `add`
            env[key] = ctx.secrets[value[8:]]
    env.update({
        "GOALKEEPER_RUN_DIR": str(ctx.run_dir),
        "GOALKEEPER_RUN_ID": ctx.run_id,
        "GOALKEEPER_STEP": spec.name,
        "GOALKEEPER_REPORT": str(report_path(ctx, spec)),
        "GOALKEEPER_ATTEMPT": str(attempt),
        "GOALKEEPER_COVERAGE": str(ctx.run_dir / "coverage.json"),
    })
    return env


def process_start_time(pid: int) -> str | None:
    """The kernel's start time of ``pid`` (Linux ``/proc``), to tell a reused pid apart."""
    return start_time(pid)


def _is_zombie(pid: int) -> bool:
    """An orphan that exited but was not reaped (its new parent may never reap it)."""
    return state(pid) == "Z"


async def stop_group(pid: int, grace: float, proc: asyncio.subprocess.Process | None = None
                     ) -> None:
    """SIGTERM the process group ``pid``, SIGKILL it after ``grace`` seconds if still there."""
    if not _signal_group(pid, signal.SIGTERM):
        return
    if proc is not None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(proc.wait()), grace)
    else:
        await _wait_gone(pid, grace)
    _signal_group(pid, signal.SIGKILL)  # the leader may be gone while children linger
    if proc is not None:
        await proc.wait()


def _signal_group(pid: int, sig: int) -> bool:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def _wait_gone(pgid: int, grace: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while loop.time() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        if _is_zombie(pgid):
            return
        await asyncio.sleep(0.05)


def find_run_groups(run_dir: Path) -> dict[int, str]:
    """Process groups still running a step of the run in ``run_dir`` → the step (Linux
    ``/proc``; elsewhere none are found).

    A host killed between a step's spawn and the checkpoint naming its pid leaves a step no
    state file names; its environment still does.
    """
    marker = f"GOALKEEPER_RUN_DIR={run_dir}".encode()
    groups: dict[int, str] = {}
    try:
        entries = list(Path("/proc").iterdir())
    except OSError:
        return {}
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            pgid = os.getpgid(int(entry.name))
        except (OSError, ValueError):
            continue
        if marker in environ and pgid != os.getpgrp() and not _is_zombie(int(entry.name)):
            step = next((v[len(b"GOALKEEPER_STEP="):].decode(errors="replace")
                         for v in environ if v.startswith(b"GOALKEEPER_STEP=")), "?")
            groups[pgid] = step
    return groups


async def stop_leftover(pid: int | None, started: str | None, grace: float) -> bool:
    """Stop a step a crashed host left behind, if it is still the same process; True if it was."""
    if pid is None:
        return False
    if started is not None and process_start_time(pid) not in (started, None):
        return False  # the pid was reused by an unrelated process
    if not _signal_group(pid, 0) or _is_zombie(pid):
        return False
    await stop_group(pid, grace)
    return True


async def stop_run_leftovers(run_dir: Path, grace: float) -> list[str]:
    """Stop every process still running a step of the run in ``run_dir``; the steps they ran."""
    found = find_run_groups(run_dir)
    for group in found:
        await stop_group(group, grace)
    return sorted(set(found.values()))


def output_limit(spec: StepSpec) -> int:
    if spec.max_output_mb is not None:
        return int(spec.max_output_mb * (1 << 20))
    return MAX_CAPTURE_BYTES


@dataclass
class _Capture:
    """Where one attempt's pipes go: the artifact (stdout, unless the step declares its own
    ``output``) and the step's log."""

    log: BinaryIO
    out: CappedFile
    err: CappedFile
    partial: Path | None  # the artifact being written, renamed into place at the end

    def close(self) -> None:
        if self.partial is not None:
            sync_close(self.out.handle)


def _open_capture(spec: StepSpec, ctx: StepContext, attempt: int) -> _Capture:
    log_dir = ctx.run_dir / "logs"
    private_dir(log_dir)
    log_path = log_dir / f"{spec.name}.log"
    log = os.fdopen(open_private(log_path, os.O_WRONLY | os.O_APPEND), "ab")
    log.write(f"--- attempt {attempt}\n".encode())
    err = CappedFile(log, ctx.redactor, MAX_LOG_BYTES)
    if spec.output is not None:
        return _Capture(log, CappedFile(log, ctx.redactor, MAX_LOG_BYTES), err, None)
    partial = ctx.run_dir / f".{artifact_name(spec)}.{os.getpid()}.partial"
    return _Capture(log, CappedFile(open_partial(partial), ctx.redactor, output_limit(spec)),
                    err, partial)


async def run_attempt(spec: StepSpec, ctx: StepContext, attempt: int, timeout: float,
                      on_started: OnStarted) -> AttemptResult:
    """Run one attempt of ``spec``; classify it; write its output. Cancellation stops it."""
    report = report_path(ctx, spec)
    private_dir(report.parent)
    report.unlink(missing_ok=True)  # a stale report must never speak for this attempt
    cwd = (ctx.base_dir / spec.cwd).resolve()
    try:
        proc = await asyncio.create_subprocess_exec(
            *spec.command, cwd=cwd, env=build_env(spec, ctx, attempt),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        if not cwd.is_dir():
            exc = OSError(exc.errno, f"working directory {cwd} does not exist")
        return AttemptResult(spawn_failure(spec.command[0], exc))
    await on_started(proc.pid, process_start_time(proc.pid))
    capture = _open_capture(spec, ctx, attempt)
    try:
        timed_out = await _collect(proc, capture, spec, ctx, timeout)
        capture.close()
        if timed_out:
            _end_log(capture, "timed out")
            _discard(capture)
            return AttemptResult(timeout_outcome(timeout))
        code = proc.returncode if proc.returncode is not None else -1
        return _finish(spec, ctx, code, capture)
    finally:
        if not capture.out.handle.closed:
            capture.out.handle.close()  # cancelled or failed half-way
        capture.log.close()
        _discard(capture)


async def _collect(proc: asyncio.subprocess.Process, capture: _Capture, spec: StepSpec,
                   ctx: StepContext, timeout: float) -> bool:
    """Stream the pipes to disk until the step ends; True when it timed out. An artifact past
    its cap stops the step (nothing it writes from then on can be used)."""
    def too_much() -> None:
        stopper.append(asyncio.ensure_future(stop_group(proc.pid, ctx.grace_seconds, proc)))

    stopper: list[asyncio.Future[None]] = []
    on_overflow = too_much if capture.partial is not None else None
    pumps = asyncio.ensure_future(asyncio.gather(
        pump(proc.stdout, capture.out, on_overflow), pump(proc.stderr, capture.err)))
    try:
        async with asyncio.timeout(timeout):
            await asyncio.shield(pumps)  # a time-out stops the step, not the reading
            await proc.wait()
    except TimeoutError:
        await stop_group(proc.pid, ctx.grace_seconds, proc)
        await pumps
        return True
    except asyncio.CancelledError:
        await stop_group(proc.pid, ctx.grace_seconds, proc)
        pumps.cancel()
        raise
    finally:
        if stopper:
            await asyncio.gather(*stopper, return_exceptions=True)
    return False


def _discard(capture: _Capture) -> None:
    if capture.partial is not None:
        capture.partial.unlink(missing_ok=True)


def _end_log(capture: _Capture, result: str) -> None:
    for sink, what in ((capture.out, "stdout"), (capture.err, "stderr")):
        if sink.overflowed and sink.handle is capture.log:
            capture.log.write(f"[{sink.seen - sink.written} more bytes of {what} not kept]\n"
                              .encode())
    capture.log.write(f"--- attempt result: {result}\n".encode())


def _too_large(spec: StepSpec, ctx: StepContext, capture: _Capture, code: int) -> StepOutcome:
    limit = output_limit(spec)
    kept = ctx.run_dir / f"{artifact_name(spec)}.truncated"
    assert capture.partial is not None
    os.replace(capture.partial, kept)
    return StepOutcome(Fault.PERMANENT, "output_too_large",
                       f"the step wrote more than {limit} bytes to stdout (its limit, "
                       f"`max_output_mb`); it was stopped and its output not used — the first "
                       f"{limit} bytes, masked, are in {kept.name}", exit_code=code)


def _finish(spec: StepSpec, ctx: StepContext, code: int, capture: _Capture) -> AttemptResult:
    data, note = read_report(report_path(ctx, spec))
    if data is not None and isinstance(data.get("detail"), str):
        # masked before classify() cuts the detail: a cut secret would no longer match
        data["detail"] = ctx.redactor.text(data["detail"])
    _mask_report(report_path(ctx, spec), ctx.redactor)
    outcome = _redacted(classify(code, data, ctx.now(), note), ctx.redactor)
    if capture.partial is not None and capture.out.overflowed:
        outcome = _too_large(spec, ctx, capture, code)
    elif capture.partial is not None:
        os.replace(capture.partial, ctx.run_dir / artifact_name(spec))
    _end_log(capture, f"{outcome.reason} (exit {code})")
    if not outcome.fault.succeeded:
        return AttemptResult(outcome)
    path = ctx.run_dir / artifact_name(spec)
    if not path.is_file():
        missing = f"declared output {spec.output!r} was not written"
        return AttemptResult(StepOutcome(Fault.CONFIG, "config_error", missing,
                                         exit_code=code))
    return AttemptResult(outcome, artifact_name(spec), file_sha256(path))


def _mask_report(path: Path, redactor: Redactor) -> None:
    """The report is read; a secret the step put in it must not stay in our directory."""
    try:
        raw = path.read_bytes()
    except OSError:
        return
    masked = redactor.bytes(raw)
    if masked != raw:
        atomic_write_bytes(path, masked)


def _redacted(outcome: StepOutcome, redactor: Redactor) -> StepOutcome:
    if not outcome.detail:
        return outcome
    return StepOutcome(outcome.fault, outcome.reason, redactor.text(outcome.detail),
                       outcome.items, outcome.retry_after, outcome.reset_at, outcome.exit_code)
