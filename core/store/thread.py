"""The store's own thread.

SQLite connections are bound to the thread that made them (and a psycopg connection must not be
shared between threads either), and under qasync ``asyncio.to_thread`` runs on a pool of
QThreads, so the host gives the store one dedicated worker thread: the connection is opened there
and every call is queued to it. Callers ``await store.run(fn)`` where ``fn`` receives the
:class:`~core.store.base.Store`.

Which store is opened is the :class:`~core.store.target.StoreTarget`'s: this machine's SQLite
file — opened through :func:`core.store.guard.open_for_host`; when that finds a problem the
thread holds no writable store, only (where the file can still be read) a read-only one that
:meth:`StoreThread.run` hands out instead: safe mode shows what can be read, and any write
fails — or the shared PostgreSQL store, whose open takes this host's next fencing epoch.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from core.i18n import N_
from core.store.base import Store, StoreUnavailable
from core.store.guard import StoreProblem, open_for_host
from core.store.listen import Deliver, Listener
from core.store.target import StoreTarget, keyring_password, open_shared

T = TypeVar("T")


class StoreThread:
    """Owns one :class:`~core.store.base.Store` (or safe mode's reader) and the one thread that
    may touch it. Attributes: ``problem`` (why the store cannot be written, or None),
    ``target`` (which store), ``host_id`` (the host it writes for, or None: a bare engine)."""

    def __init__(self, path: Path, backups_dir: Path | None = None, fenced: bool = False,
                 target: StoreTarget | None = None, host_id: str | None = None,
                 lease_seconds: float = 30.0) -> None:
        self.path = path
        self.target = target or StoreTarget(path)
        self.host_id = host_id
        #: a host silent this long is offline (``host_stale_seconds``)
        self.lease_seconds = lease_seconds
        #: whether writes check the host epoch (a host under its lease; bare engines in tests
        #: and benchmarks share a file on purpose)
        self.fenced = fenced
        self.backups_dir = backups_dir or path.parent / "backups"
        from concurrent.futures import ThreadPoolExecutor  # a host's, not a command's (issue 24)

        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="goalkeeper-store")
        self._store: Store | None = None
        self._reader: Store | None = None
        self.problem: StoreProblem | None = None
        #: the host epoch this open took (whether or not writes are fenced by it)
        self.opened_epoch: int | None = None
        self._password: str | None = None
        self._closed = False

    @property
    def shared(self) -> bool:
        return self.target.shared

    async def open(self, now: datetime) -> None:
        await self.call(lambda: self._open(now))

    def _open(self, now: datetime) -> None:
        self._close_all()
        if self.target.shared:
            self._open_shared()
            return
        opened = open_for_host(self.path, self.backups_dir, now)
        self._store, self._reader, self.problem = opened.store, opened.reader, opened.problem
        if self._store is not None:
            self.opened_epoch = self._store.epoch
            if not self.fenced:
                self._store.epoch = None
            if self.host_id is not None:
                self._store.host_id = self.host_id
                self._store.adopt_goals()  # one machine's file: every goal in it is ours

    def _open_shared(self) -> None:
        """Connect (migrating under the advisory lock) and take this host's next epoch; a
        store that cannot be reached raises :class:`~core.store.base.StoreUnavailable`."""
        store = open_shared(self.target.url, password=self._keyring_password)
        try:
            store.host_id = self.host_id
            store.lease_seconds = self.lease_seconds
            if self.host_id is not None:
                self.opened_epoch = store.take_epoch(self.host_id)
                store.epoch = self.opened_epoch if self.fenced else None
        except BaseException:
            store.close()
            raise
        self._store = store
        self.problem = None

    def _keyring_password(self) -> str | None:
        self._password = keyring_password()
        return self._password

    def listener(self, deliver: Deliver) -> Listener | None:
        """A listener on the shared store's notifications (None for a one-machine store)."""
        if not self.target.shared:
            return None
        return Listener(self.target.url, deliver, lambda: self._password)

    async def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the store's thread (for work on the files themselves: restore)."""
        import asyncio  # not at the top: ``status`` reads without a loop (issue 24)

        return await asyncio.get_running_loop().run_in_executor(self._executor, fn)

    def _current(self) -> Store:
        store = self._store or self._reader
        if store is None:
            if self.problem is None and self.target.shared and not self._closed:
                # the host started while the shared store was unreachable and opens it later
                raise StoreUnavailable(N_("the shared store is not open yet: it could not be "
                                          "reached, and is tried again"))
            raise RuntimeError(self.problem.message if self.problem else "the store is not open")
        return store

    async def run(self, fn: Callable[[Store], T]) -> T:
        return await self.call(lambda: fn(self._current()))

    def run_blocking(self, fn: Callable[[Store], T]) -> T:
        """The same, from a thread that is not the event loop (tests, benchmarks)."""
        return self._executor.submit(lambda: fn(self._current())).result()

    @property
    def is_open(self) -> bool:
        return self._store is not None or self._reader is not None

    def release(self) -> None:
        """Close the files (on the store's thread: call it through :meth:`call`), e.g. before
        a restore swaps them."""
        self._close_all()

    def _close_all(self) -> None:
        for store in (self._store, self._reader):
            if store is not None:
                store.close()
        self._store = self._reader = None

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await self.call(self._close_all)
        finally:
            self._executor.shutdown(wait=True)
