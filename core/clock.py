"""Time, injected.

Core code never calls ``datetime.now()`` or ``time.time()``: it asks a :class:`Clock`. The
scheduler needs two kinds of time — wall time for deadlines that come from provider reset
instants, and monotonic time to notice that the wall clock jumped (a suspended laptop, an NTP
step) — so a clock offers both, and sleeps through itself so tests can move time instead of
waiting for it.

**The local zone** is a real IANA zone (with its DST rules), for schedules and quotas.

``datetime.now().astimezone().tzinfo`` is only today's fixed offset: a daily 09:00 computed with
it in winter would be an hour off in summer. So: ``$TZ``, then ``/etc/localtime``'s link target
or contents, and only then the fixed offset.
"""

from __future__ import annotations

import heapq
import itertools
import os
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

# asyncio is imported where a coroutine runs (a loop, so it is loaded already), not at the
# top: a command that only reads, such as ``goalkeeper status``, never pays for it (issue 24)
if TYPE_CHECKING:
    import asyncio


class Clock(Protocol):
    """Wall time (UTC), monotonic time and sleeping."""

    def now(self) -> datetime:
        """The current wall-clock instant, timezone-aware UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never jumps (does not advance while suspended)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Sleep ``seconds`` of monotonic time."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        import asyncio

        await asyncio.sleep(max(0.0, seconds))


class FakeClock:
    """A clock that only moves when told to.

    ``advance(s)`` moves wall and monotonic time together and wakes every sleeper whose time has
    come; ``jump(s)`` moves only the wall clock (what a suspend or an NTP step looks like from
    inside a process). Sleepers are woken in deadline order.
    """

    def __init__(self, start: datetime | None = None) -> None:
        self._wall = start or datetime(2026, 7, 7, 12, 0, tzinfo=UTC)
        self._mono = 1000.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def now(self) -> datetime:
        return self._wall

    def monotonic(self) -> float:
        return self._mono

    async def sleep(self, seconds: float) -> None:
        import asyncio

        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._mono + seconds, next(self._seq), fut))
        await fut

    @property
    def sleepers(self) -> int:
        """How many coroutines are sleeping on this clock right now."""
        return sum(1 for _, _, fut in self._sleepers if not fut.done())

    def next_wakeup(self) -> float | None:
        """Seconds until the earliest sleeper wakes, or None when nobody sleeps."""
        live = [when for when, _, fut in self._sleepers if not fut.done()]
        return min(live) - self._mono if live else None

    def advance(self, seconds: float) -> None:
        """Move both clocks forward and wake due sleepers."""
        self._mono += seconds
        self._wall += timedelta(seconds=seconds)
        self._wake_due()

    def jump(self, seconds: float) -> None:
        """Move only the wall clock (suspend / NTP step); sleepers are not woken."""
        self._wall += timedelta(seconds=seconds)

    def _wake_due(self) -> None:
        while self._sleepers and self._sleepers[0][0] <= self._mono:
            _, _, fut = heapq.heappop(self._sleepers)
            if not fut.done():
                fut.set_result(None)

    async def run_for(self, seconds: float, step: float = 1.0) -> None:
        """Advance in ``step`` increments, yielding to the loop so woken tasks run."""
        remaining = seconds
        while remaining > 0:
            await settle()
            delta = min(step, remaining)
            self.advance(delta)
            remaining -= delta
        await settle()


async def settle(rounds: int = 20) -> None:
    """Let ready callbacks and tasks run (including work handed to executor threads)."""
    import asyncio

    for _ in range(rounds):
        await asyncio.sleep(0)
    await asyncio.sleep(0.001)
    for _ in range(rounds):
        await asyncio.sleep(0)


def to_utc(instant: datetime) -> datetime:
    """Normalise an aware datetime to UTC; refuse naive ones (they are a bug)."""
    if instant.tzinfo is None:
        raise ValueError(f"naive datetime {instant!r}: every instant must carry a zone")
    return instant.astimezone(UTC)


def iso(instant: datetime | None) -> str | None:
    """ISO 8601 UTC with a ``Z`` suffix, as the CLI's JSON promises."""
    if instant is None:
        return None
    return to_utc(instant).isoformat().replace("+00:00", "Z")


def parse_iso(text: str | None) -> datetime | None:
    if text is None:
        return None
    return to_utc(datetime.fromisoformat(text.replace("Z", "+00:00")))


# -- the local zone --------------------------------------------------------------------------------

_LOCALTIME = "/etc/localtime"


def zone_named(name: str) -> ZoneInfo | None:
    """The IANA zone called ``name``, or None when there is no such zone."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def local_zone(environ: Mapping[str, str] | None = None) -> tzinfo:
    environ = os.environ if environ is None else environ
    name = environ.get("TZ", "").lstrip(":").strip()
    if name and (zone := zone_named(name)) is not None:
        return zone
    try:
        target = os.readlink(_LOCALTIME)
        marker = target.find("zoneinfo/")
        if marker >= 0:
            return ZoneInfo(target[marker + len("zoneinfo/"):])
    except (OSError, ZoneInfoNotFoundError, ValueError):
        pass
    try:
        with open(_LOCALTIME, "rb") as handle:
            return ZoneInfo.from_file(handle, key="localtime")
    except (OSError, ValueError):
        pass
    return datetime.now().astimezone().tzinfo or UTC
