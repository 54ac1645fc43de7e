"""The local zone's source (core/clock.py): the system's zone is noticed when it changes —
the localtime file's link target or contents, or ``$TZ`` — without a restart, and a
:class:`LiveZone` follows it. Every test points the source at its own file, never at the
machine's ``/etc/localtime``."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from core.clock import FakeZone, LiveZone, SystemZone, local_zone
from core.policies.hours import parse_hours, zone_label

ZONEINFO = Path("/usr/share/zoneinfo")


def link(path: Path, zone: str) -> None:
    """Point ``path`` at ``zone`` the way a distribution's tool does (a new link, renamed)."""
    tmp = path.with_name(path.name + ".new")
    tmp.symlink_to(ZONEINFO / zone)
    os.replace(tmp, path)


class Ticks:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_new_link_target_is_noticed_without_a_restart(tmp_path: Path) -> None:
    path, ticks = tmp_path / "localtime", Ticks()
    link(path, "Europe/Berlin")
    source = SystemZone({}, str(path), monotonic=ticks)
    first = source.zone()
    assert zone_label(first) == "Europe/Berlin"
    assert source.zone() is first  # unchanged: the same object
    link(path, "Asia/Tokyo")
    assert source.zone() is first  # looked at once a second, not at every call
    ticks.now += 1.0
    assert zone_label(source.zone()) == "Asia/Tokyo"


def test_the_same_zone_linked_again_is_no_change(tmp_path: Path) -> None:
    path, ticks = tmp_path / "localtime", Ticks()
    link(path, "Europe/Berlin")
    source = SystemZone({}, str(path), recheck=0, monotonic=ticks)
    first = source.zone()
    link(path, "Europe/Berlin")  # a new inode, the same zone
    assert source.zone() is first


def test_a_copied_file_is_read_again_when_its_contents_change(tmp_path: Path) -> None:
    path = tmp_path / "localtime"
    path.write_bytes((ZONEINFO / "Europe/Berlin").read_bytes())
    source = SystemZone({}, str(path), recheck=0)
    first = source.zone()
    summer = datetime(2026, 7, 7, 12, tzinfo=UTC)
    assert first.utcoffset(summer.astimezone(first).replace(tzinfo=None)) == timedelta(hours=2)
    os.utime(path, ns=(1, 1))  # touched, the same bytes: no change
    assert source.zone() is first
    path.write_bytes((ZONEINFO / "Asia/Tokyo").read_bytes())
    changed = source.zone()
    assert changed is not first
    assert summer.astimezone(changed).hour == 21


def test_tz_wins_over_the_file(tmp_path: Path) -> None:
    path = tmp_path / "localtime"
    link(path, "Europe/Berlin")
    environ = {"TZ": ":America/New_York"}
    source = SystemZone(environ, str(path), recheck=0)
    assert zone_label(source.zone()) == "America/New_York"
    del environ["TZ"]
    assert zone_label(source.zone()) == "Europe/Berlin"


def test_the_test_variable_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "localtime"
    link(path, "Asia/Kolkata")
    environ = {"GOALKEEPER_LOCALTIME": str(path)}
    assert zone_label(local_zone(environ)) == "Asia/Kolkata"
    assert SystemZone(environ).path == str(path)
    assert SystemZone({}).path == "/etc/localtime"


def test_a_live_zone_follows_its_source() -> None:
    source = FakeZone(ZoneInfo("Europe/Berlin"))
    live = LiveZone(source.zone)
    hours = parse_hours("09:00-17:00").in_zone(live)
    evening = datetime(2026, 7, 7, 20, 0, tzinfo=UTC)  # 22:00 in Berlin, 05:00 in Tokyo
    assert not hours.allows(evening)
    assert hours.next_allowed(evening) == datetime(2026, 7, 8, 7, 0, tzinfo=UTC)
    assert hours.describe() == "09:00-17:00 (Europe/Berlin)"
    source.set("Asia/Tokyo")
    assert hours.next_allowed(evening) == datetime(2026, 7, 8, 0, 0, tzinfo=UTC)
    assert hours.describe() == "09:00-17:00 (Asia/Tokyo)"
    source.set("America/Phoenix")  # 13:00 there
    assert hours.allows(evening)


def test_a_live_zone_keeps_both_readings_of_a_repeated_hour() -> None:
    live = LiveZone(FakeZone(ZoneInfo("Europe/Berlin")).zone)
    first = datetime(2026, 10, 25, 0, 30, tzinfo=UTC).astimezone(live)
    second = datetime(2026, 10, 25, 1, 30, tzinfo=UTC).astimezone(live)
    assert (first.hour, first.minute) == (second.hour, second.minute) == (2, 30)
    assert (first.tzname(), second.tzname()) == ("CEST", "CET")
    assert second.astimezone(UTC) - first.astimezone(UTC) == timedelta(hours=1)
