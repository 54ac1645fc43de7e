"""Codex goals discovered from rollouts and the goals database, mapped onto Goalkeeper states."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest

from core.clock import FakeClock
from core.models import GoalState, PauseReason
from core.providers.codex.goals import ThreadGoalBook
from core.providers.codex.goals_db import open_readonly, read_goals
from core.providers.codex.limits import from_rollout
from core.providers.codex.rollout import GoalUpdate
from core.settings import Settings
from tests.codex.fixtures import (
    T0,
    THREAD_A,
    THREAD_B,
    THREAD_C,
    CodexHome,
    chatter,
    epoch,
    five_and_week,
    goal,
    limit_stop,
    meta,
    token_count,
)
from tests.support.codex import goals_db
from tests.support.fakes import until

H = timedelta(hours=1)
M = timedelta(minutes=1)
AUTO = Settings(resume_jitter_seconds=0, auto_resume_default=True)


@pytest.mark.asyncio
async def test_statuses_map_onto_goalkeeper_states(home: CodexHome, make_codex, make_engine):
    statuses = {"active": THREAD_A, "paused": THREAD_B, "blocked": THREAD_C,
                "budgetLimited": "019f1a2b-3c4d-7e5f-8a9b-0000000000b1",
                "complete": "019f1a2b-3c4d-7e5f-8a9b-0000000000c1"}
    for i, (status, thread) in enumerate(statuses.items()):
        at = T0 - (10 - i) * M
        home.rollout(thread, at, meta(thread, at, cwd=f"/work/{status}"), chatter(at),
                     goal(thread, status, at + M, objective=f"objective {status}",
                          tokens=900, budget=800 if status == "budgetLimited" else None),
                     chatter(at + M))
    engine = await make_engine(make_codex())
    by_status = {s: engine.goals[f"codex:{t}"] for s, t in statuses.items()}
    # no goals database: a rollout's `active` is only what a client once set (see goals.py)
    assert by_status["active"].data["codex_status"] == "unknown"
    assert by_status["paused"].pause_reason is PauseReason.EXTERNAL
    assert by_status["blocked"].pause_reason is PauseReason.ERROR
    assert "needs your attention" in (by_status["blocked"].pause_detail or "")
    assert by_status["budgetLimited"].pause_detail == (
        "token budget used up in Codex (900 of 800 tokens)")
    assert by_status["complete"].state is GoalState.DONE
    active = by_status["active"]
    assert active.title == "objective active" and active.provider == "codex"
    assert active.data["cwd"] == "/work/active" and active.data["thread_id"] == THREAD_A
    assert active.data["rollout"].endswith(f"{THREAD_A}.jsonl")
    assert active.windows == ("codex:5h", "codex:weekly", "codex:monthly", "codex:credits",
                                  "codex:access")


@pytest.mark.asyncio
async def test_an_active_known_only_from_a_rollout_is_unknown_not_running(
        home: CodexHome, make_codex, make_engine, clock: FakeClock):
    """0.169.0 writes its own transitions only to the goals DB: with no DB, `active` in a
    rollout says nothing about now — until the rollout shows a turn stopped at the limit."""
    path = home.rollout(THREAD_A, T0 - H, meta(THREAD_A, T0 - H),
                        goal(THREAD_A, "active", T0 - 50 * M))
    engine = await make_engine(make_codex(AUTO), settings=AUTO)
    g = engine.goals[f"codex:{THREAD_A}"]
    assert g.state is GoalState.PAUSED and g.pause_reason is PauseReason.EXTERNAL
    assert "status unknown" in (g.pause_detail or "") and g.data["codex_status"] == "unknown"
    home.append(path, token_count(T0 - M, five_and_week(100.0, T0 + 2 * H, 30.0, T0 + 90 * H)),
                limit_stop(T0 - M))
    clock.advance(5)
    await until(lambda: engine.goals[f"codex:{THREAD_A}"].pause_reason is PauseReason.QUOTA)
    g = engine.goals[f"codex:{THREAD_A}"]
    assert g.data["codex_status"] == "usageLimited" and g.resets_at == T0 + 2 * H
    await engine.stop()
    # a restart finds the same stop in the file
    for _ in range(2):
        again = await make_engine(make_codex(AUTO), settings=AUTO)
        assert again.goals[f"codex:{THREAD_A}"].data["codex_status"] == "usageLimited"
        await again.stop()


@pytest.mark.asyncio
async def test_usage_limited_is_a_quota_pause_with_the_reset_in_force(
        home: CodexHome, make_codex, make_engine):
    reset7 = T0 + 30 * H
    home.rollout(THREAD_A, T0 - H, meta(THREAD_A, T0 - H),
                 token_count(T0 - 10 * M, five_and_week(100.0, T0 + 2 * H, 100.0, reset7,
                                                        reached="rate_limit_reached")),
                 goal(THREAD_A, "usageLimited", T0 - 10 * M))
    engine = await make_engine(make_codex(AUTO), settings=AUTO)
    g = engine.goals[f"codex:{THREAD_A}"]
    assert (g.state, g.pause_reason) == (GoalState.PAUSED, PauseReason.QUOTA)
    assert g.resets_at == reset7  # the latest reset among the windows used up
    assert g.next_resume_at == reset7 + timedelta(seconds=45)


@pytest.mark.asyncio
async def test_credits_depleted_is_never_scheduled_and_says_why(
        home: CodexHome, make_codex, make_engine, clock: FakeClock):
    home.rollout(THREAD_A, T0 - H, meta(THREAD_A, T0 - H),
                 token_count(T0 - 10 * M, five_and_week(30.0, T0 + 2 * H, 20.0, T0 + 50 * H,
                                                        reached="workspace_member_credits_depleted")),
                 goal(THREAD_A, "usageLimited", T0 - 10 * M))
    engine = await make_engine(make_codex(AUTO), settings=AUTO)
    g = engine.goals[f"codex:{THREAD_A}"]
    assert g.pause_reason is PauseReason.QUOTA and g.next_resume_at is None
    assert "no timed reset" in (g.auto_resume_note or "")
    assert "credits are used up" in (g.pause_detail or "")
    credits = engine.quotas.effective("codex:credits", clock.now())
    assert credits is not None and credits.limit_reached and credits.no_timed_reset
    await clock.run_for(3 * 24 * 3600, step=3600)
    assert engine.goals[f"codex:{THREAD_A}"].state is GoalState.PAUSED
    rows = await engine.reads.history(f"codex:{THREAD_A}")
    assert not [r for r in rows if r.event == "resume_requested"]


@pytest.mark.asyncio
async def test_a_goal_changing_in_its_rollout_is_followed(
        home: CodexHome, make_codex, make_engine, clock: FakeClock):
    path = home.rollout(THREAD_A, T0 - H, meta(THREAD_A, T0 - H, cwd="/repo/a"),
                        goal(THREAD_A, "active", T0 - H))
    engine = await make_engine(make_codex())
    gid = f"codex:{THREAD_A}"
    assert engine.goals[gid].data["codex_status"] == "unknown"  # no goals database here
    home.append(path, token_count(T0, five_and_week(100.0, T0 + H, 50.0, T0 + 90 * H)),
                goal(THREAD_A, "usageLimited", T0))  # older builds wrote every change here
    clock.advance(5)
    await until(lambda: engine.goals[gid].pause_reason is PauseReason.QUOTA)
    assert engine.goals[gid].resets_at == T0 + H


@pytest.mark.asyncio
async def test_a_goal_set_in_an_existing_session_gets_its_cwd(
        home: CodexHome, make_codex, make_engine, clock: FakeClock):
    path = home.rollout(THREAD_B, T0 - H, meta(THREAD_B, T0 - H, cwd="/repo/b"), chatter(T0 - H))
    engine = await make_engine(make_codex())
    assert engine.goals == {}
    home.append(path, goal(THREAD_B, "active", T0, objective="Ship it"))
    clock.advance(5)
    await until(lambda: f"codex:{THREAD_B}" in engine.goals)
    g = engine.goals[f"codex:{THREAD_B}"]
    assert g.title == "Ship it" and g.data["cwd"] == "/repo/b"


@pytest.mark.asyncio
async def test_the_goals_database_is_the_list_and_is_opened_strictly_read_only(
        home: CodexHome, make_codex, make_engine, clock: FakeClock):
    home.rollout(THREAD_A, T0 - H, meta(THREAD_A, T0 - H, cwd="/repo/a"))
    goals_db(home, [(THREAD_A, "Refactor the parser", "usage_limited", epoch(T0 - M)),
                    (THREAD_B, "Write docs", "budget_limited", epoch(T0 - M))])
    assert sorted(p.name for p in home.root.iterdir()) == ["goals_1.sqlite", "sessions"]
    tree = home.tree()
    engine = await make_engine(make_codex())
    a, b = engine.goals[f"codex:{THREAD_A}"], engine.goals[f"codex:{THREAD_B}"]
    assert (a.title, a.pause_reason, a.data["cwd"]) == (
        "Refactor the parser", PauseReason.QUOTA, "/repo/a")
    assert b.pause_reason is PauseReason.ERROR and b.data["tokens_used"] == 5
    clock.advance(5)
    await until(lambda: clock.sleepers > 0)
    assert home.tree() == tree  # no -wal, no -shm, nothing else created or touched


@pytest.mark.asyncio
async def test_a_database_change_is_picked_up(home: CodexHome, make_codex, make_engine,
                                              clock: FakeClock):
    goals_db(home, [(THREAD_A, "Refactor the parser", "active", epoch(T0 - H))])
    engine = await make_engine(make_codex())
    gid = f"codex:{THREAD_A}"
    assert engine.goals[gid].state is GoalState.RUNNING
    goals_db(home, [(THREAD_A, "Refactor the parser", "paused", epoch(T0))])
    clock.advance(5)
    await until(lambda: engine.goals[gid].state is GoalState.PAUSED)
    assert engine.goals[gid].pause_reason is PauseReason.EXTERNAL


def test_a_live_writer_database_is_read_without_creating_files(home: CodexHome):
    path = goals_db(home, [(THREAD_A, "Refactor", "active", epoch(T0))])
    writer = sqlite3.connect(path)  # Codex, running: its -wal and -shm exist
    writer.execute("UPDATE thread_goals SET status = 'paused'")
    writer.commit()
    names = sorted(p.name for p in home.root.iterdir())
    assert "goals_1.sqlite-wal" in names
    found = read_goals(home.root)
    assert found is not None and found.goals[THREAD_A].status == "paused"  # sees the WAL
    assert sorted(p.name for p in home.root.iterdir()) == names
    with pytest.raises(sqlite3.OperationalError):
        open_readonly(path).execute("DELETE FROM thread_goals")
    writer.close()


def test_older_builds_keep_goals_in_the_state_database(home: CodexHome):
    path = goals_db(home, [(THREAD_A, "Old build goal", "paused", epoch(T0)),
                           (THREAD_B, "Archived goal", "active", epoch(T0))],
                    name="state_5.sqlite", wal=False)
    goals_db(home, [], name="state_4.sqlite", wal=False)  # an older generation is ignored
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT, cwd TEXT, "
                "archived INTEGER)")
    con.executemany("INSERT INTO threads VALUES (?, ?, ?, ?)",
                    [(THREAD_A, "/x/rollout.jsonl", "/repo/old", 0),
                     (THREAD_B, "/x/b.jsonl", "/repo/b", 1)])
    con.commit()
    con.close()
    found = read_goals(home.root)
    assert found is not None and found.source.name == "state_5.sqlite"
    assert found.threads[THREAD_A].cwd == "/repo/old" and found.threads[THREAD_B].archived


@pytest.mark.asyncio
async def test_archived_threads_are_not_listed(home: CodexHome, make_codex, make_engine):
    test_older_builds_keep_goals_in_the_state_database(home)
    engine = await make_engine(make_codex())
    assert set(engine.goals) == {f"codex:{THREAD_A}"}
    assert engine.goals[f"codex:{THREAD_A}"].data["cwd"] == "/repo/old"


def test_the_newest_report_wins_and_a_repeated_status_keeps_its_reset():
    book = ThreadGoalBook()
    snap1 = from_rollout(five_and_week(100.0, T0 + H, 50.0, T0 + 90 * H), T0)
    snap2 = from_rollout(five_and_week(100.0, T0 + 6 * H, 50.0, T0 + 90 * H), T0 + 5 * H)
    first = book.apply(GoalUpdate(THREAD_A, "usageLimited", "x", T0), snap1)
    assert first is not None and first.resets_at == T0 + H
    again = book.apply(GoalUpdate(THREAD_A, "usageLimited", "x", T0 + M, tokens_used=9), snap2)
    assert again is not None and again.resets_at == T0 + H and again.update.tokens_used == 9
    assert book.apply(GoalUpdate(THREAD_A, "active", "x", T0 - M), snap2) is None  # older
    assert book.apply(GoalUpdate(THREAD_A, "usageLimited", "x", T0 + M), snap2) is None  # same


@pytest.mark.asyncio
async def test_credits_restored_lift_the_block(home: CodexHome, make_codex, make_engine,
                                               clock: FakeClock):
    settings = Settings(resume_jitter_seconds=0, auto_resume_default=True, stable_seconds=0)
    path = home.rollout(THREAD_A, T0 - H, meta(THREAD_A, T0 - H),
                        token_count(T0 - 10 * M, five_and_week(
                            30.0, T0 + 2 * H, 20.0, T0 + 50 * H,
                            reached="workspace_owner_credits_depleted")),
                        goal(THREAD_A, "usageLimited", T0 - 10 * M))
    engine = await make_engine(make_codex(settings), settings=settings)
    gid = f"codex:{THREAD_A}"
    assert engine.goals[gid].next_resume_at is None
    home.append(path, token_count(T0, five_and_week(31.0, T0 + 2 * H, 20.0, T0 + 50 * H)))
    clock.advance(5)
    await until(lambda: engine.goals[gid].next_resume_at is not None)
    assert engine.goals[gid].steering.no_reset_note is None
