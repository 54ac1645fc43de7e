"""The command topic's listener: takes the phone's signed answers and hands them to the door.

:class:`PhoneListener` is a room handed its collaborators (:class:`PhoneParts`): the door's
``perform``, a goal lookup, the store's ``meta`` through the write path (the nonces, the last
message id), a history recorder, the keyring, the clock and the stream opener. It

* reads (or, the first time, makes) the phone key in the OS keyring (``phone-key``) and derives
  the command topic from it (:func:`core.notify.phone.topic_for`) — nothing of either is written
  to a file or a log;
* subscribes to ``<server>/<topic>/json`` (outbound only: no port is opened), with ``since=`` the
  last message id it took (kept in the store), or the expiry's span the first time, so nothing is
  missed or taken twice across a reconnect or a restart;
* reconnects after the server goes away, with a growing pause (:class:`Backoff`);
* for each message: checks it (:func:`core.notify.phone.check`), the goal and the nonce, then
  ``perform(command, origin="phone")`` — every guard of the door applies and the history shows
  origin ``phone``. A refused message is recorded in the history (``phone_refused``) and logged
  (at most :data:`MAX_RECORDED_PER_HOUR` an hour; all are counted), never acted on.

Its state (``off``, ``connecting``, ``subscribed``, ``reconnecting``, ``error``) is
:meth:`status`, which ``goalkeeper status`` shows through the host's ``notify-status`` op.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any
from urllib.parse import quote

from core.clock import Clock
from core.commands import ActionResult, Command
from core.i18n import N_
from core.limits import clip
from core.models import HistoryEvent, HistoryRow, Outcome
from core.notices import ntfy_root_and_topic, redact
from core.notify.phone import (
    ORIGIN,
    PHONE_KEY,
    NonceBook,
    PhoneCommand,
    Refusal,
    Signer,
    allowed,
    check,
    new_key,
    topic_for,
)
from core.notify.stream import JsonStream, StreamError, open_stream
from core.settings import Settings

log = logging.getLogger("core.notify")

SINCE_KEY = "phone-since"
#: a keepalive comes every 45 s by default (ntfy's keepalive-interval); three missed: reconnect
IDLE_SECONDS = 150.0
CONNECT_TIMEOUT_SECONDS = 15.0
#: refusals written to the history per hour at most (all are counted in :meth:`status`)
MAX_RECORDED_PER_HOUR = 30

Perform = Callable[[Command, str], Awaitable[ActionResult]]
Opener = Callable[[str, dict[str, str], float], Awaitable[JsonStream]]


class ListenState(StrEnum):
    OFF = "off"
    CONNECTING = "connecting"
    SUBSCRIBED = "subscribed"
    RECONNECTING = "reconnecting"
    ERROR = "error"


@dataclass(frozen=True)
class Backoff:
    """Pauses between reconnects: ``first`` doubling up to ``cap`` seconds (monotonic)."""

    first: float = 1.0
    cap: float = 60.0

    def __post_init__(self) -> None:
        if not 0 < self.first <= self.cap:
            raise ValueError("0 < first <= cap")

    def delay(self, failures: int) -> float:
        return float(min(self.cap, self.first * 2 ** max(0, failures - 1)))


class Keyring:
    """The keyring calls the listener makes (``core.secrets.SecretStore``'s async side)."""

    async def fetch(self, names: list[str]) -> dict[str, str | None]:
        raise NotImplementedError

    async def put(self, name: str, value: str) -> None:
        raise NotImplementedError


class SecretKeyring(Keyring):
    """The OS keyring, every call in a thread and time-boxed."""

    def __init__(self) -> None:
        from core.secrets import SecretStore

        self._store = SecretStore(timeout=10.0)

    async def fetch(self, names: list[str]) -> dict[str, str | None]:
        return await self._store.fetch(names)

    async def put(self, name: str, value: str) -> None:
        await asyncio.wait_for(asyncio.to_thread(self._store.put, name, value),
                               self._store.timeout)


@dataclass(frozen=True)
class PhoneParts:
    """What the listener is handed.

    Attributes:
        perform: the door (``GoalDoor.perform``).
        known: whether a goal id names a goal (this host's or another's).
        get_meta / set_meta: the store's ``meta`` entries, through the write path.
        record: stores and announces a history row.
        keyring: where the phone key lives.
        clock: wall time for expiry, monotonic sleeps for the backoff.
        opener: opens the JSON stream (:func:`core.notify.stream.open_stream`).
    """

    perform: Perform
    known: Callable[[str], bool]
    get_meta: Callable[[str], Awaitable[str | None]]
    set_meta: Callable[[str, str], Awaitable[None]]
    record: Callable[[HistoryRow], Awaitable[None]]
    keyring: Keyring
    clock: Clock
    opener: Opener = open_stream
    backoff: Backoff = field(default_factory=Backoff)
    token: Callable[[], Awaitable[str | None]] | None = None


def command_server(settings: Settings) -> str:
    """The ntfy server of the command topic, ending in ``/`` (empty: none configured)."""
    if settings.phone_server_url:
        return settings.phone_server_url.rstrip("/") + "/"
    if settings.notify_ntfy_url:
        return ntfy_root_and_topic(settings.notify_ntfy_url)[0]
    return ""


class PhoneListener:
    """Owns the subscription task, the phone key while the host runs, and its state.

    Attributes:
        accepted / refused: commands carried out through the door / refused, since start.
    """

    def __init__(self, settings: Settings, parts: PhoneParts) -> None:
        self.settings = settings
        self._p = parts
        self._key: str | None = None
        self._task: asyncio.Task[None] | None = None
        self.state = ListenState.OFF
        self.reason: str | None = None
        self.accepted = 0
        self.refused = 0
        self._recorded: list[float] = []  # when refusals were written to the history
        self._last_id: str | None = None
        self._taking = asyncio.Lock()

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        return self.settings.phone_commands

    async def start(self) -> None:
        """With the feature on: subscribe in a task, which first reads (or makes) the key —
        a keyring that hangs does not hold the host's start up."""
        if not self.enabled:
            return
        server = command_server(self.settings)
        if not server:
            self._set(ListenState.ERROR, N_("no ntfy server: set notify_ntfy_url or "
                                            "phone_server_url"))
            return
        self._set(ListenState.CONNECTING)
        self._task = asyncio.ensure_future(self._run(server))
        self._task.set_name("goalkeeper:phone")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self.enabled:
            self._set(ListenState.OFF, None)

    async def _read_key(self) -> str:
        key = (await self._p.keyring.fetch([PHONE_KEY]))[PHONE_KEY]
        if not key:
            key = new_key()
            await self._p.keyring.put(PHONE_KEY, key)
            log.info("phone: made a new phone key (in the OS keyring)")
        return key

    def signer(self) -> Signer | None:
        """What the notifications sign their buttons with (None: answering is off)."""
        server = command_server(self.settings)
        if not self.enabled or self._key is None or not server:
            return None
        return Signer(self._key, server + topic_for(self._key),
                      allowed(self.settings.phone_actions),
                      timedelta(minutes=self.settings.phone_command_expiry_minutes))

    def status(self) -> dict[str, Any]:
        """For ``goalkeeper status``: the state, the server (redacted), why, and counts."""
        server = command_server(self.settings)
        return {"state": self.state.value, "server": redact(server) if server else "",
                "reason": self.reason, "accepted": self.accepted, "refused": self.refused,
                "actions": list(allowed(self.settings.phone_actions))}

    def _set(self, state: ListenState, reason: str | None = None) -> None:
        if (state, reason) != (self.state, self.reason):
            self.state, self.reason = state, reason
            if state in (ListenState.RECONNECTING, ListenState.ERROR):
                log.warning("phone: %s%s", state.value, f": {reason}" if reason else "")
            else:
                log.info("phone: %s", state.value)

    # -- the subscription ------------------------------------------------------------------------

    async def _run(self, server: str) -> None:
        try:
            self._key = await self._read_key()
        except Exception as exc:  # no usable keyring, a locked one: say so, do not listen
            self._set(ListenState.ERROR, N_("the phone key: {error}").format(error=exc))
            return
        try:
            self._last_id = await self._p.get_meta(SINCE_KEY)
        except Exception as exc:  # the store is not open yet: from the expiry's span
            log.info("phone: no last message id (%s)", type(exc).__name__)
        topic = topic_for(self._key)
        failures = 0
        while True:
            self._set(ListenState.CONNECTING if failures == 0 else ListenState.RECONNECTING,
                      self.reason)
            try:
                stream = await self._p.opener(self._url(server, topic), await self._headers(),
                                              CONNECT_TIMEOUT_SECONDS)
                try:
                    self._set(ListenState.SUBSCRIBED)
                    failures = 0
                    async for line in stream.lines(IDLE_SECONDS):
                        await self._on_line(line)
                    why = N_("the server closed the stream")
                finally:
                    await stream.close()
            except StreamError as exc:
                why = str(exc)
            failures += 1
            delay = self._p.backoff.delay(failures)
            self._set(ListenState.RECONNECTING, N_("{reason}; again in {seconds} s").format(
                reason=why, seconds=f"{delay:g}"))
            await self._p.clock.sleep(delay)

    def _url(self, server: str, topic: str) -> str:
        if self._last_id:
            since = quote(self._last_id, safe="")
        else:  # the first time: whatever could still be valid
            since = f"{int(self.settings.phone_command_expiry_minutes * 60)}s"
        return f"{server}{topic}/json?since={since}"

    async def _headers(self) -> dict[str, str]:
        from core.notify.channels import USER_AGENT

        headers = {"User-Agent": USER_AGENT, "Accept": "application/x-ndjson"}
        token = await self._p.token() if self._p.token is not None else None
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return headers

    async def _on_line(self, line: bytes) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return  # not ntfy's JSON: nothing to take
        if not isinstance(event, dict) or event.get("event") != "message":
            return  # open, keepalive, poll_request
        message = event.get("message")
        try:
            if isinstance(message, str):
                await self.take(message)
            if isinstance(event.get("id"), str):
                self._last_id = event["id"]
                await self._p.set_meta(SINCE_KEY, event["id"])
        except Exception:  # the store refused (safe mode, gone): the subscription goes on
            log.exception("phone: a command could not be handled")

    # -- one command -----------------------------------------------------------------------------

    async def take(self, message: str) -> ActionResult | Refusal:
        """Check one published message and, if it is a valid command, carry it out."""
        if self._key is None:
            return Refusal(N_("answering from the phone is off"))
        async with self._taking:  # one at a time: the nonce book is read, then written
            now = self._p.clock.now()
            found = check(message, self._key, now, allowed(self.settings.phone_actions))
            if isinstance(found, PhoneCommand):
                found = await self._admit(found, now)
            if isinstance(found, Refusal):
                await self._refuse(found, now)
                return found
            self.accepted += 1
            result = await self._p.perform(found.command(), ORIGIN)
            log.info("phone: %s %s: %s", found.action, found.goal, result.outcome.value)
            return result

    async def _admit(self, command: PhoneCommand, now: datetime) -> PhoneCommand | Refusal:
        if not self._p.known(command.goal):
            return Refusal(N_("unknown goal {goal!r}").format(goal=clip(command.goal, 80) or ""))
        fresh, kept = NonceBook.take(await self._p.get_meta(NonceBook.META_KEY), command, now)
        if not fresh:
            return Refusal(N_("replayed: this command was already taken"), command.goal)
        await self._p.set_meta(NonceBook.META_KEY, kept)
        return command

    async def _refuse(self, refusal: Refusal, now: datetime) -> None:
        self.refused += 1
        goal = refusal.goal if refusal.goal and self._p.known(refusal.goal) else None
        mono = self._p.clock.monotonic()
        self._recorded = [t for t in self._recorded if mono - t < 3600]
        if len(self._recorded) >= MAX_RECORDED_PER_HOUR:
            # whoever can read the notification topic can publish to the command topic: a flood
            # of junk is counted, not written to the history row by row
            log.debug("phone: refused (not recorded: %d this hour): %s", len(self._recorded),
                      refusal.reason)
            return
        self._recorded.append(mono)
        log.warning("phone: refused a command%s: %s", f" for {goal}" if goal else "",
                    refusal.reason)
        await self._p.record(HistoryRow(
            at=now, goal=goal, event=HistoryEvent.PHONE_REFUSED, origin=ORIGIN,
            outcome=Outcome.REFUSED, reason=refusal.reason))
