"""Pipeline overhead: Goalkeeper's own time around a step, and what checkpoints cost.

Run from the repository root::

    .venv/bin/python bench/pipeline_overhead.py [--steps 200] [--samples 100] [--dir DIR]

1. **Per-step overhead** (target < 20 ms): a no-op command (``true``) run ``--samples`` times
   straight through ``asyncio.create_subprocess_exec`` (the baseline), then the same number of
   times as a one-step run of a pipeline — source check, the step with its three checkpoint
   writes, the phase moves and the completion — through :class:`RunExecutor`. The overhead is
   the difference of the medians, per step.
2. **Checkpoint cost of a 200-step pipeline**: one run of a pipeline of ``--steps`` no-op stages;
   every ``CheckpointStore.save`` is timed (each writes the previous generation and the new one
   with temp file + fsync + rename).

Time is wall-clock on the machine running it; the state files go to ``--dir`` (default: a
temporary directory, i.e. usually the disk ``/tmp`` is on — fsync dominates).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.clock import SystemClock
from core.models import PauseReason
from core.providers.pipeline.attempts import Debit
from core.providers.pipeline.checkpoint import CheckpointStore, RunRecord
from core.providers.pipeline.goalfile import GoalFile
from core.providers.pipeline.run import RunDeps, RunExecutor, RunOutcome

TRUE = shutil.which("true") or "/bin/true"


class Quiet:
    """A reporter that reports nowhere (the engine's share is not the pipeline's overhead)."""

    def progress(self, record: RunRecord) -> None: ...

    def note(self, event: str, reason: str, detail: dict[str, object]) -> None: ...

    def limited(self, windows: tuple[str, ...], until: Any, detail: str) -> None: ...

    def blocked(self, reason: PauseReason, detail: str) -> None:
        raise SystemExit(f"the benchmark run blocked: {detail}")

    def completed(self, detail: str) -> None: ...


class NoQuotas:
    def problem(self, quota: str, cost: float) -> str | None:
        return None

    async def debit(self, quota: str, cost: float, now: Any) -> Debit:
        return Debit(True, quota)


class NoSecrets:
    async def fetch(self, names: Any) -> dict[str, str | None]:
        return {}


class TimedStore(CheckpointStore):
    saves: ClassVar[list[float]] = []

    def save(self, record: RunRecord, now: Any) -> None:
        start = time.perf_counter()
        super().save(record, now)
        TimedStore.saves.append(time.perf_counter() - start)


def pipeline(stages: int) -> GoalFile:
    return GoalFile.model_validate({"name": "bench", "stage": [
        {"name": f"s{i}", "command": [TRUE], "retries": 0} for i in range(stages)]})


async def run_once(goal: GoalFile, run_dir: Path) -> float:
    clock = SystemClock()
    run_dir.mkdir(parents=True)
    now = clock.now()
    record = RunRecord(run_id=run_dir.name, goal=goal.goal_id, trigger="bench",
                       trigger_time=now, started_at=now, updated_at=now)
    store = TimedStore(run_dir)
    store.save(record, now)
    deps = RunDeps(clock, random.Random(1), NoQuotas(), NoSecrets(), {"PATH": "/usr/bin:/bin"})
    executor = RunExecutor(goal, run_dir, store, record, deps, Quiet())
    start = time.perf_counter()
    outcome = await executor.execute()
    elapsed = time.perf_counter() - start
    assert outcome is RunOutcome.COMPLETED, outcome
    return elapsed


async def bare(samples: int) -> list[float]:
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            TRUE, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True)
        await proc.communicate()
        times.append(time.perf_counter() - start)
    return times


async def main(args: argparse.Namespace) -> None:
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="gk-bench-"))
    try:
        await bare(5)  # warm-up
        baseline = await bare(args.samples)
        one = pipeline(1)
        TimedStore.saves.clear()
        through = [await run_once(one, root / f"one-{i}") for i in range(args.samples)]
        one_saves = len(TimedStore.saves) / args.samples
        base_ms = statistics.median(baseline) * 1000
        step_ms = statistics.median(through) * 1000
        print(f"no-op command ({TRUE}), {args.samples} samples, state files in {root}")
        print(f"  bare subprocess          median {base_ms:7.2f} ms")
        print(f"  as a one-step pipeline   median {step_ms:7.2f} ms "
              f"({one_saves:.0f} checkpoint writes per run)")
        print(f"  Goalkeeper's overhead    {step_ms - base_ms:7.2f} ms per one-step run "
              f"(includes the run's own phase checkpoints)")

        TimedStore.saves.clear()
        many = pipeline(args.steps)
        total = await run_once(many, root / "many")
        saves = TimedStore.saves
        size = (root / "many" / "state.json").stat().st_size
        print(f"{args.steps}-step pipeline: {total:.2f} s in all, {len(saves)} checkpoint writes")
        print(f"  checkpoint time          {sum(saves):.3f} s "
              f"({100 * sum(saves) / total:.0f} % of the run)")
        print(f"  per checkpoint write     median {statistics.median(saves) * 1000:.2f} ms, "
              f"p95 {sorted(saves)[int(len(saves) * 0.95)] * 1000:.2f} ms, "
              f"last {saves[-1] * 1000:.2f} ms (state file {size / 1024:.0f} KiB)")
        print(f"  per step                 {sum(saves) / args.steps * 1000:.2f} ms of "
              f"checkpoints, {total / args.steps * 1000:.2f} ms in all")
        print(f"  Goalkeeper's overhead    {total / args.steps * 1000 - base_ms:.2f} ms per step "
              f"(the step's time minus the bare command's median; target < 20 ms)")
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--dir", help="where the run directories go (default: a temp dir)")
    asyncio.run(main(parser.parse_args()))
