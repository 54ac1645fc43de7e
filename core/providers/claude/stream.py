"""Headless Claude Code output (``--output-format stream-json --verbose``), read line by line.

Shapes (``provider-formats.md`` B2)::

    {"type":"system","subtype":"init","session_id":"…","model":"…","cwd":"…"}
    {"type":"assistant","message":{…},"session_id":"…"}
    {"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1783440000,
     "rateLimitType":"five_hour",…}}
    {"type":"result","subtype":"success","is_error":true,"result":"Claude AI usage limit
     reached|1783440000",…}

The ``result`` decides how the turn ended — never the exit code: a limit can arrive as a
"success" result with exit code 0. A rejected ``rate_limit_event`` supplies the exact reset.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any

from core.models import Exactness, QuotaReading
from core.providers.base import LimitHit
from core.providers.claude.readings import rate_limit_event_reading
from core.providers.claude.records import message_text
from core.providers.claude.resets import parse_limit
from core.providers.claude.wording import EPOCH, looks_like_limit


@dataclass
class StreamState:
    """What one headless turn has said so far."""

    started: bool = False
    session_id: str | None = None
    events: int = 0
    readings: list[QuotaReading] = field(default_factory=list)
    rejected: dict[str, datetime | None] = field(default_factory=dict)
    limit_text: str | None = None
    result: dict[str, Any] | None = None
    bad_lines: int = 0

    def feed(self, line: bytes, now: datetime) -> QuotaReading | None:
        """Take one output line; returns a quota reading when the line carried one."""
        if not line.strip():
            return None
        try:
            obj = json.loads(line)
        except ValueError:
            self.bad_lines += 1
            return None
        if not isinstance(obj, dict):
            self.bad_lines += 1
            return None
        self.events += 1
        return self._event(obj, now)

    def _event(self, obj: dict[str, Any], now: datetime) -> QuotaReading | None:
        kind = obj.get("type")
        if isinstance(obj.get("session_id"), str):
            self.session_id = obj["session_id"]
        if kind == "system" and obj.get("subtype") == "init":
            self.started = True
        elif kind == "rate_limit_event" and isinstance(obj.get("rate_limit_info"), dict):
            return self._rate_limit(obj["rate_limit_info"], now)
        elif kind == "assistant" and obj.get("error") == "rate_limit":
            self.limit_text = message_text(obj.get("message")) or "usage limit reached"
        elif kind == "result":
            self.result = obj
        return None

    def _rate_limit(self, info: dict[str, Any], now: datetime) -> QuotaReading | None:
        reading = rate_limit_event_reading(info, now)
        if reading is None:
            return None
        self.readings.append(reading)
        if reading.limit_reached:
            self.rejected[reading.window_id] = reading.resets_at
        else:
            self.rejected.pop(reading.window_id, None)  # allowed again (e.g. overage took over)
        return reading


@dataclass(frozen=True)
class TurnEnded:
    """How a headless turn ended: ``finished``, ``limited`` (with ``hit``) or ``failed``."""

    kind: str
    detail: str
    hit: LimitHit | None = None


def interpret(state: StreamState, now: datetime, zone: tzinfo, exit_code: int | None,
              stderr: str) -> TurnEnded:
    result = state.result
    if result is None:
        if state.limit_text or state.rejected:
            return _limited(state, state.limit_text or "", now, zone)
        tail = f": {stderr.strip()[-500:]}" if stderr.strip() else ""
        return TurnEnded("failed", f"claude exited (code {exit_code}) without a result{tail}")
    raw = result.get("result")
    text = raw if isinstance(raw, str) else ""
    errored = result.get("is_error") is True or str(result.get("subtype", "")).startswith("error")
    if _is_limit(text, errored) or state.limit_text or (errored and state.rejected):
        return _limited(state, text or state.limit_text or "", now, zone)
    if errored:
        return TurnEnded("failed", text.strip() or f"claude reported {result.get('subtype')}")
    return TurnEnded("finished", text.strip())


def _is_limit(text: str, errored: bool) -> bool:
    # a successful answer may well talk about usage limits; only an error result, or the
    # machine-readable "…|<epoch>" form, is one
    return bool(EPOCH.search(text)) or (errored and looks_like_limit(text))


def _limited(state: StreamState, text: str, now: datetime, zone: tzinfo) -> TurnEnded:
    parsed = parse_limit(text or "usage limit reached", now, zone)
    resets = [r for r in state.rejected.values() if r is not None]
    resets_at: datetime | None = parsed.resets_at
    exactness = parsed.exactness
    windows: tuple[str, ...] = (parsed.window,)
    if resets:
        resets_at, exactness, windows = max(resets), Exactness.EXACT, tuple(state.rejected)
    detail = parsed.text or "usage limit reached"
    hit = LimitHit(windows=windows, resets_at=resets_at, exactness=exactness,
                   detail=detail, readings=tuple(state.readings))
    return TurnEnded("limited", detail, hit)


