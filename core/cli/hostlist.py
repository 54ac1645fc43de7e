"""``hosts``: every host registered in the store — its state, last heartbeat, goals, accounts.

A host is *online* while its heartbeat is younger than ``host_stale_seconds``; one that stopped
says since when, and one that died (SIGKILL, power cut) is offline from its last heartbeat. On
a one-machine store the list has this machine's host only.
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from core.cli.common import EXIT_OK, Context
from core.clock import SystemClock, iso
from core.i18n import _, localized
from core.i18n.words import word
from core.store import HostRecord
from core.textfmt import duration, pad


def register(sub: argparse._SubParsersAction[Any], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("hosts", parents=[common],
                       help=_("the hosts sharing the store: state, last heartbeat, goals"))
    p.set_defaults(func=cmd_hosts)


def cmd_hosts(ctx: Context) -> int:
    now = SystemClock().now()
    lease = ctx.settings.host_stale_seconds
    with ctx.reader() as store:
        hosts = store.list_hosts() if store is not None else []
        goals = Counter(g.host for g in store.list_goals()) if store is not None else Counter()
    rows = [_row(h, now, lease, goals[h.host_id], ctx.host_id) for h in hosts]
    ctx.emit({"store": ctx.target.describe(), "hosts": rows}, lambda: _text(ctx, rows))
    return EXIT_OK


def _row(host: HostRecord, now: Any, lease: float, goals: int, me: str) -> dict[str, Any]:
    since = host.offline_since(now, lease)
    return {"host": host.host_id, "kind": host.kind, "machine": host.machine, "pid": host.pid,
            "state": "online" if since is None else "offline",
            "offline_since": iso(since), "since": iso(host.since),
            "heartbeat": iso(host.heartbeat),
            "silent_seconds": round(host.silent_for(now), 1),
            "epoch": host.epoch, "goals": goals, "accounts": host.accounts,
            "version": host.version, "this_machine": host.host_id == me}


def _text(ctx: Context, rows: list[dict[str, Any]]) -> str:
    store = localized(ctx.target.describe())
    if not rows:
        return _("no host has registered in {store} yet").format(store=store)
    lines = [_("Hosts in {store}:").format(store=store)]
    for r in rows:
        state = (_("online") if r["state"] == "online"
                 else _("offline since {since}").format(since=r["offline_since"]))
        mark = "  " + _("(this machine)") if r["this_machine"] else ""
        beat = _("last heartbeat {duration} ago").format(duration=duration(r["silent_seconds"]))
        goals = _("{count} goals").format(count=r["goals"])
        lines.append(f"  {pad(r['host'], 20)} {pad(word(r['kind']), 7)} {pad(state, 36)} "
                     f"{beat}  {goals}{mark}")
        if r["accounts"]:
            lines.append("    " + _("accounts: {accounts}").format(accounts=", ".join(
                f"{p}={a}" for p, a in sorted(r["accounts"].items()))))
    return "\n".join(lines)
