"""The early-reset poll: fresh reads while a Codex goal waits, and an early reset caught."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from core.clock import FakeClock
from core.models import GoalState, Outcome, Trigger
from core.providers.codex.early_reset import EarlyResetPolicy, EarlyResetPoll, looks_recovered
from core.providers.codex.limits import Access, RateSnapshot, Window
from tests.codex.fakecodex import rl
from tests.codex.fixtures import T0, epoch, five_and_week
from tests.support.codex import GID, H, auto, codex_goal, limited_session, requests, until

M = timedelta(minutes=1)


@pytest.fixture
def repo(tmp_path):
    path = tmp_path / "repo"
    path.mkdir()
    return path


def test_the_interval_is_jittered_and_denser_near_the_reset():
    policy = EarlyResetPolicy()
    assert policy.interval(None, 0.0) == 600 and policy.interval(None, 0.999) < 900
    assert policy.interval(5 * 3600, 0.5) == 750
    assert 360 <= policy.interval(600, 0.5) <= 540
    with pytest.raises(ValueError):
        EarlyResetPolicy(min_seconds=0)
    with pytest.raises(ValueError):
        EarlyResetPolicy(near_min_seconds=10, near_max_seconds=5)


def test_no_timer_with_nothing_waiting():
    poll = EarlyResetPoll(EarlyResetPolicy(), random.Random(1))
    assert poll.due_at(T0, []) is None
    due = poll.due_at(T0, [T0 + 4 * H])
    assert due is not None and T0 + 10 * M <= due <= T0 + 15 * M
    assert poll.due_at(T0 + M, [T0 + 4 * H]) == due  # stable until taken
    poll.taken()
    assert poll.reads == 1 and poll.due_at(T0, []) is None


def snap(used5: float, access: Access | None, reached: str | None = None) -> RateSnapshot:
    return RateSnapshot(T0, {"primary": Window(used5, 300, T0 + H),
                             "secondary": Window(20, 10080, T0 + 90 * H)},
                        reached_type=reached, access=access, source="app-server")


def test_recovery_is_authoritative_only_when_codex_allows_it():
    assert looks_recovered(snap(3, Access(ordinary_allowed=True)))
    assert not looks_recovered(snap(3, Access(ordinary_allowed=False)))  # whatever the %
    assert not looks_recovered(snap(3, Access(ordinary_allowed=True, spend_control=True)))
    assert looks_recovered(snap(3, Access()))  # unknown: the windows decide
    assert not looks_recovered(snap(100, Access()))
    assert not looks_recovered(snap(3, None, reached="rate_limit_reached"))
    # a one-window account: the weekly window in the primary slot, told apart by its length
    weekly_only = RateSnapshot(T0, {"primary": Window(100, 10080, T0 + 90 * H)},
                               access=Access(), source="app-server")
    assert set(weekly_only.windows) == {"codex:weekly"} and not looks_recovered(weekly_only)


@pytest.mark.asyncio
async def test_an_early_reset_is_caught_by_the_fresh_read_poll(
        home, repo, fake, make_codex, make_engine, clock: FakeClock):
    reset5 = T0 + 4 * H
    limited_session(home, repo, five_and_week(100.0, reset5, 40.0, T0 + 90 * H))
    fake.script(goals=codex_goal(), rate_limits=[rl(0, epoch(T0 + 5 * H), 41, epoch(T0 + 90 * H))],
                access=[{"ordinaryUsageAllowed": True}])
    engine = await make_engine(make_codex(auto()), settings=auto())
    provider = engine.providers["codex"]
    assert engine.goals[GID].next_resume_at == reset5 + timedelta(seconds=45)
    due = provider.next_wake(clock.now())
    assert due is not None and T0 + 10 * M <= due <= T0 + 15 * M
    assert fake.received("account/rateLimits/read") == []  # no read before the poll is due

    clock.advance((due - clock.now()).total_seconds() + 1)
    await until(lambda: engine.goals[GID].state is GoalState.RUNNING)
    assert clock.now() < reset5 and len(fake.activations()) == 1
    [resumed] = [r for r in await requests(engine) if r.outcome is Outcome.RESUMED]
    assert resumed.trigger is not Trigger.MANUAL
    assert provider.early.reads == 1


@pytest.mark.asyncio
async def test_ordinary_usage_not_allowed_blocks_although_percentages_look_recovered(
        home, repo, fake, make_codex, make_engine, clock: FakeClock):
    reset5 = T0 + H
    limited_session(home, repo, five_and_week(100.0, reset5, 40.0, T0 + 90 * H))
    fake.script(goals=codex_goal(), rate_limits=[rl(3, epoch(T0 + 6 * H), 41, epoch(T0 + 90 * H))],
                access=[{"ordinaryUsageAllowed": False}])
    engine = await make_engine(make_codex(auto()), settings=auto())
    clock.advance((reset5 - T0).total_seconds() + 60)
    await until(lambda: engine.goals[GID].next_resume_at is not None
                and engine.goals[GID].next_resume_at > clock.now())
    assert fake.activations() == []
    deferred = [r for r in await requests(engine) if r.outcome is Outcome.DEFERRED]
    assert deferred and "codex:access" in (deferred[-1].reason or "")
    access = engine.quotas.effective("codex:access", clock.now())
    assert access is not None and access.limit_reached
    assert "not allowed" in (access.note or "")
