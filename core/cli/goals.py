"""``status``, ``history``, ``resume``, ``pause``, ``cancel``, ``auto-resume``, ``start``.

``status`` shows the goals, the quota windows and the notification channels (see
:mod:`core.cli.notify`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from core.cli.common import (
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_UNKNOWN_GOAL,
    EXIT_USAGE,
    CliError,
    Context,
)
from core.cli.render import no_data_text
from core.cli.status import cmd_status
from core.clock import iso
from core.i18n import _, localized
from core.i18n.textfmt import local_time
from core.i18n.words import origin_word, word
from core.limits import MAX_PAGE

if TYPE_CHECKING:
    from core.models import HistoryRow


def register(sub: argparse._SubParsersAction[Any], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("status", parents=[common], help=_("the host, goals and quota windows"))
    # status and history only read the settings: from their snapshot (core.settings.snapshot)
    p.set_defaults(func=cmd_status, reads_settings_only=True)
    p = sub.add_parser("history", parents=[common], help=_("the resume history, newest first"))
    p.add_argument("goal", nargs="?", help=_("only this goal"))
    p.add_argument("--limit", type=int, default=50,
                   help=_("at most N rows (default 50, at most {most}: page with --offset)"
                          ).format(most=MAX_PAGE))
    p.add_argument("--offset", type=int, default=0, help=_("skip the N newest rows (paging)"))
    p.set_defaults(func=cmd_history, reads_settings_only=True)
    for name, text in (("resume", _("resume a paused goal now")),
                       ("pause", _("pause a goal (it is never auto-resumed)")),
                       ("cancel", _("cancel a goal for good")),
                       ("start", _("start an idle goal"))):
        p = sub.add_parser(name, parents=[common], help=text)
        p.add_argument("goal")
        p.set_defaults(func=cmd_action, op=name)
    p = sub.add_parser("auto-resume", parents=[common], help=_("turn auto-resume on or off"))
    p.add_argument("goal")
    p.add_argument("switch", choices=["on", "off"])
    p.set_defaults(func=cmd_auto_resume)


# -- read-only ---------------------------------------------------------------------------------


def _no_data(ctx: Context, data: Any) -> int:
    if ctx.json:
        ctx.emit(data, lambda: "")
    else:
        print(no_data_text(ctx))
    return EXIT_OK


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
        "host": row.host,
    }


def page_args(ctx: Context) -> tuple[int, int]:
    """``--limit`` and ``--offset``, checked: a page is at most :data:`MAX_PAGE` rows."""
    limit, offset = ctx.args.limit, getattr(ctx.args, "offset", 0)
    if not 1 <= limit <= MAX_PAGE:
        raise CliError(_("--limit must be between 1 and {most} (a page); page through more "
                         "with --offset").format(most=MAX_PAGE), EXIT_USAGE)
    if offset < 0:
        raise CliError(_("--offset must not be negative"), EXIT_USAGE)
    return limit, offset


def cmd_history(ctx: Context) -> int:
    limit, offset = page_args(ctx)
    with ctx.reader() as store:
        if store is None:
            if ctx.args.goal:
                raise CliError(_("unknown goal {goal!r} ({why})").format(
                    goal=ctx.args.goal, why=no_data_text(ctx)), EXIT_UNKNOWN_GOAL)
            return _no_data(ctx, [])
        if ctx.args.goal and store.get_goal(ctx.args.goal) is None and not store.count_history(
                ctx.args.goal):
            raise CliError(_("unknown goal {goal!r}").format(goal=ctx.args.goal),
                           EXIT_UNKNOWN_GOAL)
        rows = store.history(ctx.args.goal, limit, offset)
        more = store.count_history(ctx.args.goal) - offset - len(rows)
    lines = [_history_line(r) for r in rows]
    if more > 0:
        lines.append(_("… {count} older rows (--offset {offset})").format(
            count=more, offset=offset + len(rows)))
    ctx.emit([history_json(r) for r in rows], lambda: "\n".join(lines))
    return EXIT_OK


def _history_line(row: HistoryRow) -> str:
    parts = [local_time(row.at), row.goal or "-", row.event]
    if row.trigger:
        parts.append(f"[{word(row.trigger)}/{origin_word(row.origin)}]")
    if row.outcome:
        parts.append(word(row.outcome))
    if row.reason:
        parts.append(f"— {localized(row.reason)}")
    return "  ".join(parts)


# -- actions through the host ------------------------------------------------------------------
# (the commands and the host's answers are loaded by the actions only: ``status`` and ``history``
# read, and start faster without them — issue 24)


def cmd_action(ctx: Context) -> int:
    from core.cli.actions import run_action
    from core.commands import COMMANDS

    return run_action(ctx, COMMANDS[ctx.args.op](goal=ctx.args.goal))


def cmd_auto_resume(ctx: Context) -> int:
    from core.cli.actions import run_action
    from core.commands import SetAutoResume

    return run_action(ctx, SetAutoResume(ctx.args.goal, ctx.args.switch == "on"))


__all__ = ["EXIT_REFUSED", "register"]
