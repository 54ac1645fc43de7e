"""``secret set NAME`` / ``secret list`` / ``secret delete NAME`` — values only in the OS keyring.

``NAME`` is a pipeline step's secret (an environment variable name) or one of Goalkeeper's own
(``ntfy-token``, ``webhook-secret``: see :data:`core.secrets.APP_SECRETS`).

``set`` reads the value from a prompt (asked twice, not echoed) or, when stdin is not a terminal,
from stdin (one trailing newline removed). Nothing prints a value, ever.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from core.cli.common import EXIT_ERROR, EXIT_OK, EXIT_USAGE, CliError, Context
from core.i18n import _, localized
from core.secrets import SecretStore, SecretStoreError, SecretStoreUnavailable


def register(sub: argparse._SubParsersAction[Any], common: argparse.ArgumentParser) -> None:
    secret = sub.add_parser("secret", help=_("secrets for pipeline steps and notifications "
                                             "(OS keyring only)"))
    ssub = secret.add_subparsers(dest="secret_command", metavar="COMMAND", required=True)
    p = ssub.add_parser("set", parents=[common], help=_("store a secret (prompt or stdin)"))
    p.add_argument("name")
    p.set_defaults(func=cmd_set)
    p = ssub.add_parser("list", parents=[common], help=_("the names of the stored secrets"))
    p.set_defaults(func=cmd_list)
    p = ssub.add_parser("delete", parents=[common], help=_("remove a secret"))
    p.add_argument("name")
    p.set_defaults(func=cmd_delete)


def _fail(exc: SecretStoreError) -> CliError:
    code = EXIT_USAGE if isinstance(exc, SecretStoreUnavailable) else EXIT_ERROR
    return CliError(localized(str(exc)), code)


def _read_value(name: str) -> str:
    if not sys.stdin.isatty():
        value = sys.stdin.read()
        return value[:-1] if value.endswith("\n") else value
    first = getpass.getpass(_("value of {name}: ").format(name=name))
    if getpass.getpass(_("again, to confirm: ")) != first:
        raise CliError(_("the two entries differ; nothing was stored"), EXIT_USAGE)
    return first


def cmd_set(ctx: Context) -> int:
    store = SecretStore()
    try:
        store.backend()  # say there is no keyring before asking for the value
        value = _read_value(ctx.args.name)
        store.put(ctx.args.name, value)
    except SecretStoreError as exc:
        raise _fail(exc) from None
    ctx.emit({"secret": ctx.args.name, "stored": True},
             lambda: _("stored {name} in the keyring ({n} characters)").format(
                 name=ctx.args.name, n=len(value)))
    return EXIT_OK


def cmd_list(ctx: Context) -> int:
    store = SecretStore()
    try:
        names = store.names()
        present = {name: store.get(name) is not None for name in names}
    except SecretStoreError as exc:
        raise _fail(exc) from None
    ctx.emit([{"name": n, "present": p} for n, p in present.items()], lambda: "\n".join(
        f"  {n}" + ("" if p else _("  (listed, but missing from the keyring)"))
        for n, p in present.items()) or _("no secrets stored"))
    return EXIT_OK


def cmd_delete(ctx: Context) -> int:
    try:
        existed = SecretStore().delete(ctx.args.name)
    except SecretStoreError as exc:
        raise _fail(exc) from None
    ctx.emit({"secret": ctx.args.name, "deleted": existed},
             lambda: (_("deleted {name}") if existed else _("no secret {name}")).format(
                 name=ctx.args.name))
    return EXIT_OK if existed else EXIT_ERROR
