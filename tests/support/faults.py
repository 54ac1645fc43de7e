"""Helpers of the fault-injection suite: running the real command and a real daemon against a
data directory; small file systems (mount, fill) and capped stores."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from core.store import SqliteStore

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


def mount(target: Path, options: str) -> None:
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)], check=True,
                   capture_output=True)


def remount(target: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(target)], check=True,
                   capture_output=True)


def fill(directory: Path) -> Path:
    """Fill the file system holding ``directory`` to the last byte; returns the filler."""
    filler = directory / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                continue
    finally:
        os.close(fd)
    return filler


def cap_and_fill(store: SqliteStore) -> None:
    """Make a store refuse every new history row and reading (SQLITE_FULL) without a small
    file system: cap it at its size, then fill the free pages and the last leaf of each table
    a report writes to."""
    con = store._con
    pages = con.execute("PRAGMA page_count").fetchone()[0]
    con.execute(f"PRAGMA max_page_count = {pages}")
    inserts = {
        "history": "INSERT INTO history (at, goal, event, detail) VALUES ('x', 'filler', ?, '{}')",
        "quota_series": "INSERT INTO quota_series (window_id, observed_at, exactness) "
                        "VALUES ('filler', ?, 'exact')",
        "meta": "INSERT INTO meta VALUES (hex(randomblob(8)), ?)",
    }
    for sql in inserts.values():
        for size in (2000, 200, 20, 1):
            try:
                while True:
                    con.execute(sql, ("f" * size,))
            except sqlite3.OperationalError:
                continue


def uncap(store: SqliteStore) -> None:
    store._con.execute("PRAGMA max_page_count = 1073741823")
