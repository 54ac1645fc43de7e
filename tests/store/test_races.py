"""Contract: exactly one winner across connections — claims, slots, migrations, requests.

Each thread has its own connection, as each host process has: what SQLite's ``BEGIN
IMMEDIATE`` guarantees on one machine, PostgreSQL's serialisable transactions guarantee across
machines.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from core.models import Goal, GoalState
from core.store.base import Mutation, Store
from tests.store.support import T0, claim, goal, put, row
from tests.support.store import Opener

THREADS = 6


def race(opener: Opener, work: Callable[[Store, int], Any], threads: int = THREADS,
         opened_first: bool = True) -> list[Any]:
    """``work(store, i)`` in ``threads`` threads at once, each on its own connection (opened
    in its thread, before the start — or, without ``opened_first``, at the start)."""
    barrier = threading.Barrier(threads)
    results: list[Any] = [None] * threads
    lock = threading.Lock()

    def run(i: int) -> None:
        try:
            if opened_first:
                with lock:  # the opener's bookkeeping is not thread-safe
                    store = opener(f"host{i % 3}", track=False)
                barrier.wait()
            else:
                barrier.wait()
                store = opener(f"host{i % 3}", track=False)
            try:
                results[i] = work(store, i)
            finally:
                store.close()
        except Exception as exc:
            results[i] = exc

    workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    return results


def test_racing_claims_on_one_goal_have_one_winner(opener: Opener) -> None:
    put(opener(), goal(state=GoalState.PAUSED))

    def claims(store: Store, i: int) -> list[str]:
        store.host_id = None  # the owner's engine, many connections
        return [store.transact("fake:a", claim).result for _ in range(20)]

    results = race(opener, claims)
    outcomes = [r for result in results for r in result]
    assert outcomes.count("won") == 1 and len(outcomes) == THREADS * 20
    assert opener().get_goal("fake:a").fence == 1  # type: ignore[union-attr]
    assert opener().count_history("fake:a") == THREADS * 20


def test_a_slot_counted_inside_the_claim_holds_across_connections(opener: Opener) -> None:
    """Two goals on one window, one slot: whoever claims counts the holders in the claim's
    own transaction — exactly one of the racing claims may see the slot free."""
    for goal_id in ("fake:a", "fake:b", "fake:c"):
        put(opener(), goal(goal_id, state=GoalState.PAUSED, windows=("w",)))

    def claim_if_free(store: Store, i: int) -> str:
        store.host_id = None
        goal_id = ("fake:a", "fake:b", "fake:c")[i % 3]

        def decide(current: Goal | None) -> Mutation[str]:
            holders = store.goals_on_window("w", (GoalState.RESUMING,))
            if holders:
                return Mutation(None, "held")
            return claim(current)

        return store.transact(goal_id, decide).result

    results = race(opener, claim_if_free)
    assert results.count("won") == 1, results
    assert len(opener().goals_on_window("w", (GoalState.RESUMING,))) == 1


def test_stores_opened_at_once_on_a_fresh_store_migrate_it_once(opener: Opener) -> None:
    versions = race(opener, lambda store, i: store.schema_version, opened_first=False)
    assert len(set(versions)) == 1 and isinstance(versions[0], int), versions
    assert opener().list_goals() == []


def test_a_request_is_taken_by_one_of_many_racing_takers(opener: Opener) -> None:
    ids = [opener("desk").post_request("laptop", {"op": "resume", "n": n}, "desk", T0,
                                       T0 + timedelta(60)) for n in range(10)]

    def take(store: Store, i: int) -> list[int]:
        taken = []
        for _ in range(5):
            taken += [r.id for r in store.take_requests("laptop", T0)]
        return taken

    results = race(opener, take)
    everything = sorted(r for result in results for r in result)
    assert everything == sorted(ids)  # each once


def test_a_history_append_under_contention_loses_nothing(opener: Opener) -> None:
    def append(store: Store, i: int) -> int:
        for n in range(30):
            store.append_history(row(f"g{i}", f"e{n}"))
        return 30

    race(opener, append)
    assert opener().count_history() == THREADS * 30
