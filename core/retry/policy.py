"""Retry classification, backoff and Retry-After parsing, as frozen values apart from any sleeping.

A step's outcome is first *classified* into a :class:`Fault` (:mod:`core.retry.table`'s
``classify_http`` for HTTP statuses, :mod:`core.providers.pipeline.protocol` for exit codes and
report files), then the step's :class:`RetryPolicy` *decides* what to do about it
(:meth:`RetryPolicy.decide`):

==========================  ===================================================================
fault                       what happens
==========================  ===================================================================
``none`` / ``empty``        success (``empty``: the step answered, with nothing to offer)
``temporary``               timeouts, connection errors, 408, 5xx: retried with exponential
                            backoff and full jitter while attempts remain, then *exhausted*
``rate_limited``            429 (and a 403 with rate-limit signals): a known ``retry_after`` ≤
                            ``max_inline_wait`` is waited in
                            process (+ a little jitter); a longer one pauses for quota; without a
                            time it is retried like a temporary fault
``quota_exhausted``         a known reset pauses for quota until then; without one it needs a
                            human (nothing will lift it by itself)
``auth`` / ``config``       401 / plain 403, exit 77 / exit 78: never retried — *needs a human*
``permanent``               anything else: never retried
==========================  ===================================================================

Retry-After comes in two forms (RFC 9110 §10.2.3): delay-seconds (digits only) and an HTTP-date.
:func:`parse_retry_after` accepts both and turns anything else into None — never an exception.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from enum import StrEnum

#: Retry-After values beyond this are treated as malformed (a 40-digit value is not a plan)
MAX_RETRY_AFTER_SECONDS = 30 * 86400.0
_DIGITS = re.compile(r"\d+")


class Fault(StrEnum):
    NONE = "none"  # success
    EMPTY = "empty"  # success without content
    TEMPORARY = "temporary"
    RATE_LIMITED = "rate_limited"
    QUOTA_EXHAUSTED = "quota_exhausted"
    AUTH = "auth"
    CONFIG = "config"
    PERMANENT = "permanent"

    @property
    def succeeded(self) -> bool:
        return self in (Fault.NONE, Fault.EMPTY)

    @property
    def needs_human(self) -> bool:
        """Auth and config faults: retrying cannot help, a person must fix something."""
        return self in (Fault.AUTH, Fault.CONFIG)


def parse_retry_after(value: object, now: datetime) -> float | None:
    """Seconds to wait from a Retry-After value (header text or a JSON number), or None.

    Header text must be delay-seconds (digits only) or an HTTP-date; a JSON number may be any
    finite non-negative value. Negative, non-finite, absurdly large or unparsable values are
    ignored (None). An HTTP-date in the past means "now" (0).
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        try:
            seconds = float(value)
        except OverflowError:  # a 400-digit integer: no float holds it, no wait is that long
            return None
    elif isinstance(value, str):
        parsed = _parse_header(value.strip(), now)
        if parsed is None:
            return None
        seconds = parsed
    else:
        return None
    if not math.isfinite(seconds) or seconds < 0 or seconds > MAX_RETRY_AFTER_SECONDS:
        return None
    return seconds


def _parse_header(text: str, now: datetime) -> float | None:
    if _DIGITS.fullmatch(text):
        if len(text) > 12:  # beyond MAX_RETRY_AFTER_SECONDS whatever the digits are
            return None
        return float(int(text))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)  # RFC 9110: an HTTP-date is always GMT
    return max(0.0, (when - now).total_seconds())


