"""``status``: the host (from its lease and a ping), its health, the goals and the quotas.

The goals and readings come straight from the store, read-only; whether a host runs comes from
the lease, so the goals of a host that is gone show as ``host not running`` — never ``running``
— and those of a hung one as ``host not responding``. The host's own health (store unavailable,
a provider that failed to start, safe mode) comes from its answer to a ping.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.cli import notify
from core.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    CliError,
    Context,
    HostView,
    not_responding_head,
)
from core.cli.policies import (
    goal_policy_json,
    goal_policy_words,
    next_resume_words,
    quota_policy_json,
    unmatched_lines,
)
from core.cli.render import goal_json, no_data_text, quota_json
from core.clock import iso
from core.goals.rules import ResumeRules
from core.hosts.listing import skewed_hosts
from core.i18n import N_, _, localized
from core.i18n.textfmt import countdown, pad
from core.i18n.words import word
from core.models import GoalState
from core.policies.reserve_table import unmatched_windows
from core.reads import StoredReads
from core.store import HostRecord

if TYPE_CHECKING:
    from core.models import Goal, QuotaReading

LIVE_STATES = (GoalState.RUNNING, GoalState.RESUMING)
#: stored English (``--json``'s ``shown_state``), translated when shown
SHOWN = {"not_running": N_("host not running"), "not_responding": N_("host not responding")}
#: a registered host's state (``--json``'s ``hosts[].state``), stored English like SHOWN
THIS_HOST, ONLINE, HOST_OFFLINE = N_("this host"), N_("online"), N_("host offline")
OFFLINE_SINCE = N_("offline since {since}")


def cmd_status(ctx: Context) -> int:
    now = ctx.clock.now()
    ctx.settings.hysteresis()  # a bad config.toml is an error, data or not
    rules = ResumeRules.from_settings(ctx.settings)
    view = ctx.host_view()
    host = host_json(view, now)
    # a host that does not answer a ping is not asked again for its channels
    channels = notify.channel_status(ctx, ctx.settings, ask=view.state == "running")
    notices = [h.to_json() for h in channels]
    try:
        with ctx.reader() as store:
            if store is None:
                data: dict[str, Any] = {"host": host, "goals": [], "quotas": [],
                                        "notifications": notices}
                ctx.emit(data, lambda: "\n".join([*_host_lines(view, now), no_data_text(ctx),
                                                   *notify.status_lines(channels, now)]))
                return EXIT_OK
            reads = StoredReads(store, ctx.settings, ctx.host_id, ctx.target.shared, now)
            goals = reads.goals()
            registered = store.list_hosts() if ctx.target.shared else []
            owners = owner_states(ctx, registered, now)
            readings = reads.readings()
            extras = {r.window_id: quota_policy_json(r, rules, store, now) for r in readings}
            unmatched = unmatched_windows(rules.overrides, ctx.settings.quotas,
                                          {r.window_id for r in readings})
    except CliError as exc:  # a damaged file: still say what the host says about it
        why = str(exc)
        data = {"host": host, "goals": [], "quotas": [], "error": why}
        ctx.emit(data, lambda: "\n".join([*_host_lines(view, now),
                                           _("the goals cannot be read: {error}").format(
                                               error=why)]))
        return EXIT_ERROR
    cap = ctx.settings.max_auto_attempts
    data = {"host": host,
            "goals": [goal_json(g, cap) | goal_policy_json(g, now)
                      | {"shown_state": shown_state(g, view, owners)} for g in goals],
            "quotas": [quota_json(r) | extras[r.window_id] for r in readings],
            "policies": rules.to_json() | {"unmatched_reserve_windows": unmatched},
            "notifications": notices}
    # a host whose clock is off, as the store measured it (also when this host is not running)
    skewed = [line for line in skewed_hosts(registered)
              if view.health is None or line not in view.health.problems()]
    if ctx.target.shared:
        offsets = {h.host_id: h.clock_offset for h in registered}
        data["hosts"] = [{"host": h, "state": state, "clock_offset_seconds": offsets.get(h)}
                         for h, state in sorted(owners.items())]
        data["clock_problems"] = list(skewed_hosts(registered))
    ctx.emit(data, lambda: "\n".join([*_host_lines(view, now),
                                      *(f"  {localized(line)}" for line in skewed),
                                      _text(view, goals, readings, now, cap, extras, owners),
                                      *unmatched_lines(unmatched),
                                      *notify.status_lines(channels, now)]))
    return EXIT_OK


def shown_state(goal: Goal, view: HostView, owners: dict[str, str] | None = None) -> str:
    """The state to show: a running goal of a host that is not running is not ``running``;
    any goal of another host that is offline says so."""
    owner = (owners or {}).get(goal.host)
    if owner is not None and owner != THIS_HOST:
        return goal.state.value if owner == ONLINE else HOST_OFFLINE
    if goal.state in LIVE_STATES and view.state != "running":
        return SHOWN[view.state]
    return goal.state.value


def owner_states(ctx: Context, hosts: list[HostRecord], now: datetime) -> dict[str, str]:
    """Each registered host: ``this host``, ``online`` or ``offline since T`` (a one-machine
    store: none — its goals are this machine's, and the lease says whether its host runs)."""
    if not ctx.target.shared:
        return {}
    lease = ctx.settings.host_stale_seconds
    states = {}
    for record in hosts:
        since = record.offline_since(now, lease)
        states[record.host_id] = ONLINE if since is None else OFFLINE_SINCE.format(
            since=iso(since))
    states[ctx.host_id] = THIS_HOST
    return states


def host_json(view: HostView, now: datetime) -> dict[str, Any]:
    info = view.info
    return {
        "state": view.state,
        "pid": info.pid if info else None,
        "kind": info.kind if info else None,
        "since": info.since if info else None,
        "heartbeat": info.heartbeat if info else None,
        "silent_seconds": info.silent_for(now) if info else None,
        "health": view.health.to_json() if view.health else None,
        "problems": view.health.problems() if view.health else [],
    }


def _host_line(view: HostView, now: datetime) -> str:
    info = view.info
    if view.state == "running" and info is not None:
        return _("Host: {kind}, pid {pid}, since {since}").format(
            kind=localized(info.kind), pid=info.pid, since=info.since)
    if view.state == "not_responding" and info is not None:
        return _("Host: {state}").format(state=not_responding_head(info.describe(), info, 0, now))
    return _("Host: not running — goals are not watched (start `goalkeeper daemon` or the app)")


def _host_lines(view: HostView, now: datetime) -> list[str]:
    lines = [_host_line(view, now)]
    if view.health is not None:
        lines.extend(f"  {localized(problem)}" for problem in view.health.problems())
        awake = view.health.awake
        if awake is not None and awake.state != "let_go":  # "not holding" is a problem above
            lines.append(f"  {localized(awake.describe())}")
        if awake is not None and awake.after_wake:
            lines.append(f"  {localized(awake.after_wake)}")
    return lines


def _text(view: HostView, goals: list[Goal], readings: list[QuotaReading], now: datetime,
          cap: int, extras: dict[str, dict[str, Any]], owners: dict[str, str]) -> str:
    lines: list[str] = []
    lines.extend("  " + _("host {host}: {state}").format(host=h, state=localized(state))
                 for h, state in sorted(owners.items()) if state != THIS_HOST and len(owners) > 1)
    lines.append(_("Goals:") if goals else _("No goals yet."))
    for g in goals:
        lines.extend(_goal_lines(g, view, now, cap, owners))
    lines.append(_("Quotas:") if readings else _("No quota readings yet."))
    for r in readings:
        used = f"{r.used_percent:.0f}%" if r.used_percent is not None else "?"
        reset = (_("resets {countdown}").format(countdown=countdown(r.resets_at, now))
                 if r.resets_at else _("no timed reset"))
        extra = extras.get(r.window_id, {})
        reserve = extra.get("reserve_percent") or 0
        ahead = localized(extra.get("forecast", {}).get("text") or "")
        lines.append(f"  {pad(localized(r.label), 20)} {used:>5}  {reset}  [{word(r.exactness)}]"
                     + (f"  {ahead}" if ahead else "")
                     + ("  " + _("(reserve {percent} %)").format(percent=f"{reserve:g}")
                        if reserve else "")
                     + (f"  {localized(r.note)}" if r.note else ""))
    return "\n".join(lines)


def _goal_lines(g: Goal, view: HostView, now: datetime, cap: int,
                owners: dict[str, str]) -> list[str]:
    shown = shown_state(g, view, owners)
    state = localized(shown)
    if shown != g.state.value:
        state += _(" (was {state})").format(state=word(g.state))
    elif g.pause_reason:
        state += _(" ({reason})").format(reason=word(g.pause_reason))
    if g.next_resume_at:
        nxt = next_resume_words(g, now) or _("auto-resume {countdown}").format(
            countdown=countdown(g.next_resume_at, now))
    elif g.auto_resume_note:
        nxt = localized(g.auto_resume_note)
    else:
        nxt = _("auto-resume on") if g.auto_resume else _("auto-resume off")
    words = goal_policy_words(g)
    where = f"  [{g.host}]" if len(owners) > 1 and g.host else ""
    return [f"  {g.id:<28} {pad(state, 20)} {g.attempts}/{cap}  {nxt}{where}",
            f"    {g.title}" + (f"  [{words}]" if words else "")]


__all__ = ["cmd_status", "shown_state"]
