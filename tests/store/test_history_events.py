"""Contract: history event names are a :class:`HistoryEvent`, on both stores — known names load
as members, and a name the enum does not list (a row another version wrote) still loads."""

from __future__ import annotations

from typing import Any

from core.models import HistoryEvent, HistoryRow
from core.store.base import Store
from tests.store.support import T0
from tests.support.store import Opener


def insert_raw_row(store: Store, kind: str, event: str) -> None:
    """A history row written straight into the table, as another version of Goalkeeper did."""
    raw: Any = store
    if kind == "postgres":
        raw.con.execute("INSERT INTO history (at, goal, event) VALUES (%s, %s, %s)",
                        (T0, "fake:a", event))
    else:
        raw._con.execute("INSERT INTO history (at, goal, event) VALUES (?, ?, ?)",
                         (T0.isoformat(), "fake:a", event))


def test_a_stored_name_the_enum_knows_loads_as_its_member(opener: Opener, kind: str) -> None:
    store = opener()
    insert_raw_row(store, kind, "resume_scheduled")
    (loaded,) = store.history("fake:a")
    assert loaded.event is HistoryEvent.RESUME_SCHEDULED


def test_an_unknown_stored_name_still_loads_as_its_text(opener: Opener, kind: str) -> None:
    store = opener()
    insert_raw_row(store, kind, "renamed_in_a_later_version")
    (loaded,) = store.history("fake:a")
    assert loaded.event == "renamed_in_a_later_version"
    assert not isinstance(loaded.event, HistoryEvent)


def test_members_are_stored_under_their_names(opener: Opener, kind: str) -> None:
    store = opener()
    store.append_history(HistoryRow(at=T0, goal="fake:a", event=HistoryEvent.GAVE_UP))
    raw: Any = store
    sql = "SELECT event FROM history"
    found = (raw.con if kind == "postgres" else raw._con).execute(sql).fetchall()
    assert [tuple(r) for r in found] == [("gave_up",)]


def test_every_goal_machine_transition_is_recorded_under_a_member() -> None:
    from core.goals.machine import HISTORY_EVENT, GoalEvent

    assert set(HISTORY_EVENT) == set(GoalEvent)
    assert all(isinstance(name, HistoryEvent) for name in HISTORY_EVENT.values())
