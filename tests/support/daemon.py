"""A real ``goalkeeper daemon`` process on the test's ``GOALKEEPER_HOME`` (no keyring), for the
tests that drive the host from outside: started until its lease and control socket exist,
stopped with SIGTERM (killed if it does not go within 20 s).

:func:`running_host` is the same for any command line that hosts (the app from a desktop
entry's ``Exec``, the daemon from a systemd unit's ``ExecStart``), in a given directory and
with exactly the environment given (a desktop session's, a service manager's)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.paths import resolve_paths

if TYPE_CHECKING:
    import pytest

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def running_daemon(out_dir: Path, env: Mapping[str, str] | None = None
                   ) -> Iterator[subprocess.Popen[bytes]]:
    """The daemon with ``env`` on top of this process's environment; its output goes to
    ``out_dir/daemon.out`` (shown when it dies before it is up)."""
    home = os.environ["GOALKEEPER_HOME"]
    full = {**os.environ, "GOALKEEPER_HOME": home,
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring", **(env or {})}
    with running_host(out_dir, [sys.executable, "-m", "core", "daemon"], full, ROOT) as proc:
        yield proc


@contextlib.contextmanager
def running_host(out_dir: Path, argv: Sequence[str], env: Mapping[str, str], cwd: Path,
                 timeout: float = 20.0) -> Iterator[subprocess.Popen[bytes]]:
    """``argv`` run in ``cwd`` with exactly ``env``, until the host it starts holds its lease
    and its control socket (where ``env`` puts them); output in ``out_dir/daemon.out``."""
    out = out_dir / "daemon.out"
    with open(out, "wb") as log:
        proc = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            paths = resolve_paths(env)
            deadline = time.monotonic() + timeout
            while not (paths.host_file.exists() and paths.socket_path.exists()):
                assert proc.poll() is None, out.read_text()
                assert time.monotonic() < deadline, "the host did not start"
                time.sleep(0.05)
            yield proc
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def ask(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    """``goalkeeper ARGS --json`` run in this process (against the daemon), its JSON answer."""
    from core.cli import main

    capsys.readouterr()
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def effects(tmp_path: Path) -> list[str]:
    """What the test steps' ``effect`` wrote to ``tmp_path/effects.log``, in order."""
    path = tmp_path / "effects.log"
    return path.read_text().split() if path.exists() else []


def wait_for(predicate: Any, timeout: float) -> float:
    """Seconds it took ``predicate`` to hold (fails after ``timeout``)."""
    start = time.monotonic()
    while not predicate():
        assert time.monotonic() - start < timeout, "condition not met"
        time.sleep(0.1)
    return time.monotonic() - start
