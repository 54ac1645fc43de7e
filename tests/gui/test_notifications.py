"""Notifications: which events, what they say, each kind switchable, one seam for all."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import pytest_asyncio

from core.clock import FakeClock
from core.engine import Engine
from core.models import GoalState, HistoryRow, Outcome, PauseReason, Trigger
from core.settings import Settings
from gui.bridge import Bridge
from gui.notifications import Kind, Notification, enabled, notification_for
from gui.notifier import Notifier
from tests.support.fakes import FakeProvider, until

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 7, 7, 16, 0, tzinfo=UTC)


class RecordingBackend:
    name = "recording"

    def __init__(self) -> None:
        self.sent: list[Notification] = []

    def send(self, notification: Notification) -> None:
        self.sent.append(notification)

    def close(self) -> None:
        pass


def row(event: str, **kw: Any) -> HistoryRow:
    return HistoryRow(at=NOW, goal="g", event=event, **kw)


def test_which_rows_notify_and_what_they_say() -> None:
    def note(r: HistoryRow) -> tuple[Kind, str, str] | None:
        n = notification_for(r, "Refactor", NOW, BERLIN)
        return (n.kind, n.title, n.body) if n else None

    assert note(row("resumed", trigger=Trigger.AUTO, origin="scheduler")) == (
        Kind.RESUMED, "Resumed: Refactor",
        "The quota has refreshed; Goalkeeper resumed it at 18:00.")
    assert note(row("resumed", trigger=Trigger.WAKE))[2].startswith(  # type: ignore[index]
        "Resumed at 18:00, after the computer woke up")
    assert note(row("resumed", trigger=Trigger.STARTUP))[0] is Kind.RESUMED  # type: ignore[index]
    assert note(row("resumed", trigger=Trigger.MANUAL, origin="gui")) is None
    assert note(row("paused", reason="quota: 5-hour limit", detail={"relimited": True})) == (
        Kind.RELIMITED, "Limited again: Refactor",
        "Quota: 5-hour limit. It ran out of quota again soon after an automatic resume.")
    assert note(row("paused", reason="quota: 5-hour limit", detail={"relimited": False})) is None
    assert note(row("gave_up", reason="attempt cap reached (3/3)"))[:2] == (  # type: ignore[index]
        Kind.GAVE_UP, "Gave up on: Refactor")
    scheduled = row("resume_scheduled", reason="quota exhausted",
                    detail={"not_before": (NOW + timedelta(hours=2, minutes=40)).isoformat()})
    assert note(scheduled)[:2] == (Kind.SCHEDULED,  # type: ignore[index]
                                   "Refactor will resume at 20:40")
    assert note(row("done", reason="all 6 units done")) == (
        Kind.DONE, "Done: Refactor", "All 6 units done.")
    assert note(row("failed", reason="agent crashed"))[:2] == (  # type: ignore[index]
        Kind.FAILED, "Failed: Refactor")
    assert note(row("resume_requested", outcome=Outcome.FAILED, trigger=Trigger.AUTO,
                    reason="the agent refused to start"))[:2] == (  # type: ignore[index]
        Kind.FAILED, "Could not resume: Refactor")
    assert note(row("resume_requested", outcome=Outcome.DEFERRED, trigger=Trigger.AUTO)) is None
    assert note(row("discovered")) is None


def test_each_kind_has_its_switch() -> None:
    for kind in Kind:
        if kind is Kind.HINT:
            continue
        assert enabled(Settings(), kind)
        assert not enabled(Settings(**{f"notify_{kind.value}": False}), kind)
    assert enabled(Settings(notify_done=False), Kind.HINT)


@pytest_asyncio.fixture
async def recorded(bridge: Bridge) -> tuple[Notifier, RecordingBackend]:
    backend = RecordingBackend()
    return Notifier(bridge, backend), backend


async def quota_pause(engine: Engine, fake: FakeProvider, clock: FakeClock) -> None:
    await engine.set_auto_resume("fake:a", True)
    fake.observe("fake:a", GoalState.PAUSED, reason=PauseReason.QUOTA,
                 resets_at=clock.now() + timedelta(seconds=60), title="Refactor the parser")
    await engine.refresh()


@pytest.mark.asyncio
async def test_auto_resume_is_announced(recorded: tuple[Notifier, RecordingBackend],
                                        engine: Engine, fake: FakeProvider,
                                        clock: FakeClock) -> None:
    _notifier, backend = recorded
    await quota_pause(engine, fake, clock)
    assert [n.kind for n in backend.sent] == [Kind.SCHEDULED]
    assert backend.sent[0].title.startswith("Refactor the parser will resume at ")
    await until(lambda: clock.sleepers > 0)  # the scheduler sleeps on the fake clock
    clock.advance(106)  # reset + 45 s margin + a second
    await until(lambda: engine.goals["fake:a"].state is GoalState.RUNNING)
    await until(lambda: len(backend.sent) == 2)
    assert backend.sent[1].kind is Kind.RESUMED
    assert backend.sent[1].title == "Resumed: Refactor the parser"
    assert backend.sent[1].goal == "fake:a"


@pytest.mark.asyncio
async def test_relimited_soon_after_an_auto_resume(recorded: tuple[Notifier, RecordingBackend],
                                                   engine: Engine, fake: FakeProvider,
                                                   clock: FakeClock) -> None:
    _notifier, backend = recorded
    await quota_pause(engine, fake, clock)
    await until(lambda: clock.sleepers > 0)  # the scheduler sleeps on the fake clock
    clock.advance(106)
    await until(lambda: engine.goals["fake:a"].state is GoalState.RUNNING)
    clock.advance(60)
    fake.hit_limit(engine.goals["fake:a"], clock.now() + timedelta(hours=1),
                   detail="5-hour limit")
    await until(lambda: any(n.kind is Kind.RELIMITED for n in backend.sent))
    relimited = next(n for n in backend.sent if n.kind is Kind.RELIMITED)
    assert relimited.body.startswith("Quota: 5-hour limit.")


@pytest.mark.asyncio
async def test_switched_off_kinds_are_not_sent_but_history_keeps_them(
        bridge: Bridge, engine: Engine, fake: FakeProvider, clock: FakeClock) -> None:
    backend = RecordingBackend()
    Notifier(bridge, backend, lambda: Settings(notify_scheduled=False, notify_resumed=False))
    await quota_pause(engine, fake, clock)
    await until(lambda: clock.sleepers > 0)  # the scheduler sleeps on the fake clock
    clock.advance(106)
    await until(lambda: engine.goals["fake:a"].state is GoalState.RUNNING)
    await asyncio.sleep(0.01)
    assert backend.sent == []
    rows = await engine.history("fake:a", limit=20)
    assert {"resume_scheduled", "resumed"} <= {r.event for r in rows}


@pytest.mark.asyncio
async def test_done_and_failed(recorded: tuple[Notifier, RecordingBackend], engine: Engine,
                               fake: FakeProvider) -> None:
    _notifier, backend = recorded
    await engine.start_goal("fake:b")
    goal = engine.goals["fake:b"]
    fake.sink.goal_finished("fake:b", goal.fence, "all done")
    await engine.start_goal("fake:c")
    fake.sink.goal_failed("fake:c", engine.goals["fake:c"].fence, "the agent crashed")
    await until(lambda: len(backend.sent) == 2)
    assert [(n.kind, n.title) for n in backend.sent] == [
        (Kind.DONE, "Done: Write the docs"), (Kind.FAILED, "Failed: Port the tests")]
