"""Hearing the shared store: ``LISTEN goalkeeper`` on a connection of its own, in a thread.

Every change a host commits is announced with ``NOTIFY`` (:mod:`core.store.postgres`): a goal
changed, a reading was stored, a request was posted or answered, a host came or went. The
:class:`Listener` hands each payload (a small JSON object) to ``deliver`` as it arrives; the
engine moves it onto its event loop. Notifications are not stored: one that is sent while the
listener is disconnected is lost — so after every (re)connection ``deliver`` gets
``{"k": "listening"}`` and the engine catches up by reading the store; a lost connection is
``{"k": "lost", "why": …}``, and the listener connects again with backoff.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from core.store.common import CHANNEL

log = logging.getLogger(__name__)

Deliver = Callable[[dict[str, Any]], None]
POLL_SECONDS = 0.5
RETRY_INITIAL_SECONDS = 0.5
RETRY_MAX_SECONDS = 30.0


class Listener:
    """Owns one listening connection and its thread. Attributes: ``connected``."""

    def __init__(self, conninfo: str, deliver: Deliver,
                 password: Callable[[], str | None] = lambda: None) -> None:
        self.conninfo = conninfo
        self.deliver = deliver
        self.password = password
        self.connected = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="goalkeeper-listen", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop listening (blocks up to ``timeout``: call it from a worker thread)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        import psycopg  # here: a one-machine store's host never loads the PostgreSQL driver

        delay = RETRY_INITIAL_SECONDS
        while not self._stop.is_set():
            try:
                self._listen()
                delay = RETRY_INITIAL_SECONDS
            except psycopg.Error as exc:
                why = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
                if self.connected or delay == RETRY_INITIAL_SECONDS:
                    log.warning("lost the shared store's notifications: %s", why)
                self.connected = False
                self._safe_deliver({"k": "lost", "why": why})
                self._stop.wait(delay)
                delay = min(delay * 2, RETRY_MAX_SECONDS)

    def _listen(self) -> None:
        import psycopg

        kwargs: dict[str, Any] = {"autocommit": True, "application_name": "goalkeeper-listen",
                                  "connect_timeout": 5}
        password = self.password()
        if password:
            kwargs["password"] = password
        with psycopg.connect(self.conninfo, **kwargs) as con:
            con.execute(f"LISTEN {CHANNEL}")
            self.connected = True
            self._safe_deliver({"k": "listening"})
            while not self._stop.is_set():
                for note in con.notifies(timeout=POLL_SECONDS):
                    self._payload(note.payload)
                    if self._stop.is_set():
                        break
                # a dead server is not noticed by a silent socket: ask it now and then
                con.execute("SELECT 1")
        self.connected = False

    def _payload(self, text: str) -> None:
        try:
            payload = json.loads(text)
        except ValueError:
            log.warning("an unreadable notification from the shared store: %.200s", text)
            return
        if isinstance(payload, dict):
            self._safe_deliver(payload)

    def _safe_deliver(self, payload: dict[str, Any]) -> None:
        try:
            self.deliver(payload)
        except Exception:  # the loop may be closing: the listener must not die of it
            log.exception("delivering a notification failed")
