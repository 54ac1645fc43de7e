"""A click and an automatic resume racing: exactly one resume, and both answers shown honestly."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta

import pytest

from core.clock import FakeClock
from core.commands import ActionResult, Resume, SetAutoResume
from core.engine import Engine
from core.models import GoalState, Outcome, PauseReason, Trigger
from gui.format import result_text
from gui.main_window import MainWindow
from tests.support.fakes import FakeProvider, until
from tests.support.gui import wait_signal


async def wait_for_quota(engine: Engine, fake: FakeProvider, clock: FakeClock) -> None:
    """fake:a is paused for quota, auto-resume on, due 60 s + 45 s margin from now."""
    await engine.perform(SetAutoResume("fake:a", True))
    fake.observe("fake:a", GoalState.PAUSED, reason=PauseReason.QUOTA,
                 resets_at=clock.now() + timedelta(seconds=60), title="Refactor the parser")
    await engine.refresh()
    goal = engine.goals["fake:a"]
    assert goal.state is GoalState.PAUSED and goal.next_resume_at is not None


async def eventually(read: Callable[[], Awaitable[list[str]]], timeout: float = 5.0
                     ) -> list[str]:
    """Poll an async read until it returns something."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not (rows := await read()) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.005)
    return rows


@pytest.mark.asyncio
async def test_click_wins_while_the_scheduler_works_through_its_due_goals(
        window: MainWindow, engine: Engine, fake: FakeProvider, clock: FakeClock) -> None:
    """Two goals come due together; while the scheduler is busy resuming the first, the user
    clicks Resume on the second. The click wins it; the scheduler, reaching it next, is told
    "already running" — one start each, and both answers on record."""
    await wait_for_quota(engine, fake, clock)
    await engine.perform(SetAutoResume("fake:b", True))
    fake.observe("fake:b", GoalState.PAUSED, reason=PauseReason.QUOTA,
                 resets_at=clock.now() + timedelta(seconds=60), title="Write the docs")
    await engine.refresh()
    fake.gate = asyncio.Event()  # every runner start waits here
    await until(lambda: clock.sleepers > 0)  # the scheduler sleeps on the fake clock
    clock.advance(106)
    await until(lambda: engine.goals["fake:a"].state is GoalState.RESUMING)  # the scheduler's

    window.bridge.flush()
    assert window.goals_view.select_goal("fake:b")
    assert window.goal_actions.resume.isEnabled()
    window.goal_actions.resume.trigger()
    await until(lambda: engine.goals["fake:b"].state is GoalState.RESUMING)  # the click's
    fake.gate.set()
    command, result = await wait_signal(window.bridge.action_finished)
    assert (command, result.outcome) == (Resume("fake:b"), Outcome.RESUMED)
    assert window.banner.text == "Write the docs: Resumed"

    async def auto_answers_for_b() -> list[str]:
        rows = await engine.reads.history("fake:b", limit=50)
        return [r.outcome.value for r in rows if r.event == "resume_requested"
                and r.trigger is Trigger.AUTO and r.outcome is not None]

    assert await eventually(auto_answers_for_b) == ["already_running"]
    assert sorted(goal for goal, _ in fake.starts) == ["fake:a", "fake:b"]  # one start each
    assert engine.goals["fake:b"].state is GoalState.RUNNING


@pytest.mark.asyncio
async def test_scheduler_wins_and_the_click_says_already_resuming(
        window: MainWindow, engine: Engine, fake: FakeProvider, clock: FakeClock) -> None:
    await wait_for_quota(engine, fake, clock)
    fake.gate = asyncio.Event()  # the automatic resume's runner start waits here
    await until(lambda: clock.sleepers > 0)  # the scheduler sleeps on the fake clock
    clock.advance(106)
    await until(lambda: engine.goals["fake:a"].state is GoalState.RESUMING)

    # a click issued before the window caught up with the claim
    window.bridge.request(Resume("fake:a"))
    _verb, result = await wait_signal(window.bridge.action_finished)
    assert result.outcome is Outcome.ALREADY_RESUMING
    assert window.banner.text == "Refactor the parser: Already resuming"

    fake.gate.set()
    await until(lambda: engine.goals["fake:a"].state is GoalState.RUNNING)
    assert len(fake.starts) == 1
    rows = await engine.reads.history("fake:a", limit=50)
    requests = [(r.trigger.value if r.trigger else None, r.outcome.value if r.outcome else None)
                for r in rows if r.event == "resume_requested"]
    assert ("manual", "already_resuming") in requests
    assert ("auto", "resumed") in requests
    resumed = [r for r in rows if r.event == "resume_requested" and r.outcome is Outcome.RESUMED]
    assert len(resumed) == 1


def test_result_texts_for_racing_answers() -> None:
    assert result_text(Resume("g"), ActionResult("g", Outcome.ALREADY_RUNNING, "already running")
                       ) == "Already running"
    assert result_text(Resume("g"), ActionResult("g", Outcome.ALREADY_RESUMING, "x")
                       ) == "Already resuming"
