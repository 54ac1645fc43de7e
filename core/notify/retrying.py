"""How a notification is retried: the retry table (:mod:`core.retry.table`) applied to one
HTTP POST.

The classification and the backoff are :mod:`core.retry`'s (``table.classify_http``,
``policy.parse_retry_after``, :class:`~core.retry.policy.RetryPolicy`); this module only maps an
HTTP :class:`~core.notify.http.Response` onto them, with the table's rows for a call like ours:

* connection refused / reset, DNS, TLS, time-outs, 408, 500/502/504: full-jitter backoff (1 s,
  ×2, cap 30 s), at most 3 retries. Time-outs are retried because both channels carry a stable
  idempotency key (the webhook's ``X-Goalkeeper-Delivery``, ntfy's ``sequence_id``, which makes
  ntfy replace a message rather than add a second one);
* 529: the same with a 60 s cap;
* 429 — and 503 or 403 with a Retry-After — wait exactly Retry-After plus 0–10 % (at most 5 s)
  when it is at most 120 s; a longer one is not waited in process: the notification is given up
  and the channel *rests* until then (plus 0–60 s);
* 401 / 403: never retried (a token to fix); every other 4xx, and a 3xx (redirects are not
  followed): never retried;
* ``x-should-retry: true/false`` is obeyed; a malformed Retry-After is ignored (backoff instead).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from http import HTTPStatus

from core.i18n import N_
from core.notify.http import Response, Transport
from core.retry.policy import Fault, RetryDecision, RetryPolicy, parse_retry_after
from core.retry.table import classify_http

_RETRYABLE = (Fault.TEMPORARY, Fault.RATE_LIMITED)


def _table_backoff() -> RetryPolicy:
    return RetryPolicy(retries=3, backoff_initial=1.0, backoff_multiplier=2.0, backoff_max=30.0,
                       max_inline_wait=120.0, rate_limit_jitter=0.0)


@dataclass(frozen=True)
class Verdict:
    """What one attempt's answer means: the fault, a server-directed wait, a malformed header."""

    fault: Fault
    retry_after: float | None = None
    malformed_retry_after: bool = False


def verdict(response: Response, now: datetime) -> Verdict:
    """Classify one attempt's :class:`Response` (a transport failure is temporary)."""
    if response.status is None:
        return Verdict(Fault.TEMPORARY)
    raw = response.headers.get("retry-after")
    wait = parse_retry_after(raw, now) if raw is not None else None
    fault = classify_http(response.status)
    if wait is not None and response.status in (403, 503):
        fault = Fault.RATE_LIMITED  # a server-directed wait (the table's 503 and 403 rows)
    should = response.headers.get("x-should-retry", "").strip().lower()
    if should == "false" and fault in _RETRYABLE:
        fault = Fault.PERMANENT
    elif should == "true" and not fault.succeeded and fault not in _RETRYABLE:
        fault = Fault.TEMPORARY
    return Verdict(fault, wait, raw is not None and wait is None)


@dataclass(frozen=True)
class DeliveryPolicy:
    """How one notification is sent and retried. Validated on construction.

    Attributes:
        timeout: seconds per attempt (connect, and each read).
        backoff: the in-call retries and the longest server-directed wait slept in process.
        server_jitter: a Retry-After wait gets up to this fraction of it on top …
        max_server_jitter: … but at most this many seconds.
        overload_backoff_max: the backoff cap for 529 Overloaded.
        rest_jitter: a channel told to wait longer rests until then plus up to this.
    """

    timeout: float = 10.0
    backoff: RetryPolicy = field(default_factory=_table_backoff)
    server_jitter: float = 0.10
    max_server_jitter: float = 5.0
    overload_backoff_max: float = 60.0
    rest_jitter: float = 60.0

    def __post_init__(self) -> None:
        if not 0 < self.timeout <= 600:
            raise ValueError("timeout must be in (0, 600] seconds")
        if not 0 <= self.server_jitter <= 1 or self.max_server_jitter < 0:
            raise ValueError("server_jitter must be in [0, 1] and max_server_jitter >= 0")
        if self.overload_backoff_max < self.backoff.backoff_initial or self.rest_jitter < 0:
            raise ValueError("overload_backoff_max must be >= the initial backoff, "
                             "rest_jitter >= 0")

    def decide(self, found: Verdict, status: int | None, attempt: int, now: datetime,
               rand: float) -> RetryDecision:
        """What to do after attempt ``attempt`` (1-based) ended as ``found``."""
        policy = self.backoff
        if status == 529:
            policy = dataclasses.replace(policy, backoff_max=self.overload_backoff_max)
        if found.fault is Fault.RATE_LIMITED and found.retry_after is not None:
            jitter = min(self.max_server_jitter, self.server_jitter * found.retry_after)
            policy = dataclasses.replace(policy, rate_limit_jitter=jitter)
        return policy.decide(found.fault, attempt, now, rand, retry_after=found.retry_after)


def describe(response: Response, timeout: float, auth_hint: str) -> tuple[str, str]:
    """(a human reason, the reason's key) for an attempt that did not succeed. Secret-free: the
    URL and the headers are never part of it."""
    if response.status is None:
        transport = response.transport or Transport.OTHER
        if transport is Transport.TIMEOUT:
            return N_("no answer within {seconds} s").format(seconds=f"{timeout:g}"), \
                transport.value
        return response.error or transport.value, transport.value
    status = response.status
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "status"
    text = f"HTTP {status} {phrase}"
    if status in (401, 403):
        text = N_("{status} — {hint}").format(status=text, hint=auth_hint)
    elif status == 404:
        text = N_("{status} — check the URL").format(status=text)
    elif 300 <= status < 400:
        text = N_("{status} — redirects are not followed: put the final URL in the settings"
                  ).format(status=text)
    return text, f"http-{status}"
