"""Which store a host or a command uses, and opening it: ``store_url`` decides.

Unset, it is this machine's SQLite file (``goalkeeper.db`` in the data directory). A
``postgresql://`` URL is the shared store. Its password never sits in ``config.toml`` (the
setting refuses a URL that carries one): libpq finds it in ``~/.pgpass`` (or ``PGPASSFILE``)
or in a service file (``postgresql:///?service=NAME``, ``~/.pg_service.conf`` or
``PGSERVICEFILE``), and otherwise — when the server asks for a password — Goalkeeper reads
``store-password`` from the OS keyring (``goalkeeper secret set store-password``). TLS is libpq's
too: ``?sslmode=verify-full&sslrootcert=…`` works as libpq documents it.
"""

from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from core.i18n import N_
from core.store.base import Store, StoreError
from core.store.sqlite import open_read_only, open_store

log = logging.getLogger(__name__)

PASSWORD_SECRET = "store-password"
KEYRING_TIMEOUT_SECONDS = 10.0
PasswordSource = Callable[[], str | None]


@dataclass(frozen=True)
class StoreTarget:
    """Where the store is: ``url`` (the shared store) or, when it is empty, ``database``."""

    database: Path
    url: str = ""

    @property
    def shared(self) -> bool:
        return bool(self.url)

    def describe(self) -> str:
        if not self.shared:
            return N_("the database {file}").format(file=self.database)
        from core.store.postgres import where_of

        return N_("the shared store {where}").format(where=where_of(self.url))


def keyring_password() -> str | None:
    """``store-password`` from the OS keyring, or None (no keyring, no entry, no answer in
    time): libpq's own sources (``.pgpass``, a service file) come first anyway."""
    from core.redact import remember
    from core.secrets import SecretStore, SecretStoreError

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        password = pool.submit(SecretStore().get, PASSWORD_SECRET).result(
            KEYRING_TIMEOUT_SECONDS)
        if password:
            remember([password])  # masked in every log line and file, should it reach one
        return password
    except (SecretStoreError, concurrent.futures.TimeoutError) as exc:
        log.info("no store password from the keyring: %s", exc)
        return None
    finally:
        pool.shutdown(wait=False)


def open_shared(url: str, *, read_only: bool = False, migrate: bool = True,
                password: PasswordSource = keyring_password) -> Store:
    """The shared store; the keyring is asked only when the server wants a password that
    libpq did not find itself."""
    from core.store.postgres import PostgresStore

    return PostgresStore(url, read_only=read_only, migrate=migrate, password=password)


def open_reader(target: StoreTarget, plain_reads: bool = False) -> Store:
    """For read-only commands: never creates, converts or migrates anything (:class:`NoData`
    when nothing is stored yet). ``plain_reads``: goals and readings as plain records
    (this machine's file; :attr:`core.store.sqlite.SqliteStore.plain_reads`)."""
    if target.shared:
        return open_shared(target.url, read_only=True)
    return open_read_only(target.database, plain_reads)


def open_writer(target: StoreTarget, now: datetime, host_id: str | None) -> Store:
    """For the few commands that write while no host runs (``remove``, Claude ``track``): the
    goals they change must be this host's."""
    if not target.shared:  # one machine's file: its goals are all this machine's
        return open_store(target.database, now)[0]
    store = open_shared(target.url)
    store.host_id = host_id
    return store


__all__ = ["PASSWORD_SECRET", "StoreError", "StoreTarget", "keyring_password", "open_reader",
           "open_shared", "open_writer"]
