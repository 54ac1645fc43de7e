"""This host's goals as last committed, and the announcement of every change.

Every committed change (:class:`~core.store.base.Committed`) passes through :meth:`GoalBook.
committed`: the copy is updated, :class:`~core.events.GoalChanged` and one
:class:`~core.events.HistoryRecorded` per row are published, and the scheduler is poked. The
views, the scheduler and the decisions read :attr:`GoalBook.goals`; only the owner of a goal
changes it (other hosts' goals are :class:`~core.hosts.sync.SharedSync`'s).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from core.events import EventBus, GoalChanged, GoalRemoved, HistoryRecorded
from core.models import Goal, HistoryRow
from core.store.base import Committed

log = logging.getLogger("goalkeeper")


class GoalBook:
    """Owns the copy of this host's goals. Attributes: ``goals`` (id → Goal).

    Emits (on the bus): GoalChanged, GoalRemoved, HistoryRecorded.
    """

    def __init__(self, bus: EventBus, poke: Callable[[], None]) -> None:
        self.goals: dict[str, Goal] = {}
        self._bus = bus
        self._poke = poke

    def load(self, goals: Iterable[Goal]) -> None:
        """Replace the copy (at start; the dict stays the same object for its readers)."""
        self.goals.clear()
        self.goals.update((g.id, g) for g in goals)

    def committed(self, committed: Committed[Any]) -> None:
        after = committed.after
        if after is not None and after != committed.before:
            self.goals[after.id] = after
            self._bus.publish(GoalChanged(after, committed.before))
        for row in committed.history:
            self.announce(row)
        self._poke()

    def removed(self, goal_id: str, row: HistoryRow | None) -> None:
        self.goals.pop(goal_id, None)
        self._bus.publish(GoalRemoved(goal_id))
        if row is not None:
            self.announce(row)
        self._poke()

    def announce(self, row: HistoryRow) -> None:
        """Every stored history row: one log line, one event."""
        log.info("%s %s %s%s%s", row.goal or "-", row.event,
                 row.outcome.value if row.outcome else "",
                 f" [{row.trigger.value}/{row.origin}]" if row.trigger else "",
                 f": {row.reason}" if row.reason else "")
        self._bus.publish(HistoryRecorded(row))
