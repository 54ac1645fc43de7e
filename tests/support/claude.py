"""Helpers of the Claude tests: a sink that records what a provider reports (for tests that run a
provider on its own), a scripted fake ``claude`` on PATH, a live TUI session file."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.clock import Clock, FakeClock
from core.engine import Engine
from core.models import PauseReason, QuotaReading
from core.paths import Paths
from core.providers.base import GoalObservation, LimitHit
from core.providers.claude.provider import ClaudeProvider
from core.providers.claude.runner import HeadlessRun, RunSpec, command
from core.providers.procstat import start_time
from core.retry.policy import RetryPolicy
from core.settings import Settings
from tests.claude.builders import assistant, limit_stop, system_notice, user, write_session
from tests.support.engine import EngineFactory
from tests.support.jsonl import read_jsonl

FAKE_CLAUDE = Path(__file__).resolve().parents[1] / "claude" / "fake_claude.py"


class RecordingSink:
    def __init__(self) -> None:
        self.observed: list[GoalObservation] = []
        self.readings: list[QuotaReading] = []
        self.reports: list[tuple[Any, ...]] = []
        self.forgotten: list[tuple[str, str]] = []
        self.notes: list[tuple[str, str, str]] = []

    def goal_observed(self, provider: str, observation: GoalObservation) -> None:
        self.observed.append(observation)

    def quota_observed(self, reading: QuotaReading) -> None:
        self.readings.append(reading)

    def goal_progress(self, goal_id: str, fence: int, detail: str, data: dict[str, Any]) -> None:
        self.reports.append(("progress", goal_id, fence, detail))

    def goal_limited(self, goal_id: str, fence: int, hit: LimitHit) -> None:
        self.reports.append(("limited", goal_id, fence, hit))

    def goal_finished(self, goal_id: str, fence: int, detail: str | None = None) -> None:
        self.reports.append(("finished", goal_id, fence, detail))

    def goal_failed(self, goal_id: str, fence: int, detail: str) -> None:
        self.reports.append(("failed", goal_id, fence, detail))

    def goal_paused(self, goal_id: str, fence: int, reason: PauseReason, detail: str) -> None:
        self.reports.append(("paused", goal_id, fence, detail))

    def goal_rested(self, goal_id: str, fence: int, detail: str | None = None) -> None:
        self.reports.append(("rested", goal_id, fence, detail))

    def goal_noted(self, goal_id: str, event: str, reason: str,
                   detail: dict[str, Any] | None = None) -> None:
        self.notes.append((goal_id, event, reason))

    async def forget_goal(self, goal_id: str, origin: str = "test") -> Any:
        self.forgotten.append((goal_id, origin))

    async def start_goal(self, goal_id: str, origin: str = "test") -> Any:
        raise NotImplementedError

    async def resume(self, goal_id: str, origin: str = "test", trigger: Any = None,
                     context: dict[str, Any] | None = None) -> Any:
        raise NotImplementedError


async def started_provider(settings: Settings, paths: Paths, clock: Clock,
                           environ: Mapping[str, str]) -> ClaudeProvider:
    """A Claude provider on its own (its reports go to a :class:`RecordingSink`), started."""
    provider = ClaudeProvider(settings, paths, clock, environ)
    provider.attach(RecordingSink())  # type: ignore[arg-type]
    await provider.start()
    return provider


class FakeClaude:
    """Puts ``tests/claude/fake_claude.py`` on a PATH as ``claude`` and scripts it."""

    def __init__(self, root: Path) -> None:
        import json
        import os
        import sys

        self._json = json
        self.bin_dir = root / "bin"
        self.bin_dir.mkdir(parents=True)
        self.log = root / "claude-invocations.jsonl"
        self.script = root / "claude-script.json"
        exe = self.bin_dir / "claude"
        exe.write_text(f"#!{sys.executable}\nimport runpy, sys\nsys.argv[0] = 'claude'\n"
                       f"runpy.run_path({str(FAKE_CLAUDE)!r}, "
                       "run_name='__main__')\n")
        exe.chmod(0o755)
        self.env = {"PATH": f"{self.bin_dir}{os.pathsep}/usr/bin:/bin",
                    "FAKE_CLAUDE_LOG": str(self.log), "FAKE_CLAUDE_SCRIPT": str(self.script)}
        self.play([])

    def play(self, *plays: object) -> None:
        self.script.write_text(self._json.dumps({"plays": list(plays) or [{"events": []}]}))
        Path(str(self.script) + ".count").unlink(missing_ok=True)

    def entries(self) -> list[dict[str, object]]:
        return read_jsonl(self.log)

    def invocations(self) -> list[dict[str, object]]:
        return [e for e in self.entries() if "argv" in e]

    def signals(self) -> list[str]:
        return [str(e["signal"]) for e in self.entries() if "signal" in e]


def live_session(config_dir: Path, session_id: str, pid: int | None = None,
                 kind: str = "interactive", entrypoint: str = "cli") -> Path:
    """``<config>/sessions/<pid>.json`` as a running Claude Code TUI writes it (B0); the pid is
    this test's own (or its parent's), so it is alive."""
    pid = pid or os.getpid()
    start = start_time(pid)
    path = config_dir / "sessions" / f"{pid}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": pid, "sessionId": session_id, "cwd": "/home/dev/myrepo",
                                "startedAt": 1783400000000, "procStart": start,
                                "version": "2.1.328", "kind": kind, "entrypoint": entrypoint,
                                "status": "idle"}))
    return path


#: the session of the headless-run tests (tests/claude/test_runner.py)
HEADLESS_SESSION = "3b9e2f4a-1c2d-4e5f-8a6b-7c8d9e0f1a2b"


def make_run(fake: FakeClaude, tmp_path: Path, *, keep: bool = False, grace: float = 5.0,
             sink: RecordingSink | None = None,
             retry: RetryPolicy | None = None) -> tuple[HeadlessRun, RecordingSink]:
    cwd = tmp_path / "repo"
    cwd.mkdir(exist_ok=True)
    env = {**fake.env, "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config")}
    argv = command(str(fake.bin_dir / "claude"), HEADLESS_SESSION, "Continue, please.")
    spec = RunSpec("claude:" + HEADLESS_SESSION, 7, argv, str(cwd), env, keep, UTC,
                   retry or RetryPolicy(retries=2, backoff_initial=30, backoff_max=900))
    sink = sink or RecordingSink()
    limited_calls: list[Any] = []
    run = HeadlessRun(spec, sink, FakeClock(datetime(2026, 7, 7, 14, tzinfo=UTC)),  # type: ignore[arg-type]
                      lambda goal, ended: limited_calls.append(ended), grace)
    return run, sink


#: the session of the end-to-end scenarios (tests/claude/test_scenarios.py)
SCENARIO_SESSION = "5e55e55e-1c2d-4e5f-8a6b-7c8d9e0f1a2b"


GOAL = f"claude:{SCENARIO_SESSION}"


@dataclass
class World:
    config: Path
    repo: Path
    environ: dict[str, str]
    fake: FakeClaude

    def armed(self) -> None:
        """The TUI's notice that it will continue by itself at the reset (B0)."""
        write_session(self.config, [system_notice(
            "Usage limit reached · continuing automatically at 2pm · esc to cancel",
            "2026-07-07T11:59:00.004Z", session=SCENARIO_SESSION, cwd=str(self.repo))],
            session=SCENARIO_SESSION, cwd=str(self.repo), append=True)

    def session(self, version: str = "2.1.200", reset: str = "2pm (UTC)") -> Path:
        cwd = str(self.repo)
        return write_session(self.config, [
            user("Make the integration tests pass", "2026-07-07T11:00:00.000Z",
                 session=SCENARIO_SESSION, cwd=cwd, version=version),
            assistant("msg_w1", "2026-07-07T11:30:00.000Z", request="req_w1",
                      session=SCENARIO_SESSION, cwd=cwd, version=version),
            limit_stop(f"You've hit your session limit · resets {reset}",
                       "2026-07-07T11:59:00.000Z", session=SCENARIO_SESSION, cwd=cwd,
                       version=version),
        ])


async def start(make_engine: EngineFactory, paths: Paths, clock: FakeClock, world: World,
                **settings: object) -> tuple[Engine, ClaudeProvider]:
    config = Settings(resume_jitter_seconds=0, **settings)  # type: ignore[arg-type]
    provider = ClaudeProvider(config, paths, clock, world.environ)
    engine = await make_engine(provider, settings=config)
    return engine, provider


async def run_until(clock: FakeClock, when: datetime, step: float = 15.0) -> None:
    await clock.run_for((when - clock.now()).total_seconds(), step=step)
