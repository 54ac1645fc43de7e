"""``hosts``: every host registered in the store — its state, last heartbeat, goals, accounts
(the lines of :mod:`core.hosts.listing`, which the desktop app's Hosts dialog shows too)."""

from __future__ import annotations

import argparse
from typing import Any

from core.cli.common import EXIT_OK, Context
from core.clock import SystemClock
from core.health import skew_text
from core.hosts.listing import host_lines
from core.i18n import _, localized
from core.i18n.textfmt import duration, pad
from core.i18n.words import word


def register(sub: argparse._SubParsersAction[Any], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("hosts", parents=[common],
                       help=_("the hosts sharing the store: state, last heartbeat, goals"))
    p.set_defaults(func=cmd_hosts)


def cmd_hosts(ctx: Context) -> int:
    now = SystemClock().now()
    with ctx.reader() as store:
        hosts = store.list_hosts() if store is not None else []
        owners = [g.host for g in store.list_goals()] if store is not None else []
    lines = host_lines(hosts, owners, now, ctx.settings.host_stale_seconds, ctx.host_id)
    rows = [line.to_json() for line in lines]
    ctx.emit({"store": ctx.target.describe(), "hosts": rows}, lambda: _text(ctx, rows))
    return EXIT_OK


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
        if r["clock_skewed"]:
            lines.append("    " + localized(skew_text(r["host"], r["clock_offset_seconds"])))
        if r["accounts"]:
            lines.append("    " + _("accounts: {accounts}").format(accounts=", ".join(
                f"{p}={a}" for p, a in sorted(r["accounts"].items()))))
    return "\n".join(lines)
