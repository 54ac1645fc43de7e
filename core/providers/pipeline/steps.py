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

from core.atomic import atomic_write_bytes
from core.procstat import start_time, state
from core.providers.pipeline.checkpoint import file_sha256
from core.providers.pipeline.goalfile import StepSpec
from core.providers.pipeline.protocol import (
    StepOutcome,
    classify,
    read_report,
    spawn_failure,
    timeout_outcome,
)
from core.retry import Fault

MASK = b"********"
#: secret values shorter than this are not masked (they would mangle ordinary text)
MIN_MASKED_LENGTH = 4
#: a step's captured output beyond this is cut (the head is kept) before it is written
MAX_CAPTURE_BYTES = 64 << 20


class Redactor:
    """Masks secret values in text and bytes Goalkeeper is about to write anywhere."""

    def __init__(self, values: list[str] | None = None) -> None:
        self._values: list[bytes] = []
        for value in values or []:
            self.add(value)

    def add(self, value: str) -> None:
        encoded = value.encode()
        if len(encoded) >= MIN_MASKED_LENGTH and encoded not in self._values:
            self._values.append(encoded)
            self._values.sort(key=len, reverse=True)  # longer first: no partial leftovers

    def bytes(self, data: bytes) -> bytes:
        for value in self._values:
            data = data.replace(value, MASK)
        return data

    def text(self, data: str) -> str:
        return self.bytes(data.encode()).decode("utf-8", "replace") if self._values else data


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


async def run_attempt(spec: StepSpec, ctx: StepContext, attempt: int, timeout: float,
                      on_started: OnStarted) -> AttemptResult:
    """Run one attempt of ``spec``; classify it; write its output. Cancellation stops it."""
    report = report_path(ctx, spec)
    report.parent.mkdir(parents=True, exist_ok=True)
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
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        await stop_group(proc.pid, ctx.grace_seconds, proc)
        _write_log(ctx, spec, attempt, b"", b"", "timed out")
        return AttemptResult(timeout_outcome(timeout))
    except asyncio.CancelledError:
        await stop_group(proc.pid, ctx.grace_seconds, proc)
        raise
    code = proc.returncode if proc.returncode is not None else -1
    return _finish(spec, ctx, attempt, code, stdout, stderr)


def _finish(spec: StepSpec, ctx: StepContext, attempt: int, code: int, stdout: bytes,
            stderr: bytes) -> AttemptResult:
    data, note = read_report(report_path(ctx, spec))
    if data is not None and isinstance(data.get("detail"), str):
        # masked before classify() cuts the detail: a cut secret would no longer match
        data["detail"] = ctx.redactor.text(data["detail"])
    _mask_report(report_path(ctx, spec), ctx.redactor)
    outcome = classify(code, data, ctx.now(), note)
    outcome = _redacted(outcome, ctx.redactor)
    if spec.output is None:
        atomic_write_bytes(ctx.run_dir / artifact_name(spec),
                           ctx.redactor.bytes(stdout)[:MAX_CAPTURE_BYTES])
        stdout = b""
    _write_log(ctx, spec, attempt, stdout, stderr, f"{outcome.reason} (exit {code})")
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


def _write_log(ctx: StepContext, spec: StepSpec, attempt: int, stdout: bytes, stderr: bytes,
               result: str) -> None:
    log_dir = ctx.run_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    header = f"--- attempt {attempt}: {result}\n".encode()
    body = ctx.redactor.bytes(stdout + stderr)[:MAX_CAPTURE_BYTES]  # masked, then cut
    with open(log_dir / f"{spec.name}.log", "ab") as handle:
        handle.write(header + body + (b"" if body.endswith(b"\n") or not body else b"\n"))
    with contextlib.suppress(OSError):
        os.chmod(log_dir / f"{spec.name}.log", 0o600)
