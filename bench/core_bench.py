#!/usr/bin/env python3
"""Core engine figures: the resume entry point under racing threads, scheduler lateness, wake-ups.

Run from the repository root:  .venv/bin/python bench/core_bench.py [--deadlines 1000]

Prints:
  1. resume entry point: throughput and p50/p99 latency with 8 threads racing over 200 paused
     goals (every goal resumed exactly once, every other call a no-op) — real clock, real SQLite;
  2. scheduler lateness (fire time − deadline) over N deadlines spread over a minute, real clock
     (target p99 < 50 ms);
  3. scheduler wake-ups per simulated hour (fake clock): an idle host with nothing pending
     (target 0) and a host with one pending deadline five hours away (target ≤ 60).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.clock import FakeClock, SystemClock
from core.commands import Resume
from core.engine import Engine
from core.models import Goal, GoalState, PauseReason
from core.paths import resolve_paths
from core.settings import Settings
from core.store import Mutation, SqliteStore
from tests.support.fakes import FakeProvider, advance, reading, settled


def seed(home: Path, count: int, deadline_at: list[datetime] | None = None) -> list[str]:
    home.mkdir(parents=True, exist_ok=True)
    store = SqliteStore(home / "goalkeeper.db")
    now = datetime.now(UTC)
    ids = [f"fake:g{i:04d}" for i in range(count)]
    for i, goal_id in enumerate(ids):
        goal = Goal(id=goal_id, provider="fake", title=goal_id, state=GoalState.PAUSED,
                    pause_reason=PauseReason.QUOTA, auto_resume=True, windows=("fake:5h",),
                    resets_at=now - timedelta(minutes=1),
                    next_resume_at=deadline_at[i] if deadline_at else None,
                    created_at=now, updated_at=now)
        store.transact(goal_id, lambda cur, g=goal: Mutation(g, None))
    store.close()
    return ids


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def bench_resume(threads: int = 8, goals: int = 200, calls_per_goal: int = 8) -> None:
    home = Path(tempfile.mkdtemp(prefix="gk-bench-"))
    ids = seed(home, goals)
    fake = FakeProvider(SystemClock())
    engine = Engine(resolve_paths({"GOALKEEPER_HOME": str(home)}), Settings(), [fake],
                    SystemClock(), random.Random(1))
    await engine.start()
    loop = asyncio.get_running_loop()
    latencies: list[float] = []
    lock = threading.Lock()
    work = [goal for goal in ids for _ in range(calls_per_goal)]
    random.Random(2).shuffle(work)
    chunks = [work[i::threads] for i in range(threads)]

    def worker(chunk: list[str]) -> None:
        for goal_id in chunk:
            t0 = time.perf_counter()
            resume = engine.perform(Resume(goal_id), "bench")
            asyncio.run_coroutine_threadsafe(resume, loop).result()
            with lock:
                latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    pool = [threading.Thread(target=worker, args=(c,)) for c in chunks]
    for t in pool:
        t.start()
    await asyncio.to_thread(lambda: [t.join() for t in pool])
    elapsed = time.perf_counter() - t0
    await engine.stop()
    starts = len(fake.starts)
    print(f"resume entry point: {len(work)} calls from {threads} threads over {goals} goals "
          f"in {elapsed:.2f} s = {len(work) / elapsed:,.0f} calls/s; latency p50 "
          f"{pct(latencies, 0.5) * 1000:.1f} ms, p99 {pct(latencies, 0.99) * 1000:.1f} ms; "
          f"runner starts {starts} (expected {goals})")


async def bench_lateness(deadlines: int, spread: float) -> None:
    home = Path(tempfile.mkdtemp(prefix="gk-bench-"))
    start = datetime.now(UTC) + timedelta(seconds=3)
    rng = random.Random(3)
    times = [start + timedelta(seconds=rng.uniform(0, spread)) for _ in range(deadlines)]
    seed(home, deadlines, times)
    clock = SystemClock()
    fake = FakeProvider(clock)
    fake.fresh_readings = lambda: [reading("fake:5h", 1, clock.now(),
                                           clock.now() + timedelta(hours=5))]
    # every deadline starts its goal, as before resume slots existed (bench/policy_bench.py
    # measures the staggered case)
    engine = Engine(resolve_paths({"GOALKEEPER_HOME": str(home)}),
                    Settings(resume_jitter_seconds=0, max_concurrent_resumes=0), [fake], clock,
                    random.Random(4))
    await engine.start()
    while len(engine.scheduler.fired) < deadlines:
        await asyncio.sleep(0.5)
    await engine.stop()
    late = [(fired - deadline).total_seconds() * 1000 for _, deadline, fired in
            engine.scheduler.fired]
    print(f"scheduler lateness over {deadlines} deadlines in {spread:g} s: p50 "
          f"{statistics.median(late):.1f} ms, p99 {pct(late, 0.99):.1f} ms, max {max(late):.1f} ms"
          f" (target p99 < 50 ms); runner starts {len(fake.starts)}")


async def bench_wakeups() -> None:
    for label, pending in (("idle host, nothing pending", False),
                           ("one pending deadline 5 h away", True)):
        home = Path(tempfile.mkdtemp(prefix="gk-bench-"))
        clock = FakeClock()
        fake = FakeProvider(clock)
        if pending:
            reset = clock.now() + timedelta(hours=5)
            fake.readings = [reading("fake:5h", 100, clock.now(), reset, limit_reached=True)]
            fake.observe("fake:g", GoalState.PAUSED, reason=PauseReason.QUOTA, resets_at=reset,
                         auto_resume=True)
        else:
            fake.observe("fake:g", GoalState.RUNNING)
        engine = Engine(resolve_paths({"GOALKEEPER_HOME": str(home)}), Settings(), [fake],
                        clock, random.Random(5))
        await engine.start()
        await settled(engine)
        before = engine.scheduler.wakeups
        for _ in range(360):
            await advance(engine, clock, 10)
        print(f"scheduler wake-ups per hour, {label}: {engine.scheduler.wakeups - before}")
        await engine.stop()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deadlines", type=int, default=1000)
    parser.add_argument("--spread", type=float, default=60.0,
                        help="seconds over which the deadlines are spread")
    args = parser.parse_args()
    await bench_resume()
    await bench_wakeups()
    await bench_lateness(args.deadlines, args.spread)


if __name__ == "__main__":
    asyncio.run(main())