def parse_reset_at(value: object) -> datetime | None:
    """A reset instant from ISO 8601 text or epoch seconds (number or digits); None if bad."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        if isinstance(value, int | float) or (
            isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)?", value.strip())
        ):
            seconds = float(value)
            if not math.isfinite(seconds) or seconds < 0:
                return None
            return datetime.fromtimestamp(seconds, UTC)
        if isinstance(value, str):
            when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            return when.astimezone(UTC) if when.tzinfo else None
    except (ValueError, OverflowError, OSError):
        return None
    return None


class Action(StrEnum):
    SUCCEED = "succeed"
    RETRY = "retry"  # wait ``delay`` seconds in process, then try again
    WAIT_QUOTA = "wait_quota"  # pause the goal for quota until ``until``
    NEEDS_HUMAN = "needs_human"  # auth / config: never retried
    GIVE_UP = "give_up"  # permanent, or a temporary fault with no attempts left


@dataclass(frozen=True)
class RetryDecision:
    action: Action
    delay: float = 0.0
    until: datetime | None = None
    why: str = ""


@dataclass(frozen=True)
class RetryPolicy:
    """How one step is retried. Validated on construction.

    Attributes:
        retries: retries after the first attempt, for temporary faults and short rate limits.
        backoff_initial: the first backoff cap in seconds (attempt 1 waits up to this).
        backoff_multiplier: each further attempt multiplies the cap by this.
        backoff_max: the cap never grows beyond this.
        max_inline_wait: rate-limit waits up to this many seconds are slept in process; longer
            ones pause the goal for quota so the scheduler resumes it.
        rate_limit_jitter: up to this many seconds are added to an in-process rate-limit wait.
    """

    retries: int = 1
    backoff_initial: float = 1.0
    backoff_multiplier: float = 2.0
    backoff_max: float = 60.0
    max_inline_wait: float = 120.0
    rate_limit_jitter: float = 1.0

    def __post_init__(self) -> None:
        if not 0 <= self.retries <= 100:
            raise ValueError("retries must be between 0 and 100")
        if not (self.backoff_initial > 0 and self.backoff_max >= self.backoff_initial):
            raise ValueError("backoff_initial must be > 0 and backoff_max >= backoff_initial")
        if self.backoff_multiplier < 1:
            raise ValueError("backoff_multiplier must be at least 1")
        if self.max_inline_wait < 0 or self.rate_limit_jitter < 0:
            raise ValueError("max_inline_wait and rate_limit_jitter must not be negative")

    @property
    def max_attempts(self) -> int:
        return self.retries + 1

    def backoff(self, attempt: int, rand: float) -> float:
        """Full jitter: a uniform wait in [0, cap) after failed attempt ``attempt`` (1-based)."""
        exponent = min(max(attempt - 1, 0), 64)  # keeps the power finite
        cap = min(self.backoff_max, self.backoff_initial * self.backoff_multiplier ** exponent)
        return max(0.0, min(rand, 1.0)) * cap

    def decide(self, fault: Fault, attempt: int, now: datetime, rand: float,
               retry_after: float | None = None, reset_at: datetime | None = None
               ) -> RetryDecision:
        """What to do after attempt number ``attempt`` (1-based) ended with ``fault``."""
        if fault.succeeded:
            return RetryDecision(Action.SUCCEED)
        if fault.needs_human:
            return RetryDecision(Action.NEEDS_HUMAN, why=f"{fault.value}: needs a human")
        if fault is Fault.QUOTA_EXHAUSTED:
            return self._quota(now, retry_after, reset_at)
        if fault is Fault.RATE_LIMITED and retry_after is not None:
            return self._rate_limited(attempt, now, rand, retry_after)
        if fault in (Fault.TEMPORARY, Fault.RATE_LIMITED):
            if attempt <= self.retries:
                return RetryDecision(Action.RETRY, self.backoff(attempt, rand),
                                     why=f"{fault.value}: retry {attempt}/{self.retries}")
            return RetryDecision(Action.GIVE_UP,
                                 why=f"{fault.value}: no retries left after {attempt} attempts")
        return RetryDecision(Action.GIVE_UP, why=f"{fault.value}: not retried")

    def _quota(self, now: datetime, retry_after: float | None,
               reset_at: datetime | None) -> RetryDecision:
        until = reset_at
        if until is None and retry_after is not None:
            until = now + timedelta(seconds=retry_after)
        if until is None:
            return RetryDecision(Action.NEEDS_HUMAN, why="quota exhausted with no reset time")
        return RetryDecision(Action.WAIT_QUOTA, until=until, why="quota exhausted")

    def _rate_limited(self, attempt: int, now: datetime, rand: float,
                      retry_after: float) -> RetryDecision:
        if retry_after <= self.max_inline_wait and attempt <= self.retries:
            delay = retry_after + max(0.0, min(rand, 1.0)) * self.rate_limit_jitter
            return RetryDecision(Action.RETRY, delay,
                                 why=f"rate limited: retry {attempt}/{self.retries} "
                                     f"after {retry_after:g} s")
        return RetryDecision(Action.WAIT_QUOTA, until=now + timedelta(seconds=retry_after),
                             why=f"rate limited for {retry_after:g} s")
