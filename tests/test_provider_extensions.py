"""Provider extension points: auto-resume blocks re-plan a goal, and a provider's one-time
auto-resume notice."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest

from core.clock import FakeClock
from core.commands import SetAutoResume
from core.events import Notice
from core.goals.auto_resume import AutoResumePolicy
from core.goals.intake import IntakeContext, decide_observation
from core.models import Goal, GoalState, PauseReason
from core.providers.base import GoalObservation
from tests.support.engine import EngineFactory
from tests.support.fakes import FakeProvider, until

BLOCK = "Claude will resume itself: it says so"


def _ctx(clock: FakeClock) -> IntakeContext:
    return IntakeContext(clock.now(), AutoResumePolicy(jitter_seconds=0), random.random, True)


def _paused(clock: FakeClock) -> Goal:
    now = clock.now()
    return Goal(id="g", provider="fake", title="g", state=GoalState.PAUSED,
                pause_reason=PauseReason.QUOTA, auto_resume=True, resets_at=now + timedelta(1),
                next_resume_at=now + timedelta(1, 45), created_at=now, updated_at=now,
                state_since=now)


def _obs(goal: Goal, block: str | None) -> GoalObservation:
    return GoalObservation(id=goal.id, title=goal.title, state=GoalState.PAUSED,
                           observed_at=goal.updated_at, pause_reason=PauseReason.QUOTA,
                           resets_at=goal.resets_at, auto_resume_block=block)


def test_a_block_appearing_unschedules_with_the_reason_in_history(clock: FakeClock) -> None:
    goal = _paused(clock)
    mutation = decide_observation(goal, "fake", _obs(goal, BLOCK), _ctx(clock))
    assert mutation.goal is not None
    assert mutation.goal.next_resume_at is None
    assert mutation.goal.auto_resume_note == BLOCK
    assert [(r.event, r.reason) for r in mutation.history] == [("resume_not_scheduled", BLOCK)]


def test_a_block_going_away_schedules_again(clock: FakeClock) -> None:
    goal = _paused(clock)
    blocked = decide_observation(goal, "fake", _obs(goal, BLOCK), _ctx(clock)).goal
    assert blocked is not None
    mutation = decide_observation(blocked, "fake", _obs(blocked, None), _ctx(clock))
    assert mutation.goal is not None and mutation.goal.next_resume_at is not None
    assert [r.event for r in mutation.history] == ["resume_scheduled"]


def test_an_unchanged_block_changes_nothing(clock: FakeClock) -> None:
    goal = _paused(clock)
    blocked = decide_observation(goal, "fake", _obs(goal, BLOCK), _ctx(clock)).goal
    assert blocked is not None
    again = decide_observation(blocked, "fake", _obs(blocked, BLOCK), _ctx(clock))
    assert again.history == []


class _NoticeProvider(FakeProvider):
    def auto_resume_notice(self, goal: Goal) -> tuple[str, str] | None:
        return ("fake-billing", "headless runs may be billed differently")


@pytest.mark.asyncio
async def test_the_auto_resume_notice_comes_once(make_engine: EngineFactory,
                                                 clock: FakeClock) -> None:
    provider = _NoticeProvider(clock)
    provider.observe("fake:a", GoalState.IDLE)
    provider.observe("fake:b", GoalState.IDLE)
    engine = await make_engine(provider)
    notices: list[Any] = []
    engine.bus.subscribe(lambda e: notices.append(e) if isinstance(e, Notice) else None)
    first = await engine.perform(SetAutoResume("fake:a", True), "test")
    assert first.notice == "headless runs may be billed differently"
    assert first.to_json()["notice"] == first.notice
    await until(lambda: bool(notices))
    assert notices[0].text == first.notice
    second = await engine.perform(SetAutoResume("fake:b", True), "test")
    assert second.notice is None
    off = await engine.perform(SetAutoResume("fake:a", False), "test")
    assert off.notice is None


def test_the_cli_prints_the_notice_as_one_warning_line(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str],
                                                       paths: Any) -> None:
    import argparse

    from core.cli import actions, goals
    from core.cli.common import Context
    from core.commands import ActionResult
    from core.models import Outcome

    result = ActionResult("fake:a", Outcome.UPDATED, "auto-resume on", notice="billed differently")
    monkeypatch.setattr(actions, "require_goal", lambda ctx, goal: None)
    monkeypatch.setattr(Context, "ask_host", lambda self, request: result.to_json())
    ctx = Context(argparse.Namespace(json=False, goal="fake:a", switch="on"), paths)
    assert goals.cmd_auto_resume(ctx) == 0
    out = capsys.readouterr()
    assert out.err == "goalkeeper: billed differently\n"
    assert out.out.startswith("fake:a: updated")
