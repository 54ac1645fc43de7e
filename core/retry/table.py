"""The retry classification, as data: one :class:`Rule` per row of ``retry-table.md``.

:func:`classify_error` takes what is known about an error (:class:`ErrorSignals`: an HTTP status
and its rate-limit signals, a transport failure, an exit, an SQLite result code) and answers with
the first row that matches — its :class:`~core.retry.policy.Fault`, whether it is retried, the
delay rule
and the goal-level effect. The rows are in the table's order; where two could match, the more
specific comes first (``429 insufficient_quota`` before ``429``; ``403`` with rate-limit signals
before plain ``403``). ``tests/faults/test_retry_table.py`` checks every row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.retry.policy import Fault

#: server-directed waits up to this are slept in process (OpenAI's ceiling)
MAX_INLINE_WAIT_SECONDS = 120.0
#: body error codes / types that mean the quota itself is used up (not a rate)
QUOTA_CODES = frozenset({"insufficient_quota", "usage_limit_exceeded", "usage_limit_reached",
                         "credit_exhausted", "credits_exhausted", "billing_hard_limit_reached",
                         "quota_exceeded"})
_RATE_WORDS = ("rate limit", "rate-limit", "ratelimit", "too many requests",
               "secondary rate limit", "abuse detection")


@dataclass(frozen=True)
class ErrorSignals:
    """What is known about one failed call. Every field may be unknown.

    Attributes:
        status: the HTTP status.
        code: the body's error code or type (``insufficient_quota``, ``overloaded_error``).
        message: the error message.
        retry_after: seconds from Retry-After / retry-after-ms (None: absent or malformed).
        remaining_zero: a rate-limit header says nothing is left (``x-ratelimit-remaining: 0``).
        reset_at: a provider reset header for the exhausted window.
        should_retry: ``x-should-retry`` (True / False), when sent.
        transport: ``connection``, ``dns``, ``tls`` or ``timeout`` for a call that got no answer.
        idempotent: the call carries a stable idempotency key (or cannot do harm twice).
        lock_contention: a 409 that means lock contention.
        signal: the executor was killed by this signal (a crash).
        invalid: a programming or validation error (type error, schema mismatch).
        sqlite: an SQLite result code name (``SQLITE_BUSY``…).
        windows_replace: ``os.replace`` failed with a Windows sharing violation (5/32/33).
    """

    status: int | None = None
    code: str | None = None
    message: str = ""
    retry_after: float | None = None
    remaining_zero: bool = False
    reset_at: datetime | None = None
    should_retry: bool | None = None
    transport: str | None = None
    idempotent: bool = False
    lock_contention: bool = False
    signal: int | None = None
    invalid: bool = False
    sqlite: str | None = None
    windows_replace: bool = False

    @property
    def rate_limit_signals(self) -> bool:
        """Retry-After, nothing remaining, or a message that says rate limit (GitHub's rule
        for telling a rate-limited 403 from a permission error)."""
        text = f"{self.code or ''} {self.message}".lower()
        return self.retry_after is not None or self.remaining_zero or any(
            word in text for word in _RATE_WORDS)

    @property
    def quota_used_up(self) -> bool:
        text = f"{self.code or ''} {self.message}".lower().replace(" ", "_")
        return any(code in text for code in QUOTA_CODES)


@dataclass(frozen=True)
class Classification:
    """One row's answer."""

    rule: str
    fault: Fault
    retried: bool
    delay: str
    effect: str


@dataclass(frozen=True)
class Rule:
    name: str
    matches: Callable[[ErrorSignals], bool]
    answer: Callable[[ErrorSignals], Classification]


def _row(name: str, matches: Callable[[ErrorSignals], bool], fault: Fault, retried: bool,
         delay: str, effect: str) -> Rule:
    return Rule(name, matches, lambda s: Classification(name, fault, retried, delay, effect))


def _rate_limited(name: str, matches: Callable[[ErrorSignals], bool]) -> Rule:
    """The three 429 rows (also for a 403 with rate-limit signals): the wait decides."""
    def answer(s: ErrorSignals) -> Classification:
        if s.retry_after is not None and s.retry_after <= MAX_INLINE_WAIT_SECONDS:
            return Classification(name, Fault.RATE_LIMITED, True,
                                  "exactly Retry-After + 0-10 % jitter", "stay running")
        if s.retry_after is not None or s.reset_at is not None:
            return Classification(name, Fault.RATE_LIMITED, False,
                                  "not-before = Retry-After or the reset + jitter",
                                  "paused (quota); resumed via hysteresis and a probe")
        return Classification(name, Fault.RATE_LIMITED, True, "our backoff", "stay running")

    return Rule(name, matches, answer)


def _quota_exhausted(s: ErrorSignals) -> Classification:
    effect = "paused (quota) until the reset" if s.reset_at is not None else (
        "needs attention (no automatic resume)")
    return Classification("429 usage limit / insufficient_quota / credits", Fault.QUOTA_EXHAUSTED,
                          False, "not-before = the reset, if one is known", effect)


BACKOFF = "full-jitter backoff, at most 3 retries"
RETRY_LATER = "then step failure (transient): paused (retry later), fallback poll"

