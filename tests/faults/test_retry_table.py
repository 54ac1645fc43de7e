"""The retry classification, row by row as ``retry-table.md`` (copied here as data)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.atomic import replace
from core.providers.pipeline.protocol import classify
from core.retry.policy import Fault
from core.retry.table import RULES, ErrorSignals, classify_error

NOW = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)
RESET = NOW + timedelta(hours=3)

#: (the table's first column, an example, fault, retried, a word of the goal-level effect)
ROWS: list[tuple[str, ErrorSignals, Fault, bool, str]] = [
    ("Connection refused / reset, DNS failure, TLS handshake EOF",
     ErrorSignals(transport="connection"), Fault.TEMPORARY, True, "retry later"),
    ("Connect / read timeout (idempotency key)",
     ErrorSignals(transport="timeout", idempotent=True), Fault.TEMPORARY, True, "retry later"),
    ("Connect / read timeout (no idempotency key)",
     ErrorSignals(transport="timeout"), Fault.PERMANENT, False, "fails"),
    ("408 Request Timeout", ErrorSignals(status=408), Fault.TEMPORARY, True, "retry later"),
    ("409 Conflict (lock contention, idempotent)",
     ErrorSignals(status=409, lock_contention=True, idempotent=True), Fault.TEMPORARY, True,
     "retry later"),
    ("409 Conflict (otherwise)", ErrorSignals(status=409), Fault.PERMANENT, False, "permanent"),
    ("429 with Retry-After <= 120 s", ErrorSignals(status=429, retry_after=30),
     Fault.RATE_LIMITED, True, "stay running"),
    ("429 with Retry-After > 120 s", ErrorSignals(status=429, retry_after=900),
     Fault.RATE_LIMITED, False, "paused (quota)"),
    ("429 without Retry-After, reset headers present", ErrorSignals(status=429, reset_at=RESET),
     Fault.RATE_LIMITED, False, "paused (quota)"),
    ("429 usage-limit / insufficient_quota / credit exhausted (with a reset)",
     ErrorSignals(status=429, code="insufficient_quota", reset_at=RESET),
     Fault.QUOTA_EXHAUSTED, False, "paused (quota)"),
    ("429 insufficient_quota (billing: no reset)",
     ErrorSignals(status=429, code="insufficient_quota", retry_after=20),
     Fault.QUOTA_EXHAUSTED, False, "needs attention"),
    ("429 usage limit in the message", ErrorSignals(status=429, message="Usage limit reached"),
     Fault.QUOTA_EXHAUSTED, False, "needs attention"),
    ("500, 502, 504", ErrorSignals(status=502), Fault.TEMPORARY, True, "retry later"),
    ("503", ErrorSignals(status=503, retry_after=10), Fault.TEMPORARY, True, "retry later"),
    ("529 Overloaded", ErrorSignals(status=529), Fault.TEMPORARY, True, "retry later"),
    ("403 with rate-limit signals (Retry-After)", ErrorSignals(status=403, retry_after=60),
     Fault.RATE_LIMITED, True, "stay running"),
    ("403 with rate-limit signals (remaining = 0)",
     ErrorSignals(status=403, remaining_zero=True, reset_at=RESET), Fault.RATE_LIMITED, False,
     "paused (quota)"),
    ("403 with rate-limit signals (message)",
     ErrorSignals(status=403, message="API rate limit exceeded for user"), Fault.RATE_LIMITED,
     True, "stay running"),
    ("401 Unauthorized", ErrorSignals(status=401), Fault.AUTH, False, "auth"),
    ("403 Forbidden (plain permission / config)", ErrorSignals(status=403,
                                                               message="Resource not accessible"),
     Fault.AUTH, False, "auth"),
    ("400, 404, 413, 422", ErrorSignals(status=422), Fault.PERMANENT, False, "missing"),
    ("x-should-retry: false", ErrorSignals(status=500, should_retry=False), Fault.PERMANENT,
     False, "fails"),
    ("x-should-retry: true", ErrorSignals(status=400, should_retry=True), Fault.TEMPORARY, True,
     "retry later"),
    ("Malformed Retry-After / RateLimit header (ignored: backoff)",
     ErrorSignals(status=429, retry_after=None), Fault.RATE_LIMITED, True, "stay running"),
    ("Executor crash (signal)", ErrorSignals(signal=9), Fault.TEMPORARY, True,
     "needs attention"),
    ("Programming / validation errors", ErrorSignals(invalid=True), Fault.PERMANENT, False,
     "failed"),
    ("SQLite SQLITE_BUSY on BEGIN IMMEDIATE", ErrorSignals(sqlite="SQLITE_BUSY"),
     Fault.TEMPORARY, True, "after exhaustion"),
    ("SQLite SQLITE_BUSY_SNAPSHOT", ErrorSignals(sqlite="SQLITE_BUSY_SNAPSHOT"),
     Fault.TEMPORARY, True, "bug"),
    ("SQLITE_FULL / ENOSPC, SQLITE_READONLY", ErrorSignals(sqlite="SQLITE_FULL"),
     Fault.TEMPORARY, False, "local error"),
    ("SQLITE_CORRUPT / SQLITE_NOTADB", ErrorSignals(sqlite="SQLITE_CORRUPT"), Fault.PERMANENT,
     False, "safe mode"),
    ("Windows os.replace PermissionError", ErrorSignals(windows_replace=True), Fault.TEMPORARY,
     True, "fail loudly"),
]


@pytest.mark.parametrize(("row", "signals", "fault", "retried", "effect"), ROWS,
                         ids=[r[0] for r in ROWS])
def test_each_row_of_the_retry_table(row: str, signals: ErrorSignals, fault: Fault,
                                     retried: bool, effect: str) -> None:
    answer = classify_error(signals)
    assert (answer.fault, answer.retried) == (fault, retried), answer
    assert effect in answer.effect, answer


def test_every_rule_is_reached_by_some_row() -> None:
    reached = {classify_error(signals).rule for _, signals, *_ in ROWS}
    assert {rule.name for rule in RULES} <= reached


@pytest.mark.parametrize(("report", "fault"), [
    ({"http_status": 429, "error_code": "insufficient_quota", "reset_at": "2026-07-07T15:00Z"},
     Fault.QUOTA_EXHAUSTED),
    ({"http_status": 429, "retry_after": 30}, Fault.RATE_LIMITED),
    ({"http_status": 403, "detail": "You have exceeded a secondary rate limit"},
     Fault.RATE_LIMITED),
    ({"http_status": 403, "rate_limit_remaining": 0}, Fault.RATE_LIMITED),
    ({"http_status": 403, "detail": "Must have admin rights"}, Fault.AUTH),
    ({"http_status": 529}, Fault.TEMPORARY),
    ({"http_status": 404}, Fault.PERMANENT),
])
def test_a_steps_report_is_classified_by_the_table(report: dict[str, object],
                                                   fault: Fault) -> None:
    assert classify(1, report, NOW).fault is fault


def test_a_windows_sharing_violation_is_retried_briefly_then_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    calls: list[int] = []
    real = os.replace

    def flaky(src: object, dst: object) -> None:
        calls.append(1)
        if len(calls) <= 2:
            error = PermissionError("sharing violation")
            error.winerror = 32  # type: ignore[attr-defined]
            raise error
        real(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", flaky)
    slept: list[float] = []
    (tmp_path / "a").write_text("x")
    replace(tmp_path / "a", tmp_path / "b", sleep=slept.append)
    assert (tmp_path / "b").read_text() == "x" and slept == [0.05, 0.1]

    def always(src: object, dst: object) -> None:
        error = PermissionError("sharing violation")
        error.winerror = 33  # type: ignore[attr-defined]
        raise error

    monkeypatch.setattr(os, "replace", always)
    slept.clear()
    with pytest.raises(PermissionError):
        replace(tmp_path / "b", tmp_path / "c", sleep=slept.append)
    assert sum(slept) >= 2.5 and max(slept) == 1.0
