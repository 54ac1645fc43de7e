"""Starting providers: a start that fails is shown as failed and tried again, with backoff.

A provider that cannot start (its home is unreadable, a file it needs is broken) must neither
take the host down nor be forgotten: its :class:`~core.health.ProviderHealth` says ``failed``
with the reason — in the window and in ``goalkeeper status`` — and the start is tried again
after :class:`StartRetryPolicy`'s delay, until it succeeds or the host stops.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from core.clock import Clock
from core.health import ProviderHealth
from core.providers.base import Provider

log = logging.getLogger("goalkeeper")


@dataclass(frozen=True)
class StartRetryPolicy:
    """When a failed provider start is tried again (retry-table.md: step-level retries).

    Attributes:
        initial: seconds before the first retry.
        factor: each further failure multiplies the wait by this.
        maximum: the wait never grows beyond this; retries go on at this pace.
    """

    initial: float = 30.0
    factor: float = 2.0
    maximum: float = 900.0

    def __post_init__(self) -> None:
        if not (0 < self.initial <= self.maximum and self.factor >= 1):
            raise ValueError("need 0 < initial <= maximum and factor >= 1")

    def delay(self, failures: int) -> float:
        return min(self.maximum, self.initial * self.factor ** min(max(failures - 1, 0), 32))


Spawn = Callable[[Awaitable[Any], str], "asyncio.Task[Any]"]


class ProviderSupervisor:
    """Owns each provider's start health and the tasks that retry failed starts."""

    def __init__(self, clock: Clock, spawn: Spawn, on_change: Callable[[], None],
                 on_late_start: Callable[[Provider], Awaitable[None]],
                 policy: StartRetryPolicy | None = None) -> None:
        self._clock = clock
        self._spawn = spawn
        self._on_change = on_change
        self._on_late_start = on_late_start
        self.policy = policy or StartRetryPolicy()
        self._health: dict[str, ProviderHealth] = {}
        self._retries: dict[str, asyncio.Task[Any]] = {}
        self.started: set[str] = set()

    @property
    def health(self) -> tuple[ProviderHealth, ...]:
        return tuple(self._health[name] for name in sorted(self._health))

    async def start(self, provider: Provider) -> bool:
        """Start ``provider``; on failure record it and keep retrying. True if it started."""
        if await self._attempt(provider):
            return True
        self._retries[provider.name] = self._spawn(self._retry(provider),
                                                   f"{provider.name}:start-retry")
        return False

    async def _attempt(self, provider: Provider) -> bool:
        try:
            await provider.start()
        except Exception as exc:
            self._failed(provider, exc)
            return False
        self.started.add(provider.name)
        self._set(ProviderHealth(provider.name, unreadable=provider.read_problems()))
        return True

    def _failed(self, provider: Provider, exc: Exception) -> None:
        before = self._health.get(provider.name)
        failing = before is not None and before.state == "failed"
        attempts = (before.attempts if before is not None and failing else 0) + 1
        now = self._clock.now()
        delay = self.policy.delay(attempts)
        reason = str(exc) or type(exc).__name__
        log.error("provider %s: start failed (attempt %d): %s; trying again in %.0f s",
                  provider.name, attempts, reason, delay, exc_info=exc)
        since = before.since if before is not None and failing else now
        self._set(ProviderHealth(provider.name, "failed", reason, since,
                                 now + timedelta(seconds=delay), attempts))

    async def _retry(self, provider: Provider) -> None:
        try:
            while True:
                await self._clock.sleep(self.policy.delay(self._health[provider.name].attempts))
                attempts = self._health[provider.name].attempts
                if await self._attempt(provider):
                    log.warning("provider %s started after %d failed attempts", provider.name,
                                attempts)
                    await self._on_late_start(provider)
                    return
        finally:
            self._retries.pop(provider.name, None)

    def _set(self, health: ProviderHealth) -> None:
        if self._health.get(health.name) != health:
            self._health[health.name] = health
            self._on_change()

    async def stop(self) -> None:
        tasks = list(self._retries.values())
        self._retries.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def mark(self, name: str, **changes: Any) -> None:
        """Adjust a provider's shown health (e.g. after the engine stopped it)."""
        if name in self._health:
            self._set(replace(self._health[name], **changes))
