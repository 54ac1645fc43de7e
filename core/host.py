"""A host: the lease, the engine, its notifications and the control socket, started and stopped
together.

``goalkeeper daemon``, ``goalkeeper demo`` and the desktop app each run one :class:`Host`, so a
headless host notifies through ntfy and webhooks exactly like the desktop app does. While it
runs it writes a heartbeat into ``host.json`` every ``host_heartbeat_seconds``; a host that finds it
was replaced (a newer host's epoch, see :mod:`core.hosts.lease`) ends — :attr:`Host.ended`
completes with
the reason — and stops without writing anything more.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Sequence

from core.clock import Clock, SystemClock
from core.engine import Engine
from core.hosts.control import ControlServer, HostOps, NoHostRunning, send_request
from core.hosts.lease import HostInfo, HostLease
from core.i18n import N_
from core.models import HistoryRow
from core.notify.channels import NTFY_TOKEN
from core.notify.delivery import keyring_reader
from core.notify.listen import PhoneListener, PhoneParts, SecretKeyring
from core.notify.service import STATUS_OP, Notifications
from core.paths import Paths
from core.providers.base import Provider
from core.settings import Settings

log = logging.getLogger("goalkeeper")


class Host:
    """Owns the host lease, the :class:`Engine`, its :class:`Notifications`, the
    :class:`ControlServer` and the heartbeat.

    Attributes:
        ended: completes (with a reason) when another host replaced this one.
    """

    def __init__(self, paths: Paths, settings: Settings, providers: Sequence[Provider],
                 kind: str, clock: Clock | None = None, rng: random.Random | None = None
                 ) -> None:
        self.paths = paths
        self.kind = kind
        self.settings = settings
        self.clock = clock or SystemClock()
        self.lease = HostLease(paths, kind, self.clock.now(), settings.host_stale_seconds)
        self.engine = Engine(paths, settings, providers, self.clock, rng, fenced=True)
        self.engine.on_lease_lost = self._replaced
        self.phone = phone_listener(self.engine, settings)
        self.notifications = Notifications(self.engine.bus, settings, self.clock,
                                           lambda goal_id: self.engine.goals.get(goal_id),
                                           signer=self.phone.signer,
                                           phone_status=self.phone.status,
                                           zone=self.engine.zone)
        self.control = control_server(self.engine, paths)
        self.engine.host_registry.kind = kind
        self.control.register(STATUS_OP, self.notifications.status_op)
        for provider in providers:
            for op, handler in provider.control_ops().items():
                self.control.register(op, handler)
        self.info: HostInfo | None = None
        self.ended: asyncio.Future[str] | None = None
        self._beat: asyncio.Task[None] | None = None

    async def start(self) -> HostInfo:
        """Take the lease (raises HostAlreadyRunning), start the engine, open the socket."""
        self.ended = asyncio.get_running_loop().create_future()
        self.info = self.lease.acquire(self._answers)
        try:
            # before the engine: start-up recovery may already resume goals
            await self.notifications.start()
            await self.engine.start()
            await self.phone.start()
            await self.control.start()
            self.lease.heartbeat(self.clock.now(), epoch=self.engine.store.opened_epoch or 0)
            self._beat = asyncio.ensure_future(self._heartbeat())
            self._beat.set_name("goalkeeper:heartbeat")
        except BaseException:
            await self.phone.stop()
            await self.engine.stop()
            await self.notifications.stop(grace=0)
            self.lease.release()
            raise
        log.info("%s is the host for %s (pid %d)", self.kind, self.paths.data_dir, self.info.pid)
        return self.info

    def _answers(self, holder: HostInfo) -> bool:
        """Whether a host that looks hung still answers a ping."""
        if not holder.socket:
            return False
        from pathlib import Path

        try:
            reply = send_request(Path(holder.socket), {"op": "ping"},
                                 timeout=self.settings.host_ping_timeout_seconds)
        except (NoHostRunning, OSError, ValueError):
            return False
        return bool(reply.get("ok"))

    async def _heartbeat(self) -> None:
        while True:
            await self.clock.sleep(self.settings.host_heartbeat_seconds)
            if not self.lease.heartbeat(self.clock.now()):
                self._replaced(N_("another host replaced this one (host.json names it)"))
                return

    def _replaced(self, reason: str) -> None:
        if self.engine.lease_lost is None:
            self.engine.lease_lost = reason  # nothing more is written on the way out
        if self.ended is not None and not self.ended.done():
            log.error("stopping: %s", reason)
            self.ended.set_result(reason)

    async def stop(self) -> None:
        if self._beat is not None:
            self._beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._beat
            self._beat = None
        try:
            await self.control.stop()
            await self.phone.stop()
            await self.engine.stop()
            await self.notifications.stop()
        finally:
            self.lease.release()


def phone_listener(engine: Engine, settings: Settings) -> PhoneListener:
    """The command topic's listener, handed the engine's door, goals, store and clock."""
    writer = engine.store_writer

    async def get_meta(key: str) -> str | None:
        return await engine.store.run(lambda s: s.get_meta(key))

    async def set_meta(key: str, value: str) -> None:
        await writer.written(lambda s: s.set_meta(key, value))

    async def record(row: HistoryRow) -> None:
        engine.goal_book.announce(await writer.written(lambda s: s.append_history(row)))

    return PhoneListener(settings, PhoneParts(
        engine.perform, lambda goal: goal in engine.goals or goal in engine.others,
        get_meta, set_meta, record, SecretKeyring(), engine.clock,
        token=lambda: keyring_reader()(NTFY_TOKEN)))


def control_server(engine: Engine, paths: Paths) -> ControlServer:
    """The control socket of ``engine``: commands through its door, ``ping`` from its read
    model, ``refresh``, and safe mode's restore."""
    return ControlServer(paths, engine.perform, HostOps(
        engine.reads.ping, engine.refresh, engine.safe_mode.restore))
