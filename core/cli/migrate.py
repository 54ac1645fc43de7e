"""``store migrate --to URL``: checks, then the verified copy of :mod:`core.store.migrate`."""

from __future__ import annotations

from typing import Any

from core.cli.common import EXIT_ERROR, EXIT_USAGE, CliError, Context
from core.hosts.lease import host_running
from core.i18n import _, localized
from core.identity import account_of, check_store_url
from core.store import NoData, StoreError
from core.store.migrate import Rows, copy_into, read_local
from core.store.postgres import PostgresStore, where_of
from core.store.sqlite import SqliteStore, open_read_only
from core.store.target import open_shared


def migrate_to(ctx: Context, url: str) -> dict[str, Any]:
    try:
        url = check_store_url(url)
    except ValueError as exc:
        raise CliError(_("--to: {error}").format(error=localized(str(exc))), EXIT_USAGE) from None
    if not url:
        raise CliError(_("--to needs the shared store's URL (postgresql://…)"), EXIT_USAGE)
    if host_running(ctx.paths) is not None:
        raise CliError(_("a host runs on this data directory: stop it first (its goals keep "
                         "changing while they are copied)"), EXIT_ERROR)
    source = _local(ctx)
    try:
        target = open_shared(url)
    except StoreError as exc:
        source.close()
        raise CliError(localized(str(exc))) from None
    try:
        assert isinstance(target, PostgresStore)
        rows = _rows(ctx, source, target)
        copied, kept = copy_into(target, rows)
    except StoreError as exc:
        raise CliError(localized(str(exc))) from None
    finally:
        target.close()
    return {"to": url, "where": where_of(url), "database": str(ctx.paths.database),
            "config": str(ctx.paths.config_file), "host": ctx.host_id,
            "copied": copied.to_json(), "readings_kept": kept}


def _local(ctx: Context) -> SqliteStore:
    try:
        return open_read_only(ctx.paths.database)
    except NoData:
        raise CliError(_("there is nothing to copy: no data yet in {file}").format(
            file=ctx.paths.database)) from None
    except StoreError as exc:
        raise CliError(localized(str(exc))) from None


def _rows(ctx: Context, source: SqliteStore, target: PostgresStore) -> Rows:
    """This machine's rows, its readings filed under the accounts its host will use: the
    ones a previous start recorded in its ``hosts`` row, else the settings' rule."""
    try:
        record = target.get_host(ctx.host_id)
        known = record.accounts if record is not None else None
        return read_local(source, ctx.host_id,
                          lambda provider: account_of(provider, ctx.settings, ctx.host_id, known))
    finally:
        source.close()
