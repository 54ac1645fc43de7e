#!/usr/bin/env python3
"""Codex goals waiting for quota: app-server spawns and wake-ups per hour, and early resets.

Run from the repository root:  .venv/bin/python bench/codex_wait.py [--hours 6] [--seed 1]

The engine and the Codex provider run on a fake clock (moved a minute at a time) against the
fake ``codex`` of ``tests/codex/fake_codex.py``, so hours pass in seconds; every ``codex``
process the provider starts is counted from the fake's invocation log. Prints:

  1. nothing waiting: app-server spawns and scheduler wake-ups per hour (target 0 spawns);
  2. one goal waiting for a reset ``--hours`` away, the quota never coming back early: spawns
     and wake-ups per waiting hour (target ≤ 6 spawns/hour);
  3. early resets at random instants before the scheduled reset: the time from the reset to the
     resume (target ≤ one poll interval + margin: 15 min + the pre-resume check).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import stat
import statistics
import sys
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.clock import FakeClock
from core.engine import Engine
from core.models import GoalState
from core.paths import resolve_paths
from core.providers.codex.config import from_settings
from core.providers.codex.provider import CodexProvider
from core.settings import Settings
from tests.codex.fakecodex import rl
from tests.codex.fixtures import T0, THREAD_A, CodexHome, epoch, five_and_week, goal, meta
from tests.codex.fixtures import token_count as token_line

H = timedelta(hours=1)
FAKE = Path(__file__).resolve().parents[1] / "tests" / "codex" / "fake_codex.py"
GID = f"codex:{THREAD_A}"


class World:
    """One fresh Codex home, fake ``codex`` and engine data directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.fake = root / "fake"
        (self.fake / "bin").mkdir(parents=True)
        exe = self.fake / "bin" / "codex"
        exe.write_text(f"#!{sys.executable}\n" + FAKE.read_text())
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
        self.home = CodexHome(root / "codex-home")
        self.repo = root / "repo"
        (self.repo / ".git").mkdir(parents=True)
        self.env = {**os.environ, "CODEX_HOME": str(self.home.root),
                    "FAKE_CODEX_DIR": str(self.fake),
                    "PATH": f"{self.fake / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
        os.environ["FAKE_CODEX_DIR"] = str(self.fake)

    def script(self, **plan: Any) -> None:
        (self.fake / "script.json").write_text(json.dumps(plan))

    def spawns(self) -> int:
        path = self.fake / "log.jsonl"
        if not path.exists():
            return 0
        return sum(1 for line in path.read_text().splitlines()
                   if json.loads(line).get("argv", [None])[:1] == ["app-server"])

    def limited(self, reset: Any) -> None:
        self.home.rollout(THREAD_A, T0 - H, meta(THREAD_A, T0 - H, cwd=str(self.repo)),
                          goal(THREAD_A, "active", T0 - H, objective="bench"),
                          token_line(T0 - timedelta(minutes=5),
                                     five_and_week(100.0, reset, 40.0, T0 + 90 * H)),
                          goal(THREAD_A, "usageLimited", T0 - timedelta(minutes=5),
                               objective="bench"))

    async def engine(self, clock: FakeClock, seed: int) -> Engine:
        settings = Settings(resume_jitter_seconds=0, auto_resume_default=True,
                            stable_seconds=0, codex_app_server_timeout_seconds=10)
        provider = CodexProvider(from_settings(settings, self.env), clock,
                                 rng=random.Random(seed))
        paths = resolve_paths({"GOALKEEPER_HOME": str(self.root / "gk")})
        engine = Engine(paths, settings, [provider], clock, random.Random(seed))
        await engine.start()
        await engine.drain()
        return engine


async def settle(engine: Engine) -> None:
    for _ in range(200):
        await asyncio.sleep(0.005)
        if engine.scheduler.sleeping:
            await engine.drain()
            if engine.scheduler.sleeping:
                return


async def run_hours(engine: Engine, clock: FakeClock, hours: float,
                    stop: Any = None) -> float:
    """Move the clock a minute at a time; returns the fake seconds elapsed."""
    elapsed = 0.0
    while elapsed < hours * 3600:
        clock.advance(60)
        elapsed += 60
        await settle(engine)
        if stop is not None and stop():
            break
    return elapsed


async def nothing_waiting(root: Path, hours: float) -> tuple[float, float]:
    world = World(root)
    world.script()
    clock = FakeClock(T0)
    engine = await world.engine(clock, 1)
    wakes = engine.scheduler.wakeups
    await run_hours(engine, clock, hours)
    spawns, wakes = world.spawns(), engine.scheduler.wakeups - wakes
    await engine.stop()
    return spawns / hours, wakes / hours


async def one_waiting(root: Path, hours: float, seed: int) -> tuple[float, float]:
    world = World(root)
    world.limited(T0 + (hours + 1) * H)
    world.script(goals={THREAD_A: {"objective": "bench", "status": "usageLimited",
                                   "tokensUsed": 1}},
                 rate_limits=[rl(100, epoch(T0 + (hours + 1) * H), 40, epoch(T0 + 90 * H))])
    clock = FakeClock(T0)
    engine = await world.engine(clock, seed)
    wakes = engine.scheduler.wakeups
    await run_hours(engine, clock, hours)
    spawns, wakes = world.spawns(), engine.scheduler.wakeups - wakes
    assert engine.goals[GID].state is GoalState.PAUSED
    await engine.stop()
    return spawns / hours, wakes / hours


async def early_reset(root: Path, seed: int) -> float:
    """Seconds from an early reset (at a random minute 1–4 h in) to the resume."""
    rng = random.Random(seed)
    world = World(root)
    scheduled = T0 + 5 * H
    world.limited(scheduled)
    codex_goal = {THREAD_A: {"objective": "bench", "status": "usageLimited", "tokensUsed": 1}}
    world.script(goals=codex_goal, after_active=[["turn_started"]],
                 rate_limits=[rl(100, epoch(scheduled), 40, epoch(T0 + 90 * H))])
    clock = FakeClock(T0)
    engine = await world.engine(clock, seed)
    reset_at = T0 + timedelta(minutes=rng.randint(60, 240))
    await run_hours(engine, clock, (reset_at - T0).total_seconds() / 3600)
    world.script(goals=codex_goal, after_active=[["turn_started"]],
                 rate_limits=[rl(0, epoch(reset_at + 5 * H), 40, epoch(T0 + 90 * H))],
                 access=[{"ordinaryUsageAllowed": True}])
    await run_hours(engine, clock, 3, stop=lambda: engine.goals[GID].state is GoalState.RUNNING)
    assert engine.goals[GID].state is GoalState.RUNNING, engine.goals[GID]
    took = (clock.now() - reset_at).total_seconds()
    await engine.stop()
    return took


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hours", type=float, default=6.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--resets", type=int, default=5, help="early resets to time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        spawns, wakes = await nothing_waiting(root / "idle", 2.0)
        print(f"nothing waiting:  {spawns:.1f} app-server spawns/h, {wakes:.1f} wake-ups/h "
              "(target 0 spawns)")
        spawns, wakes = await one_waiting(root / "wait", args.hours, args.seed)
        print(f"one goal waiting ({args.hours:g} h, no early reset): {spawns:.1f} app-server "
              f"spawns/h, {wakes:.1f} wake-ups/h (target <= 6 spawns/h)")
        times = [await early_reset(root / f"early{i}", args.seed + i)
                 for i in range(args.resets)]
        print(f"early reset -> resume over {len(times)} resets: median "
              f"{statistics.median(times) / 60:.1f} min, max {max(times) / 60:.1f} min "
              "(target <= one poll interval + margin, 15 min + the pre-resume check)")


if __name__ == "__main__":
    asyncio.run(main())
