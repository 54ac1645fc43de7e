"""``status``, ``history``, ``resume``, ``pause``, ``cancel``, ``auto-resume``, ``start``."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from core.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_UNKNOWN_GOAL,
    CliError,
    Context,
    warn,
)
from core.cli.policies import (
    goal_policy_json,
    goal_policy_words,
    next_resume_words,
    quota_policy_json,
)
from core.clock import SystemClock, iso
from core.models import Goal, HistoryRow, Outcome, QuotaReading
from core.policies.rules import ResumeRules
from core.quota import effective
from core.results import ActionResult
from core.textfmt import countdown, local_time


def register(sub: argparse._SubParsersAction[Any], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("status", parents=[common], help="goals and quota windows")
    p.set_defaults(func=cmd_status)
    p = sub.add_parser("history", parents=[common], help="the resume history, newest first")
    p.add_argument("goal", nargs="?", help="only this goal")
    p.add_argument("--limit", type=int, default=50, help="at most N rows (default 50)")
    p.set_defaults(func=cmd_history)
    for name, text in (("resume", "resume a paused goal now"),
                       ("pause", "pause a goal (it is never auto-resumed)"),
                       ("cancel", "cancel a goal for good"),
                       ("start", "start an idle goal")):
        p = sub.add_parser(name, parents=[common], help=text)
        p.add_argument("goal")
        p.set_defaults(func=cmd_action, op=name)
    p = sub.add_parser("auto-resume", parents=[common], help="turn auto-resume on or off")
    p.add_argument("goal")
    p.add_argument("switch", choices=["on", "off"])
    p.set_defaults(func=cmd_auto_resume)


# -- read-only ---------------------------------------------------------------------------------


def goal_json(goal: Goal, max_attempts: int) -> dict[str, Any]:
    return {
        "id": goal.id,
        "title": goal.title,
        "provider": goal.provider,
        "state": goal.state.value,
        "pause_reason": goal.pause_reason.value if goal.pause_reason else None,
        "pause_detail": goal.pause_detail,
        "auto_resume": goal.auto_resume,
        "next_resume_at": iso(goal.next_resume_at),
        "auto_resume_note": None if goal.next_resume_at else goal.auto_resume_note,
        "attempts": goal.attempts,
        "max_attempts": max_attempts,
        "resets_at": iso(goal.resets_at),
        "windows": list(goal.windows),
        "state_since": iso(goal.state_since),
        "updated_at": iso(goal.updated_at),
        "data": goal.data,
    }


def quota_json(reading: QuotaReading) -> dict[str, Any]:
    return {
        "id": reading.window_id,
        "provider": reading.provider,
        "label": reading.label,
        "kind": reading.kind.value,
        "used_percent": reading.used_percent,
        "used": reading.used,
        "limit": reading.limit,
        "resets_at": iso(reading.resets_at),
        "exactness": reading.exactness.value,
        "observed_at": iso(reading.observed_at),
        "limit_reached": reading.limit_reached,
        "note": reading.note,
    }


def cmd_status(ctx: Context) -> int:
    now = SystemClock().now()
    policy = ctx.settings.hysteresis()
    rules = ResumeRules.from_settings(ctx.settings)
    with ctx.store() as store:
        goals = store.list_goals()
        readings = [effective(r, now, policy) for r in store.latest_readings()]
        extras = {r.window_id: quota_policy_json(r, rules, store, now) for r in readings}
    cap = ctx.settings.max_auto_attempts
    data = {"goals": [goal_json(g, cap) | goal_policy_json(g, now) for g in goals],
            "quotas": [quota_json(r) | extras[r.window_id] for r in readings],
            "policies": rules.to_json()}
    ctx.emit(data, lambda: _status_text(goals, readings, now, cap, extras))
    return EXIT_OK


def _status_text(goals: list[Goal], readings: list[QuotaReading], now: datetime,
                 cap: int, extras: dict[str, dict[str, Any]]) -> str:
    lines = ["Goals:" if goals else "No goals yet."]
    for g in goals:
        state = g.state.value + (f" ({g.pause_reason.value})" if g.pause_reason else "")
        if g.next_resume_at:
            nxt = next_resume_words(g, now) or f"auto-resume {countdown(g.next_resume_at, now)}"
        else:
            nxt = g.auto_resume_note or ("auto-resume on" if g.auto_resume else "auto-resume off")
        lines.append(f"  {g.id:<28} {state:<20} {g.attempts}/{cap}  {nxt}")
        policy = goal_policy_words(g)
        lines.append(f"    {g.title}" + (f"  [{policy}]" if policy else ""))
    lines.append("Quotas:" if readings else "No quota readings yet.")
    for r in readings:
        used = f"{r.used_percent:.0f}%" if r.used_percent is not None else "?"
        reset = f"resets {countdown(r.resets_at, now)}" if r.resets_at else "no timed reset"
        extra = extras.get(r.window_id, {})
        reserve = extra.get("reserve_percent") or 0
        ahead = extra.get("forecast", {}).get("text") or ""
        lines.append(f"  {r.label:<20} {used:>5}  {reset}  [{r.exactness.value}]"
                     + (f"  {ahead}" if ahead else "")
                     + (f"  (reserve {reserve:g} %)" if reserve else "")
                     + (f"  {r.note}" if r.note else ""))
    return "\n".join(lines)


def history_json(row: HistoryRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "at": iso(row.at),
        "goal": row.goal,
        "event": row.event,
        "trigger": row.trigger.value if row.trigger else None,
        "origin": row.origin,
        "outcome": row.outcome.value if row.outcome else None,
        "reason": row.reason,
        "state_from": row.state_from.value if row.state_from else None,
        "state_to": row.state_to.value if row.state_to else None,
        "quotas": list(row.quotas),
        "detail": row.detail,
    }


def cmd_history(ctx: Context) -> int:
    if ctx.args.limit < 1:
        raise CliError("--limit must be at least 1", 2)
    with ctx.store() as store:
        if ctx.args.goal and store.get_goal(ctx.args.goal) is None and not store.count_history(
                ctx.args.goal):
            raise CliError(f"unknown goal {ctx.args.goal!r}", EXIT_UNKNOWN_GOAL)
        rows = store.history(ctx.args.goal, ctx.args.limit)
    ctx.emit([history_json(r) for r in rows], lambda: "\n".join(_history_line(r) for r in rows))
    return EXIT_OK


def _history_line(row: HistoryRow) -> str:
    parts = [local_time(row.at), row.goal or "-", row.event]
    if row.trigger:
        parts.append(f"[{row.trigger.value}/{row.origin}]")
    if row.outcome:
        parts.append(row.outcome.value)
    if row.reason:
        parts.append(f"— {row.reason}")
    return "  ".join(parts)


# -- actions through the host ------------------------------------------------------------------


def require_goal(ctx: Context, goal_id: str) -> Goal:
    """Exit 3 when the store does not know the goal (checked before contacting the host)."""
    with ctx.store() as store:
        goal = store.get_goal(goal_id)
    if goal is None:
        raise CliError(f"unknown goal {goal_id!r} (see `goalkeeper status`)", EXIT_UNKNOWN_GOAL)
    return goal


def exit_code(result: ActionResult) -> int:
    if result.outcome is Outcome.UNKNOWN_GOAL:
        return EXIT_UNKNOWN_GOAL
    if result.outcome is Outcome.REFUSED:
        return EXIT_REFUSED
    if result.outcome is Outcome.FAILED:
        return EXIT_ERROR
    return EXIT_OK


def render_result(result: ActionResult) -> str:
    text = result.outcome.value.replace("_", " ")
    if result.outcome is Outcome.DEFERRED and result.not_before:
        text += f" until {local_time(result.not_before)}"
    if result.reason and result.reason != result.outcome.value:
        text += f": {result.reason}"
    return f"{result.goal}: {text}"


def _run_action(ctx: Context, request: dict[str, Any]) -> int:
    require_goal(ctx, str(request["goal"]))
    result = ActionResult.from_json(ctx.ask_host(request))
    if result.notice:
        warn(result.notice)  # a line on stderr, never a prompt: scripts keep running
    ctx.emit(result.to_json(), lambda: render_result(result))
    return exit_code(result)


def cmd_action(ctx: Context) -> int:
    return _run_action(ctx, {"op": ctx.args.op, "goal": ctx.args.goal})


def cmd_auto_resume(ctx: Context) -> int:
    return _run_action(ctx, {"op": "auto-resume", "goal": ctx.args.goal,
                             "enabled": ctx.args.switch == "on"})


__all__ = ["EXIT_REFUSED", "register"]
