"""The policy pause of a hosted Codex goal is graceful: ``paused`` in Codex without
``turn/interrupt``, the turn in progress ends, no further turn starts, then the app-server goes;
only after the turn-end timeout is the turn interrupted (engine + fake ``codex``)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.commands import SetGoalPolicy
from core.models import GoalState, PauseReason
from core.settings import Settings
from tests.codex.fakecodex import rl
from tests.codex.fixtures import T0, THREAD_A, epoch, five_and_week
from tests.support.codex import GID, auto, codex_goal, hosted, limited_session, until
from tests.support.fakes import reading

H = timedelta(hours=1)


def reserve(**kw) -> Settings:
    return auto(resume_reserve_percent=30, **kw)


async def auto_resumed(home, repo, fake, make_codex, make_engine, clock, settings: Settings,
                       turn_seconds: float, continue_turns: bool = True):
    """A goal Goalkeeper resumed by itself at start-up (its reset is past), whose turn runs
    ``turn_seconds``; Codex continues an active goal with another turn, like the real CLI."""
    limited_session(home, repo, five_and_week(100.0, T0 - H, 40.0, T0 + 90 * H), at=T0 - 6 * H)
    fake.script(goals=codex_goal(), continue_turns=continue_turns,
                rate_limits=[rl(3, epoch(T0 + 4 * H), 41, epoch(T0 + 90 * H))],
                after_active=[["turn_started"], ["long_turn", turn_seconds]])
    engine = await make_engine(make_codex(settings), settings=settings)
    await until(lambda: engine.goals[GID].state is GoalState.RUNNING
                and engine.providers["codex"].runner.runs.get(GID) is not None
                and engine.providers["codex"].runner.runs[GID].turn_id is not None)
    return engine


async def reach_the_reserve(engine, clock) -> None:
    await engine.quota_intake.record_reading(reading("codex:5h", 75.0, clock.now(),
                                                     clock.now() + 4 * H,
                                        provider="codex"))
    await until(lambda: engine.goals[GID].state is GoalState.PAUSED)


def log_of(fake, key: str) -> list:
    return [e[key] for e in fake.log() if key in e]


@pytest.mark.asyncio
async def test_the_reserve_lets_the_running_turn_end_and_starts_no_other(
        home, repo, fake, make_codex, make_engine, clock):
    # longer than the 2 s grace after "idle", which 0.169.0 also says on loading the thread
    engine = await auto_resumed(home, repo, fake, make_codex, make_engine, clock, reserve(),
                                turn_seconds=2.5)
    provider = engine.providers["codex"]
    await reach_the_reserve(engine, clock)
    g = engine.goals[GID]
    assert g.pause_reason is PauseReason.QUOTA and (g.pause_detail or "").startswith("reserve")
    await until(lambda: fake.received("thread/goal/set", status="paused"))
    assert GID in provider.runner.runs  # still hosted: the turn goes on
    await until(lambda: provider.runner.runs == {})
    [paused] = fake.received("thread/goal/set", status="paused")
    assert paused["params"]["origin"] == "automatic"  # Goalkeeper's rule, not the user's hand
    assert fake.received("turn/interrupt") == []
    assert log_of(fake, "turn_completed") == ["turn-1"]  # the turn ran to its end...
    assert log_of(fake, "turn_started") == ["turn-1"]  # ...and no continuation started
    assert log_of(fake, "eof_during_turn") == []
    assert fake.goal_status(THREAD_A) == "paused"
    g = engine.goals[GID]
    assert (g.state, g.pause_reason) == (GoalState.PAUSED, PauseReason.QUOTA)
    assert not g.hosted
    [row] = [r for r in await engine.reads.history(GID, limit=100) if r.event == "paused"]
    assert row.origin == "policy"


@pytest.mark.asyncio
async def test_a_budget_pause_is_graceful_too(home, repo, fake, make_codex, make_engine, clock):
    """The budget rule goes through the same graceful pause."""
    settings = auto()
    engine = await auto_resumed(home, repo, fake, make_codex, make_engine, clock, settings,
                                turn_seconds=1.0)
    changed = await engine.perform(SetGoalPolicy(GID, "budget_percent", "10"))
    assert engine.goals[GID].policy.budget_percent == 10, changed.reason
    at = clock.now()
    await engine.quota_intake.record_reading(reading("codex:5h", 20.0, at, at + 4 * H,
                                                     provider="codex"))
    clock.advance(60)
    await engine.quota_intake.record_reading(reading("codex:5h", 35.0, clock.now(), at + 4 * H,
                                        provider="codex"))
    await until(lambda: engine.goals[GID].state is GoalState.PAUSED)
    assert engine.goals[GID].pause_reason is PauseReason.BUDGET
    await until(lambda: engine.providers["codex"].runner.runs == {})
    assert fake.received("turn/interrupt") == []
    assert log_of(fake, "turn_completed") == ["turn-1"]
    assert log_of(fake, "turn_started") == ["turn-1"]
    assert fake.goal_status(THREAD_A) == "paused"


@pytest.mark.asyncio
async def test_a_turn_outlasting_the_turn_end_timeout_is_interrupted(
        home, repo, fake, make_codex, make_engine, clock):
    engine = await auto_resumed(home, repo, fake, make_codex, make_engine, clock,
                                reserve(codex_turn_end_timeout_seconds=0.5), turn_seconds=30)
    await reach_the_reserve(engine, clock)
    await until(lambda: engine.providers["codex"].runner.runs == {})
    assert fake.received("turn/interrupt", threadId=THREAD_A, turnId="turn-1")
    assert log_of(fake, "interrupted") == ["turn-1"] and log_of(fake, "turn_completed") == []
    assert log_of(fake, "eof_during_turn") == []
    assert fake.goal_status(THREAD_A) == "paused"
    assert engine.goals[GID].state is GoalState.PAUSED


@pytest.mark.asyncio
async def test_between_turns_it_is_the_normal_pause(home, repo, fake, make_codex, make_engine,
                                                     clock):
    """No turn runs (Codex is idle on the goal): paused in Codex and let go at once."""
    engine = await auto_resumed(home, repo, fake, make_codex, make_engine, clock, reserve(),
                                turn_seconds=0.2, continue_turns=False)
    run = engine.providers["codex"].runner.runs[GID]
    await until(lambda: run.turn_id is None)
    await reach_the_reserve(engine, clock)
    await until(lambda: engine.providers["codex"].runner.runs == {}, timeout=5)
    assert fake.received("turn/interrupt") == []
    assert fake.goal_status(THREAD_A) == "paused"


@pytest.mark.asyncio
async def test_a_final_turn_longer_than_the_idle_grace_is_not_cut(home, repo, fake, make_codex,
                                                                   make_engine):
    """The "idle" 0.169.0 says on loading the thread is no turn end: a goal Codex completed
    early in a long turn keeps the app-server until that turn has ended."""
    engine = await hosted(home, repo, fake, make_codex, make_engine, after_active=[
        ["turn_started"], ["goal_in_turn", "complete"], ["sleep", 2.5], ["end_turn"]])
    await until(lambda: engine.goals[GID].state is GoalState.DONE)
    await until(lambda: engine.providers["codex"].runner.runs == {})
    assert log_of(fake, "eof_during_turn") == []
