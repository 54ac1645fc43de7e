"""The store's own thread.

SQLite connections are bound to the thread that made them, and under qasync ``asyncio.to_thread``
runs on a pool of QThreads, so the host gives the store one dedicated worker thread: the
connection is opened there and every call is queued to it. Callers ``await store.run(fn)`` where
``fn`` receives the :class:`~core.store.sqlite.SqliteStore`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from core.store.sqlite import SqliteStore, open_store

T = TypeVar("T")


class StoreThread:
    """Owns one :class:`SqliteStore` and the single thread that may touch it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="goalkeeper-store")
        self._store: SqliteStore | None = None
        self.notice: str | None = None
        self._closed = False

    async def open(self, now: datetime) -> None:
        def _open() -> None:
            self._store, self.notice = open_store(self.path, now)

        await asyncio.get_running_loop().run_in_executor(self._executor, _open)

    async def run(self, fn: Callable[[SqliteStore], T]) -> T:
        def _call() -> T:
            if self._store is None:
                raise RuntimeError("the store is not open")
            return fn(self._store)

        return await asyncio.get_running_loop().run_in_executor(self._executor, _call)

    def run_blocking(self, fn: Callable[[SqliteStore], T]) -> T:
        """The same, from a thread that is not the event loop (tests, benchmarks)."""

        def _call() -> T:
            if self._store is None:
                raise RuntimeError("the store is not open")
            return fn(self._store)

        return self._executor.submit(_call).result()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True

        def _close() -> None:
            if self._store is not None:
                self._store.close()
                self._store = None

        try:
            await asyncio.get_running_loop().run_in_executor(self._executor, _close)
        finally:
            self._executor.shutdown(wait=True)
