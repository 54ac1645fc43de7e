"""A scripted fake agent for host processes: its "home" is a directory the test writes into.

``goals.json`` — ``{id: {"state", "reason", "windows", "resets_at", "title"}}``: the goals the
agent shows (re-read when the file changes). ``quota.json`` — a list of ``{"window", "used",
"resets_at", "limit_reached"}``: what the agent reads of its quota, stamped with the time it
was read (missing: the agent cannot read its quota). ``commands.jsonl`` — lines the agent acts
on once each: ``{"finish": id}`` (the running goal completes), ``{"limit": id, "resets_at"}``.
Every runner start, pause and cancel is appended to ``starts.jsonl`` / ``stops.jsonl`` with the
host's pid, so a test counts them across processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from core.clock import Clock, parse_iso
from core.models import Exactness, Goal, GoalState, PauseReason, QuotaReading
from core.providers.base import GoalObservation, LimitHit, Provider, StartOutcome

POLL_SECONDS = 0.1


class ScriptedAgent(Provider):
    """The ``fake`` provider of a host process; owns its watch task."""

    name = "fake"

    def __init__(self, home: Path, clock: Clock) -> None:
        super().__init__()
        self.home = home
        self.clock = clock
        self.fences: dict[str, int] = {}
        self._seen: dict[str, float] = {}
        self._done_commands = 0
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.ensure_future(self._watch())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _changed(self, name: str) -> bool:
        try:
            stamp = (self.home / name).stat().st_mtime_ns
        except FileNotFoundError:
            return False
        if self._seen.get(name) == stamp:
            return False
        self._seen[name] = stamp
        return True

    async def _watch(self) -> None:
        while True:
            if self._changed("goals.json"):
                for obs in self._observations():
                    self.sink.goal_observed(self.name, obs)
            if self._changed("quota.json"):
                for reading in self._readings():
                    self.sink.quota_observed(reading)
            self._commands()
            await asyncio.sleep(POLL_SECONDS)

    def _json(self, name: str, default: Any) -> Any:
        try:
            return json.loads((self.home / name).read_text())
        except (OSError, ValueError):
            return default

    def _observations(self) -> list[GoalObservation]:
        now = self.clock.now()
        return [GoalObservation(
            id=goal_id, title=spec.get("title", goal_id), state=GoalState(spec["state"]),
            observed_at=now,
            pause_reason=PauseReason(spec["reason"]) if spec.get("reason") else None,
            windows=tuple(spec.get("windows", ["fake:5h"])),
            resets_at=parse_iso(spec.get("resets_at")))
            for goal_id, spec in self._json("goals.json", {}).items()]

    def _readings(self) -> list[QuotaReading]:
        now = self.clock.now()
        return [QuotaReading(window_id=r["window"], provider=self.name, label=r["window"],
                             used_percent=r["used"], resets_at=parse_iso(r.get("resets_at")),
                             window_seconds=18000, limit_reached=r.get("limit_reached"),
                             exactness=Exactness.EXACT, observed_at=now)
                for r in self._json("quota.json", [])]

    def _commands(self) -> None:
        try:
            lines = (self.home / "commands.jsonl").read_text().splitlines()
        except FileNotFoundError:
            return
        for line in lines[self._done_commands:]:
            self._done_commands += 1
            command = json.loads(line)
            if "finish" in command:
                goal = command["finish"]
                self.sink.goal_finished(goal, self.fences.get(goal, 0), "finished (scripted)")
            elif "limit" in command:
                goal = command["limit"]
                self.sink.goal_limited(goal, self.fences.get(goal, 0), LimitHit(
                    windows=("fake:5h",), resets_at=parse_iso(command.get("resets_at"))))

    def _log(self, name: str, goal: Goal, fence: int, what: str) -> None:
        entry = {"goal": goal.id, "fence": fence, "pid": os.getpid(), "what": what,
                 "at": datetime.now().astimezone().isoformat()}
        with open(self.home / name, "a") as handle:
            handle.write(json.dumps(entry) + "\n")

    async def discover(self) -> list[GoalObservation]:
        return self._observations()

    async def read_quotas(self, fresh: bool = False) -> list[QuotaReading]:
        return self._readings()

    async def start_goal(self, goal: Goal, fence: int) -> StartOutcome:
        return await self.resume_goal(goal, fence)

    async def resume_goal(self, goal: Goal, fence: int) -> StartOutcome:
        self.fences[goal.id] = fence
        self._log("starts.jsonl", goal, fence, "start")
        return StartOutcome.STARTED

    async def pause_goal(self, goal: Goal) -> None:
        self._log("stops.jsonl", goal, goal.fence, "pause")

    async def cancel_goal(self, goal: Goal) -> None:
        self._log("stops.jsonl", goal, goal.fence, "cancel")
