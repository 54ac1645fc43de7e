"""A goal's budget: at most B % of a window per window period — the budget's *episode*.

What a goal spent is counted from the readings: every rise of a window's used % observed while
the goal runs is charged to it (a rise across a reset counts from 0). Goalkeeper cannot tell who
used what, so when several goals run on one window at once each is charged the whole rise — a
budget errs on the side of the window. Only windows with a reset have periods, so only they are
counted. The count lives in ``goal.steering.budget``: ``{window: BudgetEntry(spent, until)}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from core.models import GoalState
from core.quota.machine import used_percent

if TYPE_CHECKING:
    from core.models import BudgetEntry, Goal, QuotaReading


@dataclass(frozen=True)
class Spent:
    """What a goal spent of one window in the window's current period."""

    window_id: str
    percent: float
    until: datetime


def spent(goal: Goal, now: datetime) -> list[Spent]:
    """The goal's spending in the periods still running at ``now``."""
    found = []
    for window, entry in sorted(goal.steering.budget.items()):
        if entry.until > now:
            found.append(Spent(window, entry.spent, entry.until))
    return found


def exceeded(goal: Goal, now: datetime) -> Spent | None:
    """The window whose budget the goal has used up in this period, if any."""
    budget = goal.policy.budget_percent
    if budget is None:
        return None
    over = [s for s in spent(goal, now) if s.percent >= budget]
    return max(over, key=lambda s: s.until) if over else None


def charge(goal: Goal, previous: QuotaReading | None, reading: QuotaReading
           ) -> dict[str, BudgetEntry] | None:
    """The goal's new ``budget`` entry after ``reading`` (None: nothing to count or change)."""
    if goal.policy.budget_percent is None or goal.state is not GoalState.RUNNING or (
            reading.window_id not in goal.windows or reading.resets_at is None):
        return None
    used = used_percent(reading)
    if used is None:
        return None
    from core.models import BudgetEntry  # a model: built when a budget is charged

    entries = goal.steering.budget
    entry = entries.get(reading.window_id)
    before = entry.spent if entry is not None and reading.observed_at < entry.until else 0.0
    total = round(before + _rise(previous, reading, used), 3)
    updated = {**entries, reading.window_id: BudgetEntry(spent=total, until=reading.resets_at)}
    return updated if updated != entries else None


def _rise(previous: QuotaReading | None, reading: QuotaReading, used: float) -> float:
    if previous is None:
        return 0.0
    if previous.resets_at is not None and previous.resets_at <= reading.observed_at:
        return used  # the window reset in between: everything since is new
    before = used_percent(previous)
    return max(0.0, used - before) if before is not None else 0.0

