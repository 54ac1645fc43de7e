"""``store`` (its state and backups) and ``store restore`` — the way out of safe mode.

A host that cannot use its database runs in *safe mode* and says why. ``store restore`` puts the
newest verified backup in its place (or ``--backup FILE``, or with ``--empty`` nothing: an empty
store); the damaged files are moved aside to ``goalkeeper.db.damaged-<UTC stamp>``, never deleted.
It goes through the running host, which then starts as usual; with no host running it takes the
host lease itself for the moment it needs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from core.cli.common import EXIT_ERROR, EXIT_OK, EXIT_USAGE, CliError, Context
from core.clock import SystemClock, iso
from core.hosts.lease import HostAlreadyRunning, HostLease, host_running
from core.i18n import _, localized
from core.i18n.words import word
from core.store.backup import list_backups, restore
from core.store.guard import open_for_host, read_marker, write_marker


def register(sub: argparse._SubParsersAction[Any], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("store", parents=[common],
                       help=_("the database's state and backups; `store restore` leaves safe "
                              "mode"))
    ssub = p.add_subparsers(dest="store_command", metavar="COMMAND")
    p.set_defaults(func=cmd_store)
    r = ssub.add_parser("restore", parents=[common],
                        help=_("put a verified backup (or an empty store) in place of a damaged "
                               "one"))
    r.add_argument("--backup", help=_("this backup file instead of the newest one"))
    r.add_argument("--empty", action="store_true", help=_("start with an empty store"))
    r.set_defaults(func=cmd_restore)
    register_migrate(ssub, common)


def backups_dir(ctx: Context) -> Path:
    return ctx.paths.data_dir / "backups"


def cmd_store(ctx: Context) -> int:
    if ctx.target.shared:
        return _shared_store(ctx)
    view = ctx.host_view()
    backups = list_backups(backups_dir(ctx))
    safe = view.health.safe_mode if view.health else None
    data = {"database": str(ctx.paths.database), "host": view.state, "safe_mode": safe,
            "backups": [{"path": str(b.path), "taken_at": iso(b.taken_at), "size": b.size}
                        for b in backups]}

    def human() -> str:
        lines = [_("database: {file}").format(file=ctx.paths.database),
                 _("host: {state}").format(state=word(view.state))]
        if safe:
            lines.append(_("safe mode: {reason}").format(reason=localized(safe)))
        lines.append(_("backups (verified when taken, newest first):") if backups
                     else _("no backups yet (the host takes one a day)"))
        lines.extend("  " + _("{file}  {taken}  {size} bytes").format(
            file=b.path, taken=iso(b.taken_at), size=b.size) for b in backups)
        return "\n".join(lines)

    ctx.emit(data, human)
    return EXIT_OK


def _shared_store(ctx: Context) -> int:
    with ctx.reader() as store:
        version = store.schema_version if store is not None else 0
        hosts = len(store.list_hosts()) if store is not None else 0
    data = {"store": ctx.target.describe(), "shared": True, "schema_version": version,
            "hosts": hosts, "backups": []}
    ctx.emit(data, lambda: _("{store} (schema {version}, {hosts} hosts registered); back it up "
                             "with PostgreSQL's own tools (pg_dump)").format(
                                 store=localized(ctx.target.describe()), version=version,
                                 hosts=hosts))
    return EXIT_OK


def cmd_restore(ctx: Context) -> int:
    if ctx.target.shared:
        raise CliError(_("{store} is PostgreSQL's to restore (pg_restore from your pg_dump "
                         "backups); `store restore` is for this machine's file").format(
                             store=localized(ctx.target.describe())), EXIT_USAGE)
    if ctx.args.backup and ctx.args.empty:
        raise CliError(_("--backup and --empty exclude each other"), EXIT_USAGE)
    backup = str(Path(ctx.args.backup).expanduser().absolute()) if ctx.args.backup else None
    if host_running(ctx.paths) is not None:
        reply = ctx.ask_host({"op": "store-restore", "backup": backup,
                              "empty": bool(ctx.args.empty)})
    else:
        reply = _restore_offline(ctx, backup)
    ctx.emit(reply, lambda: _restored_text(reply))
    return EXIT_OK if reply.get("ok") else EXIT_ERROR


def _restore_offline(ctx: Context, backup: str | None) -> dict[str, Any]:
    now = SystemClock().now()
    lease = HostLease(ctx.paths, "store restore", now, ctx.settings.host_stale_seconds)
    try:
        lease.acquire()
    except HostAlreadyRunning as exc:
        raise CliError(str(exc)) from None
    try:
        opened = open_for_host(ctx.paths.database, backups_dir(ctx), now)
        for store in (opened.store, opened.reader):
            if store is not None:
                store.close()
        if opened.problem is None:
            raise CliError(_("the store is healthy: there is nothing to restore"), EXIT_ERROR)
        chosen = Path(backup) if backup else None
        if chosen is None and not ctx.args.empty:
            newest = list_backups(backups_dir(ctx))
            if not newest:
                raise CliError(_("there is no backup to restore; `--empty` starts an empty "
                                 "store (the damaged files are kept aside)"))
            chosen = newest[0].path
        floor = read_marker(ctx.paths.database)
        aside = restore(ctx.paths.database, chosen, now)
        write_marker(ctx.paths.database, 0, now, floor=floor)
        return {"ok": True, "moved_aside": str(aside) if aside else None,
                "backup": str(chosen) if chosen else None, "problem": opened.problem.message}
    finally:
        lease.release()


def _restored_text(reply: dict[str, Any]) -> str:
    if not reply.get("ok"):
        return _("not restored: {error}").format(error=localized(str(reply.get("error"))))
    source = reply.get("backup") or _("nothing (an empty store)")
    lines = [_("restored from {source}").format(source=source)]
    if reply.get("moved_aside"):
        lines.append("  " + _("the previous files are in {dir}").format(dir=reply["moved_aside"]))
    if reply.get("safe_mode"):
        lines.append("  " + _("still in safe mode: {reason}").format(
            reason=localized(str(reply["safe_mode"]))))
    return "\n".join(lines)


def register_migrate(ssub: argparse._SubParsersAction[Any],
                     common: argparse.ArgumentParser) -> None:
    m = ssub.add_parser("migrate", parents=[common],
                        help=_("copy this machine's store into a shared one (PostgreSQL)"))
    m.add_argument("--to", required=True, metavar="URL",
                   help=_("the shared store, postgresql://USER@HOST/DATABASE (no password in "
                          "it)"))
    m.set_defaults(func=cmd_migrate)


def cmd_migrate(ctx: Context) -> int:
    """Copy goals, history and readings — verified (counts, checksum) in one transaction; the
    local file is opened read-only and left as it is."""
    from core.cli.migrate import migrate_to

    reply = migrate_to(ctx, str(ctx.args.to))
    ctx.emit(reply, lambda: _migrated_text(reply))
    return EXIT_OK


def _migrated_text(reply: dict[str, Any]) -> str:
    copied = reply["copied"]
    lines = [_("copied into {store}: {goals} goals, {history} history rows, {readings} latest "
               "readings, {series} chart points").format(
                   store=reply["to"], goals=copied["goals"], history=copied["history"],
                   readings=copied["readings"], series=copied["series"]),
             "  " + _("verified: the same counts and checksum {checksum}… on both sides").format(
                 checksum=copied["checksum"][:16]),
             "  " + _("{file} was not changed").format(file=reply["database"])]
    if reply.get("readings_kept"):
        lines.append("  " + _("{count} readings were not copied: the shared store already had "
                              "fresher ones of those windows").format(
                                  count=reply["readings_kept"]))
    lines.append("  " + _("next: set store_url = \"{url}\" in {file} (or GOALKEEPER_STORE_URL) "
                          "and restart the host").format(url=reply["to"], file=reply["config"]))
    return "\n".join(lines)
