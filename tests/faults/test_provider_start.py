"""A provider whose start fails is shown as failed and started again later, with backoff."""

from __future__ import annotations

import asyncio
import random

import pytest

from core.clock import FakeClock
from core.engine import Engine
from core.host import control_server
from core.models import GoalState
from core.paths import Paths
from core.settings import Settings
from tests.support.fakes import FakeProvider, settled, until


class FlakyStart(FakeProvider):
    def __init__(self, clock: FakeClock, failures: int) -> None:
        super().__init__(clock, "flaky")
        self.failures = failures
        self.attempts = 0
        self.told = 0

    def host_started(self) -> None:
        self.told += 1

    async def start(self) -> None:
        self.attempts += 1
        if self.attempts <= self.failures:
            raise OSError(f"the agent's home is unreadable (attempt {self.attempts})")


@pytest.mark.asyncio
async def test_a_failed_start_is_shown_and_retried_until_it_works(paths: Paths,
                                                                  clock: FakeClock) -> None:
    flaky = FlakyStart(clock, failures=2)
    flaky.observe("flaky:g", GoalState.PAUSED)
    healthy = FakeProvider(clock)
    healthy.observe("fake:h", GoalState.IDLE)
    engine = Engine(paths, Settings(resume_jitter_seconds=0), [flaky, healthy], clock,
                    random.Random(1))
    await engine.start()
    try:
        await settled(engine)
        assert "fake:h" in engine.goals and "flaky:g" not in engine.goals  # the host runs on
        assert flaky.told == 0  # it has not started: nothing of it to let go yet
        health = {p.name: p for p in engine.health().providers}
        assert health["flaky"].state == "failed" and health["fake"].state == "ok"
        assert "unreadable (attempt 1)" in str(health["flaky"].reason)
        ping = await control_server(engine, paths).dispatch(b'{"op": "ping"}')
        problems = ping["health"]["problems"]
        assert problems and problems[0].startswith("provider flaky: start failed since")
        clock.advance(engine.provider_supervisor.policy.initial)  # first retry: fails again
        await until(lambda: flaky.attempts == 2)
        assert {p.name: p for p in engine.health().providers}["flaky"].attempts == 2
        clock.advance(engine.provider_supervisor.policy.delay(2))  # second retry: it starts
        await until(lambda: flaky.attempts == 3)
        await until(lambda: "flaky:g" in engine.goals)  # and is read at once
        await until(lambda: flaky.told == 1)  # then its held-back work may begin
        assert {p.name: p.state for p in engine.health().providers} == {"fake": "ok",
                                                                        "flaky": "ok"}
    finally:
        await engine.stop()
    await asyncio.sleep(0)


class HalfRead(FakeProvider):
    def read_problems(self) -> list[str]:
        return ["/home/u/.codex/sessions/a.jsonl (Permission denied)"]


@pytest.mark.asyncio
async def test_files_a_provider_could_not_read_are_said_by_ping_and_status(
        paths: Paths, clock: FakeClock) -> None:
    engine = Engine(paths, Settings(resume_jitter_seconds=0), [HalfRead(clock)], clock,
                    random.Random(1))
    await engine.start()
    try:
        await settled(engine)
        [health] = engine.health().providers
        assert health.state == "ok" and health.unreadable
        ping = await control_server(engine, paths).dispatch(b'{"op": "ping"}')
        assert ping["health"]["problems"] == [
            "provider fake: cannot read 1 file(s): "
            "/home/u/.codex/sessions/a.jsonl (Permission denied)"]
    finally:
        await engine.stop()
