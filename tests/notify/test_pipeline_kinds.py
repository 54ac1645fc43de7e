"""A pipeline run that ends blocked ("needs attention") or finished (``rested``) is announced:
on a real engine with the real pipeline provider, through the webhook."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.clock import FakeClock
from core.commands import Pause, Resume
from core.models import GoalState, PauseReason
from core.paths import Paths
from core.settings import Settings
from tests.pipeline.support import step
from tests.real.mockhttp import MockServer
from tests.support.engine import EngineFactory
from tests.support.fakes import until
from tests.support.notify import Factory, kinds
from tests.support.pipeline import GOAL, host, run_op, settings, settled

pytestmark = pytest.mark.asyncio


def hook(server: MockServer, **kw: object) -> Settings:
    return settings(notify_webhook_url=f"{server.url}/hook", **kw)


async def test_a_finished_run_is_announced_as_rested(
        make_engine: EngineFactory, notify: Factory, paths: Paths,
        clock: FakeClock, tmp_path: Path, server: MockServer) -> None:
    conf = hook(server)
    engine, provider = await host(make_engine, paths, clock, tmp_path,
                                  [step("github", {"items": 2})], [step("aggregate")], conf)
    await notify(engine, conf)
    await run_op(provider)
    await until(lambda: not provider.is_active(GOAL), 15)
    await settled(engine, GoalState.IDLE)
    await until(lambda: kinds(server) == ["rested"])
    body = server.requests[0].json()
    assert (body["goal"], body["provider"]) == (GOAL, "pipeline")
    assert body["title"] == "Run finished: pipeline digest"
    assert body["message"].startswith("Run digest-2026-07-07 completed: ")
    assert body["message"].endswith(" It waits for its next run.")
    # paused while idle, then resumed by hand: nothing to continue, idle again — not a run
    await engine.perform(Pause(GOAL), "cli")
    await settled(engine, GoalState.PAUSED)
    await engine.perform(Resume(GOAL), "cli")
    await settled(engine, GoalState.IDLE)
    rows = await engine.reads.history(GOAL, limit=5)
    assert rows[0].event == "rested" and rows[0].detail == {"idle_again": True}
    await engine.drain()
    assert kinds(server) == ["rested"]


async def test_a_blocked_run_needs_attention(
        make_engine: EngineFactory, notify: Factory, paths: Paths,
        clock: FakeClock, tmp_path: Path, server: MockServer) -> None:
    conf = hook(server)
    engine, provider = await host(make_engine, paths, clock, tmp_path, [step("github")],
                                  [step("deliver", {"exit": 77})], conf)  # 77: auth failed
    await notify(engine, conf)
    await run_op(provider)
    await settled(engine, GoalState.PAUSED)
    assert engine.goals[GOAL].pause_reason is PauseReason.AUTH
    await until(lambda: kinds(server) == ["needs_attention"])
    body = server.requests[0].json()
    assert body["title"] == "Needs attention: pipeline digest"
    assert body["message"].startswith("Run digest-2026-07-07 blocked in ")
    assert body["message"].endswith(" It is paused until you sign in again and resume it.")
    row = next(r for r in await engine.reads.history(GOAL, limit=50) if r.event == "paused")
    assert row.detail["pause_reason"] == "auth" and row.origin == "runner:pipeline"


async def test_the_switch_holds_it_back(
        make_engine: EngineFactory, notify: Factory, paths: Paths,
        clock: FakeClock, tmp_path: Path, server: MockServer) -> None:
    conf = hook(server, notify_needs_attention=False)
    engine, provider = await host(make_engine, paths, clock, tmp_path, [step("github")],
                                  [step("deliver", {"exit": 77})], conf)
    await notify(engine, conf)
    await run_op(provider)
    await settled(engine, GoalState.PAUSED)
    await engine.drain()
    await notify(engine, hook(server))  # a second service on the same engine, switch on
    await engine.perform(Resume(GOAL), "cli")  # resumed by hand, the run blocks again
    await settled(engine, GoalState.PAUSED)
    await until(lambda: kinds(server) == ["needs_attention"])  # only the second service's
