"""``goalkeeper queue codex|claude``: start new work right after a window's next reset.

The request is checked here first (the directory exists, the text is not empty, the window is
one of the provider's: exit 2 saying which), then sent to the running host as the
:class:`~core.commands.Queue` command — the same door as the window's Goal → Start at the
reset…; the host's answer says when the work will start.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from core.cli.common import EXIT_USAGE, CliError, Context
from core.i18n import _, localized

#: the default window each provider's queued work waits for (core.goals.queued.QUEUE_PROVIDERS)
DEFAULT_WINDOW = {"codex": "codex:5h", "claude": "claude:5h"}


def register(sub: argparse._SubParsersAction[Any], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("queue", parents=[common],
                       help=_("start new work right after a window's next reset"))
    which = p.add_subparsers(dest="provider", metavar="PROVIDER", required=True)
    for name, text, what in (
            ("codex", _("a Codex goal, on a new thread or --thread"), _("the goal's objective")),
            ("claude", _("a Claude prompt, as a new session"), _("the prompt"))):
        q = which.add_parser(name, parents=[common], help=text)
        q.add_argument("text", metavar="TEXT", help=what)
        q.add_argument("--cwd", default=None,
                       help=_("the working directory (default: the current one)"))
        q.add_argument("--window", default=DEFAULT_WINDOW[name],
                       help=_("the window whose next reset it waits for (default: {window})")
                       .format(window=DEFAULT_WINDOW[name]))
        if name == "codex":
            q.add_argument("--thread", default="",
                           help=_("an existing Codex thread to set the goal on"))
        q.set_defaults(func=cmd_queue)


def cmd_queue(ctx: Context) -> int:
    from core.cli.actions import answer
    from core.commands import ActionResult, Queue
    from core.goals.queued import queue_problem
    from core.policies.reserve_table import known_windows

    args = ctx.args
    cwd = os.path.abspath(os.path.expanduser(args.cwd or os.getcwd()))
    command = Queue("", provider=args.provider, cwd=cwd, text=args.text.strip(),
                    window=args.window, thread=getattr(args, "thread", "") or "")
    if problem := queue_problem(command.provider, command.cwd, command.text, command.window,
                                known_windows()):
        raise CliError(localized(problem), EXIT_USAGE)
    return answer(ctx, ActionResult.from_json(ctx.ask_host(command.to_json())))
