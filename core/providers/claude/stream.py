"""Headless Claude Code output (``--output-format stream-json --verbose``), read line by line.

Shapes (``provider-formats.md`` B0/B2; 2.1.328)::

    {"type":"system","subtype":"init","session_id":"…","model":"…","cwd":"…"}
    {"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"error_status":429,…}
    {"type":"assistant","message":{…},"session_id":"…"}
    {"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1783440000,
     "rateLimitType":"five_hour","unifiedWindows":{"five_hour":{"utilization":1,…},…},…}}
    {"type":"assistant","message":{…"text":"You've hit your 5-hour limit · resets …"},
     "error":"rate_limit","api_error":"usage_limit_reached","api_error_params":{
     "rate_limit_info":{"resetsAt":…,"rateLimitType":"five_hour",…}}}
    {"type":"result","subtype":"success","is_error":true,"api_error":"usage_limit_reached",
     "result":"You've hit your 5-hour limit · resets 9:32pm (UTC)",…}

The ``result`` and the structured fields decide how the turn ended — never the exit code (a
limit exits 1 with a "success" result): ``api_error: "usage_limit_reached"`` is a usage limit;
a 429 without it ("Server is temporarily limiting requests (not your usage limit)", the
API-key "Request rejected (429)") is *transient* — retried, never a quota pause; an ``errors``
list (e.g. "No conversation found with session ID: …") is Claude's own words for a failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Any

from core.i18n import N_
from core.models import Exactness, QuotaReading
from core.providers import jsonload
from core.providers.base import LimitHit
from core.providers.claude.readings import rate_limit_event_readings
from core.providers.claude.records import (
    LimitInfo,
    RecordKind,
    api_error_kind,
    limit_info,
    message_text,
)
from core.providers.claude.resets import parse_limit
from core.providers.claude.wording import EPOCH, WINDOW_BY_TYPE, is_transient_text, looks_like_limit


@dataclass
class StreamState:
    """What one headless turn has said so far."""

    started: bool = False
    session_id: str | None = None
    events: int = 0
    readings: list[QuotaReading] = field(default_factory=list)
    rejected: dict[str, datetime | None] = field(default_factory=dict)
    limit_text: str | None = None
    limit: LimitInfo | None = None
    transient_text: str | None = None
    retries: int = 0  # Claude's own in-turn retries (``api_retry`` events)
    result: dict[str, Any] | None = None
    bad_lines: int = 0

    def feed(self, line: bytes, now: datetime) -> list[QuotaReading]:
        """Take one output line; returns the quota readings the line carried."""
        if not line.strip():
            return []
        try:
            obj = jsonload.loads(line)
        except ValueError:
            self.bad_lines += 1
            return []
        if not isinstance(obj, dict):
            self.bad_lines += 1
            return []
        self.events += 1
        return self._event(obj, now)

    def _event(self, obj: dict[str, Any], now: datetime) -> list[QuotaReading]:
        kind = obj.get("type")
        if isinstance(obj.get("session_id"), str):
            self.session_id = obj["session_id"]
        if kind == "system" and obj.get("subtype") == "init":
            self.started = True
        elif kind == "system" and obj.get("subtype") == "api_retry":
            self.retries += 1
        elif kind == "rate_limit_event" and isinstance(obj.get("rate_limit_info"), dict):
            return self._rate_limit(obj["rate_limit_info"], now)
        elif kind == "assistant" and obj.get("error") is not None:
            self._api_error(obj)
        elif kind == "result":
            self.result = obj
        return []

    def _api_error(self, obj: dict[str, Any]) -> None:
        text = message_text(obj.get("message"))
        record_kind = api_error_kind(obj, text)
        if record_kind is RecordKind.LIMIT_STOP:
            self.limit_text = text or N_("usage limit reached")
            self.limit = limit_info(obj)
        elif record_kind is RecordKind.TRANSIENT:
            self.transient_text = text or N_("rate limited")

    def _rate_limit(self, info: dict[str, Any], now: datetime) -> list[QuotaReading]:
        readings = rate_limit_event_readings(info, now)
        self.readings.extend(readings)
        window = WINDOW_BY_TYPE.get(str(info.get("rateLimitType") or ""))
        if window is not None and info.get("status") == "rejected":
            resets = info.get("resetsAt")
            self.rejected[window] = (datetime.fromtimestamp(resets, UTC)
                                     if isinstance(resets, int | float) else None)
        elif window is not None:
            self.rejected.pop(window, None)  # allowed again (e.g. overage took over)
        return readings


@dataclass(frozen=True)
class TurnEnded:
    """How a headless turn ended: ``finished``, ``limited`` (with ``hit``), ``transient`` (a
    429 that is not a usage limit: retry later) or ``failed``."""

    kind: str
    detail: str
    hit: LimitHit | None = None


def interpret(state: StreamState, now: datetime, zone: tzinfo, exit_code: int | None,
              stderr: str) -> TurnEnded:
    result = state.result
    if result is None:
        if state.limit_text or state.rejected:
            return _limited(state, state.limit_text or "", now, zone)
        if state.transient_text:
            return TurnEnded("transient", state.transient_text)
        tail = f": {stderr.strip()[-500:]}" if stderr.strip() else ""
        return TurnEnded("failed", f"claude exited (code {exit_code}) without a result{tail}")
    raw = result.get("result")
    text = raw if isinstance(raw, str) else ""
    errored = result.get("is_error") is True or str(result.get("subtype", "")).startswith("error")
    if result.get("api_error") == "usage_limit_reached" or state.limit_text or _is_limit(
            text, errored):
        return _limited(state, state.limit_text or text, now, zone)
    if _is_transient(result, state, text):
        return TurnEnded("transient", state.transient_text or text or N_("rate limited"))
    if errored:
        return TurnEnded("failed", _errors(result) or text.strip()
                         or N_("claude reported {subtype}").format(subtype=result.get("subtype")))
    return TurnEnded("finished", text.strip())


def _is_limit(text: str, errored: bool) -> bool:
    # a successful answer may well talk about usage limits; only an error result, or the
    # machine-readable "…|<epoch>" form, is one
    return bool(EPOCH.search(text)) or (errored and looks_like_limit(text))


def _is_transient(result: dict[str, Any], state: StreamState, text: str) -> bool:
    return bool(state.transient_text) or is_transient_text(text) or (
        result.get("api_error_status") == 429 and result.get("api_error") is None
        and result.get("is_error") is True)


def _errors(result: dict[str, Any]) -> str:
    """Claude's own words for a failure (``errors``: "No conversation found with session ID…")."""
    errors = result.get("errors")
    if not isinstance(errors, list):
        return ""
    return "; ".join(" ".join(str(e).split()) for e in errors if str(e).strip())


def _limited(state: StreamState, text: str, now: datetime, zone: tzinfo) -> TurnEnded:
    parsed = parse_limit(text or N_("usage limit reached"), now, zone, state.limit)
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
