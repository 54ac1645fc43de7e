"""Notification test helpers: a scripted local HTTP server's handler, channels pointing at it, a
worker rig on the fake clock and :func:`drive`, which moves that clock whenever a worker sleeps.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from core.clock import FakeClock
from core.notices import ChannelHealth, Kind
from core.notify.channels import NtfyChannel, WebhookChannel
from core.notify.delivery import ChannelWorker, SecretReader
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


@contextmanager
def scripted_server(script: Script) -> Iterator[MockServer]:
    """A local server answering with ``script``; a hanging reply is let go on the way out."""
    try:
        with serving(script, poll_interval=0.02) as srv:
            yield srv
    finally:
        script.release.set()


Factory = Callable[..., Any]


def kinds(server: MockServer, path: str = "/hook") -> list[str]:
    return [r.json()["kind"] for r in server.requests if r.path == path]
