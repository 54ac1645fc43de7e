"""The resume entry point and the auto-resume policy, end to end on an engine with a fake clock."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.commands import Cancel, Pause, Resume, SetAutoResume, Start
from core.models import GoalState, Outcome, PauseReason, Trigger
from core.settings import Settings
from tests.support.engine import H, quota_paused
from tests.support.fakes import advance, reading, settled, until

pytestmark = pytest.mark.asyncio


async def test_quota_pause_is_scheduled_at_reset_plus_margin(make_engine, fake, clock) -> None:
    quota_paused(fake, clock)
    engine = await make_engine(fake)
    g = engine.goals["fake:g"]
    assert g.state is GoalState.PAUSED and g.pause_reason is PauseReason.QUOTA
    assert g.next_resume_at == clock.now() + timedelta(seconds=H + 45)
    assert g.auto_resume_note is None
    events = [r.event for r in await engine.reads.history("fake:g")]
    assert events == ["resume_scheduled", "discovered"]


async def test_auto_resume_fires_once_after_the_fresh_read(make_engine, fake, clock) -> None:
    quota_paused(fake, clock)
    engine = await make_engine(fake)
    await advance(engine, clock, H + 44)
    assert fake.starts == [] and fake.fresh_reads == 0
    await advance(engine, clock, 2)
    assert fake.starts == [("fake:g", 1)]
    assert fake.fresh_reads == 1
    g = engine.goals["fake:g"]
    assert g.state is GoalState.RUNNING and g.hosted and g.attempts == 1
    rows = [r for r in await engine.reads.history("fake:g") if r.event == "resume_requested"]
    assert rows[0].trigger is Trigger.AUTO and rows[0].origin == "scheduler"
    assert rows[0].outcome is Outcome.RESUMED
    assert rows[0].quotas and rows[0].quotas[0]["used_percent"] == 3
    await advance(engine, clock, 600)
    assert len(fake.starts) == 1


async def test_never_into_a_still_empty_quota(make_engine, fake, clock) -> None:
    quota_paused(fake, clock)
    fake.fresh_readings = lambda: [reading("fake:5h", 100, clock.now(),
                                           clock.now() + timedelta(hours=2), limit_reached=True)]
    engine = await make_engine(fake)
    await advance(engine, clock, H + 50)
    assert fake.starts == []
    g = engine.goals["fake:g"]
    assert g.state is GoalState.PAUSED
    # deferred to the new reset (+ margin) the fresh read revealed
    assert g.next_resume_at == clock.now() + timedelta(hours=2, seconds=45)
    row = (await engine.reads.history("fake:g", limit=1))[0]
    assert row.event == "resume_requested" and row.outcome is Outcome.DEFERRED
    assert "fake:5h" in (row.reason or "")


async def test_weekly_still_exhausted_blocks_the_5h_reset(make_engine, fake, clock) -> None:
    reset_5h = clock.now() + timedelta(seconds=H)
    reset_week = clock.now() + timedelta(days=3)
    fake.readings = [reading("fake:5h", 100, clock.now(), reset_5h, limit_reached=True),
                     reading("fake:weekly", 100, clock.now(), reset_week, window_seconds=604800)]
    fake.observe("fake:g", GoalState.PAUSED, reason=PauseReason.QUOTA, resets_at=reset_5h,
                 auto_resume=True, windows=("fake:5h", "fake:weekly"))
    fake.fresh_readings = lambda: [
        reading("fake:5h", 0, clock.now(), reset_5h + timedelta(hours=5)),
        reading("fake:weekly", 100, clock.now(), reset_week, window_seconds=604800)]
    engine = await make_engine(fake)
    # the not-before time already accounts for the later weekly reset
    assert engine.goals["fake:g"].next_resume_at == reset_week + timedelta(seconds=45)
    await advance(engine, clock, H + 60)
    assert fake.starts == []


async def test_a_user_pause_is_never_auto_resumed(make_engine, fake, clock) -> None:
    quota_paused(fake, clock)
    engine = await make_engine(fake)
    result = await engine.perform(Pause("fake:g"), "cli")
    assert result.outcome is Outcome.PAUSED
    g = engine.goals["fake:g"]
    assert g.pause_reason is PauseReason.USER and g.next_resume_at is None
    assert "never auto-resumed" in (g.auto_resume_note or "")
    await advance(engine, clock, H + 120)
    assert fake.starts == []
    auto = await engine.perform(Resume("fake:g", Trigger.AUTO), "scheduler")
    assert auto.outcome is Outcome.REFUSED and "user" in auto.reason
    assert (await engine.perform(Pause("fake:g"))).outcome is Outcome.ALREADY_PAUSED
    manual = await engine.perform(Resume("fake:g"), "cli")
    assert manual.outcome is Outcome.RESUMED and fake.starts == [("fake:g", 2)]


async def test_auto_resume_off_is_shown_not_scheduled_and_toggling_plans(make_engine, fake,
                                                                         clock) -> None:
    quota_paused(fake, clock, auto=False)
    engine = await make_engine(fake)
    g = engine.goals["fake:g"]
    assert g.next_resume_at is None and g.auto_resume_note == "auto-resume is off"
    on = await engine.perform(SetAutoResume("fake:g", True))
    assert on.outcome is Outcome.UPDATED
    assert engine.goals["fake:g"].next_resume_at == clock.now() + timedelta(seconds=H + 45)
    assert (await engine.perform(SetAutoResume("fake:g", True))).outcome is Outcome.UNCHANGED
    await engine.perform(SetAutoResume("fake:g", False))
    assert engine.goals["fake:g"].next_resume_at is None
    await advance(engine, clock, H + 60)
    assert fake.starts == []


@pytest.mark.parametrize(("resets_in", "kw", "note"), [
    (None, {}, "no reset time known"),
    (200 * H, {}, "beyond max wait"),
])
async def test_unknown_or_far_resets_are_not_scheduled(make_engine, fake, clock, resets_in,
                                                       kw, note) -> None:
    reset = None if resets_in is None else clock.now() + timedelta(seconds=resets_in)
    fake.observe("fake:g", GoalState.PAUSED, reason=PauseReason.QUOTA, resets_at=reset,
                 auto_resume=True)
    engine = await make_engine(fake)
    g = engine.goals["fake:g"]
    assert g.next_resume_at is None and g.auto_resume_note == note
    result = await engine.perform(Resume("fake:g", Trigger.AUTO), "scheduler")
    assert result.outcome is Outcome.REFUSED and result.reason == note
    assert engine.scheduler.next_wake is None  # nothing pending: no wake-ups at all


async def test_credits_depleted_is_never_scheduled(make_engine, fake, clock) -> None:
    fake.observe("fake:g", GoalState.RUNNING, auto_resume=True)
    engine = await make_engine(fake)
    assert (await engine.perform(Start("fake:g"))).outcome is Outcome.REFUSED  # not idle
    # make it a goal Goalkeeper runs, then let the runner report a credit limit
    await engine.perform(Pause("fake:g"))
    await engine.perform(Resume("fake:g"))
    fake.hit_limit(engine.goals["fake:g"], clock.now() + timedelta(hours=1),
                   no_timed_reset=True, detail="workspace credits depleted: no timed reset")
    await settled(engine)
    g = engine.goals["fake:g"]
    assert g.state is GoalState.PAUSED and g.pause_reason is PauseReason.QUOTA
    assert g.next_resume_at is None
    assert g.auto_resume_note == "workspace credits depleted: no timed reset"


async def test_attempt_cap_counts_relimits_and_survives_a_restart(make_engine, fake, clock,
                                                                  paths) -> None:
    quota_paused(fake, clock, resets_in=600)
    engine = await make_engine(fake, settings=Settings(resume_jitter_seconds=0,
                                                       max_auto_attempts=2))
    for attempt in (1, 2):
        due = engine.goals["fake:g"].next_resume_at
        await advance(engine, clock, (due - clock.now()).total_seconds())
        assert len(fake.starts) == attempt
        await advance(engine, clock, 60)  # runs a minute, then the limit again
        fake.hit_limit(engine.goals["fake:g"], clock.now() + timedelta(seconds=600))
        await settled(engine)
        assert engine.goals["fake:g"].attempts == attempt
    g = engine.goals["fake:g"]
    assert g.next_resume_at is None and g.auto_resume_note == "attempt cap reached (2/2)"
    assert (await engine.reads.history("fake:g", limit=1))[0].event == "gave_up"
    await engine.stop()
    again = await make_engine(fake, settings=Settings(resume_jitter_seconds=0,
                                                      max_auto_attempts=2))
    assert again.goals["fake:g"].attempts == 2
    await advance(again, clock, 3 * H)
    assert len(fake.starts) == 2
    result = await again.perform(Resume("fake:g", Trigger.AUTO), "scheduler")
    assert result.outcome is Outcome.REFUSED and "attempt cap" in result.reason
    manual = await again.perform(Resume("fake:g"), "cli")
    assert manual.outcome is Outcome.RESUMED and again.goals["fake:g"].attempts == 0


async def test_a_late_relimit_starts_a_new_episode(make_engine, fake, clock) -> None:
    quota_paused(fake, clock, resets_in=600)
    engine = await make_engine(fake)
    await advance(engine, clock, 700)
    assert engine.goals["fake:g"].attempts == 1
    await advance(engine, clock, 2 * H)  # worked well for two hours
    fake.hit_limit(engine.goals["fake:g"], clock.now() + timedelta(seconds=600))
    await settled(engine)
    assert engine.goals["fake:g"].attempts == 0


async def test_manual_resume_from_any_reason_cancels_the_pending_auto_resume(make_engine, fake,
                                                                            clock) -> None:
    quota_paused(fake, clock)
    engine = await make_engine(fake)
    result = await engine.perform(Resume("fake:g"), "gui")
    assert result.outcome is Outcome.RESUMED and result.state is GoalState.RUNNING
    assert engine.goals["fake:g"].next_resume_at is None
    await advance(engine, clock, H + 100)
    assert len(fake.starts) == 1


async def test_runner_failure_falls_back_to_paused_and_retries_later(make_engine, fake,
                                                                     clock) -> None:
    quota_paused(fake, clock)
    fake.behaviour = "fail"
    engine = await make_engine(fake)
    await advance(engine, clock, H + 46)
    g = engine.goals["fake:g"]
    assert g.state is GoalState.PAUSED and g.pause_reason is PauseReason.QUOTA
    assert g.pause_detail == "the agent refused to start"
    assert g.next_resume_at == clock.now() + timedelta(seconds=300)
    row = (await engine.reads.history("fake:g", limit=1))[0]
    assert row.outcome is Outcome.FAILED
    fake.behaviour = "start"
    await advance(engine, clock, 300)
    assert engine.goals["fake:g"].state is GoalState.RUNNING


async def test_a_hanging_runner_is_time_boxed(make_engine, fake, clock) -> None:
    quota_paused(fake, clock)
    fake.behaviour = "hang"
    engine = await make_engine(fake, settings=Settings(resume_jitter_seconds=0,
                                                       runner_start_timeout_seconds=0.05))
    result = await engine.perform(Resume("fake:g"), "cli")
    assert result.outcome is Outcome.FAILED and "did not start within" in result.reason
    assert engine.goals["fake:g"].state is GoalState.PAUSED


async def test_runner_deferral_is_not_an_attempt(make_engine, fake, clock) -> None:
    quota_paused(fake, clock)
    fake.behaviour = "defer"
    engine = await make_engine(fake)
    await advance(engine, clock, H + 46)
    g = engine.goals["fake:g"]
    assert g.state is GoalState.PAUSED and g.attempts == 0
    assert g.next_resume_at == clock.now() + timedelta(seconds=120)
    row = (await engine.reads.history("fake:g", limit=1))[0]
    assert row.outcome is Outcome.DEFERRED and "another process" in (row.reason or "")


@pytest.mark.parametrize(("behaviour", "state"), [("already_running", GoalState.RUNNING),
                                                  ("already_done", GoalState.DONE)])
async def test_runner_finding_the_agent_busy_or_done(make_engine, fake, clock, behaviour,
                                                     state) -> None:
    quota_paused(fake, clock)
    fake.behaviour = behaviour
    engine = await make_engine(fake)
    result = await engine.perform(Resume("fake:g"))
    assert result.outcome is Outcome.RESUMED and engine.goals["fake:g"].state is state
    assert fake.starts == []


async def test_outcomes_for_every_state(make_engine, fake, clock) -> None:
    quota_paused(fake, clock)
    fake.observe("fake:done", GoalState.DONE)
    engine = await make_engine(fake)
    assert (await engine.perform(Resume("nope"))).outcome is Outcome.UNKNOWN_GOAL
    assert (await engine.perform(Resume("fake:done"))).outcome is Outcome.REFUSED
    await engine.perform(Resume("fake:g"))
    assert (await engine.perform(Resume("fake:g"))).outcome is Outcome.ALREADY_RUNNING
    cancelled = await engine.perform(Cancel("fake:g"))
    assert cancelled.outcome is Outcome.CANCELLED and fake.cancelled == ["fake:g"]
    refused = await engine.perform(Resume("fake:g"))
    assert refused.outcome is Outcome.REFUSED and refused.reason == "not paused: cancelled"
    assert (await engine.perform(Cancel("fake:g"))).outcome is Outcome.CANCELLED
    assert (await engine.perform(Pause("fake:g"))).outcome is Outcome.REFUSED
    # every call left a row, refusals and no-ops included
    requests = [r for r in await engine.reads.history(limit=100) if r.event.endswith("_requested")]
    assert len(requests) == 8


async def test_already_resuming_while_the_runner_starts(make_engine, fake, clock) -> None:
    import asyncio

    quota_paused(fake, clock)
    engine = await make_engine(fake)
    fake.gate = asyncio.Event()
    first = asyncio.ensure_future(engine.perform(Resume("fake:g"), "gui"))
    await settled(engine)
    second = await engine.perform(Resume("fake:g"), "cli")
    assert second.outcome is Outcome.ALREADY_RESUMING
    fake.gate.set()
    assert (await first).outcome is Outcome.RESUMED
    assert fake.starts == [("fake:g", 1)]


async def test_pause_while_resuming_wins_and_stops_the_new_runner(make_engine, fake,
                                                                  clock) -> None:
    import asyncio

    quota_paused(fake, clock)
    engine = await make_engine(fake)
    fake.gate = asyncio.Event()
    resuming = asyncio.ensure_future(engine.perform(Resume("fake:g"), "gui"))
    await until(lambda: fake.resume_calls != [])
    paused = await engine.perform(Pause("fake:g"))
    assert paused.outcome is Outcome.PAUSED
    fake.gate.set()
    result = await resuming
    assert result.outcome is Outcome.REFUSED and "superseded" in result.reason
    g = engine.goals["fake:g"]
    assert g.state is GoalState.PAUSED and g.pause_reason is PauseReason.USER
    assert fake.paused == ["fake:g", "fake:g"]  # by the pause, then the runner just started


async def test_stale_runner_reports_are_ignored(make_engine, fake, clock) -> None:
    quota_paused(fake, clock)
    engine = await make_engine(fake)
    await engine.perform(Resume("fake:g"))
    old = engine.goals["fake:g"]
    await engine.perform(Pause("fake:g"))
    await engine.perform(Resume("fake:g"))
    fake.hit_limit(old, clock.now() + timedelta(hours=1))  # the first runner, fence 1
    fake.sink.goal_finished(old.id, old.fence)
    await settled(engine)
    assert engine.goals["fake:g"].state is GoalState.RUNNING


async def test_runner_reports_move_the_goal(make_engine, fake, clock) -> None:
    quota_paused(fake, clock)
    engine = await make_engine(fake)
    await engine.perform(Resume("fake:g"))
    g = engine.goals["fake:g"]
    fake.sink.goal_paused(g.id, g.fence, PauseReason.AUTH, "token expired")
    await settled(engine)
    g = engine.goals["fake:g"]
    assert g.state is GoalState.PAUSED and g.pause_reason is PauseReason.AUTH
    assert (await engine.perform(Resume(g.id, Trigger.AUTO),
                                 "scheduler")).outcome is Outcome.REFUSED
    await engine.perform(Resume(g.id))
    g = engine.goals["fake:g"]
    fake.sink.goal_finished(g.id, g.fence, "all done")
    await settled(engine)
    assert engine.goals["fake:g"].state is GoalState.DONE


async def test_a_failed_fresh_read_falls_back_and_says_so(make_engine, fake, clock) -> None:
    quota_paused(fake, clock)
    fake.fresh_error = RuntimeError("codex app-server is not installed")
    engine = await make_engine(fake)
    await advance(engine, clock, H + 46)
    assert fake.starts == [("fake:g", 1)]  # decided on the inferred reading: the reset passed
    row = next(r for r in await engine.reads.history("fake:g") if r.event == "resume_requested")
    assert "codex app-server is not installed" in row.detail["quota_read"]
    assert row.quotas[0]["exactness"] == "inferred"


async def test_a_hanging_fresh_read_is_time_boxed(make_engine, fake, clock) -> None:
    import asyncio

    quota_paused(fake, clock)
    engine = await make_engine(fake, settings=Settings(resume_jitter_seconds=0,
                                                       fresh_read_timeout_seconds=0.05))

    async def hang(fresh: bool = False):  # type: ignore[no-untyped-def]
        await asyncio.sleep(3600)

    fake.read_quotas = hang  # type: ignore[method-assign]
    note = await engine.quota_intake.fresh_read("fake")
    assert note is not None and "fresh read failed (TimeoutError)" in note


async def test_a_refused_automatic_resume_drops_a_stale_schedule_instead_of_spinning(
        make_engine, fake, clock, paths) -> None:
    # a goal left with a not-before time in the past although it may not be resumed (the cap
    # is reached): the refusal drops the schedule — left in place, the scheduler would find it
    # due on every pass and call again at once
    from core.models import Goal
    from core.store import Mutation, SqliteStore

    paths.ensure()
    store = SqliteStore(paths.database)
    goal = Goal(id="fake:g", provider="fake", title="g", state=GoalState.PAUSED,
                pause_reason=PauseReason.QUOTA, auto_resume=True, windows=("fake:5h",),
                resets_at=clock.now() - timedelta(hours=1), attempts=1,
                next_resume_at=clock.now() - timedelta(minutes=1),
                created_at=clock.now(), updated_at=clock.now())
    store.transact(goal.id, lambda cur: Mutation(goal, None))
    store.close()
    engine = await make_engine(fake, settings=Settings(resume_jitter_seconds=0,
                                                       max_auto_attempts=1))
    await advance(engine, clock, 60)
    await advance(engine, clock, 60)
    g = engine.goals["fake:g"]
    assert g.state is GoalState.PAUSED and g.next_resume_at is None
    assert g.auto_resume_note == "attempt cap reached (1/1)"
    requests = [r for r in await engine.reads.history("fake:g", limit=1000)
                if r.event == "resume_requested"]
    assert [r.outcome for r in requests] == [Outcome.REFUSED]
    assert fake.resume_calls == []


async def test_a_limit_seen_in_the_agents_files_starts_a_new_episode(make_engine, fake,
                                                                     clock) -> None:
    # the agent was already running when the auto resume came (not hosted), so the next limit
    # is seen in its files, not reported by a runner: hours later, that is a new episode
    quota_paused(fake, clock, resets_in=600)
    fake.behaviour = "already_running"
    engine = await make_engine(fake, settings=Settings(resume_jitter_seconds=0,
                                                       max_auto_attempts=2))
    for _ in range(3):
        due = engine.goals["fake:g"].next_resume_at
        assert due is not None, engine.goals["fake:g"].auto_resume_note
        await advance(engine, clock, (due - clock.now()).total_seconds())
        g = engine.goals["fake:g"]
        assert g.state is GoalState.RUNNING and not g.hosted and g.attempts == 1
        await advance(engine, clock, 3 * H)  # worked for hours, then the limit again
        reset = clock.now() + timedelta(seconds=600)
        fake.readings = [reading("fake:5h", 100, clock.now(), reset, limit_reached=True)]
        fake.fresh_readings = lambda reset=reset: [
            reading("fake:5h", 3, clock.now(), reset + timedelta(hours=5))]
        engine.provider_intake.goal_observed("fake", fake.observe("fake:g", GoalState.PAUSED,
                                                  reason=PauseReason.QUOTA, resets_at=reset))
        await settled(engine)
        assert engine.goals["fake:g"].attempts == 0


async def test_stopping_waits_for_a_resume_under_way_and_refuses_new_ones(make_engine, fake,
                                                                          clock) -> None:
    import asyncio

    quota_paused(fake, clock)
    engine = await make_engine(fake)
    order: list[str] = []

    async def provider_stop() -> None:
        order.append("provider stopped")

    fake.stop = provider_stop  # type: ignore[method-assign]
    fake.gate = asyncio.Event()
    resuming = asyncio.ensure_future(engine.perform(Resume("fake:g"), "cli"))
    await until(lambda: fake.resume_calls != [])
    stopping = asyncio.ensure_future(engine.stop())
    await asyncio.sleep(0.01)
    late = await engine.perform(Resume("fake:g"), "cli")
    assert (late.outcome, late.reason) == (Outcome.REFUSED, "the host is stopping")
    assert order == []  # the provider is not stopped under the resume
    fake.gate.set()
    assert (await resuming).outcome is Outcome.RESUMED
    order.append("resume settled")
    await stopping
    assert order == ["resume settled", "provider stopped"]


async def test_a_failed_start_past_the_cap_schedules_no_retry(make_engine, fake, clock) -> None:
    quota_paused(fake, clock)
    fake.behaviour = "fail"
    engine = await make_engine(fake, settings=Settings(resume_jitter_seconds=0,
                                                       max_auto_attempts=1))
    await advance(engine, clock, H + 46)
    g = engine.goals["fake:g"]
    assert g.state is GoalState.PAUSED and g.next_resume_at is None
    assert g.auto_resume_note == "attempt cap reached (1/1)"
