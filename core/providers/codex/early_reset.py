"""Catching early resets: a fresh quota read now and then while a Codex goal waits for quota.

OpenAI often resets Codex quotas before the scheduled instant. The reset instant a waiting goal
is planned for comes from the last reading, so without a new reading Goalkeeper would wait for
the scheduled instant even though the quota is back. While any Codex goal waits for quota, the
provider asks ``codex app-server`` for ``account/rateLimits/read`` — free: it starts no turn —
at an adaptive interval (:class:`EarlyResetPolicy`), and when the answer says the quota is back
(:func:`looks_recovered`) it asks the engine to bring the goals' not-before time forward. The
engine's own pre-resume read and its hysteresis still decide; this only wakes it up early.

With nothing waiting there is no timer at all (:meth:`EarlyResetPoll.due_at` is None).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.providers.codex.limits import RateSnapshot


@dataclass(frozen=True)
class EarlyResetPolicy:
    """How often to read while a goal waits.

    Attributes:
        min_seconds / max_seconds: the usual interval, drawn uniformly between the two (the
            jitter keeps many Goalkeepers from asking at the same moment).
        near_seconds: "near the reset" — when the earliest scheduled reset is this close ...
        near_min_seconds / near_max_seconds: ... the interval is drawn from this shorter range.
    """

    min_seconds: float = 600.0
    max_seconds: float = 900.0
    near_seconds: float = 1200.0
    near_min_seconds: float = 360.0
    near_max_seconds: float = 540.0

    def __post_init__(self) -> None:
        if not 0 < self.min_seconds <= self.max_seconds:
            raise ValueError("need 0 < min_seconds <= max_seconds")
        if not 0 < self.near_min_seconds <= self.near_max_seconds:
            raise ValueError("need 0 < near_min_seconds <= near_max_seconds")
        if self.near_seconds < 0:
            raise ValueError("near_seconds must not be negative")

    def interval(self, until_reset: float | None, draw: float) -> float:
        """Seconds to the next read; ``draw`` in [0, 1) places it inside the range."""
        if until_reset is not None and 0 < until_reset <= self.near_seconds:
            low, high = self.near_min_seconds, self.near_max_seconds
        else:
            low, high = self.min_seconds, self.max_seconds
        return low + (high - low) * draw


class EarlyResetPoll:
    """The poll's timer. Owns no task: the scheduler wakes the provider when :meth:`due_at`
    has passed (``Provider.next_wake`` / ``wake``).

    Attributes:
        reads: how many reads the poll asked for (for the figures in ``bench/``).
    """

    def __init__(self, policy: EarlyResetPolicy, rng: random.Random) -> None:
        self.policy = policy
        self._rng = rng
        self._next: datetime | None = None
        self.reads = 0

    def due_at(self, now: datetime, waiting: Iterable[datetime | None]) -> datetime | None:
        """When to read next, given the scheduled resets of the goals that wait (None: none)."""
        resets = list(waiting)
        if not resets:
            self._next = None
            return None
        if self._next is None:
            known = [r for r in resets if r is not None and r > now]
            until = (min(known) - now).total_seconds() if known else None
            self._next = now + timedelta(seconds=self.policy.interval(until, self._rng.random()))
        return self._next

    def taken(self) -> None:
        """A read was taken: the next one is planned afresh."""
        self.reads += 1
        self._next = None


def looks_recovered(snapshot: RateSnapshot) -> bool:
    """Does an authoritative read say the quota is back?

    ``ordinaryUsageAllowed`` decides when Codex gives it; a false one (or a spend control) blocks
    whatever the percentages say. When it is unknown, every window of known length must be below
    100 % and no limit reached.
    """
    access = snapshot.access
    if access is not None and access.blocked is not None:
        return False
    if snapshot.no_timed_reset:
        return False
    if access is not None and access.ordinary_allowed:
        return True
    windows = snapshot.windows
    return bool(windows) and snapshot.reached_type is None and all(
        w.used_percent is not None and w.used_percent < 99.5 for w in windows.values())
