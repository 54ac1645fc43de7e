"""Notification tests: a local HTTP server on 127.0.0.1 plays ntfy and a webhook receiver.

Nothing here leaves the machine: channels point at :func:`tests.real.mockhttp.serving`, the
keyring is a dict, proxies from the developer's environment are switched off, and backoff
sleeps on the fake clock, which :func:`drive` moves whenever a worker waits on it.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from core.clock import FakeClock
from core.notices import ChannelHealth, Kind
from core.notify.channels import Channel, NtfyChannel, WebhookChannel
from core.notify.delivery import ChannelWorker, SecretReader
from core.notify.retrying import DeliveryPolicy
from tests.real.mockhttp import MockServer, Reply, Request, serving

#: a reply that never comes: the handler waits until the test ends
HANG = Reply(599)


class Script:
    """A server handler answering ``replies`` in order (the last one again and again)."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies) or [Reply.json({"id": "ok"})]
        self.release = threading.Event()

    def __call__(self, request: Request) -> Reply:
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if reply is HANG:
            self.release.wait(30)
            return Reply.json({}, 500)
        return reply


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
    try:
        with serving(script, poll_interval=0.02) as srv:
            yield srv
    finally:
        script.release.set()


@pytest.fixture
def secrets() -> dict[str, str]:
    return {}


def reader_of(secrets: dict[str, str]) -> SecretReader:
    async def read(name: str) -> str | None:
        return secrets.get(name)

    return read


@dataclass
class Rig:
    """A channel worker on the fake clock, and every health record it announced."""

    worker: ChannelWorker
    healths: list[ChannelHealth] = field(default_factory=list)


RigFactory = Callable[..., Rig]


@pytest.fixture
def rig(clock: FakeClock, secrets: dict[str, str]) -> RigFactory:
    def make(channel: Channel, timeout: float = 2.0, seed: int = 3) -> Rig:
        healths: list[ChannelHealth] = []
        worker = ChannelWorker(channel, DeliveryPolicy(timeout=timeout), clock, host="box",
                               secrets=reader_of(secrets), rng=random.Random(seed),
                               on_health=healths.append)
        return Rig(worker, healths)

    return make


def ntfy(server: MockServer, path: str = "/goals-7f3a", minimum: Kind = Kind.SCHEDULED
         ) -> NtfyChannel:
    return NtfyChannel("ntfy", server.url + path, minimum)


def webhook(server: MockServer, path: str = "/hook/T000/B000/XXXX",
            minimum: Kind = Kind.SCHEDULED) -> WebhookChannel:
    return WebhookChannel("webhook", server.url + path, minimum)


async def drive(clock: FakeClock, done: Callable[[], bool], timeout: float = 10.0) -> None:
    """Until ``done()``: whenever something sleeps on the fake clock, move it to its wake-up."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not done():
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        wake = clock.next_wakeup()
        if wake is not None:
            clock.advance(max(wake, 0.0))
        await asyncio.sleep(0.002)


@pytest.fixture
def memory_keyring() -> Iterator[Any]:
    """The OS keyring, in a dict (as tests/pipeline does), for code that reads it for real."""
    import keyring

    from tests.pipeline.conftest import MemoryKeyring

    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)
