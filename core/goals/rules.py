"""The global resume rules as one frozen, self-checking value.

Built from the settings (:meth:`ResumeRules.from_settings`); carried by
:class:`core.goals.auto_resume.AutoResumePolicy`, so every place that plans or decides an
automatic resume
sees the same rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING

from core.clock import local_zone, zone_named
from core.policies.hours import AllowedHours, WeeklyHours, parse_hours, zone_label

if TYPE_CHECKING:  # core.models imports this package: keep the import one-way at run time
    from core.models import Goal
    from core.settings import Settings

#: the rule names a deferral (and its history row) carries — scripts rely on them
RULE_HOURS = "allowed hours"
RULE_RESERVE = "reserve"
RULE_SLOT = "waiting for a slot"
RULE_BUDGET = "budget"


@dataclass(frozen=True)
class Hold:
    """A rule that holds an automatic resume back: its name, why, and when to ask again."""

    rule: str
    reason: str
    not_before: datetime


@dataclass(frozen=True)
class WindowLevel:
    """What a decision knows of one of the goal's windows: used % (None: unknown), next reset,
    and the length of its period (None: not periodic, or unknown)."""

    window_id: str
    used_percent: float | None
    resets_at: datetime | None
    window_seconds: float | None = None


#: how far a window's next reset may sit from a goal's own and still be the same reset (a reset
#: read from Claude's text is the last second of its minute; readings round differently)
SAME_RESET = timedelta(minutes=5)


def following_reset(resets_at: datetime | None,
                    levels: Iterable[WindowLevel]) -> datetime | None:
    """The reset after ``resets_at``: that reset plus the period of the window resetting then;
    None when no such window has a known period."""
    if resets_at is None:
        return None
    periods = [level.window_seconds for level in levels
               if level.window_seconds and level.resets_at is not None
               and abs(level.resets_at - resets_at) <= SAME_RESET]
    return resets_at + timedelta(seconds=max(periods)) if periods else None


@dataclass(frozen=True)
class ResumeRules:
    """What holds an automatic resume back.

    Attributes:
        reserve_percent: keep this share of every window for the user (0 = off): an automatic
            resume needs more than this left, and a goal Goalkeeper resumed is paused at it.
        reserve_by_window: per-window overrides of ``reserve_percent``, as (window id, %) pairs.
        hours: the global allowed hours (None: any time); a goal's own hours replace them.
        zone: the zone allowed hours are read in.
        max_concurrent: automatic resumes that may be settling at once on one window (0 = no
            limit).
        settle: how long a resumed goal holds its window's slot while it keeps running.
    """

    reserve_percent: float = 0.0
    reserve_by_window: tuple[tuple[str, float], ...] = ()
    hours: WeeklyHours | None = None
    zone: tzinfo = UTC
    max_concurrent: int = 1
    settle: timedelta = timedelta(minutes=5)
    _overrides: Mapping[str, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, value in (("reserve", self.reserve_percent), *self.reserve_by_window):
            if not 0 <= value < 100:
                raise ValueError(f"the reserve of {name} must be in [0, 100): {value}")
        if self.max_concurrent < 0:
            raise ValueError("max_concurrent must not be negative")
        if self.settle < timedelta(0):
            raise ValueError("settle must not be negative")
        object.__setattr__(self, "_overrides", dict(self.reserve_by_window))

    @classmethod
    def from_settings(cls, settings: Settings, local: tzinfo | None = None) -> ResumeRules:
        """``local``: the local zone (a host's :class:`~core.clock.LiveZone`, which follows a
        change while it runs); the system's now when not given. A named zone wins."""
        zone_name = settings.auto_resume_timezone
        return cls(
            reserve_percent=settings.resume_reserve_percent,
            reserve_by_window=tuple(sorted(settings.resume_reserve_by_window.items())),
            hours=parse_hours(settings.auto_resume_hours),
            zone=(zone_named(zone_name) if zone_name else None) or local or local_zone(),
            max_concurrent=settings.max_concurrent_resumes,
            settle=timedelta(seconds=settings.resume_settle_seconds),
        )

    @property
    def overrides(self) -> tuple[str, ...]:
        """The windows with a reserve of their own."""
        return tuple(window for window, _ in self.reserve_by_window)

    def reserve_for(self, window_id: str) -> float:
        return self._overrides.get(window_id, self.reserve_percent)

    def hours_for(self, goal: Goal) -> AllowedHours | None:
        """The goal's own allowed hours when it has some, else the global ones."""
        weekly = parse_hours(goal.policy.auto_resume_hours) or self.hours
        return weekly.in_zone(self.zone) if weekly is not None else None

    @property
    def zone_name(self) -> str:
        return zone_label(self.zone)

    def to_json(self) -> dict[str, object]:
        """What ``goalkeeper status --json`` shows under ``policies``."""
        return {
            "resume_reserve_percent": self.reserve_percent,
            "resume_reserve_by_window": dict(self.reserve_by_window),
            "auto_resume_hours": self.hours.text if self.hours else "",
            "auto_resume_timezone": self.zone_name,
            "max_concurrent_resumes": self.max_concurrent,
            "resume_settle_seconds": self.settle.total_seconds(),
        }
