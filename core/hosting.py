"""A host: the lease, the engine, its notifications and the control socket, started and stopped
together.

``goalkeeper daemon``, ``goalkeeper demo`` and the desktop app each run one :class:`Host`, so a
headless host notifies through ntfy and webhooks exactly like the desktop app does.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence

from core.clock import Clock, SystemClock
from core.control import ControlServer
from core.engine import Engine
from core.host import HostInfo, HostLease
from core.notify.service import STATUS_OP, Notifications
from core.paths import Paths
from core.providers.base import Provider
from core.settings import Settings

log = logging.getLogger("goalkeeper")


class Host:
    """Owns the host lease, the :class:`Engine`, its :class:`Notifications` and the
    :class:`ControlServer`."""

    def __init__(self, paths: Paths, settings: Settings, providers: Sequence[Provider],
                 kind: str, clock: Clock | None = None, rng: random.Random | None = None
                 ) -> None:
        self.paths = paths
        self.kind = kind
        self.clock = clock or SystemClock()
        self.lease = HostLease(paths, kind, self.clock.now())
        self.engine = Engine(paths, settings, providers, self.clock, rng)
        self.notifications = Notifications(self.engine.bus, settings, self.clock,
                                           lambda goal_id: self.engine.goals.get(goal_id))
        self.control = ControlServer(self.engine, paths)
        self.control.register(STATUS_OP, self.notifications.status_op)
        for provider in providers:
            for op, handler in provider.control_ops().items():
                self.control.register(op, handler)
        self.info: HostInfo | None = None

    async def start(self) -> HostInfo:
        """Take the lease (raises HostAlreadyRunning), start the engine, open the socket."""
        self.info = self.lease.acquire()
        try:
            # before the engine: start-up recovery may already resume goals
            await self.notifications.start()
            await self.engine.start()
            await self.control.start()
        except BaseException:
            await self.engine.stop()
            await self.notifications.stop(grace=0)
            self.lease.release()
            raise
        log.info("%s is the host for %s (pid %d)", self.kind, self.paths.data_dir, self.info.pid)
        return self.info

    async def stop(self) -> None:
        try:
            await self.control.stop()
            await self.engine.stop()
            await self.notifications.stop()
        finally:
            self.lease.release()
