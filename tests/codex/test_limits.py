"""Every Codex rate-limit shape → Goalkeeper readings; sparse merges never clear a field."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from core.models import Exactness, QuotaKind
from core.providers.codex.limits import (
    CREDITS,
    FIVE_HOUR,
    MONTHLY,
    WEEKLY,
    LimitShapeError,
    from_app_server,
    from_rollout,
    merge,
    pick_codex_bucket,
    window_id,
)
from core.providers.codex.readings import limit_lifts_at, to_readings
from core.providers.codex.rollout import MalformedLine, RateLine, parse_line
from core.quota.machine import HysteresisPolicy, effective
from tests.codex.fixtures import T0, five_and_week, limits, token_count, window

H = timedelta(hours=1)


def by_id(snapshot, now=T0, stale_after=600.0):
    return {r.window_id: r for r in to_readings(snapshot, now, stale_after)}


def test_current_shape_gives_both_windows_and_credits():
    snap = from_rollout(five_and_week(100.0, T0 + H, 63.0, T0 + 50 * H), T0)
    readings = by_id(snap)
    assert set(readings) == {FIVE_HOUR, WEEKLY, CREDITS}
    five = readings[FIVE_HOUR]
    assert five.used_percent == 100.0 and five.resets_at == T0 + H
    assert five.window_seconds == 300 * 60 and five.limit_reached is True
    assert five.exactness is Exactness.EXACT and five.observed_at == T0
    assert readings[WEEKLY].limit_reached is None
    assert readings[CREDITS].kind is QuotaKind.CAPACITY
    assert readings[CREDITS].limit_reached is False and readings[CREDITS].note == (
        "credit balance 0")


def test_windows_are_told_apart_by_length_never_by_position():
    swapped = limits(window(80.0, 10080, T0 + 90 * H), window(12.0, 300, T0 + 2 * H))
    readings = by_id(from_rollout(swapped, T0))
    assert readings[WEEKLY].used_percent == 80.0
    assert readings[FIVE_HOUR].used_percent == 12.0


def test_legacy_resets_in_seconds_is_relative_to_the_line_not_to_now():
    legacy = {"primary": {"used_percent": 34.5, "window_minutes": 299, "resets_in_seconds": 600},
              "secondary": {"used_percent": 9.0, "window_minutes": 10079,
                            "resets_in_seconds": 86_400}}
    line_time = T0 - 3 * H
    readings = by_id(from_rollout(legacy, line_time), now=T0)
    assert readings[FIVE_HOUR].resets_at == line_time + timedelta(seconds=600)
    assert readings[WEEKLY].resets_at == line_time + timedelta(days=1)
    assert CREDITS not in readings  # legacy lines carry no credits


def test_flat_shape_uses_the_slot_names_and_has_no_reset():
    flat = {"primary_used_percent": 71.0, "secondary_used_percent": 20.5,
            "primary_to_secondary_ratio_percent": 3.0}
    readings = by_id(from_rollout(flat, T0))
    assert readings[FIVE_HOUR].used_percent == 71.0 and readings[FIVE_HOUR].resets_at is None
    assert readings[WEEKLY].used_percent == 20.5
    assert readings[FIVE_HOUR].note == "old Codex shape: no reset"


def test_monthly_only_plan_with_secondary_null():
    monthly = limits(window(42.0, 43_800, T0 + 200 * H), None)
    readings = by_id(from_rollout(monthly, T0))
    assert set(readings) == {MONTHLY, CREDITS}
    assert readings[MONTHLY].window_seconds == 43_800 * 60


def test_info_null_line_still_carries_rate_limits():
    raw = token_count(T0, five_and_week(5.0, T0 + H, 1.0, T0 + 9 * H), info=False)
    event = parse_line(raw.encode())
    assert isinstance(event, RateLine)
    assert by_id(event.snapshot)[FIVE_HOUR].used_percent == 5.0


def test_token_count_without_rate_limits_is_not_a_snapshot():
    assert parse_line(token_count(T0, None).encode()) is None


@pytest.mark.parametrize("bad", [
    {"primary": "full"},
    {"primary": {"used_percent": "a lot", "window_minutes": 300}},
    {"primary": {"used_percent": 10, "window_minutes": 300, "resets_at": -5}},
    {"nothing": 1},
])
def test_unusable_rate_limits_are_a_malformed_line(bad):
    text = token_count(T0, bad)
    with pytest.raises(MalformedLine, match="token_count"):
        parse_line(text.encode())


@pytest.mark.parametrize("kind", ["workspace_owner_credits_depleted",
                                  "workspace_member_credits_depleted",
                                  "workspace_owner_usage_limit_reached",
                                  "workspace_member_usage_limit_reached"])
def test_credit_and_workspace_kinds_have_no_timed_reset(kind):
    snap = from_rollout(five_and_week(40.0, T0 + H, 20.0, T0 + 9 * H, reached=kind), T0)
    credits = by_id(snap)[CREDITS]
    assert credits.limit_reached is True and credits.no_timed_reset is True
    assert "no timed reset" in (credits.note or "")
    assert limit_lifts_at(snap) is None


def test_timed_limit_marks_the_fullest_window_and_lifts_at_its_reset():
    snap = from_rollout(five_and_week(98.0, T0 + H, 100.0, T0 + 30 * H,
                                      reached="rate_limit_reached"), T0)
    assert by_id(snap)[WEEKLY].limit_reached is True
    assert limit_lifts_at(snap) == T0 + 30 * H
    early = from_rollout(five_and_week(97.0, T0 + H, 30.0, T0 + 30 * H,
                                       reached="rate_limit_reached"), T0)
    assert by_id(early)[FIVE_HOUR].limit_reached is True  # Codex said so; the fullest one
    calm = from_rollout(five_and_week(40.0, T0 + H, 30.0, T0 + 30 * H), T0)
    assert limit_lifts_at(calm) == T0 + H  # nothing used up: the first thing that changes


def test_old_snapshot_is_stale_and_a_passed_reset_is_inferred():
    snap = from_rollout(five_and_week(100.0, T0 - H, 50.0, T0 + 9 * H), T0 - 2 * H)
    readings = by_id(snap, now=T0)
    assert readings[FIVE_HOUR].exactness is Exactness.STALE
    shown = effective(readings[FIVE_HOUR], T0, HysteresisPolicy())
    assert shown.exactness is Exactness.INFERRED and shown.used_percent == 0.0


APP_READ = json.loads("""{"rateLimits":{"limitId":"codex","limitName":null,
 "primary":{"usedPercent":100,"windowDurationMins":300,"resetsAt":1783440000},
 "secondary":{"usedPercent":63,"windowDurationMins":10080,"resetsAt":1783900800},
 "credits":{"hasCredits":false,"unlimited":false,"balance":"0"},"planType":"plus",
 "rateLimitReachedType":"rate_limit_reached"},
 "rateLimitsByLimitId":{"codex":{"limitId":"codex",
 "primary":{"usedPercent":100,"windowDurationMins":300,"resetsAt":1783440000}}}}""")


def test_app_server_snapshot_is_parsed_from_camel_case():
    snap = from_app_server(pick_codex_bucket(APP_READ), T0)
    readings = by_id(snap)
    assert readings[FIVE_HOUR].used_percent == 100.0
    assert readings[FIVE_HOUR].resets_at is not None
    assert int(readings[FIVE_HOUR].resets_at.timestamp()) == 1783440000
    assert readings[WEEKLY].used_percent == 63.0
    assert snap.source == "app-server"


def test_sparse_update_never_clears_a_field():
    base = from_app_server(pick_codex_bucket(APP_READ), T0)
    update = from_app_server({"primary": {"usedPercent": 4}, "secondary": None, "credits": None,
                              "planType": None}, T0 + H)
    merged = merge(base, update)
    readings = by_id(merged, now=T0 + H)
    assert readings[FIVE_HOUR].used_percent == 4.0
    assert readings[FIVE_HOUR].window_seconds == 300 * 60  # kept from the read
    assert readings[FIVE_HOUR].resets_at == by_id(base)[FIVE_HOUR].resets_at
    assert readings[WEEKLY].used_percent == 63.0
    assert merged.plan_type == "plus" and merged.credits == base.credits
    assert merged.observed_at == T0 + H


def test_other_limit_buckets_are_not_the_codex_one():
    result = {"rateLimits": {"limitId": "codex_other", "primary": None},
              "rateLimitsByLimitId": {"codex": {"limitId": "codex", "primary": {
                  "usedPercent": 7, "windowDurationMins": 300, "resetsAt": 1783440000}}}}
    assert from_app_server(pick_codex_bucket(result), T0).slots["primary"].used_percent == 7.0
    with pytest.raises(LimitShapeError):
        pick_codex_bucket({"nothing": True})


@pytest.mark.parametrize(("minutes", "expected"), [
    (300, FIVE_HOUR), (299, FIVE_HOUR), (10080, WEEKLY), (10079, WEEKLY),
    (43_800, MONTHLY), (43_200, MONTHLY), (60, None), (None, None),
])
def test_window_lengths(minutes, expected):
    assert window_id(minutes, "primary") == expected


def read_result(allowed, spend=None, credits=None, used5=3):
    bucket = {"limitId": "codex", "primary": {"usedPercent": used5, "windowDurationMins": 300,
                                              "resetsAt": 1783440000},
              "secondary": None, "spendControlReached": spend, "planType": "plus"}
    return {"ordinaryUsageAllowed": allowed, "rateLimits": bucket,
            "rateLimitsByLimitId": {"codex": bucket},
            "rateLimitResetCredits": None if credits is None else {"availableCount": credits,
                                                                   "credits": None},
            "emittedAtMs": 1783430000000, "someFieldFromTheFuture": {"x": 1}}


def test_the_authority_says_whether_codex_may_be_used_whatever_the_percentages():
    from core.providers.codex.limits import from_rate_limits_read

    blocked = by_id(from_rate_limits_read(read_result(False), T0))["codex:access"]
    assert blocked.limit_reached and blocked.kind is QuotaKind.CAPACITY
    assert "not allowed" in blocked.note
    spend = by_id(from_rate_limits_read(read_result(True, spend=True), T0))["codex:access"]
    assert spend.limit_reached and "spend control" in spend.note
    allowed = by_id(from_rate_limits_read(read_result(True, credits=2), T0))["codex:access"]
    assert allowed.limit_reached is False and "2 banked resets" in allowed.note
    assert "never spends" in allowed.note
    unknown = by_id(from_rate_limits_read(read_result(None), T0))["codex:access"]
    assert unknown.limit_reached is False and "the windows decide" in unknown.note
    # rollout snapshots say nothing about it: no access reading at all
    assert "codex:access" not in by_id(from_rollout(five_and_week(1, T0, 1, T0), T0))


def test_a_sparse_update_keeps_the_access_dated_by_its_read():
    from core.providers.codex.limits import from_rate_limits_read

    base = from_rate_limits_read(read_result(False), T0)
    update = from_app_server({"primary": {"usedPercent": 4}}, T0 + H)
    access = by_id(merge(base, update), now=T0 + H)["codex:access"]
    assert access.limit_reached and access.observed_at == T0
