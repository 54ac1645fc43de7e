"""Fire-and-forget coroutines that are neither lost nor silent.

asyncio keeps only a weak reference to a task, and an exception in a task nobody awaits is only
logged when the task is garbage-collected — a failed click would vanish. :class:`TaskKeeper` holds
a strong reference until the task ends and hands a failure to ``sys.excepthook`` (which pytest-qt
turns into a test failure and the app logs), the way ``qasync.asyncSlot`` does.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class TaskKeeper:
    """Owns the tasks it spawned until they finish."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False

    def spawn(self, coro: Coroutine[Any, Any, T], name: str = "gui") -> asyncio.Task[T]:
        """Run ``coro`` as a task. After :meth:`close` the task is cancelled before its first
        step: a signal that arrives while the app shuts down (the host stopping, a widget
        closing) must not start a load against a store that is going away, nor run its steps
        after the event loop has stopped — Qt still delivers qasync's callbacks then, outside
        any running asyncio loop."""
        task = asyncio.ensure_future(coro)
        task.set_name(f"goalkeeper-gui:{name}")
        if self._closed:
            task.cancel()
            return task
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            sys.excepthook(type(exc), exc, exc.__traceback__)

    @property
    def pending(self) -> int:
        return len(self._tasks)

    def cancel_pending(self, *_: object) -> None:
        """Cancel every task now (e.g. from a widget's ``destroyed``: its tasks must not touch
        it again)."""
        for task in list(self._tasks):
            task.cancel()

    @property
    def closed(self) -> bool:
        return self._closed

    async def close(self) -> None:
        """Cancel every task, wait for them, and start no new ones."""
        self._closed = True
        await self.cancel_all()

    async def cancel_all(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
