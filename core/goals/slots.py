"""Resume slots: at most K automatic resumes settling at once on a window, best rank first.

A goal Goalkeeper resumed automatically holds a *slot* on each of its windows from its claim
(``resuming``) until it stops running, or until it has run for the settle time — then the next
waiting goal may start. Who holds a slot is read from the store inside the claim's transaction
(:meth:`core.store.sqlite.SqliteStore.goals_on_window`), never from memory, so the count holds for
every process — and every host — that shares the store. On a shared store only the goals of
hosts online now that use the same account count (``peers``): a goal of a host that died holds
no slot of another's, and neither does one drawing on another subscription's window.

Rank: higher ``priority`` first; then the oldest pause. Pauses in the same minute count as equally
old — goals one window stopped together — and among those the goal Goalkeeper resumed *last*
goes first (one never resumed before all): it ran least on that window. So goals of equal rank
take turns across episodes: a goal that did not get to run keeps its older pause and goes first
next time; goals that all ran swap places.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Protocol

from core.goals.auto_resume import WAITS_FOR_RESET
from core.goals.rules import RULE_SLOT, Hold, ResumeRules
from core.i18n import N_
from core.models import Goal, GoalState, PauseReason


class SlotStore(Protocol):
    """The two store queries the slots are counted with (:class:`~core.store.SqliteStore`)."""

    def goals_on_window(self, window_id: str, states: Sequence[GoalState],
                        peers: bool = False) -> list[Goal]: ...

    def goals_due_on_window(self, window_id: str, now: datetime,
                            reasons: Sequence[PauseReason], peers: bool = False) -> list[Goal]: ...


def rank_key(goal: Goal) -> tuple[int, datetime, float, str]:
    """Sorts goals waiting on a window into the order they get slots."""
    paused_minute = (goal.state_since or goal.created_at).replace(second=0, microsecond=0)
    served = goal.resumed_at.timestamp() if goal.resumed_at is not None else math.inf
    return (-goal.policy.priority, paused_minute, -served, goal.id)


def holds_slot(goal: Goal, now: datetime, settle: timedelta) -> bool:
    if not goal.steering.resume_slot:
        return False
    if goal.state is GoalState.RESUMING:
        return True
    return (goal.state is GoalState.RUNNING and goal.resumed_at is not None
            and goal.resumed_at == goal.state_since and now - goal.resumed_at < settle)


def _due_waiter(goal: Goal, now: datetime) -> bool:
    return (goal.state is GoalState.PAUSED and goal.pause_reason in WAITS_FOR_RESET
            and goal.auto_resume
            and goal.next_resume_at is not None and goal.next_resume_at <= now)


def check_slots(goal: Goal, now: datetime, rules: ResumeRules, store: SlotStore) -> Hold | None:
    """A hold when every slot of one of the goal's windows is taken — by goals settling there,
    or by better-ranked goals that are due as well (a second host's scheduler included)."""
    if rules.max_concurrent == 0:
        return None
    for window in goal.windows:
        holders = [g for g in store.goals_on_window(window, (GoalState.RESUMING,
                                                             GoalState.RUNNING), peers=True)
                   if g.id != goal.id and holds_slot(g, now, rules.settle)]
        ahead: list[Goal] = []
        if len(holders) < rules.max_concurrent:  # only then can the queue matter
            mine = rank_key(goal)
            ahead = [g for g in store.goals_due_on_window(window, now, sorted(WAITS_FOR_RESET),
                                                          peers=True)
                     if g.id != goal.id and _due_waiter(g, now) and rank_key(g) < mine]
        if len(holders) + len(ahead) >= rules.max_concurrent:
            return Hold(RULE_SLOT, _why(window, holders, ahead, rules.max_concurrent),
                        _free_at(holders, now, rules.settle))
    return None


def _why(window: str, holders: list[Goal], ahead: list[Goal], limit: int) -> str:
    template = _SLOT_TEXTS[(bool(holders), bool(ahead))]
    return template.format(rule=RULE_SLOT, window=window, used=len(holders), limit=limit,
                           holders=", ".join(g.id for g in holders),
                           ahead=", ".join(g.id for g in sorted(ahead, key=rank_key)))


#: a slot hold's reason by (held by someone, better-ranked goals due too); stored English
_SLOT_TEXTS = {
    (False, False): N_("{rule} on {window}: {used} of {limit} in use"),
    (True, False): N_("{rule} on {window}: {used} of {limit} in use by {holders}"),
    (False, True): N_("{rule} on {window}: {used} of {limit} in use behind {ahead}"),
    (True, True): N_("{rule} on {window}: {used} of {limit} in use by {holders} behind {ahead}"),
}


def _free_at(holders: list[Goal], now: datetime, settle: timedelta) -> datetime:
    """When a slot frees at the latest: the first holder's settle time ends (a holder that
    stops earlier frees it earlier; the scheduler notices)."""
    ends = [g.resumed_at + settle for g in holders
            if g.state is GoalState.RUNNING and g.resumed_at is not None]
    return max(now + timedelta(seconds=1), min(ends, default=now + settle))
