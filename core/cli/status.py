"""``status``: the host (from its lease and a ping), its health, the goals and the quotas.

The goals and readings come straight from the store, read-only; whether a host runs comes from
the lease, so the goals of a host that is gone show as ``host not running`` — never ``running``
— and those of a hung one as ``host not responding``. The host's own health (store unavailable,
a provider that failed to start, safe mode) comes from its answer to a ping.

What the store holds is read and rendered by :mod:`core.cli.status_goals`, loaded only when
there is a store to read (issue 24: a command that has nothing to show loads less).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.cli import notify
from core.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    CliError,
    Context,
    HostView,
    not_responding_head,
)
from core.cli.render import no_data_text
from core.i18n import _, localized


def cmd_status(ctx: Context) -> int:
    now = ctx.clock.now()
    ctx.settings.hysteresis()  # a bad config.toml is an error, data or not
    view = ctx.host_view()
    host = host_json(view, now)
    # a host that does not answer a ping is not asked again for its channels
    channels, phone = notify.channel_status(ctx, ctx.settings, ask=view.state == "running")
    notices = [h.to_json() for h in channels]
    said = [*notify.status_lines(channels, now), *notify.phone_lines(phone)]
    phone_part = {} if phone is None else {"phone": phone}
    try:
        with ctx.reader(plain_reads=True) as store:  # shown only: no model built
            if store is None:
                data: dict[str, Any] = {"host": host, "goals": [], "quotas": [],
                                        "notifications": notices} | phone_part
                ctx.emit(data, lambda: "\n".join([*_host_lines(view, now), no_data_text(ctx),
                                                   *said]))
                return EXIT_OK
            from core.cli.status_goals import read_stored

            stored = read_stored(ctx, store, now)
    except CliError as exc:  # a damaged file: still say what the host says about it
        why = str(exc)
        data = {"host": host, "goals": [], "quotas": [], "error": why}
        ctx.emit(data, lambda: "\n".join([*_host_lines(view, now),
                                           _("the goals cannot be read: {error}").format(
                                               error=why)]))
        return EXIT_ERROR
    data = {"host": host, **stored.json(view, now), "notifications": notices} | phone_part
    data |= stored.hosts_json()
    ctx.emit(data, lambda: "\n".join([*_host_lines(view, now),
                                      *stored.lines(view, now), *said]))
    return EXIT_OK


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


__all__ = ["cmd_status", "host_json"]
