"""The service on a real engine: real events reach ntfy and the webhook with the right kind."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from core.clock import FakeClock, iso
from core.commands import SetAutoResume
from core.engine import Engine
from core.events import Event, NotificationIssued, NotifyChannelChanged
from core.models import GoalState, HistoryRow, PauseReason
from core.notices import ChannelState, Kind, Notification
from core.settings import Settings
from tests.real.mockhttp import MockServer, Reply
from tests.support.fakes import FakeProvider, until
from tests.support.notify import HANG, Factory, Script, kinds, reader_of


async def quota_pause(engine: Engine, fake: FakeProvider, clock: FakeClock) -> None:
    await engine.perform(SetAutoResume("fake:a", True))
    fake.observe("fake:a", GoalState.PAUSED, reason=PauseReason.QUOTA,
                 resets_at=clock.now() + timedelta(seconds=60), title="Refactor the parser")
    await engine.refresh()


@pytest.mark.asyncio
async def test_an_automatic_resume_and_a_new_limit_reach_the_webhook(
        make_engine: Factory, notify: Factory, fake: FakeProvider, clock: FakeClock,
        server: MockServer, secrets: dict[str, str]) -> None:
    secrets["webhook-secret"] = "k"
    fake.observe("fake:a", GoalState.RUNNING, title="Refactor the parser")
    engine = await make_engine(fake)
    await notify(engine, Settings(notify_webhook_url=f"{server.url}/hook"))
    await quota_pause(engine, fake, clock)
    planned = engine.goals["fake:a"].next_resume_at
    assert planned is not None
    await until(lambda: kinds(server) == ["scheduled"])  # delivery needs no clock: a 200
    scheduled = server.requests[0].json()
    assert scheduled["goal"] == "fake:a" and scheduled["provider"] == "fake"
    assert scheduled["next_resume_at"] == iso(planned)
    assert server.requests[0].headers["x-goalkeeper-signature"].startswith("sha256=")

    await until(lambda: clock.sleepers > 0)  # the scheduler sleeps until the resume is due
    clock.advance(106)
    await until(lambda: engine.goals["fake:a"].state is GoalState.RUNNING)
    await until(lambda: kinds(server) == ["scheduled", "resumed"])
    resumed = server.requests[1].json()
    assert resumed["title"] == "Resumed: Refactor the parser"
    assert resumed["message"].startswith("The quota has refreshed; Goalkeeper resumed it at")
    assert resumed["at"].endswith("Z") and resumed["next_resume_at"] is None

    clock.advance(60)
    fake.hit_limit(engine.goals["fake:a"], clock.now() + timedelta(hours=1),
                   detail="5-hour limit")
    await until(lambda: "relimited" in kinds(server))
    relimited = next(r.json() for r in server.requests if r.json()["kind"] == "relimited")
    assert relimited["next_resume_at"] == iso(engine.goals["fake:a"].next_resume_at)
    assert relimited["next_resume_at"] is not None


@pytest.mark.asyncio
async def test_a_hanging_channel_never_holds_the_engine_up(
        make_engine: Factory, notify: Factory, fake: FakeProvider, clock: FakeClock,
        server: MockServer, script: Script) -> None:
    script.replies = [HANG]
    fake.observe("fake:a", GoalState.RUNNING, title="Refactor the parser")
    engine = await make_engine(fake)
    service = await notify(engine, Settings(notify_webhook_url=f"{server.url}/hook",
                                            notify_timeout_seconds=30))
    await quota_pause(engine, fake, clock)
    await until(lambda: len(server.requests) == 1)  # "scheduled" is stuck on the wire …
    await until(lambda: clock.sleepers > 0)
    clock.advance(106)  # … while the engine resumes the goal all the same
    await until(lambda: engine.goals["fake:a"].state is GoalState.RUNNING)
    assert len(server.requests) == 1
    assert service.health()[0].state is ChannelState.IDLE  # still on its first attempt


@pytest.mark.asyncio
async def test_each_channel_gets_its_minimum_kind_and_what_the_gates_let_through(
        make_engine: Factory, notify: Factory, fake: FakeProvider, clock: FakeClock,
        server: MockServer) -> None:
    engine = await make_engine(fake)
    held: list[tuple[str, Kind]] = []

    def quiet_for_ntfy(channel: str, notification: Notification, now: datetime) -> bool:
        if channel == "ntfy" and notification.kind is Kind.DONE:
            held.append((channel, notification.kind))
            return False
        return True

    service = await notify(engine, Settings(
        notify_ntfy_url=f"{server.url}/goals", notify_ntfy_min_kind=Kind.DONE,
        notify_webhook_url=f"{server.url}/hook", notify_webhook_min_kind=Kind.FAILED),
        gates=[quiet_for_ntfy])
    now = clock.now()
    for event, extra in (("resume_scheduled", {"detail": {"not_before": now.isoformat()}}),
                         ("done", {}), ("gave_up", {"reason": "attempt cap reached"}),
                         ("paused", {"detail": {"relimited": True}})):
        assert service.offer(HistoryRow(at=now, goal="g", event=event, **extra)) is not None
    await until(lambda: len(server.requests) == 3)
    await asyncio.sleep(0.05)
    to_ntfy = [r.json()["tags"][2] for r in server.requests if r.path == "/"]
    assert to_ntfy == ["gave_up", "relimited"]  # done: held back by the gate
    assert kinds(server) == ["gave_up"]
    assert held == [("ntfy", Kind.DONE)]


@pytest.mark.asyncio
async def test_a_switched_off_kind_reaches_no_channel_and_is_not_issued(
        make_engine: Factory, notify: Factory, fake: FakeProvider, clock: FakeClock,
        server: MockServer) -> None:
    engine = await make_engine(fake)
    issued: list[Event] = []
    engine.bus.subscribe(lambda e: issued.append(e) if isinstance(e, NotificationIssued)
                         else None)
    service = await notify(engine, Settings(notify_webhook_url=f"{server.url}/hook",
                                            notify_done=False))
    assert service.offer(HistoryRow(at=clock.now(), goal="g", event="done")) is None
    assert service.offer(HistoryRow(at=clock.now(), goal="g", event="failed")) is not None
    await until(lambda: len(server.requests) == 1)
    assert kinds(server) == ["failed"]
    assert [e.notification.kind for e in issued] == [Kind.FAILED]  # type: ignore[union-attr]


@pytest.mark.asyncio
async def test_health_is_announced_and_settings_apply_at_once(
        make_engine: Factory, notify: Factory, fake: FakeProvider, clock: FakeClock,
        server: MockServer, script: Script) -> None:
    engine = await make_engine(fake)
    changes: list[tuple[str, ChannelState]] = []
    engine.bus.subscribe(lambda e: changes.append((e.health.channel, e.health.state))
                         if isinstance(e, NotifyChannelChanged) else None)
    script.replies = [Reply.json({}, 400)]
    service = await notify(engine, Settings(notify_webhook_url=f"{server.url}/hook"))
    assert changes == [("webhook", ChannelState.IDLE)]
    service.offer(HistoryRow(at=clock.now(), goal="g", event="failed"))
    await until(lambda: service.health()[0].failing)
    reply = await service.status_op({})
    assert reply["host"] == "box" and reply["channels"][0]["state"] == "failing"
    assert reply["channels"][0]["reason"] == "HTTP 400 Bad Request"
    # the minimum kind changes: same channel, same record
    service.apply(Settings(notify_webhook_url=f"{server.url}/hook",
                           notify_webhook_min_kind=Kind.GAVE_UP))
    assert service.health()[0].failing and service.health()[0].min_kind is Kind.GAVE_UP
    # another URL: a new channel record; no URL: the channel is off
    service.apply(Settings(notify_webhook_url=f"{server.url}/other"))
    assert service.health()[0].state is ChannelState.IDLE
    service.apply(Settings())
    assert service.health() == []
    assert changes[-3:] == [("webhook", ChannelState.OFF), ("webhook", ChannelState.IDLE),
                            ("webhook", ChannelState.OFF)]


@pytest.mark.asyncio
async def test_a_test_message_goes_through_every_channel(server: MockServer) -> None:
    from core.notify.service import send_test_now

    settings = Settings(notify_ntfy_url=f"{server.url}/goals",
                        notify_webhook_url=f"{server.url}/hook",
                        notify_ntfy_min_kind=Kind.GAVE_UP, notify_done=False)
    reports = await send_test_now(settings, FakeClock(datetime(2026, 7, 7, tzinfo=UTC)),
                                  secrets=reader_of({}), host="box")
    assert [(r.channel, r.delivered) for r in reports] == [("ntfy", True), ("webhook", True)]
    assert server.requests[0].json()["tags"][:3] == ["test_tube", "goalkeeper", "test"]
    assert server.requests[1].json()["kind"] == "test"
    only = await send_test_now(settings, FakeClock(), "webhook", secrets=reader_of({}))
    assert [r.channel for r in only] == ["webhook"]
