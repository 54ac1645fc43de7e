"""An action on a goal another host owns, asked from the command line — through the store.

The CLI on any machine reaches any goal's owner the way a host does (:mod:`core.hosts.remote`):
it checks the owner's heartbeat lease (an offline owner: refused, "host X offline since T"),
posts the request in the shared store and waits for the owner's answer — woken by ``LISTEN``,
looking at its request itself now and then — and gives up by expiring the request (then it is
never carried out). No host needs to run on this machine.
"""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import Any

import psycopg

from core.clock import SystemClock
from core.commands import ActionResult
from core.hosts.remote import (
    ANSWER_MARGIN_SECONDS,
    no_answer_text,
    not_taken_text,
    offline_text,
    refused,
)
from core.i18n import N_
from core.models import Outcome
from core.store import StoreError
from core.store.common import CHANNEL
from core.store.postgres import PostgresStore, first_line
from core.store.target import open_shared

POLL_SECONDS = 0.25


def ask_owner(url: str, me: str, owner: str, request: dict[str, Any], lease_seconds: float,
              start_timeout: float) -> dict[str, Any]:
    """The owner's reply (an ActionResult's JSON), or a refusal / failure saying why."""
    store = open_shared(url, migrate=False)
    try:
        return _ask(url, store, me, owner, request, lease_seconds, start_timeout)
    except psycopg.Error as exc:  # the LISTEN connection's own (the store maps its calls')
        raise _failure(store, exc) from None
    finally:
        store.close()


def _ask(url: str, store: Any, me: str, owner: str, request: dict[str, Any],
         lease_seconds: float, start_timeout: float) -> dict[str, Any]:
    clock = SystemClock()
    goal_id = str(request.get("goal") or "")
    record = store.get_host(owner)
    if (why := offline_text(owner, record, lease_seconds, clock.now())) is not None:
        return refused(goal_id, why)
    timeout = start_timeout + ANSWER_MARGIN_SECONDS
    with _listening(url, store) as notes:
        now = clock.now()
        request_id = store.post_request(owner, request, f"cli@{me}", now,
                                        now + timedelta(seconds=timeout))
        return _wait(store, notes, request_id, owner, goal_id, timeout, clock)


def _failure(store: Any, exc: psycopg.Error) -> StoreError:
    """A psycopg error of the listening connection as the store's typed error, with the
    store's words (a standby, ``cannot execute LISTEN during recovery``: unavailable)."""
    if isinstance(store, PostgresStore):
        return store.failure(exc)
    return StoreError(N_("cannot listen on the shared store: {error}").format(
        error=first_line(exc)))


@contextlib.contextmanager
def _listening(url: str, store: Any) -> Any:
    """A second connection that LISTENs (before the request is posted: no answer is missed)."""
    password = store.password if isinstance(store, PostgresStore) else None
    try:
        con = psycopg.connect(url, autocommit=True, password=password or None,
                              connect_timeout=5)
    except psycopg.Error as exc:
        raise StoreError(N_("cannot listen on the shared store: {error}").format(
            error=first_line(exc))) from None
    try:
        con.execute(f"LISTEN {CHANNEL}")
        yield con
    finally:
        con.close()


def _wait(store: Any, notes: Any, request_id: int, owner: str, goal_id: str, timeout: float,
          clock: SystemClock) -> dict[str, Any]:
    deadline = clock.monotonic() + timeout
    expired = False
    while True:
        found = store.get_request(request_id)
        if found is not None and found.answer is not None:
            return dict(found.answer)
        if clock.monotonic() > deadline:
            if not expired and store.expire_request(request_id, clock.now()):
                return ActionResult(goal_id, Outcome.FAILED,
                                    not_taken_text(owner, timeout)).to_json()
            if expired:
                return ActionResult(goal_id, Outcome.FAILED, no_answer_text(owner)).to_json()
            expired, deadline = True, deadline + timeout
        for _ in notes.notifies(timeout=POLL_SECONDS, stop_after=1):
            break
