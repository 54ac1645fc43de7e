"""What the policies note on a goal (in ``goal.steering``, :class:`core.models.Steering`), and
how they read it back.

* ``last_run`` — how long the goal ran before its last pause for quota (``seconds``, ``ended_at``);
* ``policy_pause`` — a reserve or budget pause Goalkeeper made (``rule``, ``at``): while the goal
  has stayed paused since, the agent showing it "paused" (by us) does not replace the reason;
* ``resume_slot`` — this claim took a resume slot on the goal's windows (see
  :mod:`core.goals.slots`);
* ``last_resume_trigger`` — set by the resume entry point; tells a run Goalkeeper started
  automatically from one the user asked for.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from core.models import GoalState, PauseReason, Trigger

if TYPE_CHECKING:
    from core.models import Goal, PolicyPause, Steering

#: triggers of automatic resumes (a manual one is ``manual``)
AUTO_TRIGGERS = frozenset({Trigger.AUTO, Trigger.WAKE, Trigger.STARTUP})


def with_last_run(goal: Goal, now: datetime) -> Steering:
    """The goal's steering with ``last_run`` set, for a goal that is running now and about to
    pause; else its steering unchanged."""
    if goal.state is not GoalState.RUNNING or goal.state_since is None:
        return goal.steering
    from core.models import LastRun  # a model: built when a mark is written (issue 24)

    seconds = max(0.0, (now - goal.state_since).total_seconds())
    return goal.steering.model_copy(
        update={"last_run": LastRun(seconds=round(seconds, 1), ended_at=now)})


def last_run_seconds(goal: Goal) -> float | None:
    run = goal.steering.last_run
    return run.seconds if run is not None else None


def policy_pause_mark(rule: str, at: datetime) -> PolicyPause:
    from core.models import PolicyPause  # a model: built when a mark is written (issue 24)

    return PolicyPause(rule=rule, at=at)


def policy_paused(goal: Goal) -> str | None:
    """The rule of the reserve or budget pause the goal is still in, if it is in one."""
    mark = goal.steering.policy_pause
    if goal.state is not GoalState.PAUSED or mark is None or mark.at != goal.state_since:
        return None
    return mark.rule or None


def sticks_against(goal: Goal, observed: PauseReason) -> bool:
    """A policy pause, or queued work waiting for its reset (prepared paused in the agent), is
    not undone by the agent merely showing the goal paused."""
    return observed is PauseReason.EXTERNAL and (
        policy_paused(goal) is not None
        or (goal.state is GoalState.PAUSED and goal.steering.queued is not None))


def ran_automatically(goal: Goal) -> bool:
    """The goal runs because Goalkeeper resumed it automatically (not the user, not the agent):
    its current run began with an automatic resume whose runner Goalkeeper hosts."""
    return (goal.state is GoalState.RUNNING and goal.hosted
            and goal.steering.last_resume_trigger in AUTO_TRIGGERS
            and goal.resumed_at is not None and goal.resumed_at == goal.state_since)
