"""``service install`` / ``uninstall`` / ``status``: ``goalkeeper daemon`` as a user service
(systemd on Linux, launchd on macOS)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from core.cli.common import EXIT_ERROR, EXIT_OK, EXIT_USAGE, CliError, Context, warn
from core.hosts.lease import host_running
from core.i18n import N_, _, localized
from core.i18n.words import word
from core.integration.command import goalkeeper_argv
from core.integration.service import ServiceUnsupported, service_manager
from core.integration.unit import ServiceManager, ServiceReport, ServiceStatus
from core.integration.xdg import NoHomeDirectory


def register(sub: argparse._SubParsersAction[Any], common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser("service", help=_("run the daemon as a user service "
                                              "(systemd --user / launchd)"))
    actions = parser.add_subparsers(dest="service_action", metavar="ACTION", required=True)
    for action, text, func in (
            ("install", _("write the systemd user unit (Linux) or launchd agent (macOS)"),
             cmd_install),
            ("uninstall", _("stop and remove the service (only one Goalkeeper wrote)"),
             cmd_uninstall),
            ("status", _("the service's file, whether it is enabled and running, and the host"),
             cmd_status)):
        p = actions.add_parser(action, parents=[common], help=text)
        p.set_defaults(func=func)


def _manager(ctx: Context) -> ServiceManager:
    try:
        return service_manager(os.environ, goalkeeper_argv(), log_dir=ctx.paths.log_dir)
    except (ServiceUnsupported, NoHomeDirectory) as exc:
        raise CliError(localized(str(exc)), EXIT_USAGE) from None


def _report(ctx: Context, act: Callable[[ServiceManager], ServiceReport], title: str) -> int:
    report = act(_manager(ctx))
    ctx.emit(_report_json(report), lambda: _report_text(report, title))
    if report.problem:
        warn(localized(report.problem))
        return EXIT_ERROR
    return EXIT_OK


def cmd_install(ctx: Context) -> int:
    return _report(ctx, lambda m: m.install(), N_("Service installed"))


def cmd_uninstall(ctx: Context) -> int:
    return _report(ctx, lambda m: m.uninstall(), N_("Service removed"))


def cmd_status(ctx: Context) -> int:
    status = _manager(ctx).status()
    host = host_running(ctx.paths)
    data = _status_json(status)
    data["host"] = None if host is None else {"pid": host.pid, "kind": host.kind,
                                              "since": host.since}
    ctx.emit(data, lambda: _status_text(status, host.describe() if host else None))
    return EXIT_OK


def _report_json(report: ServiceReport) -> dict[str, Any]:
    return {"manager": report.manager, "file": report.file.as_json(),
            "notes": list(report.notes), "next_steps": list(report.next_steps),
            "problem": report.problem}


def _report_text(report: ServiceReport, title: str) -> str:
    change = report.file
    lines = [f"{_(title)} ({report.manager}): {change.path} {word(change.change)}"
             + (f" ({localized(change.note)})" if change.note else "")]
    lines += ["  " + _("note: {note}").format(note=localized(note)) for note in report.notes]
    if report.next_steps:
        lines.append(_("Next:"))
        lines += [f"  {localized(step)}" for step in report.next_steps]
    return "\n".join(lines)


def _status_json(status: ServiceStatus) -> dict[str, Any]:
    return {"manager": status.manager, "path": str(status.path),
            "installed": status.installed, "ours": status.ours, "current": status.current,
            "enabled": status.enabled, "active": status.active, "notes": list(status.notes)}


def _status_text(status: ServiceStatus, host: str | None) -> str:
    if not status.installed:
        installed = _("not installed (`goalkeeper service install` writes it)")
    elif not status.ours:
        installed = _("a file Goalkeeper did not write")
    elif not status.current:
        installed = _("installed, but not what this installation would write now "
                      "(`goalkeeper service install` updates it)")
    else:
        installed = _("installed")
    lines = [f"{status.manager}: {status.path}: {installed}",
             "  " + _("enabled: {enabled}    active: {active}").format(
                 enabled=status.enabled or "?", active=status.active or "?")]
    lines += ["  " + _("note: {note}").format(note=localized(note)) for note in status.notes]
    lines.append("  " + _("host: {host}").format(
        host=host or _("none running for this data directory")))
    return "\n".join(lines)
