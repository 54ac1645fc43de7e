"""Preparing a queued Codex goal (issue 23) against the fake ``codex``: set paused with its
objective on a new thread or a given one, never run; a thread with a goal is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.providers.base import QueuedWork, RunnerError
from tests.codex.fakecodex import FakeCodex
from tests.support.codex import MakeCodex

pytestmark = pytest.mark.asyncio


async def test_a_new_thread_gets_the_goal_paused(fake: FakeCodex, make_codex: MakeCodex,
                                                 repo: Path) -> None:
    provider = make_codex()
    prepared = await provider.prepare_start(QueuedWork(cwd=str(repo), text="Write report Q"))
    assert prepared.goal_id == "codex:new-thread-1" and prepared.title == "Write report Q"
    assert prepared.data["cwd"] == str(repo)
    [start] = fake.received("thread/start")
    assert start["params"] == {"cwd": str(repo)}
    [goal_set] = fake.received("thread/goal/set")
    assert goal_set["params"] == {"threadId": "new-thread-1", "objective": "Write report Q",
                                  "status": "paused", "origin": "user"}
    assert fake.goal_status("new-thread-1") == "paused" and fake.activations() == []


async def test_a_given_thread_without_a_goal_gets_it(fake: FakeCodex, make_codex: MakeCodex,
                                                     repo: Path) -> None:
    provider = make_codex()
    prepared = await provider.prepare_start(QueuedWork(cwd=str(repo), text="Fix it",
                                                       thread="t-given"))
    assert prepared.goal_id == "codex:t-given"
    assert fake.received("thread/resume", threadId="t-given")
    assert fake.goal_status("t-given") == "paused" and fake.received("thread/start") == []


async def test_a_thread_whose_goal_is_not_over_is_refused(fake: FakeCodex,
                                                          make_codex: MakeCodex,
                                                          repo: Path) -> None:
    fake.script(goals={"t-busy": {"objective": "Other", "status": "active", "tokensUsed": 5}})
    provider = make_codex()
    with pytest.raises(RunnerError, match="thread t-busy already has a goal"):
        await provider.prepare_start(QueuedWork(cwd=str(repo), text="Fix it",
                                                thread="t-busy"))
    assert fake.received("thread/goal/set") == []
