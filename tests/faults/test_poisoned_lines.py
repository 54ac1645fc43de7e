"""Poisoned provider lines: refused where they are parsed, logged once, never fatal, never a
"recovered" reading (so never a resume)."""

from __future__ import annotations

import json
import logging
import math
import os
import random
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.clock import FakeClock
from core.engine import Engine
from core.paths import Paths
from core.providers.claude.readings import statusline_readings
from core.providers.codex.config import from_settings
from core.providers.codex.provider import CodexProvider
from core.providers.codex.readings import to_readings
from core.providers.codex.rollout import MalformedLine, RateLine, parse_line
from core.providers.numbers import forget_warnings
from core.settings import Settings
from tests.codex.fixtures import T0, THREAD_A, CodexHome, five_and_week, meta, stamp, token_count
from tests.support.examples import examples

H = timedelta(hours=1)


@pytest.fixture(autouse=True)
def _fresh_warnings() -> None:
    forget_warnings()  # "once" is once per process: start each test afresh

#: the reported line: one rollout window whose reset delay is infinity
POISON = ('{"timestamp":"%s","type":"event_msg","payload":{"type":"token_count","info":null,'
          '"rate_limits":{"limit_id":"codex","primary":{"used_percent":12.0,"window_minutes":300,'
          '"resets_in_seconds":1e999},"secondary":null,"plan_type":"plus"}}}\n')


def test_an_infinite_reset_delay_is_a_malformed_line_not_a_crash() -> None:
    with pytest.raises(MalformedLine, match="resets_in_seconds"):
        parse_line((POISON % stamp(T0)).encode())


@pytest.mark.asyncio
async def test_a_poisoned_codex_line_is_skipped_once_and_the_provider_goes_on(
        tmp_path: Path, paths: Paths, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    home = CodexHome(tmp_path / "codex-home")
    path = home.rollout(THREAD_A, T0 - 2 * H, meta(THREAD_A, T0 - 2 * H),
                        POISON % stamp(T0 - H), POISON % stamp(T0 - H + timedelta(seconds=1)))
    settings_ = Settings(resume_jitter_seconds=0)
    for start in range(2):  # and again after a restart
        codex = CodexProvider(from_settings(settings_, {**os.environ,
                                                        "CODEX_HOME": str(home.root)}), clock)
        engine = Engine(paths, settings_, [codex], clock, random.Random(start))
        with caplog.at_level(logging.WARNING):
            await engine.start()
        try:
            if start == 0:
                home.append(path, token_count(T0 - timedelta(minutes=30),
                                              five_and_week(42.0, T0 + H, 7.0, T0 + 90 * H)))
                clock.advance(5)
                await codex.poll()
            await engine.drain()
            shown = {r.window_id: r.used_percent for r in engine.quotas.readings(clock.now())}
            assert shown.get("codex:5h") == 42.0  # the good line after the poisoned ones
            assert engine.provider_supervisor.health[0].state == "ok"
        finally:
            await engine.stop()
    warnings = [r for r in caplog.records if "resets_in_seconds" in r.getMessage()]
    assert 1 <= len(warnings) <= 2  # once per file and reason (per provider instance)


# -- fuzzing the parse points ------------------------------------------------------------------

NUMBERS = (st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10**30, 10**30)
           | st.sampled_from([float("inf"), float("-inf"), float("nan"), -1e-9, -5, 1e999])
           | st.none() | st.text(max_size=5) | st.booleans() | st.lists(st.integers(), max_size=2))


def _window(draw_used: Any, draw_reset: Any, draw_minutes: Any, form: str) -> dict[str, Any]:
    key = {"at": "resets_at", "in": "resets_in_seconds"}[form]
    return {"used_percent": draw_used, "window_minutes": draw_minutes, key: draw_reset}


def _as_line(limits: dict[str, Any]) -> bytes:
    payload = {"type": "token_count", "info": None, "rate_limits": limits}
    text = json.dumps({"timestamp": stamp(T0), "type": "event_msg", "payload": payload},
                      allow_nan=True)
    return text.replace("Infinity", "1e999").encode()  # what a real writer would emit


def _sane(value: float | None, low: float, high: float) -> bool:
    return value is None or (math.isfinite(value) and low <= value <= high)


@settings(max_examples=examples(150, 2000), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(used=NUMBERS, reset=NUMBERS, minutes=NUMBERS, form=st.sampled_from(["at", "in"]),
       slot=st.sampled_from(["primary", "secondary"]))
def test_fuzzed_codex_rate_limits_parse_or_are_refused(used: Any, reset: Any, minutes: Any,
                                                       form: str, slot: str) -> None:
    limits = {"limit_id": "codex", slot: _window(used, reset, minutes, form)}
    try:
        event = parse_line(_as_line(limits))
    except MalformedLine:
        return  # refused at the parse point: skipped with one log message
    assert isinstance(event, RateLine)
    for reading in to_readings(event.snapshot, T0, 600):
        assert _sane(reading.used_percent, 0.0, 1000.0)  # over 100: overdrawn, never "free"
        if reading.resets_at is not None:
            assert abs((reading.resets_at - T0).days) < 366 * 30
    window = event.snapshot.slots[slot]
    assert _sane(window.used_percent, 0.0, 1000.0) and _sane(window.window_minutes, 0, 1e308)


@settings(max_examples=examples(150, 2000), deadline=None)
@given(used=NUMBERS, reset=NUMBERS, name=st.sampled_from(["five_hour", "seven_day"]),
       key=st.sampled_from(["used_percentage", "used_percent"]))
def test_fuzzed_claude_statusline_limits_never_read_as_available(used: Any, reset: Any,
                                                                 name: str, key: str) -> None:
    payload = {"rate_limits": {name: {key: used, "resets_at": reset}}}
    readings = statusline_readings(json.loads(json.dumps(payload, allow_nan=True)), T0)
    for reading in readings:
        assert _sane(reading.used_percent, 0.0, 100.0)
    bad = isinstance(used, bool) or not isinstance(used, int | float) or not math.isfinite(
        float(used) if not isinstance(used, bool) and isinstance(used, int | float) and abs(
            used) < 1e300 else math.inf) or used < 0
    if bad:
        assert readings == []  # a negative or non-finite value is refused, never "0 % used"


def test_a_negative_claude_percentage_is_refused_not_zero(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        readings = statusline_readings(
            {"rate_limits": {"five_hour": {"used_percentage": -12, "resets_at": 1900000000}}}, T0)
        again = statusline_readings(
            {"rate_limits": {"five_hour": {"used_percentage": -12, "resets_at": 1900000000}}}, T0)
    assert readings == again == []
    assert sum("out of range" in r.getMessage() for r in caplog.records) == 1
