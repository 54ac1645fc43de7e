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

**The zone can change while a host runs** (the user travels, or changes it in the settings):
a clock hands out its zone from a :class:`ZoneSource` — :class:`SystemZone` notices a new
``/etc/localtime`` (its link target or contents) or ``$TZ`` without a restart, :class:`FakeZone`
is set by tests — and :class:`LiveZone` is a ``tzinfo`` that always reads as the source's zone of
the moment, for the values (allowed hours, texts) that keep a zone. Instants stay UTC: a change
of zone moves no deadline, only what local times mean. ``GOALKEEPER_LOCALTIME`` names another
file than ``/etc/localtime`` (for tests, which must never touch the machine's).
"""

from __future__ import annotations

import heapq
import io
import itertools
import os
import time
from collections.abc import Callable, Mapping
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

    def local_zone(self) -> tzinfo:
        """The local zone now (it may change while the process runs: see :class:`LiveZone`)."""
        ...


class SystemClock:
    """The real clock, with the system's zone (or ``zones``)."""

    def __init__(self, zones: ZoneSource | None = None) -> None:
        self.zones: ZoneSource = zones or SystemZone()

    def local_zone(self) -> tzinfo:
        return self.zones.zone()

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

    def __init__(self, start: datetime | None = None, zones: ZoneSource | None = None) -> None:
        #: the local zone (the system's unless a test hands in a :class:`FakeZone`)
        self.zones: ZoneSource = zones or SystemZone()
        self._wall = start or datetime(2026, 7, 7, 12, 0, tzinfo=UTC)
        self._mono = 1000.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def now(self) -> datetime:
        return self._wall

    def local_zone(self) -> tzinfo:
        return self.zones.zone()

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
LOCALTIME_ENV = "GOALKEEPER_LOCALTIME"
_MAX_TZIF_BYTES = 1 << 20  # a TZif file is a few KiB; a larger one is not a zone


def zone_named(name: str) -> ZoneInfo | None:
    """The IANA zone called ``name``, or None when there is no such zone."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def local_zone(environ: Mapping[str, str] | None = None, path: str | None = None) -> tzinfo:
    """The local zone as the system says now (``$TZ``, then the localtime file)."""
    environ = os.environ if environ is None else environ
    return _resolve(environ, path or localtime_path(environ))[0]


def localtime_path(environ: Mapping[str, str]) -> str:
    """``/etc/localtime``, or the file ``GOALKEEPER_LOCALTIME`` names (tests)."""
    return environ.get(LOCALTIME_ENV) or _LOCALTIME


def _resolve(environ: Mapping[str, str], path: str) -> tuple[tzinfo, object]:
    """The zone and what identifies it (its name, or the localtime file's bytes)."""
    name = environ.get("TZ", "").lstrip(":").strip()
    if name and (zone := zone_named(name)) is not None:
        return zone, name
    try:
        target = os.readlink(path)
        marker = target.find("zoneinfo/")
        if marker >= 0:
            key = target[marker + len("zoneinfo/"):]
            return ZoneInfo(key), key
    except (OSError, ZoneInfoNotFoundError, ValueError):
        pass
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_TZIF_BYTES)
        return ZoneInfo.from_file(io.BytesIO(data), key="localtime"), data
    except (OSError, ValueError):
        pass
    fixed = datetime.now().astimezone().tzinfo or UTC
    return fixed, str(fixed)


class ZoneSource(Protocol):
    """Where the local zone comes from."""

    def zone(self) -> tzinfo:
        """The local zone now: the same object for as long as it has not changed."""
        ...


class SystemZone:
    """The system's zone, noticed when it changes: ``$TZ`` (of ``environ``), then the localtime
    file's link target or contents. The file is looked at (a ``readlink`` and a ``stat``) at
    most once a ``recheck`` seconds; a zone is only re-read when those changed, and the same
    object is handed out until the zone itself is another one."""

    def __init__(self, environ: Mapping[str, str] | None = None, path: str | None = None,
                 recheck: float = 1.0, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._environ = os.environ if environ is None else environ
        self.path = path or localtime_path(self._environ)
        self._recheck = recheck
        self._monotonic = monotonic
        self._checked: float | None = None
        self._mark: object = None
        self._zone: tzinfo = UTC
        self._identity: object = None

    def zone(self) -> tzinfo:
        now = self._monotonic()
        if self._checked is not None and now - self._checked < self._recheck:
            return self._zone
        self._checked = now
        mark = self._fingerprint()
        if mark != self._mark:
            self._mark = mark
            zone, identity = _resolve(self._environ, self.path)
            if identity != self._identity:
                self._zone, self._identity = zone, identity
        return self._zone

    def _fingerprint(self) -> object:
        try:
            target: str | None = os.readlink(self.path)
        except OSError:
            target = None
        try:
            info = os.stat(self.path)
            stat: tuple[int, int, int] | None = (info.st_ino, info.st_mtime_ns, info.st_size)
        except OSError:
            stat = None
        return self._environ.get("TZ"), target, stat


class FakeZone:
    """A zone source that changes when told to (:meth:`set`)."""

    def __init__(self, zone: tzinfo = UTC) -> None:
        self.current = zone

    def zone(self) -> tzinfo:
        return self.current

    def set(self, zone: tzinfo | str) -> None:
        self.current = ZoneInfo(zone) if isinstance(zone, str) else zone


class LiveZone(tzinfo):
    """A ``tzinfo`` that is always ``current()``'s zone of the moment: a value that keeps a zone
    (the allowed hours, a text's renderer) follows a change of the local zone without being
    rebuilt. Convert instants through it (``astimezone``), and keep results in UTC."""

    def __init__(self, current: Callable[[], tzinfo]) -> None:
        super().__init__()
        self.current = current

    @property
    def key(self) -> str:
        """The current zone's IANA name (what :func:`core.policies.hours.zone_label` shows)."""
        zone = self.current()
        return str(getattr(zone, "key", None) or zone)

    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        return self.current().utcoffset(dt)

    def dst(self, dt: datetime | None) -> timedelta | None:
        return self.current().dst(dt)

    def tzname(self, dt: datetime | None) -> str | None:
        return self.current().tzname(dt)

    def fromutc(self, dt: datetime) -> datetime:
        zone = self.current()
        return zone.fromutc(dt.replace(tzinfo=zone)).replace(tzinfo=self)

    def __repr__(self) -> str:
        return f"LiveZone({self.key})"

    def __str__(self) -> str:
        return self.key
