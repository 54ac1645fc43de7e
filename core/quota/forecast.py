"""When a window runs out at the current pace — the line under every gauge.

The pace is the window's average rise over the last :data:`LOOKBACK` (30 min) of readings, within
its current period: the level at the start of that span (the reading in force then — a reading
holds until the next one, as on the usage chart) against the level now. From it:

* ``runs out ≈ 14:20`` — at this pace the window is used up before it resets;
* ``lasts until reset`` — it is not (or nothing is being used);
* nothing — too few readings to tell (the span must cover at least two minutes, or a tenth of a
  short window), or the window is already exhausted.

When the readings stop rising — every goal on the window is done, or no reading comes any more —
the pace holds for :data:`STALL` (ten minutes, or a tenth of a short window) after the last rise
— readings may come that sparsely while an agent works — then decays linearly to zero over as
long again, so a window nothing uses any more "lasts until reset" rather than running out
at a pace of long ago. A forecast never names a time already past.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from core.clock import iso
from core.i18n import N_, _
from core.i18n.textfmt import short_time
from core.quota.machine import used_percent

if TYPE_CHECKING:
    from core.models import QuotaReading

LOOKBACK = timedelta(minutes=30)
_MIN_SPAN = 120.0
#: how long after the level last rose the pace holds (and then how long it takes to decay to zero)
STALL = timedelta(minutes=10)
_KEEP = timedelta(hours=1)
_MAX_POINTS = 5000
#: a reset instant that moved more than this is a new period (providers' own jitter is smaller)
_NEW_PERIOD = timedelta(minutes=5)
Point = tuple[datetime, float]


@dataclass(frozen=True)
class Forecast:
    """Attributes:
        pace_per_hour: % of the window used per hour lately (None: not enough readings).
        runs_out_at: when it is used up at that pace, if before its reset.
        lasts_until_reset: at that pace it does not run out before it resets.
    """

    pace_per_hour: float | None = None
    runs_out_at: datetime | None = None
    lasts_until_reset: bool = False

    def text(self, now: datetime, zone: tzinfo | None = None, *, english: bool = False) -> str:
        """The line under the gauge, in the current language (``english``: for ``--json``)."""
        if self.runs_out_at is not None and self.runs_out_at > now:
            return _say(N_("runs out ≈ {time}"), english).format(
                time=short_time(self.runs_out_at, now, zone, english=english))
        return _say(N_("lasts until reset"), english) if self.lasts_until_reset else ""

    def to_json(self, now: datetime) -> dict[str, Any]:
        return {
            "pace_percent_per_hour": (round(self.pace_per_hour, 2)
                                      if self.pace_per_hour is not None else None),
            "runs_out_at": (iso(self.runs_out_at)
                            if self.runs_out_at is not None and self.runs_out_at > now else None),
            "lasts_until_reset": self.lasts_until_reset,
            "text": self.text(now, english=True),
        }


def _say(text: str, english: bool) -> str:
    return text if english else _(text)


def forecast(points: Sequence[Point], reading: QuotaReading, now: datetime,
             lookback: timedelta = LOOKBACK) -> Forecast:
    """The forecast for ``reading`` (the window's effective reading now) from its ``points``."""
    used = used_percent(reading)
    if used is None or used >= 100 or reading.limit_reached:
        return Forecast()
    period_start = None
    if reading.resets_at is not None and reading.window_seconds:
        period_start = reading.resets_at - timedelta(seconds=reading.window_seconds)
    start = max(now - lookback, period_start) if period_start else now - lookback
    anchor = _level_at(points, start, period_start, now)
    span = (now - anchor[0]).total_seconds() if anchor else 0.0
    if anchor is None or span < _min_span(reading):
        return Forecast()
    pace = max(0.0, (used - anchor[1]) / span) * _decay(points, now, reading)  # % per second
    if pace <= 1e-9:
        return Forecast(0.0, None, reading.resets_at is not None)
    runs_out = now + timedelta(seconds=(100.0 - used) / pace)
    if reading.resets_at is not None and runs_out >= reading.resets_at:
        return Forecast(pace * 3600, None, True)
    return Forecast(pace * 3600, runs_out, False)


def _decay(points: Sequence[Point], now: datetime, reading: QuotaReading) -> float:
    """1 while the level keeps rising and for the stall time after the last reading that rose,
    then falling linearly to 0 over as long again (no reading at all counts as not rising)."""
    last_rise = None
    for before, after in pairwise(points):
        if after[0] <= now and after[1] > before[1]:
            last_rise = after[0]
    if last_rise is None:
        return 1.0  # one level all along: the span's rise is zero anyway
    stall = STALL.total_seconds()
    if reading.window_seconds:
        stall = min(stall, reading.window_seconds / 10.0)
    quiet = (now - last_rise).total_seconds()
    return min(1.0, max(0.0, 2.0 - quiet / stall))


def _level_at(points: Sequence[Point], start: datetime, period_start: datetime | None,
              now: datetime) -> Point | None:
    """The level in force at ``start`` (or the first reading after it), in this period."""
    current = [p for p in points if p[0] <= now and (period_start is None or p[0] >= period_start)]
    before = [p for p in current if p[0] <= start]
    if before:
        return (start, before[-1][1])
    return current[0] if current else None


def _min_span(reading: QuotaReading) -> float:
    if reading.window_seconds:
        return min(_MIN_SPAN, reading.window_seconds / 10.0)
    return _MIN_SPAN


class ForecastBook:
    """The last hour of readings of every window, in memory, for the gauges' forecasts.

    Seeded from the stored series when the engine starts; the CLI reads the series itself.
    """

    lookback = LOOKBACK

    def __init__(self) -> None:
        self._points: dict[str, deque[Point]] = {}
        self._periods: dict[str, datetime] = {}

    def seed(self, window_id: str, points: Iterable[Point]) -> None:
        for point in points:
            self._append(window_id, point)

    def add(self, reading: QuotaReading) -> None:
        used = used_percent(reading)
        if used is None:
            return
        if reading.resets_at is not None:
            period = self._periods.get(reading.window_id)
            if period is not None and abs(reading.resets_at - period) > _NEW_PERIOD:
                self._points.pop(reading.window_id, None)  # a new period: its own pace
            self._periods[reading.window_id] = reading.resets_at
        self._append(reading.window_id, (reading.observed_at, used))

    def points(self, window_id: str) -> list[Point]:
        return list(self._points.get(window_id, ()))

    def forecast(self, reading: QuotaReading, now: datetime) -> Forecast:
        return forecast(self.points(reading.window_id), reading, now, self.lookback)

    def _append(self, window_id: str, point: Point) -> None:
        series = self._points.setdefault(window_id, deque(maxlen=_MAX_POINTS))
        if series and point[0] < series[-1][0]:
            return  # out of order: the store keeps only newer readings too
        series.append(point)
        while series and series[0][0] < point[0] - _KEEP:
            series.popleft()
