"""A command in a terminal: a private tmux server (its own socket in /tmp) for the real TUIs.

:class:`Terminal` runs one shell script in a detached session and reads its screen, types into
it and takes it down again; the real-CLI tests of Codex's TUI and Claude Code's TUI use it.
Without tmux they skip, except under ``CI=true`` (:func:`need_tmux`: a failure there).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any


async def eventually(condition: Callable[[], Any], timeout: float = 30.0, what: str = "",
                     state: Callable[[], Any] | None = None) -> Any:
    """:func:`wait_for` for async tests: the event loop keeps running meanwhile. ``state``
    describes what was seen instead, for the failure message."""
    import asyncio

    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            seen = f"; saw {state()!r}" if state is not None else ""
            raise AssertionError(f"timed out after {timeout:g} s waiting for "
                                 f"{what or condition}{seen}")
        await asyncio.sleep(0.1)
    return value


def wait_for(condition: Callable[[], Any], timeout: float = 30.0, what: str = "") -> Any:
    """Poll ``condition`` (real time: these tests drive real processes) until it is truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what or condition}")
        time.sleep(0.1)


def need_tmux(what: str = "the TUI tests") -> None:
    """Skip without tmux, except under ``CI=true`` (a failure there)."""
    import pytest

    if shutil.which("tmux") is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true and tmux is missing: {what} need it")
        pytest.skip(f"tmux is not installed: {what} need it")


class Terminal:
    """``argv`` run in ``cwd`` with exactly ``env`` (``exec``: the pane's process is the
    command itself), in a 200×50 tmux window. Owns the tmux server and its directory."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> None:
        tmux = shutil.which("tmux")
        if tmux is None:
            raise RuntimeError("tmux is not installed")
        self.tmux = tmux
        self.dir = Path(tempfile.mkdtemp(prefix="gk-tui-"))  # short: a socket path limit
        self.socket = self.dir / "tmux.sock"
        script = self.dir / "run.sh"
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
        script.write_text(f"#!/bin/sh\n{exports}cd {shlex.quote(str(cwd))}\n"
                          f"exec {' '.join(shlex.quote(a) for a in argv)}\n")
        script.chmod(0o755)
        self._run("new-session", "-d", "-s", "gk", "-x", "200", "-y", "50", str(script))
        self.pid = int(wait_for(lambda: self._run(
            "list-panes", "-t", "gk", "-F", "#{pane_pid}").strip(), 10, "the tmux pane"
        ).splitlines()[0])

    def _run(self, *args: str) -> str:
        done = subprocess.run([self.tmux, "-S", str(self.socket), *args], capture_output=True,
                              text=True, timeout=30, check=False)
        return done.stdout

    def screen(self) -> str:
        return self._run("capture-pane", "-p", "-t", "gk", "-S", "-200")

    def wait_screen(self, text: str, timeout: float = 30.0) -> str:
        return str(wait_for(lambda: self.screen() if text in self.screen() else "", timeout,
                            f"{text!r} on the TUI screen"))

    async def shows(self, text: str, timeout: float = 30.0) -> str:
        """:meth:`wait_screen` while the event loop runs (an engine working meanwhile)."""
        return str(await eventually(lambda: self.screen() if text in self.screen() else "",
                                    timeout, f"{text!r} on the TUI screen"))

    def send(self, *keys: str) -> None:
        self._run("send-keys", "-t", "gk", *keys)

    def type_line(self, text: str) -> None:
        self._run("send-keys", "-t", "gk", "-l", text)
        time.sleep(0.3)
        self._run("send-keys", "-t", "gk", "Enter")

    def kill_server(self) -> None:
        """The terminal goes away: its process gets SIGHUP."""
        self._run("kill-server")

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            self.kill_server()
        shutil.rmtree(self.dir, ignore_errors=True)
