"""End to end: engine + FakeClock + the Codex provider + a fake ``codex`` on PATH.

Every scenario asserts on the fake's invocation log, so "exactly one resume" means exactly one
``thread/goal/set {status: active}`` reached Codex.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from datetime import timedelta

import pytest

from core.clock import FakeClock
from core.commands import Cancel, Pause, Resume, SetAutoResume
from core.models import GoalState, Outcome, PauseReason, Trigger
from core.providers.codex.rpc import RpcError
from tests.codex.fakecodex import rl
from tests.codex.fixtures import (
    T0,
    THREAD_A,
    epoch,
    five_and_week,
    goal,
    meta,
    token_count,
)
from tests.support.codex import (
    GID,
    OBJECTIVE,
    H,
    auto,
    codex_goal,
    goals_db,
    hosted,
    limited_session,
    requests,
    stopped,
    until,
)

# -- the scenarios the issue lists ----------------------------------------------------------


@pytest.mark.asyncio
async def test_five_hour_reset_while_weekly_is_still_full_does_not_resume(
        home, repo, fake, make_codex, make_engine, clock: FakeClock):
    reset5, reset7 = T0 + H, T0 + 50 * H
    limited_session(home, repo, five_and_week(100.0, reset5, 97.0, reset7))
    weekly_full = rl(0, epoch(reset5 + 5 * H), 100, epoch(reset7), reached="rate_limit_reached")
    recovered = rl(0, epoch(reset7 + 5 * H), 0, epoch(reset7 + 168 * H))
    fake.script(goals=codex_goal(), rate_limits=[weekly_full, recovered])
    engine = await make_engine(make_codex(auto()), settings=auto())
    assert engine.goals[GID].next_resume_at == reset5 + timedelta(seconds=45)

    clock.advance((reset5 - T0).total_seconds() + 60)
    await until(lambda: engine.goals[GID].next_resume_at is not None
                and engine.goals[GID].next_resume_at > reset5 + H)
    assert fake.activations() == []
    assert engine.goals[GID].state is GoalState.PAUSED
    deferred = (await requests(engine))[0]
    assert deferred.outcome is Outcome.DEFERRED and "codex:weekly" in (deferred.reason or "")

    clock.advance((reset7 - clock.now()).total_seconds() + 60)
    await until(lambda: engine.goals[GID].state is GoalState.RUNNING)
    assert len(fake.activations()) == 1
    # the two pre-resume reads, and the early-reset poll's while the goal waited
    early = engine.providers["codex"].early.reads
    assert len(fake.received("account/rateLimits/read")) == 2 + early


@pytest.mark.asyncio
async def test_overdue_reset_found_at_start_up_is_rechecked_then_resumed_once(
        home, repo, fake, make_codex, make_engine, clock: FakeClock):
    limited_session(home, repo, five_and_week(100.0, T0 - H, 40.0, T0 + 90 * H),
                    at=T0 - 6 * H)
    fake.script(goals=codex_goal(), rate_limits=[rl(3, epoch(T0 + 4 * H), 41, epoch(T0 + 90 * H))])
    engine = await make_engine(make_codex(auto()), settings=auto())
    await until(lambda: engine.goals[GID].state is GoalState.RUNNING)
    methods = [e["recv"]["method"] for e in fake.log() if "recv" in e]
    assert methods.index("account/rateLimits/read") < methods.index("thread/goal/set")
    assert len(fake.activations()) == 1
    assert fake.goal_status(THREAD_A) == "active"
    [resumed] = [r for r in await requests(engine) if r.outcome is Outcome.RESUMED]
    assert resumed.trigger is Trigger.STARTUP
    g = engine.goals[GID]
    assert g.hosted and g.attempts == 1
    resume_call = [e for e in fake.invocations() if e["argv"] == ["app-server"]][-1]
    assert resume_call["cwd"] == str(repo)
    clock.advance(3600)
    await asyncio.sleep(0.2)
    assert len(fake.activations()) == 1


@pytest.mark.asyncio
async def test_manual_and_automatic_resume_racing_resume_once(
        home, repo, fake, make_codex, make_engine):
    limited_session(home, repo, five_and_week(100.0, T0 - H, 40.0, T0 + 90 * H),
                    at=T0 - 6 * H)
    fake.script(goals=codex_goal(), rate_limits=[rl(3, epoch(T0 + 4 * H), 41, epoch(T0 + 90 * H))])
    settings = auto(auto_resume_default=False)
    engine = await make_engine(make_codex(settings), settings=settings)
    await engine.perform(SetAutoResume(GID, True), "test")
    results = await asyncio.gather(
        engine.perform(Resume(GID, Trigger.MANUAL), "cli"),
        engine.perform(Resume(GID, Trigger.AUTO), "scheduler"),
        engine.scheduler.tick(Trigger.AUTO),
    )
    outcomes = sorted(r.outcome.value for r in results[:2])
    assert Outcome.RESUMED.value in outcomes
    await until(lambda: engine.goals[GID].state is GoalState.RUNNING)
    assert len(fake.activations()) == 1


@pytest.mark.asyncio
async def test_relimited_after_resume_counts_the_attempt_and_the_cap_survives_a_restart(
        home, repo, fake, make_codex, make_engine, clock: FakeClock):
    limited_session(home, repo, five_and_week(100.0, T0 - H, 40.0, T0 + 90 * H),
                    at=T0 - 6 * H)
    ok = rl(3, epoch(T0 + 2 * H), 41, epoch(T0 + 90 * H))
    full = rl(100, epoch(T0 + 2 * H), 41, epoch(T0 + 90 * H), reached="rate_limit_reached")
    fake.script(goals=codex_goal(), rate_limits=[ok, full, ok, full, ok, full],
                after_active=[["turn_started"], ["rate_update", {"primary": {"usedPercent": 100}}],
                              ["goal", "usageLimited"]])
    settings = auto(max_auto_attempts=2)
    engine = await make_engine(make_codex(settings), settings=settings)
    await until(lambda: len(fake.activations()) == 1
                and engine.goals[GID].state is GoalState.PAUSED)
    g = engine.goals[GID]
    assert g.attempts == 1 and g.pause_reason is PauseReason.QUOTA
    assert g.next_resume_at == T0 + 2 * H + timedelta(seconds=45)

    clock.advance(2 * 3600 + 60)
    await until(lambda: len(fake.activations()) == 2
                and engine.goals[GID].state is GoalState.PAUSED)
    await until(lambda: engine.goals[GID].attempts == 2
                and engine.goals[GID].next_resume_at is None)
    assert "attempt cap reached (2/2)" in (engine.goals[GID].auto_resume_note or "")

    await engine.stop()
    engine = await make_engine(make_codex(settings), settings=settings)
    g = engine.goals[GID]
    assert (g.state, g.attempts, g.next_resume_at) == (GoalState.PAUSED, 2, None)
    clock.advance(24 * 3600)
    await asyncio.sleep(0.3)
    assert len(fake.activations()) == 2


@pytest.mark.asyncio
async def test_credits_depleted_while_hosted_is_never_scheduled(
        home, repo, fake, make_codex, make_engine, clock: FakeClock):
    limited_session(home, repo, five_and_week(100.0, T0 - H, 40.0, T0 + 90 * H),
                    at=T0 - 6 * H)
    ok = rl(3, epoch(T0 + 2 * H), 41, epoch(T0 + 90 * H))
    depleted = {**ok, "rateLimitReachedType": "workspace_owner_credits_depleted"}
    fake.script(goals=codex_goal(), rate_limits=[ok, depleted],
                after_active=[["turn_started"], ["goal", "usageLimited"]])
    engine = await make_engine(make_codex(auto()), settings=auto())
    await until(lambda: engine.goals[GID].state is GoalState.PAUSED
                and len(fake.activations()) == 1)
    g = engine.goals[GID]
    assert g.next_resume_at is None
    assert "no timed reset" in (g.auto_resume_note or "")
    clock.advance(7 * 24 * 3600)
    await asyncio.sleep(0.3)
    assert len(fake.activations()) == 1


@pytest.mark.asyncio
async def test_legacy_resets_in_seconds_schedules_from_the_line_time(
        home, repo, fake, make_codex, make_engine, clock: FakeClock):
    line_time = T0 - 2 * H
    legacy = {"primary": {"used_percent": 100.0, "window_minutes": 299,
                          "resets_in_seconds": 3 * 3600},
              "secondary": {"used_percent": 10.0, "window_minutes": 10079,
                            "resets_in_seconds": 5 * 86400}}
    limited_session(home, repo, legacy, at=line_time)
    fake.script(goals=codex_goal(), rate_limits=[rl(0, epoch(T0 + 6 * H), 10,
                                                    epoch(T0 + 90 * H))])
    engine = await make_engine(make_codex(auto()), settings=auto())
    reset = line_time + 3 * H  # T0 + 1 h: relative to the line, not to now
    assert engine.goals[GID].resets_at == reset
    assert engine.goals[GID].next_resume_at == reset + timedelta(seconds=45)
    clock.advance(3600 + 50)
    await until(lambda: engine.goals[GID].state is GoalState.RUNNING)
    assert len(fake.activations()) == 1


@pytest.mark.asyncio
async def test_exec_fallback_closes_stdin_and_runs_in_the_session_directory(
        home, repo, fake, make_codex, make_engine):
    path = limited_session(home, repo, five_and_week(100.0, T0 - H, 40.0, T0 + 90 * H),
                           at=T0 - 6 * H)
    fake.script(mode="no_goal_methods", goals=codex_goal(),
                rate_limits=[rl(3, epoch(T0 + 4 * H), 41, epoch(T0 + 90 * H))],
                exec={"rollout": str(path), "append": [goal(THREAD_A, "complete", T0)]})
    settings = auto(auto_resume_default=False)
    engine = await make_engine(make_codex(settings), settings=settings)
    result = await engine.perform(Resume(GID), "cli")
    assert result.outcome is Outcome.RESUMED
    await until(lambda: engine.goals[GID].state is GoalState.DONE)
    [call] = [e for e in fake.invocations() if e["argv"][:1] == ["exec"]]
    assert call["argv"] == ["exec", "resume", THREAD_A,
                            "The usage limit has reset; continue working on the active goal."]
    assert call["cwd"] == str(repo) and call["stdin"] == "devnull"
    assert fake.activations() == []  # this Codex has no goal methods
    assert not [e for e in fake.invocations() if e["argv"] == ["exec", "resume", "--last"]]


@pytest.mark.asyncio
async def test_a_codex_outside_the_supported_range_is_named_on_resume(
        home, repo, fake, make_codex, make_engine):
    engine = await hosted(home, repo, fake, make_codex, make_engine, version="codex-cli 0.150.1",
                          after_active=[["turn_started"], ["goal", "complete"]])
    await engine.drain()
    [note] = [r for r in await engine.reads.history(GID) if r.event == "codex_version"]
    assert "Codex 0.150.1 is installed" in note.reason and "0.169–0.171" in note.reason
    assert engine.providers["codex"].describe()["codex_version"] == "codex-cli 0.150.1"


@pytest.mark.asyncio
async def test_a_usage_limit_exit_of_exec_resume_is_a_limit_hit_not_a_start_failure(
        home, repo, fake, make_codex, make_engine):
    path = limited_session(home, repo, five_and_week(100.0, T0 - H, 40.0, T0 + 90 * H),
                           at=T0 - 6 * H)
    fake.script(mode="no_goal_methods", goals=codex_goal(), exec={
        "limit": True, "rollout": str(path),
        "append": [token_count(T0, five_and_week(100.0, T0 + 3 * H, 50.0, T0 + 90 * H))]})
    settings = auto(auto_resume_default=False)
    engine = await make_engine(make_codex(settings), settings=settings)
    assert (await engine.perform(Resume(GID), "cli")).outcome is Outcome.RESUMED
    await until(lambda: engine.goals[GID].state is GoalState.PAUSED)
    g = engine.goals[GID]
    assert g.pause_reason is PauseReason.QUOTA and "not really been refreshed" in g.pause_detail
    assert g.resets_at == T0 + 3 * H
    assert engine.providers["codex"].runner.runs == {}


@pytest.mark.asyncio
async def test_exec_resume_in_an_untrusted_directory_says_why(
        home, tmp_path, fake, make_codex, make_engine):
    plain = tmp_path / "plain"
    plain.mkdir()
    limited_session(home, plain, five_and_week(100.0, T0 - H, 40.0, T0 + 90 * H), at=T0 - 6 * H)
    fake.script(mode="no_goal_methods", goals=codex_goal())
    settings = auto(auto_resume_default=False)
    engine = await make_engine(make_codex(settings), settings=settings)
    result = await engine.perform(Resume(GID), "cli")
    assert result.outcome is Outcome.FAILED
    assert "not a trusted directory" in result.reason and str(plain) in result.reason
    assert "--skip-git-repo-check" not in [a for e in fake.invocations() for a in e["argv"]]


@pytest.mark.asyncio
async def test_an_app_server_that_never_answers_is_time_boxed(
        home, repo, fake, make_codex, make_engine, clock: FakeClock):
    path = limited_session(home, repo, five_and_week(100.0, T0 + H, 40.0, T0 + 90 * H))
    fake.script(mode="silent", goals=codex_goal(),
                exec={"rollout": str(path), "append": [goal(THREAD_A, "complete", T0 + 2 * H)]})
    settings = auto(codex_app_server_timeout_seconds=0.5)
    engine = await make_engine(make_codex(settings), settings=settings)
    clock.advance(3600 + 60)
    await until(lambda: engine.goals[GID].state is GoalState.DONE)
    [row] = [r for r in await requests(engine) if r.outcome is Outcome.RESUMED]
    assert "did not answer within 0.5 s" in row.detail["quota_read"]
    assert "decided on the last known readings" in row.detail["quota_read"]
    for pid in [e["pid"] for e in fake.invocations() if e["argv"] == ["app-server"]]:
        with pytest.raises(ProcessLookupError):
            __import__("os").kill(pid, 0)


@pytest.mark.asyncio
async def test_a_thread_open_in_another_codex_process_is_deferred(
        home, repo, fake, make_codex, make_engine):
    path = limited_session(home, repo, five_and_week(100.0, T0 - H, 40.0, T0 + 90 * H),
                           at=T0 - 6 * H)
    fake.script(goals=codex_goal(), rate_limits=[rl(3, epoch(T0 + 4 * H), 41, epoch(T0 + 90 * H))])
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys,time; f=open(sys.argv[1]); print('ok', flush=True); "
                               "time.sleep(60)", str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ok"
        settings = auto(auto_resume_default=False)
        engine = await make_engine(make_codex(settings), settings=settings)
        result = await engine.perform(Resume(GID), "cli")
        assert result.outcome is Outcome.DEFERRED
        assert f"pid {holder.pid}" in result.reason
        assert engine.goals[GID].state is GoalState.PAUSED
        assert fake.activations() == []
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    result = await engine.perform(Resume(GID), "cli")
    assert result.outcome is Outcome.RESUMED
    assert len(fake.activations()) == 1


# -- hosting: pause, cancel, done, questions, shutdown ----------------------------------------


@pytest.mark.asyncio
async def test_pause_sets_the_goal_paused_interrupts_the_turn_and_lets_go(
        home, repo, fake, make_codex, make_engine):
    engine = await hosted(home, repo, fake, make_codex, make_engine)
    provider = engine.providers["codex"]
    [pid] = provider.runner.pids
    result = await engine.perform(Pause(GID), "cli")
    assert result.outcome is Outcome.PAUSED
    assert fake.received("thread/goal/set", status="paused")
    assert fake.received("turn/interrupt", threadId=THREAD_A, turnId="turn-1")
    assert provider.runner.runs == {}
    with pytest.raises(ProcessLookupError):
        __import__("os").kill(pid, 0)
    assert engine.goals[GID].pause_reason is PauseReason.USER


@pytest.mark.asyncio
async def test_cancel_pauses_in_codex_and_never_clears_the_objective(
        home, repo, fake, make_codex, make_engine):
    engine = await hosted(home, repo, fake, make_codex, make_engine)
    result = await engine.perform(Cancel(GID), "cli")
    assert result.outcome is Outcome.CANCELLED
    assert engine.goals[GID].state is GoalState.CANCELLED
    assert fake.goal_status(THREAD_A) == "paused"
    assert fake.received("thread/goal/clear") == []


@pytest.mark.asyncio
async def test_a_goal_completing_in_codex_is_done(home, repo, fake, make_codex, make_engine):
    engine = await hosted(home, repo, fake, make_codex, make_engine,
                          after_active=[["turn_started"], ["sleep", 0.2], ["goal", "complete"]])
    await until(lambda: engine.goals[GID].state is GoalState.DONE)
    await until(lambda: engine.providers["codex"].runner.runs == {})


@pytest.mark.asyncio
async def test_the_replayed_old_status_after_thread_resume_is_history_not_news(
        home, repo, fake, make_codex, make_engine):
    """0.169.0 replays ``usageLimited`` right after ``thread/resume``: the resume stays resumed."""
    engine = await hosted(home, repo, fake, make_codex, make_engine,
                          after_active=[["turn_started"], ["sleep", 0.3]])
    await asyncio.sleep(0.5)
    await engine.drain()
    g = engine.goals[GID]
    assert g.state is GoalState.RUNNING and g.hosted
    assert engine.providers["codex"].runner.runs  # still hosting
    assert fake.received("thread/resume", threadId=THREAD_A, excludeTurns=True)
    assert fake.received("thread/goal/set", status="active", origin="automatic")


@pytest.mark.asyncio
async def test_a_completed_goal_keeps_the_app_server_until_the_turn_ends(
        home, repo, fake, make_codex, make_engine):
    """Codex completes the goal inside a turn; closing the server then would abort that turn."""
    engine = await hosted(home, repo, fake, make_codex, make_engine, after_active=[
        ["turn_started"], ["goal_in_turn", "complete"], ["sleep", 1.0], ["end_turn"]])
    await until(lambda: engine.goals[GID].state is GoalState.DONE)
    await until(lambda: engine.providers["codex"].runner.runs == {})
    assert not [e for e in fake.log() if e.get("eof_during_turn")]


@pytest.mark.asyncio
async def test_a_turn_that_never_ends_is_let_go_after_the_turn_end_timeout(
        home, repo, fake, make_codex, make_engine):
    engine = await hosted(home, repo, fake, make_codex, make_engine,
                          auto(auto_resume_default=False, codex_turn_end_timeout_seconds=0.5),
                          after_active=[["turn_started"], ["goal_in_turn", "complete"]])
    await until(lambda: engine.goals[GID].state is GoalState.DONE)
    await until(lambda: engine.providers["codex"].runner.runs == {})


@pytest.mark.asyncio
async def test_limited_again_in_the_first_turn_says_the_quota_was_not_refreshed(
        home, repo, fake, make_codex, make_engine):
    engine = await hosted(home, repo, fake, make_codex, make_engine,
                          after_active=[["turn_started"], ["goal", "usageLimited"]])
    await until(lambda: engine.goals[GID].state is GoalState.PAUSED)
    g = engine.goals[GID]
    assert g.pause_reason is PauseReason.QUOTA
    assert "not really been refreshed" in (g.pause_detail or "")


@pytest.mark.asyncio
async def test_a_question_from_codex_pauses_the_goal_and_says_where_to_answer(
        home, repo, fake, make_codex, make_engine):
    engine = await hosted(home, repo, fake, make_codex, make_engine,
                          after_active=[["turn_started"], ["ask_approval"]])
    await until(lambda: engine.goals[GID].state is GoalState.PAUSED)
    g = engine.goals[GID]
    assert g.pause_reason is PauseReason.EXTERNAL
    assert "requestApproval" in (g.pause_detail or "") and "Codex" in (g.pause_detail or "")
    def replies():
        return [e["recv"] for e in fake.log() if "recv" in e and e["recv"].get("id") == 9000]

    await until(lambda: bool(replies()))
    assert "error" in replies()[0] and "result" not in replies()[0]  # never approved
    await until(lambda: engine.providers["codex"].runner.runs == {})


@pytest.mark.asyncio
async def test_host_shutdown_reaps_the_server_and_restart_resumes_the_active_goal(
        home, repo, fake, make_codex, make_engine):
    engine = await hosted(home, repo, fake, make_codex, make_engine)
    [pid] = engine.providers["codex"].runner.pids
    await engine.stop()
    with pytest.raises(ProcessLookupError):
        __import__("os").kill(pid, 0)
    assert fake.goal_status(THREAD_A) == "active"  # left as it was in Codex
    engine = await make_engine(make_codex(auto()), settings=auto())
    await until(lambda: engine.goals[GID].state is GoalState.RUNNING and engine.goals[GID].hosted)
    assert len(fake.received("thread/resume")) == 2
    assert len(fake.activations()) == 1  # already active: resumed, not set again


# -- what Codex says at resume time -------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize(("codex_status", "outcome", "state", "reason"), [
    ("complete", Outcome.RESUMED, GoalState.DONE, "already done"),
    ("blocked", Outcome.FAILED, GoalState.PAUSED, "the Codex goal is blocked"),
    (None, Outcome.FAILED, GoalState.PAUSED, "no goal on this thread"),
])
async def test_the_goal_is_checked_before_it_is_set_active(
        home, repo, fake, make_codex, make_engine, codex_status, outcome, state, reason):
    engine = await stopped(home, repo, fake, make_codex, make_engine,
                           goals=codex_goal(codex_status) if codex_status else {})
    result = await engine.perform(Resume(GID), "cli")
    assert (result.outcome, engine.goals[GID].state) == (outcome, state)
    assert reason in result.reason
    assert fake.activations() == []
    assert engine.providers["codex"].runner.runs == {}


@pytest.mark.asyncio
async def test_an_app_server_that_crashes_falls_back_to_exec(
        home, repo, fake, make_codex, make_engine):
    path = limited_session(home, repo, five_and_week(100.0, T0 - H, 40.0, T0 + 90 * H),
                           at=T0 - 6 * H)
    fake.script(mode="crash", goals=codex_goal(),
                exec={"rollout": str(path), "append": [goal(THREAD_A, "usageLimited", T0),
                                                       token_count(T0, five_and_week(
                                                           100.0, T0 + 3 * H, 50.0,
                                                           T0 + 90 * H))]})
    settings = auto(auto_resume_default=False)
    engine = await make_engine(make_codex(settings), settings=settings)
    assert (await engine.perform(Resume(GID), "cli")).outcome is Outcome.RESUMED
    await until(lambda: engine.goals[GID].state is GoalState.PAUSED)
    g = engine.goals[GID]
    assert g.pause_reason is PauseReason.QUOTA  # the exec turn hit the limit again
    assert [e["argv"][:2] for e in fake.invocations()] == [["app-server"], ["exec", "resume"]]


@pytest.mark.asyncio
async def test_pausing_a_goal_nobody_runs_pauses_it_in_codex(
        home, repo, fake, make_codex, make_engine):
    home.rollout(THREAD_A, T0 - H, meta(THREAD_A, T0 - H, cwd=str(repo)),
                 goal(THREAD_A, "active", T0 - H, objective=OBJECTIVE))
    goals_db(home, [(THREAD_A, OBJECTIVE, "active", epoch(T0 - H))])
    fake.script(goals=codex_goal("active"))
    engine = await make_engine(make_codex(auto()), settings=auto())
    assert engine.goals[GID].state is GoalState.RUNNING and not engine.goals[GID].hosted
    assert (await engine.perform(Pause(GID), "cli")).outcome is Outcome.PAUSED
    assert fake.goal_status(THREAD_A) == "paused"
    assert fake.received("thread/resume") == []  # only the goal was touched


@pytest.mark.asyncio
async def test_an_unconfirmed_activation_is_undone(home, repo, fake, make_codex, make_engine):
    engine = await stopped(home, repo, fake, make_codex, make_engine,
                           auto(auto_resume_default=False, codex_confirm_timeout_seconds=0.5),
                           quiet_set=True)
    result = await engine.perform(Resume(GID), "cli")
    assert result.outcome is Outcome.FAILED
    assert "did not confirm the goal is active within 0.5 s" in result.reason
    statuses = [m["params"]["status"] for m in fake.received("thread/goal/set")]
    assert statuses == ["active", "usageLimited"]  # put back as it was
    assert fake.goal_status(THREAD_A) == "usageLimited"
    assert engine.goals[GID].state is GoalState.PAUSED


@pytest.mark.asyncio
async def test_a_writer_that_appears_after_the_check_defers_the_resume(
        home, repo, fake, make_codex, make_engine):
    """0.169.0 refuses a second writer: ``thread/resume`` answers -32600 "thread … already has
    an active writer". A holder that took the thread after Goalkeeper's own check is no failed
    resume: deferred, no attempt spent, nothing set active, no exec fallback."""
    engine = await stopped(home, repo, fake, make_codex, make_engine, mode="held")
    result = await engine.perform(Resume(GID), "cli")
    assert result.outcome is Outcome.DEFERRED
    assert "already has an active writer" in result.reason
    assert engine.goals[GID].state is GoalState.PAUSED and engine.goals[GID].attempts == 0
    assert fake.activations() == []
    assert not [e for e in fake.invocations() if e["argv"][:1] == ["exec"]]


def test_an_unknown_value_is_no_missing_method() -> None:
    missing = RpcError("thread/goal/get", -32600, "Invalid request: unknown variant "
                       "`thread/goal/get`, expected one of `initialize`, `thread/start`")
    assert missing.method_missing
    bad_value = RpcError("thread/goal/set", -32600, "Invalid request: unknown variant `robot`, "
                         "expected `user` or `automatic`")
    assert not bad_value.method_missing and not bad_value.writer_elsewhere
    held = RpcError("thread/resume", -32600, "thread 01a2 already has an active writer")
    assert held.writer_elsewhere and not held.method_missing
