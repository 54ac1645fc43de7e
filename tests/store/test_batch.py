"""Contract: ``transact_many`` — several goals' changes in one transaction, on both stores."""

from __future__ import annotations

import pytest

from core.models import Goal
from core.store.base import Mutation, NotOwner
from tests.store.support import goal, put, row
from tests.support.store import Opener


def test_each_change_is_decided_in_turn_and_all_are_written(opener: Opener) -> None:
    store = opener()
    seen: list[Goal | None] = []

    def second(cur: Goal | None) -> Mutation[str]:
        seen.append(cur)  # the first change to the same goal, already in the transaction
        assert cur is not None
        return Mutation(cur.model_copy(update={"title": "again"}), "b", [row()])

    done = store.transact_many([("fake:a", lambda cur: Mutation(goal(), "a", [row()])),
                                ("fake:b", lambda cur: Mutation(goal("fake:b"), "c")),
                                ("fake:a", second)])
    assert [c.result for c in done] == ["a", "c", "b"]
    assert done[0].before is None and seen == [done[0].after]
    assert store.get_goal("fake:a").title == "again"  # type: ignore[union-attr]
    assert store.get_goal("fake:b") is not None
    assert [r.id for c in done for r in c.history] == [r.id for r in
                                                       reversed(store.history("fake:a"))]


def test_a_refused_change_rolls_back_the_whole_batch(opener: Opener) -> None:
    laptop, desk = opener("laptop"), opener("desk")
    put(laptop, goal("fake:b"))
    with pytest.raises(NotOwner):
        desk.transact_many([("fake:a", lambda cur: Mutation(goal(), None, [row()])),
                            ("fake:b", lambda cur: Mutation(cur, None, [row()]))])
    assert desk.get_goal("fake:a") is None and desk.count_history() == 0
