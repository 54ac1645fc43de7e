"""The Codex provider: live quota gauges and Codex goals, read from ``$CODEX_HOME``.

Signals (through the sink): ``quota_observed`` for every window of each newer rate-limit snapshot
found in a rollout.

Owns: the rollout index (offsets of every session file) and the follow task that polls it every
``poll_seconds``. Nothing here writes into ``$CODEX_HOME`` or touches the network.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from core.clock import Clock
from core.models import Goal, QuotaReading
from core.providers.base import GoalObservation, Provider, RunnerError, StartOutcome
from core.providers.codex.config import CodexConfig
from core.providers.codex.follow import Found, RolloutIndex
from core.providers.codex.limits import RateSnapshot, to_readings
from core.providers.codex.rollout import RateLine
from core.providers.codex.startup import latest_snapshot

log = logging.getLogger(__name__)


class CodexProvider(Provider):
    """Codex quota windows (``codex:5h``, ``codex:weekly``, ``codex:monthly``, ``codex:credits``).

    Attributes:
        snapshot: the newest rate-limit snapshot seen (rollout or app-server), or None.
        index: the :class:`RolloutIndex` of ``$CODEX_HOME/sessions``.
    """

    name = "codex"

    def __init__(self, config: CodexConfig, clock: Clock) -> None:
        super().__init__()
        self.config = config
        self.clock = clock
        self.description = f"Codex sessions and goals in {config.home}"
        self.index = RolloutIndex(config.sessions)
        self.snapshot: RateSnapshot | None = None
        self._follow_task: asyncio.Task[None] | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        self.snapshot = await asyncio.to_thread(self._read_start)
        self._follow_task = asyncio.ensure_future(self._follow())
        self._follow_task.set_name("codex:follow")

    def _read_start(self) -> RateSnapshot | None:
        return latest_snapshot(self.index.list_all())

    async def stop(self) -> None:
        if self._follow_task is not None:
            self._follow_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._follow_task
            self._follow_task = None

    async def _follow(self) -> None:
        while True:
            await self.clock.sleep(self.config.poll_seconds)
            try:
                await self.poll()
            except Exception:
                log.exception("following the Codex sessions failed")

    async def poll(self, full: bool | None = None) -> None:
        """Read what the rollouts gained since the last poll and report it."""
        found = await asyncio.to_thread(self.index.poll, (), full)
        for item in found:
            self._handle(item)

    def _handle(self, item: Found) -> None:
        if isinstance(item.event, RateLine):
            self._take_snapshot(item.event.snapshot)

    def _take_snapshot(self, snapshot: RateSnapshot) -> None:
        if self.snapshot is not None and snapshot.observed_at <= self.snapshot.observed_at:
            return  # an older line of a file read late: the gauges already know better
        self.snapshot = snapshot
        for reading in self.readings():
            self.sink.quota_observed(reading)

    def readings(self) -> list[QuotaReading]:
        if self.snapshot is None:
            return []
        return to_readings(self.snapshot, self.clock.now(), self.config.stale_after)

    # -- the provider interface ----------------------------------------------------------------

    async def discover(self) -> list[GoalObservation]:
        return []

    async def read_quotas(self, fresh: bool = False) -> list[QuotaReading]:
        return self.readings()

    async def start_goal(self, goal: Goal, fence: int) -> StartOutcome:
        raise RunnerError("Codex goals are started in Codex (/goal); Goalkeeper resumes them")

    async def resume_goal(self, goal: Goal, fence: int) -> StartOutcome:
        raise RunnerError("resuming Codex goals is not available yet")

    async def pause_goal(self, goal: Goal) -> None:
        return None

    async def cancel_goal(self, goal: Goal) -> None:
        return None

    def describe(self) -> dict[str, Any]:
        return {"home": str(self.config.home), "files": len(self.index.files)}
