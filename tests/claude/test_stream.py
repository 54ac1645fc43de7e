"""Headless stream-json read: every rate_limit_event an exact reading, never a guessed window."""

from __future__ import annotations

from datetime import UTC, datetime

from core.models import Exactness
from core.providers.claude.readings import rate_limit_event_readings
from core.providers.claude.stream import StreamState, interpret

NOW = datetime(2026, 12, 1, 21, 33, tzinfo=UTC)
RESET = 1796168008  # 2026-12-01T23:33:28Z


def test_unified_windows_are_exact_readings_of_every_window() -> None:
    readings = rate_limit_event_readings({
        "status": "allowed", "isUsingOverage": False,
        "unifiedWindows": {"five_hour": {"utilization": 0.42, "resetsAt": RESET},
                           "seven_day": {"utilization": 0.17, "resetsAt": RESET + 86400},
                           "seven_day_overage_included": {"utilization": 1.0,
                                                          "resetsAt": RESET + 2 * 86400,
                                                          "status": "rejected"}}}, NOW)
    by_window = {r.window_id: r for r in readings}
    assert set(by_window) == {"claude:5h", "claude:7d", "claude:7d-fable"}
    assert by_window["claude:5h"].used_percent == 42.0
    assert by_window["claude:5h"].resets_at == datetime.fromtimestamp(RESET, UTC)
    assert by_window["claude:7d-fable"].limit_reached is True
    assert all(r.exactness is Exactness.EXACT and r.observed_at == NOW for r in readings)


def test_an_event_without_a_type_names_no_window() -> None:
    # a server-side transient 429 (B0): rejected, no rateLimitType, no reset — not the 5-hour one
    assert rate_limit_event_readings({"status": "rejected", "isUsingOverage": False}, NOW) == []


def test_a_typed_warning_keeps_its_utilization() -> None:
    (reading,) = rate_limit_event_readings({
        "status": "allowed_warning", "rateLimitType": "seven_day", "utilization": 0.81,
        "resetsAt": RESET}, NOW)
    assert (reading.window_id, reading.used_percent, reading.limit_reached) == (
        "claude:7d", 81.0, False)
    assert reading.note == "approaching the limit"


def test_a_rejected_type_overrides_its_unified_window() -> None:
    readings = {r.window_id: r for r in rate_limit_event_readings({
        "status": "rejected", "rateLimitType": "five_hour", "resetsAt": RESET,
        "unifiedWindows": {"five_hour": {"utilization": 0.97, "resetsAt": RESET}}}, NOW)}
    assert readings["claude:5h"].limit_reached is True
    assert readings["claude:5h"].used_percent == 100.0


def test_a_transient_turn_is_neither_a_limit_nor_a_failure() -> None:
    state = StreamState()
    for line in (
        b'{"type":"system","subtype":"init","session_id":"s"}',
        b'{"type":"rate_limit_event","rate_limit_info":{"status":"rejected",'
        b'"isUsingOverage":false}}',
        b'{"type":"assistant","message":{"content":[{"type":"text","text":"API Error: Server is '
        b'temporarily limiting requests (not your usage limit)"}]},"error":"rate_limit"}',
        b'{"type":"result","subtype":"success","is_error":true,"api_error_status":429,'
        b'"result":"API Error: Server is temporarily limiting requests (not your usage limit)"}',
    ):
        assert state.feed(line, NOW) == []
    ended = interpret(state, NOW, UTC, 1, "")
    assert ended.kind == "transient" and ended.hit is None
    assert state.rejected == {}
