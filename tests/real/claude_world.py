"""A throw-away world for the real ``claude``: its config dir, home, project and environment,
print-mode runs, and the TUI under a private tmux server.

Nothing here touches the user's own Claude Code: ``HOME`` and ``CLAUDE_CONFIG_DIR`` are temp
dirs, the API is :mod:`tests.real.claude_mock` on 127.0.0.1 (B0: ``ANTHROPIC_BASE_URL``,
``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``; a made-up ``CLAUDE_CODE_OAUTH_TOKEN`` for the
subscriber path, ``ANTHROPIC_API_KEY=dummy`` for the API-key one). ``CLAUDE_CODE_MAX_RETRIES=0``
stops the CLI's own retries of a transient 429 (10 of them, minutes in all). No permission flag
is ever passed. Every process started here is stopped by :meth:`Tui.close` / the fixtures.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.providers.procstat import state
from tests.real.terminal import Terminal, wait_for
from tests.support.jsonl import read_jsonl

OAUTH_TOKEN = "sk-ant-oat01-goalkeeper-contract-test-not-a-real-token"
PRINT_TIMEOUT = 90.0


def encode_cwd(cwd: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in cwd)


@dataclass
class PrintRun:
    """One ``claude -p … --output-format stream-json --verbose`` run."""

    code: int
    events: list[dict[str, Any]]
    stderr: str

    @property
    def session_id(self) -> str:
        for event in self.events:
            if isinstance(event.get("session_id"), str):
                return str(event["session_id"])
        raise AssertionError(f"no session id in {self.events!r}")

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == kind]

    @property
    def result(self) -> dict[str, Any]:
        (result,) = self.of_type("result")
        return result


@dataclass
class ClaudeWorld:
    """A config dir, a home and a project (a git repository on branch ``feature/goals``).

    ``in_home``: laid out as a person's — ``root`` is ``$HOME``, the config dir is the default
    ``~/.claude`` (no ``CLAUDE_CONFIG_DIR``), the project is ``~/src/app``."""

    root: Path
    binary: Path
    api_url: str
    auth: str = "oauth"  # or "api_key"
    extra_env: dict[str, str] = field(default_factory=dict)
    in_home: bool = False

    def __post_init__(self) -> None:
        if self.in_home:
            self.config, self.home = self.root / ".claude", self.root
            self.project = self.root / "src" / "app"
        else:
            self.config = self.root / "claude-config"
            self.home = self.root / "home"
            self.project = self.root / "project"
        for directory in (self.config, self.home, self.project):
            directory.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "-b", "feature/goals", str(self.project)],
                       check=True, capture_output=True)
        # the TUI's first-run screens check connectivity to api.anthropic.com: skip them
        # (without CLAUDE_CONFIG_DIR the CLI keeps that file as ~/.claude.json)
        onboarding = (self.home if self.in_home else self.config) / ".claude.json"
        onboarding.write_text(json.dumps({
            "hasCompletedOnboarding": True, "lastOnboardingVersion": "2.1.328", "theme": "dark",
            "projects": {str(self.project): {"hasTrustDialogAccepted": True,
                                             "hasCompletedProjectOnboarding": True}}}))

    @property
    def env(self) -> dict[str, str]:
        env = {"HOME": str(self.home), "CLAUDE_CONFIG_DIR": str(self.config),
               "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "TZ": "UTC",
               "ANTHROPIC_BASE_URL": self.api_url,
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "CLAUDE_CODE_MAX_RETRIES": "0"}
        if self.in_home:
            del env["CLAUDE_CONFIG_DIR"]
        if self.auth == "oauth":
            env["CLAUDE_CODE_OAUTH_TOKEN"] = OAUTH_TOKEN
        else:
            env["ANTHROPIC_API_KEY"] = "dummy"
        return {**env, **self.extra_env}

    def transcript(self, session_id: str) -> Path:
        return self.config / "projects" / encode_cwd(str(self.project)) / f"{session_id}.jsonl"

    def records(self, session_id: str) -> list[dict[str, Any]]:
        return read_jsonl(self.transcript(session_id))

    def print_mode(self, prompt: str, *, resume: str | None = None,
                   env: dict[str, str] | None = None) -> PrintRun:
        argv = [str(self.binary), "-p"]
        if resume:
            argv += ["--resume", resume]
        argv += [prompt, "--output-format", "stream-json", "--verbose"]
        done = subprocess.run(argv, cwd=self.project, env={**self.env, **(env or {})},
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=PRINT_TIMEOUT, check=False)
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        return PrintRun(done.returncode, events, done.stderr)

    def settings(self, data: dict[str, Any]) -> None:
        (self.config / "settings.json").write_text(json.dumps(data, indent=2))

    def live_processes(self) -> list[dict[str, Any]]:
        found = []
        for path in sorted((self.config / "sessions").glob("*.json")):
            with contextlib.suppress(OSError, ValueError):
                found.append(json.loads(path.read_text()))
        return found


class Tui(Terminal):
    """The interactive ``claude`` of ``world`` in its own terminal."""

    def __init__(self, world: ClaudeWorld, *args: str) -> None:
        self.world = world
        super().__init__([str(world.binary), *args], world.env, world.project)

    def alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return state(self.pid) != "Z"

    def session_file(self) -> Path:
        return self.world.config / "sessions" / f"{self.pid}.json"

    def close_terminal(self) -> None:
        """The terminal goes away (tmux server killed: SIGHUP), as when its window is closed."""
        self.kill_server()
        wait_for(lambda: not self.alive(), 15, "claude to exit after SIGHUP")

    def kill(self) -> None:
        """``kill -9`` on the TUI during its wait: its ``sessions/<pid>.json`` stays behind."""
        os.kill(self.pid, signal.SIGKILL)
        wait_for(lambda: not self.alive(), 15, "claude to die")

    def close(self) -> None:
        """Leave no tmux and no claude process behind, whatever state the test left."""
        self.kill_server()
        with contextlib.suppress(AssertionError):
            wait_for(lambda: not self.alive(), 10)
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        self.remove()
