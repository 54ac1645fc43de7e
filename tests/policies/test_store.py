"""Schema step 1 -> 2 (each goal's resume policy and deferral) and the slot query."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from core.models import Deferral, Goal, GoalState
from core.policies.goal_policy import GoalPolicy
from core.store import Mutation, SqliteStore
from core.store.schema import MIGRATIONS, SCHEMA_VERSION

T0 = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)


def version_one(path: Path) -> None:
    """A database as Goalkeeper wrote it before this step, with one goal in it."""
    con = sqlite3.connect(path)
    con.executescript(MIGRATIONS[0])
    con.execute("INSERT INTO goals (id, provider, title, state, windows, data, created_at, "
                "updated_at) VALUES ('fake:old', 'fake', 'Old goal', 'paused', "
                "'[\"fake:5h\"]', '{\"cwd\": \"/x\"}', '2026-07-07T12:00:00Z', "
                "'2026-07-07T12:00:00Z')")
    con.execute("PRAGMA user_version = 1")
    con.commit()
    con.close()


def test_a_version_one_database_gains_the_policy_columns(tmp_path: Path) -> None:
    db = tmp_path / "goalkeeper.db"
    version_one(db)
    store = SqliteStore(db)
    assert store.schema_version == SCHEMA_VERSION
    old = store.get_goal("fake:old")
    assert old is not None and old.data == {"cwd": "/x"}
    assert old.policy == GoalPolicy() and old.deferral is None
    con = sqlite3.connect(db)
    indexes = {row[1] for row in con.execute("PRAGMA index_list(goals)")}
    con.close()
    assert "goals_state" in indexes
    store.close()


def test_policy_and_deferral_round_trip(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "goalkeeper.db")
    goal = Goal(id="fake:g", provider="fake", title="g", state=GoalState.PAUSED,
                next_resume_at=T0, deferral=Deferral(rule="allowed hours", until=T0),
                policy=GoalPolicy(priority=-4, budget_percent=12.5,
                                  auto_resume_hours="except Mon-Fri 09:00-18:00"),
                created_at=T0, updated_at=T0)
    store.transact(goal.id, lambda _: Mutation(goal, None))
    loaded = store.get_goal("fake:g")
    assert loaded == goal and loaded is not None and loaded.deferred_by == "allowed hours"
    store.close()


def test_goals_on_a_window_by_state(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "goalkeeper.db")
    for goal_id, state, windows in (("a", GoalState.RUNNING, ("w1", "w2")),
                                    ("b", GoalState.PAUSED, ("w1",)),
                                    ("c", GoalState.RUNNING, ("w2",)),
                                    ("d", GoalState.RESUMING, ("w10",))):
        goal = Goal(id=goal_id, provider="fake", title=goal_id, state=state, windows=windows,
                    created_at=T0, updated_at=T0)
        store.transact(goal_id, lambda _, g=goal: Mutation(g, None))  # type: ignore[misc]
    running = (GoalState.RUNNING, GoalState.RESUMING)
    assert [g.id for g in store.goals_on_window("w1", running)] == ["a"]
    assert [g.id for g in store.goals_on_window("w2", running)] == ["a", "c"]
    assert [g.id for g in store.goals_on_window("w1", (GoalState.PAUSED,))] == ["b"]
    assert store.goals_on_window("w", running) == []  # whole ids only, never a prefix
    store.close()


def test_goals_due_on_a_window_compare_instants_not_text(tmp_path: Path) -> None:
    from datetime import timedelta

    from core.models import PauseReason

    store = SqliteStore(tmp_path / "goalkeeper.db")
    # "12:00:00.500000Z" sorts before "12:00:00Z" as text, but is later
    for goal_id, due, auto in (("half", T0 + timedelta(milliseconds=500), True),
                               ("whole", T0, True), ("later", T0 + timedelta(seconds=2), True),
                               ("off", T0, False)):
        goal = Goal(id=goal_id, provider="fake", title=goal_id, state=GoalState.PAUSED,
                    pause_reason=PauseReason.QUOTA, auto_resume=auto, windows=("w",),
                    next_resume_at=due, created_at=T0, updated_at=T0)
        store.transact(goal_id, lambda _, g=goal: Mutation(g, None))  # type: ignore[misc]
    due = store.goals_due_on_window("w", T0 + timedelta(seconds=1), (PauseReason.QUOTA,))
    assert [g.id for g in due] == ["half", "whole"]
    assert store.goals_due_on_window("w", T0, (PauseReason.QUOTA,))[0].id == "whole"
    assert store.goals_due_on_window("w", T0, (PauseReason.BUDGET,)) == []
    store.close()
