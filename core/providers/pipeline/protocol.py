"""The step protocol: what a source or stage's exit code and report file mean.

Exit codes: ``0`` success · ``75`` temporary failure (retried) · ``77`` auth failure and ``78``
config error (never retried) · anything else a permanent failure of the step (not retried). A
step killed by its timeout is a temporary failure; a program that cannot be started at all
(missing, not executable) is a config error.

The optional JSON report at ``$GOALKEEPER_REPORT`` takes precedence over the exit code::

    {"status": "ok" | "empty" | "rate_limited" | "quota_exhausted" | "auth_failed" | "timeout",
     "retry_after": seconds, "reset_at": ISO 8601 or epoch seconds, "items": n, "detail": "..."}

Goalkeeper also understands ``"temporary"``, ``"config_error"`` and ``"error"`` (permanent) as
statuses, and an ``"http_status"`` number (classified by :func:`core.retry.table.classify_http`,
row by
row as ``retry-table.md``, with the report's ``error_code``, ``retry_after``,
``rate_limit_remaining``, ``reset_at`` and ``detail``) when no status is given. A report that
is not valid JSON, or has an unknown status, is ignored (the exit code decides) and the
outcome's detail says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from core.providers.numbers import BadNumber, finite
from core.retry.policy import Fault, parse_reset_at, parse_retry_after
from core.retry.table import classify_http

EXIT_OK = 0
EXIT_TEMPORARY = 75  # EX_TEMPFAIL
EXIT_AUTH = 77  # EX_NOPERM
EXIT_CONFIG = 78  # EX_CONFIG

STATUS_FAULTS: dict[str, Fault] = {
    "ok": Fault.NONE,
    "empty": Fault.EMPTY,
    "rate_limited": Fault.RATE_LIMITED,
    "quota_exhausted": Fault.QUOTA_EXHAUSTED,
    "auth_failed": Fault.AUTH,
    "timeout": Fault.TEMPORARY,
    "temporary": Fault.TEMPORARY,
    "config_error": Fault.CONFIG,
    "error": Fault.PERMANENT,
}

#: the words runs and the CLI use for why a step failed
FAULT_REASONS: dict[Fault, str] = {
    Fault.TEMPORARY: "temporary",
    Fault.RATE_LIMITED: "rate_limited",
    Fault.QUOTA_EXHAUSTED: "quota_exhausted",
    Fault.AUTH: "auth_failed",
    Fault.CONFIG: "config_error",
    Fault.PERMANENT: "failed",
}

MAX_DETAIL = 500


@dataclass(frozen=True)
class StepOutcome:
    """One attempt's result, classified."""

    fault: Fault
    reason: str  # a short word: ok, empty, timeout, rate_limited, auth_failed, exit 3, ...
    detail: str = ""
    items: int | None = None
    retry_after: float | None = None
    reset_at: datetime | None = None
    exit_code: int | None = None


def fault_from_exit(code: int) -> tuple[Fault, str]:
    if code == EXIT_OK:
        return Fault.NONE, "ok"
    if code == EXIT_TEMPORARY:
        return Fault.TEMPORARY, "temporary"
    if code == EXIT_AUTH:
        return Fault.AUTH, "auth_failed"
    if code == EXIT_CONFIG:
        return Fault.CONFIG, "config_error"
    if code < 0:
        return Fault.PERMANENT, f"killed by signal {-code}"
    return Fault.PERMANENT, f"exit {code}"


def read_report(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The report's object, or (None, why it was ignored); (None, None) when there is none."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"report unreadable ({exc.strerror})"
    if len(raw) > 1 << 20:
        return None, "report ignored: larger than 1 MiB"
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None, "report ignored: not valid JSON"
    if not isinstance(data, dict):
        return None, "report ignored: not a JSON object"
    return data, None


def classify(exit_code: int, report: dict[str, Any] | None, now: datetime,
             note: str | None = None) -> StepOutcome:
    """Combine an exit code and an optional report (which wins) into a :class:`StepOutcome`."""
    fault, reason = fault_from_exit(exit_code)
    notes = [note] if note else []
    items = retry_after = reset_at = None
    detail = ""
    if report is not None:
        from_report = _report_fault(report, now)
        if isinstance(from_report, str):
            notes.append(from_report)
        elif from_report is not None:
            fault, reason = from_report
        items = _items(report.get("items"))
        retry_after = parse_retry_after(report.get("retry_after"), now)
        reset_at = parse_reset_at(report.get("reset_at"))
        detail = str(report.get("detail") or "")[:MAX_DETAIL]
    if fault is Fault.EMPTY and items is None:
        items = 0
    text = "; ".join(p for p in (detail, *notes) if p)
    return StepOutcome(fault, reason, text, items, retry_after, reset_at, exit_code)


def _report_fault(report: dict[str, Any], now: datetime) -> tuple[Fault, str] | str | None:
    """The report's verdict, a note when its status is unusable, or None when it has none."""
    status = report.get("status")
    if status is not None:
        if isinstance(status, str) and status in STATUS_FAULTS:
            return STATUS_FAULTS[status], status
        return f"report status {status!r} ignored: unknown"
    code = report.get("http_status")
    if isinstance(code, int) and not isinstance(code, bool) and 100 <= code <= 599:
        fault = classify_http(code, **_http_signals(report, now))
        return fault, "ok" if fault is Fault.NONE else f"http {code}"
    return None


def _http_signals(report: dict[str, Any], now: datetime) -> dict[str, Any]:
    """What a report may say about an HTTP answer besides its status: ``error_code`` (the
    body's error code or type), ``retry_after``, ``rate_limit_remaining``, ``detail``."""
    code = report.get("error_code")
    remaining = report.get("rate_limit_remaining")
    return {"code": code if isinstance(code, str) else None,
            "message": str(report.get("detail") or ""),
            "retry_after": parse_retry_after(report.get("retry_after"), now),
            "remaining_zero": remaining == 0 and not isinstance(remaining, bool),
            "reset_at": parse_reset_at(report.get("reset_at"))}


def _items(value: Any) -> int | None:
    """A count of items: a finite number, not negative (a bool, NaN, a 400-digit integer or
    ``-1`` is ignored, as a malformed value is)."""
    try:
        return int(finite(value, "items", 0.0))
    except BadNumber:
        return None


def timeout_outcome(seconds: float) -> StepOutcome:
    return StepOutcome(Fault.TEMPORARY, "timeout", f"no answer within {seconds:g} s")


def spawn_failure(program: str, error: OSError) -> StepOutcome:
    why = error.strerror or type(error).__name__
    return StepOutcome(Fault.CONFIG, "config_error", f"cannot start {program!r}: {why}")
