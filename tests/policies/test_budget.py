"""A goal's budget: at most B % of a window per window period; reaching it pauses the goal with
reason budget, never auto-resumed in that period."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.commands import Pause, Resume, SetGoalPolicy
from core.goals import budget
from core.models import BudgetEntry, Goal, GoalState, Outcome, PauseReason, Steering, Trigger
from core.policies.goal_policy import GoalPolicy
from tests.policies.support import WINDOW, H, policy_settings, report, rows, started, waiting
from tests.support.fakes import advance, reading

T0 = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)
RESET = T0 + timedelta(hours=2)


def running(budget_percent: float | None = 20,
            spent: dict[str, BudgetEntry] | None = None) -> Goal:
    return Goal(id="fake:g", provider="fake", title="g", state=GoalState.RUNNING,
                windows=(WINDOW,), policy=GoalPolicy(budget_percent=budget_percent),
                steering=Steering(budget=spent or {}), created_at=T0, updated_at=T0)


def test_rises_while_running_are_charged_and_a_reset_starts_a_new_period() -> None:
    goal = running()
    first = budget.charge(goal, reading(WINDOW, 10, T0, RESET), reading(WINDOW, 14, T0, RESET))
    assert first == {WINDOW: BudgetEntry(spent=4.0, until=RESET)}
    goal = running(spent=first)
    # a fall (another window's data, a correction) is never a refund
    assert budget.charge(goal, reading(WINDOW, 14, T0, RESET), reading(WINDOW, 12, T0, RESET)) \
        is None
    # across the reset everything since is new, and the old period's spending is gone
    later = RESET + timedelta(minutes=1)
    after = budget.charge(goal, reading(WINDOW, 30, T0, RESET),
                          reading(WINDOW, 5, later, RESET + timedelta(hours=5)))
    assert after == {WINDOW: BudgetEntry(spent=5.0, until=RESET + timedelta(hours=5))}
    assert [s.percent for s in budget.spent(goal, T0)] == [4.0]
    assert budget.spent(goal, RESET) == []  # a period that ended counts no more


def test_nothing_is_counted_without_a_budget_a_reset_or_a_run() -> None:
    before, after = reading(WINDOW, 10, T0, RESET), reading(WINDOW, 20, T0, RESET)
    assert budget.charge(running(None), before, after) is None
    assert budget.charge(running(), before, reading(WINDOW, 20, T0, None)) is None
    paused = running().model_copy(update={"state": GoalState.PAUSED})
    assert budget.charge(paused, before, after) is None
    assert budget.exceeded(running(spent={WINDOW: BudgetEntry(spent=20, until=RESET)}),
                           T0) is not None


@pytest.mark.asyncio
async def test_reaching_the_budget_pauses_with_reason_budget_until_the_period_ends(
        make_engine, fake, clock) -> None:
    waiting(fake, clock, fresh_used=3)
    engine = await make_engine(fake, settings=policy_settings())
    set_it = await engine.perform(SetGoalPolicy("fake:g", "budget_percent", "20"), "cli")
    assert set_it.outcome is Outcome.UPDATED and set_it.reason == "budget_percent = 20"
    await advance(engine, clock, H + 46)
    assert engine.goals["fake:g"].state is GoalState.RUNNING
    period_end = clock.now() + timedelta(hours=4)
    await report(engine, fake, clock, 12, period_end)
    assert engine.goals["fake:g"].state is GoalState.RUNNING
    await report(engine, fake, clock, 23, period_end)  # 3 -> 23: 20 % of the window spent
    g = engine.goals["fake:g"]
    assert g.state is GoalState.PAUSED and g.pause_reason is PauseReason.BUDGET
    assert g.pause_detail == ("budget: 20 % of fake:5h spent this period (budget 20 %) — not "
                              "resumed before the window resets")
    assert g.next_resume_at == period_end + timedelta(seconds=45) and fake.paused == ["fake:g"]
    assert (await rows(engine, "fake:g", "resume_scheduled"))[0].reason == "budget spent"
    # never automatically in this period — even if something brings its time forward
    await engine.quota_intake.release("fake:g", [WINDOW])
    auto = await engine.perform(Resume("fake:g", Trigger.AUTO), "scheduler")
    assert auto.outcome is Outcome.DEFERRED and auto.reason.startswith("budget: ")
    assert started(fake) == ["fake:g"]
    # the next period is a new episode: resumed at its start
    fake.level["used"] = 1  # type: ignore[attr-defined]
    await advance(engine, clock, 4 * H + 46)
    assert started(fake) == ["fake:g", "fake:g"]
    assert engine.goals["fake:g"].state is GoalState.RUNNING


@pytest.mark.asyncio
async def test_a_spent_budget_holds_back_a_quota_resume_in_the_same_period(make_engine, fake,
                                                                          clock) -> None:
    waiting(fake, clock, fresh_used=3)
    engine = await make_engine(fake, settings=policy_settings())
    await engine.perform(SetGoalPolicy("fake:g", "budget_percent", "10"))
    await advance(engine, clock, H + 46)
    # spent in a run the user started: counted, but that run is not paused for it
    await engine.perform(Pause("fake:g"))
    assert (await engine.perform(Resume("fake:g"))).outcome is Outcome.RESUMED
    period_end = clock.now() + timedelta(hours=4)
    await report(engine, fake, clock, 15, period_end)
    assert engine.goals["fake:g"].state is GoalState.RUNNING
    # the window then runs out; after its (early) reset the budget still holds it back
    fake.hit_limit(engine.goals["fake:g"], clock.now() + timedelta(minutes=10))
    await advance(engine, clock, 11 * 60)
    g = engine.goals["fake:g"]
    assert g.state is GoalState.PAUSED and g.deferred_by == "budget"
    assert g.next_resume_at == period_end + timedelta(seconds=45)
    held = (await rows(engine, "fake:g"))[0]
    assert held.outcome is Outcome.DEFERRED and held.detail["rule"] == "budget"


@pytest.mark.asyncio
async def test_a_manual_resume_of_a_budget_pause_says_so(make_engine, fake, clock) -> None:
    waiting(fake, clock, fresh_used=3)
    engine = await make_engine(fake, settings=policy_settings())
    await engine.perform(SetGoalPolicy("fake:g", "budget_percent", "5"))
    await advance(engine, clock, H + 46)
    await report(engine, fake, clock, 9, clock.now() + timedelta(hours=4))
    assert engine.goals["fake:g"].pause_reason is PauseReason.BUDGET
    manual = await engine.perform(Resume("fake:g"))
    assert manual.outcome is Outcome.RESUMED and "its budget is spent" in manual.reason
