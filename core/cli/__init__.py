"""The ``goalkeeper`` command: a thin adapter over the core, like the desktop app.

Read-only commands (``status``, ``history``) read the store directly; commands that change a goal
are sent to the running host over its control socket and go through the same entry points as a
click in the window. Every command takes ``--json``.

Exit codes: 0 done or already in effect · 1 error · 2 usage or configuration error · 3 unknown
goal · 4 refused · 5 no host running.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from core import __version__
from core.cli import (
    claude,
    codex_usage,
    desktop,
    goals,
    hosts,
    pipelines,
    policies,
    secrets,
    service,
)
from core.cli.common import EXIT_USAGE, CliError, make_context, warn

#: modules that add sub-commands; each has ``register(subparsers, common_parent)``
COMMAND_MODULES = [goals, policies, hosts, pipelines, secrets, codex_usage, claude, desktop,
                   service]


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="machine-readable output")
    parser = argparse.ArgumentParser(
        prog="goalkeeper",
        description="Keeps long-running AI coding-agent goals going across quota windows.",
    )
    parser.add_argument("--version", action="version", version=f"goalkeeper {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        frontend = hosts.find_frontend()
        if frontend is not None:
            return frontend([])
        parser.print_help()
        return EXIT_USAGE
    ctx = make_context(args)
    try:
        code: int = args.func(ctx)
        return code
    except CliError as exc:
        warn(str(exc))
        return exc.code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
