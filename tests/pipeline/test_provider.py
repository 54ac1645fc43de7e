"""Pipeline goals inside the engine: run, refuse, abandon, quota pauses, blocks, schedules."""

from __future__ import annotations

import asyncio
import json
import os
import random
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from core.clock import FakeClock
from core.commands import Pause, Resume
from core.engine import Engine
from core.models import GoalState, PauseReason
from core.paths import Paths
from core.providers.pipeline.catalog import PipelineCatalog
from core.providers.pipeline.checkpoint import CheckpointStore
from core.providers.pipeline.provider import PipelineProvider
from tests.pipeline.support import FakeSecrets, step
from tests.support.engine import EngineFactory
from tests.support.fakes import until
from tests.support.pipeline import GOAL, host, run_op, settings, settled, state

pytestmark = pytest.mark.asyncio


async def events(engine: Engine) -> list[str]:
    return [row.event for row in reversed(await engine.reads.history(GOAL, limit=500))]


def fx(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    return {"effect": str(tmp_path / "effects.log"), **extra}


def effects(tmp_path: Path) -> list[str]:
    path = tmp_path / "effects.log"
    return sorted(path.read_text().split()) if path.exists() else []


async def test_an_added_goal_runs_to_completion_and_rests(make_engine: EngineFactory,
                                                          paths: Paths, clock: FakeClock,
                                                          tmp_path: Path) -> None:
    engine, provider = await host(make_engine, paths, clock, tmp_path,
                                  [step("github", {"items": 2})], [step("aggregate")])
    assert state(engine) is GoalState.IDLE
    reply = await run_op(provider)
    assert reply["outcome"] == "resumed" and reply["run_id"] == "digest-2026-07-07"
    await until(lambda: not provider.is_active(GOAL), 15)
    await settled(engine, GoalState.IDLE)
    log = await events(engine)
    assert log[-1] == "rested" and "run_started" in log and "started" in log
    goal = engine.goals[GOAL]
    assert goal.data["pipeline"]["run_state"] == "completed"
    assert goal.data["pipeline"]["sources_used"] == "1/1"
    second = await run_op(provider)  # idle again: a new run, with its own id
    assert second["run_id"] == "digest-2026-07-07-2"
    await until(lambda: not provider.is_active(GOAL), 15)


async def test_run_refuses_while_unfinished_and_new_abandons(make_engine: EngineFactory,
                                                             paths: Paths, clock: FakeClock,
                                                             tmp_path: Path) -> None:
    engine, provider = await host(make_engine, paths, clock, tmp_path,
                                  [step("github", fx(tmp_path))],
                                  [step("deliver", {"exit": 77}, fx(tmp_path))])
    await run_op(provider)
    await settled(engine, GoalState.PAUSED)
    goal = engine.goals[GOAL]
    assert goal.pause_reason is PauseReason.AUTH and goal.next_resume_at is None
    refused = await run_op(provider)
    assert refused["outcome"] == "refused" and "is unfinished (blocked" in refused["reason"]
    assert "--new" in refused["reason"] and refused["run_id"] == "digest-2026-07-07"
    assert effects(tmp_path) == ["github"]
    fresh = await run_op(provider, new=True)
    assert fresh["outcome"] == "resumed" and fresh["run_id"] == "digest-2026-07-07-2"
    await settled(engine, GoalState.PAUSED)
    assert "run_abandoned" in await events(engine)
    old = CheckpointStore(PipelineCatalog(paths.data_dir / "pipelines").get("digest")
                          .run_dir("digest-2026-07-07")).load()  # type: ignore[union-attr]
    assert old.abandoned
    assert effects(tmp_path) == ["github", "github"]


async def test_a_long_rate_limit_pauses_for_quota_and_the_scheduler_resumes(
        make_engine: EngineFactory, paths: Paths, clock: FakeClock, tmp_path: Path) -> None:
    engine, provider = await host(
        make_engine, paths, clock, tmp_path,
        [step("github", fx(tmp_path, report={"status": "rate_limited", "retry_after": 300}),
              fx(tmp_path)), step("rss", fx(tmp_path))],
        [step("aggregate", fx(tmp_path))], auto_resume=True)
    await run_op(provider)
    await settled(engine, GoalState.PAUSED)
    goal = engine.goals[GOAL]
    assert goal.pause_reason is PauseReason.QUOTA
    assert goal.next_resume_at == clock.now() + timedelta(seconds=305)
    await clock.run_for(310, step=30)
    await until(lambda: state(engine) is GoalState.IDLE, 15)
    assert effects(tmp_path) == ["aggregate", "github", "github", "rss"]  # rss ran once
    rows = await engine.reads.history(GOAL, limit=200)
    assert any(r.event == "resumed" and r.trigger and r.trigger.value == "auto" for r in rows)


async def test_pause_stops_the_step_and_resume_runs_it_again(make_engine: EngineFactory,
                                                             paths: Paths, clock: FakeClock,
                                                             tmp_path: Path) -> None:
    engine, provider = await host(
        make_engine, paths, clock, tmp_path, [step("github", fx(tmp_path))],
        [step("aggregate", {"sleep": "forever", "marker": "m"}, fx(tmp_path))])
    await run_op(provider)
    run_dir = paths.data_dir / "pipelines" / "digest" / "runs" / "digest-2026-07-07"
    await until(lambda: (run_dir / "m").exists(), 15)
    pid = int((run_dir / "m").read_text())
    result = await engine.perform(Pause(GOAL), "test")
    assert result.outcome.value == "paused" and not provider.is_active(GOAL)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert (await engine.perform(Resume(GOAL), "test")).outcome.value == "resumed"
    await settled(engine, GoalState.IDLE)
    assert effects(tmp_path) == ["aggregate", "github"]


async def test_a_corrupt_state_file_pauses_with_a_precise_reason(make_engine: EngineFactory,
                                                                 paths: Paths, clock: FakeClock,
                                                                 tmp_path: Path) -> None:
    engine, provider = await host(make_engine, paths, clock, tmp_path,
                                  [step("github", fx(tmp_path))],
                                  [step("deliver", {"exit": 1}, fx(tmp_path))])
    await run_op(provider)
    await settled(engine, GoalState.PAUSED)
    state_file = (paths.data_dir / "pipelines" / "digest" / "runs" / "digest-2026-07-07"
                  / "state.json")
    raw = state_file.read_bytes()
    state_file.write_bytes(raw[: len(raw) // 3])
    prev = state_file.with_name("state.prev.json").read_bytes()
    assert (await engine.perform(Resume(GOAL), "test")).outcome.value == "resumed"
    await settled(engine, GoalState.PAUSED)
    goal = engine.goals[GOAL]
    assert goal.pause_reason is PauseReason.ERROR
    assert "truncated" in (goal.pause_detail or "") and "state.prev.json" in (
        goal.pause_detail or "")
    assert effects(tmp_path) == ["github"]  # nothing completed ran again
    assert state_file.with_name("state.prev.json").read_bytes() == prev
    refused = await run_op(provider)
    assert refused["outcome"] == "refused" and "cannot be trusted" in refused["reason"]


async def test_a_schedule_fires_through_the_scheduler(make_engine: EngineFactory, paths: Paths,
                                                      clock: FakeClock, tmp_path: Path) -> None:
    engine, provider = await host(make_engine, paths, clock, tmp_path, [],
                                  [step("deliver", fx(tmp_path))], schedule="12:30",
                                  timezone="UTC")
    assert provider.next_wake(clock.now()) == clock.now() + timedelta(minutes=30)
    await clock.run_for(29 * 60, step=60)
    assert effects(tmp_path) == []
    await clock.run_for(120, step=30)
    await until(lambda: effects(tmp_path) == ["deliver"], 15)
    await settled(engine, GoalState.IDLE)
    run = CheckpointStore(paths.data_dir / "pipelines" / "digest" / "runs" /
                          "digest-2026-07-07").load()
    assert run.trigger == "schedule"
    assert provider.next_wake(clock.now()) == clock.now().replace(
        hour=12, minute=30, second=0, microsecond=0) + timedelta(days=1)


async def test_a_schedule_skips_while_a_run_is_unfinished(make_engine: EngineFactory,
                                                          paths: Paths, clock: FakeClock,
                                                          tmp_path: Path) -> None:
    engine, provider = await host(make_engine, paths, clock, tmp_path, [],
                                  [step("deliver", {"exit": 77})], schedule="12:30",
                                  timezone="UTC")
    await run_op(provider)
    await settled(engine, GoalState.PAUSED)
    await clock.run_for(31 * 60, step=60)
    log: list[str] = []

    async def poll() -> bool:
        log[:] = await events(engine)
        return "schedule_skipped" in log

    for _ in range(200):  # the scheduler's pass may still be under way
        if await poll():
            break
        await asyncio.sleep(0.02)
    assert "schedule_skipped" in log, log
    assert state(engine) is GoalState.PAUSED


async def test_a_capacity_quota_waits_for_a_refill(make_engine: EngineFactory, paths: Paths,
                                                   clock: FakeClock, tmp_path: Path) -> None:
    conf = settings(quotas={"credits": {"kind": "capacity", "limit": 2}})
    engine, provider = await host(make_engine, paths, clock, tmp_path,
                                  [step("a", fx(tmp_path), quota="credits", cost=2)],
                                  [step("b", fx(tmp_path), quota="credits", cost=1)],
                                  conf=conf, auto_resume=True)
    await run_op(provider)
    await settled(engine, GoalState.PAUSED)
    goal = engine.goals[GOAL]
    assert goal.pause_reason is PauseReason.QUOTA and goal.next_resume_at is None
    assert goal.windows == ("quota:credits",)
    await clock.run_for(3600, step=300)
    assert state(engine) is GoalState.PAUSED and effects(tmp_path) == ["a"]
    refill = provider.control_ops()["quota-refill"]
    assert await refill({"quota": "credits", "amount": 10 ** 400}) == {
        "error": "the refill amount must be a positive number, not that large"}
    reply = await refill({"quota": "credits", "amount": 5})
    assert reply == {"quota": "credits", "left": 2.0, "limit": 2.0}
    await clock.run_for(60, step=5)
    await until(lambda: state(engine) is GoalState.IDLE, 15)
    assert effects(tmp_path) == ["a", "b"]


async def test_the_host_stopping_interrupts_and_the_next_host_continues(
        make_engine: EngineFactory, paths: Paths, clock: FakeClock, tmp_path: Path) -> None:
    engine, provider = await host(
        make_engine, paths, clock, tmp_path, [step("github", fx(tmp_path))],
        [step("aggregate", {"sleep": "forever", "marker": "m"}, fx(tmp_path))])
    await run_op(provider)
    run_dir = paths.data_dir / "pipelines" / "digest" / "runs" / "digest-2026-07-07"
    await until(lambda: (run_dir / "m").exists(), 15)
    await engine.stop()
    assert engine.goals[GOAL].pause_reason is PauseReason.INTERRUPTED
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GOALKEEPER_")}
    again = PipelineProvider(settings(), paths, clock, environ, FakeSecrets(), random.Random(1))
    engine2: Engine = await make_engine(again, settings=settings())
    await until(lambda: state(engine2) is GoalState.IDLE, 15)
    assert effects(tmp_path) == ["aggregate", "github"]
    rows = await engine2.reads.history(GOAL, limit=200)
    assert any(r.trigger and r.trigger.value == "startup" and r.event == "resumed"
               for r in rows)


async def test_remove_forgets_the_goal_and_keeps_its_runs(make_engine: EngineFactory,
                                                          paths: Paths, clock: FakeClock,
                                                          tmp_path: Path) -> None:
    engine, provider = await host(make_engine, paths, clock, tmp_path, [],
                                  [step("deliver", {"sleep": "forever"})])
    await run_op(provider)
    await asyncio.sleep(0.2)
    reply = await provider.control_ops()["pipeline-remove"]({"goal": "pipeline:digest"})
    assert reply["outcome"] == "updated" and GOAL not in engine.goals
    moved = Path(reply["moved_to"])
    assert (moved / "runs" / "digest-2026-07-07" / "state.json").exists()
    await engine.refresh()
    assert GOAL not in engine.goals
    assert json.loads((moved / "meta.json").read_text())["source"].endswith("digest.toml")
