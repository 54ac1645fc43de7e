"""The app-server schema Goalkeeper relies on, generated from the pinned real ``codex``.

``codex app-server generate-json-schema --out DIR`` writes the protocol of the installed build.
Every method, notification and field Goalkeeper's Codex provider sends or reads is checked here,
so a Codex upgrade that drops or reshapes one fails this test instead of failing silently.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core.providers.codex.hosted import ORIGIN_AUTOMATIC, ORIGIN_USER
from core.providers.codex.rollout import GOAL_STATUSES
from tests.real.codex_mock import codex_env


@pytest.fixture(scope="module")
def schema(codex_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("codex-schema")
    home = root / "home"
    home.mkdir()
    subprocess.run([str(codex_bin), "app-server", "generate-json-schema", "--out",
                    str(root / "out")], check=True, capture_output=True, timeout=120,
                   env=codex_env(home), stdin=subprocess.DEVNULL)
    data = json.loads((root / "out" / "codex_app_server_protocol.v2.schemas.json").read_text())
    return dict(data["definitions"])


def _methods(schema: dict[str, Any], union: str) -> set[str]:
    found = set()
    for variant in schema[union]["oneOf"]:
        method = variant.get("properties", {}).get("method", {})
        found.update(method.get("enum", []))
    return found


def _props(schema: dict[str, Any], name: str) -> dict[str, Any]:
    return dict(schema[name]["properties"])


def _enum(schema: dict[str, Any], name: str) -> set[str]:
    return set(schema[name]["enum"])


def test_the_requests_goalkeeper_sends_exist(schema):
    assert {"initialize", "thread/resume", "thread/goal/get", "thread/goal/set",
            "turn/interrupt", "account/rateLimits/read"} <= _methods(schema, "ClientRequest")


def test_the_notifications_goalkeeper_follows_exist(schema):
    assert {"thread/goal/updated", "thread/goal/cleared", "turn/started", "turn/completed",
            "thread/status/changed", "account/rateLimits/updated"} <= _methods(
        schema, "ServerNotification")


def test_resume_takes_exclude_turns_and_goal_set_takes_an_origin(schema):
    assert _props(schema, "ThreadResumeParams")["excludeTurns"]["type"] == "boolean"
    goal_set = _props(schema, "ThreadGoalSetParams")
    assert {"threadId", "status", "origin"} <= set(goal_set)
    assert {ORIGIN_AUTOMATIC, ORIGIN_USER} <= _enum(schema, "ThreadGoalMutationOrigin")


def test_goal_statuses_are_the_ones_goalkeeper_maps(schema):
    assert _enum(schema, "ThreadGoalStatus") == {s for s in GOAL_STATUSES.values()}
    goal = _props(schema, "ThreadGoal")
    assert {"threadId", "objective", "status", "tokensUsed", "updatedAt"} <= set(goal)
    assert goal["updatedAt"]["type"] == "integer"  # epoch seconds: history told by order too


def test_rate_limits_read_has_the_authoritative_fields(schema):
    response = _props(schema, "GetAccountRateLimitsResponse")
    assert {"rateLimits", "rateLimitsByLimitId", "ordinaryUsageAllowed",
            "rateLimitResetCredits"} <= set(response)
    assert response["ordinaryUsageAllowed"]["type"] == ["boolean", "null"]
    assert "availableCount" in _props(schema, "RateLimitResetCreditsSummary")
    snapshot = _props(schema, "RateLimitSnapshot")
    assert {"limitId", "primary", "secondary", "credits", "planType", "rateLimitReachedType",
            "spendControlReached", "individualLimit"} <= set(snapshot)
    window = _props(schema, "RateLimitWindow")
    assert window["usedPercent"]["type"] == "integer"
    assert {"windowDurationMins", "resetsAt"} <= set(window)
    assert {"workspace_owner_credits_depleted", "rate_limit_reached"} <= _enum(
        schema, "RateLimitReachedType")


def test_turn_notifications_carry_the_turn(schema):
    assert "turn" in _props(schema, "TurnStartedNotification")
    assert "turn" in _props(schema, "TurnCompletedNotification")
    assert {"threadId", "goal", "turnId"} <= set(_props(schema, "ThreadGoalUpdatedNotification"))
