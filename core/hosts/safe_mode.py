"""Safe mode: a host whose store cannot be written shows what it can read and runs nothing.

The engine enters it at start when the host's open (:mod:`core.store.guard`) finds a problem,
and while running when SQLite reports damage and the integrity check — the host's, under its
lease — agrees: the scheduler and the providers stop, actions are refused with the reason, and
``goalkeeper store restore`` (:meth:`SafeMode.restore`) puts a verified backup (or nothing) in
place, after which the engine starts as usual.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from core.clock import Clock
from core.events import EventBus, Notice
from core.i18n import N_
from core.models import Goal
from core.store import StoreError
from core.store.sqlite import is_corruption
from core.store.thread import StoreThread
from core.store.upkeep import StoreKeeper

Spawn = Callable[[Awaitable[Any], str], "asyncio.Task[Any]"]


@dataclass(frozen=True)
class SafeModeParts:
    """What safe mode is handed: the store and its keeper (backups), this host's goals (shown
    read-only), the clock, the bus, the database's path, and the host's ``spawn``,
    ``health_changed``, ``halt`` (stop the scheduler and the providers) and ``start``."""

    store: StoreThread
    keeper: StoreKeeper
    goals: MutableMapping[str, Goal]
    clock: Clock
    bus: EventBus
    database: Path
    spawn: Spawn
    health_changed: Callable[[], None]
    halt: Callable[[], Awaitable[None]]
    start: Callable[[datetime], Awaitable[None]]

log = logging.getLogger("goalkeeper")


class SafeMode:
    """Owns the engine's safe-mode state. Attributes: ``problem`` (None: not in safe mode)."""

    def __init__(self, parts: SafeModeParts) -> None:
        self._parts = parts
        self.problem: str | None = None
        self._checking: asyncio.Task[Any] | None = None

    async def enter(self, problem: str) -> None:
        """The store cannot be written: show what can be read, run nothing, offer a restore."""
        e = self._parts
        self.problem = problem
        e.goals.clear()
        try:
            e.goals.update((g.id, g) for g in await e.store.run(lambda s: s.list_goals()))
        except Exception as exc:  # a damaged file may not even show its goals
            log.warning("safe mode: the goals cannot be read either: %s", exc)
        log.error("safe mode: %s", problem)
        e.bus.publish(Notice("error", N_("Safe mode: {problem}").format(problem=problem)))
        e.health_changed()

    async def leave(self) -> None:
        """After a restore: open the store again and start as usual."""
        e = self._parts
        now = e.clock.now()
        await e.store.open(now)
        if e.store.problem is not None:
            await self.enter(e.store.problem.message)
            return
        self.problem = None
        self._checking = None
        e.health_changed()
        await e.start(now)

    def maybe_damaged(self, exc: BaseException) -> None:
        """SQLite said the file is damaged: check it and, if the check agrees, go to safe
        mode — once."""
        if is_corruption(exc) and self._checking is None and self.problem is None:
            self._checking = self._parts.spawn(self._check_after_error(str(exc)), "integrity-check")

    async def _check_after_error(self, error: str) -> None:
        e = self._parts
        try:
            complaint = await e.store.run(lambda s: s.quick_check())
        except sqlite3.DatabaseError as exc:
            complaint = str(exc)
        if complaint is None:
            log.warning("the store reported %r, but its integrity check passes", error)
            self._checking = None
            return
        await e.halt()
        await self.enter(
            N_("the database {file} is damaged: SQLite's integrity check says {complaint!r} "
               "(after {error!r}); `goalkeeper store restore` puts a verified backup in its "
               "place (the damaged files are kept aside)").format(
                   file=e.database, complaint=complaint, error=error))

    async def restore(self, backup: str | None, empty: bool) -> dict[str, Any]:
        """Refused while the store is healthy; else the newest backup (or ``backup``, or with
        ``empty`` nothing) replaces the files, which are kept aside."""
        e = self._parts
        if self.problem is None:
            return {"error": N_("the store is healthy and in use; stop the host first to "
                                "restore a backup over it")}
        chosen = Path(backup) if backup else None
        if chosen is None and not empty:
            newest = e.keeper.backups()
            if not newest:
                return {"error": N_("there is no backup to restore; `--empty` starts an "
                                    "empty store (the damaged files are kept aside)")}
            chosen = newest[0].path
        try:
            restored = await e.keeper.restore(chosen)
        except (OSError, StoreError) as exc:
            return {"error": str(exc)}
        await self.leave()
        return restored.to_json() | {"safe_mode": self.problem}
