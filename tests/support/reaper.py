"""The run's reaper: whatever a test run started dies with it, even when pytest is SIGKILLed.

A cut run (a time-out, ``timeout -k`` in .ci/run, Ctrl-C, the OOM killer) skips every fixture's
teardown, so the throw-away PostgreSQL server, the daemons and the host processes the tests
started would live on — a cut CI run once left its server up for an hour. ``pg_ctl`` daemonizes
the server, so it is not pytest's child and ``PR_SET_PDEATHSIG`` cannot reach it; a runuser'd
server would drop that setting anyway.

Instead pytest starts one reaper per run (:func:`start`, from tests/conftest.py) in a session of
its own — the signal that ends pytest's process group does not reach it — and puts a mark
(``GK_TEST_RUN=<token>``) in its own environment before any test runs. Every process a test
starts inherits the mark (the server too: ``pg_ctl`` and ``runuser`` keep the environment). The
reaper waits on a pidfd for pytest to end, however it ends, then sends SIGTERM to every process
that carries the mark, SIGKILL to those still there after :data:`GRACE` seconds, and removes the
directories pytest registered with :func:`remove_later`. After a clean run it finds nothing.

Run as ``python -m tests.support.reaper <pytest pid> <token>``; it reads ``rmtree <path>``
lines on stdin.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

MARK = "GK_TEST_RUN"
#: seconds between SIGTERM and SIGKILL (a daemon stops in well under a second)
GRACE = 5.0

_reaper: subprocess.Popen[str] | None = None  # held: it outlives the run on purpose
_pipe: IO[str] | None = None


def start() -> None:
    """Start this run's reaper and mark this process's environment for the children to come."""
    global _reaper, _pipe
    token = secrets.token_hex(8)
    proc = subprocess.Popen([sys.executable, "-m", "tests.support.reaper", str(os.getpid()),
                             token], stdin=subprocess.PIPE, text=True, start_new_session=True,
                            cwd=Path(__file__).resolve().parents[2],
                            env={k: v for k, v in os.environ.items() if k != MARK})
    os.environ[MARK] = token  # after the reaper: it must not carry the mark itself
    _reaper, _pipe = proc, proc.stdin


def remove_later(path: Path) -> None:
    """Have the reaper remove ``path`` if the run dies before its owner does."""
    if _pipe is not None:
        with contextlib.suppress(OSError, ValueError):
            _pipe.write(f"rmtree {path}\n")
            _pipe.flush()


def marked(token: str) -> list[int]:
    """The processes that carry this run's mark in their environment."""
    needle = f"{MARK}={token}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                env = handle.read().split(b"\0")
        except OSError:  # gone already, or not ours to read
            continue
        if needle in env:
            found.append(int(entry))
    return found


def sweep(token: str, grace: float = GRACE) -> None:
    """SIGTERM every marked process, then SIGKILL what is left after ``grace`` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = marked(token)
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + (grace if sig == signal.SIGTERM else 1.0)
        while pids and time.monotonic() < deadline:
            time.sleep(0.1)
            pids = marked(token)
        if not pids:
            return


def _read_registrations(dirs: list[Path]) -> None:
    for line in sys.stdin:
        verb, _, path = line.rstrip("\n").partition(" ")
        if verb == "rmtree" and path:
            dirs.append(Path(path))


def main(argv: list[str]) -> int:
    pytest_pid, token = int(argv[0]), argv[1]
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C ends pytest, not the one cleaning up
    try:
        pidfd = os.pidfd_open(pytest_pid)
    except ProcessLookupError:
        pidfd = None  # pytest is gone already
    dirs: list[Path] = []
    threading.Thread(target=_read_registrations, args=(dirs,), daemon=True).start()
    if pidfd is not None:
        select.select([pidfd], [], [])  # readable once the process has ended
    sweep(token)
    for path in dirs:
        shutil.rmtree(path, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
