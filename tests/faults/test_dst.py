"""Every scheduled instant fires exactly once across both DST transitions, in several zones.

The expected instants are computed here by brute force, minute by minute, independently of the
code under test: a schedule naming a time of day fires once per local date — at the first
occurrence of a repeated wall time, at the first valid minute after a skipped one (Debian cron's
rule) — and one with ``*`` in its minute or hour field fires at every real instant it names.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.clock import FakeClock
from core.paths import resolve_paths
from core.providers.pipeline.catalog import PipelineCatalog
from core.providers.pipeline.provider import PipelineProvider
from core.providers.pipeline.schedule import next_fire, parse_schedule
from core.settings import Settings
from tests.pipeline.support import FakeSecrets, step, write_goal
from tests.support.examples import budgeted, examples

#: (zone, the spring-forward day, the fall-back day) — two hemispheres, a 30-minute shift
ZONES = [
    ("America/New_York", date(2026, 3, 8), date(2026, 11, 1)),
    ("Europe/Berlin", date(2026, 3, 29), date(2026, 10, 25)),
    ("Australia/Sydney", date(2026, 10, 4), date(2026, 4, 5)),
    ("Australia/Lord_Howe", date(2026, 10, 4), date(2026, 4, 5)),
]
#: a schedule of each kind, with times inside the gap and inside the repeated hour
SCHEDULES = ["01:30", "02:30", "02:00", "09:00", "30 1 * * *", "30 2 * * *", "15 2 * * 0",
             "*/15 * * * *", "0 * * * *", "45 */2 * * *"]


def minutes(start: datetime, end: datetime) -> Iterator[datetime]:
    """Every whole minute from ``start`` (rounded up) to before ``end``."""
    at = start.replace(second=0, microsecond=0)
    if at < start:
        at += timedelta(minutes=1)
    while at < end:
        yield at
        at += timedelta(minutes=1)


def _fixed(text: str) -> tuple[int, int] | None:
    """The (hour, minute) of a schedule naming a time of day; None for a real-time one."""
    schedule = parse_schedule(text)
    if schedule.daily is not None:
        return schedule.daily
    minute, hour = text.split()[:2]
    if minute.isdigit() and hour.isdigit():
        return int(hour), int(minute)
    return None


def _matches(text: str, wall: datetime) -> bool:
    """Whether a cron expression of the real-time kind names this wall minute (the fields used
    in SCHEDULES only)."""
    minute, hour, _, _, weekday = text.split()

    def field(spec: str, value: int) -> bool:
        if spec == "*":
            return True
        if spec.startswith("*/"):
            return value % int(spec[2:]) == 0
        return value == int(spec)

    return field(minute, wall.minute) and field(hour, wall.hour) and (
        weekday == "*" or (wall.isoweekday() % 7) == int(weekday))


def expected(text: str, zone: ZoneInfo, start: datetime, end: datetime) -> list[datetime]:
    fixed = _fixed(text)
    instants: list[datetime] = []
    if fixed is None:
        return [t for t in minutes(start, end) if start < t and _matches(text, t.astimezone(zone))]
    weekday = text.split()[4] if " " in text else "*"
    seen: set[date] = set()
    for t in minutes(start - timedelta(days=1), end + timedelta(days=1)):
        wall = t.astimezone(zone)
        if wall.date() in seen or (wall.hour, wall.minute) < fixed:
            continue
        if weekday != "*" and wall.isoweekday() % 7 != int(weekday):
            continue
        seen.add(wall.date())  # the first minute at or after the time of day, that date
        instants.append(t)
    return [t for t in instants if start < t < end]


def window(day: date) -> tuple[datetime, datetime]:
    start = datetime(day.year, day.month, day.day, tzinfo=UTC) - timedelta(days=2)
    return start, start + timedelta(days=4)


def simulate(text: str, zone: ZoneInfo, start: datetime, end: datetime,
             rng: random.Random) -> list[datetime]:
    """What the provider and the scheduler do: wake (at most 60 s apart, sometimes late),
    fire what is due, plan the next instant after now."""
    schedule = parse_schedule(text)
    due = next_fire(schedule, start, zone)
    fired = []
    now = start
    while now < end:
        now += timedelta(seconds=rng.choice([1, 30, 60, 60, 60]))
        if due <= now and due < end:
            fired.append(due)
            due = next_fire(schedule, now, zone)
            assert due > now, f"{text} in {zone}: next fire {due} is not after {now}"
    return fired


@pytest.mark.parametrize(("name", "spring", "fall"), ZONES)
@pytest.mark.parametrize("text", SCHEDULES)
def test_every_instant_fires_once_across_both_transitions(name: str, spring: date, fall: date,
                                                          text: str) -> None:
    zone = ZoneInfo(name)
    for day in (spring, fall):
        start, end = window(day)
        want = expected(text, zone, start, end)
        got = simulate(text, zone, start, end, random.Random(hash((name, text, day))))
        assert got == want, f"{text} around {day} in {name}"


def test_a_daily_time_in_the_repeated_hour_fires_once_not_on_every_pass() -> None:
    """The report: 01:30 in New York on fall-back night, planned from inside the second pass
    of the hour, returned a past instant — and the scheduler fired on every pass."""
    zone = ZoneInfo("America/New_York")
    daily = parse_schedule("01:30")
    second_pass = datetime(2026, 11, 1, 6, 10, tzinfo=UTC)  # 01:10 EST, after 01:30 EDT
    planned = next_fire(daily, second_pass, zone)
    assert planned > second_pass
    assert planned == datetime(2026, 11, 2, 6, 30, tzinfo=UTC)  # the next day's 01:30 EST
    fires = simulate("01:30", zone, second_pass, second_pass + timedelta(minutes=20),
                     random.Random(1))
    assert fires == []


@pytest.mark.parametrize(("name", "spring", "fall"), ZONES)
@pytest.mark.parametrize("text", SCHEDULES)
def test_planned_from_any_moment_of_the_night_the_next_fire_is_the_earliest_after_it(
        name: str, spring: date, fall: date, text: str) -> None:
    """From every minute (and half-minute) of both transition nights — both passes of the
    repeated hour included — the next fire is strictly after, and the first expected one."""
    zone = ZoneInfo(name)
    schedule = parse_schedule(text)
    for day in (spring, fall):
        night = datetime(day.year, day.month, day.day, tzinfo=zone).astimezone(UTC)
        ahead = 9 if text.split()[-1] != "*" else 2  # a weekly one needs a week
        want = expected(text, zone, night - timedelta(days=1), night + timedelta(days=ahead))
        for after in list(minutes(night, night + timedelta(hours=5)))[::3]:
            for moment in (after, after + timedelta(seconds=30)):
                fired = next_fire(schedule, moment, zone)
                assert fired > moment
                assert fired == want[bisect.bisect_right(want, moment)], (text, day, moment)


@settings(max_examples=examples(25, 50), deadline=None)
@given(zone=st.sampled_from([ZoneInfo(z) for z, _, _ in ZONES]),
       text=st.sampled_from(SCHEDULES),
       after=st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2026, 12, 31),
                          timezones=st.just(UTC)))
def next_fire_is_after_and_the_earliest_expected(zone: ZoneInfo, text: str,
                                                 after: datetime) -> None:
    fired = next_fire(parse_schedule(text), after, zone)
    assert fired > after
    assert fired == expected(text, zone, after, after + timedelta(days=8))[0]


def test_next_fire_is_after_and_the_earliest_expected_any_day() -> None:
    """Under CI=true: runs of 50 examples for 30 s, at most 300 (tests/support/examples.py)."""
    budgeted(next_fire_is_after_and_the_earliest_expected, seconds=examples(0, 30),
             most=examples(1, 6))


@pytest.mark.asyncio
@pytest.mark.parametrize(("name", "spring", "fall"), ZONES[:2])
async def test_the_pipeline_provider_fires_each_instant_once(
        name: str, spring: date, fall: date, tmp_path: Path) -> None:
    for day in (spring, fall):
        start, end = window(day)
        paths = resolve_paths({"GOALKEEPER_HOME": str(tmp_path / f"home-{day}")})
        clock = FakeClock(start)
        provider = PipelineProvider(Settings(), paths, clock, {}, FakeSecrets({}),
                                    random.Random(1))
        goals = tmp_path / f"goals-{day}"
        path = write_goal(goals, {"name": f"dst{day:%m%d}", "schedule": "*/30 1-3 * * *",
                                  "timezone": name}, [], [step("deliver")])
        _, _, digest = PipelineCatalog(paths.data_dir / "pipelines").add(path, start)
        provider.approved[f"dst{day:%m%d}"] = digest  # what `goalkeeper add` records
        fired: list[datetime] = []

        async def record(entry: object, due: datetime, log: list[datetime] = fired) -> None:
            log.append(due)

        provider._fire = record  # type: ignore[method-assign, assignment]
        provider._plan_schedules(provider.catalog.entries())
        while clock.now() < end:
            wake = provider.next_wake(clock.now())
            if wake is not None and wake <= clock.now():
                await provider.wake(clock.now())
            clock.advance(60)
        mine = [t for t in fired if t >= start]
        zone = ZoneInfo(name)
        want = [t for t in minutes(start, end) if t > start
                and t.astimezone(zone).minute in (0, 30)
                and 1 <= t.astimezone(zone).hour <= 3]
        assert mine == want
        assert len(mine) == len(set(mine))
