"""The ``goalkeeper`` command: a thin adapter over the core, like the desktop app.

Read-only commands (``status``, ``history``) read the store directly; commands that change a goal
are sent to the running host over its control socket and go through the same entry points as a
click in the window. Every command takes ``--json``.

Exit codes: 0 done or already in effect · 1 error · 2 usage or configuration error · 3 unknown
goal · 4 refused · 5 no host running · 6 the host is not responding.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core import __version__

if TYPE_CHECKING:
    import argparse

    from core.clock import Clock

#: every command, in the order ``--help`` lists them, under the module that adds it (with
#: ``register(subparsers, common_parent)``) and with its one-line help. Only the module of the
#: command being run is imported: ``--help``, an unknown command and the other commands'
#: entries in the list are drawn from this table, so that a command that prints a line does
#: not pay for the store, the engine and pydantic's models of every other (issue 24). The help
#: is each module's own ``_("…")`` (that is where the catalogue finds it), shown translated;
#: ``tests/test_cli_startup.py`` holds the two equal.
VERBS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("setup", (("setup", "what Goalkeeper found here, and the choices that put it to work"),)),
    ("goals", (("status", "the host, goals and quota windows"),
               ("history", "the resume history, newest first"),
               ("resume", "resume a paused goal now"),
               ("pause", "pause a goal (it is never auto-resumed)"),
               ("cancel", "cancel a goal for good"),
               ("start", "start an idle goal"),
               ("auto-resume", "turn auto-resume on or off"))),
    ("queue", (("queue", "start new work right after a window's next reset"),)),
    ("policies", (("goal", "a goal's own resume policy"),)),
    ("hosts", (("daemon", "run the headless host (logs to stdout; stop with Ctrl-C)"),
               ("demo", "watch a pause for quota and an automatic resume in about a minute"),
               ("gui", "open the desktop app"))),
    ("hostlist", (("hosts", "the hosts sharing the store: state, last heartbeat, goals"),)),
    ("pipelines", (("add", "add (or update) a pipeline goal file"),
                   ("approve", "approve a goal file found in the data directory that was not "
                               "added, or changed since"),
                   ("remove", "remove a pipeline goal (runs are kept)"),
                   ("run", "run a pipeline goal now (through the host)"),
                   ("runs", "a pipeline goal's runs, newest first"),
                   ("quota", "user-defined quotas (config.toml [quotas.*])"))),
    ("secrets", (("secret", "secrets for pipeline steps and notifications "
                            "(OS keyring only)"),)),
    ("notify", (("notify", "notifications through ntfy and webhooks"),)),
    ("codex_usage", (("codex-usage", "Codex tokens per day and model, "
                                     "from the session files"),)),
    ("claude", (("hook", "commands agents' hooks run"),
                ("hooks", "install or remove agent hooks"),
                ("track", "keep a Claude session going"),
                ("untrack", "stop watching a Claude session"))),
    ("desktop", (("desktop", "add the app to the desktop's menu (Linux)"),)),
    ("service", (("service", "run the daemon as a user service "
                             "(systemd --user / launchd)"),)),
    ("store", (("store", "the database's state and backups; `store restore` leaves "
                          "safe mode"),)),
)
#: the commands whose module starts work before anything else loads — ``early(argv)``: None, or
#: a handle the command finds as ``args.early`` and :func:`main` closes (``close()``) whatever
#: happens (codex-usage's run: in a forked copy of this process, it reads while this one loads)
EARLY = ("codex-usage",)
#: the modules that add sub-commands, in ``--help``'s order
COMMAND_MODULES = [module for module, _verbs in VERBS]
#: which module adds each command
MODULE_OF = {verb: module for module, verbs in VERBS for verb, _help in verbs}


def command_of(argv: Sequence[str]) -> str | None:
    """The command named on the line: its first word that is not an option (the top-level
    parser takes no option with a value)."""
    return next((word for word in argv if not word.startswith("-")), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser, with the full sub-parser of the command ``argv`` names (if any) and an entry
    for every other command — enough for ``--help`` and for an unknown command's error."""
    import argparse

    from core.i18n import _

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
    wanted = MODULE_OF.get(command_of(argv or ()) or "")
    for module, verbs in VERBS:
        if module == wanted:
            importlib.import_module(f"core.cli.{module}").register(sub, common)
        else:
            for verb, text in verbs:
                # i18n: ignore (the msgid is the module's own literal)
                sub.add_parser(verb, help=_(text))
    return parser


def script() -> int:
    """The ``goalkeeper`` script (and ``python -m core``): :func:`main`, its process ending
    right after."""
    return main(leaving=True)


def main(argv: Sequence[str] | None = None, clock: Clock | None = None, *,
         leaving: bool = False) -> int:
    """Run the command ``argv`` names (``sys.argv`` by default); ``clock``: the time the
    read-only commands show (a test's fixed clock; the system's by default). ``leaving``: the
    process ends once this returns — after a command that only reads, the interpreter's last
    garbage collection over every object it loaded is then skipped (``gc.freeze``: 20–40 ms of
    ``status`` or ``codex-usage``; such a command has nothing left to finalize — what it opened
    is closed — and the memory goes back with the process)."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["--version"]:  # what scripts ask most: nothing to translate, nothing to load
        print(f"goalkeeper {__version__}")  # i18n: ignore (a name and a version)
        return 0
    early = _early(args)
    try:
        from core import i18n
        from core.paths import resolve_paths

        # the language first (the setting, else the system's): help, errors and output use it
        i18n.setup(resolve_paths(os.environ).config_file, os.environ)
        with i18n.argparse_translated():
            return _main(args, clock, early, leaving)
    except KeyboardInterrupt:  # Ctrl-C before the command runs (while the CLI loads)
        return 130
    finally:
        if early is not None:
            early.close()


def _early(argv: list[str]) -> Any:
    """The work the command ``argv`` names starts first (:data:`EARLY`), or None."""
    verb = command_of(argv)
    if verb not in EARLY:
        return None
    return importlib.import_module(f"core.cli.{MODULE_OF[verb]}").early(argv)


def _main(argv: list[str], clock: Clock | None, early: Any, leaving: bool) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    args.early = early
    if args.command is None:
        from core.cli import hosts

        frontend = hosts.find_frontend()
        if frontend is not None:
            return frontend([])
        parser.print_help()
        return 2  # EXIT_USAGE (core.cli.common), without loading what the commands share
    from core.cli.common import CliError, make_context, warn

    ctx = make_context(args, clock)
    try:
        code: int = args.func(ctx)
        if leaving and getattr(args, "reads_settings_only", False):
            import gc

            gc.freeze()
        return code
    except CliError as exc:
        warn(str(exc))
        return exc.code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(script())
