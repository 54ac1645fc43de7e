"""Control-socket ops the Claude provider serves while a host runs.

* ``claude.track`` ``{session, keep_prompting?, reopen?}`` — keep a session going: it becomes
  (or stays) the goal ``claude:<session>``; ``reopen`` first forgets a finished goal of it.
* ``claude.untrack`` ``{session}`` — stop watching it; it is never tracked automatically again.
* ``claude.statusline`` ``{payload}`` — a statusline payload's exact quota readings.
* ``claude.hook`` ``{payload, received_at}`` — a StopFailure / Notification hook payload.

Each answers ``{"ok": true, ...}`` or ``{"error": "..."}``. The ops are handed the provider as a
:class:`ClaudeOpsHost`: what they use of it, and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from core.clock import iso, parse_iso
from core.models import QuotaReading
from core.providers.base import ControlHandler, GoalObservation
from core.providers.claude import sessions
from core.providers.claude.events import HookEvents, event_from_payload
from core.providers.claude.follow import TranscriptFileState, TranscriptWatcher
from core.providers.claude.readings import statusline_readings
from core.providers.claude.state import Tracking, TrackingFile


class ClaudeOpsHost(Protocol):
    """What the control ops use of the Claude provider (:class:`ClaudeProvider` is one)."""

    roots: list[Path]
    watcher: TranscriptWatcher
    tracking: TrackingFile
    events: HookEvents
    emitted: dict[str, tuple[Any, ...]]

    def now(self) -> datetime: ...

    def observe_reading(self, reading: QuotaReading) -> None: ...

    def apply_events(self) -> set[str]: ...

    def report(self, session_ids: set[str]) -> set[str]: ...

    def observation(self, state: TranscriptFileState) -> GoalObservation: ...

    async def forget(self, session_id: str, why: str) -> None: ...


def control_ops(provider: ClaudeOpsHost) -> Mapping[str, ControlHandler]:
    async def track(request: dict[str, Any]) -> dict[str, Any]:
        return await track_session(provider, str(request.get("session") or ""),
                                   request.get("keep_prompting"), bool(request.get("reopen")))

    async def untrack(request: dict[str, Any]) -> dict[str, Any]:
        return await untrack_session(provider, str(request.get("session") or ""))

    async def statusline(request: dict[str, Any]) -> dict[str, Any]:
        payload = request.get("payload")
        if not isinstance(payload, dict):
            return {"error": "payload must be a JSON object"}
        readings = statusline_readings(payload, provider.now())
        for reading in readings:
            provider.observe_reading(reading)
        return {"ok": True, "readings": len(readings)}

    async def hook(request: dict[str, Any]) -> dict[str, Any]:
        payload = request.get("payload")
        if not isinstance(payload, dict):
            return {"error": "payload must be a JSON object"}
        received = parse_iso(request.get("received_at")) or provider.now()
        event = event_from_payload(payload, received)
        if event is None:
            return {"ok": True, "recorded": False}
        provider.events.add(event)
        provider.watcher.poll(provider.now().timestamp())
        provider.report(provider.apply_events())
        return {"ok": True, "recorded": True, "goal": sessions.goal_id(event.session_id)}

    return {"claude.track": track, "claude.untrack": untrack,
            "claude.statusline": statusline, "claude.hook": hook}


async def track_session(provider: ClaudeOpsHost, session_id: str, keep_prompting: Any,
                        reopen: bool) -> dict[str, Any]:
    if not session_id:
        return {"error": "which session? (claude:<session id>)"}
    state = provider.watcher.session(session_id)
    if state is None:
        provider.watcher.poll(provider.now().timestamp())
        state = provider.watcher.session(session_id)
    if state is None:
        dirs = ", ".join(str(r) for r in provider.roots) or "no Claude config directory"
        return {"error": f"no transcript of session {session_id} under {dirs}"}

    def change(tracking: Tracking) -> None:
        entry = tracking.tracked.setdefault(session_id, {"since": iso(provider.now())})
        if keep_prompting is not None:
            entry["keep_prompting"] = bool(keep_prompting)
        tracking.untracked.discard(session_id)

    provider.tracking.update(change)
    goal = sessions.goal_id(session_id)
    if reopen:  # a finished goal of this session: start over (its history stays)
        await provider.forget(session_id, "tracked again")
    provider.emitted.pop(session_id, None)
    provider.report({session_id})
    obs = provider.observation(state)
    return {"ok": True, "goal": goal, "title": obs.title, "state": obs.state.value,
            "cwd": obs.data.get("cwd"), "branch": obs.data.get("branch"),
            "auto_resume_block": obs.auto_resume_block}


async def untrack_session(provider: ClaudeOpsHost, session_id: str) -> dict[str, Any]:
    if not session_id:
        return {"error": "which session? (claude:<session id>)"}

    def change(tracking: Tracking) -> None:
        tracking.tracked.pop(session_id, None)
        tracking.auto.discard(session_id)
        tracking.untracked.add(session_id)

    provider.tracking.update(change)
    await provider.forget(session_id, "untracked by the user")
    return {"ok": True, "goal": sessions.goal_id(session_id)}
