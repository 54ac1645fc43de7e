"""``notify test``, and the notification channels' part of ``status``.

``notify test`` sends a test message through every configured channel (or ``--channel``) from
this process, with the current ``config.toml`` and keyring — no host needed, so a headless box
can be set up before its daemon starts. ``status`` asks the running host how its channels are
doing (control op ``notify-status``); without a host, nothing is being sent.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.cli.common import EXIT_ERROR, EXIT_OK, EXIT_USAGE, CliError, Context
from core.clock import SystemClock
from core.hosts.lease import host_running
from core.i18n import N_, _, localized
from core.i18n.textfmt import short_time
from core.i18n.words import word
from core.notices import ChannelHealth, ChannelState
from core.notify.channels import channels_from
from core.paths import check_socket

if TYPE_CHECKING:
    from core.notify.delivery import DeliveryReport
    from core.settings import Settings

#: ``status`` waits this long for the host's answer about its channels
STATUS_TIMEOUT_SECONDS = 3.0


def register(sub: argparse._SubParsersAction[Any], common: argparse.ArgumentParser) -> None:
    notify = sub.add_parser("notify", help=_("notifications through ntfy and webhooks"))
    nsub = notify.add_subparsers(dest="notify_command", metavar="COMMAND", required=True)
    p = nsub.add_parser("test", parents=[common],
                        help=_("send a test message through every configured channel"))
    p.add_argument("--channel", choices=["ntfy", "webhook"], help=_("only this channel"))
    p.set_defaults(func=cmd_test)


def cmd_test(ctx: Context) -> int:
    settings = ctx.settings
    configured = [c.name for c in channels_from(settings)]
    only = ctx.args.channel
    if not configured or (only is not None and only not in configured):
        what = (_("the {channel} channel is not configured").format(channel=only) if only
                else _("no notification channel is configured"))
        raise CliError(_("{what}: set notify_ntfy_url or notify_webhook_url in {file} (or "
                         "GOALKEEPER_NOTIFY_NTFY_URL / GOALKEEPER_NOTIFY_WEBHOOK_URL)").format(
            what=what, file=ctx.paths.config_file), EXIT_USAGE)
    import asyncio  # the sending side only: ``status`` runs no loop (issue 24)

    from core.notify.service import send_test_now

    reports = asyncio.run(send_test_now(settings, SystemClock(), only))
    ctx.emit([_report_json(r) for r in reports], lambda: "\n".join(map(_report_text, reports)))
    return EXIT_OK if all(r.delivered for r in reports) else EXIT_ERROR


def _report_json(report: DeliveryReport) -> dict[str, Any]:
    return {"channel": report.channel, "delivered": report.delivered,
            "attempts": report.attempts, "reason": report.reason}


def _report_text(report: DeliveryReport) -> str:
    if report.delivered:
        if report.attempts > 1:
            return _("{channel}: test message delivered (after {n} attempts)").format(
                channel=report.channel, n=report.attempts)
        return _("{channel}: test message delivered").format(channel=report.channel)
    return _("{channel}: NOT delivered — {reason}").format(
        channel=report.channel, reason=localized(report.reason or ""))


# -- status ------------------------------------------------------------------------------------


def channel_status(ctx: Context, settings: Settings, *, ask: bool = True
                   ) -> tuple[list[ChannelHealth], dict[str, Any] | None]:
    """The running host's channel records; without a host (or with ``ask`` false: one that did
    not answer a ping), the configured channels as idle with the reason that nothing is sent.
    Second: the phone listener's record (issue 23), when answering is on."""
    configured = channels_from(settings)
    info = host_running(ctx.paths)
    reply: dict[str, Any] | None = None
    if info is not None and ask:
        reply = _ask(ctx, info.socket)
    phone = _phone_record(settings, reply)
    if reply is not None and isinstance(reply.get("channels"), list):
        return [ChannelHealth.from_json(c) for c in reply["channels"]], phone
    why = (N_("no host is running: nothing is sent") if info is None
           else N_("the host does not answer: nothing is sent") if not ask
           else N_("the host did not say (an older version, or busy)"))
    return [ChannelHealth(c.name, c.target, c.min_kind, ChannelState.IDLE, why)
            for c in configured], phone


def _phone_record(settings: Settings, reply: dict[str, Any] | None) -> dict[str, Any] | None:
    if not settings.phone_commands:
        return None
    if reply is not None and isinstance(reply.get("phone"), dict):
        return dict(reply["phone"])
    return {"state": "off", "reason": N_("no host is listening"), "accepted": 0, "refused": 0,
            "actions": [a for a in settings.phone_actions.split(",") if a]}


def phone_lines(phone: dict[str, Any] | None) -> list[str]:
    """``goalkeeper status``'s line about answers from the phone (none when it is off)."""
    if phone is None:
        return []
    state = str(phone.get("state"))
    words = {"subscribed": _("subscribed"), "connecting": _("connecting"),
             "reconnecting": _("reconnecting"), "error": _("error"), "off": _("not listening")}
    text = _("Answers from the phone: {state}").format(state=words.get(state, state))
    if phone.get("reason"):
        text += f" — {localized(str(phone['reason']))}"
    actions = ", ".join(str(a) for a in phone.get("actions") or []) or _("none")
    return [text, "  " + _("allowed: {actions}; {n} taken, {m} refused since the host "
                           "started").format(actions=actions, n=phone.get("accepted", 0),
                                             m=phone.get("refused", 0))]


def _ask(ctx: Context, socket: str) -> dict[str, Any] | None:
    from core.hosts.control import NoHostRunning, send_request  # a host runs: worth loading
    from core.notify.service import STATUS_OP

    path = type(ctx.paths.socket_path)(socket) if socket else ctx.paths.socket_path
    try:
        check_socket(ctx.paths, path)  # an unsafe one (UnsafeDirectory): not connected
        reply = send_request(path, {"op": STATUS_OP, "origin": "cli"},
                             timeout=STATUS_TIMEOUT_SECONDS)
    except (NoHostRunning, OSError, ValueError):
        return None
    return None if "error" in reply else reply


def status_lines(channels: list[ChannelHealth], now: datetime) -> list[str]:
    if not channels:
        return [_("Notifications: desktop only (no ntfy or webhook configured).")]
    lines = [_("Notifications:")]
    for h in channels:
        lines.append(f"  {h.channel:<8} {h.target:<32} "
                     + _("from {kind}").format(kind=f"{h.min_kind.value:<16}")
                     + f" {_state_text(h, now)}")
    return lines


def _state_text(h: ChannelHealth, now: datetime) -> str:
    reason = localized(h.reason or "")
    if h.state is ChannelState.FAILING:
        since = short_time(h.failing_since, now) if h.failing_since else "?"
        return _("FAILING since {since}: {reason} ({n} not delivered)").format(
            since=since, reason=reason, n=h.failed)
    if h.state is ChannelState.RETRYING:
        return _("retrying: {reason}").format(reason=reason)
    if h.state is ChannelState.OK and h.last_delivered_at is not None:
        return _("ok, last sent {when} ({n} sent)").format(
            when=short_time(h.last_delivered_at, now), n=h.delivered)
    return word(h.state) + (f" — {reason}" if h.reason else "")
