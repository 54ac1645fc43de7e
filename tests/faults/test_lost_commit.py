"""A claim whose COMMIT acknowledgement is lost (the shared store's connection dropped during
COMMIT: psycopg's OperationalError, so StoreUnavailable — yet the commit may have happened)
never leaves the goal ``resuming`` without a runner: a conditional settle back to ``paused`` is
stored (or queued), and it changes nothing when the claim had not been committed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from core.clock import FakeClock
from core.commands import Resume
from core.engine import Engine
from core.models import GoalState, Outcome, PauseReason
from core.store import Store, StoreUnavailable
from tests.support.fakes import FakeProvider

pytestmark = pytest.mark.asyncio
LOST = "the shared store db/goals is unavailable: server closed the connection unexpectedly"


def lose_the_claims_ack(engine: Engine, committed: bool) -> None:
    """The claim's write fails once with StoreUnavailable — after committing, or before."""
    real = engine.goal_door._coordinator._write
    failed: list[bool] = []

    async def write(fn: Callable[[Store], Any]) -> Any:
        if failed:
            return await real(fn)
        failed.append(True)
        if committed:
            await real(fn)
        raise StoreUnavailable(LOST)

    engine.goal_door._coordinator._write = write


async def paused(make_engine: Any, fake: FakeProvider) -> Engine:
    fake.observe("fake:g", GoalState.PAUSED, reason=PauseReason.USER)
    engine: Engine = await make_engine(fake)
    return engine


@pytest.mark.parametrize("committed", [True, False])
async def test_a_claim_whose_commit_was_not_confirmed_goes_back_to_paused(
        make_engine: Any, fake: FakeProvider, clock: FakeClock, committed: bool) -> None:
    engine = await paused(make_engine, fake)
    fence = engine.goals["fake:g"].fence
    lose_the_claims_ack(engine, committed)
    answer = await engine.perform(Resume("fake:g"))
    assert answer.outcome is Outcome.FAILED
    assert fake.resume_calls == []  # no runner for a claim nobody knows was stored
    goal = await engine.store.run(lambda s: s.get_goal("fake:g"))
    assert goal is not None and goal.state is GoalState.PAUSED
    assert goal.fence == fence + (1 if committed else 0)
    rows = await engine.store.run(lambda s: s.history("fake:g", 10))
    undone = [r for r in rows if "did not confirm the claim" in (r.reason or "")]
    assert len(undone) == (2 if committed else 0)  # the transition and the resume's row
    assert engine.goals["fake:g"].state is GoalState.PAUSED
    again = await engine.perform(Resume("fake:g"))
    assert again.outcome is Outcome.RESUMED and len(fake.resume_calls) == 1
