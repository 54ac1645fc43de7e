"""Waiting for a turn's end is bounded in total, not per notification: a turn that keeps
streaming (deltas, items, rate limits — as the real CLI does all through a turn) is interrupted
``turn_end_timeout`` after the policy pause, not after that long a silence (a hosted run on a
scripted app-server)."""

from __future__ import annotations

import asyncio
import time
import types
from typing import Any

import pytest

from core.providers.codex.hosted import HostedRun, RunContext

TIMEOUT = 0.5


class StreamingServer:
    """An app-server stand-in whose turn streams a delta every 0.1 s until interrupted."""

    via_proxy = False
    pid = 1

    def __init__(self) -> None:
        self.notifications: asyncio.Queue[Any] = asyncio.Queue()
        self.requests: list[tuple[float, str]] = []
        self.running = True
        self.interrupted = asyncio.Event()
        self.t0 = time.monotonic()

    def push(self, item: Any) -> None:
        self.notifications.put_nowait(item)

    async def request(self, method: str, params: Any = None, timeout: float | None = None
                      ) -> dict[str, Any]:
        self.requests.append((time.monotonic() - self.t0, method))
        if method == "turn/interrupt":
            self.interrupted.set()
            self.push(("turn/completed", {"threadId": "t", "turn": {"id": "turn-1"}}))
        return {}

    async def close(self, grace: float | None = None) -> None:
        self.running = False

    async def stream(self) -> None:
        for _ in range(100):  # 10 s: far past the timeout
            if self.interrupted.is_set():
                return
            await asyncio.sleep(0.1)
            self.push(("item/agentMessage/delta", {"threadId": "t", "delta": "x"}))


@pytest.mark.asyncio
async def test_a_streaming_turn_is_interrupted_once_the_turn_end_timeout_has_passed() -> None:
    config = types.SimpleNamespace(turn_end_timeout=TIMEOUT)
    ctx = RunContext(config, lambda: None, None, lambda: None,  # type: ignore[arg-type]
                     lambda s, b: None, lambda g: None)
    server = StreamingServer()
    run = HostedRun(ctx, "codex:t", 1, "t", server)  # type: ignore[arg-type]
    server.push(("turn/started", {"threadId": "t", "turn": {"id": "turn-1"}}))
    run.follow()
    await asyncio.sleep(0.05)
    streaming = asyncio.ensure_future(server.stream())
    async with asyncio.timeout(5):
        await run.pause_gracefully()
    await streaming
    methods = [m for _, m in server.requests]
    assert methods == ["thread/goal/set", "turn/interrupt"]
    interrupted_at = server.requests[1][0]
    assert TIMEOUT <= interrupted_at < TIMEOUT + 1.0  # the stream went on for 10 s
