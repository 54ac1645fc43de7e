"""Resume slots on a shared store: only the goals of hosts online now (judged by the database's
clock) that use the same account count — a killed host's due goal holds no other host's goal
back, while an online host's still does (issue 13's cross-host count)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from core.goals.rules import ResumeRules
from core.goals.slots import check_slots
from core.models import Goal, GoalState, PauseReason
from core.store.base import HostRecord
from core.store.postgres import PostgresStore
from tests.store.support import T0, goal, put

WINDOW = "fake:5h"
RULES = ResumeRules(max_concurrent=1)
NOW = T0 + timedelta(hours=1)


@pytest.fixture
def stores(pg_url: str) -> Iterator[dict[str, PostgresStore]]:
    opened = {}
    for host_id, account in (("alpha", "alice"), ("bravo", "alice"), ("carol", "bob")):
        store = PostgresStore(pg_url)
        store.host_id, store.lease_seconds = host_id, 30
        store.beat_host(HostRecord(host_id, "daemon", host_id, 1, T0, T0, 0,
                                   accounts={"fake": account}))
        opened[host_id] = store
    yield opened
    for store in opened.values():
        store.close()


def due(goal_id: str, paused_minutes_ago: int) -> Goal:
    since = NOW - timedelta(minutes=paused_minutes_ago)
    return goal(goal_id, state=GoalState.PAUSED, pause_reason=PauseReason.QUOTA,
                auto_resume=True, next_resume_at=NOW - timedelta(seconds=1), windows=(WINDOW,),
                state_since=since)


def settling(goal_id: str) -> Goal:
    return goal(goal_id, state=GoalState.RESUMING, windows=(WINDOW,),
                steering={"resume_slot": True})


def silent(store: PostgresStore, host_id: str, seconds: float) -> None:
    """``host_id``'s last heartbeat ``seconds`` ago by the database's clock (it was killed)."""
    store.con.execute("UPDATE hosts SET heartbeat = now() - make_interval(secs => %s) "
                      "WHERE host_id = %s", (seconds, host_id))


def test_a_killed_hosts_due_goal_holds_no_slot_an_online_hosts_does(
        stores: dict[str, PostgresStore]) -> None:
    alpha, bravo = stores["alpha"], stores["bravo"]
    put(alpha, due("fake:a", 30))  # the older pause: ahead of bravo's goal
    mine = due("fake:b", 10)
    put(bravo, mine)
    hold = check_slots(mine, NOW, RULES, bravo)
    assert hold is not None and hold.reason.endswith("0 of 1 in use behind fake:a")
    silent(bravo, "alpha", 31)
    assert check_slots(mine, NOW, RULES, bravo) is None
    silent(bravo, "alpha", 5)
    assert check_slots(mine, NOW, RULES, bravo) is not None
    alpha.stop_host("alpha", 0, NOW)  # stopped: offline at once
    assert check_slots(mine, NOW, RULES, bravo) is None


def test_a_settling_goal_counts_for_its_account_only(stores: dict[str, PostgresStore]) -> None:
    alpha, bravo, carol = stores["alpha"], stores["bravo"], stores["carol"]
    put(carol, settling("fake:c"))  # another subscription's window of the same name
    mine = due("fake:b", 10)
    put(bravo, mine)
    assert check_slots(mine, NOW, RULES, bravo) is None
    put(alpha, settling("fake:a"))
    hold = check_slots(mine, NOW, RULES, bravo)
    assert hold is not None and hold.reason.endswith("1 of 1 in use by fake:a")
    silent(bravo, "alpha", 60)
    assert check_slots(mine, NOW, RULES, bravo) is None
    silent(bravo, "bravo", 60)  # this host's own goals always count, whatever its heartbeat
    put(bravo, settling("fake:b2"))
    assert check_slots(mine, NOW, RULES, bravo) is not None
    # without peers (a view of the window, not a claim) every goal on it is listed
    assert {g.id for g in bravo.goals_on_window(WINDOW, (GoalState.RESUMING,))} == {
        "fake:a", "fake:b2", "fake:c"}
