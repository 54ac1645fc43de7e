"""``desktop install`` / ``desktop uninstall``: the app in the desktop's menu (XDG, per user)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from core.cli.common import EXIT_ERROR, EXIT_OK, EXIT_USAGE, CliError, Context, warn
from core.i18n import _, localized
from core.i18n.textfmt import pad
from core.i18n.words import word
from core.integration import desktop
from core.integration.command import goalkeeper_argv
from core.integration.files import FileChange
from core.integration.xdg import NoHomeDirectory
from core.settings import SettingsError, load_settings, save_settings


def register(sub: argparse._SubParsersAction[Any], common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser("desktop", help=_("add the app to the desktop's menu (Linux)"))
    actions = parser.add_subparsers(dest="desktop_action", metavar="ACTION", required=True)
    p = actions.add_parser(
        "install", parents=[common],
        help=_("write the menu entry, icons, AppStream metainfo and (with start_at_login) the "
               "autostart entry under ~/.local/share and ~/.config"))
    choice = p.add_mutually_exclusive_group()
    choice.add_argument("--autostart", dest="autostart", action="store_true", default=None,
                        help=_("also start the app at login (sets start_at_login in "
                               "config.toml)"))
    choice.add_argument("--no-autostart", dest="autostart", action="store_false",
                        help=_("do not start it at login (clears start_at_login)"))
    p.set_defaults(func=cmd_install)
    p = actions.add_parser("uninstall", parents=[common],
                           help=_("remove what `desktop install` wrote (only that)"))
    p.set_defaults(func=cmd_uninstall)


def _start_at_login(ctx: Context, choice: bool | None) -> bool:
    """The effective ``start_at_login``, after saving ``choice`` to config.toml (if given)."""
    config = ctx.paths.config_file
    try:
        if choice is not None:
            in_file = load_settings(config, {})
            if in_file.start_at_login != choice:
                save_settings(config, in_file.model_copy(update={"start_at_login": choice}))
        effective = load_settings(config).start_at_login
    except SettingsError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    except OSError as exc:
        raise CliError(_("could not write {file}: {error}").format(
            file=config, error=exc.strerror or exc)) from None
    if choice is not None and effective != choice:
        warn(_("GOALKEEPER_START_AT_LOGIN overrides config.toml: start_at_login is {value}")
             .format(value=str(effective).lower()))
    return effective


def cmd_install(ctx: Context) -> int:
    argv = goalkeeper_argv()
    enabled = _start_at_login(ctx, ctx.args.autostart)
    report = _run(lambda: desktop.install(os.environ, argv, enabled))
    hint = "" if enabled else _("  (`goalkeeper desktop install --autostart` starts it at "
                                "login)")
    ctx.emit(_json(report, argv),
             lambda: _("Desktop integration for `{command} gui`:").format(command=" ".join(argv))
             + "\n" + _lines(report.changes) + hint)
    return _finish(report)


def cmd_uninstall(ctx: Context) -> int:
    report = _run(lambda: desktop.uninstall(os.environ))
    ctx.emit(_json(report, None), lambda: _("Desktop integration removed:") + "\n"
             + _lines(report.changes))
    return _finish(report)


def _run(action: Callable[[], desktop.DesktopReport]) -> desktop.DesktopReport:
    try:
        result = action()
    except (desktop.DesktopUnsupported, NoHomeDirectory) as exc:
        raise CliError(localized(str(exc)), EXIT_USAGE) from None
    return result


def _finish(report: desktop.DesktopReport) -> int:
    if report.problem:
        warn(localized(report.problem))
        return EXIT_ERROR
    return EXIT_OK


def _json(report: desktop.DesktopReport, argv: list[str] | None) -> dict[str, Any]:
    return {"command": argv, "changes": [c.as_json() for c in report.changes],
            "problem": report.problem}


def _lines(changes: tuple[FileChange, ...]) -> str:
    rows = []
    for change in changes:
        note = f"  ({localized(change.note)})" if change.note else ""
        rows.append(f"  {pad(word(change.change), 9)} {pad(localized(change.what), 18)} "
                    f"{change.path}{note}")
    return "\n".join(rows)
