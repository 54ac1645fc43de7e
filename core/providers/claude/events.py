"""Hook payloads (StopFailure, Notification) turned into :class:`HookEvent` values.

A ``StopFailure`` hook reports that a turn ended on an API error. It carries no structured
limit (2.1.328: ``error: "rate_limit"`` and ``last_assistant_message``), and ``rate_limit`` is
also what a *transient* 429 says ("Server is temporarily limiting requests (not your usage
limit)", "Request rejected (429)"); so a payload is a limit stop only when its words read like a
usage limit — never a transient one. Versions and forks differ: both ``error``/``error_details``
and ``error_type``/``error_message`` are accepted. A ``Notification`` with a
``quota_auto_resume_*`` type says what Claude Code's own auto-continue does.

The hook appends the raw payload to the spool first and fast
(:mod:`core.providers.claude.stop_hook`: ``{"received_at": <epoch>, "payload": {…}}``); the
host reads the spool when it starts and on every poll. Older spool lines (``session_id``, ``at``,
``kind``, ``text``) are still read.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from core.clock import Clock, parse_iso
from core.providers.claude.readings import epoch
from core.providers.claude.sessions import HookEvent
from core.providers.claude.state import HookSpool
from core.providers.claude.wording import looks_like_limit

#: events older than this are of no use (a weekly limit is the longest wait)
KEEP = timedelta(days=8)


def event_from_payload(payload: dict[str, Any], received_at: datetime) -> HookEvent | None:
    """The event a hook payload carries, or None when it is not one Goalkeeper uses."""
    session_id = payload.get("session_id")
    if not isinstance(session_id, str) or not session_id:
        return None
    name = payload.get("hook_event_name")
    if name == "Notification" or "notification_type" in payload:
        kind = payload.get("notification_type")
        if isinstance(kind, str) and kind.startswith("quota_auto_resume_"):
            return HookEvent(session_id, received_at, kind, str(payload.get("message") or ""))
        return None
    details = payload.get("error_details", payload.get("error_message"))
    text = " ".join(str(v) for v in (payload.get("last_assistant_message"), details) if v)
    if looks_like_limit(text):  # never a transient 429, whatever ``error`` says
        return HookEvent(session_id, received_at, "stop_failure", text)
    return None


def event_from_json(data: dict[str, Any]) -> HookEvent | None:
    """A spooled event: a raw payload with its arrival time, or an older reduced event."""
    payload = data.get("payload")
    if isinstance(payload, dict):
        received = epoch(data.get("received_at"))
        return event_from_payload(payload, received) if received is not None else None
    try:
        at = parse_iso(str(data["at"]))
    except (KeyError, ValueError):
        return None
    if at is None or not isinstance(data.get("session_id"), str):
        return None
    return HookEvent(str(data["session_id"]), at, str(data.get("kind") or ""),
                     str(data.get("text") or ""))


class HookEvents:
    """Every recent hook event, by session; new ones are queued until taken."""

    def __init__(self, data_dir: Path, clock: Clock) -> None:
        self.spool = HookSpool(data_dir)
        self.clock = clock
        self._by_session: defaultdict[str, list[HookEvent]] = defaultdict(list)
        self._new: list[HookEvent] = []

    def add(self, event: HookEvent) -> None:
        if self.clock.now() - event.at > KEEP:
            return
        events = self._by_session[event.session_id]
        events.append(event)
        events.sort(key=lambda e: e.at)
        self._new.append(event)

    def compact_spool(self) -> None:
        """Forget spooled events too old to matter (only once the spool has grown large)."""
        now = self.clock.now()

        def recent(data: dict[str, Any]) -> bool:
            event = event_from_json(data)
            return event is not None and now - event.at <= KEEP

        self.spool.compact(recent)

    def read_spool(self) -> bool:
        """Take events the hook spooled while no host ran; True when there were any."""
        found = False
        for data in self.spool.read_new():
            event = event_from_json(data)
            if event is not None:
                self.add(event)
                found = True
        return found

    def take_new(self) -> list[HookEvent]:
        new, self._new = self._new, []
        return new

    def for_session(self, session_id: str) -> list[HookEvent]:
        return list(self._by_session.get(session_id, ()))
