"""Quotas the user defines in ``config.toml`` for pipeline steps, and their arithmetic.

Three kinds, as in the quota model of the core (:class:`core.models.QuotaKind`)::

    [quotas.github-api]          # 100 calls per day, resetting at 00:00 Asia/Shanghai
    kind = "periodic"
    limit = 100
    period = "day"               # minute | hour | day | week
    reset_at = "00:00"           # the window's local start (HH:MM; for "hour" only MM counts)
    weekday = "monday"           # for "week"
    timezone = "Asia/Shanghai"   # default: local

    [quotas.credits]             # 1,000 credits, refilled by hand (`goalkeeper quota refill`)
    kind = "capacity"
    limit = 1000

    [quotas.search]              # 10 per minute, burst 20
    kind = "token_bucket"
    rate = 10
    per = "minute"               # second | minute | hour | day
    burst = 20                   # default: rate

The functions here are pure: where a periodic window starts and ends, how full a bucket is. The
ledger that debits them atomically is :mod:`core.providers.pipeline.ledger`.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Annotated, Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.clock import local_zone, zone_named
from core.policies.reserve_table import USER_QUOTA_PREFIX

QUOTA_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
WINDOW_PREFIX = USER_QUOTA_PREFIX
_HM = re.compile(r"^(\d{1,2}):(\d{2})$")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
PER_SECONDS = {"second": 1.0, "minute": 60.0, "hour": 3600.0, "day": 86400.0}
PERIOD_SECONDS = {"minute": 60.0, "hour": 3600.0, "day": 86400.0, "week": 7 * 86400.0}


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    label: str | None = None


class PeriodicQuota(_Spec):
    """``limit`` units per ``period``, the window starting at ``reset_at`` local time."""

    kind: Literal["periodic"]
    limit: float = Field(gt=0)
    period: Literal["minute", "hour", "day", "week"] = "day"
    reset_at: str = "00:00"
    weekday: Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                     "sunday"] = "monday"
    timezone: str | None = None

    @field_validator("reset_at")
    @classmethod
    def _hm(cls, value: str) -> str:
        match = _HM.match(value)
        if not match or int(match.group(1)) > 23 or int(match.group(2)) > 59:
            raise ValueError(f"{value!r} is not a time of day (HH:MM)")
        return value

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str | None) -> str | None:
        if value is not None and zone_named(value) is None:
            raise ValueError(f"unknown time zone {value!r}")
        return value

    def zone(self) -> tzinfo:
        if self.timezone:
            return ZoneInfo(self.timezone)
        return local_zone()

    def window(self, now: datetime) -> tuple[datetime, datetime]:
        """The window containing ``now``: (start, end) as UTC instants."""
        zone = self.zone()
        local = now.astimezone(zone)
        hour, minute = (int(x) for x in self.reset_at.split(":"))
        if self.period == "minute":
            start = local.replace(second=0, microsecond=0)
            return _utc(start), _utc(start) + timedelta(minutes=1)
        if self.period == "hour":
            start = local.replace(minute=minute, second=0, microsecond=0)
            if start > local:
                start -= timedelta(hours=1)
            return _utc(start), _utc(start) + timedelta(hours=1)
        step = 7 if self.period == "week" else 1
        day = local.date()
        if self.period == "week":
            day -= timedelta(days=(day.weekday() - WEEKDAYS.index(self.weekday)) % 7)
        start = _at(day, hour, minute, zone)
        if start > now:
            start = _at(day - timedelta(days=step), hour, minute, zone)
        return start, _at(start.astimezone(zone).date() + timedelta(days=step), hour, minute,
                          zone)


class CapacityQuota(_Spec):
    """A fixed total, refilled only by hand."""

    kind: Literal["capacity"]
    limit: float = Field(gt=0)


class TokenBucketQuota(_Spec):
    """``rate`` tokens per ``per``, holding at most ``burst``."""

    kind: Literal["token_bucket"]
    rate: float = Field(gt=0)
    per: Literal["second", "minute", "hour", "day"] = "minute"
    burst: float | None = Field(None, gt=0)

    @property
    def capacity(self) -> float:
        return self.burst if self.burst is not None else self.rate

    @property
    def rate_per_second(self) -> float:
        return self.rate / PER_SECONDS[self.per]

    def refilled(self, tokens: float, since: datetime, now: datetime) -> float:
        elapsed = max(0.0, (now - since).total_seconds())
        return min(self.capacity, tokens + elapsed * self.rate_per_second)

    def seconds_until(self, tokens: float, cost: float) -> float:
        return max(0.0, (cost - tokens) / self.rate_per_second)


UserQuota = Annotated[PeriodicQuota | CapacityQuota | TokenBucketQuota,
                      Field(discriminator="kind")]


def window_id(name: str) -> str:
    return WINDOW_PREFIX + name


def largest_debit(spec: PeriodicQuota | CapacityQuota | TokenBucketQuota) -> float:
    """The largest cost a single debit can ever be granted."""
    return spec.capacity if isinstance(spec, TokenBucketQuota) else spec.limit


def _at(day: date, hour: int, minute: int, zone: tzinfo) -> datetime:
    naive = datetime.combine(day, datetime.min.time()).replace(hour=hour, minute=minute)
    return naive.replace(tzinfo=zone).astimezone(UTC)


def _utc(local: datetime) -> datetime:
    return local.astimezone(UTC)
