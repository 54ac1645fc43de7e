"""Priorities and staggering: goals waiting on one window resume in priority order, then oldest
pause first, at most K at once; the next when one stops or after the settle time; equal ranks take
turns across episodes; the count is a store query, so it holds across hosts."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.commands import Pause, Resume, SetGoalPolicy
from core.models import Goal, GoalState, Outcome, PauseReason, Steering, Trigger
from core.store import Mutation
from tests.policies.support import WINDOW, H, policy_settings, rows, started, waiting
from tests.support.fakes import advance, reading

pytestmark = pytest.mark.asyncio
SETTLE = 300


def slots(k: int = 1):  # type: ignore[no-untyped-def]
    return policy_settings(max_concurrent_resumes=k, resume_settle_seconds=SETTLE)


async def test_priority_then_oldest_pause_one_at_a_time(make_engine, fake, clock) -> None:
    waiting(fake, clock, goals=("fake:a", "fake:b", "fake:c"))  # a paused first, c last
    engine = await make_engine(fake, settings=slots())
    await engine.perform(SetGoalPolicy("fake:b", "priority", "5"))
    await advance(engine, clock, H + 46)
    assert started(fake) == ["fake:b"]  # never all at the reset instant
    for goal in ("fake:a", "fake:c"):
        g = engine.goals[goal]
        assert g.state is GoalState.PAUSED and g.deferred_by == "waiting for a slot"
        assert g.next_resume_at == engine.goals["fake:b"].resumed_at + timedelta(seconds=SETTLE)
    held = (await rows(engine, "fake:c"))[0]
    assert held.outcome is Outcome.DEFERRED and held.detail["rule"] == "waiting for a slot"
    assert held.reason == "waiting for a slot on fake:5h: 1 of 1 in use by fake:b"
    # b finishes: the next one (a, the older pause) starts at once, c still waits
    fake.sink.goal_finished("fake:b", engine.goals["fake:b"].fence)
    await advance(engine, clock, 1)
    assert started(fake) == ["fake:b", "fake:a"]
    assert engine.goals["fake:c"].deferred_by == "waiting for a slot"
    # a keeps running, but after the settle time the slot passes on
    await advance(engine, clock, SETTLE - 2)
    assert started(fake) == ["fake:b", "fake:a"]
    await advance(engine, clock, 3)
    assert started(fake) == ["fake:b", "fake:a", "fake:c"]
    assert engine.goals["fake:a"].state is GoalState.RUNNING


async def test_a_pause_frees_the_slot_too(make_engine, fake, clock) -> None:
    waiting(fake, clock, goals=("fake:a", "fake:b"))
    engine = await make_engine(fake, settings=slots())
    await advance(engine, clock, H + 46)
    assert started(fake) == ["fake:a"]
    await engine.perform(Pause("fake:a"))
    await advance(engine, clock, 1)
    assert started(fake) == ["fake:a", "fake:b"]


async def test_k_at_once_and_zero_means_no_limit(make_engine, fake, clock) -> None:
    waiting(fake, clock, goals=("fake:a", "fake:b", "fake:c"))
    engine = await make_engine(fake, settings=slots(2))
    await advance(engine, clock, H + 46)
    assert started(fake) == ["fake:a", "fake:b"]


async def test_no_limit(make_engine, fake, clock) -> None:
    waiting(fake, clock, goals=("fake:a", "fake:b", "fake:c"))
    engine = await make_engine(fake, settings=slots(0))
    await advance(engine, clock, H + 46)
    assert sorted(started(fake)) == ["fake:a", "fake:b", "fake:c"]


async def _exhaust(engine, fake, clock, goal: str, resets_in: float) -> None:  # type: ignore[no-untyped-def]
    reset = clock.now() + timedelta(seconds=resets_in)
    fake.level["used"] = 100  # type: ignore[attr-defined]
    fake.level["reset"] = reset  # type: ignore[attr-defined]
    fake.hit_limit(engine.goals[goal], reset, readings=(
        reading(WINDOW, 100, clock.now(), reset, limit_reached=True),))


async def test_goals_of_equal_rank_take_turns_across_episodes(make_engine, fake, clock) -> None:
    waiting(fake, clock, goals=("fake:a", "fake:b"))
    engine = await make_engine(fake, settings=slots())
    await advance(engine, clock, H + 46)
    await advance(engine, clock, SETTLE)
    assert started(fake) == ["fake:a", "fake:b"]  # episode 1: a (the older pause) first
    # one window running out stops both (in the same minute, a's report first)
    await _exhaust(engine, fake, clock, "fake:a", 2 * H)
    await _exhaust(engine, fake, clock, "fake:b", 2 * H)
    await advance(engine, clock, 1)
    assert {engine.goals[g].pause_reason for g in ("fake:a", "fake:b")} == {PauseReason.QUOTA}
    fake.level["used"] = 0  # type: ignore[attr-defined]
    fake.level["reset"] = clock.now() + timedelta(hours=7)  # type: ignore[attr-defined]
    await advance(engine, clock, 2 * H + 46)
    assert started(fake)[2:] == ["fake:b"]  # episode 2: b, which ran less, goes first
    await advance(engine, clock, SETTLE)
    assert started(fake)[2:] == ["fake:b", "fake:a"]


async def test_a_goal_that_did_not_get_to_run_goes_first_next_time(make_engine, fake,
                                                                   clock) -> None:
    waiting(fake, clock, goals=("fake:b", "fake:a"))  # b paused first
    engine = await make_engine(fake, settings=slots())
    await advance(engine, clock, H + 46)
    assert started(fake) == ["fake:b"]
    await advance(engine, clock, 60)
    await _exhaust(engine, fake, clock, "fake:b", H)  # b used the whole window up alone
    await advance(engine, clock, 1)
    assert started(fake) == ["fake:b"]  # a, released by the free slot, meets an empty window
    assert engine.goals["fake:a"].state is GoalState.PAUSED
    fake.level["used"] = 0  # type: ignore[attr-defined]
    await advance(engine, clock, H + 46)
    assert started(fake) == ["fake:b", "fake:a"]  # a kept its older pause: first this time


async def test_the_count_is_a_store_query_so_another_hosts_resume_counts(make_engine, fake,
                                                                         clock) -> None:
    waiting(fake, clock)
    engine = await make_engine(fake, settings=slots())
    await advance(engine, clock, H + 40)
    now = clock.now() + timedelta(seconds=5)
    other = Goal(id="fake:elsewhere", provider="fake", title="another host's goal",
                 state=GoalState.RUNNING, windows=(WINDOW,), hosted=True, resumed_at=now,
                 state_since=now,
                 steering=Steering(resume_slot=True, last_resume_trigger=Trigger.AUTO),
                 created_at=now, updated_at=now)
    # written by another host sharing the store: this engine's memory never sees it
    await engine.store.run(lambda s: s.transact(other.id, lambda _: Mutation(other, None)))
    assert "fake:elsewhere" not in engine.goals
    await advance(engine, clock, 6)
    assert started(fake) == []
    held = (await rows(engine, "fake:g"))[0]
    assert held.reason == "waiting for a slot on fake:5h: 1 of 1 in use by fake:elsewhere"
    assert engine.goals["fake:g"].next_resume_at == now + timedelta(seconds=SETTLE)


async def test_a_better_ranked_goal_that_is_due_keeps_its_turn(make_engine, fake, clock) -> None:
    """What a second host's scheduler meets: it fires its lower-ranked goal first."""
    waiting(fake, clock, goals=("fake:a", "fake:c"))
    engine = await make_engine(fake, settings=slots())
    await engine.scheduler.stop()
    clock.advance(H + 46)
    await engine.quota_intake.fresh_read("fake")  # what that host's scheduler does first
    late = await engine.perform(Resume("fake:c", Trigger.AUTO), "scheduler")
    assert late.outcome is Outcome.DEFERRED
    assert late.reason == "waiting for a slot on fake:5h: 0 of 1 in use behind fake:a"
    first = await engine.perform(Resume("fake:a", Trigger.AUTO), "scheduler")
    assert first.outcome is Outcome.RESUMED and started(fake) == ["fake:a"]
