"""Calls into a provider that must not take the host down: a failure is logged and shown.

A provider's ``stop``, ``pause_goal``, ``cancel_goal``, ``read_quotas`` or ``discover`` that
raises is a provider's bug or a broken agent install, not the host's: it is logged with its
traceback, announced once as a :class:`~core.events.Notice` and answered as ``None``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from core.events import EventBus, Notice
from core.i18n import N_
from core.models import Goal
from core.providers.base import Provider

log = logging.getLogger("goalkeeper")

T = TypeVar("T")
Spawn = Callable[[Awaitable[Any], str], "asyncio.Task[Any]"]


class ProviderCalls:
    """Guarded calls into the providers; owns nothing."""

    def __init__(self, providers: Mapping[str, Provider], bus: EventBus, spawn: Spawn) -> None:
        self._providers = providers
        self._bus = bus
        self._spawn = spawn

    async def guarded(self, provider: str, what: str, coro: Awaitable[T]) -> T | None:
        try:
            return await coro
        except Exception as exc:
            text = N_("provider {provider}: {what} failed: {error}").format(
                provider=provider, what=what, error=exc)
            log.exception("%s", text)
            self._bus.publish(Notice("error", text))
            return None

    async def stop_runner(self, goal: Goal, cancel: bool) -> None:
        """Stop the goal's agent (a user's pause or cancel)."""
        provider = self._providers.get(goal.provider)
        if provider is None:
            return
        action = provider.cancel_goal(goal) if cancel else provider.pause_goal(goal)
        await self.guarded(provider.name, "cancel" if cancel else "pause", action)

    def stop_gracefully(self, goal: Goal) -> None:
        """A policy pause: the provider stops the goal at the end of its turn where it can."""
        provider = self._providers.get(goal.provider)
        if provider is not None:
            self._spawn(self.guarded(provider.name, "pause",
                                     provider.pause_goal_gracefully(goal)),
                        f"policy-pause:{goal.id}")
