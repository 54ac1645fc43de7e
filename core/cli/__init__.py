"""The ``goalkeeper`` command: a thin adapter over the core, like the desktop app.

Read-only commands (``status``, ``history``) read the store directly; commands that change a goal
are sent to the running host over its control socket and go through the same entry points as a
click in the window. Every command takes ``--json``.

Exit codes: 0 done or already in effect · 1 error · 2 usage or configuration error · 3 unknown
goal · 4 refused · 5 no host running · 6 the host is not responding.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from core import __version__, i18n
from core.cli.common import EXIT_USAGE, CliError, make_context, warn
from core.i18n import _
from core.paths import resolve_paths

#: modules that add sub-commands; each has ``register(subparsers, common_parent)``
COMMAND_MODULES = ["goals", "policies", "hosts", "hostlist", "pipelines", "secrets", "notify",
                   "codex_usage", "claude", "desktop", "service", "store"]
#: commands whose module alone is imported when they are run (``codex-usage`` is timed against
#: ccusage, whole process: the other modules' imports are a tenth of its run; ``daemon``'s start
#: is timed to its first gauges by bench/startup_gauges.py)
STANDALONE = {"codex-usage": "codex_usage", "daemon": "hosts"}


def _modules(names: Sequence[str]) -> list[ModuleType]:
    return [importlib.import_module(f"core.cli.{name}") for name in names]


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true",
                        help=_("machine-readable output"))
    parser = argparse.ArgumentParser(
        prog="goalkeeper",
        description=_("Keeps long-running AI coding-agent goals going across quota windows."),
    )
    parser.add_argument("--version", action="version", version=f"goalkeeper {__version__}",
                        help=_("show program's version number and exit"))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    first = next(iter(argv), None) if argv else None
    names = [STANDALONE[first]] if first in STANDALONE else COMMAND_MODULES
    for module in _modules(names):
        module.register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # the language first (the setting, else the system's): help, errors and output use it
    i18n.setup(resolve_paths(os.environ).config_file, os.environ)
    with i18n.argparse_translated():
        return _main(sys.argv[1:] if argv is None else list(argv))


def _main(argv: list[str]) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if args.command is None:
        from core.cli import hosts

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
