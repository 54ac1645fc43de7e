"""What ``status`` shows of the store: the goals, the quota windows with their policies, and the
hosts sharing the store — read while the store is open (:func:`read_stored`), rendered after.

Loaded by :mod:`core.cli.status` only when there is a store to read.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.cli.common import Context, HostView
from core.cli.policies import (
    goal_policy_json,
    goal_policy_words,
    next_resume_words,
    quota_policy_json,
    unmatched_lines,
)
from core.cli.render import goal_json, quota_json
from core.clock import iso
from core.goals.rules import ResumeRules
from core.i18n import N_, _, localized
from core.i18n.textfmt import countdown, pad
from core.i18n.words import word
from core.models import GoalState
from core.policies.reserve_table import unmatched_windows
from core.reads import StoredReads

if TYPE_CHECKING:
    from core.models import Goal, QuotaReading
    from core.store import HostRecord, Store

LIVE_STATES = (GoalState.RUNNING, GoalState.RESUMING)
#: stored English (``--json``'s ``shown_state``), translated when shown
SHOWN = {"not_running": N_("host not running"), "not_responding": N_("host not responding")}
#: a registered host's state (``--json``'s ``hosts[].state``), stored English like SHOWN
THIS_HOST, ONLINE, HOST_OFFLINE = N_("this host"), N_("online"), N_("host offline")
OFFLINE_SINCE = N_("offline since {since}")


@dataclass(frozen=True)
class Stored:
    """What was read of the store for ``status``."""

    goals: list[Goal]
    readings: list[QuotaReading]
    registered: list[HostRecord]
    owners: dict[str, str]
    extras: dict[str, dict[str, Any]]
    unmatched: list[str]
    rules: ResumeRules
    cap: int
    shared: bool

    def json(self, view: HostView, now: datetime) -> dict[str, Any]:
        """``goals``, ``quotas`` and ``policies`` of ``status --json``."""
        return {"goals": [goal_json(g, self.cap) | goal_policy_json(g, now)
                          | {"shown_state": shown_state(g, view, self.owners)}
                          for g in self.goals],
                "quotas": [quota_json(r) | self.extras[r.window_id] for r in self.readings],
                "policies": self.rules.to_json() | {
                    "unmatched_reserve_windows": self.unmatched}}

    def hosts_json(self) -> dict[str, Any]:
        """``hosts`` and ``clock_problems`` of ``status --json`` (a shared store only)."""
        if not self.shared:
            return {}
        from core.hosts.listing import skewed_hosts

        offsets = {h.host_id: h.clock_offset for h in self.registered}
        return {"hosts": [{"host": h, "state": state, "clock_offset_seconds": offsets.get(h)}
                          for h, state in sorted(self.owners.items())],
                "clock_problems": list(skewed_hosts(self.registered))}

    def lines(self, view: HostView, now: datetime) -> list[str]:
        """The human rendering after the host's lines."""
        # a host whose clock is off, as the store measured it (also when this host is not
        # running); only a shared store has registered hosts (and loads their listing)
        skewed = []
        if self.registered:
            from core.hosts.listing import skewed_hosts

            skewed = [line for line in skewed_hosts(self.registered)
                      if view.health is None or line not in view.health.problems()]
        return [*(f"  {localized(line)}" for line in skewed),
                _text(view, self.goals, self.readings, now, self.cap, self.extras, self.owners),
                *unmatched_lines(self.unmatched)]


def read_stored(ctx: Context, store: Store, now: datetime) -> Stored:
    rules = ResumeRules.from_settings(ctx.settings)
    reads = StoredReads(store, ctx.settings, ctx.host_id, ctx.target.shared, now)
    goals = reads.goals()
    registered = store.list_hosts() if ctx.target.shared else []
    owners = owner_states(ctx, registered, now)
    readings = reads.readings()
    extras = {r.window_id: quota_policy_json(r, rules, store, now) for r in readings}
    unmatched = unmatched_windows(rules.overrides, ctx.settings.quotas,
                                  {r.window_id for r in readings})
    return Stored(goals, readings, registered, owners, extras, unmatched, rules,
                  ctx.settings.max_auto_attempts, ctx.target.shared)


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


__all__ = ["Stored", "read_stored", "shown_state"]
