"""``goalkeeper goal set GOAL KEY VALUE`` — a goal's own resume policy — and what ``status``
shows of the resume policies (the global rules, each goal's policy, each window's reserve and
forecast)."""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from core.cli.common import EXIT_USAGE, CliError, Context
from core.clock import iso
from core.goals import budget
from core.goals.marks import last_run_seconds
from core.goals.rules import ResumeRules
from core.i18n import _, localized
from core.i18n.textfmt import duration, short_time
from core.quota.forecast import LOOKBACK, forecast
from core.store import Store

if TYPE_CHECKING:
    from core.models import Goal, QuotaReading


def register(sub: argparse._SubParsersAction[Any], common: argparse.ArgumentParser) -> None:
    # the goal's policy is a pydantic model: loaded by ``goal set``, not by ``status`` (issue 24)
    from core.policies.goal_policy import GOAL_KEYS

    goal = sub.add_parser("goal", parents=[common], help=_("a goal's own resume policy"))
    verbs = goal.add_subparsers(dest="goal_command", metavar="VERB", required=True)
    p = verbs.add_parser("set", parents=[common], help=_("set priority, budget_percent or "
                         "auto_resume_hours of a goal ('' or none clears it)"))
    p.add_argument("goal")
    p.add_argument("key", choices=GOAL_KEYS)
    p.add_argument("value", help=_("e.g. 5 · 20 · 'Mon-Fri 19:00-08:00' · none"))
    p.set_defaults(func=cmd_goal_set)


def cmd_goal_set(ctx: Context) -> int:
    from core.policies.goal_policy import GoalPolicy, PolicyValueError

    try:
        GoalPolicy().with_value(ctx.args.key, ctx.args.value)  # the same check the host makes
    except PolicyValueError as exc:
        raise CliError(localized(str(exc)), EXIT_USAGE) from None
    # the shared path of every action through the host; not loaded by ``status`` (issue 24)
    from core.cli.actions import run_action
    from core.commands import SetGoalPolicy

    return run_action(ctx, SetGoalPolicy(ctx.args.goal, ctx.args.key, ctx.args.value))


# -- status --------------------------------------------------------------------------------------


def goal_policy_json(goal: Goal, now: datetime) -> dict[str, Any]:
    return {
        "priority": goal.policy.priority,
        "budget_percent": goal.policy.budget_percent,
        "auto_resume_hours": goal.policy.auto_resume_hours,
        "deferred_by": goal.deferred_by,
        "budget_spent": {s.window_id: {"percent": s.percent, "until": iso(s.until)}
                         for s in budget.spent(goal, now)},
        "last_run_seconds": last_run_seconds(goal),
    }


def quota_policy_json(reading: QuotaReading, rules: ResumeRules, store: Store,
                      now: datetime) -> dict[str, Any]:
    points = store.series(reading.window_id, now - LOOKBACK - timedelta(minutes=30),
                          reading.account)
    return {
        "reserve_percent": rules.reserve_for(reading.window_id),
        "forecast": forecast(points, reading, now).to_json(now),
    }


def unmatched_lines(windows: list[str]) -> list[str]:
    """A reserve set for windows nobody has (yet): said, since it holds nothing back."""
    if not windows:
        return []
    return [_("Reserve set for {windows}, but no such window is known: it holds nothing back "
              "(a typo in resume_reserve_by_window?)").format(windows=", ".join(windows))]


def next_resume_words(goal: Goal, now: datetime) -> str | None:
    """``auto-resume at 19:00 (allowed hours)`` for a deferred goal; None otherwise."""
    if goal.next_resume_at is None or goal.deferred_by is None:
        return None
    return _("auto-resume at {time} ({rule})").format(time=short_time(goal.next_resume_at, now),
                                                       rule=localized(goal.deferred_by))


def goal_policy_words(goal: Goal) -> str:
    parts = []
    if goal.policy.priority:
        parts.append(_("priority {priority}").format(priority=goal.policy.priority))
    if goal.policy.budget_percent is not None:
        parts.append(_("budget {percent} %").format(percent=f"{goal.policy.budget_percent:g}"))
    if goal.policy.auto_resume_hours:
        parts.append(_("hours {hours}").format(hours=goal.policy.auto_resume_hours))
    if (ran := last_run_seconds(goal)) is not None and goal.pause_reason is not None:
        parts.append(_("ran {duration} on the last window").format(duration=duration(ran)))
    return _(", ").join(parts)
