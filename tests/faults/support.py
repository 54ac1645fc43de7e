"""Running the real command and a real daemon against a data directory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOALKEEPER_")}
    return env | {"GOALKEEPER_HOME": str(home), **extra}


def run(home: Path, *args: str, timeout: float = 60,
        **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "core", *args], capture_output=True,
                          text=True, env=env_for(home, **extra), cwd=ROOT, timeout=timeout)


def status_json(home: Path, ok: bool = True) -> dict[str, Any]:
    out = run(home, "status", "--json")
    assert out.returncode == 0 or not ok, out.stderr
    data: dict[str, Any] = json.loads(out.stdout)
    return data


@contextmanager
def daemon(home: Path, goals: bool = True, **extra: str) -> Iterator[subprocess.Popen[str]]:
    """A ``goalkeeper daemon`` with the demo goals, up (and showing them, with ``goals``);
    stopped afterwards."""
    env = env_for(home, GOALKEEPER_DEMO_ENABLED="true", **extra)
    proc = subprocess.Popen([sys.executable, "-m", "core", "daemon"], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(lambda: (home / "host.json").exists() and (not goals or bool(
            status_json(home)["goals"])), proc)
        yield proc
    finally:
        stop(proc)


def wait_for(predicate: Any, proc: subprocess.Popen[str] | None = None,
             timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the daemon exited: {proc.stdout.read() if proc.stdout else ''}")
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.1)


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        with_signal(proc, signal.SIGCONT)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    if proc.stdout:
        proc.stdout.close()


def with_signal(proc: subprocess.Popen[str], sig: int) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
