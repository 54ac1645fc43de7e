"""Engines of several hosts on one shared store, in one process: every goal shown everywhere,
actions carried out by the owner, readings shared by account (the multi-host process tests
in tests/multihost/ do the same with real host processes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from core.clock import FakeClock
from core.commands import Forget, Pause, Resume
from core.health import HostHealth
from core.models import GoalState, Outcome, PauseReason
from tests.support.fakes import FakeProvider, later, reading, until

pytestmark = pytest.mark.asyncio
Make = Callable[..., Any]


def paused_goal(fake: FakeProvider, goal_id: str, clock: FakeClock) -> None:
    fake.observe(goal_id, GoalState.PAUSED, reason=PauseReason.QUOTA,
                 resets_at=later(clock.now(), hours=1))


async def test_every_host_shows_every_goal_and_owns_its_own(make_host: Make,
                                                              clock: FakeClock) -> None:
    fa, fb = FakeProvider(clock), FakeProvider(clock)
    paused_goal(fa, "fake:a", clock)
    paused_goal(fb, "fake:b", clock)
    a = await make_host("laptop", fa)
    b = await make_host("desk", fb)
    await until(lambda: "fake:b" in a.shared_sync.others, 10)
    assert set(a.goals) == {"fake:a"} and set(b.goals) == {"fake:b"}
    assert {g.id: g.host for g in a.reads.goals()} == {"fake:a": "laptop", "fake:b": "desk"}
    assert {g.id for g in b.reads.goals()} == {"fake:a", "fake:b"}


async def test_an_action_on_another_hosts_goal_is_carried_out_by_its_owner(
        make_host: Make, clock: FakeClock) -> None:
    fa, fb = FakeProvider(clock), FakeProvider(clock)
    paused_goal(fa, "fake:a", clock)
    a = await make_host("laptop", fa)
    b = await make_host("desk", fb)
    await until(lambda: "fake:a" in b.shared_sync.others, 10)
    answer = await b.perform(Resume("fake:a"), "gui")
    assert answer.outcome is Outcome.RESUMED, answer
    assert [s[0] for s in fa.starts] == ["fake:a"] and fb.starts == []
    rows = await a.store.run(lambda s: s.history("fake:a", 5))
    claim = next(r for r in rows if r.event == "resume_requested")
    assert (claim.host, claim.origin) == ("laptop", "host:desk")
    again = await b.perform(Pause("fake:a"))
    assert again.outcome is Outcome.PAUSED and fa.paused == ["fake:a"]
    await until(lambda: b.shared_sync.others["fake:a"].state is GoalState.PAUSED, 10)


async def test_a_stopped_owner_is_offline_and_its_goal_is_not_touched(
        make_host: Make, clock: FakeClock) -> None:
    fa = FakeProvider(clock)
    paused_goal(fa, "fake:a", clock)
    a = await make_host("laptop", fa)
    b = await make_host("desk")
    await until(lambda: "fake:a" in b.shared_sync.others, 10)
    await a.stop()
    answer = await b.perform(Resume("fake:a"))
    assert answer.outcome is Outcome.REFUSED
    assert answer.reason.startswith("host laptop offline since ")
    assert fa.starts == []
    goal = await b.store.run(lambda s: s.get_goal("fake:a"))
    assert goal is not None and goal.state is GoalState.PAUSED


async def test_a_reading_on_one_host_reaches_the_others_of_its_account(
        make_host: Make, clock: FakeClock) -> None:
    fa, fb, fc = FakeProvider(clock), FakeProvider(clock), FakeProvider(clock)
    a = await make_host("laptop", fa)
    b = await make_host("desk", fb)
    c = await make_host("other", fc, account="bob")
    full = reading("fake:5h", 100, clock.now(), later(clock.now(), hours=2), limit_reached=True)
    await a.quota_intake.record_reading(full)
    await until(lambda: b.quotas.tracker("fake:5h").reading is not None, 10)
    heard = b.quotas.tracker("fake:5h").reading
    assert heard is not None and heard.used_percent == 100 and heard.account == "alice"
    assert c.quotas.tracker("fake:5h").reading is None  # another account's window


async def test_an_early_reset_read_on_one_host_wakes_the_goals_waiting_on_another(
        make_host: Make, clock: FakeClock) -> None:
    from tests.support.fakes import advance, settled

    fa, fb = FakeProvider(clock), FakeProvider(clock)
    reset = later(clock.now(), hours=1)
    fb.readings = [reading("fake:5h", 100, clock.now(), reset, limit_reached=True)]
    paused_goal(fb, "fake:b", clock)
    fb.observations = [fb.observe("fake:b", GoalState.PAUSED, reason=PauseReason.QUOTA,
                                  resets_at=reset, auto_resume=True)]
    a = await make_host("laptop", fa)
    b = await make_host("desk", fb, stable_seconds=5)
    assert b.goals["fake:b"].next_resume_at is not None
    assert b.goals["fake:b"].next_resume_at > later(clock.now(), minutes=59)
    back = reading("fake:5h", 3, later(clock.now(), seconds=1), later(clock.now(), hours=5))
    await a.quota_intake.record_reading(back)
    await until(lambda: b.goals["fake:b"].next_resume_at is not None
                and b.goals["fake:b"].next_resume_at <= clock.now(), 10)
    await settled(b)
    assert fb.starts == []  # still the hysteresis' to decide: stable for 5 s
    await advance(b, clock, 6)
    await until(lambda: [s[0] for s in fb.starts] == ["fake:b"], 10)
    rows = await b.store.run(lambda s: s.history("fake:b", 20))
    woke = next(r for r in rows if r.event == "resume_scheduled" and "read by" in (
        r.reason or ""))
    assert woke.reason in ("quota recovered (read by host laptop): fake:5h",
                           "quota recovered (read by another host): fake:5h")  # a catch-up's


class _Identified(FakeProvider):
    async def account_identity(self) -> str | None:
        return "chatgpt:acct-1/user-1"


async def test_hosts_whose_provider_names_the_same_account_share_its_windows(
        make_host: Make, clock: FakeClock) -> None:
    a = await make_host("laptop", _Identified(clock), account="")
    b = await make_host("desk", _Identified(clock), account="")
    c = await make_host("other", FakeProvider(clock), account="")  # says nothing: its own
    assert a.host_registry.accounts == b.host_registry.accounts
    assert a.host_registry.accounts["fake"].startswith("fake:")
    assert c.host_registry.accounts == {"fake": "host:other"}
    await a.quota_intake.record_reading(reading("fake:5h", 42, clock.now()))
    await until(lambda: b.quotas.tracker("fake:5h").reading is not None, 10)
    assert c.quotas.tracker("fake:5h").reading is None
    record = await b.store.run(lambda s: s.get_host("desk"))
    assert record is not None and record.accounts == b.host_registry.accounts


async def test_forgetting_another_hosts_goal_touches_no_runner(make_host: Make,
                                                               clock: FakeClock) -> None:
    fa, fb = FakeProvider(clock), FakeProvider(clock)
    fa.observe("fake:a", GoalState.RUNNING)
    a = await make_host("laptop", fa)
    b = await make_host("desk", fb)
    await until(lambda: "fake:a" in b.shared_sync.others, 10)
    answer = await b.perform(Forget("fake:a"))
    assert answer.outcome is Outcome.REFUSED
    assert answer.reason == "goal fake:a belongs to host laptop; only that host changes it"
    assert fb.paused == [] and fa.paused == []  # only the owner pauses its agent
    assert await a.store.run(lambda s: s.get_goal("fake:a")) is not None


async def test_a_goal_id_another_host_owns_is_a_health_problem_until_it_is_gone(
        make_host: Make, clock: FakeClock) -> None:
    fa, fb = FakeProvider(clock), FakeProvider(clock)
    paused_goal(fa, "fake:same", clock)  # e.g. pipeline:nightly on both machines
    a = await make_host("laptop", fa)
    paused_goal(fb, "fake:same", clock)
    b = await make_host("desk", fb)
    clash = ("goal fake:same belongs to host laptop: this host's goal of the same id is not "
             "watched here (give one of them another name)")
    assert b.health().problems() == [clash]
    assert HostHealth.from_json(b.health().to_json()).problems() == [clash]  # ping, status
    assert a.health().problems() == []
    await a.perform(Forget("fake:same"))
    await b.refresh()
    await b.drain()
    assert b.health().problems() == [] and "fake:same" in b.goals


async def test_a_clash_clears_also_when_the_goal_is_discovered_with_others(
        make_host: Make, clock: FakeClock) -> None:
    """A discovery of several goals is stored in one transaction; the goal another host owns
    goes on its own, so the others are stored and the clash clears once the id is free."""
    fa, fb = FakeProvider(clock), FakeProvider(clock)
    paused_goal(fa, "fake:same", clock)
    a = await make_host("laptop", fa)
    paused_goal(fb, "fake:same", clock)
    paused_goal(fb, "fake:mine", clock)
    paused_goal(fb, "fake:also", clock)
    b = await make_host("desk", fb)
    assert len(b.health().problems()) == 1
    assert {"fake:mine", "fake:also"} <= set(b.goals)
    await a.perform(Forget("fake:same"))
    await b.refresh()
    await b.drain()
    assert b.health().problems() == [] and "fake:same" in b.goals


async def test_a_providers_read_problem_is_in_the_hosts_health(make_host: Make,
                                                                clock: FakeClock) -> None:
    fa = FakeProvider(clock)
    a = await make_host("laptop", fa)
    fa.read_problems = lambda: ("x.json (nested deeper than 128 levels)",)  # type: ignore[method-assign]
    await a.refresh()
    assert a.health().problems() == [
        "provider fake: cannot read 1 file(s): x.json (nested deeper than 128 levels)"]
    assert HostHealth.from_json(a.health().to_json()).problems() == a.health().problems()
