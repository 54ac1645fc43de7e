"""Quota arithmetic and the hysteresis state machine (edges emitted once, no flapping)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.events import QuotaExhausted, QuotaRecovered
from core.models import Exactness, QuotaKind, QuotaReading
from core.quota.machine import (
    HysteresisPolicy,
    QuotaManager,
    WindowState,
    effective,
    is_exhausted,
    recovery_instant,
    seconds_until_tokens,
)
from tests.support.fakes import reading

T0 = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)
POLICY = HysteresisPolicy(stable_seconds=30)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def kinds(edges: list[object]) -> list[str]:
    return [type(e).__name__ for e in edges]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"pause_threshold_percent": 0}, "pause_threshold"),
    ({"pause_threshold_percent": 101}, "pause_threshold"),
    ({"resume_threshold_percent": 100}, "resume_threshold"),
    ({"resume_threshold_percent": -1}, "resume_threshold"),
    ({"stable_seconds": -1}, "stable_seconds"),
])
def test_policy_checks_itself(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        HysteresisPolicy(**kwargs)


def test_exhausted_at_threshold_or_when_the_provider_says_so() -> None:
    assert is_exhausted(reading("w", 100, T0), POLICY)
    assert not is_exhausted(reading("w", 99.9, T0), POLICY)
    assert is_exhausted(reading("w", 40, T0, limit_reached=True), POLICY)
    capacity = QuotaReading(window_id="c", provider="u", label="c", kind=QuotaKind.CAPACITY,
                            used=1000, limit=1000, observed_at=T0)
    assert is_exhausted(capacity, POLICY)


def test_a_passed_reset_is_inferred_empty_and_rolls_to_the_next_window() -> None:
    r = reading("w", 100, T0, at(60), window_seconds=3600, limit_reached=True)
    before = effective(r, at(59), POLICY)
    assert before.used_percent == 100 and before.exactness is Exactness.EXACT
    after = effective(r, at(61), POLICY)
    assert after.used_percent == 0
    assert after.exactness is Exactness.INFERRED
    assert after.limit_reached is False
    assert after.resets_at == at(3660)
    assert "has passed" in (after.note or "")


def test_old_readings_are_marked_stale() -> None:
    r = reading("w", 50, T0, at(99999))
    assert effective(r, at(599), POLICY).exactness is Exactness.EXACT
    assert effective(r, at(601), POLICY).exactness is Exactness.STALE


def test_token_bucket_refills_and_tells_when_units_are_available() -> None:
    bucket = QuotaReading(window_id="b", provider="u", label="b", kind=QuotaKind.TOKEN_BUCKET,
                          rate_per_second=10 / 60, burst=20, tokens=0, observed_at=T0)
    assert seconds_until_tokens(bucket, 5, T0) == pytest.approx(30)
    assert seconds_until_tokens(bucket, 5, at(30)) == 0
    assert seconds_until_tokens(bucket, 21, T0) is None  # more than the burst: never
    later = effective(bucket, at(60), POLICY)
    assert later.tokens == pytest.approx(10)
    assert later.used_percent == pytest.approx(50)
    assert later.exactness is Exactness.ESTIMATED
    assert effective(bucket, at(10_000), POLICY).tokens == 20  # capped at the burst
    # recovered once 10 % of the burst (2 tokens) is back
    assert recovery_instant(bucket, T0, POLICY) == at(12)


def test_capacity_and_credit_limits_have_no_recovery_instant() -> None:
    capacity = QuotaReading(window_id="c", provider="u", label="c", kind=QuotaKind.CAPACITY,
                            used=10, limit=10, observed_at=T0)
    assert recovery_instant(capacity, T0, POLICY) is None
    credits = reading("w", 100, T0, at(60), no_timed_reset=True)
    assert recovery_instant(credits, T0, POLICY) is None


def test_edges_are_emitted_once_each_way() -> None:
    qm = QuotaManager(POLICY)
    assert qm.observe(reading("w", 50, at(0)), at(0)) == []  # unknown -> ok: silent
    assert kinds(qm.observe(reading("w", 100, at(1)), at(1))) == ["QuotaExhausted"]
    assert qm.observe(reading("w", 100, at(2)), at(2)) == []  # sustained: nothing more
    assert qm.observe(reading("w", 10, at(3)), at(3)) == []  # recovered, not yet stable
    assert qm.evaluate(at(32)) == []
    edges = qm.evaluate(at(33))
    assert kinds(edges) == ["QuotaRecovered"]
    assert isinstance(edges[0], QuotaRecovered) and edges[0].recovered_since == at(3)
    assert qm.evaluate(at(100)) == []  # sustained recovered: nothing more
    assert qm.observe(reading("w", 5, at(101)), at(101)) == []


def test_flapping_around_the_boundary_never_recovers() -> None:
    qm = QuotaManager(POLICY)
    qm.observe(reading("w", 100, at(0)), at(0))
    edges: list[object] = []
    # every reading recovered only briefly before bouncing into the band or the limit again
    for i, used in enumerate([89, 95, 80, 100, 90, 91, 85, 99.5] * 5):
        t = at(1 + i * 10)
        edges += qm.observe(reading("w", used, t), t)
    assert edges == []  # never stable for 30 s: no recovery, and no second exhaustion
    assert qm.tracker("w").state is WindowState.EXHAUSTED


def test_hysteresis_band_is_neither_exhausted_nor_recovered() -> None:
    qm = QuotaManager(POLICY)
    qm.observe(reading("w", 100, at(0)), at(0))
    qm.observe(reading("w", 95, at(1)), at(1))
    assert qm.evaluate(at(1000)) == []  # 95 % for ages: still not recovered
    assert not qm.is_recovered("w")
    qm2 = QuotaManager(POLICY)
    qm2.observe(reading("w", 95, at(0)), at(0))
    assert qm2.is_recovered("w")  # never exhausted: 95 % does not pause anything


def test_inferred_recovery_counts_from_the_reset_instant() -> None:
    qm = QuotaManager(POLICY)
    qm.observe(reading("w", 100, at(0), at(100), limit_reached=True), at(0))
    assert qm.next_check(at(0)) == at(100)  # wake when the reset passes
    assert qm.evaluate(at(100)) == []  # recovered since 100, not yet stable
    assert qm.next_check(at(100)) == at(130)
    assert kinds(qm.evaluate(at(130))) == ["QuotaRecovered"]


def test_out_of_order_readings_are_ignored() -> None:
    qm = QuotaManager(POLICY)
    qm.observe(reading("w", 100, at(10)), at(10))
    assert qm.observe(reading("w", 0, at(5)), at(11)) == []
    assert qm.tracker("w").reading is not None and qm.tracker("w").reading.used_percent == 100


def test_a_window_never_read_does_not_block() -> None:
    qm = QuotaManager(POLICY)
    assert qm.is_recovered("never:seen")
    assert isinstance(QuotaExhausted("w", reading("w", 100, T0)), QuotaExhausted)


def test_a_reading_after_the_reset_confirms_recovery_since_the_reset() -> None:
    qm = QuotaManager(POLICY)
    qm.observe(reading("w", 100, at(0), at(100), limit_reached=True), at(0))
    # the authoritative read 45 s after the reset says 3 %: empty since the reset, not since now
    assert kinds(qm.observe(reading("w", 3, at(145), at(18100)), at(145))) == ["QuotaRecovered"]
    qm2 = QuotaManager(POLICY)
    qm2.observe(reading("w", 100, at(0), at(100), limit_reached=True), at(0))
    # ... but a reading in the hysteresis band after the reset is not a recovery at all
    assert qm2.observe(reading("w", 95, at(145), at(18100)), at(145)) == []
    assert qm2.evaluate(at(10_000)) == []
