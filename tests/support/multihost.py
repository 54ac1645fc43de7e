"""Host processes on one PostgreSQL database (:class:`HostProc`), each with its own data
directory and its own scripted agent home (tests/multihost/agent.py); waiting on them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from core.hosts.control import NoHostRunning, send_request
from core.paths import resolve_paths

ROOT = Path(__file__).resolve().parents[2]


#: short leases, so that a killed host is offline in two seconds
FAST = {"host_heartbeat_seconds": 0.5, "host_stale_seconds": 2, "host_ping_timeout_seconds": 2,
        "stable_seconds": 0, "resume_margin_seconds": 0, "resume_jitter_seconds": 0,
        "auto_resume_default": True, "codex_enabled": False, "claude_enabled": False,
        "pipeline_enabled": False, "account": "team", "runner_start_timeout_seconds": 10}


def soon(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


def wait_for(predicate: Callable[[], Any], timeout: float = 30, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.05)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value)


class HostProc:
    """One host process (``tests/multihost/hostproc.py``) and its agent home."""

    def __init__(self, root: Path, host_id: str, url: str, *, wrap: tuple[str, ...] = (),
                 **settings: Any) -> None:
        self.host_id = host_id
        self.wrap = wrap  # a command the host runs under, e.g. ("faketime", "+2h")
        self.home = root / host_id / "gk"
        self.agent = root / host_id / "agent"
        self.home.mkdir(parents=True)
        self.agent.mkdir(parents=True)
        values = {**FAST, "store_url": url, "host_id": host_id, **settings}
        (self.home / "config.toml").write_text(
            "".join(f"{k} = {toml_value(v)}\n" for k, v in values.items()))
        self.paths = resolve_paths({"GOALKEEPER_HOME": str(self.home)})
        self.proc: subprocess.Popen[str] | None = None
        self.log = root / host_id / "host.out"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GOALKEEPER_")}
        return env | {"GOALKEEPER_HOME": str(self.home), "FAKE_AGENT_HOME": str(self.agent),
                      "CLAUDE_CONFIG_DIR": str(self.home / "no-claude"),
                      "CODEX_HOME": str(self.home / "no-codex")}

    def start(self, wait_for_file: Path | None = None) -> HostProc:
        env = self.env() | ({"GK_WAIT_FOR": str(wait_for_file)} if wait_for_file else {})
        with open(self.log, "a") as out:
            self.proc = subprocess.Popen([*self.wrap, sys.executable, "-m",
                                          "tests.multihost.hostproc"],
                                         env=env, cwd=ROOT, stdout=out,
                                         stderr=subprocess.STDOUT, text=True)
        return self

    def ping(self) -> dict[str, Any] | None:
        try:
            return send_request(self.paths.socket_path, {"op": "ping"}, timeout=2)
        except (NoHostRunning, OSError, ValueError):
            return None

    def ready(self, timeout: float = 60) -> HostProc:
        def up() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(f"host {self.host_id} exited:\n{self.log.read_text()}")
            reply = self.ping()
            return bool(reply and reply.get("listening"))

        wait_for(up, timeout, f"host {self.host_id} up and listening")
        return self

    def ask(self, request: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        return send_request(self.paths.socket_path, {"origin": "test", **request},
                            timeout=timeout)

    def cli(self, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "core", *args], capture_output=True,
                              text=True, env=self.env(), cwd=ROOT, timeout=timeout)

    def cli_json(self, *args: str) -> Any:
        out = self.cli(*args, "--json")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    def goals(self, goals: dict[str, dict[str, Any]]) -> None:
        self._write("goals.json", goals)

    def quota(self, readings: list[dict[str, Any]]) -> None:
        self._write("quota.json", readings)

    def command(self, command: dict[str, Any]) -> None:
        with open(self.agent / "commands.jsonl", "a") as handle:
            handle.write(json.dumps(command) + "\n")

    def _write(self, name: str, data: Any) -> None:
        tmp = self.agent / f".{name}.tmp"
        tmp.write_text(json.dumps(data))
        tmp.replace(self.agent / name)

    def starts(self) -> list[dict[str, Any]]:
        path = self.agent / "starts.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if (
            path.exists()) else []

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
