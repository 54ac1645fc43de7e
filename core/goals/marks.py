"""What the policies note on a goal (in ``goal.data``), and how they read it back.

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
from typing import Any

from core.clock import iso, parse_iso
from core.models import Goal, GoalState, PauseReason

#: triggers of automatic resumes (a manual one is ``manual``)
AUTO_TRIGGERS = frozenset({"auto", "wake", "startup"})


def last_run_data(goal: Goal, now: datetime) -> dict[str, Any]:
    """``{"last_run": …}`` for a goal that is running now and about to pause; else nothing."""
    if goal.state is not GoalState.RUNNING or goal.state_since is None:
        return {}
    seconds = max(0.0, (now - goal.state_since).total_seconds())
    return {"last_run": {"seconds": round(seconds, 1), "ended_at": iso(now)}}


def last_run_seconds(goal: Goal) -> float | None:
    run = goal.data.get("last_run")
    if isinstance(run, dict) and isinstance(run.get("seconds"), int | float):
        return float(run["seconds"])
    return None


def policy_pause_mark(rule: str, at: datetime) -> dict[str, Any]:
    return {"policy_pause": {"rule": rule, "at": iso(at)}}


def policy_paused(goal: Goal) -> str | None:
    """The rule of the reserve or budget pause the goal is still in, if it is in one."""
    mark = goal.data.get("policy_pause")
    if goal.state is not GoalState.PAUSED or not isinstance(mark, dict):
        return None
    at = parse_iso(mark.get("at")) if isinstance(mark.get("at"), str) else None
    if at is None or at != goal.state_since:
        return None
    return str(mark.get("rule") or "") or None


def sticks_against(goal: Goal, observed: PauseReason) -> bool:
    """A policy pause is not undone by the agent merely showing the goal paused."""
    return observed is PauseReason.EXTERNAL and policy_paused(goal) is not None


def ran_automatically(goal: Goal) -> bool:
    """The goal runs because Goalkeeper resumed it automatically (not the user, not the agent):
    its current run began with an automatic resume whose runner Goalkeeper hosts."""
    return (goal.state is GoalState.RUNNING and goal.hosted
            and goal.data.get("last_resume_trigger") in AUTO_TRIGGERS
            and goal.resumed_at is not None and goal.resumed_at == goal.state_since)
