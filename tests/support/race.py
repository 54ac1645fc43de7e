"""A process that races resume calls from several threads against the same data directory.

Used by the race tests and the resume benchmark: each process runs its own engine on the shared
database with a provider that appends one line to ``starts_file`` per runner start.
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from core.clock import SystemClock
from core.commands import Resume
from core.engine import Engine
from core.models import Goal
from core.paths import resolve_paths
from core.providers.base import StartOutcome
from core.settings import Settings
from tests.support.fakes import FakeProvider


class FileCountingProvider(FakeProvider):
    def __init__(self, starts_file: Path) -> None:
        super().__init__(SystemClock())
        self.starts_file = starts_file

    async def resume_goal(self, goal: Goal, fence: int) -> StartOutcome:
        with open(self.starts_file, "a") as handle:  # O_APPEND: one line per start, any process
            handle.write(f"{os.getpid()} {goal.id} {fence}\n")
        return StartOutcome.STARTED


def race(home: str, starts_file: str, goal_id: str, threads: int, calls: int,
         barrier: Any = None) -> dict[str, Any]:
    """Start an engine, fire ``threads × calls`` manual resumes, return outcomes and latencies."""
    return asyncio.run(_race(home, Path(starts_file), goal_id, threads, calls, barrier))


async def _race(home: str, starts_file: Path, goal_id: str, threads: int, calls: int,
                barrier: Any) -> dict[str, Any]:
    paths = resolve_paths({"GOALKEEPER_HOME": home})
    engine = Engine(paths, Settings(), [FileCountingProvider(starts_file)], SystemClock(),
                    random.Random())
    await engine.start()
    loop = asyncio.get_running_loop()
    outcomes: Counter[str] = Counter()
    latencies: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        futures = []
        for _ in range(calls):
            t0 = time.perf_counter()
            fut = asyncio.run_coroutine_threadsafe(engine.perform(Resume(goal_id), "race"), loop)
            futures.append((t0, fut))
        for t0, fut in futures:
            result = fut.result(timeout=120)
            with lock:
                outcomes[result.outcome.value] += 1
                latencies.append(time.perf_counter() - t0)

    if barrier is not None:
        await asyncio.to_thread(barrier.wait)
    started = time.perf_counter()
    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in pool:
        thread.start()
    await asyncio.to_thread(lambda: [t.join() for t in pool])
    elapsed = time.perf_counter() - started
    engine.goals.clear()  # leave the store as the race left it (no shutdown bookkeeping)
    await engine.stop()
    return {"outcomes": dict(outcomes), "latencies": latencies, "elapsed": elapsed}


def race_in_process(args: tuple[str, str, str, int, int, Any], queue: Any) -> None:
    queue.put(race(*args))
