"""The notification service: one classification for the tray and every remote channel.

:class:`Notifications` subscribes to the engine's bus. For every history row it asks
:func:`~core.notify.classify.notification_for` which kind it is, checks the kind's switch
(``notify_<kind>``), publishes :class:`~core.events.NotificationIssued` (the desktop app's tray
shows those — it keeps only the presentation) and offers the notification to each remote channel
whose minimum kind and *gates* admit it. Each channel delivers from its own queue
(:class:`~core.notify.delivery.ChannelWorker`), so nothing here ever waits on the network.

Gates are the hook for rules that hold a notification back by time — quiet hours, once the
resume policy has them (no setting for them exists yet, so none is installed): a gate is
``(channel name, notification, now) -> bool``.

A :class:`~core.notices.ChannelHealth` change is published as
:class:`~core.events.NotifyChannelChanged` (the window shows a failing channel) and served to
``goalkeeper status`` through the host's control socket (op ``notify-status``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import socket
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, tzinfo
from typing import Any

from core.clock import Clock
from core.events import Event, EventBus, HistoryRecorded, NotificationIssued, NotifyChannelChanged
from core.i18n import _
from core.models import Goal, HistoryRow
from core.notices import ChannelHealth, ChannelState, Kind, Notification
from core.notify.channels import Channel, channels_from
from core.notify.classify import enabled, notification_for
from core.notify.delivery import (
    ChannelWorker,
    DeliveryReport,
    SecretReader,
    Sender,
    keyring_reader,
)
from core.notify.http import post
from core.notify.phone import Signer
from core.notify.retrying import DeliveryPolicy
from core.settings import Settings

log = logging.getLogger("core.notify")

Gate = Callable[[str, Notification, datetime], bool]
#: the phone's signer while answering is on (:meth:`core.notify.listen.PhoneListener.signer`)
SignerSource = Callable[[], Signer | None]
GoalLookup = Callable[[str], Goal | None]
#: how long a stopping host lets the queues empty (real seconds)
STOP_GRACE_SECONDS = 3.0
STATUS_OP = "notify-status"


def make_test_notification(host: str, at: datetime) -> Notification:
    return Notification(Kind.TEST, _("Goalkeeper test notification"),
                        _("If you can read this, notifications from Goalkeeper on {host} reach "
                          "you.").format(host=host), at)


def policy_for(settings: Settings) -> DeliveryPolicy:
    return DeliveryPolicy(timeout=settings.notify_timeout_seconds)


class Notifications:
    """Owns the remote channels' workers and the thread pool they post from.

    Publishes (on the engine's bus): ``NotificationIssued``, ``NotifyChannelChanged``.
    """

    def __init__(self, bus: EventBus, settings: Settings, clock: Clock, goal: GoalLookup, *,
                 secrets: SecretReader | None = None, sender: Sender = post,
                 rng: random.Random | None = None, host: str | None = None,
                 gates: Sequence[Gate] = (), zone: tzinfo | None = None,
                 signer: SignerSource = lambda: None,
                 phone_status: Callable[[], dict[str, Any] | None] = lambda: None) -> None:
        self.settings = settings
        self.host = host or socket.gethostname()
        self.gates = list(gates)
        self._bus = bus
        self._clock = clock
        self._goal = goal
        self._secrets = secrets or keyring_reader()
        self._sender = sender
        self._rng = rng or random.Random()
        self._zone = zone
        self._signer = signer
        self._phone_status = phone_status
        self._executor: ThreadPoolExecutor | None = None
        self._workers: dict[str, ChannelWorker] = {}
        self._stopping: set[asyncio.Task[None]] = set()
        self._unsubscribe: Callable[[], None] | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Subscribe to the bus and start a worker per configured channel."""
        self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="gk-notify")
        self._unsubscribe = self._bus.subscribe(self._on_event)
        self._configure(self.settings)
        for worker in self._workers.values():
            log.info("notifications: %s to %s (from %s)", worker.channel.name,
                     worker.channel.target, worker.channel.min_kind.value)

    async def stop(self, grace: float = STOP_GRACE_SECONDS) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        workers, self._workers = list(self._workers.values()), {}
        await asyncio.gather(*(w.stop(grace) for w in workers))
        await asyncio.gather(*self._stopping, return_exceptions=True)
        if self._executor is not None:
            # a thread still waiting on a socket ends at its time-out; nobody waits for it
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    def apply(self, settings: Settings) -> None:
        """New settings (the desktop app's dialog): switches, channels and time-out at once."""
        self.settings = settings
        if self._executor is not None:
            self._configure(settings)

    def _configure(self, settings: Settings) -> None:
        wanted = {c.name: c for c in channels_from(settings)}
        policy = policy_for(settings)
        for name in list(self._workers):
            worker = self._workers[name]
            channel = wanted.get(name)
            if channel is not None and channel.url == worker.channel.url:
                worker.reconfigure(channel, policy)
                continue
            del self._workers[name]
            self._drop(worker)
        for name, channel in wanted.items():
            if name not in self._workers:
                self._workers[name] = worker = self._worker(channel, policy)
                worker.start()
                self._publish_health(worker.health)

    def _worker(self, channel: Channel, policy: DeliveryPolicy) -> ChannelWorker:
        return ChannelWorker(channel, policy, self._clock, host=self.host, secrets=self._secrets,
                             rng=self._rng, on_health=self._publish_health,
                             sender=self._sender, executor=self._executor)

    def _drop(self, worker: ChannelWorker) -> None:
        task = worker.cancel()
        if task is not None:
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)
        self._publish_health(ChannelHealth(worker.channel.name, worker.channel.target,
                                           worker.channel.min_kind, ChannelState.OFF))

    # -- events -> notifications ---------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if isinstance(event, HistoryRecorded):
            self.offer(event.row)

    def offer(self, row: HistoryRow) -> Notification | None:
        """Classify ``row``; if it is a notification that is switched on, issue it."""
        goal = self._goal(row.goal) if row.goal else None
        now = self._clock.now()
        notification = notification_for(row, goal, now, self._zone)
        if notification is None or not enabled(self.settings, notification.kind):
            return None
        if (signer := self._signer()) is not None:  # issue 23: answer from the phone
            notification = dataclasses.replace(notification, replies=signer.replies(
                notification.kind, notification.goal, now, _))
        self._bus.publish(NotificationIssued(notification))
        for worker in self._workers.values():
            if worker.channel.admits(notification) and all(
                    gate(worker.channel.name, notification, now) for gate in self.gates):
                worker.submit(notification)
        return notification

    def _publish_health(self, health: ChannelHealth) -> None:
        self._bus.publish(NotifyChannelChanged(health))

    # -- what the window, the dialog and `status` ask ------------------------------------------

    def health(self) -> list[ChannelHealth]:
        return [w.health for w in self._workers.values()]

    async def status_op(self, request: dict[str, Any]) -> dict[str, Any]:
        """The control op ``notify-status``: every channel's record, for ``goalkeeper status``."""
        return {"host": self.host, "channels": [h.to_json() for h in self.health()],
                "phone": self._phone_status()}

    async def send_test(self, only: str | None = None) -> list[DeliveryReport]:
        """A test message through each configured channel's queue (every kind filter and gate
        is bypassed); the reports say how it went."""
        note = make_test_notification(self.host, self._clock.now())
        futures = [w.submit_and_report(note) for name, w in self._workers.items()
                   if only in (None, name)]
        return list(await asyncio.gather(*futures))


async def send_test_now(settings: Settings, clock: Clock, only: str | None = None, *,
                        secrets: SecretReader | None = None, sender: Sender = post,
                        host: str | None = None) -> list[DeliveryReport]:
    """``goalkeeper notify test``: deliver a test message through each channel the settings
    configure, now, in this process (no host needed), with the same policy as a host."""
    host = host or socket.gethostname()
    reader = secrets or keyring_reader()
    note = make_test_notification(host, clock.now())
    rng = random.Random()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="gk-notify-test") as executor:
        reports = []
        for channel in channels_from(settings):
            if only in (None, channel.name):
                worker = ChannelWorker(channel, policy_for(settings), clock, host=host,
                                       secrets=reader, rng=rng, on_health=lambda _h: None,
                                       sender=sender, executor=executor)
                reports.append(await worker.deliver(note))
    return reports
