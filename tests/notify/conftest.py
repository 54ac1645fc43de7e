"""Notification tests: a local HTTP server on 127.0.0.1 plays ntfy and a webhook receiver.

Nothing here leaves the machine: channels point at :func:`tests.real.mockhttp.serving`, the
keyring is a dict, proxies from the developer's environment are switched off, and backoff
sleeps on the fake clock, which :func:`drive` moves whenever a worker waits on it.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio

from core.clock import FakeClock
from core.engine import Engine
from core.notices import ChannelHealth
from core.notify.channels import Channel
from core.notify.delivery import ChannelWorker
from core.notify.retrying import DeliveryPolicy
from core.notify.service import Notifications
from core.settings import Settings
from tests.real.mockhttp import MockServer
from tests.support.fake_keyring import MemoryKeyring, memory_keyring_installed
from tests.support.notify import Factory, Rig, RigFactory, Script, reader_of, scripted_server


@pytest.fixture(autouse=True)
def _no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                 "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
def server(script: Script) -> Iterator[MockServer]:
    with scripted_server(script) as srv:
        yield srv


@pytest.fixture
def secrets() -> dict[str, str]:
    return {}


@pytest.fixture
def rig(clock: FakeClock, secrets: dict[str, str]) -> RigFactory:
    def make(channel: Channel, timeout: float = 2.0, seed: int = 3) -> Rig:
        healths: list[ChannelHealth] = []
        worker = ChannelWorker(channel, DeliveryPolicy(timeout=timeout), clock, host="box",
                               secrets=reader_of(secrets), rng=random.Random(seed),
                               on_health=healths.append)
        return Rig(worker, healths)

    return make


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    """The OS keyring, in a dict (as tests/pipeline does), for code that reads it for real."""
    with memory_keyring_installed() as backend:
        yield backend


@pytest_asyncio.fixture
async def notify(clock: FakeClock, secrets: dict[str, str]) -> AsyncIterator[Factory]:
    """Start a Notifications service on an engine's bus; stopped at teardown."""
    started: list[Notifications] = []

    async def make(engine: Engine, settings: Settings, **kw: Any) -> Notifications:
        service = Notifications(engine.bus, settings, clock, engine.goals.get,
                                secrets=reader_of(secrets), rng=random.Random(5), host="box",
                                **kw)
        await service.start()
        started.append(service)
        return service

    yield make
    for service in started:
        await service.stop(0)
