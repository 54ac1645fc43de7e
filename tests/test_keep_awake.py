"""Keep awake, honestly (issue 23): a sleep inhibitor from a fake logind on a private system bus
while a resume is due; none otherwise; what cannot be held is said."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from core.commands import Pause
from core.engine import Engine
from core.health import AwakeHealth, HostHealth, StoreHealth
from core.hosts.awake import AwakeParts, KeepAwake
from core.i18n.textfmt import short_time
from core.integration.inhibit import InhibitError, SleepLimits, battery_percent
from core.models import GoalState
from core.settings import Settings
from tests.support.engine import H, quota_paused
from tests.support.fake_login1 import FakeLogin1, private_system_bus
from tests.support.fakes import FakeProvider, advance, settled, until

LID_NOTE = "the machine will still sleep when the lid closes; the resume at {} will wait for it"


@pytest.fixture
def login1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLogin1]:
    with private_system_bus(tmp_path) as address:
        monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", address)
        fake = FakeLogin1(address)
        yield fake
        fake.close()


def _settings(**kw: object) -> Settings:
    return Settings(resume_jitter_seconds=0, **kw)  # type: ignore[arg-type]


async def _held(login1: FakeLogin1, count: int) -> None:
    await until(lambda: len(login1.held()) == count)


@pytest.mark.asyncio
async def test_taken_when_a_resume_comes_within_the_horizon_released_after_it(
        login1, make_engine, fake, clock) -> None:
    quota_paused(fake, clock, resets_in=13 * H)
    engine = await make_engine(fake, settings=_settings())
    await settled(engine)
    assert login1.inhibitors == []
    assert engine.health().awake == AwakeHealth("idle", horizon_hours=12)
    await advance(engine, clock, H + 60)  # the resume is now 12 h minus a little away
    await _held(login1, 1)
    held = login1.held()[0]
    due = engine.goals["fake:g"].next_resume_at
    assert (held.what, held.who, held.mode) == ("sleep", "Goalkeeper", "block")
    assert held.why == f"fake:g resumes at {short_time(due, clock.now(), english=True)}"
    await until(lambda: engine.health().awake is not None
                and engine.health().awake.state == "holding")
    await advance(engine, clock, 12 * H)  # past the reset: resumed
    assert engine.goals["fake:g"].state is GoalState.RUNNING
    await until(lambda: engine.health().awake.state == "idle")
    await _held(login1, 0)  # (the reason said "tomorrow 01:00" and then "01:00": retaken)
    assert {i.why.split(" resumes at ")[0] for i in login1.inhibitors} == {"fake:g"}


@pytest.mark.asyncio
async def test_held_across_a_restart_of_the_host(paths, fake, clock, login1) -> None:
    quota_paused(fake, clock)
    for _ in range(2):
        engine = Engine(paths, _settings(), [fake], clock, random.Random(7))
        await engine.start()
        await _held(login1, 1)
        await engine.stop()
        await _held(login1, 0)
    assert len(login1.inhibitors) == 2
    assert login1.inhibitors[0].why == login1.inhibitors[1].why


@pytest.mark.asyncio
async def test_released_when_the_user_pauses_the_goal(login1, make_engine, fake, clock) -> None:
    quota_paused(fake, clock)
    engine = await make_engine(fake, settings=_settings())
    await _held(login1, 1)
    await engine.perform(Pause("fake:g"), "cli")
    await _held(login1, 0)
    assert engine.health().awake == AwakeHealth("idle", horizon_hours=12)


@pytest.mark.asyncio
async def test_never_taken_with_the_feature_off(login1, make_engine, fake, clock) -> None:
    quota_paused(fake, clock)
    engine = await make_engine(fake, settings=_settings(keep_awake=False))
    await advance(engine, clock, H / 2)
    await advance(engine, clock, H)
    assert engine.goals["fake:g"].state is GoalState.RUNNING
    assert login1.inhibitors == []
    assert engine.health().awake == AwakeHealth("off", horizon_hours=12)


@pytest.mark.asyncio
async def test_not_for_a_goal_without_auto_resume(login1, make_engine, fake, clock) -> None:
    quota_paused(fake, clock, auto=False)
    engine = await make_engine(fake, settings=_settings())
    await advance(engine, clock, 60)
    assert login1.inhibitors == []


@pytest.mark.asyncio
async def test_the_lid_switch_note_when_logind_suspends_on_the_lid(login1, make_engine, fake,
                                                                   clock) -> None:
    login1.props["HandleLidSwitch"] = "suspend"
    quota_paused(fake, clock)
    engine = await make_engine(fake, settings=_settings())
    await _held(login1, 1)
    at = short_time(engine.goals["fake:g"].next_resume_at, clock.now(), english=True)
    await until(lambda: LID_NOTE.format(at) in engine.health().problems())
    assert engine.reads.health().to_json()["awake"]["state"] == "holding"
    assert engine.health().awake.after_wake == (
        "after a wake-up, a due resume starts within 60 s")


@pytest.mark.asyncio
async def test_no_lid_note_when_logind_honours_the_inhibitor(login1, make_engine, fake,
                                                             clock) -> None:
    login1.props.update(HandleLidSwitch="suspend", LidSwitchIgnoreInhibited=False)
    quota_paused(fake, clock)
    engine = await make_engine(fake, settings=_settings())
    await until(lambda: engine.health().awake.state == "holding")
    assert engine.health().problems() == []


@pytest.mark.asyncio
async def test_without_logind_it_says_so(make_engine, fake, clock) -> None:
    quota_paused(fake, clock)  # the test environment's system bus does not exist
    engine = await make_engine(fake, settings=_settings())
    await until(lambda: engine.health().awake.state == "let_go")
    problem = engine.health().problems()[0]
    assert problem.startswith("keep awake: not holding — cannot hold a sleep inhibitor: no "
                              "logind on the system bus")
    assert "waits for the machine to wake" in problem


@pytest.mark.asyncio
async def test_the_demo_holds_one_inhibitor_naming_the_goal_and_time(paths, clock,
                                                                     login1) -> None:
    from core.demo import DEMO_SETTINGS, DemoSession

    session = DemoSession(paths, Settings(**DEMO_SETTINGS), clock, lambda _: None)
    host = session.make_host()
    await host.start()
    try:
        engine = host.engine
        await session.restart_goals(host)
        while not any(g.state is GoalState.PAUSED and g.auto_resume
                      for g in engine.goals.values()):
            await settled(engine)
            clock.advance(1)
        await settled(engine)
        await _held(login1, 1)
        waiting = [g for g in engine.goals.values()
                   if g.state is GoalState.PAUSED and g.auto_resume]
        reasons = {f"{g.id} resumes at {short_time(g.next_resume_at, clock.now(), english=True)}"
                   for g in waiting}
        held = login1.held()
        assert len(held) == 1 and held[0].what == "sleep" and held[0].who == "Goalkeeper"
        assert held[0].why.split(" (and")[0] in reasons, (held[0].why, reasons)
        for _ in range(200):
            await settled(engine)
            clock.advance(1)
            if not any(g.state is GoalState.PAUSED and g.auto_resume
                       for g in engine.goals.values()):
                break
        await _held(login1, 0)
    finally:
        await host.stop()


# -- the room alone, with a fake inhibitor ------------------------------------------------------

class FakeInhibitor:
    name = "fake"

    def __init__(self, limits: SleepLimits | None = None, fail: str | None = None) -> None:
        self.held: list[str] = []
        self._limits, self._fail = limits or SleepLimits(), fail

    def take(self, why: str) -> Callable[[], None]:
        if self._fail:
            raise InhibitError(self._fail)
        self.held.append(why)
        return lambda: self.held.remove(why)

    def limits(self) -> SleepLimits:
        self.asked = getattr(self, "asked", 0) + 1
        return self._limits


async def _room(clock, goals, inhibitor, battery=None, **kw) -> KeepAwake:
    room = KeepAwake(AwakeParts(goals, clock, _settings(**kw), inhibitor, lambda: battery,
                                lambda: None))
    await room.refresh()
    return room


@pytest.mark.asyncio
async def test_on_battery_below_the_level_it_lets_go_and_says_so(make_engine, fake,
                                                                 clock) -> None:
    quota_paused(fake, clock)
    engine = await make_engine(fake, settings=_settings(keep_awake=False))
    inhibitor = FakeInhibitor()
    room = await _room(clock, engine.goals, inhibitor, battery=15.0)
    assert inhibitor.held == [] and room.health.state == "let_go"
    assert room.health.why is not None and room.health.why.startswith(
        "on battery at 15 % (below 20 %)")
    assert room.health.describe() in HostHealth(StoreHealth(), awake=room.health).problems()
    charged = await _room(clock, engine.goals, inhibitor, battery=25.0)
    assert len(inhibitor.held) == 1 and charged.health.state == "holding"
    await charged.stop()
    assert inhibitor.held == []


@pytest.mark.asyncio
async def test_idle_action_noted_only_while_not_held(make_engine, fake, clock) -> None:
    quota_paused(fake, clock)
    engine = await make_engine(fake, settings=_settings(keep_awake=False))
    limits = SleepLimits(idle_action="suspend", idle_seconds=1800)
    held = await _room(clock, engine.goals, FakeInhibitor(limits))
    assert held.health.notes == ()
    low = await _room(clock, engine.goals, FakeInhibitor(limits), battery=5.0)
    assert low.health.notes[0].startswith("logind will suspend after 30 min idle")


@pytest.mark.asyncio
async def test_a_goal_beyond_the_horizon_is_not_held(make_engine, fake, clock) -> None:
    quota_paused(fake, clock, resets_in=3 * H)
    engine = await make_engine(fake, settings=_settings(keep_awake=False))
    inhibitor = FakeInhibitor()
    room = await _room(clock, engine.goals, inhibitor, keep_awake_hours=2)
    assert inhibitor.held == [] and room.health.describe() == (
        "keep awake: nothing due within 2 h")
    assert await room.refresh() == pytest.approx(H + 45)


@pytest.mark.asyncio
async def test_logind_settings_are_asked_at_most_once_a_minute(make_engine, fake, clock) -> None:
    quota_paused(fake, clock)
    engine = await make_engine(fake, settings=_settings(keep_awake=False))
    inhibitor = FakeInhibitor()
    room = await _room(clock, engine.goals, inhibitor)
    await room.refresh()
    assert inhibitor.asked == 1
    clock.advance(61)
    await room.refresh()
    assert inhibitor.asked == 2


def test_health_round_trips_through_json() -> None:
    awake = AwakeHealth("holding", "g resumes at 03:10", 12, ("a note",), "after")
    health = HostHealth(StoreHealth(), awake=awake)
    assert HostHealth.from_json(health.to_json()) == health
    assert health.problems() == ["a note"]


def test_battery_from_sysfs(tmp_path: Path) -> None:
    def supply(name: str, **files: str) -> None:
        (tmp_path / name).mkdir()
        for key, value in files.items():
            (tmp_path / name / key).write_text(value + "\n")

    supply("BAT0", type="Battery", status="Discharging", capacity="42")
    assert battery_percent(tmp_path) == 42
    supply("AC", type="Mains", online="1")
    assert battery_percent(tmp_path) is None  # on mains
    assert battery_percent(tmp_path / "missing") is None


def test_settings_defaults() -> None:
    s = Settings()
    assert (s.keep_awake, s.keep_awake_hours, s.keep_awake_min_battery_percent) == (True, 12, 20)
    assert timedelta(hours=s.keep_awake_hours) == timedelta(hours=12)


_ = FakeProvider  # the fixture's type


def test_status_shows_what_it_holds_the_horizon_and_what_it_cannot(clock) -> None:
    from core import i18n
    from core.cli.common import HostView
    from core.cli.status import _host_lines

    lid = LID_NOTE.format("03:10")
    holding = AwakeHealth("holding", "g resumes at 03:10", 12, (lid,),
                          "after a wake-up, a due resume starts within 60 s")
    lines = _host_lines(HostView("running", None, HostHealth(StoreHealth(), awake=holding)),
                        clock.now())
    assert lines[1:] == [f"  {lid}", "  keep awake: holding a sleep inhibitor — g resumes at "
                         "03:10", "  after a wake-up, a due resume starts within 60 s"]
    idle = HostHealth(StoreHealth(), awake=AwakeHealth("idle", horizon_hours=8))
    assert _host_lines(HostView("running", None, idle), clock.now())[1:] == [
        "  keep awake: nothing due within 8 h"]
    i18n.use_language("zh_CN")
    zh = _host_lines(HostView("running", None, HostHealth(StoreHealth(), awake=holding)),
                     clock.now())
    assert "  合上盖子时机器仍会睡眠；03:10 的恢复将等到它唤醒" in zh
    assert "  保持唤醒：持有睡眠抑制锁 — g 将于 03:10 恢复" in zh