RULES: list[Rule] = [
    _row("x-should-retry: false", lambda s: s.should_retry is False, Fault.PERMANENT, False,
         "none (the server says so)", "step fails"),
    _row("SQLITE_BUSY_SNAPSHOT", lambda s: s.sqlite == "SQLITE_BUSY_SNAPSHOT", Fault.TEMPORARY,
         True, "roll back and rerun the whole transaction at once", "logged as a bug"),
    _row("SQLITE_BUSY", lambda s: s.sqlite in ("SQLITE_BUSY", "SQLITE_LOCKED"),
         Fault.TEMPORARY, True, "busy timeout, then the whole transaction again, at most 3 times",
         "surfaced only after exhaustion (store unavailable)"),
    _row("SQLITE_FULL / SQLITE_READONLY",
         lambda s: s.sqlite is not None and s.sqlite.startswith(("SQLITE_FULL",
                                                                 "SQLITE_READONLY")),
         Fault.TEMPORARY, False, "re-check on a slow poll (5 min)",
         "paused (local error): store unavailable, reports wait"),
    _row("SQLITE_CORRUPT / SQLITE_NOTADB",
         lambda s: s.sqlite in ("SQLITE_CORRUPT", "SQLITE_NOTADB"), Fault.PERMANENT, False,
         "none", "safe mode, quarantine, restore"),
    _row("Windows os.replace PermissionError", lambda s: s.windows_replace, Fault.TEMPORARY,
         True, "50 ms doubling to 1 s, at most about 2.5 s", "then fail loudly"),
    _row("programming / validation error", lambda s: s.invalid, Fault.PERMANENT, False, "none",
         "failed with details"),
    _row("executor crash", lambda s: s.signal is not None, Fault.TEMPORARY, True,
         "step-level policy: 30 s doubling to 15 min, at most 5 attempts",
         "then needs attention (poison-step guard)"),
    _row("connection refused / reset, DNS, TLS",
         lambda s: s.transport in ("connection", "dns", "tls"), Fault.TEMPORARY, True, BACKOFF,
         RETRY_LATER),
    _row("connect / read timeout, idempotent", lambda s: s.transport == "timeout"
         and s.idempotent, Fault.TEMPORARY, True, BACKOFF, RETRY_LATER),
    _row("connect / read timeout, not idempotent", lambda s: s.transport == "timeout",
         Fault.PERMANENT, False, "none (a second call might act twice)", "step fails"),
    _row("x-should-retry: true", lambda s: s.should_retry is True and s.status not in (
        429, 403), Fault.TEMPORARY, True, "the normal delay rules", RETRY_LATER),
    _row("408 Request Timeout", lambda s: s.status == 408, Fault.TEMPORARY, True, "backoff",
         RETRY_LATER),
    _row("409 Conflict, lock contention", lambda s: s.status == 409 and s.lock_contention
         and s.idempotent, Fault.TEMPORARY, True, "backoff", RETRY_LATER),
    _row("409 Conflict", lambda s: s.status == 409, Fault.PERMANENT, False, "none",
         "permanent step failure"),
    Rule("429 usage limit / insufficient_quota / credits",
         lambda s: s.status == 429 and s.quota_used_up, _quota_exhausted),
    _rate_limited("429", lambda s: s.status == 429),
    _row("500, 502, 504", lambda s: s.status in (500, 502, 504), Fault.TEMPORARY, True,
         "backoff", "after exhaustion: paused (retry later)"),
    _row("503", lambda s: s.status == 503, Fault.TEMPORARY, True,
         "Retry-After if present (same thresholds), else backoff",
         "after exhaustion: paused (retry later)"),
    _row("529 Overloaded", lambda s: s.status == 529, Fault.TEMPORARY, True,
         "backoff with a 60 s cap, same attempt limit", "after exhaustion: paused (retry later)"),
    _row("401 Unauthorized", lambda s: s.status == 401, Fault.AUTH, False, "none",
         "paused (auth): the user must act; never auto-resumed"),
    _rate_limited("403 with rate-limit signals",
                  lambda s: s.status == 403 and s.rate_limit_signals),
    _row("403 Forbidden", lambda s: s.status == 403, Fault.AUTH, False, "none",
         "paused (auth/config): the user must act"),
    _row("400, 404, 413, 422", lambda s: s.status in (400, 404, 413, 422), Fault.PERMANENT,
         False, "none", "step fails permanently; a source is marked missing"),
]


def classify_error(signals: ErrorSignals) -> Classification:
    """The first row of the table that ``signals`` match (unmatched: not retried)."""
    for rule in RULES:
        if rule.matches(signals):
            return rule.answer(signals)
    if signals.status is not None and 200 <= signals.status < 300:
        return Classification("2xx", Fault.NONE, False, "none", "success")
    if signals.status is not None and signals.status >= 500:
        return Classification("other 5xx", Fault.TEMPORARY, True, "backoff",
                              "after exhaustion: paused (retry later)")
    return Classification("anything else", Fault.PERMANENT, False, "none", "step fails")


__all__ = ["RULES", "Classification", "ErrorSignals", "classify_error"]


def classify_http(status: int, **signals: Any) -> Fault:
    """The fault an HTTP status stands for (2xx is success), with what else is known about
    the answer (``code``, ``message``, ``retry_after``, ``remaining_zero``…): the rows of
    this table — a 429 ``insufficient_quota`` is a quota stop, a 403 with
    rate-limit signals a rate limit."""
    return classify_error(ErrorSignals(status=status, **signals)).fault
