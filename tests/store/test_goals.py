"""Contract: goals and their history, on both stores — schema, atomic transactions, owners,
fences, the window queries and paging."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.models import Goal, GoalState, HistoryRow, PauseReason
from core.store.base import LeaseLost, Mutation, NoData, NotOwner
from core.store.postgres import PostgresStore
from core.store.schema import SCHEMA_VERSION as SQLITE_VERSION
from tests.store.support import T0, claim, goal, put, row
from tests.support.store import Opener


def test_a_new_store_is_at_its_current_schema_and_read_only_opens_see_no_data(
        opener: Opener, kind: str) -> None:
    with pytest.raises(NoData):
        opener(read_only=True)
    store = opener()
    from core.store.pg_schema import SCHEMA_VERSION as PG_VERSION

    assert store.schema_version == (PG_VERSION if kind == "postgres" else SQLITE_VERSION)
    reader = opener(read_only=True)
    assert reader.list_goals() == [] and reader.read_only


def test_transact_writes_the_goal_and_its_history_together(opener: Opener) -> None:
    store = opener()
    committed = store.transact("fake:a", lambda cur: Mutation(goal(), "made", [row()]))
    assert committed.before is None and committed.after == goal() and committed.result == "made"
    assert committed.history[0].id is not None
    assert store.get_goal("fake:a") == goal()
    assert [r.event for r in store.history("fake:a")] == ["noted"]


def test_a_failing_decision_writes_nothing(opener: Opener) -> None:
    store = opener()
    put(store, goal())

    def boom(current: Goal | None) -> Mutation[None]:
        raise RuntimeError("decided badly")

    with pytest.raises(RuntimeError):
        store.transact("fake:a", boom)
    assert store.get_goal("fake:a") == goal() and store.count_history() == 0


def test_an_unchanged_goal_is_not_rewritten_but_its_rows_are_appended(opener: Opener) -> None:
    store = opener()
    put(store, goal())
    committed = store.transact("fake:a", lambda cur: Mutation(cur, None, [row()]))
    assert committed.before == committed.after == goal()
    assert store.count_history("fake:a") == 1


def test_a_model_copy_is_validated_again_so_memory_equals_the_row(opener: Opener) -> None:
    store = opener()
    long = goal().model_copy(update={"title": "x" * 1000})
    committed = store.transact("fake:a", lambda cur: Mutation(long, None))
    assert committed.after == store.get_goal("fake:a")
    assert committed.after is not None and len(committed.after.title) < 1000


def test_a_goal_belongs_to_the_host_that_first_recorded_it(opener: Opener) -> None:
    laptop, desk = opener("laptop"), opener("desk")
    put(laptop, goal())
    assert laptop.get_goal("fake:a").host == "laptop"  # type: ignore[union-attr]
    with pytest.raises(NotOwner, match="belongs to host laptop"):
        desk.transact("fake:a", lambda cur: Mutation(cur, None, [row()]))
    with pytest.raises(NotOwner):
        desk.remove_goal("fake:a", row())
    assert desk.count_history() == 0  # nothing of the refused changes was written
    put(desk, goal("fake:b"))
    assert {g.id: g.host for g in laptop.list_goals()} == {"fake:a": "laptop", "fake:b": "desk"}
    written = laptop.history()
    assert written == [] or {r.host for r in written} <= {"laptop", "desk"}


def test_history_rows_say_which_host_wrote_them(opener: Opener) -> None:
    store = opener("laptop")
    put(store, goal(), row())
    store.append_history(row(None, "quota_exhausted"))
    assert [r.host for r in store.history()] == ["laptop", "laptop"]


def test_remove_keeps_the_history_and_appends_its_row(opener: Opener) -> None:
    store = opener("laptop")
    put(store, goal(), row())
    removed = store.remove_goal("fake:a", row(event="removed"))
    assert removed is not None and removed.id is not None
    assert store.get_goal("fake:a") is None
    assert [r.event for r in store.history("fake:a")] == ["removed", "noted"]


def test_the_fence_refuses_writes_of_a_replaced_host(opener: Opener) -> None:
    old, new = opener("laptop"), opener("laptop")
    old.epoch = old.take_epoch("laptop")
    put(old, goal())
    new.epoch = new.take_epoch("laptop")
    assert new.epoch > old.epoch
    with pytest.raises(LeaseLost):
        old.transact("fake:a", lambda cur: Mutation(cur, None, [row()]))
    with pytest.raises(LeaseLost):
        old.append_history(row())
    put(new, goal(title="new"))  # the new one writes
    assert new.take_epoch("laptop", floor=100) == 101


def test_history_is_paged_newest_first(opener: Opener) -> None:
    store = opener()
    put(store, goal(), *(row(event=f"e{i}", at=T0 + timedelta(seconds=i)) for i in range(25)))
    store.append_history(row("fake:other", "x"))
    page = store.history("fake:a", limit=10, offset=5)
    assert [r.event for r in page] == [f"e{i}" for i in range(19, 9, -1)]
    assert store.count_history("fake:a") == 25 and store.count_history() == 26
    assert [r.goal for r in store.history(limit=1)] == ["fake:other"]
    assert store.history("fake:a", limit=10, offset=30) == []


def test_history_rows_round_trip(opener: Opener) -> None:
    store = opener()
    written = HistoryRow(at=T0, goal="fake:a", event="resume_requested", reason="because",
                         quotas=({"window": "w", "used_percent": 50.0},),
                         detail={"deadline": T0.isoformat(), "n": [1, 2]}, fence=3)
    stored = store.append_history(written)
    assert store.history()[0] == stored == written.model_copy(update={"id": stored.id})


def test_goals_on_a_window_by_state(opener: Opener) -> None:
    store = opener()
    for goal_id, state, windows in (("a", GoalState.RUNNING, ("w1", "w2")),
                                    ("b", GoalState.PAUSED, ("w1",)),
                                    ("c", GoalState.RUNNING, ("w2",)),
                                    ("d", GoalState.RESUMING, ("w10",))):
        put(store, goal(goal_id, state=state, windows=windows))
    running = (GoalState.RUNNING, GoalState.RESUMING)
    assert [g.id for g in store.goals_on_window("w1", running)] == ["a"]
    assert [g.id for g in store.goals_on_window("w2", running)] == ["a", "c"]
    assert [g.id for g in store.goals_on_window("w1", (GoalState.PAUSED,))] == ["b"]
    assert store.goals_on_window("w", running) == []  # whole ids only, never a prefix


def test_goals_due_on_a_window_compare_instants(opener: Opener) -> None:
    store = opener()
    for goal_id, due, auto in (("half", T0 + timedelta(milliseconds=500), True),
                               ("whole", T0, True), ("later", T0 + timedelta(seconds=2), True),
                               ("off", T0, False)):
        put(store, goal(goal_id, state=GoalState.PAUSED, pause_reason=PauseReason.QUOTA,
                        auto_resume=auto, windows=("w",), next_resume_at=due))
    due = store.goals_due_on_window("w", T0 + timedelta(seconds=1), (PauseReason.QUOTA,))
    assert [g.id for g in due] == ["half", "whole"]
    assert store.goals_due_on_window("w", T0, (PauseReason.QUOTA,))[0].id == "whole"
    assert store.goals_due_on_window("w", T0, (PauseReason.BUDGET,)) == []


def test_the_claim_is_won_once(opener: Opener) -> None:
    store = opener()
    put(store, goal(state=GoalState.PAUSED))
    first = store.transact("fake:a", claim)
    second = store.transact("fake:a", claim)
    assert (first.result, second.result) == ("won", "lost")
    assert store.get_goal("fake:a").fence == 1  # type: ignore[union-attr]


def test_meta_values(opener: Opener) -> None:
    store = opener()
    assert store.get_meta("k") is None
    store.set_meta("k", "1")
    store.set_meta("k", "2")
    assert opener().get_meta("k") == "2"


def test_a_reader_cannot_write(opener: Opener, kind: str) -> None:
    opener().set_meta("k", "v")
    reader = opener(read_only=True)
    with pytest.raises(Exception):  # noqa: B017 - sqlite3 / psycopg say it their way
        reader.set_meta("k", "w")
    assert reader.get_meta("k") == "v"
    if kind == "postgres":
        assert isinstance(reader, PostgresStore)
