#!/usr/bin/env python3
"""Resume-policy figures: what the policies cost where they run.

Run from the repository root:  .venv/bin/python bench/policy_bench.py [--goals 1000]

Prints:
  1. allowed hours: ``next_allowed`` per call (a week-long search with DST offsets, two zones);
  2. a reset with N goals waiting on one window, one slot (``max_concurrent_resumes = 1``): the
     scheduler pass that fires them all — one resumes, the others are deferred "waiting for a
     slot" — and the cost per claim (each counts the slot holders with a store query inside its
     transaction); then the pass after the first goal finishes (the next one starts);
  3. the same reset with no slot limit (every goal starts), for comparison.
Fake clock, real SQLite; no figure is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.clock import FakeClock
from core.engine import Engine
from core.models import GoalState, PauseReason
from core.paths import resolve_paths
from core.policies.hours import parse_hours
from core.settings import Settings
from tests.support.fakes import FakeProvider, reading, settled


def bench_hours(calls: int = 2000) -> None:
    weekly = parse_hours("Mon-Fri 19:00-08:00, Sat-Sun 00:00-24:00")
    assert weekly is not None
    for zone in ("Europe/Berlin", "America/New_York"):
        hours = weekly.in_zone(ZoneInfo(zone))
        start = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # Monday morning, a DST change ahead
        t0 = time.perf_counter()
        for i in range(calls):
            hours.next_allowed(start + timedelta(minutes=7 * i))
        each = (time.perf_counter() - t0) / calls * 1e6
        print(f"allowed hours, next_allowed in {zone}: {each:.0f} µs per call ({calls} calls)")


async def bench_reset(goals: int, slots: int) -> None:
    home = tempfile.mkdtemp(prefix="gk-policy-bench-")
    clock = FakeClock()
    fake = FakeProvider(clock)
    reset = clock.now() + timedelta(hours=1)
    fake.readings = [reading("fake:5h", 100, clock.now(), reset, limit_reached=True)]
    for i in range(goals):
        fake.observe(f"fake:g{i:04d}", GoalState.PAUSED, reason=PauseReason.QUOTA,
                     resets_at=reset, auto_resume=True, windows=("fake:5h",))
    fake.fresh_readings = lambda: [reading("fake:5h", 1, clock.now(),
                                           clock.now() + timedelta(hours=5))]
    engine = Engine(resolve_paths({"GOALKEEPER_HOME": home}),
                    Settings(resume_jitter_seconds=0, stable_seconds=0,
                             max_concurrent_resumes=slots), [fake], clock, random.Random(1))
    await engine.start()
    await settled(engine)
    await engine.scheduler.stop()  # the passes below are the ones measured
    clock.advance(3600 + 46)
    t0 = time.perf_counter()
    await engine.scheduler.tick()
    elapsed = time.perf_counter() - t0
    label = f"{slots} slot" if slots else "no slot limit"
    print(f"reset with {goals} goals waiting on one window, {label}: the pass took "
          f"{elapsed * 1000:.0f} ms ({elapsed / goals * 1000:.2f} ms per claim); "
          f"runner starts {len(fake.starts)}")
    if slots:
        first = engine.goals[fake.starts[0][0]]
        fake.sink.goal_finished(first.id, first.fence)
        await engine.drain()
        t0 = time.perf_counter()
        await engine.scheduler.tick()
        elapsed = time.perf_counter() - t0
        print(f"  the first one finished: the next pass took {elapsed * 1000:.0f} ms; "
              f"runner starts {len(fake.starts)}")
    await engine.stop()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--goals", type=int, default=1000)
    args = parser.parse_args()
    bench_hours()
    await bench_reset(args.goals, 1)
    await bench_reset(args.goals, 0)


if __name__ == "__main__":
    asyncio.run(main())
