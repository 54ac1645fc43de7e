"""The window shows how ntfy and the webhook are doing, and says so when one starts failing."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta

import pytest
import pytest_asyncio

from core.clock import FakeClock
from core.engine import Engine
from core.models import HistoryRow
from core.notices import ChannelHealth, ChannelState, Kind
from core.notify.service import Notifications
from core.settings import Settings
from gui.main_window import MainWindow
from gui.widgets.notify_status import FAILING_STYLE, indicator_text
from tests.real.mockhttp import MockServer, Reply
from tests.support.fakes import until
from tests.support.notify import Script, reader_of, scripted_server

NOW = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
def server(script: Script) -> Iterator[MockServer]:
    with scripted_server(script) as srv:
        yield srv


@pytest_asyncio.fixture
async def service(engine: Engine, clock: FakeClock, server: MockServer,
                  window: MainWindow) -> AsyncIterator[Notifications]:
    settings = Settings(notify_webhook_url=f"{server.url}/hook/SECRET",
                        notify_ntfy_url=f"{server.url}/goals")
    notifications = Notifications(engine.bus, settings, clock, engine.goals.get,
                                  secrets=reader_of({}), rng=random.Random(2), host="box")
    await notifications.start()
    yield notifications
    await notifications.stop(0)


def test_the_indicator_text() -> None:
    assert indicator_text([], NOW) == ("", "", False)
    ok = ChannelHealth("ntfy", "https://ntfy.sh/…", Kind.FAILED, ChannelState.OK,
                       last_delivered_at=NOW - timedelta(minutes=5), delivered=3)
    failing = ChannelHealth("webhook", "https://hooks.example.org/…", Kind.SCHEDULED,
                            ChannelState.FAILING, "HTTP 503 Service Unavailable (4 attempts)",
                            failing_since=NOW - timedelta(minutes=2), failed=2)
    text, tip, bad = indicator_text([ok, failing], NOW)
    assert text == "⚠ Notifications: ntfy ✓ · webhook failing" and bad
    assert tip.splitlines() == [
        "ntfy → https://ntfy.sh/… (from “failed”): last sent "
        f"{(NOW - timedelta(minutes=5)).astimezone().strftime('%H:%M')} — 3 sent, "
        "0 not delivered",
        "webhook → https://hooks.example.org/… (from “scheduled”): failing since "
        f"{(NOW - timedelta(minutes=2)).astimezone().strftime('%H:%M')}: HTTP 503 Service "
        "Unavailable (4 attempts) — 0 sent, 2 not delivered"]
    assert indicator_text([ok], NOW)[0] == "Notifications: ntfy ✓"


@pytest.mark.asyncio
async def test_without_channels_the_indicator_is_hidden(window: MainWindow) -> None:
    assert window.channels.isHidden() and window.channels.text() == ""


@pytest.mark.asyncio
async def test_a_failing_channel_is_shown_in_the_window(
        window: MainWindow, service: Notifications, server: MockServer, script: Script,
        clock: FakeClock) -> None:
    indicator = window.channels
    assert not indicator.isHidden()
    assert indicator.text() == ("Notifications: ntfy · nothing sent yet · "
                                "webhook · nothing sent yet")
    script.replies = [Reply.json({}, 400)]
    service.offer(HistoryRow(at=clock.now(), goal="fake:a", event="failed", reason="crashed"))
    await until(lambda: indicator.failing and len(server.requests) == 2)
    # The two channels deliver on their own; each failure is shown once it is known.
    await until(lambda: indicator.text()
                == "⚠ Notifications: ntfy failing · webhook failing")
    assert indicator.styleSheet() == FAILING_STYLE
    assert "HTTP 400 Bad Request" in indicator.toolTip() and "SECRET" not in indicator.toolTip()
    assert window.banner.text.startswith("Notifications to ")
    assert "are failing: HTTP 400 Bad Request" in window.banner.text and not window.banner.ok
    window.banner.hide()
    service.offer(HistoryRow(at=clock.now(), goal="fake:a", event="failed", reason="again"))
    await until(lambda: len(server.requests) == 4)
    await until(lambda: "1 sent" not in indicator.toolTip() and "2 not delivered"
                in indicator.toolTip())
    assert window.banner.isHidden()  # said once, not at every failure
    script.replies = [Reply.json({"id": "ok"})]
    service.offer(HistoryRow(at=clock.now(), goal="fake:a", event="done"))
    await until(lambda: indicator.text() == "Notifications: ntfy ✓ · webhook ✓")
    assert not indicator.failing and indicator.styleSheet() == ""
