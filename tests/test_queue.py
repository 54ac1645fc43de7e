"""Start at the reset (issue 23): new work queued for a window's next reset is a goal paused for
that window; it starts once, after a fresh read shows the new period, under the policies."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest

from core.commands import Cancel, Queue, Resume, command_from_json
from core.models import GoalState, HistoryEvent, Outcome, PauseReason, Trigger
from core.settings import Settings
from tests.support.engine import H
from tests.support.fakes import FakeProvider, advance, crash, reading, settled, until

pytestmark = pytest.mark.asyncio


def codex(clock, used: float = 40.0, resets_in: float = 2 * H) -> FakeProvider:
    """A provider named codex whose 5-hour window resets in ``resets_in`` (not exhausted)."""
    provider = FakeProvider(clock, name="codex")
    reset = clock.now() + timedelta(seconds=resets_in)
    provider.readings = [reading("codex:5h", used, clock.now(), reset, provider="codex")]
    # the authority: the old period until the reset, the new one after it
    provider.fresh_readings = lambda: [reading(
        "codex:5h", used if clock.now() < reset else 2.0, clock.now(), period_end(reset, clock),
        provider="codex")]
    return provider


def period_end(reset, clock):
    """The end of the 5-hour period the clock is in, periods ending at ``reset``."""
    end = reset
    while end <= clock.now():
        end += timedelta(hours=5)
    return end


def queue(tmp_path: Path, **kw: str) -> Queue:
    fields = {"provider": "codex", "cwd": str(tmp_path), "text": "Write the report",
              "window": "codex:5h"} | kw
    return Queue("", **fields)


async def starts_of(engine, goal_id: str) -> list:
    return [r for r in await engine.reads.history(goal_id, limit=500)
            if r.event == "resume_requested" and r.outcome is Outcome.RESUMED
            and r.state_to is None]


async def test_a_queued_start_waits_for_the_reset_then_starts_once(make_engine, clock,
                                                                   tmp_path) -> None:
    provider = codex(clock)
    reset = provider.readings[0].resets_at
    engine = await make_engine(provider, settings=Settings(resume_jitter_seconds=0))
    result = await engine.perform(queue(tmp_path), "cli")
    assert result.outcome is Outcome.QUEUED, result.reason
    goal_id = result.goal
    assert result.not_before == reset + timedelta(seconds=45)  # the reset + the margin
    goal = engine.goals[goal_id]
    assert (goal.state, goal.pause_reason, goal.windows) == (
        GoalState.PAUSED, PauseReason.QUOTA, ("codex:5h",))
    assert provider.prepared[0].cwd == str(tmp_path)
    for _ in range(119):  # the two hours before the reset: nothing starts
        await advance(engine, clock, 60)
    assert provider.starts == [] and provider.resume_calls == []
    await advance(engine, clock, 60 + 45 + 1)
    await settled(engine)
    assert provider.starts == [(goal_id, 1)]
    assert engine.goals[goal_id].state is GoalState.RUNNING
    assert engine.goals[goal_id].steering.queued is None
    # a second trigger (a wake, a startup pass) does not start it again
    again = await engine.perform(Resume(goal_id, Trigger.WAKE), "scheduler")
    assert again.outcome is Outcome.ALREADY_RUNNING
    await advance(engine, clock, H)
    assert provider.starts == [(goal_id, 1)]
    rows = await engine.reads.history(goal_id, limit=100)
    assert any(r.event == HistoryEvent.QUEUED for r in rows)


async def test_no_start_while_no_reading_since_the_reset_shows_the_new_period(
        make_engine, clock, tmp_path) -> None:
    provider = codex(clock)
    reset = provider.readings[0].resets_at
    stale = provider.readings[0]
    provider.fresh_readings = lambda: [stale]  # the authority keeps saying the old period
    engine = await make_engine(provider, settings=Settings(resume_jitter_seconds=0))
    goal_id = (await engine.perform(queue(tmp_path), "cli")).goal
    await advance(engine, clock, (reset - clock.now()).total_seconds() + 60)
    for _ in range(10):
        await advance(engine, clock, 60)
    assert provider.starts == []
    goal = engine.goals[goal_id]
    assert goal.deferred_by == "waiting for the reset" and goal.state is GoalState.PAUSED
    # a fresh read then shows the new period: it starts, once
    provider.fresh_readings = lambda: [reading("codex:5h", 1, clock.now(),
                                               period_end(reset, clock), provider="codex")]
    for _ in range(6):
        await advance(engine, clock, 60)
    assert provider.starts == [(goal_id, 1)]


async def test_a_queued_start_keeps_to_the_allowed_hours(make_engine, clock, tmp_path) -> None:
    # the reset falls at 02:00 UTC; only 08:00-18:00 are allowed
    now = clock.now()
    reset = (now + timedelta(days=1)).replace(hour=2, minute=0, second=0, microsecond=0)
    provider = codex(clock, resets_in=(reset - now).total_seconds())
    settings = Settings(resume_jitter_seconds=0, auto_resume_hours="08:00-18:00",
                        auto_resume_timezone="UTC")
    engine = await make_engine(provider, settings=settings)
    result = await engine.perform(queue(tmp_path), "cli")
    assert result.outcome is Outcome.QUEUED
    assert result.not_before == reset.replace(hour=8)
    assert engine.goals[result.goal].deferred_by == "allowed hours"
    await advance(engine, clock, (reset - clock.now()).total_seconds() + 3 * H)
    assert provider.starts == []
    await advance(engine, clock, (reset.replace(hour=8) - clock.now()).total_seconds() + 60)
    await settled(engine)
    assert provider.starts == [(result.goal, 1)]


async def test_a_queued_start_keeps_the_reserve(make_engine, clock, tmp_path) -> None:
    provider = codex(clock)
    reset = provider.readings[0].resets_at
    # after the reset the window is new, but already 95 % used (someone else spent it)
    provider.fresh_readings = lambda: [reading(
        "codex:5h", 95 if clock.now() >= reset else 40, clock.now(), period_end(reset, clock),
        provider="codex")]
    engine = await make_engine(provider, settings=Settings(resume_jitter_seconds=0,
                                                           resume_reserve_percent=10))
    goal_id = (await engine.perform(queue(tmp_path), "cli")).goal
    await advance(engine, clock, (reset - clock.now()).total_seconds() + 120)
    await advance(engine, clock, 120)
    assert provider.starts == []
    assert engine.goals[goal_id].deferred_by == "reserve"


async def test_a_manual_resume_starts_queued_work_at_once(make_engine, clock, tmp_path) -> None:
    provider = codex(clock)
    engine = await make_engine(provider)
    goal_id = (await engine.perform(queue(tmp_path), "cli")).goal
    result = await engine.perform(Resume(goal_id), "gui")
    assert result.outcome is Outcome.RESUMED and provider.starts == [(goal_id, 1)]


@pytest.mark.parametrize(("change", "says"), [
    ({"window": "codex:9h"}, "unknown window 'codex:9h' for codex"),
    ({"window": "claude:5h"}, "unknown window 'claude:5h' for codex"),
    ({"text": "   "}, "the objective is empty"),
    ({"cwd": "/nonexistent/dir"}, "no such directory: /nonexistent/dir"),
    ({"cwd": "relative/dir"}, "the directory must be an absolute path"),
    ({"provider": "demo"}, "cannot queue work for 'demo'"),
])
async def test_bad_requests_are_refused_with_the_reason(make_engine, clock, tmp_path, change,
                                                        says) -> None:
    provider = codex(clock)
    engine = await make_engine(provider)
    result = await engine.perform(queue(tmp_path, **change), "cli")
    assert result.outcome is Outcome.REFUSED and says in result.reason
    assert provider.prepared == [] and list(engine.goals) == []


async def test_no_reading_of_the_window_means_no_queue(make_engine, clock, tmp_path) -> None:
    provider = FakeProvider(clock, name="codex")
    engine = await make_engine(provider)
    result = await engine.perform(queue(tmp_path), "cli")
    assert result.outcome is Outcome.REFUSED
    assert "no reset time is known for codex:5h" in result.reason
    assert provider.prepared == []


async def test_a_provider_that_cannot_prepare_fails_and_stores_nothing(make_engine, clock,
                                                                        tmp_path) -> None:
    provider = codex(clock)
    provider.behaviour = "fail"
    engine = await make_engine(provider)
    result = await engine.perform(queue(tmp_path), "cli")
    assert result.outcome is Outcome.FAILED
    assert "could not queue: the agent cannot prepare that" in result.reason
    assert list(engine.goals) == []


async def test_the_agent_showing_the_prepared_goal_paused_keeps_it_queued(make_engine, clock,
                                                                          tmp_path) -> None:
    provider = codex(clock)
    engine = await make_engine(provider)
    goal_id = (await engine.perform(queue(tmp_path), "cli")).goal
    provider.observe(goal_id, GoalState.PAUSED, reason=PauseReason.EXTERNAL,
                     windows=("codex:5h",))
    provider.sink.goal_observed("codex", provider.observations[-1])
    await settled(engine)
    goal = engine.goals[goal_id]
    assert goal.pause_reason is PauseReason.QUOTA and goal.next_resume_at is not None


async def test_the_command_travels_as_json_and_back() -> None:
    command = Queue("", provider="claude", cwd="/w", text="Fix it", window="claude:5h")
    assert command_from_json(command.to_json()) == command
    with pytest.raises(ValueError, match="'text' must be a non-empty string"):
        command_from_json({**command.to_json(), "text": ""})
    assert not command.travels()


async def test_two_triggers_at_once_start_it_once(make_engine, clock, tmp_path) -> None:
    provider = codex(clock)
    reset = provider.readings[0].resets_at
    engine = await make_engine(provider, settings=Settings(resume_jitter_seconds=0))
    goal_id = (await engine.perform(queue(tmp_path), "cli")).goal
    await engine.scheduler.stop()  # the two triggers below are the only ones
    clock.advance((reset - clock.now()).total_seconds() + 60)
    await engine.quota_intake.fresh_read("codex")
    provider.gate = asyncio.Event()
    first = asyncio.ensure_future(engine.perform(Resume(goal_id, Trigger.AUTO), "scheduler"))
    second = asyncio.ensure_future(engine.perform(Resume(goal_id, Trigger.WAKE), "scheduler"))
    await asyncio.sleep(0.05)
    provider.gate.set()
    outcomes = sorted(r.outcome.value for r in await asyncio.gather(first, second))
    assert outcomes == ["already_resuming", "resumed"]
    assert provider.starts == [(goal_id, 1)]


async def test_a_thread_whose_goal_is_over_takes_a_new_queued_goal(make_engine, clock,
                                                                   tmp_path) -> None:
    provider = codex(clock)
    engine = await make_engine(provider)
    first = await engine.perform(queue(tmp_path, thread="t1"), "cli")
    assert first.goal == "codex:t1" and first.outcome is Outcome.QUEUED
    again = await engine.perform(queue(tmp_path, thread="t1"), "cli")
    assert again.outcome is Outcome.REFUSED and "already a goal (paused)" in again.reason
    assert len(provider.prepared) == 1  # refused before the agent was asked
    await engine.perform(Cancel("codex:t1"), "cli")
    third = await engine.perform(queue(tmp_path, thread="t1", text="The next step"), "cli")
    assert third.outcome is Outcome.QUEUED
    goal = engine.goals["codex:t1"]
    assert goal.state is GoalState.PAUSED and goal.title == "The next step"
    assert goal.fence >= engine.goals["codex:t1"].fence  # never goes back


async def test_a_start_cut_off_by_a_crash_is_taken_up_at_the_next_start(
        make_engine, clock, tmp_path) -> None:
    """The claim passed the reset check, then the host died before the agent answered: the
    next host takes it up (start-up recovery) without waiting for another reading."""
    provider = codex(clock)
    reset = provider.readings[0].resets_at
    engine = await make_engine(provider, settings=Settings(resume_jitter_seconds=0))
    goal_id = (await engine.perform(queue(tmp_path), "cli")).goal
    provider.gate = asyncio.Event()  # the agent never answers this host
    clock.advance((reset - clock.now()).total_seconds() + 60)
    await until(lambda: engine.goals[goal_id].state is GoalState.RESUMING)
    await crash(engine)
    provider.gate, provider.fresh_readings = None, (lambda: [])  # no reading after the restart
    engine = await make_engine(provider, settings=Settings(resume_jitter_seconds=0))
    await settled(engine)
    assert [g for g, _ in provider.starts] == [goal_id]  # once
    assert engine.goals[goal_id].state is GoalState.RUNNING


async def test_hold_lets_an_interrupted_start_through_but_not_a_first_one() -> None:
    """The claim of a start the host was cut off in had passed the reset check: start-up
    recovery's resume (``interrupted``, no reading since) is not held back again."""
    from datetime import UTC, datetime

    from core.goals.auto_resume import AutoResumePolicy, Decision
    from core.goals.queued import hold
    from core.models import Goal, QueuedStart, Steering

    t0 = datetime(2026, 7, 7, 12, tzinfo=UTC)
    queued = Steering(queued=QueuedStart(window="codex:5h", after=t0))
    goal = Goal(id="codex:t", provider="codex", title="t", state=GoalState.PAUSED,
                pause_reason=PauseReason.QUOTA, steering=queued, created_at=t0, updated_at=t0)
    allowed = Decision(Outcome.RESUMED, "quota recovered")
    later = t0 + timedelta(minutes=5)
    held = hold(allowed, goal, Trigger.AUTO, later, (), AutoResumePolicy())
    assert held.outcome is Outcome.DEFERRED and held.rule == "waiting for the reset"
    assert held.not_before == later + timedelta(minutes=5)
    interrupted = goal.model_copy(update={"pause_reason": PauseReason.INTERRUPTED})
    assert hold(allowed, interrupted, Trigger.STARTUP, later, (), AutoResumePolicy()) is allowed
    assert hold(allowed, goal, Trigger.MANUAL, later, (), AutoResumePolicy()) is allowed
    fresh = ({"window": "codex:5h", "observed_at": later.isoformat(), "exactness": "exact",
              "used_percent": 3.0},)
    assert hold(allowed, goal, Trigger.AUTO, later, fresh, AutoResumePolicy()).allowed
    inferred = ({**fresh[0], "exactness": "inferred"},)
    assert not hold(allowed, goal, Trigger.AUTO, later, inferred, AutoResumePolicy()).allowed
    before = ({**fresh[0], "observed_at": (t0 - timedelta(seconds=1)).isoformat()},)
    assert not hold(allowed, goal, Trigger.AUTO, later, before, AutoResumePolicy()).allowed
