"""The retry policy: every row of the classification, Retry-After vectors, backoff, validation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.providers.pipeline.protocol import classify, fault_from_exit
from core.retry.policy import (
    Action,
    Fault,
    RetryPolicy,
    parse_reset_at,
    parse_retry_after,
)
from core.retry.table import classify_http

NOW = datetime(2026, 7, 10, 1, 0, tzinfo=UTC)


@pytest.mark.parametrize(("status", "fault"), [
    (200, Fault.NONE), (204, Fault.NONE),
    (408, Fault.TEMPORARY), (500, Fault.TEMPORARY), (502, Fault.TEMPORARY),
    (503, Fault.TEMPORARY), (599, Fault.TEMPORARY),
    (429, Fault.RATE_LIMITED),
    (401, Fault.AUTH), (403, Fault.AUTH),
    (400, Fault.PERMANENT), (404, Fault.PERMANENT), (422, Fault.PERMANENT),
    (301, Fault.PERMANENT),
])
def test_http_statuses_are_classified(status: int, fault: Fault) -> None:
    assert classify_http(status) is fault


@pytest.mark.parametrize(("code", "fault"), [
    (0, Fault.NONE), (75, Fault.TEMPORARY), (77, Fault.AUTH), (78, Fault.CONFIG),
    (1, Fault.PERMANENT), (2, Fault.PERMANENT), (76, Fault.PERMANENT), (255, Fault.PERMANENT),
    (-9, Fault.PERMANENT),
])
def test_exit_codes_are_classified(code: int, fault: Fault) -> None:
    assert fault_from_exit(code)[0] is fault


@pytest.mark.parametrize(("status", "fault"), [
    ("ok", Fault.NONE), ("empty", Fault.EMPTY), ("rate_limited", Fault.RATE_LIMITED),
    ("quota_exhausted", Fault.QUOTA_EXHAUSTED), ("auth_failed", Fault.AUTH),
    ("timeout", Fault.TEMPORARY), ("temporary", Fault.TEMPORARY),
    ("config_error", Fault.CONFIG), ("error", Fault.PERMANENT),
])
def test_the_report_status_takes_precedence_over_the_exit_code(status: str, fault: Fault) -> None:
    for code in (0, 1, 75, 77):
        assert classify(code, {"status": status}, NOW).fault is fault


def test_a_report_with_an_unknown_status_is_ignored_and_said() -> None:
    outcome = classify(75, {"status": "weird", "items": 3}, NOW)
    assert outcome.fault is Fault.TEMPORARY
    assert "unknown" in outcome.detail


def test_http_status_in_a_report_is_classified() -> None:
    assert classify(0, {"http_status": 503}, NOW).fault is Fault.TEMPORARY
    assert classify(0, {"http_status": 401}, NOW).fault is Fault.AUTH
    assert classify(1, {"http_status": 200}, NOW).fault is Fault.NONE


@pytest.mark.parametrize("bad", [10 ** 400, -(10 ** 400), float("nan"), float("inf"), -1, True])
def test_a_report_with_malformed_numbers_is_classified_with_them_ignored(bad: object) -> None:
    outcome = classify(75, {"status": "rate_limited", "retry_after": bad, "items": bad,
                            "reset_at": bad, "http_status": bad}, NOW)
    assert outcome.fault is Fault.RATE_LIMITED
    assert (outcome.retry_after, outcome.items, outcome.reset_at) == (None, None, None)


def test_empty_means_success_with_zero_items() -> None:
    outcome = classify(0, {"status": "empty"}, NOW)
    assert outcome.fault.succeeded and outcome.items == 0


@pytest.mark.parametrize(("value", "expected"), [
    ("120", 120.0),
    ("0", 0.0),
    ("-1", None),
    ("1.5", None),  # delay-seconds is digits only (RFC 9110)
    ("nan", None),
    ("1" * 40, None),
    ("Fri, 10 Jul 2026 01:02:00 GMT", 120.0),
    ("Thu, 09 Jul 2026 01:00:00 GMT", 0.0),  # in the past: now
    ("soon", None),
    ("", None),
    ("12 34", None),
    ("Fri, 99 Jul 2026 01:02:00 GMT", None),
    (None, None),
    (True, None),
    (30, 30.0),
    (1.5, 1.5),  # a JSON number may be fractional
    (float("nan"), None),
    (float("inf"), None),
    (-3, None),
    (10 ** 40, None),
    (10 ** 400, None),  # no float holds it: ignored, not "int too large to convert to float"
    (-(10 ** 400), None),
    ([1], None),
])
def test_retry_after_vectors_never_raise(value: object, expected: float | None) -> None:
    assert parse_retry_after(value, NOW) == expected


@pytest.mark.parametrize(("value", "expected"), [
    ("2026-07-10T09:00:00+08:00", datetime(2026, 7, 10, 1, 0, tzinfo=UTC)),
    ("2026-07-10T01:00:00Z", datetime(2026, 7, 10, 1, 0, tzinfo=UTC)),
    (1783645200, datetime.fromtimestamp(1783645200, UTC)),
    ("1783645200", datetime.fromtimestamp(1783645200, UTC)),
    ("2026-07-10T01:00:00", None),  # no zone: refused rather than guessed
    ("tomorrow", None), (-5, None), (float("nan"), None), (1e30, None), (None, None),
    (False, None),
])
def test_reset_at_vectors(value: object, expected: datetime | None) -> None:
    assert parse_reset_at(value) == expected


POLICY = RetryPolicy(retries=2, backoff_initial=1.0, backoff_max=5.0, max_inline_wait=120)


@pytest.mark.parametrize(("fault", "attempt", "retry_after", "reset", "action"), [
    (Fault.NONE, 1, None, None, Action.SUCCEED),
    (Fault.EMPTY, 1, None, None, Action.SUCCEED),
    (Fault.TEMPORARY, 1, None, None, Action.RETRY),
    (Fault.TEMPORARY, 2, None, None, Action.RETRY),
    (Fault.TEMPORARY, 3, None, None, Action.GIVE_UP),  # attempts are finite
    (Fault.RATE_LIMITED, 1, 120.0, None, Action.RETRY),  # ≤ 120 s: waited in process
    (Fault.RATE_LIMITED, 1, 121.0, None, Action.WAIT_QUOTA),  # longer: pause for quota
    (Fault.RATE_LIMITED, 3, 5.0, None, Action.WAIT_QUOTA),  # no retries left: the scheduler
    (Fault.RATE_LIMITED, 1, None, None, Action.RETRY),  # no time given: backoff
    (Fault.RATE_LIMITED, 3, None, None, Action.GIVE_UP),
    (Fault.QUOTA_EXHAUSTED, 1, None, NOW + timedelta(hours=3), Action.WAIT_QUOTA),
    (Fault.QUOTA_EXHAUSTED, 1, 600.0, None, Action.WAIT_QUOTA),
    (Fault.QUOTA_EXHAUSTED, 1, None, None, Action.NEEDS_HUMAN),
    (Fault.AUTH, 1, None, None, Action.NEEDS_HUMAN),  # never retried
    (Fault.CONFIG, 1, None, None, Action.NEEDS_HUMAN),
    (Fault.PERMANENT, 1, None, None, Action.GIVE_UP),
])
def test_every_row_of_the_retry_decision(fault: Fault, attempt: int, retry_after: float | None,
                                         reset: datetime | None, action: Action) -> None:
    decision = POLICY.decide(fault, attempt, NOW, 0.5, retry_after, reset)
    assert decision.action is action


def test_a_short_rate_limit_waits_exactly_that_plus_small_jitter() -> None:
    assert POLICY.decide(Fault.RATE_LIMITED, 1, NOW, 0.0, 30.0).delay == 30.0
    assert 30.0 < POLICY.decide(Fault.RATE_LIMITED, 1, NOW, 0.99, 30.0).delay <= 31.0


def test_quota_waits_carry_their_instant() -> None:
    reset = NOW + timedelta(hours=2)
    assert POLICY.decide(Fault.QUOTA_EXHAUSTED, 1, NOW, 0, None, reset).until == reset
    assert POLICY.decide(Fault.RATE_LIMITED, 1, NOW, 0, 600.0).until == NOW + timedelta(
        seconds=600)


def test_backoff_is_exponential_with_full_jitter_and_a_cap() -> None:
    policy = RetryPolicy(retries=10, backoff_initial=1.0, backoff_multiplier=2.0, backoff_max=5.0)
    assert [policy.backoff(a, 0.999999) for a in (1, 2, 3, 4, 10, 10_000)] == pytest.approx(
        [1.0, 2.0, 4.0, 5.0, 5.0, 5.0], rel=1e-5)
    assert policy.backoff(3, 0.0) == 0.0  # full jitter: anywhere from zero
    assert policy.backoff(3, 0.5) == pytest.approx(2.0)


@pytest.mark.parametrize("kwargs", [
    {"retries": -1}, {"retries": 101}, {"backoff_initial": 0}, {"backoff_max": 0.5},
    {"backoff_multiplier": 0.5}, {"max_inline_wait": -1}, {"rate_limit_jitter": -1},
])
def test_a_policy_checks_itself(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


def test_a_policy_is_frozen() -> None:
    with pytest.raises(AttributeError):
        POLICY.retries = 5  # type: ignore[misc]
