"""Delivery: one queue and one worker per remote channel, off the engine's path.

The engine's bus hands a notification to :meth:`ChannelWorker.submit`, which only appends to the
channel's queue (bounded: when it is full the oldest waiting notification is dropped) and
returns. The worker task takes them in order and, for each, reads the channel's secret from the
keyring (in a thread, time-boxed), builds the request and POSTs it in a thread with the
policy's time-out, retrying per :mod:`core.notify.retrying`. Backoff sleeps go through the injected
:class:`~core.clock.Clock`, so tests move a fake clock instead of waiting.

Every outcome updates the channel's :class:`~core.notices.ChannelHealth` (announced through
``on_health``); a failure is logged once per reason until the channel delivers again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.clock import Clock
from core.i18n import N_
from core.i18n.textfmt import short_time
from core.notices import ChannelHealth, Notification
from core.notify.channels import Channel
from core.notify.http import Request, Response, post
from core.notify.retrying import DeliveryPolicy, Verdict, describe, verdict
from core.retry.policy import Action, RetryDecision
from core.secrets import SecretStore, SecretStoreError, SecretStoreUnavailable

log = logging.getLogger("core.notify")

#: notifications waiting per channel; beyond this the oldest is dropped
MAX_QUEUED = 100
KEYRING_TIMEOUT_SECONDS = 10.0

Sender = Callable[[Request, float], Response]
SecretReader = Callable[[str], Awaitable[str | None]]
HealthListener = Callable[[ChannelHealth], None]


def keyring_reader(store: SecretStore | None = None) -> SecretReader:
    """Read a channel's secret from the OS keyring. Without a usable keyring nothing can have
    been stored (``secret set`` refuses), so that is "no secret"; a keyring that fails or hangs
    is an error the delivery reports."""
    keyring = store or SecretStore(timeout=KEYRING_TIMEOUT_SECONDS)

    async def read(name: str) -> str | None:
        try:
            return (await keyring.fetch([name]))[name]
        except SecretStoreUnavailable:
            return None

    return read


@dataclass(frozen=True)
class DeliveryReport:
    """How one notification went on one channel.

    Attributes:
        delivered: the server accepted it (2xx).
        attempts: HTTP attempts made (0: not sent at all — resting, keyring, dropped).
        reason / key: why not (secret-free), and its category (logged once per category).
        rest_until: the server asked for a pause; nothing is sent before then.
    """

    channel: str
    delivered: bool
    attempts: int
    reason: str | None = None
    key: str | None = None
    rest_until: datetime | None = None


class ChannelWorker:
    """Delivers one channel's notifications in order. Owns its queue, its task and its health.

    Calls ``on_health(ChannelHealth)`` after every change of the channel's record.
    """

    def __init__(self, channel: Channel, policy: DeliveryPolicy, clock: Clock, *,
                 host: str, secrets: SecretReader, rng: random.Random,
                 on_health: HealthListener, sender: Sender = post,
                 executor: Executor | None = None, max_queued: int = MAX_QUEUED) -> None:
        self.channel = channel
        self.policy = policy
        self._clock = clock
        self._host = host
        self._secrets = secrets
        self._rng = rng
        self._on_health = on_health
        self._sender = sender
        self._executor = executor
        self._queue: asyncio.Queue[tuple[Notification, asyncio.Future[DeliveryReport] | None]]
        self._queue = asyncio.Queue(max_queued)
        self._task: asyncio.Task[None] | None = None
        self._logged: set[str] = set()
        self.rest_until: datetime | None = None
        self.health = ChannelHealth(channel.name, channel.target, channel.min_kind)

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())
            self._task.set_name(f"goalkeeper:notify-{self.channel.name}")

    def cancel(self) -> asyncio.Task[None] | None:
        """Stop at once (what is queued is dropped); returns the task to await."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        return task

    async def stop(self, grace: float) -> None:
        """Let the queue empty for up to ``grace`` seconds (real time), then stop."""
        if self._task is not None and grace > 0:
            try:
                await asyncio.wait_for(self._queue.join(), grace)
            except TimeoutError:
                log.info("%s: stopping with %d notification(s) not delivered",
                         self.channel.name, self._queue.qsize())
        task = self.cancel()
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    def reconfigure(self, channel: Channel, policy: DeliveryPolicy) -> None:
        """Same channel and URL, other minimum kind or time-out: keep the queue and record."""
        self.channel, self.policy = channel, policy
        self._set(dataclasses.replace(self.health, min_kind=channel.min_kind))

    # -- submitting ----------------------------------------------------------------------------

    def submit(self, notification: Notification) -> None:
        """Queue ``notification`` and return at once."""
        self._enqueue(notification, None)

    def submit_and_report(self, notification: Notification) -> asyncio.Future[DeliveryReport]:
        """Queue ``notification``; the future gets its :class:`DeliveryReport`."""
        future: asyncio.Future[DeliveryReport] = asyncio.get_running_loop().create_future()
        self._enqueue(notification, future)
        return future

    def _enqueue(self, notification: Notification,
                 future: asyncio.Future[DeliveryReport] | None) -> None:
        if self._queue.full():
            dropped, waiting = self._queue.get_nowait()
            self._queue.task_done()
            self._set(dataclasses.replace(self.health, dropped=self.health.dropped + 1))
            self._log_once("queue-full", "%s: %d notifications waiting; dropping the oldest "
                           "(%s)", self.channel.name, self._queue.maxsize, dropped.kind.value)
            if waiting is not None and not waiting.done():
                waiting.set_result(DeliveryReport(self.channel.name, False, 0,
                                                  "dropped: the queue was full", "queue-full"))
        self._queue.put_nowait((notification, future))

    async def _run(self) -> None:
        while True:
            notification, future = await self._queue.get()
            try:
                report = await self.deliver(notification)
                if future is not None and not future.done():
                    future.set_result(report)
            except Exception:  # a bug here must not end the channel
                log.exception("%s: delivery failed unexpectedly", self.channel.name)
            finally:
                self._queue.task_done()

    # -- one delivery --------------------------------------------------------------------------

    async def deliver(self, notification: Notification) -> DeliveryReport:
        """Send one notification now (with retries) and record how it went."""
        report = await self._attempt_all(notification)
        self._record(report, notification)
        return report

    async def _attempt_all(self, notification: Notification) -> DeliveryReport:
        name = self.channel.name
        now = self._clock.now()
        if self.rest_until is not None and now < self.rest_until:
            return DeliveryReport(name, False, 0, N_("the server asked to wait until {time}")
                                  .format(time=short_time(self.rest_until, now, english=True)),
                                  "resting", self.rest_until)
        try:
            secret = await self._secrets(self.channel.secret_name)
        except SecretStoreError as exc:
            return DeliveryReport(name, False, 0, N_("cannot read {name} from the keyring: "
                                                     "{error}").format(
                name=self.channel.secret_name, error=exc), "keyring")
        delivery_id = f"{self._rng.getrandbits(64):016x}"
        request = self.channel.request(notification, secret, delivery_id, self._host)
        return await self._post(request)

    async def _post(self, request: Request) -> DeliveryReport:
        loop = asyncio.get_running_loop()
        attempt = 0
        while True:
            attempt += 1
            response = await loop.run_in_executor(self._executor, self._sender, request,
                                                  self.policy.timeout)
            now = self._clock.now()
            found = verdict(response, now)
            if found.malformed_retry_after:
                self._log_once("malformed-retry-after", "%s: ignoring a malformed Retry-After "
                               "header", self.channel.name)
            decision = self.policy.decide(found, response.status, attempt, now,
                                          self._rng.random())
            if decision.action is not Action.RETRY:
                return self._settled(decision, found, response, attempt, now)
            reason, _ = describe(response, self.policy.timeout, self.channel.auth_hint)
            log.debug("%s: attempt %d: %s; retrying in %.1f s", self.channel.name, attempt,
                      reason, decision.delay)
            self._set(self.health.retrying(now, N_("{reason}; retrying").format(reason=reason)))
            await self._clock.sleep(decision.delay)

    def _settled(self, decision: RetryDecision, found: Verdict, response: Response,
                 attempt: int, now: datetime) -> DeliveryReport:
        name = self.channel.name
        if decision.action is Action.SUCCEED:
            return DeliveryReport(name, True, attempt)
        reason, key = describe(response, self.policy.timeout, self.channel.auth_hint)
        if decision.action is Action.WAIT_QUOTA and decision.until is not None:
            self.rest_until = decision.until + timedelta(
                seconds=self._rng.random() * self.policy.rest_jitter)
            return DeliveryReport(name, False, attempt, N_(
                "{reason}: the server asked to wait {seconds} s; nothing is sent before {time}"
            ).format(reason=reason, seconds=f"{found.retry_after or 0:g}",
                     time=short_time(self.rest_until, now, english=True)), key, self.rest_until)
        if attempt > 1:
            reason = N_("{reason} ({n} attempts)").format(reason=reason, n=attempt)
        return DeliveryReport(name, False, attempt, reason, key)

    # -- the record ----------------------------------------------------------------------------

    def _record(self, report: DeliveryReport, notification: Notification) -> None:
        now = self._clock.now()
        if report.delivered:
            if self.health.failing:
                log.info("%s: delivering again to %s", self.channel.name, self.channel.target)
            self._logged.clear()
            log.info("%s: sent %s%s", self.channel.name, notification.kind.value,
                     f" for {notification.goal}" if notification.goal else "")
            self._set(self.health.succeeded(now))
            return
        self._log_once(report.key or "other", "%s: a %s notification was not delivered to %s: "
                       "%s", self.channel.name, notification.kind.value, self.channel.target,
                       report.reason)
        self._set(self.health.failed_now(now, report.reason or N_("not delivered")))

    def _log_once(self, key: str, message: str, *args: object) -> None:
        if key not in self._logged:
            self._logged.add(key)
            log.warning(message, *args)

    def _set(self, health: ChannelHealth) -> None:
        if health != self.health:
            self.health = health
            self._on_health(health)
